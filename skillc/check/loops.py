"""Bounded loops: every cycle of the state graph is paid for by a counter.

A counter *pays* for a strongly connected component when some edge inside it
increments the counter by a positive constant and no edge inside it assigns or
decrements it. The increments of all paying counters can fire only finitely
often while the run stays in the component, so those edges are removed and the
rest of the component is checked again, recursively: nested loops get a
lexicographic argument (the outer counter pays for the outer cycle, and may
reset the inner counter, which pays for the inner one). A component with no
paying counter is an unpaid cycle (SKM250, listing its states and one cycle).

Separately, every edge that increments a counter must have a guard that implies
`counter + step <= max` (SKM251, with a Z3 witness), or the runtime would
overflow into the fallback.
"""

from __future__ import annotations

from collections.abc import Iterator

import z3

from skillc.check.context import CheckContext, memo, timeout_ms
from skillc.check.graph import cycle_through, is_cyclic, reachable, sccs, show_path, successors
from skillc.check.smt import canonical_key, describe_model, encoder, solver
from skillc.diagnostics import Diagnostic, make
from skillc.ir import expr as ir
from skillc.ir.machine import Edge, Machine


def _step(e: Edge, counter: str) -> int | None:
    """The positive constant an edge adds to `counter`, if that is all it does to it."""
    step = None
    for a in e.assigns:
        if a.var != counter:
            continue
        if a.op == "+=" and isinstance(a.value, ir.Const) and isinstance(a.value.value, int) \
                and not isinstance(a.value.value, bool) and a.value.value > 0 and step is None:
            step = a.value.value
        else:
            return None
    return step


def _resets(e: Edge, counters: set[str]) -> set[str]:
    return {a.var for a in e.assigns if a.var in counters and _step(e, a.var) is None}


def check_bounded_loops(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Every cycle is paid for by a counter it increments and never resets."""
    counters = {n for n, v in m.variables.items() if v.is_counter}
    # Loops among unreachable states never run; they are reported as unreachable (a warning) instead.
    reached = memo(context, "reachable", lambda: reachable(successors(m), [m.start]))
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


def _unpaid(m: Machine, comp, succ, members, incremented, reset) -> Diagnostic:
    cycle = cycle_through(comp[0], members, succ)
    notes = [f"states in the loop: {', '.join(comp)}"]
    for c in sorted(incremented & set(reset)):
        e = reset[c]
        notes.append(f"counter `{c}` is incremented in the loop but also reset on {e.source} -> {e.target}")
    return make("SKM250", f"the loop {show_path(cycle)} is not bounded by any counter", m.states[comp[0]].span,
                label="unbounded loop", notes=notes, witness=[show_path(cycle)],
                hint="declare `counter tries max N` and increment it on an edge of the loop whose guard "
                "checks `tries < N`")


def _check_increment_guards(m: Machine, context: CheckContext | None) -> Iterator[Diagnostic]:
    enc = encoder(m, context)
    s = solver(timeout_ms(context))
    proven: set[str] = set()  # canonical questions already answered "never overflows"
    for st in m.states.values():
        for e in st.edges:
            for a in e.assigns:
                var = m.variables.get(a.var)
                if var is None or not var.is_counter:
                    continue
                step = _step(e, a.var)
                if step is None:
                    continue
                key = canonical_key(m, [e.guard, ir.Var(var.type, name=a.var)]) + f"+{step}"
                if key in proven:
                    continue
                enc.begin([e.guard])
                c = enc.var(a.var).term
                guard = z3.BoolVal(True) if e.guard is None else enc.bool(e.guard)
                s.push()
                s.add(*enc.domain)
                result = s.check(guard, c + step > var.max)
                if result == z3.sat:
                    names = ir.variables(e.guard) | {a.var}
                    witness = describe_model(s.model(), enc, names)
                    s.pop()
                    yield make("SKM251", f"edge {e.index + 1} of `{st.name}` can push counter `{a.var}` past its "
                               f"maximum {var.max}", e.guard.span if e.guard is not None else e.span,
                               label=f"does not imply `{a.var} + {step} <= {var.max}`" if step != 1
                               else f"does not imply `{a.var} < {var.max}`",
                               witness=witness,
                               hint=f"guard the edge with `{a.var} < {var.max - step + 1}`")
                    continue
                s.pop()
                if result == z3.unsat:
                    proven.add(key)
                if result == z3.unknown:
                    yield make("SKM252", f"the solver could not prove that edge {e.index + 1} of `{st.name}` keeps "
                               f"`{a.var}` within {var.max}", e.guard.span if e.guard is not None else e.span,
                               label="bound not proven",
                               hint=f"guard the edge with a plain `{a.var} < {var.max - step + 1}`, "
                               "or raise the SMT timeout")
