"""The command line's terminal side: one renderer per `skillc.api` result, each printing it and returning the
exit code; files are written through the one guarded writer (`diagnostics/files.py` `write_output`).

Exit codes: 0 clean, 1 errors found (or `fmt --check` would change a file), 2 usage or I/O error, 3 internal
error (a bug in skillc); `run` adds 4 partial, 5 failed and 6 waiting for the user's answer; `refine` adds 4 when a
trace was dropped.
"""

from __future__ import annotations

import contextlib
import json
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import attrs
import click

from skillc import api
from skillc.diagnostics import codes
from skillc.diagnostics.diagnostic import Diagnostic, Severity, make

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL, EXIT_PARTIAL, EXIT_FAILED = 0, 1, 2, 3, 4, 5
#: `skillc run`: the run asked the user and waits, persisted in its journal (`--resume RUN_ID --answer TEXT`).
EXIT_WAITING = 6
#: A command stopped by an interrupt (Ctrl-C) after saying what it kept, as a shell reports SIGINT: 128 + 2.
EXIT_INTERRUPTED = 130
#: The same stop caused by SIGTERM (`kill`, `timeout`, CI runners, systemd): 128 + 15.
EXIT_TERMINATED = 143
_OUTCOME_EXIT = {"success": EXIT_OK, "partial": EXIT_PARTIAL, "failed": EXIT_FAILED}
SUMMARY_FORMATS = ("full", "concise")  # the formats a summary line goes with (on stderr)


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C raises KeyboardInterrupt: every command's interrupt handling stops on it."""


@attrs.define
class _Stop:
    """The first stop signal the command line received (None: none yet)."""

    signum: int | None = None


_STOP = _Stop()
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _on_stop(signum: int, frame: object) -> None:
    """Raise the first SIGINT/SIGTERM as KeyboardInterrupt/Terminated; later ones are ignored: the command is
    already stopping and writing what it kept, and an exception inside those writes would cut them short."""
    if _STOP.signum is not None:
        return
    _STOP.signum = signum
    raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """While the block runs (on the main thread): SIGINT and SIGTERM stop the command through `_on_stop`; a signal
    the parent ignored (SIG_IGN, as `nohup` or a background job) stays ignored; the handlers are put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in _STOP_SIGNALS}
    for s, handler in previous.items():
        if handler is not signal.SIG_IGN:
            signal.signal(s, _on_stop)
    _STOP.signum = None
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)


def stopped_by(exc: BaseException | None = None) -> int:
    """The exit status of a command stopped by a signal: 143 after SIGTERM, else 130."""
    terminated = isinstance(exc, Terminated) or _STOP.signum == signal.SIGTERM
    return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED


def stop_status(code: object) -> object:
    """A command's exit status with 130 ("interrupted") read as 143 when SIGTERM was what stopped it."""
    return stopped_by() if code == EXIT_INTERRUPTED else code


def stop_word() -> str:
    """How the stop is said: "terminated" after SIGTERM, else "interrupted"."""
    return "terminated" if _STOP.signum == signal.SIGTERM else "interrupted"


