"""What a trace adds to a picture: visit counts, edges taken, and the path to the terminal."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import attrs

from skillc.ir.machine import Machine
from skillc.runtime.record import load_run


@attrs.frozen
class Overlay:
    """Visits per state, uses per edge (source, edge index), and the final path's edges."""

    visits: dict[str, int]
    edges: dict[tuple[str, int], int]
    final_path: frozenset[tuple[str, int]]
    terminal: str | None


def overlay_from_trace(m: Machine, path: str | Path) -> Overlay:
    """Read a machine-mode trace into an overlay (edges are matched by source and index)."""
    run = load_run(path)
    visits: Counter[str] = Counter()
    edges: Counter[tuple[str, int]] = Counter()
    taken: list[tuple[str, int]] = []
    for s in run.steps:
        if s.state not in m.states:
            continue
        visits[s.state] += 1
        if s.edge is not None:
            edges[(s.state, s.edge)] += 1
            taken.append((s.state, s.edge))
    terminal = run.footer.terminal if run.footer is not None else None
    if terminal is not None and terminal in m.states:
        visits[terminal] += 1
    # The path to the terminal: the edges taken after the last visit of each state, walked back from the end.
    final: list[tuple[str, int]] = []
    seen: set[str] = set()
    for source, index in reversed(taken):
        if source in seen:
            continue
        seen.add(source)
        final.append((source, index))
    return Overlay(dict(visits), dict(edges), frozenset(final), terminal if terminal in m.states else None)
