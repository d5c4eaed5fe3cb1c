"""The `skillc` command line. Thin: parse flags, call one stage, print.

Exit codes: 0 clean, 1 errors found (or `fmt --check` would change a file),
2 usage or I/O error, 3 internal error (a bug in skillc).
"""

from __future__ import annotations

import contextlib
import difflib
import json
import shutil
import os
import sys
import tempfile
import traceback
from pathlib import Path

import click

from skillc import api
from skillc.diagnostics import Diagnostic, Severity, make
from skillc.diagnostics.codes import all_codes, lookup
from skillc.diagnostics.docs import markdown_reference
from skillc.diagnostics.render import FORMATS, render

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache"}


def _internal(exc: BaseException, what: str) -> Diagnostic:
    trace = traceback.format_exception(type(exc), exc, exc.__traceback__)
    notes = [f"while {what}: {type(exc).__name__}: {exc}"]
    if os.environ.get("SKILLC_DEBUG"):
        notes.append("".join(trace))
    return make("SKM900", "internal error in skillc (this is a bug, not a problem with your input)",
                notes=notes)


def _files(paths: tuple[str, ...]) -> tuple[list[Path], list[Diagnostic]]:
    """Expand folders into their `.skm` files; missing paths become I/O diagnostics."""
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            found = sorted(
                f for f in p.rglob("*.skm")
                if not any(part in _SKIP_DIRS for part in f.relative_to(p).parts[:-1])
            )
            files.extend(found)
        elif p.exists():
            files.append(p)
        else:
            problems.append(make("SKM901", f"no such file or folder: {raw}"))
    return files, problems


def _emit(diagnostics: list[Diagnostic], fmt: str) -> None:
    if diagnostics or fmt == "sarif":
        click.echo(render(sorted(diagnostics, key=Diagnostic.sort_key), fmt, sys.stdout), color=True)


def _exit_code(diagnostics: list[Diagnostic]) -> int:
    if any(d.code == "SKM900" for d in diagnostics):
        return EXIT_INTERNAL
    if any(d.code == "SKM901" for d in diagnostics):
        return EXIT_USAGE
    if any(d.is_error for d in diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


class _Guarded(click.Group):
    """Any exception a command did not handle is an internal error: SKM900 and exit 3, never a traceback
    with exit 1 (which means "errors found")."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            try:
                _emit([_internal(exc, f"running `skillc {ctx.invoked_subcommand}`")], "full")
            except Exception:  # noqa: BLE001 - even printing failed (a closed or full stdout)
                pass
            sys.exit(EXIT_INTERNAL)


@click.group(cls=_Guarded, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="skillc", prog_name="skillc")
def main() -> None:
    """Compile agent skills into checked, executable state machines."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="full", show_default=True,
              help="How to print diagnostics.")
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--skill", type=click.Path(dir_okay=False), default=None,
              help="The skill document rule quotations must occur in (default: the machine's `source`).")
@click.option("--smt-timeout", "smt_timeout", type=click.IntRange(1, 600_000), default=None,
              help="Milliseconds per solver question (default 2000, or `smt-timeout-ms` in the config).")
@click.option("-v", "--verbose", is_flag=True, help="Also print notes (e.g. guard parts the solver treats as opaque).")
@click.option("-q", "--quiet", is_flag=True, help="Print the diagnostics only, no summary line.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None,
              help="Use this skillc.toml or pyproject.toml instead of the nearest one above each file.")
@click.option("--select", default=None, metavar="CODES",
              help="Report only these warnings/notes: codes, prefixes (SKM2) or slugs, comma-separated.")
@click.option("--ignore", default=None, metavar="CODES", help="Do not report these warnings/notes (errors stay).")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when errors are found (usage errors still exit 2).")
@click.option("--stdin-filename", default=None, metavar="PATH",
              help="With `-`: the path the text on stdin stands for (imports, configuration, messages).")
def check(paths: tuple[str, ...], fmt: str, strict: bool, skill: str | None, smt_timeout: int | None,
          verbose: bool, quiet: bool, config_path: str | None, select: str | None, ignore: str | None,
          exit_zero: bool, stdin_filename: str | None) -> None:
    """Check .skm files (folders are searched for *.skm; `-` reads standard input)."""
    from skillc.check.config import parse_selection, read_config

    stdin = "-" in paths
    files, diagnostics = _files(tuple(p for p in paths if p != "-"))
    if skill is not None and not Path(skill).is_file():
        diagnostics.append(make("SKM901", f"no such skill document: {skill}"))
    selection, problems = parse_selection(select, ignore)
    if problems:
        _emit([make("SKM901", p) for p in problems], fmt)
        sys.exit(EXIT_USAGE)
    config = None
    if config_path is not None:
        if not Path(config_path).is_file():
            diagnostics.append(make("SKM901", f"no such configuration file: {config_path}"))
        else:
            config, config_problems = read_config(Path(config_path))
            diagnostics += config_problems
    failed = False
    loader_cache = api.ImportCache()
    sources: list = [*files, *(["-"] if stdin else [])]
    for f in sources:
        try:
            if f == "-":
                result = _check_stdin(stdin_filename, skill, smt_timeout, config, loader_cache)
            else:
                result = api.check(f, skill=skill, smt_timeout_ms=smt_timeout, imports=loader_cache, config=config)
        except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
            diagnostics.append(_internal(exc, f"checking {f}"))
            continue
        diagnostics.extend(result.diagnostics)
        # Strictness is per file: each project's configuration governs its own files.
        failed |= any(d.severity is Severity.WARNING and selection.keeps(d) for d in result.diagnostics) and (
            strict or result.strict)
    diagnostics = selection.apply(_unique(diagnostics))
    if not verbose:  # the same policy in every format: notes only with -v
        diagnostics = [d for d in diagnostics if d.severity is not Severity.NOTE]
    _emit(diagnostics, fmt)
    if fmt in ("full", "concise") and not quiet:
        errors = sum(d.severity is Severity.ERROR for d in diagnostics)
        warnings = sum(d.severity is Severity.WARNING for d in diagnostics)
        click.echo(f"checked {len(sources)} file{'s' * (len(sources) != 1)}: "
                   f"{errors} error{'s' * (errors != 1)}, {warnings} warning{'s' * (warnings != 1)}", err=True)
    code = _exit_code(diagnostics)
    code = EXIT_ERRORS if code == EXIT_OK and failed else code
    sys.exit(EXIT_OK if exit_zero and code == EXIT_ERRORS else code)