def _worded(diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics with an interrupt's message saying "terminated (SIGTERM)" when SIGTERM stopped the command."""
    if _STOP.signum != signal.SIGTERM:
        return list(diagnostics)
    from skillc.bench.codes import BENCH_INTERRUPTED
    from skillc.improve.codes import REFINE_INTERRUPTED
    from skillc.improve.evolve.codes import EVOLVE_INTERRUPTED

    stops = {BENCH_INTERRUPTED, EVOLVE_INTERRUPTED, REFINE_INTERRUPTED}
    return [attrs.evolve(d, message=d.message.replace("interrupted", "terminated (SIGTERM)", 1))
            if d.code in stops else d for d in diagnostics]


def emit(diagnostics: list[Diagnostic], fmt: str, err: bool = False) -> None:
    """Print diagnostics sorted by place in a format of `diagnostics.render` (SARIF even when there are none), on
    stderr with `err` (stdout carries the command's product then: a machine, a .skm, a JSON document)."""
    from skillc.diagnostics.render import render

    if diagnostics or fmt == "sarif":
        stream = sys.stderr if err else sys.stdout
        click.echo(render(sorted(_worded(diagnostics), key=Diagnostic.sort_key), fmt, stream), color=True, err=err)


MACHINE_FORMATS = ("json", "sarif")  # diagnostic formats a program reads: nothing else may share their stream


@contextlib.contextmanager
def pure_stdout(enabled: bool = True) -> Iterator[None]:
    """While the block runs, what Python code prints to stdout (a --tools function, a verifier, a LangGraph
    module, Ray's worker logs) goes to stderr: stdout is kept for the one document the command prints after."""
    if not enabled:
        yield
        return
    with contextlib.redirect_stdout(sys.stderr):
        yield


#: File problems that are the invocation's (exit 2): I/O, a leased archive, an output naming an input, an unsafe output.
_USAGE_CODES = frozenset({codes.IO_ERROR, codes.ARCHIVE_LEASED, codes.OUTPUT_IS_INPUT, codes.UNSAFE_OUTPUT})


def exit_code(diagnostics: list[Diagnostic]) -> int:
    """3 for an internal error, 2 for a usage or I/O error, 1 for any other error, else 0."""
    if any(d.code == codes.INTERNAL_ERROR for d in diagnostics):
        return EXIT_INTERNAL
    if any(d.code in _USAGE_CODES for d in diagnostics):
        return EXIT_USAGE
    if any(d.is_error for d in diagnostics):
        return EXIT_ERRORS
    return EXIT_OK


def failed(diagnostics: list[Diagnostic], fmt: str) -> int:
    """Print diagnostics; the exit code of a command that produced nothing (never 0)."""
    emit(diagnostics, fmt)
    return exit_code(diagnostics) or EXIT_ERRORS


def write(path: str | Path, data: str | bytes) -> str | None:
    """Write a file atomically (`write_output`); why it could not be written, or None."""
    from skillc.diagnostics.files import write_output

    try:
        write_output(path, data)
    except OSError as exc:
        return f"cannot write {path}: {exc.strerror or exc}"
    return None


def output(text: str, path: str | None, fmt: str = "full", inputs: Sequence[str | Path] = ()) -> int:
    """Print text (no path, or `-`) or write it to `path`, which must not be one of `inputs`; 2 when it could
    not be written (SKM541 for an input, SKM542 for an unsafe place, else SKM901)."""
    if path is None or path == "-":
        click.echo(text, nl=False)
        return EXIT_OK
    from skillc.diagnostics.files import FileProblem, refuse_inputs

    try:
        refuse_inputs(path, inputs)
    except FileProblem as exc:
        emit([exc.diagnostic()], fmt)
        return EXIT_USAGE
    problem = write(path, text)
    if problem:
        emit([make(codes.IO_ERROR, problem)], fmt)
        return EXIT_USAGE
    return EXIT_OK


@contextlib.contextmanager
def progress_bar(what: str, unit: str) -> Iterator[Callable[[int], None]]:
    """A progress bar on stderr (tqdm), shown only on a terminal; yields its `update(n)`."""
    from tqdm import tqdm

    with tqdm(desc=what, unit=unit, file=sys.stderr, disable=None, leave=False) as bar:
        yield bar.update


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' * (n != 1)}"


def check(result: api.CheckFilesResult, fmt: str, quiet: bool, exit_zero: bool) -> int:
    """`skillc check`: the findings, a summary line on stderr, 1 on errors (or failing warnings)."""
    emit(result.diagnostics, fmt)
    if result.usage:
        return EXIT_USAGE
    if fmt in SUMMARY_FORMATS and not quiet:
        errors = sum(d.severity is Severity.ERROR for d in result.diagnostics)
        warnings = sum(d.severity is Severity.WARNING for d in result.diagnostics)
        click.echo(f"checked {_plural(result.files, 'file')}: {_plural(errors, 'error')}, "
                   f"{_plural(warnings, 'warning')}", err=True)
    code = exit_code(result.diagnostics)
    code = EXIT_ERRORS if code == EXIT_OK and result.failed else code
    return EXIT_OK if exit_zero and code == EXIT_ERRORS else code


def _diff(name: str, old: str, new: str) -> str:
    import difflib

    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def fmt(result: api.FormatFilesResult, check_only: bool, diff: bool, quiet: bool, stdin: bool) -> int:
    """`skillc fmt`: write (or, with --check/--diff, only report) the files that change; stdin to stdout."""
    diagnostics = list(result.diagnostics)
    changed = [f for f in result.files if f.changed]
    for f in result.files if stdin and not (diff or check_only) else changed:
        if diff:
            click.echo(_diff(f.path, f.before, f.after), nl=False)
        elif stdin:
            click.echo(f.after, nl=False)
        elif check_only:
            if not quiet:
                click.echo(f"would reformat {f.path}", err=True)
        elif problem := write(f.path, f.after):
            diagnostics.append(make(codes.IO_ERROR, problem))
        elif not quiet:
            click.echo(f"reformatted {f.path}", err=True)
    emit(diagnostics, "full")
    code = exit_code(diagnostics)
    return EXIT_ERRORS if code == EXIT_OK and (check_only or diff) and changed else code


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.rstrip("\n").splitlines())


