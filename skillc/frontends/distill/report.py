"""The library report: each skill, its r_k, sizes, primitives per call and held-out results."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from skillc.diagnostics import Diagnostic
from skillc.diagnostics.render import to_json
from skillc.frontends.distill import Distilled
from skillc.frontends.distill.cluster import Cluster
from skillc.frontends.distill.verify import Evaluation

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object


def table(distilled: Distilled, clusters: list[Cluster], evaluation: Evaluation | None = None,
          dropped: Sequence[Cluster] = ()) -> str:
    """A plain-text report of the library (and of the skills verification dropped)."""
    rows = [("skill", "r_k", "ops", "steps", "per call (avg/max)", "level", "held-out calls", "errors")]
    for c in [*clusters, *dropped]:
        stats = (evaluation.skills.get(c.name) or evaluation.dropped.get(c.name)) if evaluation else None
        rows.append((c.name + (" (dropped)" if c in dropped else ""), f"{c.reuse:.2f}", str(len(c.members)),
                     str(len(c.steps)), f"{c.mean_size:.1f}/{max(c.sizes)}", str(c.level),
                     str(stats.calls) if stats else "-",
                     f"{stats.errors} ({stats.error_rate:.0%})" if stats else "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    out = [f"{len(clusters)} skill(s) from {len(distilled.programs)} training traces "
           f"({len(distilled.operations)} operations in {distilled.candidates} shapes; r_k >= {distilled.min_reuse})",
           "", *lines, ""]
    for c in clusters:
        out.append(f"{c.name}: " + " ; ".join(
            ("[" + ", ".join(g.slot.shown + f"?{g.share:.0%}" for g in s.pre) + "] " if s.pre else "")
            + (f"repeat<={s.bound}( {s.core.shown} )" if s.loop else s.core.shown) for s in c.steps))
    if evaluation is not None and evaluation.games:
        lost = (f", {evaluation.lost} lost ({evaluation.unattributed} not attributed to a skill call)"
                if evaluation.lost else "")
        out += ["", f"held-out: {_count(len(evaluation.games), 'game')}, {evaluation.won} won with skills{lost}; "
                    f"turns {evaluation.turns} vs {evaluation.primitive_turns} primitive "
                    f"({evaluation.reduction:.1%} fewer); {_count(evaluation.calls, 'skill call')}, "
                    f"{_count(evaluation.errors, 'execution error')} ({evaluation.error_rate:.1%})"]
    return "\n".join(out) + "\n"


def _count(n: int, noun: str) -> str:
    """`1 game`, `2 games`."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def as_json(distilled: Distilled, clusters: list[Cluster], evaluation: Evaluation | None = None,
            dropped: Sequence[Cluster] = (), diagnostics: Iterable[Diagnostic] = ()) -> Object:
    """The report as one JSON object: the skills (kept and dropped), the held-out evaluation, the diagnostics."""
    def skill(c: Cluster, kept: bool) -> Object:
        stats = (evaluation.skills.get(c.name) or evaluation.dropped.get(c.name)) if evaluation else None
        return {"name": c.name, "kept": kept, "confidence": round(c.reuse, 4), "operations": len(c.members),
                "steps": len(c.steps), "primitives_per_call": {"mean": round(c.mean_size, 2), "max": max(c.sizes)},
                "abstraction_level": c.level, "verification": stats.to_json() if stats else None}

    out: Object = {"format": "skillc-distill-report/1",
 "training_traces": len(distilled.programs),
                 "operations": len(distilled.operations), "candidate_clusters": distilled.candidates,
                 "min_reuse": distilled.min_reuse,
                 "skills": [skill(c, True) for c in clusters] + [skill(c, False) for c in dropped],
                 "evaluation": None, "diagnostics": [to_json(d) for d in diagnostics]}
    if evaluation is not None:
        out["evaluation"] = {
            "games": len(evaluation.games), "won": evaluation.won, "lost": evaluation.lost,
            "unattributed": evaluation.unattributed, "calls": evaluation.calls, "errors": evaluation.errors,
            "error_rate": round(evaluation.error_rate, 4), "turns": evaluation.turns,
            "primitive_turns": evaluation.primitive_turns, "reduction": round(evaluation.reduction, 4),
            "per_game": [{"trace": g.trace_id, "won": g.won, "turns": g.turns, "primitive_turns": g.primitive_turns,
                          "calls": g.calls, "error": g.error, "blame": g.blame} for g in evaluation.games]}
    return out