def _read_stdin(name: str):
    """Standard input decoded like a file (BOM, UTF-8, line ends, the input size limit): (SourceFile or None,
    diagnostics)."""
    from skillc.diagnostics.files import MAX_INPUT_BYTES
    from skillc.syntax.parser import decode_source

    data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        return None, [make("SKM901", f"standard input is over {MAX_INPUT_BYTES:,} bytes")]
    return decode_source(name, data)


def _check_stdin(stdin_filename: str | None, skill: str | None, smt_timeout: int | None, config,
                 imports) -> api.CheckResult:
    """`check -`: the text on stdin, checked as if it were at --stdin-filename."""
    name = stdin_filename or "<stdin>"
    source, problems = _read_stdin(name)
    if source is None:
        return api.CheckResult(None, problems, False, None)
    return api.check(source.text, path=str(Path(name).absolute()) if stdin_filename else name, skill=skill,
                     smt_timeout_ms=smt_timeout, imports=imports, config=config)


def _unique(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Drop repeats (an imported file checked on its own and through an import reports once)."""
    seen: set[tuple] = set()
    out = []
    for d in diagnostics:
        key = (d.code, d.message, d.span.path if d.span else None, d.span.start if d.span else None)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _write_atomically(path: Path, text: str) -> None:
    """Replace a file's content without ever leaving it half-written (the one guarded writer, see files.py)."""
    from skillc.diagnostics.files import write_output

    write_output(path, text)


def _format_one(name: str, text: str) -> tuple[str | None, list[Diagnostic]]:
    """Format text, refusing (as an internal error) any output that would not parse back identically."""
    result = api.parse(text, path=name)
    if result.module is None:
        return None, result.diagnostics
    from skillc.syntax.printer import print_module

    new = print_module(result.module)
    again = api.parse(new, path=name).module
    if again != result.module:
        return None, [make("SKM900", "internal error: the formatted file would not parse back to the same "
                           f"program, so {name} was left untouched (this is a bug)")]
    return new, result.diagnostics


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 when a file would change.")
@click.option("--diff", is_flag=True, help="Write nothing; print a unified diff of the changes.")
@click.option("-q", "--quiet", is_flag=True, help="Do not say which files were (or would be) reformatted.")
def fmt(paths: tuple[str, ...], check_only: bool, diff: bool, quiet: bool) -> None:
    """Format .skm files in place (`-` formats standard input to standard output)."""
    diagnostics: list[Diagnostic] = []
    changed: list[str] = []
    if paths == ("-",):
        text = sys.stdin.read()
        try:
            new, diags = _format_one("<stdin>", text)
        except Exception as exc:  # noqa: BLE001
            new, diags = None, [_internal(exc, "formatting <stdin>")]
        diagnostics.extend(diags)
        if new is not None:
            if diff or check_only:
                if new != text:
                    changed.append("<stdin>")
                    if diff:
                        click.echo(_diff("<stdin>", text, new), nl=False)
            else:
                click.echo(new, nl=False)
    else:
        files, diagnostics = _files(paths)
        for f in files:
            from skillc.diagnostics.files import keep_conventions, read_bytes
            from skillc.syntax.parser import decode_source

            data, problem = read_bytes(f, folder="a directory, not a .skm file")
            if problem is not None:
                diagnostics.append(problem)
                continue

            source, diags = decode_source(str(f), data)
            if source is None:
                diagnostics.extend(diags)
                continue
            try:
                new, diags = _format_one(str(f), source.text)
            except Exception as exc:  # noqa: BLE001
                new, diags = None, [_internal(exc, f"formatting {f}")]
            diagnostics.extend(diags)
            new = None if new is None else keep_conventions(data, new)  # a BOM and CRLF line ends stay
            if new is None or new.encode("utf-8") == data:
                continue
            changed.append(str(f))
            if diff:
                click.echo(_diff(str(f), data.decode("utf-8", errors="replace"), new), nl=False)
            elif check_only:
                if not quiet:
                    click.echo(f"would reformat {f}", err=True)
            else:
                try:
                    _write_atomically(f, new)
                except OSError as exc:
                    diagnostics.append(make("SKM901", f"cannot write {f}: {exc.strerror or exc}"))
                    continue
                if not quiet:
                    click.echo(f"reformatted {f}", err=True)
    _emit(diagnostics, "full")
    code = _exit_code(diagnostics)
    if code == EXIT_OK and (check_only or diff) and changed:
        code = EXIT_ERRORS
    sys.exit(code)


def _diff(name: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


@main.command()
@click.argument("codes", nargs=-1)
@click.option("--markdown", is_flag=True, help="Print the full reference as Markdown (docs/diagnostics.md).")
def explain(codes: tuple[str, ...], markdown: bool) -> None:
    """Explain diagnostic codes (SKM104 or a slug such as undefined-tool)."""
    api.register_all_codes()

    if markdown:
        click.echo(markdown_reference(), nl=False)
        return
    if not codes:
        for c in all_codes():
            click.echo(f"{c.code}  {c.slug:<28} {c.summary}")
        return
    for raw in codes:
        try:
            c = lookup(raw.upper() if raw.lower().startswith("skm") else raw)
        except KeyError:
            click.echo(f"skillc: unknown diagnostic code {raw!r}", err=True)
            sys.exit(EXIT_USAGE)
        click.echo(f"{c.code} ({c.slug}, {c.severity}): {c.summary}\n\n{c.explanation}")
        if c.hint:
            click.echo(f"\nhelp: {c.hint}")
        if c.bad:
            click.echo(f"\nExample that triggers it:\n\n{_indent(c.bad)}")


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip("\n").splitlines())


@main.command()
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="full", show_default=True)
def show(path: str, fmt: str) -> None:
    """Print a summary of a machine: states, transitions, variables, tools and rules."""
    if not Path(path).exists():
        _emit([make("SKM901", f"no such file: {path}")], fmt)
        sys.exit(EXIT_USAGE)
    try:
        result = api.load(Path(path))
    except Exception as exc:  # noqa: BLE001
        _emit([_internal(exc, f"loading {path}")], fmt)
        sys.exit(EXIT_INTERNAL)
    _emit(result.diagnostics, fmt)
    from skillc.ir.describe import describe

    if result.machine is None and result.ok and result.fragments:
        # A library of fragments: each one is described as the machine it checks as.
        click.echo("\n\n".join(f"fragment {name} (a library defines no machine; `use` it from one)\n"
                                + describe(m) for name, m in _fragment_machines(result, path).items()))
        return
    if result.machine is None or not result.ok:
        sys.exit(_exit_code(result.diagnostics) or EXIT_ERRORS)
    click.echo(describe(result.machine))