def explain(result: api.ExplainResult, listing: bool) -> int:
    """`skillc explain`: one line per code (listing), or each code's explanation; 2 for an unknown code."""
    for c in result.codes:
        if listing:
            click.echo(f"{c.code}  {c.slug:<28} {c.summary}")
            continue
        click.echo(f"{c.code} ({c.slug}, {c.severity}): {c.summary}\n\n{c.explanation}")
        if c.hint:
            click.echo(f"\nhelp: {c.hint}")
        if c.bad:
            click.echo(f"\nExample that triggers it:\n\n{_indent(c.bad)}")
    if result.unknown is not None:
        click.echo(f"skillc: unknown diagnostic code {result.unknown!r}", err=True)
        return EXIT_USAGE
    return EXIT_OK


def show(result: api.DescribeResult, fmt: str) -> int:
    """`skillc show`: the diagnostics, then the summary; `--format json` one JSON object holding both, `--format
    sarif` the SARIF log alone on stdout (the summary on stderr)."""
    if fmt == "json":
        from skillc.diagnostics.render import to_json

        found = [to_json(d) for d in sorted(_worded(result.diagnostics), key=Diagnostic.sort_key)]
        click.echo(json.dumps({"summary": result.text, "diagnostics": found}, ensure_ascii=False))
        return EXIT_OK if result.text is not None else exit_code(result.diagnostics) or EXIT_ERRORS
    if result.text is None:
        return failed(result.diagnostics, fmt)
    if result.diagnostics or fmt == "sarif":  # not an empty log in front of a summary of a clean machine
        emit(result.diagnostics, fmt)
    click.echo(result.text, err=fmt == "sarif")
    return EXIT_OK


def unchecked(result: api.RunReport | api.ReplayResult | api.ScoreResult | api.ExploreResult, path: str,
              err: bool = False) -> int:
    """A machine that did not pass `skillc check` (or could not be read again): its problems (on stderr with `err`:
    stdout is kept for JSON), never 0."""
    emit(result.diagnostics, "full", err=err)
    if result.unchecked:
        click.echo(f"skillc: {path} does not pass `skillc check`; only checked machines run", err=True)
        return exit_code(result.diagnostics) or EXIT_ERRORS
    return EXIT_USAGE


def resume_command(run_id: str, journal: str | None) -> str:
    """The command that answers a waiting run, typed in any folder: its journal named absolute (the default
    `.skillc/runs.sqlite` is relative to the folder a command is typed in); its folders are not named, since the
    journal keeps them."""
    import os
    import shlex

    where = f" --journal {shlex.quote(os.path.abspath(journal))}" if journal else ""
    return f'skillc run --resume {run_id}{where} --answer "…"'


def run(report: api.RunReport, as_json: bool) -> int:
    """`skillc run`: the outcome, evidence and run id (or JSON); 0 success, 4 partial, 5 failed (a baseline that
    never got results from a tool, or whose replies never followed the protocol, has outcome `failed`: see
    baselines.py), 6 waiting for the user's answer (the question and the command that answers it, on stderr)."""
    from skillc.diagnostics.files import printable

    if report.usage is not None:
        if report.usage.param is None:
            raise click.UsageError(report.usage.message)
        raise click.BadParameter(report.usage.message, param_hint=report.usage.param)
    if report.error_line is not None:  # a runtime error: its coded diagnostic as one line
        click.echo(printable(f"skillc run: {report.error_line}"), err=True)
        return EXIT_USAGE
    if report.interrupted:
        resume = (f"; every committed step is kept: `skillc run --resume {report.run_id}` continues it (same "
                  f"--journal)") if report.run_id else ""
        click.echo(f"skillc run: {stop_word()}{resume}", err=True)
        return EXIT_INTERRUPTED
    result = report.result
    if result is None:
        return unchecked(report, report.machine_path or "", err=as_json)
    if result.waiting is not None:
        wait = result.waiting
        if as_json:
            click.echo(printable(json.dumps(attrs.asdict(result), ensure_ascii=False)))
        # The question is the text run's product (stdout); beside --json's object it goes to stderr.
        click.echo(printable(f"waiting for the user (step {wait.step}, `{wait.state}`): {wait.question}"),
                   err=as_json)
        if wait.options:
            click.echo(printable("  answer one of: " + ", ".join(json.dumps(o, ensure_ascii=False)
                                                               for o in wait.options)), err=as_json)
        answer = resume_command(wait.run_id, report.journal)
        click.echo(printable(f"  to answer: {answer}"), err=as_json)
        return EXIT_WAITING
    if as_json:
        click.echo(printable(json.dumps(attrs.asdict(result), ensure_ascii=False)))
    else:
        click.echo(f"outcome: {result.outcome} (terminal `{result.terminal}`) after {result.steps} steps")
        for name, value in result.evidence.items():
            click.echo(printable(f"  {name} = {json.dumps(value, ensure_ascii=False)}"))
        if result.error:
            click.echo(printable(f"  error: {result.error}"))
        where = [f"run id: {result.run_id}"] if result.run_id else []  # baselines keep no journal: no run id
        where += [f"trace: {result.trace}"] if result.trace else []
        if where:
            click.echo("  " + "   ".join(where))
    return _OUTCOME_EXIT.get(result.outcome, EXIT_FAILED)


