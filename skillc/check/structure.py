"""Graph checks: reachability from `start`, a way out to a terminal, default edges.

Rejected: a state that no path from `start` reaches (SKM200, a warning: dead
code; not for states a `rule forbid` names, which are meant to be unreachable), a state from which no terminal can be reached (SKM201, reported where runs
enter such a trap: a run entering it could never end), a non-terminal state without a default edge (SKM202: when no
guard holds the run would be stuck), and edges after the default edge (SKM203:
they can never fire). Terminals cannot have edges and edges cannot name
undeclared states: the grammar and lowering already guarantee both.
"""  # noqa: E501 - module docstring kept verbatim

from __future__ import annotations

from collections.abc import Iterator

from skillc.check import codes
from skillc.check.context import CheckContext, memo
from skillc.check.graph import predecessors, reachable, shared_successors
from skillc.diagnostics import Diagnostic, Label, make
from skillc.ir.machine import FALLBACK, Machine


def check_graph(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Reachability, termination reachability and default edges."""
    succ = shared_successors(m, context)
    live = memo(context, "reachable", lambda: reachable(succ, [m.start]))
    # A state a `rule forbid` names is meant to be unreachable; the rule check reports it if it is not.
    forbidden = {s for r in m.rules if r.kind == "forbid" for s in r.performers[0]}
    for name, st in m.states.items():
        if name not in live and name != FALLBACK and name not in forbidden:
            yield make(codes.UNREACHABLE_STATE, f"state `{name}` is unreachable from `start {m.start}`", st.span,
                       label="never entered", hint="remove it, or add an edge that leads to it")
    terminals = [name for name, st in m.states.items() if st.is_terminal]
    can_finish = reachable(predecessors(succ), terminals)
    order = {name: i for i, name in enumerate(m.states)}
    trapped = live - can_finish
    # Report where runs enter a trap (states of the trap reached from outside it, or `start`).
    entries = {t for s in live - trapped for t in succ[s] if t in trapped} | ({m.start} & trapped)
    for name in sorted(entries, key=order.__getitem__):
        st = m.states[name]
        stuck = sorted(reachable(succ, [name]), key=order.__getitem__)
        yield make(codes.NO_WAY_OUT, f"no terminal can be reached from state `{name}`", st.span,
                   label="runs that enter here never end",
                   notes=[f"from here a run can only visit: {', '.join(stuck)}"],
                   hint="add an edge from one of these states to a terminal or to `fallback`")
    for name, st in m.states.items():
        if st.is_terminal:
            continue
        defaults = [e for e in st.edges if e.is_default]
        if not defaults:
            yield make(codes.MISSING_DEFAULT_EDGE, f"state `{name}` has no default edge", st.span,
                       label="when no guard holds, the run is stuck",
                       hint="end the state with an unguarded edge `-> target`")
            continue
        first = defaults[0]
        for e in st.edges[first.index + 1:]:
            yield make(codes.EDGE_AFTER_DEFAULT, f"edge {e.index + 1} of `{name}` comes after the default edge", e.span,
                       label="can never fire",
                       secondary=[Label(first.span, "the default edge always fires first")] if first.span else [],
                       hint="move the default edge last")
