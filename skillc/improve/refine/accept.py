"""Acceptance: a candidate edit lands iff it checks and replays the current trace and every accepted one.

For one trace: align it (align.py), edit a copy of the machine (edit.py), run the candidate through
`skillc check` (skillc.check.source) and then replay (replay.py) — the current trace first, then the archived
accepted traces (all of them, or the ones `select` says the edit can affect: index.py's incremental replay).
The first failure is the witness: an alignment that bypasses a rule (SKM820), a check error (SKM821) or a
trace that no longer replays, with the event where it diverged (SKM822). A failed candidate realigns once,
over states reachable from where the trace is; a second failure drops the trace with that reason.
Nothing here writes a file: the caller commits an accepted candidate (archive.py, atomically).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from skillc.check.source import check_source
from skillc.diagnostics import Diagnostic, Severity, make
from skillc.improve.refine import codes
from skillc.improve.refine.align import Aligned, Judge, align
from skillc.improve.refine.edit import Candidate, propose
from skillc.improve.refine.events import Alignment, DevTrace
from skillc.improve.refine.replay import ReplayVerdict, replay_trace
from skillc.ir.machine import Machine
from skillc.syntax.parser import parse

Status = Literal["accepted", "realigned", "dropped"]
#: An archived accepted trace: the trace and the alignment it was accepted with.
Entry = tuple[DevTrace, Alignment]
#: Which archived entries (indices) an edit from the first machine to the second can affect; None: all.
Select = Callable[[Machine, Machine, Sequence[Entry]], Sequence[int]]


@attrs.frozen
class Attempt:
    """One try at a trace: the alignment, the candidate (when one was made), the replays and why it failed."""

    aligned: Aligned
    candidate: Candidate | None = None
    machine: Machine | None = None  # the checked candidate
    replays: tuple[tuple[str, ReplayVerdict], ...] = ()  # (trace id, verdict), the current trace first
    failure: Diagnostic | None = None

    @property
    def ok(self) -> bool:
        """The candidate checks and replays everything it was asked to."""
        return self.failure is None and self.machine is not None


@attrs.frozen
class Verdict:
    """What became of one trace: accepted (maybe after realigning) or dropped, with every attempt."""

    trace: DevTrace
    status: Status
    attempts: tuple[Attempt, ...]
    skipped: int = 0  # archived traces the edit could not affect, so not replayed

    @property
    def final(self) -> Attempt:
        """The attempt that decided."""
        return self.attempts[-1]

    @property
    def reason(self) -> Diagnostic | None:
        """Why the trace was dropped (None when accepted)."""
        return self.final.failure if self.status == "dropped" else None

    @property
    def text(self) -> str | None:
        """The accepted machine text (None when dropped)."""
        return self.final.candidate.text if self.status != "dropped" and self.final.candidate else None


def _first_error(diagnostics: Sequence[Diagnostic]) -> Diagnostic | None:
    """The first error of a check (warnings do not stop a candidate)."""
    return next((d for d in diagnostics if d.severity is Severity.ERROR), None)


def checked(candidate: Candidate, path: str, machine: Machine, trace: DevTrace,
            skill: str | None = None) -> tuple[Machine | None, Diagnostic | None]:
    """The candidate's checked machine, or SKM821 with the first error; an unedited candidate is `machine`."""
    if not candidate.changes:  # the machine as it is, checked when it was accepted
        return machine, None
    result = check_source(candidate.text, path=path, skill=skill)
    error = _first_error(result.diagnostics)
    if error is None and result.machine is not None:
        return result.machine, None
    witness = f"{error.code} {error.message}" if error else "the candidate could not be built"
    return None, make(codes.CANDIDATE_FAILS_CHECK, f"the machine edited for trace {trace.id[:12]} does not check: "
                      f"{witness}", error.span if error else None,
                      witness=[witness, *(error.witness if error else ())])


def replays(new: Machine, trace: DevTrace, alignment: Alignment, others: Sequence[Entry]) \
        -> tuple[tuple[tuple[str, ReplayVerdict], ...], Diagnostic | None]:
    """Replay the trace, then the others, up to the first that fails (SKM822 with its divergence)."""
    done: list[tuple[str, ReplayVerdict]] = []
    for t, a in [(trace, alignment), *others]:
        verdict = replay_trace(new, t, a)
        done.append((t.id, verdict))
        if not verdict.ok:
            which = "the trace itself" if t is trace else f"accepted trace {t.id[:12]} ({t.source or 'archive'})"
            return tuple(done), make(
                codes.CANDIDATE_BREAKS_REPLAY, f"the machine edited for trace {trace.id[:12]} does not replay "
                f"{which}: {verdict.reason}", witness=[f"event {verdict.diverged_at}: {verdict.reason}",
                                                       "path: " + " -> ".join(verdict.states)])
    return tuple(done), None


def attempt(text: str, path: str, machine: Machine, trace: DevTrace, archive: Sequence[Entry], *,
            judge: Judge | None = None, only_reachable: bool = False, select: Select | None = None,
            skill: str | None = None, aligned: Aligned | None = None) -> tuple[Attempt, int]:
    """Align (unless `aligned` is given), edit, check and replay once; the attempt and the archived traces skipped."""
    if aligned is None:
        aligned = align(machine, trace, judge=judge, only_reachable=only_reachable)
    if not aligned.ok:
        return Attempt(aligned, failure=aligned.diagnostics[0]), 0
    module, problems = parse(text, path)
    if module is None:
        return Attempt(aligned, failure=problems[0]), 0
    candidate = propose(module, machine, trace, aligned.alignment, archive)
    new, failure = checked(candidate, path, machine, trace, skill)
    if new is None:
        return Attempt(aligned, candidate, failure=failure), 0
    chosen = list(range(len(archive))) if select is None else sorted(set(select(machine, new, archive)))
    done, failure = replays(new, trace, aligned.alignment, [archive[i] for i in chosen])
    return Attempt(aligned, candidate, new, done, failure), 0 if failure else len(archive) - len(chosen)


def accept(text: str, path: str, machine: Machine, trace: DevTrace, archive: Sequence[Entry] = (), *,
           judge: Judge | None = None, select: Select | None = None, skill: str | None = None) -> Verdict:
    """Try a trace; on failure realign once over reachable states; a second failure drops it."""
    first, skipped = attempt(text, path, machine, trace, archive, judge=judge, select=select, skill=skill)
    if first.ok:
        return Verdict(trace, "accepted", (first,), skipped)
    realigned = align(machine, trace, judge=judge, only_reachable=True)
    if realigned.alignment == first.aligned.alignment:  # the same alignment makes the same candidate: it fails again
        return Verdict(trace, "dropped", (first, attrs.evolve(first, aligned=realigned)), skipped)
    second, skipped = attempt(text, path, machine, trace, archive, only_reachable=True, select=select, skill=skill,
                              aligned=realigned)
    if second.ok:
        return Verdict(trace, "realigned", (first, second), skipped)
    return Verdict(trace, "dropped", (first, second), skipped)
