"""The `skillc` command line: flags → one `skillc.api` call → a renderer of `skillc.console` → the exit code.

Exit codes: 0 clean, 1 errors found (or `fmt --check` would change a file),
2 usage or I/O error, 3 internal error (a bug in skillc).
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

from skillc import api, console
from skillc.diagnostics.render import FORMATS
from skillc.diagnostics.render import sarif_root as relative_to


class _Seconds(click.FloatRange):
    """A number of seconds, only parsed here: whether it can be used (finite, above 0, at most 1e9: the range the
    help shows) is the command's to say, once, below it (`skillc.diagnostics.flags.seconds_problem`, or the bench's and
    evolve's own option checks), for the command line and Python callers alike."""

    name = "seconds"

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True, max=1e9)  # for the help's range only: convert does not check it

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The number, or a usage error for text that is not one."""
        try:
            return float(value)
        except ValueError:
            self.fail(f"{value!r} is not a number of seconds.", param, ctx)


SECONDS = _Seconds()


class _Existing(click.Path):
    """`click.Path(exists=True)` that says why a path that is there cannot be used (a symlink loop, a NUL byte)
    instead of "does not exist"; a FIFO or a device passes, for the command's reader to refuse in words."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """The path, or a usage error naming the reason."""
        import os

        from skillc.diagnostics.files import describe_error

        try:
            os.stat(value)
        except (OSError, ValueError) as exc:
            if isinstance(exc, ValueError) or os.path.lexists(value):
                self.fail(f"{click.format_filename(value)!r}: {describe_error(exc)}.", param, ctx)
        return super().convert(value, param, ctx)


def _format(help: str | None = "How to print diagnostics.") -> Any:
    """The `--output-format` option (also spelled `--format`) of the commands that print diagnostics."""
    return click.option("--format", "--output-format", "fmt", type=click.Choice(FORMATS), default="full",
                        show_default=True, help=help)


def _json_output(what: str) -> Any:
    """`--output-format text|json` of a command whose machine-readable output is JSON, with `--json` kept as its
    alias; the command receives `as_json`."""

    def decorate(command: Any) -> Any:
        import functools

        @functools.wraps(command)
        def merged(*args: Any, output_format: str, as_json: bool, **kwargs: Any) -> Any:
            return command(*args, as_json=as_json or output_format == "json", **kwargs)

        merged = click.option("--json", "as_json", is_flag=True, help="The same as --output-format json.")(merged)
        return click.option("--output-format", "output_format", type=click.Choice(["text", "json"]), default="text",
                            show_default=True, help=f"text, or json: {what}.")(merged)

    return decorate


# The flags `run` and `serve` share, defined once (each use makes its own click option).
_BASE_URL = click.option("--base-url", default=None, help="Endpoint of an OpenAI- or Anthropic-compatible server.")
_STRUCTURED = click.option("--structured", "strategy", default="auto", show_default=True,
                           type=click.Choice(["auto", "json_schema", "json_object", "vllm", "prompt"]),
                           help="How to ask an openai: backend for JSON-Schema output.")
_RETRIES = click.option("--retries", type=click.IntRange(0, 20), default=2, show_default=True,
                        help="Retries of an invalid model output before the fallback.")
_TOOLS = click.option("--tools", "tools", multiple=True, type=_Existing(dir_okay=False, exists=True),
                      help="A Python file whose functions implement tools (repeatable); each call runs in a box (the "
                           "work folder writable, no secrets; SKILLC_CONFINE_TOOLS=0: in skillc's process).")
_ALLOW_HOST = click.option("--allow-host", "allow_hosts", multiple=True, metavar="HOST",
                           help="A host `fetch` may reach (repeatable).")


class _Guarded(click.Group):
    """Any exception a command did not handle is an internal error: SKM900 and exit 3, never a traceback
    with exit 1 (which means "errors found"); Ctrl-C (SIGINT) and SIGTERM stop any command quietly with 130 / 143
    (`console.stop_signals`), the long ones after keeping what they made."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Click's main with SIGINT and SIGTERM stopping the command (the handlers put back after)."""
        _printable_streams()
        with console.stop_signals():
            return super().main(*args, **kwargs)

    def make_context(self, *args: Any, **kwargs: Any) -> click.Context:
        """Click's parsing, stopped by a signal without click's "Aborted!" and exit 1."""
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt as exc:
            _stopped(exc, None)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except SystemExit as exc:  # a command stopped by SIGTERM says 143 where it returns "interrupted" (130)
            raise SystemExit(console.stop_status(exc.code)) from None
        except KeyboardInterrupt as exc:  # one the command does not handle itself: nothing of it to keep
            _stopped(exc, ctx.invoked_subcommand)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:  # noqa: BLE001 - the last line of defence
            try:
                console.emit([api.internal_error(exc, f"running `skillc {ctx.invoked_subcommand}`")], "full")
            except Exception:  # noqa: BLE001 - even printing failed (a closed or full stdout)
                pass
            sys.exit(console.EXIT_INTERNAL)