def _fragment_machines(result, path: str) -> dict:
    """The fragments of a library file, each as the machine `skillc check` checks it as."""
    from skillc.check import fragment_machine

    return {name: fragment_machine(f, path) for name, f in result.fragments.items()}


# ---------------------------------------------------------------- running machines

EXIT_PARTIAL, EXIT_FAILED = 4, 5
_OUTCOME_EXIT = {"success": EXIT_OK, "partial": EXIT_PARTIAL, "failed": EXIT_FAILED}


def _input_value(machine, raw: str):
    """`name=value` from --input: strings as written, anything else as JSON."""
    import json as _json

    from skillc.ir import types as T

    name, sep, value = raw.partition("=")
    if not sep:
        raise click.BadParameter(f"expected NAME=VALUE, got {raw!r}", param_hint="--input")
    var = machine.variables.get(name)
    if var is not None and isinstance(T.strip_optional(var.type), (T.StrT, T.EnumT)):
        return name, value
    try:
        return name, _json.loads(value)
    except ValueError:
        raise click.BadParameter(f"the value of `{name}` is not JSON: {value!r}", param_hint="--input") from None


def _load_checked(path: str):
    """Load and check a machine; print diagnostics and exit unless it passes."""
    result = api.check(Path(path))
    problems = [d for d in result.diagnostics if d.severity is not Severity.NOTE]
    if result.machine is None or result.failed:
        _emit(problems, "full")
        click.echo(f"skillc: {path} does not pass `skillc check`; only checked machines run", err=True)
        sys.exit(_exit_code(result.diagnostics) or EXIT_ERRORS)
    from skillc.diagnostics.files import FileProblem, read_text

    try:
        return result.machine, read_text(path, what=".skm file")
    except FileProblem as exc:  # the file changed since it was checked
        _emit([make("SKM901", str(exc))], "full")
        sys.exit(EXIT_USAGE)


@main.command()
@click.argument("machine_path", metavar="MACHINE", required=False)
@click.option("--input", "inputs", multiple=True, metavar="NAME=VALUE", help="An input value (JSON unless a string).")
@click.option("--input-file", type=click.Path(dir_okay=False, exists=True), help="A JSON object of inputs.")
@click.option("--executor", "executor_spec", default=None, metavar="SPEC",
              help="scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL or local[:PATH.gguf].")