def trace_error(command: str, message: str, diagnostics: list[Diagnostic]) -> int:
    """An unreadable trace: its coded diagnostic on stderr (the message alone when it has none); exit 2."""
    from skillc.diagnostics.render import render

    if diagnostics:
        click.echo(render(diagnostics, "full", sys.stderr), err=True, color=True)
    else:
        click.echo(f"skillc {command}: {message}", err=True)
    return EXIT_USAGE


def replay(result: api.ReplayResult, path: str) -> int:
    """`skillc replay`: ok or FAILED with the first divergence; 1 on divergence."""
    if result.error is not None:
        return trace_error("replay", result.error, result.diagnostics)
    if result.report is None:
        return unchecked(result, path)
    click.echo(("ok: " if result.report.ok else "FAILED: ") + result.report.message)
    return EXIT_OK if result.report.ok else EXIT_ERRORS


def score(result: api.ScoreResult, path: str, as_json: bool) -> int:
    """`skillc score`: each trace's declared outcome, verified success and RFC with its verdicts, then a summary."""
    from skillc.bench.score import score_json, summary_json
    from skillc.diagnostics.files import printable

    if result.usage is not None:
        raise click.BadParameter(result.usage.message, param_hint=result.usage.param)
    if result.error is not None:
        return trace_error("score", result.error, result.diagnostics)
    if not result.scores:
        return unchecked(result, path, err=as_json)
    for ts in result.scores:
        click.echo(printable(json.dumps(score_json(ts), ensure_ascii=False) if as_json else _score_text(ts)))
    summary = summary_json(result.scores)
    click.echo(json.dumps(summary) if as_json else _score_summary(summary))
    return EXIT_OK


_MARKS = {"met": "ok", "violated": "VIOLATED", "unverifiable": "unverifiable", "not applicable": "n/a"}


def _score_text(ts: api.TraceScore) -> str:
    """One trace's score as lines: outcome declared, success, RFC and each requirement, the state rules."""
    sc = ts.score
    task = f", task {ts.task}" if ts.task else ""
    success = "unknown" if sc.success is None else "yes" if sc.success else "NO"
    rfc = "unknown" if sc.rfc is None else "compliant" if sc.rfc else "NOT compliant"
    lines = [f"{ts.trace}: {sc.mode}{task}, outcome declared: {sc.outcome}",
             f"  success: {success}" + (f" — {sc.success_reason}" if sc.success_reason else ""),
             f"  RFC: {rfc}" + (f" — {sc.compliance.reason}" if sc.compliance.reason else "")]
    for v in sc.compliance.verdicts:
        if v.status != "met":
            lines.append(f"    {_MARKS[v.status]} {v.id}" + (f' "{v.quote}"' if v.quote else "") + f": {v.reason}")
    if sc.state_rules:
        lines.append("  state rules (not counted in RFC):")
        lines += [f"    {_MARKS[v.status]} {v.id} \"{v.quote}\"" + (f": {v.reason}" if v.reason else "")
                  for v in sc.state_rules]
    return "\n".join(lines)


def _score_summary(summary: dict) -> str:
    """The summary line: task success and RFC over the known verdicts, with the unknowns counted."""
    def part(name: str, rate: object, counts: dict, yes: str, unknown: str) -> str:
        known = sum(v for k, v in counts.items() if k != "unknown")
        shown = f"{rate:.0%}" if isinstance(rate, float) else "unknown"
        extra = f", {counts['unknown']} {unknown}" if counts["unknown"] else ""
        return f"{name} {shown} ({counts[yes]}/{known}{extra})"

    success = part("task success", summary["task_success"], summary["success"], "passed", "unknown")
    rfc = part("RFC", summary["request_level_full_compliance"], summary["rfc"], "compliant", "unknown")
    return f"{_plural(summary['traces'], 'trace')}: {success}, {rfc}"


