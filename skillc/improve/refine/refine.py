"""The refine pipeline (`skillc refine MACHINE TRACES…`): import, then per trace align → edit → accept → commit.

Traces are taken in the order given (files, then the traces inside each). Each accepted candidate is committed
at once with the archive (archive.py: the machine file and the archive move together, atomically), so the next
trace is aligned to the machine as refined so far and must keep every trace accepted before it. A trace already
in the archive is not refined again. `dry_run` writes nothing: the archive is read when it exists and
acceptances are kept in memory. Refusals before any edit — a machine that does not check, a trace file with
errors, a damaged archive, an archive another refine holds (SKM540: the archive is leased for the whole refine),
an output that names a trace (SKM541) or is no regular file (SKM542) — write nothing either. Traces are redacted
as they are loaded. An interrupt (SIGINT) stops the loop between traces; a commit under way is finished first, so
the machine file, the archive and the result agree (SKM810).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs

from skillc.check.source import check_source
from skillc.diagnostics import Diagnostic, Severity, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.diagnostics.files import FileProblem, open_input, output_target, refuse_inputs
from skillc.improve import codes
from skillc.improve.archive import Archive, ArchivedTrace, ArchiveError, commit, default_folder, open_archive
from skillc.improve.events import DevTrace
from skillc.improve.gate import Entry, incremental
from skillc.improve.refine.accept import Verdict, accept
from skillc.improve.refine.align import Judge, model_judge
from skillc.improve.refine.report import TraceSummary, skm_diff, summarize
from skillc.improve.refine.traces import cleaned, load_traces
from skillc.improve.spelling import normalize
from skillc.ir.machine import Machine
from skillc.runtime.executors import ExecutorError, make_executor
from skillc.runtime.executors.scripted import ScriptError
from skillc.runtime.journal import JournalError, Lease, LeaseError
from skillc.runtime.trace import env_redactor


@attrs.frozen
class RefineOptions:
    """What `skillc refine` was asked to do."""

    machine: str
    traces: tuple[str, ...]
    output: str | None = None  # write the refined machine here instead of over MACHINE
    archive: str | None = None  # the archive folder (default: beside the machine written)
    model: str | None = None  # an executor spec: a model judges ambiguous alignments
    base_url: str | None = None
    dry_run: bool = False
    full_replay: bool = False  # replay every archived trace, not only those the edit can affect (index.py)


@attrs.define
class RefineResult(HasDiagnostics):
    """Per trace what happened, the machine text before and after, and where things were written."""

    summaries: list[TraceSummary]
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    before: str | None = None
    after: str | None = None
    written: str | None = None  # the machine file written (None: dry run, or nothing accepted)
    archive: str | None = None  # the archive folder used
    dry_run: bool = False
    interrupted: bool = False  # an interrupt (SIGINT) stopped it between traces (SKM810)

    @property
    def dropped(self) -> int:
        """How many traces were dropped."""
        return sum(s.status == "dropped" for s in self.summaries)

    @property
    def diff(self) -> str:
        """The whole refinement as one `.skm` diff."""
        return skm_diff(self.before or "", self.after or "", Path(self.written or "machine.skm").name) \
            if self.before is not None and self.after is not None else ""


def load_all(paths: Sequence[str]) -> tuple[list[DevTrace], list[Diagnostic]]:
    """Every trace of every file, secrets redacted (what the archive, the machine and the report are made of),
    with the import's diagnostics."""
    redact = env_redactor()
    traces: list[DevTrace] = []
    found: list[Diagnostic] = []
    for p in paths:
        got, problems = load_traces(p)
        traces += [cleaned(t, redact) for t in got]
        found += problems
    return traces, found


def _output(path: Path, options: RefineOptions) -> tuple[Path | None, list[Diagnostic]]:
    """Where the refined machine is written: a regular file (it is read back), never one of the trace files, never
    through a link out of its folder (a link inside it is followed, and stays a link)."""
    target = Path(options.output) if options.output else path
    try:
        refuse_inputs(target, options.traces)
        real, _ = output_target(target, regular=True)
    except FileProblem as exc:
        return None, [exc.diagnostic()]
    return (real if target.is_symlink() else target), []


def _lease(folder: Path, options: RefineOptions) -> tuple[Lease | None, list[Diagnostic]]:
    """The archive's lease (one refine at a time, as a run has one process); none for a dry run, which writes
    nothing."""
    if options.dry_run:
        return None, []
    busy = (f"archive {folder} is being refined by {{holder}}; an archive is refined by one process at a time "
            "(wait for it to end, or give another --archive)")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        return Lease(folder / "lease", str(folder), busy).acquire(), []
    except LeaseError as exc:
        return None, [make(diagnostics_codes.ARCHIVE_LEASED, str(exc))]
    except (OSError, JournalError) as exc:
        return None, [make(codes.DAMAGED_ARCHIVE, f"archive {folder}: cannot lease it "
                           f"({getattr(exc, 'strerror', None) or exc})")]


def _judge(options: RefineOptions) -> tuple[Judge | None, list[Diagnostic]]:
    """The model judge for ambiguous alignments, when `--model` names one."""
    if options.model is None:
        return None, []
    try:
        return model_judge(make_executor(options.model, base_url=options.base_url)), []
    except (ExecutorError, ScriptError, ValueError) as exc:
        return None, [make(diagnostics_codes.IO_ERROR, f"--model {options.model}: {exc}")]


