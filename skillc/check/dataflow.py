"""Definite assignment: every variable a state reads is assigned on every path into it.

Def(q) is the greatest fixed point of

    Def(start) ⊆ inputs ∪ counters ∪ initialised variables
    Def(q')    = ⋂ over edges e: q → q' of  Def(q) ∪ writes(q) ∪ assigned(e)

computed with bit sets over the reachable graph (unreachable states keep "all",
the neutral element, and are reported by the graph check instead). Rejected: a
state reading a variable outside Def(q) (SKM210), and a guard or assignment
using a variable that is not defined once the state has run (SKM211). Each
diagnostic prints one path from `start` on which the variable is never assigned.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence

import attrs

from skillc.check import codes
from skillc.check.context import CheckContext
from skillc.check.graph import shortest_path, show_path, successors
from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.source import Span
from skillc.ir import expr as ir
from skillc.ir.machine import Machine


@attrs.frozen(hash=False)
class Dataflow:
    """The solved analysis: variable bit positions and Def at the entry of each state."""

    bits: dict[str, int]
    names: list[str]
    defined: dict[str, int]
    reached: set[str]

    def mask(self, names: Iterable[str]) -> int:
        """The bit set of `names`."""
        out = 0
        for n in names:
            out |= 1 << self.bits[n]
        return out

    def missing(self, names: Iterable[str], mask: int) -> list[str]:
        """Names among `names` whose bit is not set in `mask`, in the given order."""
        return [n for n in dict.fromkeys(names) if not mask >> self.bits[n] & 1]

    def entry(self, state: str) -> frozenset[str]:
        """Def(state): the variables assigned on every path from `start` into the state."""
        mask = self.defined[state]
        return frozenset(n for n in self.names if mask >> self.bits[n] & 1)


def _fixpoint(start: str, start_mask: int, everything: int, out: Mapping[str, Sequence[tuple[str, int]]],
              writes: Mapping[str, int]) -> tuple[dict[str, int], set[str]]:
    """The greatest fixed point over bit sets, from `start` along `out` (target, bits the edge assigns)."""
    defined = dict.fromkeys(out, everything)
    defined[start] = start_mask
    queue = deque([start])
    queued = {start}
    reached = {start}
    while queue:
        q = queue.popleft()
        queued.discard(q)
        after = defined[q] | writes[q]
        for target, gen in out[q]:
            new = defined[target] & (after | gen)
            if new != defined[target] or target not in reached:
                defined[target] = new
                reached.add(target)
                if target not in queued:
                    queue.append(target)
                    queued.add(target)
    return defined, reached


def solve(m: Machine) -> Dataflow:
    """Def(q) for every state."""
    names = list(m.variables)
    bits = {n: i for i, n in enumerate(names)}
    mask = Dataflow(bits, names, {}, set()).mask
    writes = {name: mask(st.writes) for name, st in m.states.items()}
    out = {name: [(e.target, mask(a.var for a in e.assigns)) for e in st.edges] for name, st in m.states.items()}
    start_mask = mask(v.name for v in m.variables.values() if v.defined_at_start)
    defined, reached = _fixpoint(m.start, start_mask, (1 << len(names)) - 1, out, writes)
    return Dataflow(bits, names, defined, reached)


def definitely_assigned(m: Machine) -> dict[str, frozenset[str]]:
    """Def(q) for each state reachable from `start`: the variables assigned on every path into it.

    Inputs, counters and initialised variables count as assigned at `start`;
    a state's writes and an edge's assignments assign. Unreachable states are
    left out (every variable would be "assigned" there).
    """
    flow = solve(m)
    return {q: flow.entry(q) for q in m.states if q in flow.reached}


def assigned_on_entry(start: str, edges: Mapping[str, Iterable[str]], writes: Mapping[str, Iterable[str]],
                      initial: Iterable[str] = ()) -> dict[str, frozenset[str]]:
    """`definitely_assigned` for a graph that is not (yet) a machine: Def(q) for each state reachable from `start`.

    `edges` maps every state to its successors and `writes` every state to the
    variables it assigns; `initial` variables are assigned at `start`. A
    predecessor that is not reachable does not count.
    """
    universe = list(dict.fromkeys([*initial, *(v for ws in writes.values() for v in ws)]))
    bits = {n: i for i, n in enumerate(universe)}
    flow = Dataflow(bits, universe, {}, set())
    out = {q: [(t, 0) for t in targets] for q, targets in edges.items()}
    for t in {t for targets in edges.values() for t in targets} - set(out):
        out[t] = []
    defined, reached = _fixpoint(start, flow.mask(initial), (1 << len(universe)) - 1, out,
                                 {q: flow.mask(writes.get(q, ())) for q in out})
    solved = Dataflow(bits, universe, defined, reached)
    return {q: solved.entry(q) for q in out if q in reached}


def dataflow(m: Machine, context: CheckContext | None) -> Dataflow:
    """The analysis, shared by the checks of one run."""
    if context is None:
        return solve(m)
    return context.memo("dataflow", lambda: solve(m))


def unassigned_path(m: Machine, var: str, target: str) -> list[str] | None:
    """A path from `start` to `target` on which `var` is never assigned (before `target` runs)."""
    if m.variables[var].defined_at_start:
        return None
    succ = successors(m, keep_edge=lambda e: all(a.var != var for a in e.assigns))
    # States writing `var` assign it; the target may write it too, since it reads before it writes.
    writers = {name for name, st in m.states.items() if var in st.writes and name != target}
    return shortest_path(succ, m.start, target.__eq__, blocked=writers)


def witness(m: Machine, var: str, state: str) -> list[str]:
    """The witness lines of a definite-assignment finding."""
    path = unassigned_path(m, var, state)
    return [f"`{var}` is never assigned on {show_path(path)}"] if path else []


def _use_of(e: ir.Expr | None, var: str) -> Span | None:
    """The span of the first place an expression reads `var`."""
    if e is None:
        return None
    return next((node.span for node in ir.walk(e) if isinstance(node, ir.Var) and node.name == var), None)


def check_definite_assignment(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Reads, guards and assignments only use variables assigned on every path."""
    flow = dataflow(m, context)
    for name, st in m.states.items():
        if name not in flow.reached:
            continue  # unreachable: reported by the graph check
        entry = flow.defined[name]
        for var in flow.missing(st.reads, entry):
            yield make(codes.READ_BEFORE_ASSIGNMENT, f"state `{name}` reads `{var}`, which may not be assigned yet",
                       st.span_of(f"reads:{var}"),
                       label=f"reads `{var}`", witness=witness(m, var, name), data={"state": name, "var": var},
                       hint=f"assign `{var}` on every path into `{name}`, give it an initial value, "
                       "or drop it from `reads`")
        after = entry | flow.mask(st.writes)
        for e in st.edges:
            used = sorted(ir.variables(e.guard))
            for var in flow.missing(used, after):
                yield make(codes.GUARD_BEFORE_ASSIGNMENT, f"the guard of edge {e.index + 1} of `{name}` uses `{var}`, "
                           "which may not be assigned yet", _use_of(e.guard, var) or e.span,
                           label=f"uses `{var}`", witness=witness(m, var, name),
                           hint=f"assign `{var}` before this state, or test a variable that is")
            assigned = after
            for a in e.assigns:
                for var in flow.missing(sorted(ir.variables(a.value)), assigned):
                    yield make(codes.GUARD_BEFORE_ASSIGNMENT,
                               f"the assignment to `{a.var}` uses `{var}`, which may not be assigned yet",
                               _use_of(a.value, var) or a.span, label=f"uses `{var}`",
                               witness=witness(m, var, name))
                assigned |= flow.mask([a.var])