def explore(result: api.ExploreResult, path: str, coverage: str) -> int:
    """`skillc test`: coverage, what was not covered, each failure with its replay command."""
    report, machine = result.report, result.machine
    if report is None or machine is None:
        return unchecked(result, path)
    click.echo(f"{report.runs} runs: {len(report.states)}/{report.total_states} states "
               f"({report.coverage('states'):.0%}), {len(report.edges)}/{report.total_edges} transitions "
               f"({report.coverage('transitions'):.0%})")
    missing = sorted({(s.name, e.index) for s in machine.states.values() for e in s.edges} - report.edges)
    if missing and coverage == "transitions":
        click.echo("  not covered: " + ", ".join(f"{s}#{i + 1}" for s, i in missing[:12])
                   + (" …" if len(missing) > 12 else ""))
    if report.unfinished:
        click.echo(f"  {report.unfinished} run(s) stopped unfinished at the step budget of {report.budget:,} (the "
                   "counters allow longer runs; their bound is what `skillc check` proves)")
    for f in report.failures:
        click.echo(f"FAILED {f.prop}: {f.message}\n  replay: skillc replay {path} {f.trace}")
    return EXIT_ERRORS if report.failures else EXIT_OK


def dot_format(fmt: str | None, path: str | None) -> str:
    """The drawing's format: as asked, else from the output's extension, else dot (PNG needs a file)."""
    if fmt is None:
        suffix = Path(path).suffix.lstrip(".").lower() if path else ""
        fmt = {"svg": "svg", "png": "png", "mmd": "mermaid", "md": "mermaid"}.get(suffix, "dot")
    if fmt == "png" and path is None:
        raise click.UsageError("PNG output needs -o FILE")
    return fmt


def draw(result: api.DrawResult, path: str | None) -> int:
    """`skillc dot`: the drawing to stdout or `path`."""
    if result.error is not None:
        click.echo(f"skillc dot: {result.error}", err=True)
        return EXIT_USAGE
    if result.data is None:
        return failed(result.diagnostics, "full")
    # drawn with findings (SKM525, a trace of another machine): the drawing is written, the findings said, exit 1
    emit(result.diagnostics, "full", err=True)
    found = EXIT_ERRORS if result.diagnostics else EXIT_OK
    if path is None:
        sys.stdout.buffer.write(result.data)
        return found
    problem = write(path, result.data)
    if problem:
        click.echo(f"skillc dot: {problem}", err=True)
        return EXIT_USAGE
    return found


def build_summary(result: api.BuildResult, out: Path | None) -> str:
    """The line after a build: every state counted as `skillc show` counts them, the working ones apart."""
    m = result.machine
    states = m.states.values() if m else ()
    working = sum(s.kind in ("model", "judge", "tool") for s in states)
    rounds = f", {len(result.rounds)} draft round(s)" if result.rounds else ""
    return (f"built {'stdout' if out is None else out}: {len(states)} states ({working} model, judge or tool), "
            f"{len(m.rules) if m else 0} rules, coverage {100 * result.coverage:.1f}% of {len(result.rows)} "
            f"clauses{rounds}")


def build(outcome: api.BuildOutcome, fmt: str, report: bool, quiet: bool) -> int:
    """`skillc build`: diagnostics, the clause table, then the machine written (or why nothing was)."""
    from skillc.frontends.markdown.report import table

    result, out = outcome.result, outcome.output
    emit(outcome.diagnostics, fmt, err=out is None and outcome.text is not None)  # stdout: the machine
    if outcome.usage or result is None:
        return exit_code(outcome.diagnostics) if outcome.usage else EXIT_INTERNAL
    summary = fmt in SUMMARY_FORMATS and not quiet
    if report and (result.rows or result.rounds):
        click.echo(build_compiler(outcome), err=out is None or fmt in MACHINE_FORMATS)
    if report and result.rows:
        click.echo(table(result.rows, rules=result.rules), err=out is None or fmt in MACHINE_FORMATS)
    if report and result.rounds:
        from skillc.frontends.markdown.llm import rounds_report

        click.echo(rounds_report(result.rounds), err=out is None or fmt in MACHINE_FORMATS)
    if outcome.text is None:
        if summary:
            click.echo(f"build failed: nothing written{'' if out is None else f' to {out}'}", err=True)
            if outcome.model is None and not report:  # with --report, its first line said so
                click.echo(offline_line(), err=True)
        return exit_code(outcome.diagnostics) or EXIT_ERRORS
    if out is None:
        click.echo(outcome.text, nl=False)
    elif problem := write(out, outcome.text):
        emit([make(codes.IO_ERROR, problem)], fmt)
        return EXIT_USAGE
    if summary:
        click.echo(build_summary(result, out), err=True)
        if outcome.model is None and not report:  # with --report, its first line said so
            click.echo(offline_line(), err=True)
    return EXIT_OK


def offline_line() -> str:
    from skillc.frontends.markdown.frontdoor import OFFLINE_LINE

    return OFFLINE_LINE


def build_compiler(outcome: api.BuildOutcome) -> str:
    """The report's first line: which compiler built the machine, and why."""
    if outcome.model is None:
        return offline_line() if outcome.model_origin == "" else f"offline draft: {outcome.model_origin} says offline"
    return f"LLM compiler: {outcome.model} (from {outcome.model_origin})"