def _printable_streams() -> None:
    """Text that cannot be encoded (a lone surrogate read from a trace or a transcript) is printed escaped
    (`\\ud800`) instead of stopping the command with an encoding error."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", "strict") in ("strict", "surrogateescape"):
            try:
                reconfigure(errors="backslashreplace")
            except (ValueError, OSError):  # a stream that cannot change (detached, closed): left as it is
                pass


def _stopped(exc: KeyboardInterrupt, command: str | None) -> NoReturn:
    """Exit 130 (Ctrl-C) or 143 (SIGTERM) with one line on stderr, never a traceback."""
    try:
        click.echo(f"skillc{f' {command}' if command else ''}: {console.stop_word()}", err=True)
    except Exception:  # noqa: BLE001 - a closed stderr: the status still says it
        pass
    sys.exit(console.stopped_by(exc))


@click.group(cls=_Guarded, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="skillc", prog_name="skillc")
def main() -> None:
    """Compile agent skills into checked, executable state machines."""


@main.command()
@click.argument("paths", nargs=-1, required=True)
@_format()
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
@click.option("--sarif-root", type=_Existing(file_okay=False, exists=True), default=None, metavar="DIR",
              help="SARIF: write file paths relative to DIR, the repository root code scanning maps them to "
                   "(default: as given, relative to the current folder).")
@click.option("--mcp-offline", is_flag=True,
              help="Start no MCP server: compare machines' MCP tools with skillc.mcp.lock only (a checkout you do "
                   "not trust: starting a server runs the command its configuration names).")
def check(paths: tuple[str, ...], fmt: str, strict: bool, skill: str | None, smt_timeout: int | None,
          verbose: bool, quiet: bool, config_path: str | None, select: str | None, ignore: str | None,
          exit_zero: bool, stdin_filename: str | None, sarif_root: str | None, mcp_offline: bool = False) -> None:
    """Check .skm files (folders are searched for *.skm; `-` reads standard input) and named *.asl.json/yaml files.

    Exit 0 clean (warnings allowed), 1 errors (or warnings with --strict), 2 usage or I/O error, 3 internal error.
    """
    result = api.check_files(paths, strict=strict, skill=skill, smt_timeout_ms=smt_timeout, config_path=config_path,
                             select=select, ignore=ignore, verbose=verbose, stdin=sys.stdin.buffer,
                             stdin_filename=stdin_filename, mcp_live=not mcp_offline)
    with relative_to(sarif_root):
        code = console.check(result, fmt, quiet, exit_zero)
    sys.exit(code)


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 when a file would change.")
@click.option("--diff", is_flag=True, help="Write nothing; print a unified diff of the changes.")
@click.option("-q", "--quiet", is_flag=True, help="Do not say which files were (or would be) reformatted.")
def fmt(paths: tuple[str, ...], check_only: bool, diff: bool, quiet: bool) -> None:
    """Format .skm files in place (`-` formats standard input to standard output)."""
    stdin = paths == ("-",)
    result = api.format_files(paths, stdin_text=sys.stdin.read() if stdin else None)
    sys.exit(console.fmt(result, check_only, diff, quiet, stdin))


@main.command()
@click.argument("codes", nargs=-1)
@click.option("--markdown", is_flag=True, help="Print the full reference as Markdown (docs/diagnostics.md).")
def explain(codes: tuple[str, ...], markdown: bool) -> None:
    """Explain diagnostic codes (SKM104 or a slug such as undefined-tool)."""
    if markdown:
        sys.exit(console.output(api.reference(), None))
    sys.exit(console.explain(api.explain(codes), listing=not codes))


@main.command()
@click.argument("path", type=click.Path(dir_okay=False))
@_format(help="How to print diagnostics (the summary itself is always text).")
def show(path: str, fmt: str) -> None:
    """Print a summary of a machine: states, transitions, variables, tools and rules."""
    sys.exit(console.show(api.describe(path), fmt))


@main.command()
@click.argument("machine", metavar="MACHINE", required=False)
@click.option("--input", "inputs", multiple=True, metavar="NAME=VALUE", help="An input value (JSON unless a string).")
@click.option("--input-file", type=_Existing(dir_okay=False, exists=True), help="A JSON object of inputs.")
@click.option("--executor", "executor", default=None, metavar="SPEC",
              help="scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL or local[:PATH.gguf][?n_ctx=N&…].")
@_BASE_URL
@_STRUCTURED
@click.option("--trace", "trace", type=click.Path(dir_okay=False), default=None, help="Write a JSONL trace here.")
@click.option("--max-steps", type=click.IntRange(1), default=1000, show_default=True,
              help="Steps before the run is stopped and ends in the fallback.")
@_RETRIES
@click.option("--journal", "journal", type=click.Path(dir_okay=False), default=".skillc/runs.sqlite",
              show_default=True, help="SQLite journal of committed steps (for --resume).")
@click.option("--resume", "resume", default=None, metavar="RUN_ID",
              help="Continue a crashed, interrupted or waiting run (a waiting one with --answer).")
@click.option("--answer", "answer", default=None, metavar="TEXT",
              help="With --resume: the answer to the question the run waits on (taken once).")
@_TOOLS
@click.option("--workdir", type=click.Path(file_okay=False), default=None,
              help="The run's work folder (read-write; bash runs there; the place `workdir`). Default: here; with "
                   "--resume, the folder the run last ran in.")
@click.option("--skill-dir", "skill_dir", type=click.Path(file_okay=False), default=None,
              help="The skill's folder (read-only; the place `skill_dir`). Default: the folder of the machine's "
                   "`source` document; with --resume, the one the run last ran with.")
@_ALLOW_HOST
@click.option("--tool-timeout", "tool_timeout_s", type=SECONDS, default=60.0, show_default=True,
              help="Seconds before a tool (bash or a --tools function) is stopped.")
@click.option("--model-timeout", "model_timeout_s", type=SECONDS, default=120.0, show_default=True,
              help="Seconds one model request (openai:, anthropic: or local) may take.")
@click.option("--max-tokens", type=click.IntRange(1, 1 << 20), default=8192, show_default=True,
              help="Tokens of one model reply (openai: and anthropic:); a state that writes a whole report needs "
                   "thousands.")
@click.option("--step-deadline", "step_deadline_s", type=SECONDS, default=600.0, show_default=True,
              help="Seconds one model or judge step may take in all: requests, retries and Retry-After waits.")
@click.option("--mode", type=click.Choice(["machine", "native", "prompt-only"]), default="machine", show_default=True,
              help="machine: the runtime drives the machine; native: the skill document and full transcript, the "
                   "model picks every step; prompt-only: the machine rendered as prose, the model follows it.")
@click.option("--otel", "otel", default=None, metavar="ENDPOINT",
              help="When the run ends, send it as OpenTelemetry spans to this OTLP/HTTP collector "
                   "(e.g. http://127.0.0.1:4318); a collector that fails is a warning, never a failed run.")
@_json_output("the result as one JSON object")
def run(as_json: bool, otel: str | None = None, **config: Any) -> None:
    """Run a checked machine: the runtime picks every next state; models and tools do one state's work.

    Exit 0 a success outcome, 4 partial, 5 failed (or the fallback), 6 waiting for the user's answer (resume
    with --resume RUN_ID --answer TEXT), 1 the machine does not check, 2 bad flags, inputs or files (a refused
    resume or answer included), 3 internal error.
    """
    with console.pure_stdout():  # a --tools function's prints are not the result
        if otel is not None:  # the spans are sent once the run has ended, from its trace
            report = api.run_with_otel(api.RunConfig(**config), otel)
        else:
            report = api.run(api.RunConfig(**config))  # the flags are named as RunConfig's fields
    sys.exit(console.run_otel(report, as_json) if otel is not None else console.run(report, as_json))


@main.command()
@click.argument("machine_path", metavar="MACHINE")
@click.argument("trace_path", metavar="TRACE", type=_Existing(dir_okay=False, exists=True))
@click.option("--other-machine", is_flag=True, help="Replay a trace recorded with another version of the machine.")
def replay(machine_path: str, trace_path: str, other_machine: bool) -> None:
    """Replay a trace through a machine without calling models or tools.

    Exit 0 when the trace replays, 1 at the first divergence (or the machine does not check), 2 an unreadable
    trace or bad flags, 3 internal error.
    """
    sys.exit(console.replay(api.replay(machine_path, trace_path, other_machine=other_machine), machine_path))


@main.command()
@click.argument("machine_path", metavar="MACHINE")
@click.argument("traces", nargs=-1, required=True, type=_Existing(dir_okay=False, exists=True))
@click.option("--suite", type=_Existing(dir_okay=False, exists=True), default=None,
              help="A bench suite: its task's verifier decides success, its requirements join RFC.")
@click.option("--task", default=None, metavar="ID",
              help="The suite's task the traces ran (default: the one whose inputs the trace's header holds).")
@click.option("--workdir", type=_Existing(file_okay=False, exists=True), default=None,
              help="The folder the runs left their files in (default: a bench cell's `work/` beside its trace).")
@_json_output("one JSON object per trace and a summary")
def score(machine_path: str, traces: tuple[str, ...], suite: str | None, task: str | None, workdir: str | None,
          as_json: bool) -> None:
    """Score traces: task success from a verifier, request-level full compliance (RFC) from effects."""
    with console.pure_stdout():  # a verifier's prints are not the scores
        result = api.score(machine_path, traces, suite=suite, task=task, workdir=workdir)
    sys.exit(console.score(result, machine_path, as_json))


@main.command()
@click.argument("machine_path", metavar="MACHINE")
@click.argument("new_path", metavar="[NEW]", required=False, type=_Existing(dir_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None, help="Write here (default: stdout).")
@click.option("--format", "fmt", type=click.Choice(["dot", "svg", "png", "mermaid"]), default=None,
              help="Default: from the output's extension, else dot.")
@click.option("--trace", "trace_path", type=_Existing(dir_okay=False, exists=True), default=None,
              help="Overlay a run: visited states and edges with counts, the path to the terminal emphasised.")
@click.option("--diff", "as_diff", is_flag=True,
              help="`--diff OLD NEW`: draw NEW with the states and edges added, removed or changed since OLD.")
@click.option("--fragment", default=None, metavar="NAME", help="In a library of fragments: the one to draw.")
@click.option("--stdin-filename", default=None, metavar="PATH", help="With `-`: the path the text on stdin stands for.")
def dot(machine_path: str, new_path: str | None, output: str | None, fmt: str | None, trace_path: str | None,
        as_diff: bool, fragment: str | None, stdin_filename: str | None) -> None:
    """Draw a machine as DOT, SVG, PNG (Graphviz) or Mermaid (`-` reads standard input)."""
    if as_diff != (new_path is not None):
        raise click.UsageError("--diff takes two machines, OLD and NEW" if as_diff else
                               "a second machine is drawn only with --diff")
    if new_path is not None:
        sys.exit(console.draw(api.draw_diff(machine_path, new_path, console.dot_format(fmt, output)), output))
    result = api.draw(machine_path, console.dot_format(fmt, output), trace=trace_path, fragment=fragment,
                      stdin=sys.stdin.buffer, stdin_filename=stdin_filename)
    sys.exit(console.draw(result, output))


@main.command()
def lsp() -> None:
    """Run the language server over stdio (needs `pip install 'skillc[lsp]'`)."""
    sys.exit(console.lsp())


@main.command(name="test")
@click.argument("machine_path", metavar="MACHINE")
@click.option("--coverage", type=click.Choice(["states", "transitions"]), default="transitions", show_default=True,
              help="What each run aims at: a state or a transition not covered yet.")
@click.option("--examples", type=click.IntRange(1, 10_000), default=200, show_default=True,
              help="At most this many runs (at most 10,000).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the generated outputs.")
@click.option("--traces", "traces_dir", type=click.Path(file_okay=False), default=None,
              help="Keep the trace of every run here (failing runs are always kept).")
def test_machine(machine_path: str, coverage: str, examples: int, seed: int, traces_dir: str | None) -> None:
    """Explore a machine with generated outputs; check termination, rules, fallback use and evidence."""
    with console.pure_stdout():
        result = api.explore(machine_path, coverage=coverage, examples=examples, seed=seed, traces=traces_dir)
    sys.exit(console.explore(result, machine_path, coverage))


@main.command()
@click.argument("skill", type=click.Path(dir_okay=True))
@click.option("-o", "--output", default=None,
              help="Where to write the machine (default: the skill's name with .skm beside it; `-` for stdout).")
@click.option("--model", default=None, metavar="SPEC",
              help="Draft with a model: openai:MODEL, anthropic:MODEL, local[:PATH.gguf] or recorded:DIR; `offline` "
                   "for none. Default: SKILLC_MODEL, else [tool.skillc] model, else offline.")
@click.option("--base-url", default=None, help="Base URL of an OpenAI- or Anthropic-compatible endpoint.")
@click.option("--rounds", type=click.IntRange(1, 20), default=3, show_default=True,
              help="Drafts the LLM compiler may make before giving up.")
@click.option("--max-tokens", type=click.IntRange(1024, 1 << 20), default=None,
              help="Tokens of one model reply (LLM compiler; default 16384).")
@click.option("--section-tokens", type=click.IntRange(500, 1 << 20), default=None,
              help="Skill tokens one reply covers; larger skills are drafted section by section (default 5000).")
@click.option("--model-timeout", "model_timeout_s", type=SECONDS, default=None,
              help="Seconds one model request may take (LLM compiler; default 600).")
@click.option("--report", is_flag=True, help="Print the clause table: each clause, its class, where it landed.")
@click.option("--allow-tool", "tools", multiple=True, type=click.Choice(["bash"]),
              help="Let steps run their commands through this tool (also granted by `allowed-tools: Bash`).")
@click.option("--max-revisions", type=click.IntRange(1, 20), default=2, show_default=True,
              help="Revise rounds after a failed verification.")
@click.option("--max-repeats", type=click.IntRange(1, 50), default=3, show_default=True,
              help="Rounds of a repeat-until loop that states no limit.")
@click.option("--max-bytes", type=click.IntRange(1, 1 << 30), default=1 << 20, show_default=True,
              help="Refuse skill documents larger than this.")
@click.option("--strict", is_flag=True,
              help="Refuse a build with constructs the offline compiler could not encode (SKM320 becomes SKM321).")
@_format()
@click.option("-v", "--verbose", is_flag=True, help="Also print notes that are not about the build itself.")
@click.option("-q", "--quiet", is_flag=True, help="Print the diagnostics only, no summary line.")
@click.option("--stdin-filename", default=None, metavar="PATH",
              help="With `-`: the skill document's path, as the machine's `source` names it (default SKILL.md).")
def build(skill: str, report: bool, fmt: str, quiet: bool, **options: Any) -> None:
    """Compile a markdown skill into a checked machine (nothing is written unless it checks clean).

    `-` reads the skill document from standard input; the machine then goes to standard output unless -o.
    """
    with console.pure_stdout():  # stdout may be the machine built
        outcome = api.build(skill, stdin=sys.stdin.buffer, **options)
    sys.exit(console.build(outcome, fmt, report, quiet))


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
@_format()
def distill(traces: tuple[str, ...], output: str | None, min_reuse: float, emit: str, heldout: tuple[str, ...],
            games: str | None, report: bool, fmt: str) -> None:
    """Distil reusable skills (.skm fragments + Python functions) from successful JSONL traces."""
    with console.pure_stdout():
        outcome = api.distill(traces, output=output, min_reuse=min_reuse, emit=emit, heldout=heldout,
                              games=games, report=report, progress=console.progress_bar)
    sys.exit(console.distill(outcome, output, report, fmt))


@main.command()
@click.argument("machine_path", metavar="MACHINE", type=_Existing(dir_okay=False, exists=True))
@click.argument("traces", nargs=-1, required=True, type=_Existing(dir_okay=False, exists=True))
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write the refined machine here (default: over MACHINE).")
@click.option("--archive", "archive", type=click.Path(file_okay=False), default=None,
              help="The archive of accepted traces (default: OUT.archive/ beside the machine written).")
@click.option("--model", default=None, metavar="SPEC",
              help="Let a model judge ambiguous alignments (an executor spec).")
@click.option("--base-url", default=None, help="Endpoint of an OpenAI- or Anthropic-compatible server for --model.")
@click.option("--dry-run", is_flag=True, help="Write nothing: report what would be accepted, with the diff.")
@_json_output("one JSON object per trace and a summary")
def refine(machine_path: str, traces: tuple[str, ...], output: str | None, archive: str | None, model: str | None,
           base_url: str | None, dry_run: bool, as_json: bool) -> None:
    """Grow a machine from development traces; an edit lands only if it checks and replays every accepted trace.

    Exit 0 when every trace was accepted (or already archived), 1 errors in the input (machine, traces,
    archive), 2 bad flags, 3 internal error, 4 at least one trace was dropped.
    """
    with console.pure_stdout():
        result = api.refine(machine_path, traces, output=output, archive=archive, model=model, base_url=base_url,
                            dry_run=dry_run)
    sys.exit(console.refine(result, as_json))


@main.command()
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The JSONL file to write.")
@click.option("--count", type=click.IntRange(1, 100_000), default=20, show_default=True,
              help="How many TextWorld cooking games to generate and play.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the game settings.")
@click.option("--games", "games_dir", default=".skillc/games", show_default=True, type=click.Path(file_okay=False),
              help="Where the generated games are kept (reused when already there).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="TextWorld games generated and played at once (processes).")
@click.option("--env", "env_name", type=click.Choice(["textworld", "pddl"]), default="textworld", show_default=True,
              help="TextWorld cooking games, or PDDL problems (PDDLGym + pyperplan; --count takes the first problems).")
@click.option("--domain", default="blocks", show_default=True,
              help="With --env pddl: the PDDL domain (blocks, gripper).")
@click.option("--split", type=click.Choice(["train", "test"]), default="train", show_default=True,
              help="With --env pddl: PDDLGym's training or test problems.")
def collect(output: str, count: int, seed: int, games_dir: str, workers: int, env_name: str, domain: str,
            split: str) -> None:
    """Record runs as traces: TextWorld cooking walkthroughs (needs `textworld`), or PDDL plans (needs `pddlgym`)."""
    with console.pure_stdout():
        result = api.collect(output, count=count, seed=seed, games=games_dir, workers=workers, env=env_name,
                             domain=domain, split=split, progress=console.progress_bar)
    sys.exit(console.collect(result, output))


@main.command()
@click.argument("suite", metavar="SUITE", required=False)
@click.option("--modes", default="machine,native,prompt-only", show_default=True,
              help="The modes to run, comma-separated: machine, native, prompt-only.")
@click.option("--executor", "executors", multiple=True, metavar="SPEC",
              help="An executor (repeatable): scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL, "
                   "local[:PATH][?…]; `{task}` in it is replaced by the task id.")
@click.option("--repeats", type=int, default=1, show_default=True, help="Runs of every task × mode × executor.")
@click.option("--workers", type=int, default=1, show_default=True,
              help="Cells run at once (1: in this process; more: a process pool, or Ray tasks in flight).")
@click.option("-o", "--output", default=None, type=click.Path(file_okay=False),
              help="The output folder: results.jsonl, report.md, report.html, cells/ (default .skillc/bench/SUITE).")
@click.option("--backend", default="local", show_default=True, help="Where cells run: local (processes) or ray.")
@click.option("--address", default=None,
              help="With --backend ray: the cluster's address (default: $RAY_ADDRESS, else one on this machine).")
@click.option("--max-steps", type=int, default=None,
              help="Steps per run in every mode (default: the suite's max_steps, else 100).")
@click.option("--model-timeout", "model_timeout_s", type=SECONDS, default=120.0, show_default=True,
              help="Seconds one model call may take.")
@click.option("--tool-timeout", "tool_timeout_s", type=SECONDS, default=60.0, show_default=True,
              help="Seconds one tool call may take.")
@click.option("--report-only", is_flag=True, help="Run nothing: rebuild the report from -o DIR's results.jsonl.")
@click.option("--machine", "machines", multiple=True, metavar="FILE",
              help="A machine under test instead of the suite's (repeatable: each is a column of the report).")
@click.option("--build", "builds", multiple=True, metavar="offline|model:SPEC",
              help="Build the suite's skill into a machine under test first (repeatable).")
@click.option("--tasks", default=None, metavar="PATTERN",
              help="Only the tasks whose id matches one of these comma-separated shell patterns.")
@click.option("--dry-run", is_flag=True,
              help="Resolve every cell, check inputs, set up one cell's work folder; run nothing.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
@_json_output("the summary as one JSON object")
@click.option("--otel", default=None, metavar="ENDPOINT",
              help="Also send every cell's run as OpenTelemetry spans to this OTLP/HTTP endpoint (e.g. "
                   "http://127.0.0.1:4318).")
def bench(suite: str | None, modes: str, executors: tuple[str, ...], quiet: bool, as_json: bool,
          otel: str | None, **options: Any) -> None:
    """Run a suite's tasks × modes × executors × repeats and report success, RFC and tokens (resumable).

    Exit 0 when every cell has a row (whatever the results), 1 unchecked machine, 2 bad flags or suite (or
    no report could be written), 3 internal error, 4 the backend failed and some cells have no row (run it
    again to finish them).
    """
    config = api.BenchConfig(suite=suite, modes=tuple(m.strip() for m in modes.split(",") if m.strip()),
                             executors=executors, **options)
    progress = None if quiet or as_json else console.bench_progress
    with console.pure_stdout():  # a verifier's or a tool's prints, Ray's worker logs: not the summary
        result = api.bench(config, progress=progress)
    if otel is not None:
        result.diagnostics.extend(api.bench_otel(result, otel))
    sys.exit(console.bench(result, as_json))


_SEARCH = api.EvolveOptions()  # the defaults of evolve's search flags: one definition, in skillc.improve.evolve.options


@main.command()
@click.argument("machine", metavar="MACHINE")
@click.option("--suite", required=True, metavar="SUITE", help="The bench suite whose task (and hidden verifier) "
                                                               "decides each version's reward.")
@click.option("--task", default=None, metavar="ID", help="The suite's task to evolve on (default: its only task).")
@click.option("--executor", default=None, metavar="SPEC",
              help="What runs each version (as `skillc bench --executor`): scripted:FILE, replay:TRACE, "
                   "openai:MODEL, anthropic:MODEL, local[:PATH][?…].")
@click.option("--reflect-model", default=None, metavar="SPEC",
              help="Reflection: scripted:ROLES.json (a role script) or a model spec (default: the --executor spec).")
@click.option("--verifier-model", default=None, metavar="SPEC",
              help="The self-verifier, as --reflect-model (default: the --reflect-model spec).")
@click.option("--budget", type=int, default=_SEARCH.budget, show_default=True,
              help="K: evolved executions after the root.")
@click.option("--children", type=int, default=_SEARCH.branching, show_default=True, help="B: children per expansion.")
@click.option("--rounds", type=int, default=_SEARCH.reflection_rounds, show_default=True,
              help="L: reflection rounds per expansion.")
@click.option("--c-puct", type=float, default=_SEARCH.c_puct, show_default=True,
              help="The PUCT exploration constant c.")
@click.option("--beta", type=float, default=_SEARCH.beta, show_default=True,
              help="β of the rank prior softmax(−β(ρ−1)).")
@click.option("--fpu-reduction", type=float, default=_SEARCH.fpu_reduction, show_default=True,
              help="First-play urgency: an unrun child's value is its parent's normalised value minus this.")
@click.option("--repair-rounds", type=int, default=_SEARCH.repair_rounds, show_default=True,
              help="V: the self-verifier's generation/repair rounds per hypothesis.")
@click.option("--max-cases", type=int, default=_SEARCH.max_cases, show_default=True,
              help="C: new test cases kept per self-verifier invocation.")
@click.option("--case-timeout", "case_timeout_s", type=SECONDS, default=_SEARCH.case_timeout_s, show_default=True,
              help="Seconds one test case may take on one output.")
@click.option("--no-verifier", "verifier", flag_value=False, default=_SEARCH.self_verifier,
              help="Ablation: no generated test cases (the reward alone).")
@click.option("--greedy", is_flag=True, help="Ablation: refine the last version in place, never back off.")
@click.option("--no-gate", "gate", flag_value=False, default=True,
              help="Ablation: candidates run without the `skillc check` gate.")
@click.option("--model-timeout", "model_timeout_s", type=SECONDS, default=120.0, show_default=True,
              help="Seconds one reflection or self-verifier model call may take.")
@click.option("-o", "--output", default=None, type=click.Path(),  # a file here is SKM901, as every folder problem
              help="The folder for evolved.skm, tree.json, report.md, tree.dot and runs/ "
                   "(default .skillc/evolve/MACHINE).")
@_json_output("the summary as one JSON object")
def evolve(as_json: bool, **options: Any) -> None:
    """Improve a machine on one task under a small execution budget: hypotheses, test cases, a tree search.

    Exit 0 when a rewarded version was found, 1 the machine does not check, 2 bad flags or files (nothing
    run), 3 internal error, 4 no rewarded version within the budget (the files are still written), 130 interrupted
    (the files of the versions run so far are still written).
    """
    try:
        with console.pure_stdout():  # a case's or a tool's prints are not the summary
            result = api.evolve(api.EvolveConfig.from_flags(**options))  # the flags become its EvolveOptions
    except KeyboardInterrupt as exc:  # before the search started or while its files were written (the search
        # keeps its own)
        click.echo(f"skillc evolve: {console.stop_word()} before the search ran or while its files were written",
                   err=True)
        sys.exit(console.stopped_by(exc))
    sys.exit(console.evolve(result, as_json))


@main.command()
@click.option("--format", "fmt", type=click.Choice(["lark", "gbnf", "json-schema", "config-schema"]), default="lark",
              show_default=True, help="Lark (outlines, llguidance), GBNF (llama.cpp), the IR JSON Schema, or the "
                                      "JSON Schema of [tool.skillc] / skillc.toml.")
@click.option("-o", "--output", default=None, help="Write to a file instead of stdout.")
def grammar(fmt: str, output: str | None) -> None:
    """Export the .skm grammar for grammar-constrained decoding, the machine JSON Schema, or the config's."""
    sys.exit(console.output(api.grammar(fmt), output))


