"""Bounded loops: every cycle of the state graph is paid for by a counter.

A counter *pays* for a strongly connected component when some edge inside it
increments the counter by a positive constant and no edge inside it assigns or
decrements it. The increments of all paying counters can fire only finitely
often while the run stays in the component, so those edges are removed and the
rest of the component is checked again, recursively: nested loops get a
lexicographic argument (the outer counter pays for the outer cycle, and may
reset the inner counter, which pays for the inner one). A component with no
paying counter is an unpaid cycle (SKM250, listing its states and one cycle).

Several assignments to one counter on an edge are composed left to right
(`effect`): a net increment pays, anything with a reset does not. Separately,
every edge that changes a counter must keep each intermediate value within the
maximum, as the runtime checks after every assignment: its guard implies
`counter + rise <= max` for the largest rise before a reset, and no value after
a reset exceeds `max` (SKM251, with a Z3 witness), or the runtime would overflow
into the fallback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import attrs

from skillc.check import codes
from skillc.check.context import UNDECIDED, CheckContext, memo, timeout_ms
from skillc.check.graph import Succ, cycle_through, is_cyclic, reachable, sccs, shared_successors, show_path
from skillc.diagnostics import Diagnostic, make
from skillc.ir import expr as ir
from skillc.ir.machine import Edge, Machine, State, Variable

if TYPE_CHECKING:
    from skillc.check.smt import Encoder, Solver


@attrs.frozen
class Effect:
    """What the assignments of one edge do to one counter, composed left to right.

    `step` is the net increment when no assignment resets the counter (None after a
    reset, whose final value is `reset`). The runtime checks the bound after every
    assignment, so `rise` is the largest increment reached relative to the value
    before the edge (0 when a reset comes first), and `peak` the largest value
    reached after a reset (None without one).
    """

    step: int | None
    reset: int | None
    rise: int
    peak: int | None


def effect(e: Edge, counter: str) -> Effect | None:
    """The composed effect of an edge's assignments on `counter`; None when the edge leaves it alone."""
    base: int | None = None  # None: relative to the value before the edge
    offset = rise = 0
    peak: int | None = None
    touched = False
    for a in e.assigns:
        if a.var != counter:
            continue
        touched = True
        value = a.value.value if isinstance(a.value, ir.Const) and type(a.value.value) is int else None
        if value is None or a.op not in ("+=", "="):
            return Effect(None, None, 0, None)  # ruled out by lowering (SKM139); never counts as paying
        if a.op == "=":
            base, offset = value, 0
        else:
            offset += value
        if base is None:
            rise = max(rise, offset)
        else:
            peak = max(peak if peak is not None else base + offset, base + offset)
    if not touched:
        return None
    if base is None:
        return Effect(offset if offset > 0 else None, None, rise, None)
    return Effect(None, base + offset, rise, peak)


def _step(e: Edge, counter: str) -> int | None:
    """The positive net increment of an edge to `counter`, when it does not reset it."""
    eff = effect(e, counter)
    return eff.step if eff is not None else None


def _resets(e: Edge, counters: set[str]) -> set[str]:
    return {a.var for a in e.assigns if a.var in counters and _step(e, a.var) is None}