def distill(outcome: api.DistillOutcome, path: str | None, report: bool, fmt: str) -> int:
    """`skillc distill`: diagnostics (or the JSON report), the report table, then the library written."""
    from skillc.frontends.distill.library import write_library
    from skillc.frontends.distill.report import as_json, table

    built = outcome.built
    if built is None:
        emit(outcome.diagnostics, fmt)
        return exit_code(outcome.diagnostics)
    if report and fmt == "json":  # one JSON document: the report with its diagnostics
        click.echo(json.dumps(as_json(built.distilled, built.clusters, built.evaluation, built.dropped,
                                      outcome.diagnostics), ensure_ascii=False))
    else:
        emit(outcome.diagnostics, fmt)
    if report and built.distilled.programs and fmt != "json":  # with SARIF on stdout: beside it, on stderr
        click.echo(table(built.distilled, built.clusters, built.evaluation, built.dropped), err=fmt == "sarif")
    if not built.ok or not built.clusters:
        if path and fmt in SUMMARY_FORMATS:
            click.echo(f"distill failed: nothing written to {path}", err=True)
        return exit_code(built.diagnostics) or EXIT_ERRORS
    if path:
        try:
            write_library(built.files, path)
        except OSError as exc:
            emit([make(codes.IO_ERROR, f"cannot write {path}: {exc.strerror or exc}")], fmt)
            return EXIT_USAGE
        if fmt in SUMMARY_FORMATS:
            click.echo(f"wrote {path}: {len(built.clusters)} skill(s) from {len(built.distilled.programs)} "
                       f"training traces", err=True)
    return EXIT_OK


def refine(result: api.RefineResult, as_json: bool) -> int:
    """`skillc refine`: per trace accepted / realigned / dropped with its edits, diff and replays; 4 if one dropped."""
    from skillc.improve.refine.report import render

    if result.interrupted and result.archive is None:  # stopped before it had an archive: nothing to show
        emit(result.diagnostics, "json" if as_json else "full")
        return EXIT_INTERRUPTED
    if not result.summaries and not result.ok:
        return failed(result.diagnostics, "json" if as_json else "full")
    if as_json:  # stdout is JSON only: the import's warnings go into the summary line
        for s in result.summaries:
            click.echo(json.dumps(s.to_json(), ensure_ascii=False))
        found = [{"code": str(d.code), "severity": d.severity.name.lower(), "message": d.message}
                 for d in _worded(result.diagnostics)]
        click.echo(json.dumps({"traces": len(result.summaries), "dropped": result.dropped, "written": result.written,
                               "archive": result.archive, "dry_run": result.dry_run,
                               "interrupted": result.interrupted, "diagnostics": found}, ensure_ascii=False))
    else:
        emit(result.diagnostics, "full")
        click.echo(render(result.summaries))
        where = "dry run: nothing written" if result.dry_run else f"wrote {result.written}" if result.written \
            else "nothing accepted: nothing written"
        click.echo(f"{where} (archive {result.archive})", err=True)
    if result.interrupted:
        return exit_code(result.diagnostics) or EXIT_INTERRUPTED
    return exit_code(result.diagnostics) or (EXIT_PARTIAL if result.dropped else EXIT_OK)


def collect(result: api.CollectResult, path: str) -> int:
    """`skillc collect`: the traces written, and what they are."""
    if result.text is None:
        return failed(result.diagnostics, "full")
    emit(result.diagnostics, "full", err=True)  # the games left out, each with its reason
    if output(result.text, path) != EXIT_OK:
        return EXIT_USAGE
    click.echo(f"wrote {path}: {result.summary}", err=True)
    return EXIT_OK


def imported(result: api.ImportResult, path: str | None, fmt: str, inputs: Sequence[str | Path] = ()) -> int:
    """`skillc import`: the findings (no notes), then the `.skm` (only when the translation is whole), never
    over one of `inputs` (the definition or module read)."""
    if result.text is None:
        return failed([d for d in result.diagnostics if d.severity is not Severity.NOTE], fmt)
    # stdout carries the .skm unless -o: the findings go beside it then
    emit([d for d in result.diagnostics if d.severity is not Severity.NOTE], fmt, err=path is None or path == "-")
    # written: the translation is whole; its findings still set the status
    return output(result.text, path, fmt, inputs) or exit_code(result.diagnostics)


