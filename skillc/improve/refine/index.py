"""Incremental replay: which archived traces an edit can affect, so that only those are replayed.

A replay's verdict is decided by the states it enters and, at each, by the
state's operation and the edges the runtime looked at: the edges up to the one
that fired (the first whose guard held), or every edge when none fired or the
operation failed. `changed(old, new)` lists, conservatively, what may behave
differently after an edit:

- `everything`: the start state, an input (its type or default) or a
  variable's initial value changed — every replay may differ;
- `operations`: states added, removed, or whose operation changed: kind, reads,
  writes and their types, the call (tool, arguments, the tool's signature),
  bindings, a terminal's outcome or requirements;
- `edges`: for each state, the first edge index from which its edges differ
  (a guard, a target, an assignment, a counter's maximum that one assigns, an
  edge added, removed or moved) — the edges before it are the same, in order.

`TraceIndex` maps each state to the traces whose last replay path entered it,
with the highest edge index looked at there; `affected(index, changes)` is then
every trace that entered a changed operation, or looked at a changed edge.
Any trace it leaves out enters only unchanged states and looks only at
unchanged edges, so its replay is step for step the same and its verdict
stands (tests/improve/refine/test_index.py checks this against full replay
over random edits).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Final

import attrs

from skillc.ir.machine import Edge, Machine, State
from skillc.improve.refine.archive import Archive
from skillc.improve.refine.replay import ReplayPath

#: The edge index recorded when every edge of a state was (or may have been) looked at.
ALL_EDGES: Final = 1 << 30


@attrs.frozen
class Changes:
    """What an edit may change in a replay (see the module doc); `why` says it in words."""

    everything: bool = False
    operations: frozenset[str] = frozenset()
    edges: Mapping[str, int] = attrs.field(factory=dict)  # state -> first edge index that differs
    why: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing a replay could see changed."""
        return not (self.everything or self.operations or self.edges)


def _operation(m: Machine, st: State) -> tuple[object, ...]:
    """Everything of a state that its operation depends on (not its edges, prompt, doc or provenance)."""
    tool = m.tools.get(st.call.tool) if st.call is not None else None
    types = tuple((w, m.variables[w].type if w in m.variables else None)
                  for w in (*st.writes, *(var for var, _ in st.bindings)))
    return (st.kind, st.reads, st.writes, st.call, st.bindings, st.outcome, st.requires, types,
            None if tool is None else (tool.params, tool.results))


def _edge(m: Machine, e: Edge) -> tuple[object, ...]:
    """Everything an edge's firing and effect depend on, the bounds of the counters it assigns included."""
    bounds = tuple((a.var, m.variables[a.var].max, m.variables[a.var].kind, m.variables[a.var].type)
                   for a in e.assigns if a.var in m.variables)
    return (e.guard, e.target, e.assigns, bounds)


def _first_difference(old: Machine, new: Machine, a: State, b: State) -> int | None:
    """The first edge index at which two versions of a state differ, or None when all edges are the same."""
    ours, theirs = [_edge(old, e) for e in a.edges], [_edge(new, e) for e in b.edges]
    for i, (x, y) in enumerate(zip(ours, theirs)):
        if x != y:
            return i
    return None if len(ours) == len(theirs) else min(len(ours), len(theirs))


def _globals(m: Machine) -> tuple[object, ...]:
    """What every run starts from: the start state, the inputs and the initial values."""
    return (m.start, tuple((v.name, v.kind, v.type, v.init) for v in m.variables.values()
                           if v.is_input or v.init is not None or v.is_counter))


def changed(old: Machine, new: Machine) -> Changes:
    """The states, edges and global facts whose behaviour may differ between two versions of a machine."""
    if _globals(old) != _globals(new):
        return Changes(everything=True, why=("the start state, an input or an initial value changed",))
    operations: set[str] = set()
    edges: dict[str, int] = {}
    why: list[str] = []
    for name in sorted(set(old.states) | set(new.states)):
        a, b = old.states.get(name), new.states.get(name)
        if a is None or b is None:
            operations.add(name)
            why.append(f"state `{name}` {'added' if a is None else 'removed'}")
            continue
        if _operation(old, a) != _operation(new, b):
            operations.add(name)
            why.append(f"the operation of `{name}` changed")
        first = _first_difference(old, new, a, b)
        if first is not None:
            edges[name] = first
            why.append(f"the edges of `{name}` changed from edge {first + 1}")
    return Changes(False, frozenset(operations), edges, tuple(why))


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


def affected(index: TraceIndex, changes: Changes) -> set[str]:
    """The traces whose replay may differ after `changes`: those to replay again."""
    if changes.everything:
        return set(index.traces)
    out: set[str] = set()
    for state in changes.operations:
        out.update(index.by_state.get(state, {}))
    for state, first in changes.edges.items():
        out.update(t for t, edge in index.by_state.get(state, {}).items() if edge >= first)
    return out
