"""Acceptance: a candidate edit lands iff it checks and replays the current trace and every accepted one.

For one trace: align it (align.py), edit a copy of the machine (edit.py), and put the candidate through the
one gate (skillc.improve.gate): `skillc check`, then replay — the current trace first, then the archived
accepted traces (all of them, or the ones `select` says the edit can affect: the gate's incremental replay).
The first failure is the witness: an alignment that bypasses a rule (SKM820), a check error (SKM821) or a
trace that no longer replays, with the event where it diverged (SKM822). A failed candidate realigns once,
over states reachable from where the trace is; a second failure drops the trace with that reason.
Nothing here writes a file: the caller commits an accepted candidate (archive.py, atomically).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.improve import codes
from skillc.improve.events import DevTrace
from skillc.improve.gate import Entry, Select, gate
from skillc.improve.refine.align import Aligned, Judge, align
from skillc.improve.refine.edit import Candidate, propose, unwritable_names
from skillc.improve.replay import ReplayVerdict
from skillc.ir.machine import Machine
from skillc.syntax.parser import parse

Status = Literal["accepted", "realigned", "dropped"]


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


def _shown(name: str) -> str:
    """A name as a message shows it: characters that do not print (NUL, U+FEFF, a lone surrogate) as `\\uXXXX`."""
    return "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in name)


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
    unwritable = unwritable_names(machine, trace)
    if unwritable:
        name, what = unwritable[0]
        return Attempt(aligned, failure=make(
            codes.UNWRITABLE_TRACE_NAME, f"trace {trace.id[:12]} names {what} `{_shown(name)}`, which cannot be "
            "a name in `.skm`", None, notes=[f"also `{_shown(n)}` ({w})" for n, w in unwritable[1:4]],
            hint=codes.UNWRITABLE_TRACE_NAME.hint)), 0
    candidate = propose(module, machine, trace, aligned.alignment, archive)
    passage = gate(candidate.text, path, archive, subject=f"the machine edited for trace {trace.id[:12]}",
                   old=machine, select=select, skill=skill, own=(trace, aligned.alignment),
                   unchanged=not candidate.changes)
    return Attempt(aligned, candidate, passage.machine, passage.replays, passage.failure), passage.skipped


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