@main.group(name="import")
def import_group() -> None:
    """Translate graphs of other systems (AWS Step Functions, LangGraph) into checked .skm machines."""


@import_group.command(name="asl")
@click.argument("path", type=click.Path(dir_okay=False))
@click.option("-o", "--output", default=None, help="Write the .skm here (default: stdout).")
@_format(help="How to print the findings.")
def import_asl(path: str, output: str | None, fmt: str) -> None:
    """An Amazon States Language definition (JSON or YAML) as a .skm machine; branches become fragments."""
    sys.exit(console.imported(api.import_graph("asl", path), output, fmt, inputs=(path,)))


@import_group.command(name="langgraph")
@click.argument("spec", metavar="MODULE:ATTR")
@click.option("-o", "--output", default=None, help="Write the .skm here (default: stdout).")
@_format(help="How to print the findings.")
def import_langgraph(spec: str, output: str | None, fmt: str) -> None:
    """A LangGraph StateGraph (or its compiled graph), imported from MODULE:ATTR, as a .skm machine.

    Exit 0 written, 1 findings, 2 usage error (langgraph not installed, a file problem), 3 internal error.
    """
    import importlib.util

    if importlib.util.find_spec("langgraph") is None:  # a missing package is a usage error, as for every extra
        from skillc.diagnostics import codes as diagnostics_codes
        from skillc.diagnostics import make

        console.emit([make(diagnostics_codes.IO_ERROR, "skillc import langgraph needs the langgraph package (pip "
                           "install langgraph)")], fmt, err=True)  # stdout is for the .skm only
        sys.exit(console.EXIT_USAGE)
    with console.pure_stdout():  # the module imported may print: stdout is the .skm
        result = api.import_graph("langgraph", spec)
    from skillc.diagnostics.files import module_files

    read = module_files(spec.partition(":")[0], [".", *sys.path])  # -o never replaces the module it read
    sys.exit(console.imported(result, output, fmt, inputs=read))


