"""The one structural diff of two machines: what a picture shows changed, and what a replay could see change.

`diff_machines(old, new)` → `MachineDiff`, read three ways:

- **states** are matched by name: added, removed, or *changed* when their contract differs (kind, reads, writes,
  call, bindings, instructions, outcome — not edges, provenance or documentation);
- **edges** are matched by (source, target): a pair only in NEW is added, only in OLD removed, and in both with
  another guard, order or assignment changed. `skillc dot --diff` draws these (skillc.render.diff, typed against
  its own `DiffView` Protocol: render is a lower stage and never imports this module); evolve's report lists them;
- **replay** (what the incremental replay of index.py reads): a replay's verdict is decided by the states it
  enters and, at each, by the state's operation and the edges the runtime looked at — the edges up to the one
  that fired, or every edge when none fired or the operation failed. So, conservatively:
  `everything` — the start state, an input (its type or default) or a variable's initial value changed, every
  replay may differ; `operations` — states added, removed, or whose operation changed (kind, reads, writes and
  their types, the call, the tool's signature, bindings, a terminal's outcome or requirements); `edges` — for
  each state, the first edge index from which its edges differ (a guard, a target, an assignment, the bound of a
  counter one assigns, an edge added, removed or moved); the edges before it are the same, in order.
  `why` says it in words. A prompt or a doc is part of the contract a picture shows, but no replay sees it.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from skillc.ir.machine import Edge, Machine, State
from skillc.ir.printexpr import show_expr

EdgeKey = tuple[str, str]
#: An edge as a picture shows it: its index, its guard (None: the default edge) and its assignments, as printed.
EdgeShown = tuple[int, str | None, tuple[tuple[str, str, str], ...]]


@attrs.frozen
class MachineDiff:
    """What changed from one machine to another (see the module doc). Every field defaults to "nothing"."""

    added_states: tuple[str, ...] = ()
    removed_states: tuple[str, ...] = ()
    changed_states: tuple[str, ...] = ()
    added_edges: tuple[EdgeKey, ...] = ()
    removed_edges: tuple[EdgeKey, ...] = ()
    changed_edges: tuple[EdgeKey, ...] = ()
    everything: bool = False
    operations: frozenset[str] = frozenset()
    edges: Mapping[str, int] = attrs.field(factory=dict)  # state -> first edge index that differs (for replay)
    why: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing changed that a picture shows (states and edges)."""
        return not (self.added_states or self.removed_states or self.changed_states or self.added_edges
                    or self.removed_edges or self.changed_edges)

    @property
    def replay_same(self) -> bool:
        """Nothing changed that a replay could see: every replay goes step for step as before."""
        return not (self.everything or self.operations or self.edges)

    def state_change(self, name: str) -> str:
        """added, removed, changed or same."""
        return "added" if name in self.added_states else "removed" if name in self.removed_states \
            else "changed" if name in self.changed_states else "same"

    def edge_change(self, key: EdgeKey) -> str:
        """added, removed, changed or same."""
        return "added" if key in self.added_edges else "removed" if key in self.removed_edges \
            else "changed" if key in self.changed_edges else "same"

    def lines(self) -> tuple[str, ...]:
        """One line per change a picture shows: `state `x` added`, `edge a -> b changed`, … (evolve's report)."""
        out = [f"state `{name}` {how}" for how, names in (("added", self.added_states),
                                                         ("removed", self.removed_states),
                                                         ("changed", self.changed_states)) for name in names]
        out += [f"edge {a} -> {b} {how}" for how, keys in (("added", self.added_edges),
                                                           ("removed", self.removed_edges),
                                                           ("changed", self.changed_edges)) for a, b in keys]
        return tuple(out)


def _contract(st: State) -> State:
    """A state without its edges, provenance and documentation (what the comparison of contracts sees)."""
    return attrs.evolve(st, edges=(), provenance=None, doc=None)


def _shown(e: Edge) -> EdgeShown:
    """An edge as printed: two edges a picture labels alike compare equal (types and spans are not shown)."""
    guard = show_expr(e.guard) if e.guard is not None else None
    return e.index, guard, tuple((a.var, a.op, show_expr(a.value)) for a in e.assigns)


def _pairs(m: Machine) -> dict[EdgeKey, list[EdgeShown]]:
    """(source, target) → every edge between them, in order, as printed."""
    out: dict[EdgeKey, list[EdgeShown]] = {}
    for st in m.states.values():
        for e in st.edges:
            out.setdefault((st.name, e.target), []).append(_shown(e))
    return out


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


def _replay(old: Machine, new: Machine) -> tuple[bool, frozenset[str], dict[str, int], tuple[str, ...]]:
    """The replay's view: everything, the changed operations, the first changed edge of each state, and why."""
    if _globals(old) != _globals(new):
        return True, frozenset(), {}, ("the start state, an input or an initial value changed",)
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
    return False, frozenset(operations), edges, tuple(why)


def diff_machines(old: Machine, new: Machine) -> MachineDiff:
    """Compare two machines (see the module doc)."""
    added = tuple(n for n in new.states if n not in old.states)
    removed = tuple(n for n in old.states if n not in new.states)
    changed = tuple(n for n in new.states if n in old.states and _contract(new.states[n]) != _contract(old.states[n]))
    eo, en = _pairs(old), _pairs(new)
    everything, operations, edges, why = _replay(old, new)
    return MachineDiff(added, removed, changed, tuple(k for k in en if k not in eo),
                       tuple(k for k in eo if k not in en), tuple(k for k in en if k in eo and en[k] != eo[k]),
                       everything, operations, edges, why)
