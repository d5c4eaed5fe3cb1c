"""The library report: each skill, its r_k, sizes, primitives per call and held-out results."""

from __future__ import annotations

from skillc.frontends.distill import Distilled
from skillc.frontends.distill.cluster import Cluster
from skillc.frontends.distill.verify import Evaluation


def table(distilled: Distilled, clusters: list[Cluster], evaluation: Evaluation | None = None,
          dropped: list[Cluster] = ()) -> str:
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
        out += ["", f"held-out: {len(evaluation.games)} games, {evaluation.won} won with skills; "
                    f"turns {evaluation.turns} vs {evaluation.primitive_turns} primitive "
                    f"({evaluation.reduction:.1%} fewer); {evaluation.calls} skill calls, "
                    f"{evaluation.errors} execution errors ({evaluation.error_rate:.1%})"]
    return "\n".join(out) + "\n"