def conform(result: api.ConformResult, path: str, fmt: str, verbose: bool) -> int:
    """`skillc conform`: each transcript's verdict (text), one JSON document, or a SARIF log of the violations;
    0 none broken, 1 a rule broken (or the machine does not check), 2 a transcript unreadable or in no known
    format, 3 internal error. stdout carries the report only; import problems and the summary go to stderr."""
    from skillc.conform.report import render_text, summary, to_document
    from skillc.diagnostics.render import to_json

    report = result.report
    if report is None:
        if fmt == "json":
            found = [to_json(d) for d in sorted(_worded(result.diagnostics), key=Diagnostic.sort_key)]
            click.echo(json.dumps({"machine": None, "transcripts": [], "diagnostics": found}, ensure_ascii=False))
        elif fmt == "sarif":
            emit(result.diagnostics, "sarif")
        else:
            emit(result.diagnostics, "full")
        if result.unchecked:
            click.echo(f"skillc: {path} does not pass `skillc check`; only checked machines are conformed to", err=True)
        return exit_code(result.diagnostics) or EXIT_ERRORS
    problems = list(report.problems)
    if fmt == "json":
        click.echo(json.dumps(to_document(report), ensure_ascii=False))
    elif fmt == "sarif":
        findings = [d for d in report.findings if verbose or d.severity is not Severity.NOTE]
        emit(problems + findings, "sarif")
    else:
        emit(problems, "full", err=True)
        click.echo(render_text(report, verbose), nl=False)
    click.echo(summary(report), err=True)
    code = exit_code(problems)
    if code in (EXIT_INTERNAL, EXIT_USAGE):
        return code
    return EXIT_USAGE if code == EXIT_ERRORS else (EXIT_ERRORS if report.broken else EXIT_OK)


def exported(result: api.ExportResult, path: str | None) -> int:
    """`skillc export`: the module (to `-o PATH`, else stdout) and its warnings on stderr; nothing when the machine
    cannot be exported (its problems, exit 1 or 2)."""
    if result.text is None:
        return failed([d for d in result.diagnostics if d.severity is not Severity.NOTE], "full")
    emit([d for d in result.diagnostics if d.severity is not Severity.NOTE], "full", err=True)
    code = output(result.text, path)
    if code == EXIT_OK and path not in (None, "-"):
        click.echo(f"wrote {path}", err=True)
    return code


def run_otel(report: api.RunReport, as_json: bool) -> int:
    """`skillc run --otel`: a warning about the spans (on stderr) when they could not be sent, then `run`'s output
    and exit status, which the spans never change."""
    if report.result is not None and report.diagnostics:
        emit(report.diagnostics, "full", err=True)
    return run(report, as_json)


@contextlib.contextmanager
def bench_progress(total: int, done: int) -> Iterator[Callable[[object], None]]:
    """The bench's progress bar with ETA on stderr (tqdm), only on a terminal; yields its per-row callback."""
    from tqdm import tqdm

    with tqdm(total=total, initial=done, desc="cells", unit="cell", file=sys.stderr, disable=None,
              leave=False, smoothing=0.1) as bar:
        yield lambda row: bar.update(1)


def bench(result: api.BenchResult, as_json: bool) -> int:
    """`skillc bench`: success and RFC per mode × executor, the paired comparisons, where the files are."""
    from skillc.diagnostics.files import printable
    from skillc.diagnostics.render import render

    outcome = result.outcome
    shown = sorted((d for d in _worded(result.diagnostics) if d.severity is not Severity.NOTE),
                   key=Diagnostic.sort_key)
    if shown:  # on stderr: stdout is the summary (or its JSON)
        click.echo(render(shown, "full", sys.stderr), err=True, color=True)
    if outcome is None or any(d.code == codes.INTERNAL_ERROR for d in shown):
        return EXIT_INTERNAL
    if outcome.usage or outcome.unchecked:
        return EXIT_ERRORS if outcome.unchecked else EXIT_USAGE
    if outcome.interrupted and outcome.out is None:  # stopped before or after the cells: nothing to summarise
        return EXIT_INTERRUPTED
    if as_json:
        click.echo(printable(json.dumps(_bench_json(outcome), ensure_ascii=False)))
    else:
        for line in _bench_lines(outcome):
            click.echo(printable(line))
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    if outcome.incomplete:
        return EXIT_PARTIAL
    return EXIT_USAGE if outcome.report is None and not outcome.dry_run else EXIT_OK  # rows written, no report


def _bench_lines(outcome: object) -> list[str]:
    """The summary of a bench as lines of text."""
    from skillc.bench.report import summary_table
    from skillc.bench.runner import BenchOutcome

    assert isinstance(outcome, BenchOutcome)
    if outcome.dry_run:
        from skillc.bench.runner import dry_run_lines

        return dry_run_lines(outcome)
    lines = [f"bench {outcome.suite}: {outcome.cells} cells, {outcome.ran} run now, {outcome.resumed} done before"]
    if outcome.report is not None:
        head, body = summary_table(outcome.report)
        success, rfc = head.index("success"), head.index("RFC")  # each followed by its interval
        keep = [head.index("mode"), head.index("executor"), success, success + 1, rfc, rfc + 1,
                head.index("mean total tokens"), head.index("errors")]
        lines += _text_table([head[i] for i in keep], [[row[i] for i in keep] for row in body])
        for c in outcome.report.comparisons:  # the full comparison table is in the report
            lines.append(f"{c.first} vs {c.second} ({c.executor}): {c.pairs} pairs, only {c.first} succeeded "
                         f"{c.mcnemar.b}, only {c.second} {c.mcnemar.c}; McNemar exact p = {c.mcnemar.p:.3g}")
    lines += [f"results: {outcome.results}"] + [f"report: {p}" for p in outcome.reports]
    return lines


