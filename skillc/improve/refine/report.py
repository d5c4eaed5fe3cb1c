"""The refine report: per trace accepted / realigned / dropped, the edits as a `.skm` diff, the replay verdicts.

`summarize` turns an acceptance verdict into a typed `TraceSummary`; `render` prints summaries for people and
`to_json` for tools. The diff is a unified diff of the machine text before and after the trace (states and
edges added, guards, counters, as the printer writes them), and the change list says the same in words.
"""

from __future__ import annotations

import difflib

import attrs

from skillc.diagnostics import Diagnostic
from skillc.improve.refine.accept import Verdict
from skillc.improve.refine.edit import Change


@attrs.frozen
class ReplayLine:
    """One replay of one trace against the candidate that decided."""

    trace: str  # the trace id
    ok: bool
    reason: str | None
    diverged_at: int | None
    path: tuple[str, ...]


@attrs.frozen
class TraceSummary:
    """What refine did with one trace."""

    trace: str  # the trace id
    source: str  # the file it was read from
    status: str  # accepted, realigned, dropped
    alignment: tuple[str | None, ...]
    changes: tuple[Change, ...]
    diff: str
    replays: tuple[ReplayLine, ...]
    reason: Diagnostic | None = None
    first_failure: Diagnostic | None = None  # why the first attempt failed (realigned or dropped traces)
    skipped: int = 0  # archived traces the incremental index showed the edit could not affect
    tried: tuple[Change, ...] = ()  # a dropped trace: the edits of the candidate that was refused

    def to_json(self) -> dict[str, object]:
        """The summary as JSON."""
        def why(d: Diagnostic | None) -> dict[str, object] | None:
            return None if d is None else {"code": str(d.code), "message": d.message, "witness": list(d.witness)}

        return {"trace": self.trace, "source": self.source, "status": self.status,
                "alignment": list(self.alignment), "skipped": self.skipped,
                "changes": [{"kind": c.kind, "where": c.where, "text": c.text} for c in self.changes],
                "tried": [{"kind": c.kind, "where": c.where, "text": c.text} for c in self.tried],
                "diff": self.diff, "reason": why(self.reason), "first_failure": why(self.first_failure),
                "replays": [{"trace": r.trace, "ok": r.ok, "reason": r.reason, "diverged_at": r.diverged_at,
                             "path": list(r.path)} for r in self.replays]}


def skm_diff(before: str, after: str, name: str) -> str:
    """A unified diff of two machine texts (empty when they are equal)."""
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{name}", f"b/{name}",
                                        n=2))


def summarize(verdict: Verdict, before: str, name: str) -> TraceSummary:
    """The summary of one acceptance verdict; `before` is the machine text it started from."""
    final = verdict.final
    made = final.candidate.changes if final.candidate is not None else ()
    dropped = verdict.status == "dropped"
    after = verdict.text if verdict.text is not None else before
    replays = tuple(ReplayLine(tid, v.ok, v.reason, v.diverged_at, v.states) for tid, v in final.replays)
    first = verdict.attempts[0].failure if verdict.status == "realigned" else None
    return TraceSummary(verdict.trace.id, verdict.trace.source, verdict.status, final.aligned.alignment.states,
                        () if dropped else made, skm_diff(before, after, name), replays, verdict.reason, first,
                        verdict.skipped, made if dropped else ())


def render(summaries: list[TraceSummary], *, diff: bool = True) -> str:
    """The report for people: one block per trace, then a tally."""
    out: list[str] = []
    for s in summaries:
        where = f" ({s.source})" if s.source else ""
        edits = f", {len(s.changes)} edit{'s' * (len(s.changes) != 1)}" if s.changes else ", no edit"
        out.append(f"trace {s.trace[:12]}{where}: {s.status}{edits if s.status != 'dropped' else ''}")
        aligned = ", ".join(st for st in s.alignment if st is not None) or "nothing"
        out.append(f"  aligned: {aligned}")
        if s.first_failure is not None:
            out.append(f"  first attempt failed: {s.first_failure.code} {s.first_failure.message}")
        out += [f"  + {c.kind}: {c.text}" for c in s.changes]
        out += [f"  tried {c.kind}: {c.text}" for c in s.tried]
        for r in s.replays:
            mark = "ok" if r.ok else f"FAILS at event {r.diverged_at}: {r.reason}"
            out.append(f"  replay {r.trace[:12]}: {mark}")
        if s.skipped:
            out.append(f"  {s.skipped} archived trace{'s' * (s.skipped != 1)} not replayed: the edit cannot "
                       "affect their paths")
        if s.reason is not None:
            out.append(f"  dropped: {s.reason.code} {s.reason.message}")
            out += [f"    witness: {w}" for w in s.reason.witness]
        if diff and s.diff:
            out += ["  " + line for line in s.diff.rstrip("\n").splitlines()]
    counts = {k: sum(s.status == k for s in summaries) for k in ("accepted", "realigned", "dropped")}
    out.append(", ".join(f"{v} {k}" for k, v in counts.items()) + f" of {len(summaries)} trace"
               + "s" * (len(summaries) != 1))
    return "\n".join(out)