@click.option("--base-url", default=None, help="Endpoint of an OpenAI- or Anthropic-compatible server.")
@click.option("--structured", "strategy", default="auto", show_default=True,
              type=click.Choice(["auto", "json_schema", "json_object", "vllm", "prompt"]),
              help="How to ask an openai: backend for JSON-Schema output.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False), default=None, help="Write a JSONL trace here.")
@click.option("--max-steps", type=click.IntRange(1), default=1000, show_default=True)
@click.option("--retries", type=click.IntRange(0, 20), default=2, show_default=True,
              help="Retries of an invalid model output before the fallback.")
@click.option("--journal", "journal_path", type=click.Path(dir_okay=False), default=".skillc/runs.sqlite",
              show_default=True, help="SQLite journal of committed steps (for --resume).")
@click.option("--resume", "resume_id", default=None, metavar="RUN_ID", help="Continue a crashed run.")
@click.option("--tools", "tool_modules", multiple=True, type=click.Path(dir_okay=False, exists=True),
              help="A Python file whose functions implement tools (repeatable).")
@click.option("--workdir", type=click.Path(file_okay=False), default=None, help="Working directory of bash.")
@click.option("--tool-timeout", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Seconds before a tool (bash or a --tools function) is stopped.")
@click.option("--model-timeout", type=click.FloatRange(min=0, min_open=True), default=120.0, show_default=True,
              help="Seconds one request to an openai: model server may take.")
@click.option("--step-deadline", type=click.FloatRange(min=0, min_open=True), default=600.0, show_default=True,
              help="Seconds one model or judge step may take in all: requests, retries and Retry-After waits.")
@click.option("--mode", type=click.Choice(["machine", "native", "prompt-only"]), default="machine", show_default=True,
              help="machine: the runtime drives the machine; native: the skill document and full transcript, the "
                   "model picks every step; prompt-only: the machine rendered as prose, the model follows it.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def run(machine_path, inputs, input_file, executor_spec, base_url, strategy, trace_path, max_steps, retries,
        journal_path, resume_id, tool_modules, workdir, tool_timeout, model_timeout, step_deadline, mode,
        as_json) -> None:
    """Run a checked machine. Exit 0 success, 4 partial, 5 failed; 1 unchecked machine; 2 usage."""
    import json as _json

    from skillc.runtime import (ExecutorError, Interpreter, Journal, JournalError, RunError, RunOptions, ToolBox,
                                ToolError, make_executor)
    from skillc.diagnostics.files import FileProblem, JSONProblem, loads, printable, read_text
    from skillc.runtime.executors.scripted import ScriptError
    from skillc.runtime.guard import refuse_resume_changes, refuse_trace_target
    from skillc.runtime.trace import TraceError

    try:
        journal = Journal(journal_path)
        if resume_id:
            info = journal.info(resume_id)
            refuse_resume_changes(info, executor_spec, bool(inputs or input_file), trace_path, machine_path)
            machine_path = machine_path or info.machine_path
            executor_spec = executor_spec or info.executor
        if not machine_path or not executor_spec:
            raise click.UsageError("give MACHINE and --executor (or --resume RUN_ID)")
        if workdir is not None and not Path(workdir).is_dir():
            raise click.BadParameter(f"no such folder: {workdir}", param_hint="--workdir")
        refuse_trace_target(trace_path, [machine_path, journal_path, input_file, *tool_modules,
                                         executor_spec.partition(":")[2] or None])
        machine, text = _load_checked(machine_path)
        given = {}
        if input_file:
            given = loads(read_text(input_file, what="JSON file"))
            if not isinstance(given, dict):
                raise click.BadParameter("the input file must hold a JSON object", param_hint="--input-file")
        given.update(dict(_input_value(machine, raw) for raw in inputs))
        executor = make_executor(executor_spec, base_url=base_url, strategy=strategy, timeout_s=model_timeout)
        tools = ToolBox.default(list(tool_modules), timeout_s=tool_timeout, cwd=workdir)
        options = RunOptions(retries=retries, max_steps=max_steps, trace=Path(trace_path) if trace_path else None,
                             journal=journal, executor_spec=executor_spec, machine_path=str(machine_path),
                             step_deadline_s=step_deadline)
        if mode != "machine":
            from skillc.runtime.baselines import run_baseline, skill_document

            result = run_baseline(machine, mode, executor, tools, options, given, skill_document(machine))
        else:
            interpreter = Interpreter(machine, executor, tools, options, text)
            result = interpreter.resume(resume_id) if resume_id else interpreter.run(given)
    except (RunError, ExecutorError, JournalError, ToolError, ScriptError, TraceError, FileProblem, JSONProblem,
            ValueError) as exc:
        code = getattr(exc, "code", None)  # the runtime's own errors carry their SKM5xx code
        click.echo(printable(f"skillc run: {f'error[{code}]: ' if code else ''}{exc}"), err=True)
        sys.exit(EXIT_USAGE)
    if as_json:
        click.echo(printable(_json.dumps(attrs_asdict(result), ensure_ascii=False)))
    else:
        click.echo(f"outcome: {result.outcome} (terminal `{result.terminal}`) after {result.steps} steps")
        for name, value in result.evidence.items():
            click.echo(printable(f"  {name} = {_json.dumps(value, ensure_ascii=False)}"))
        if result.error:
            click.echo(printable(f"  error: {result.error}"))
        click.echo(f"  run id: {result.run_id}" + (f"   trace: {result.trace}" if result.trace else ""))
    sys.exit(_OUTCOME_EXIT.get(result.outcome, EXIT_FAILED))


def attrs_asdict(obj) -> dict:
    import attrs as _attrs

    return _attrs.asdict(obj)


@main.command()
@click.argument("machine_path", metavar="MACHINE")
@click.argument("trace_path", metavar="TRACE", type=click.Path(dir_okay=False, exists=True))
@click.option("--other-machine", is_flag=True, help="Replay a trace recorded with another version of the machine.")
def replay(machine_path: str, trace_path: str, other_machine: bool) -> None:
    """Replay a trace through a machine without calling models or tools; exit 1 on divergence."""
    from skillc.runtime import replay_file
    from skillc.runtime.trace import TraceError

    machine, text = _load_checked(machine_path)
    try:
        report = replay_file(machine, text, trace_path, other_machine=other_machine)
    except TraceError as exc:
        click.echo(f"skillc replay: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(("ok: " if report.ok else "FAILED: ") + report.message)
    sys.exit(EXIT_OK if report.ok else EXIT_ERRORS)


@main.command()
@click.argument("machine_path", metavar="MACHINE")
@click.argument("traces", nargs=-1, required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per trace and a summary.")
def score(machine_path: str, traces: tuple[str, ...], as_json: bool) -> None:
    """Score traces: request-level full compliance (RFC) separately from task success."""
    import json as _json

    from skillc.runtime.score import score_trace
    from skillc.runtime.trace import TraceError

    machine, _ = _load_checked(machine_path)
    scores = []
    for t in traces:
        try:
            scores.append(score_trace(machine, t))
        except TraceError as exc:
            click.echo(f"skillc score: {exc}", err=True)
            sys.exit(EXIT_USAGE)
    for sc in scores:
        if as_json:
            click.echo(_json.dumps(attrs_asdict(sc), ensure_ascii=False))
        else:
            mark = "compliant" if sc.compliant else "NOT compliant"
            click.echo(f"{sc.trace}: {sc.mode}, outcome {sc.outcome}, {mark}")
            for v in sc.violations:
                click.echo(f"    - {v}")
            for u in sc.unverifiable:
                click.echo(f"    ? {u}")
    n = len(scores)
    rfc = sum(sc.compliant for sc in scores) / n
    success = sum(sc.outcome == "success" for sc in scores) / n
    summary = {"traces": n, "request_level_full_compliance": rfc, "task_success": success}
    click.echo(_json.dumps(summary) if as_json else
               f"{n} trace{'s' * (n != 1)}: full compliance {rfc:.0%}, task success {success:.0%}")


@main.command()
@click.argument("machine_path", metavar="MACHINE")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write here (default: stdout).")
@click.option("--format", "fmt", type=click.Choice(["dot", "svg", "png", "mermaid"]), default=None,
              help="Default: from the output's extension, else dot.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Overlay a run: visited states and edges with counts, the path to the terminal emphasised.")
@click.option("--fragment", default=None, metavar="NAME", help="In a library of fragments: the one to draw.")
@click.option("--stdin-filename", default=None, metavar="PATH", help="With `-`: the path the text on stdin stands for.")
def dot(machine_path: str, output: str | None, fmt: str | None, trace_path: str | None, fragment: str | None,
        stdin_filename: str | None) -> None:
    """Draw a machine as DOT, SVG, PNG (Graphviz) or Mermaid (`-` reads standard input)."""
    from skillc.render import RenderError, overlay_from_trace, render_image, to_dot, to_mermaid
    from skillc.runtime.trace import TraceError

    if fmt is None:
        suffix = Path(output).suffix.lstrip(".").lower() if output else ""
        fmt = {"svg": "svg", "png": "png", "mmd": "mermaid", "md": "mermaid"}.get(suffix, "dot")
    if fmt == "png" and output is None:
        raise click.UsageError("PNG output needs -o FILE")
    if machine_path == "-":
        name = stdin_filename or "<stdin>"
        source, problems = _read_stdin(name)
        origin = str(Path(name).absolute()) if stdin_filename else name
        result = api.check(source.text, path=origin) if source else api.CheckResult(None, problems)
    else:
        source, origin, result = None, machine_path, api.check(Path(machine_path))
    machine = result.machine
    if machine is None and result.ok:
        machine, problem = _drawable_fragment(api.load(source.text, path=origin) if source else
                                              api.load(Path(machine_path)), origin, fragment)
        if problem:
            _emit([make("SKM901", problem)], "full")
            sys.exit(EXIT_USAGE)
    if machine is None or not result.ok:
        _emit([d for d in result.diagnostics if d.severity is not Severity.NOTE], "full")
        sys.exit(_exit_code(result.diagnostics) or EXIT_ERRORS)
    try:
        overlay = overlay_from_trace(machine, trace_path) if trace_path else None
        if fmt == "mermaid":
            data: bytes = to_mermaid(machine, overlay).encode("utf-8")
        else:
            text = to_dot(machine, overlay)
            data = text.encode("utf-8") if fmt == "dot" else render_image(text, fmt)
    except (RenderError, TraceError) as exc:
        click.echo(f"skillc dot: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    if output is None:
        sys.stdout.buffer.write(data)
        return
    try:
        _write_bytes_atomically(Path(output), data)
    except OSError as exc:
        click.echo(f"skillc dot: cannot write {output}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_USAGE)


def _drawable_fragment(loaded, path: str, name: str | None):
    """The fragment of a library to draw (the only one, or `--fragment NAME`), or why there is none."""
    machines = _fragment_machines(loaded, path)
    if not machines:
        return None, f"{path} defines neither a machine nor a fragment: nothing to draw"
    if name is not None:
        if name not in machines:
            return None, f"{path} has no fragment `{name}` (it has {', '.join(machines)})"
        return machines[name], None
    if len(machines) > 1:
        return None, f"{path} is a library of {len(machines)} fragments ({', '.join(machines)}): pick one with --fragment"
    return next(iter(machines.values())), None


def _write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write a drawing through the one guarded writer (files.py: atomic, links and devices kept, mode 0644)."""
    from skillc.diagnostics.files import write_output

    write_output(path, data)


@main.command()
def lsp() -> None:
    """Run the language server over stdio (needs `pip install 'skillc[lsp]'`)."""
    try:
        from skillc.lsp.server import main as serve
    except ImportError as exc:
        click.echo(f"skillc lsp: the language server needs pygls 2 (pip install 'skillc[lsp]'): {exc}", err=True)
        sys.exit(EXIT_USAGE)
    serve()


@main.command(name="test")
@click.argument("machine_path", metavar="MACHINE")
@click.option("--coverage", type=click.Choice(["states", "transitions"]), default="transitions", show_default=True)
@click.option("--examples", type=click.IntRange(1), default=200, show_default=True, help="At most this many runs.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--traces", "traces_dir", type=click.Path(file_okay=False), default=None,
              help="Keep the trace of every run here (failing runs are always kept).")
def test_machine(machine_path: str, coverage: str, examples: int, seed: int, traces_dir: str | None) -> None:
    """Explore a machine with generated outputs; check termination, rules, fallback use and evidence."""
    from skillc.testing.explore import explore

    machine, text = _load_checked(machine_path)
    keep = Path(traces_dir) if traces_dir else Path(tempfile.mkdtemp(prefix="skillc-test-"))
    keep.mkdir(parents=True, exist_ok=True)
    report = explore(machine, text, examples=examples, seed=seed, coverage=coverage, traces=keep)
    click.echo(f"{report.runs} runs: {len(report.states)}/{report.total_states} states "
               f"({report.coverage('states'):.0%}), {len(report.edges)}/{report.total_edges} transitions "
               f"({report.coverage('transitions'):.0%})")
    missing = sorted({(s.name, e.index) for s in machine.states.values() for e in s.edges} - report.edges)
    if missing and coverage == "transitions":
        click.echo("  not covered: " + ", ".join(f"{s}#{i + 1}" for s, i in missing[:12])
                   + (" …" if len(missing) > 12 else ""))
    for f in report.failures:
        click.echo(f"FAILED {f.prop}: {f.message}\n  replay: skillc replay {machine_path} {f.trace}")
    if not traces_dir and not report.failures:
        shutil.rmtree(keep, ignore_errors=True)
    sys.exit(EXIT_ERRORS if report.failures else EXIT_OK)


@main.command()
@click.argument("skill", type=click.Path(dir_okay=True))
@click.option("-o", "--output", default=None,
              help="Where to write the machine (default: the skill's name with .skm beside it; `-` for stdout).")
@click.option("--model", default=None, metavar="SPEC",
              help="Draft with a model: openai:MODEL, anthropic:MODEL or local[:PATH.gguf]. Default: offline.")
@click.option("--base-url", default=None, help="Base URL of an OpenAI- or Anthropic-compatible endpoint.")
@click.option("--rounds", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Drafts the LLM compiler may make before giving up.")
@click.option("--report", is_flag=True, help="Print the clause table: each clause, its class, where it landed.")
@click.option("--allow-tool", "tools", multiple=True, type=click.Choice(["bash"]),
              help="Let steps run their commands through this tool (also granted by `allowed-tools: Bash`).")
@click.option("--max-revisions", type=click.IntRange(1, 20), default=2, show_default=True,
              help="Revise rounds after a failed verification.")
@click.option("--max-repeats", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Rounds of a repeat-until loop that states no limit.")
@click.option("--max-bytes", type=click.IntRange(1, 1 << 30), default=1 << 20, show_default=True,
              help="Refuse skill documents larger than this.")
@click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="full", show_default=True,
              help="How to print diagnostics.")
@click.option("-v", "--verbose", is_flag=True, help="Also print notes that are not about the build itself.")
@click.option("-q", "--quiet", is_flag=True, help="Print the diagnostics only, no summary line.")
@click.option("--stdin-filename", default=None, metavar="PATH",
              help="With `-`: the skill document's path, as the machine's `source` names it (default SKILL.md).")
def build(skill: str, output: str | None, model: str | None, base_url: str | None, rounds: int, report: bool,
          tools: tuple[str, ...], max_revisions: int, max_repeats: int, max_bytes: int, fmt: str, verbose: bool,
          quiet: bool, stdin_filename: str | None) -> None:
    """Compile a markdown skill into a checked machine (nothing is written unless it checks clean).

    `-` reads the skill document from standard input; the machine then goes to standard output unless -o.
    """
    from skillc.frontends.markdown import Options
    from skillc.frontends.markdown import build as build_skill
    from skillc.frontends.markdown.report import table

    if skill == "-":
        with tempfile.TemporaryDirectory(prefix="skillc-stdin-") as tmp:
            path = Path(tmp) / Path(stdin_filename or "SKILL.md").name
            path.write_bytes(sys.stdin.buffer.read(max_bytes + 1))
            _build(build_skill, table, path, output or "-", model, base_url, rounds, report,
                   Options(tools=frozenset(tools), max_revisions=max_revisions, max_repeats=max_repeats),
                   max_bytes, fmt, verbose, stdin_as=stdin_filename or "SKILL.md", quiet=quiet)
    path = Path(skill)
    if path.is_dir() and (path / "SKILL.md").is_file():
        path = path / "SKILL.md"
    _build(build_skill, table, path, output, model, base_url, rounds, report,
           Options(tools=frozenset(tools), max_revisions=max_revisions, max_repeats=max_repeats), max_bytes, fmt,
           verbose, quiet=quiet)


def _build(build_skill, table, path: Path, output: str | None, model, base_url, rounds: int, report: bool, options,
           max_bytes: int, fmt: str, verbose: bool, stdin_as: str | None = None, quiet: bool = False) -> None:
    """`skillc build` once the skill document is a file: build, report, write; always exits."""
    to_stdout = output == "-"
    out = None if to_stdout else Path(output) if output else path.with_suffix(".skm")
    from skillc.diagnostics.files import same_file

    if out is not None and same_file(out, path):
        _emit([make("SKM901", f"refusing to overwrite the skill document {path} with the machine")], fmt)
        sys.exit(EXIT_USAGE)
    if out is not None and not out.parent.is_dir():
        _emit([make("SKM901", f"no such folder for the output: {out.parent}")], fmt)
        sys.exit(EXIT_USAGE)
    try:
        result = build_skill(path, output=out, options=options, model=model, base_url=base_url, rounds=rounds,
                             max_bytes=max_bytes)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        _emit([_internal(exc, f"building {path}")], fmt)
        sys.exit(EXIT_INTERNAL)
    diagnostics = _unique(result.diagnostics)
    if stdin_as is not None:  # messages name the document stdin stood for, not its temporary copy
        for span in (s for d in diagnostics for s in (d.span, *(x.span for x in d.secondary)) if s is not None):
            if span.source.path == str(path):
                span.source.path = stdin_as
    if not verbose:  # the same policy in every format: the build's own notes (SKM3xx), others only with -v
        diagnostics = [d for d in diagnostics if d.severity is not Severity.NOTE or d.code.startswith("SKM3")]
    _emit(diagnostics, fmt)
    if report and result.rows:
        click.echo(table(result.rows, rules=result.rules), err=to_stdout)
    if result.text is None or not result.ok:
        if fmt in ("full", "concise") and not quiet:
            click.echo(f"build failed: nothing written{'' if to_stdout else f' to {out}'}", err=True)
        code = _exit_code(diagnostics)
        sys.exit(code if code != EXIT_OK else EXIT_ERRORS)
    text = result.text
    if stdin_as is not None:  # the machine names the document stdin stood for, not the temporary copy
        import json

        from skillc.frontends.markdown import source_name

        text = text.replace(f'"{source_name(path, out)}"', json.dumps(stdin_as))
    if to_stdout:
        click.echo(text, nl=False)
    else:
        try:
            _write_atomically(out, text)
        except OSError as exc:
            _emit([make("SKM901", f"cannot write {out}: {exc.strerror or exc}")], fmt)
            sys.exit(EXIT_USAGE)
    if fmt in ("full", "concise") and not quiet:
        m = result.machine
        states = sum(s.kind in ("model", "judge", "tool") for s in m.states.values()) if m else 0
        rules = len(m.rules) if m else 0
        where = "stdout" if to_stdout else str(out)
        click.echo(f"built {where}: {states} states, {rules} rules, coverage {100 * result.coverage:.1f}% "
                   f"of {len(result.rows)} clauses" + (f", {len(result.rounds)} draft round(s)" if result.rounds else ""),
                   err=True)
    sys.exit(EXIT_OK)


def _emits(value: str) -> tuple[str, ...]:
    kinds = tuple(k.strip() for k in value.split(",") if k.strip())
    bad = [k for k in kinds if k not in ("skm", "python")]
    if bad or not kinds:
        raise click.BadParameter(f"expected a comma-separated subset of skm,python, not {value!r}")
    return kinds


@main.command()
@click.argument("traces", nargs=-1, required=True)
@click.option("-o", "--output", default=None, type=click.Path(file_okay=False),
              help="The library directory to write (replaced whole; omit with --report to write nothing).")
@click.option("--min-reuse", type=click.FloatRange(0.0, 1.0), default=0.1, show_default=True,
              help="Keep clusters that occur in at least this share of training traces (r_k).")
@click.option("--emit", default="skm,python", show_default=True, help="What to emit per skill: skm, python or both.")
@click.option("--heldout", multiple=True, type=click.Path(dir_okay=False),
              help="Held-out traces: execute the skills on their games and keep only those without errors.")
@click.option("--games", default=None, type=click.Path(file_okay=False),
              help="Where to (re)generate held-out games that are not beside their traces.")
@click.option("--report", is_flag=True, help="Print the library report (skills, r_k, sizes, primitives per call).")
@click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="full", show_default=True,
              help="How to print diagnostics.")
def distill(traces: tuple[str, ...], output: str | None, min_reuse: float, emit: str, heldout: tuple[str, ...],
            games: str | None, report: bool, fmt: str) -> None:
    """Distil reusable skills (.skm fragments + Python functions) from successful JSONL traces."""
    from skillc.frontends.distill.library import build_library, target_problem, write_library
    from skillc.frontends.distill.report import as_json, table

    try:
        kinds = _emits(emit)
    except click.BadParameter as exc:
        _emit([make("SKM901", str(exc.message))], fmt)
        sys.exit(EXIT_USAGE)
    if output is None and not report:
        _emit([make("SKM901", "say where to write the library (-o DIR), or ask only for --report")], fmt)
        sys.exit(EXIT_USAGE)
    problem = target_problem(output) if output else None
    if problem:
        _emit([make("SKM901", problem)], fmt)
        sys.exit(EXIT_USAGE)
    try:
        with _progress_bar("held-out games played", "game") as progress:
            built = build_library(traces, heldout=heldout, min_reuse=min_reuse, emit=kinds, games=games,
                                  progress=progress)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        _emit([_internal(exc, "distilling traces")], fmt)
        sys.exit(EXIT_INTERNAL)
    if report and fmt == "json":  # one JSON document: the report with its diagnostics
        click.echo(json.dumps(as_json(built.distilled, built.clusters, built.evaluation, built.dropped,
                                      _unique(built.diagnostics)), ensure_ascii=False))
    else:
        _emit(_unique(built.diagnostics), fmt)
    if report and built.distilled.programs and fmt != "json":
        click.echo(table(built.distilled, built.clusters, built.evaluation, built.dropped))
    if not built.ok or not built.clusters:
        if output and fmt in ("full", "concise"):
            click.echo(f"distill failed: nothing written to {output}", err=True)
        code = _exit_code(built.diagnostics)
        sys.exit(code if code != EXIT_OK else EXIT_ERRORS)
    if output:
        try:
            write_library(built.files, output)
        except OSError as exc:
            _emit([make("SKM901", f"cannot write {output}: {exc.strerror or exc}")], fmt)
            sys.exit(EXIT_USAGE)
        if fmt in ("full", "concise"):
            click.echo(f"wrote {output}: {len(built.clusters)} skill(s) from {len(built.distilled.programs)} "
                       f"training traces", err=True)
    sys.exit(EXIT_OK)


@contextlib.contextmanager
def _progress_bar(what: str, unit: str):
    """A progress bar on stderr (tqdm), shown only on a terminal; yields its `update(n)`."""
    from tqdm import tqdm

    with tqdm(desc=what, unit=unit, file=sys.stderr, disable=None, leave=False) as bar:
        yield bar.update


@main.command()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The JSONL file to write.")
@click.option("--count", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="How many TextWorld cooking games to generate and play.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the game settings.")
@click.option("--games", "games_dir", default=".skillc/games", show_default=True, type=click.Path(file_okay=False),
              help="Where the generated games are kept (reused when already there).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option("--env", "env_name", type=click.Choice(["textworld", "pddl"]), default="textworld", show_default=True,
              help="TextWorld cooking games, or PDDL problems (PDDLGym + pyperplan; --count takes the first problems).")
@click.option("--domain", default="blocks", show_default=True, help="With --env pddl: the PDDL domain (blocks, gripper).")
@click.option("--split", type=click.Choice(["train", "test"]), default="train", show_default=True,
              help="With --env pddl: PDDLGym's training or test problems.")
def collect(output: str, count: int, seed: int, games_dir: str, workers: int, env_name: str, domain: str,
            split: str) -> None:
    """Record runs as traces: TextWorld cooking walkthroughs (needs `textworld`), or PDDL plans (needs `pddlgym`)."""
    from skillc.frontends.distill import textworld as tw
    from skillc.frontends.distill.trace import dumps

    if env_name == "pddl":
        _collect_pddl(output, count, domain, split)
    problem = None
    try:
        tw.import_textworld()
        Path(games_dir).mkdir(parents=True, exist_ok=True)
    except tw.Unavailable as exc:
        problem = str(exc)
    except OSError as exc:
        problem = f"cannot keep games in {games_dir}: {exc.strerror or exc}"
    if problem is None and not Path(output).resolve().parent.is_dir():
        problem = f"no such folder for the output: {Path(output).parent}"
    if problem:
        _emit([make("SKM901", problem)], "full")
        sys.exit(EXIT_USAGE)
    with _progress_bar("games generated and played", "game") as progress:
        played = tw.collect(tw.specs(count, seed), games_dir, workers=workers, progress=progress)
    traces = tw.relative_to(played, Path(output).parent)
    try:
        _write_atomically(Path(output), dumps(traces))
    except OSError as exc:
        _emit([make("SKM901", f"cannot write {output}: {exc.strerror or exc}")], "full")
        sys.exit(EXIT_USAGE)
    won = sum(t.success for t in traces)
    click.echo(f"wrote {output}: {len(traces)} traces ({won} won) of {count} games; games in {games_dir}", err=True)
    sys.exit(EXIT_OK)


def _collect_pddl(output: str, count: int, domain: str, split: str) -> None:
    """`skillc collect --env pddl`: solve the first `count` problems of a split with pyperplan, record them."""
    from skillc.frontends.distill import pddl
    from skillc.frontends.distill.textworld import Unavailable
    from skillc.frontends.distill.trace import dumps

    try:
        chosen = pddl.problems(domain, split)[:count]
        if not Path(output).resolve().parent.is_dir():
            raise Unavailable(f"no such folder for the output: {Path(output).parent}")
        with _progress_bar(f"{domain} problems solved", "problem") as progress:
            traces = pddl.collect(domain, split, chosen, progress=progress)
        _write_atomically(Path(output), dumps(traces))
    except Unavailable as exc:
        _emit([make("SKM901", str(exc))], "full")
        sys.exit(EXIT_USAGE)
    except OSError as exc:
        _emit([make("SKM901", f"cannot write {output}: {exc.strerror or exc}")], "full")
        sys.exit(EXIT_USAGE)
    click.echo(f"wrote {output}: {len(traces)} traces of {len(chosen)} {domain} problems ({split})", err=True)
    sys.exit(EXIT_OK)


@main.command()
@click.option("--format", "fmt", type=click.Choice(["lark", "gbnf", "json-schema", "config-schema"]), default="lark",
              show_default=True, help="Lark (outlines, llguidance), GBNF (llama.cpp), the IR JSON Schema, or the "
                                      "JSON Schema of [tool.skillc] / skillc.toml.")
@click.option("-o", "--output", default=None, help="Write to a file instead of stdout.")
def grammar(fmt: str, output: str | None) -> None:
    """Export the .skm grammar (or the machine JSON Schema) for grammar-constrained decoding."""
    import json

    if fmt == "json-schema":
        from skillc.frontends.markdown.schema import MACHINE_SCHEMA

        text = json.dumps(MACHINE_SCHEMA, indent=2) + "\n"
    elif fmt == "config-schema":
        from skillc.check.config import config_schema
        api.register_all_codes()

        text = json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"
    else:
        from skillc.syntax.export import export

        text = export(fmt)
    if output is None or output == "-":
        click.echo(text, nl=False)
        return
    try:
        _write_atomically(Path(output), text)
    except OSError as exc:
        _emit([make("SKM901", f"cannot write {output}: {exc.strerror or exc}")], "full")
        sys.exit(EXIT_USAGE)


@main.group(name="import")
def import_group() -> None:
    """Translate graphs of other systems (AWS Step Functions, LangGraph) into checked .skm machines."""


def _import(kind: str, spec: str, output: str | None, fmt: str) -> None:
    """Translate, print the findings, write the .skm (only when it has no errors)."""
    try:
        text, diagnostics = api.import_graph(kind, spec)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        _emit([_internal(exc, f"importing {spec}")], fmt)
        sys.exit(EXIT_INTERNAL)
    _emit([d for d in diagnostics if d.severity is not Severity.NOTE], fmt)
    if text is None:
        sys.exit(_exit_code(diagnostics) or EXIT_ERRORS)
    if output is None or output == "-":
        click.echo(text, nl=False)
    else:
        try:
            _write_atomically(Path(output), text)
        except OSError as exc:
            _emit([make("SKM901", f"cannot write {output}: {exc.strerror or exc}")], fmt)
            sys.exit(EXIT_USAGE)
    sys.exit(_exit_code(diagnostics))  # written: the translation is whole; its findings still set the status


@import_group.command(name="asl")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("-o", "--output", default=None, help="Write the .skm here (default: stdout).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="full", show_default=True)
def import_asl(path: str, output: str | None, fmt: str) -> None:
    """An Amazon States Language definition (JSON or YAML) as a .skm machine; branches become fragments."""
    if not Path(path).is_file():
        _emit([make("SKM901", f"no such file: {path}")], fmt)
        sys.exit(EXIT_USAGE)
    _import("asl", path, output, fmt)


@import_group.command(name="langgraph")
@click.argument("spec", metavar="MODULE:ATTR")
@click.option("-o", "--output", default=None, help="Write the .skm here (default: stdout).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="full", show_default=True)
def import_langgraph(spec: str, output: str | None, fmt: str) -> None:
    """A LangGraph StateGraph (or its compiled graph), imported from MODULE:ATTR, as a .skm machine."""
    _import("langgraph", spec, output, fmt)