@main.group(name="export")
def export_group() -> None:
    """Write a checked machine as a graph of another system (LangGraph) whose steps run on skillc's runtime."""


@export_group.command(name="langgraph")
@click.argument("machine_path", metavar="MACHINE")
@click.option("-o", "--output", default=None, help="Write the Python module here (default: stdout).")
def export_langgraph(machine_path: str, output: str | None) -> None:
    """A checked machine as a Python module building a LangGraph StateGraph: one node per state, skillc's steps.

    Exit 0 written, 1 the machine does not check (or cannot be exported), 2 a file problem, 3 internal error.
    """
    sys.exit(console.exported(api.export_graph("langgraph", machine_path), output))


@main.command()
@click.argument("machine_path", metavar="MACHINE")
@click.argument("transcripts", nargs=-1, required=True)
@click.option("--format", "--output-format", "fmt", type=click.Choice(["text", "json", "sarif"]), default="text",
              show_default=True,
              help="text: a verdict per transcript; json: one JSON document; sarif: a SARIF 2.1.0 log.")
@click.option("--trace-format", type=click.Choice(["skillc", "chat", "claude-code", "codex"]), default=None,
              help="The transcripts' format (default: recognised from each file's first record).")
@click.option("-v", "--verbose", is_flag=True,
              help="Also show each event's state, how tool calls were read, and the rules a transcript cannot show.")
