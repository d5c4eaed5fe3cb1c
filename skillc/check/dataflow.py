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
from collections.abc import Iterator

import attrs

from skillc.check.context import CheckContext
from skillc.check.graph import shortest_path, show_path, successors
from skillc.diagnostics import Diagnostic, make
from skillc.ir import expr as ir
from skillc.ir.machine import Machine


@attrs.frozen(hash=False)
class Dataflow:
    """The solved analysis: variable bit positions and Def at the entry of each state."""

    bits: dict[str, int]
    names: list[str]
    defined: dict[str, int]
    reached: set[str]

    def mask(self, names) -> int:
        out = 0
        for n in names:
            out |= 1 << self.bits[n]
        return out

    def missing(self, names, mask: int) -> list[str]:
        """Names among `names` whose bit is not set in `mask`, in the given order."""
        return [n for n in dict.fromkeys(names) if not mask >> self.bits[n] & 1]


def solve(m: Machine) -> Dataflow:
    """Def(q) for every state."""
    names = list(m.variables)
    bits = {n: i for i, n in enumerate(names)}
    everything = (1 << len(names)) - 1
    mask = Dataflow(bits, names, {}, set()).mask

    writes = {name: mask(st.writes) for name, st in m.states.items()}
    gen = {(e.source, e.index): mask(a.var for a in e.assigns) for e in m.edges()}
    defined = {name: everything for name in m.states}
    defined[m.start] = mask(v.name for v in m.variables.values() if v.defined_at_start)
    queue = deque([m.start])
    queued = {m.start}
    reached = {m.start}
    while queue:
        q = queue.popleft()
        queued.discard(q)
        after = defined[q] | writes[q]
        for e in m.states[q].edges:
            new = defined[e.target] & (after | gen[(q, e.index)])
            if new != defined[e.target] or e.target not in reached:
                defined[e.target] = new
                reached.add(e.target)
                if e.target not in queued:
                    queue.append(e.target)
                    queued.add(e.target)
    return Dataflow(bits, names, defined, reached)


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


def _use_of(e: ir.Expr | None, var: str):
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
            yield make("SKM210", f"state `{name}` reads `{var}`, which may not be assigned yet",
                       st.span_of(f"reads:{var}"),
                       label=f"reads `{var}`", witness=witness(m, var, name),
                       hint=f"assign `{var}` on every path into `{name}`, give it an initial value, "
                       "or drop it from `reads`")
        after = entry | flow.mask(st.writes)
        for e in st.edges:
            used = sorted(ir.variables(e.guard))
            for var in flow.missing(used, after):
                yield make("SKM211", f"the guard of edge {e.index + 1} of `{name}` uses `{var}`, which may not "
                           "be assigned yet", _use_of(e.guard, var) or e.span,
                           label=f"uses `{var}`", witness=witness(m, var, name),
                           hint=f"assign `{var}` before this state, or test a variable that is")
            assigned = after
            for a in e.assigns:
                for var in flow.missing(sorted(ir.variables(a.value)), assigned):
                    yield make("SKM211", f"the assignment to `{a.var}` uses `{var}`, which may not be assigned yet",
                               _use_of(a.value, var) or a.span, label=f"uses `{var}`",
                               witness=witness(m, var, name))
                assigned |= flow.mask([a.var])