def _text_table(head: list[str], body: list[list[str]]) -> list[str]:
    """Left-aligned columns separated by two spaces."""
    widths = [max(len(r[i]) for r in [head, *body]) for i in range(len(head))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in [head, *body]]


def _bench_json(outcome: object) -> dict[str, object]:
    """The summary of a bench as one JSON object: counts, paths, the report's groups and comparisons."""
    from skillc.bench.runner import BenchOutcome

    assert isinstance(outcome, BenchOutcome)
    report = outcome.report
    if outcome.dry_run:
        from skillc.bench.runner import dry_run_json

        return dry_run_json(outcome)
    return {"suite": outcome.suite, "cells": outcome.cells, "ran": outcome.ran, "resumed": outcome.resumed,
            "incomplete": outcome.incomplete, "interrupted": outcome.interrupted, "results": str(outcome.results),
            "reports": [str(p) for p in outcome.reports],
            "groups": [] if report is None else [_finite(attrs.asdict(s)) for s in report.summaries],
            "comparisons": [] if report is None else [_finite(attrs.asdict(c)) for c in report.comparisons]}


def _finite(value: object) -> object:
    """`value` with NaN (an empty group's mean, an undefined interval) as null: JSON has no NaN."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def evolve(result: api.EvolveResult, as_json: bool) -> int:
    """`skillc evolve`: the trajectory summary and the files; 0 rewarded, 4 not, 1 unchecked, 2 usage, 3 internal,
    130 interrupted (the files of what it found are written)."""
    from skillc.diagnostics.files import printable
    from skillc.diagnostics.render import render
    from skillc.improve.evolve.command import summary, summary_lines

    shown = sorted((d for d in _worded(result.diagnostics) if d.severity is not Severity.NOTE),
                   key=Diagnostic.sort_key)
    if shown:  # on stderr: stdout is the summary (or its JSON)
        click.echo(render(shown, "full", sys.stderr), err=True, color=True)
    if any(d.code == codes.INTERNAL_ERROR for d in shown):
        return EXIT_INTERNAL
    if result.evolution is None or result.folder is None:
        return EXIT_ERRORS if result.unchecked else EXIT_USAGE
    found = summary(result)
    if as_json:
        click.echo(printable(json.dumps(found, ensure_ascii=False)))
    else:
        for line in summary_lines(found):
            click.echo(printable(line))
    if result.evolution.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if result.evolution.success else EXIT_PARTIAL


def lsp() -> int:
    """`skillc lsp`: serve over stdio until the client leaves."""
    try:
        from skillc.lsp.server import main as serve
    except ImportError as exc:
        click.echo(f"skillc lsp: the language server needs pygls 2 (pip install 'skillc[lsp]'): {exc}", err=True)
        return EXIT_USAGE
    closed = [name for name, stream in (("standard input", sys.stdin), ("standard output", sys.stdout))
              if stream is None]
    if closed:  # started with fd 0 or 1 closed (a service manager, a CI step): there is no client to talk to
        click.echo(f"skillc lsp: the language server talks over stdin and stdout, and its {closed[0]} is closed "
                   "(start it from an editor, or with a pipe)", err=True)
        return EXIT_USAGE
    serve()
    return EXIT_OK


def serve(result: api.ServeResult) -> int:
    """`skillc serve`: nothing on stdout (in stdio mode it is the protocol's); why nothing was served, or how
    serving stopped, on stderr. 0 the client left, 1 a machine does not check (or two clash), 2 usage (the mcp
    extra missing included), 130/143 stopped by a signal."""
    if result.usage is not None:
        if result.usage_param is None:
            raise click.UsageError(result.usage)
        raise click.BadParameter(result.usage, param_hint=result.usage_param)
    if result.interrupted:
        click.echo(f"skillc serve: {stop_word()}; every run still going was stopped (interrupted in the journal)",
                   err=True)
        return stopped_by()
    if result.diagnostics:
        emit(result.diagnostics, "full", err=True)
        from skillc.serve.codes import MCP_UNAVAILABLE

        found = {d.code for d in result.diagnostics}
        return EXIT_USAGE if found & {MCP_UNAVAILABLE, codes.IO_ERROR} else exit_code(result.diagnostics)
    return EXIT_OK
