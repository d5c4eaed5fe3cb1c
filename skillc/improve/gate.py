"""The one HEXIS gate: a candidate machine passes iff it checks and replays the accepted traces.

`gate(text, path, entries, subject=…)` runs the candidate through `skillc check` (skillc.check.source), then
replays (replay.py) its own trace first when it has one (`own`: refine's current trace), then the accepted
entries — all of them, or the ones `select` says the edit from `old` can affect (`incremental(archive)`: the
archive's index, index.py, over the replay view of diff.py's `MachineDiff`). The first failure refuses, with a
coded diagnostic: the check's first error (SKM821) or a trace that no longer replays, with the event where it
diverged (SKM822); the `Refusal` keeps the error, trace and replay verdict it is about, so each loop can say it
in its own words (refine's report, evolve's tree). An `unchanged` candidate is `old`, checked when it was
accepted: nothing is checked or replayed. Nothing here writes a file.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from skillc.check.source import check_source
from skillc.diagnostics import Diagnostic, Severity, make
from skillc.improve import codes
from skillc.improve.archive import Archive
from skillc.improve.diff import diff_machines
from skillc.improve.events import Alignment, DevTrace
from skillc.improve.index import affected, index_archive
from skillc.improve.replay import ReplayVerdict, replay_trace
from skillc.ir.machine import Machine

#: An accepted trace: the trace and the alignment it was accepted with.
Entry = tuple[DevTrace, Alignment]
#: Which entries (indices) an edit from the first machine to the second can affect; None: all.
Select = Callable[[Machine, Machine, Sequence[Entry]], Sequence[int]]


@attrs.frozen
class Refusal:
    """Why the gate refused a candidate: the coded diagnostic, and the error or the trace it is about."""

    diagnostic: Diagnostic  # SKM821 or SKM822
    error: Diagnostic | None = None  # SKM821: the check's first error (None: the candidate did not build)
    trace: DevTrace | None = None  # SKM822: the trace that no longer replays
    verdict: ReplayVerdict | None = None  # SKM822: its replay


@attrs.frozen
class Passage:
    """What the gate made of a candidate: its checked machine, the replays it ran, and the refusal, if any."""

    machine: Machine | None
    replays: tuple[tuple[str, ReplayVerdict], ...] = ()  # (trace id, verdict), the candidate's own trace first
    refusal: Refusal | None = None
    skipped: int = 0  # accepted traces the edit could not affect, so not replayed (0 when refused)

    @property
    def ok(self) -> bool:
        """The candidate checks and replays everything it was asked to."""
        return self.refusal is None and self.machine is not None

    @property
    def failure(self) -> Diagnostic | None:
        """The refusal's diagnostic (None when the candidate passed)."""
        return self.refusal.diagnostic if self.refusal is not None else None


def first_error(diagnostics: Sequence[Diagnostic]) -> Diagnostic | None:
    """The first error of a check (warnings do not stop a candidate)."""
    return next((d for d in diagnostics if d.severity is Severity.ERROR), None)


def check_candidate(text: str, path: str, subject: str, skill: str | None = None) \
        -> tuple[Machine | None, Refusal | None]:
    """The candidate's checked machine, or SKM821 with the first error (`subject` names the candidate)."""
    result = check_source(text, path=path, skill=skill)
    error = first_error(result.diagnostics)
    if error is None and result.machine is not None:
        return result.machine, None
    witness = f"{error.code} {error.message}" if error else "the candidate could not be built"
    return None, Refusal(make(codes.CANDIDATE_FAILS_CHECK, f"{subject} does not check: {witness}",
                              error.span if error else None, witness=[witness, *(error.witness if error else ())]),
                         error=error)


def replay_entries(new: Machine, entries: Sequence[Entry], subject: str, own: DevTrace | None = None) \
        -> tuple[tuple[tuple[str, ReplayVerdict], ...], Refusal | None]:
    """Replay the entries in order, up to the first that fails (SKM822 with its divergence); `own` is the
    candidate's own trace (it reads "the trace itself")."""
    done: list[tuple[str, ReplayVerdict]] = []
    for t, a in entries:
        verdict = replay_trace(new, t, a)
        done.append((t.id, verdict))
        if not verdict.ok:
            which = "the trace itself" if t is own else f"accepted trace {t.id[:12]} ({t.source or 'archive'})"
            diagnostic = make(codes.CANDIDATE_BREAKS_REPLAY, f"{subject} does not replay {which}: {verdict.reason}",
                              witness=[f"event {verdict.diverged_at}: {verdict.reason}",
                                       "path: " + " -> ".join(verdict.states)])
            return tuple(done), Refusal(diagnostic, trace=t, verdict=verdict)
    return tuple(done), None


def gate(text: str, path: str, entries: Sequence[Entry], *, subject: str, old: Machine | None = None,
         select: Select | None = None, skill: str | None = None, own: Entry | None = None,
         unchanged: bool = False) -> Passage:
    """Check, then replay `own` and the entries `select` chooses (all when None or without `old`)."""
    new, refusal = (old, None) if unchanged and old is not None else check_candidate(text, path, subject, skill)
    if new is None:
        return Passage(None, refusal=refusal)
    chosen = list(range(len(entries))) if select is None or old is None else sorted(set(select(old, new, entries)))
    done, refusal = replay_entries(new, [*([own] if own else []), *(entries[i] for i in chosen)], subject,
                                   own[0] if own else None)
    return Passage(new, done, refusal, 0 if refusal else len(entries) - len(chosen))


def incremental(archive: Archive) -> Select:
    """Incremental replay: the archived entries whose last replay path touches what the edit changed (index.py);
    an entry the index does not know is always replayed."""
    index = index_archive(archive)

    def select(old: Machine, new: Machine, entries: Sequence[Entry]) -> list[int]:
        """Indices of the entries to replay."""
        hit = affected(index, diff_machines(old, new))
        return [i for i, (trace, _) in enumerate(entries) if trace.id in hit or trace.id not in index.traces]

    return select