def _archive(target: Path, options: RefineOptions) -> tuple[Archive | None, list[Diagnostic]]:
    """The archive to refine against; a dry run does not create one that does not exist."""
    folder = Path(options.archive) if options.archive else default_folder(target)
    if options.dry_run and not folder.exists():
        return Archive(folder, None), []
    return open_archive(target, folder)


def refine(options: RefineOptions) -> RefineResult:
    """Refine a machine from development traces (see the module docstring)."""
    try:
        return _refine(options)
    except KeyboardInterrupt:  # before the per-trace loop (which handles its own): no trace was taken
        return RefineResult([], [make(codes.REFINE_INTERRUPTED, "interrupted before any trace was taken")],
                            interrupted=True)


def _refine(options: RefineOptions) -> RefineResult:
    """`refine` without the interrupt before its loop."""
    path = Path(options.machine)
    checked = check_source(path)
    errors = [d for d in checked.diagnostics if d.severity is Severity.ERROR]
    if errors or checked.machine is None:
        return RefineResult([], errors or checked.diagnostics)
    traces, found = load_all(options.traces)
    traces = [normalize(checked.machine, t)[0] for t in traces]  # in the machine's spelling: `Bash`, `shell` → bash
    judge, problems = _judge(options)
    found += problems
    if any(d.severity is Severity.ERROR for d in found):
        return RefineResult([], found)
    target, refused = _output(path, options)
    if target is None:
        return RefineResult([], found + refused)
    lease, refused = _lease(Path(options.archive) if options.archive else default_folder(target), options)
    if refused:
        return RefineResult([], found + refused)
    try:
        return _leased(options, path, target, checked.machine, traces, found, judge)
    finally:
        if lease is not None:
            lease.release()


def _leased(options: RefineOptions, path: Path, target: Path, machine: Machine, traces: list[DevTrace],
            found: list[Diagnostic], judge: Judge | None) -> RefineResult:
    """Open the archive and refine, under the archive's lease."""
    archive, opened = _archive(target, options)
    found += opened
    if archive is None:
        return RefineResult([], found)
    before = checked_text(path)
    result = RefineResult([], found, before, before, None, str(archive.folder), options.dry_run)
    try:
        _run(result, machine, traces, archive, target, options, judge)
    except ArchiveError as exc:
        result.diagnostics.append(exc.diagnostic)
    except KeyboardInterrupt:  # between traces, or in one being refined: every commit made is whole (_whole)
        result.interrupted = True
        result.diagnostics.append(make(codes.REFINE_INTERRUPTED, f"interrupted after {len(result.summaries)} of "
                                       f"{len(traces)} traces; the machine and the archive hold the ones accepted"))
    return result


def checked_text(path: Path) -> str:
    """The text of the machine `check_source` just read (bounded; bytes that are not UTF-8 were refused there)."""
    return open_input(path).decode("utf-8", errors="replace")


def _run(result: RefineResult, machine: Machine, traces: Sequence[DevTrace], archive: Archive, target: Path,
         options: RefineOptions, judge: Judge | None) -> None:
    """The per-trace loop: accept, commit (unless a dry run), move on with the refined machine."""
    result.after = text = result.before or ""
    for trace in traces:
        if trace.id in archive.entries:
            result.summaries.append(TraceSummary(trace.id, trace.source, "known", (), (), "", ()))
            continue
        entries: list[Entry] = [(e.trace, e.alignment) for e in archive.entries.values()]
        # A stale archive (the machine was edited by hand) is replayed in full: its paths are another machine's.
        select = None if archive.stale or options.full_replay else incremental(archive)
        verdict = accept(text, str(target), machine, trace, entries, judge=judge, select=select)
        summary = summarize(verdict, text, target.name)
        tried = verdict.final.candidate
        notes = [make(codes.GUARD_NOT_SEPARABLE, f"trace {trace.id[:12]} ({trace.source}): {p}")
                 for p in (tried.problems if tried is not None else ())]
        if verdict.status == "dropped" or verdict.text is None or verdict.final.machine is None:
            result.summaries.append(summary)
            result.diagnostics += notes
            continue
        added = _added(verdict, archive)
        with _whole():  # an interrupt waits for the commit and this bookkeeping, so the result matches the files
            result.summaries.append(summary)
            result.diagnostics += notes
            if options.dry_run:
                archive = attrs.evolve(archive, entries={**archive.entries, **{a.id: a for a in added}}, stale=False)
            else:
                archive = commit(target, verdict.text, archive, added)
                result.written = str(target)
            text, machine = verdict.text, verdict.final.machine
            result.after = text


@contextlib.contextmanager
def _whole() -> Iterator[None]:
    """Hold SIGINT and SIGTERM back while the block runs (on the main thread), then deliver the first: SIGINT as
    KeyboardInterrupt, SIGTERM to the handler that was there before (the command line's, or the default exit)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda number, frame: caught.append(number)) for s in held}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler if handler is not None else
                          signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)
    if caught and caught[0] == signal.SIGINT:
        raise KeyboardInterrupt
    if caught:  # SIGTERM: its handler runs (the command line's raises) before raise_signal returns
        signal.raise_signal(caught[0])


def _added(verdict: Verdict, archive: Archive) -> list[ArchivedTrace]:
    """The accepted trace, and every archived trace whose replay path changed, with their new paths."""
    replays = dict(verdict.final.replays)
    out = [ArchivedTrace(verdict.trace, verdict.final.aligned.alignment, replays[verdict.trace.id].path)]
    for tid, v in replays.items():
        old = archive.entries.get(tid)
        if old is not None and old.path != v.path:
            out.append(attrs.evolve(old, path=v.path))
    return out