def check_bounded_loops(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Every cycle is paid for by a counter it increments and never resets."""
    counters = {n for n, v in m.variables.items() if v.is_counter}
    # Loops among unreachable states never run; they are reported as unreachable (a warning) instead.
    reached = memo(context, "reachable", lambda: reachable(shared_successors(m, context), [m.start]))
    live = [n for n, s in m.states.items() if not s.is_terminal and n in reached]
    edges = [e for n in live for e in m.states[n].edges if not m.states[e.target].is_terminal]
    order = {name: i for i, name in enumerate(m.states)}
    work = [(set(live), edges)]
    while work:
        nodes, inside = work.pop()
        succ: dict[str, list[str]] = {}
        for e in inside:
            succ.setdefault(e.source, []).append(e.target)
        components = sccs(sorted(nodes, key=order.__getitem__), succ)
        component_of = {state: i for i, comp in enumerate(components) for state in comp}
        edges_of: dict[int, list[Edge]] = {}
        for e in inside:
            i = component_of.get(e.source)
            if i is not None and component_of.get(e.target) == i:
                edges_of.setdefault(i, []).append(e)
        for i, comp in enumerate(components):
            if not is_cyclic(comp, succ):
                continue
            members = set(comp)
            comp_edges = edges_of.get(i, [])
            incremented = {a.var for e in comp_edges for a in e.assigns
                           if a.var in counters and _step(e, a.var) is not None}
            reset: dict[str, Edge] = {}
            for e in comp_edges:
                for c in _resets(e, counters):
                    reset.setdefault(c, e)
            payers = incremented - set(reset)
            if not payers:
                yield _unpaid(m, comp, succ, members, incremented, reset)
                continue
            remaining = [e for e in comp_edges
                         if not any(a.var in payers and _step(e, a.var) is not None for a in e.assigns)]
            work.append((members, remaining))
    yield from _check_increment_guards(m, context)


def _unpaid(m: Machine, comp: list[str], succ: Succ, members: set[str], incremented: set[str],
            reset: dict[str, Edge]) -> Diagnostic:
    cycle = cycle_through(comp[0], members, succ)
    notes = [f"states in the loop: {', '.join(comp)}"]
    for c in sorted(incremented & set(reset)):
        e = reset[c]
        notes.append(f"counter `{c}` is incremented in the loop but also reset on {e.source} -> {e.target}")
    return make(codes.UNBOUNDED_LOOP, f"the loop {show_path(cycle)} is not bounded by any counter",
                m.states[comp[0]].span,
                label="unbounded loop", notes=notes, witness=[show_path(cycle)],
                hint="declare `counter tries max N` and increment it on an edge of the loop whose guard "
                "checks `tries < N`")


def _check_increment_guards(m: Machine, context: CheckContext | None) -> Iterator[Diagnostic]:
    """Every edge's guard keeps each counter it changes within bounds, after every assignment."""
    questions: list[tuple[State, Edge, Variable, Effect]] = []
    for st in m.states.values():
        for e in st.edges:
            for name in dict.fromkeys(a.var for a in e.assigns):
                var = m.variables.get(name)
                if var is None or not var.is_counter or var.max is None:
                    continue
                eff = effect(e, name)
                if eff is None or (eff.rise <= 0 and (eff.peak is None or eff.peak <= var.max)):
                    continue
                questions.append((st, e, var, eff))
    if not questions:
        return  # no edge can overflow a counter: no need to load the solver
    from skillc.check.smt import Encoder, canonical_key, solver

    enc = Encoder(m)  # this check's own
    s = solver(timeout_ms(context))
    proven: set[str] = set()  # canonical questions already answered "never overflows"
    for st, e, var, eff in questions:
        key = canonical_key(m, [e.guard, ir.Var(var.type, name=var.name)]) + f"+{eff.rise}/{eff.peak}"
        if key in proven:
            continue
        yield from _increment_question(st, e, var, eff, enc, s, proven, key)


def _increment_question(st: State, e: Edge, var: Variable, eff: Effect, enc: Encoder, s: Solver, proven: set[str],
                        key: str) -> Iterator[Diagnostic]:
    """Ask whether the edge can fire with its assignments taking `var` past its maximum."""
    import z3  # optional extra, loaded only when a counter can overflow (start-up)

    from skillc.check.smt import describe_model

    assert var.max is not None  # a counter
    enc.begin([e.guard])
    c = enc.var(var.name).term
    guard = z3.BoolVal(True) if e.guard is None else enc.fires(e.guard)
    over = [c + eff.rise > var.max] if eff.rise > 0 else []
    if eff.peak is not None and eff.peak > var.max:
        over.append(z3.BoolVal(True))
    where = e.guard.span if e.guard is not None else e.span
    s.push()
    s.add(*enc.domain)
    result = s.check(guard, z3.Or(over))
    if result == z3.sat:
        witness = describe_model(s.model(), enc, ir.variables(e.guard) | {var.name})
        s.pop()
        if eff.peak is not None and eff.peak > var.max:
            yield make(codes.COUNTER_OVERFLOW, f"edge {e.index + 1} of `{st.name}` sets counter `{var.name}` to "
                       f"{eff.peak}, past its maximum {var.max}", e.span, label=f"reaches {eff.peak}", witness=witness,
                       hint=f"keep the assignments to `{var.name}` on this edge within 0 … {var.max}")
            return
        step = eff.rise
        yield make(codes.COUNTER_OVERFLOW, f"edge {e.index + 1} of `{st.name}` can push counter `{var.name}` past its "
                   f"maximum {var.max}", where,
                   label=f"does not imply `{var.name} + {step} <= {var.max}`" if step != 1
                   else f"does not imply `{var.name} < {var.max}`",
                   witness=witness, hint=f"guard the edge with `{var.name} < {var.max - step + 1}`")
        return
    s.pop()
    if result == z3.unsat:
        proven.add(key)
    elif result == z3.unknown:
        yield make(codes.COUNTER_BOUND_UNPROVEN, f"the solver could not prove that edge {e.index + 1} of `{st.name}` "
                   f"keeps `{var.name}` within {var.max}", where, label="bound not proven",
                   hint=f"guard the edge with a plain `{var.name} < {var.max - eff.rise + 1}`, "
                   "or raise the SMT timeout", data=UNDECIDED)
