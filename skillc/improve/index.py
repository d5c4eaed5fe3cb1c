"""Incremental replay: which archived traces an edit can affect, so that only those are replayed.

A replay's verdict is decided by the states it enters and, at each, by the
state's operation and the edges the runtime looked at: the edges up to the one
that fired (the first whose guard held), or every edge when none fired or the
operation failed. The replay view of `diff.diff_machines(old, new)` (`everything`,
`operations`, `edges`: see diff.py) lists, conservatively, what may behave
differently after an edit.

`TraceIndex` maps each state to the traces whose last replay path entered it,
with the highest edge index looked at there; `affected(index, changes)` is then
every trace that entered a changed operation, or looked at a changed edge.
Any trace it leaves out enters only unchanged states and looks only at
unchanged edges, so its replay is step for step the same and its verdict
stands (tests/improve/test_index.py checks this against full replay
over random edits).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from skillc.improve.archive import Archive
from skillc.improve.diff import MachineDiff
from skillc.improve.replay import ReplayPath

#: The edge index recorded when every edge of a state was (or may have been) looked at.
ALL_EDGES: Final = 1 << 30


@attrs.frozen
class TraceIndex:
    """Archived traces by the states their last replay entered, with the highest edge index looked at there."""

    by_state: Mapping[str, Mapping[str, int]] = attrs.field(factory=dict)  # state -> trace id -> edge index
    traces: frozenset[str] = frozenset()


def looked_at(path: ReplayPath) -> dict[str, int]:
    """For each state a path entered, the highest edge index looked at there (-1: none, ALL_EDGES: every one)."""
    seen = {state: -1 for state in path.states}
    for state, edge in path.transitions:
        seen[state] = max(seen.get(state, -1), ALL_EDGES if edge is None else edge)
    return seen


def build_index(paths: Iterable[tuple[str, ReplayPath]]) -> TraceIndex:
    """The index of (trace id, last replay path) pairs."""
    by_state: dict[str, dict[str, int]] = {}
    ids: set[str] = set()
    for trace_id, path in paths:
        ids.add(trace_id)
        for state, edge in looked_at(path).items():
            by_state.setdefault(state, {})[trace_id] = edge
    return TraceIndex(by_state, frozenset(ids))


def index_archive(archive: Archive) -> TraceIndex:
    """The index of an archive's entries, by their last replay paths."""
    return build_index((trace_id, entry.path) for trace_id, entry in archive.entries.items())


def affected(index: TraceIndex, changes: MachineDiff) -> set[str]:
    """The traces whose replay may differ after `changes` (its replay view): those to replay again."""
    if changes.everything:
        return set(index.traces)
    out: set[str] = set()
    for state in changes.operations:
        out.update(index.by_state.get(state, {}))
    for state, first in changes.edges.items():
        out.update(t for t, edge in index.by_state.get(state, {}).items() if edge >= first)
    return out