def conform(machine_path: str, transcripts: tuple[str, ...], fmt: str, trace_format: str | None,
            verbose: bool) -> None:
    """Judge native transcripts by a machine's rules without replaying models: what each broke, at which event.

    Exit 0 when no rule is broken, 1 when one is (or the machine does not check), 2 a transcript that cannot be
    read or is in no known format (or bad flags), 3 internal error.
    """
    with console.pure_stdout():
        result = api.conform(machine_path, transcripts, trace_format=trace_format)
    sys.exit(console.conform(result, machine_path, fmt, verbose))


@main.command()
@click.argument("machines", nargs=-1, metavar="MACHINES…")
@click.option("--mcp", "mcp", is_flag=True, help="Serve over the Model Context Protocol (the one protocol so far).")
@click.option("--executor", default=None, metavar="SPEC",
              help="What answers model and judge states: scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL, "
                   "local[:PATH.gguf][?…], or sampling (the client's own model, through MCP sampling).")
@click.option("--http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="With --http: the port on 127.0.0.1 (0: any free port; the URL is printed on stderr).")
@click.option("--workdir", type=click.Path(file_okay=False), default=None,
              help="The root of every call's fresh work folder, trace and the journal (default: a new temporary "
                   "folder).")
@_BASE_URL
@_STRUCTURED
@_TOOLS
@_ALLOW_HOST
@click.option("--max-steps", type=click.IntRange(1), default=1000, show_default=True,
              help="Steps before a run is stopped and ends in the fallback.")
@_RETRIES
@click.option("--tool-timeout", "tool_timeout_s", type=SECONDS, default=60.0, show_default=True,
              help="Seconds before a tool (bash, a --tools function, an MCP tool) is stopped.")
@click.option("--model-timeout", "model_timeout_s", type=SECONDS, default=120.0, show_default=True,
              help="Seconds one model request may take (a sampled one included).")
@click.option("--step-deadline", "step_deadline_s", type=SECONDS, default=600.0, show_default=True,
              help="Seconds one model or judge step may take in all: requests, retries and waits.")
@click.option("--max-tokens", type=click.IntRange(1, 1_000_000), default=2048, show_default=True,
              help="With --executor sampling: the most tokens of one sampled reply.")
@click.option("--input-timeout", "input_timeout_s", type=SECONDS, default=600.0, show_default=True,
              help="Seconds a call waits for a 2026-07-28 client's retry with its model's reply before its run is "
                   "stopped.")
def serve(machines: tuple[str, ...], mcp: bool, **config: Any) -> None:
    """Serve checked machines as tools: each call runs one machine to a terminal in a fresh work folder.

    Over stdio by default (stdout is the protocol's), or streamable HTTP on 127.0.0.1 with --http. A run that asks
    its user is answered through MCP elicitation, or returns a resume token for the `skillc_resume` tool.
    Exit 0 when the client left (or the server was stopped: 130/143), 1 a machine does not check, 2 bad flags or
    the mcp extra missing, 3 internal error.
    """
    if not mcp:
        raise click.UsageError("name the protocol to serve: --mcp (the only one so far)")
    sys.exit(console.serve(api.serve(api.ServeConfig(machines=machines, **config))))
