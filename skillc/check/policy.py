"""Policy over a well-formed machine: a state sees only what it declares (SKM131).

Lowering builds a machine whenever every name resolves and every expression
types; whether a tool call's arguments stay within the state's `reads` does not
change what the machine means, so it is checked here. (What counters and inputs
may be written, SKM133/SKM137/SKM139, stays in lowering: the loop proof and
fragment instantiation rely on it.)
"""

from __future__ import annotations

from collections.abc import Iterator

from skillc.check.context import CheckContext
from skillc.diagnostics import Diagnostic, Span, codes, make
from skillc.ir import expr as ir
from skillc.ir.machine import Machine, State


def check_call_reads(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Every variable a tool argument reads is in the calling state's `reads` (SKM131); the places
    (`skill_dir`, `workdir`) need not be listed."""
    seen: set[tuple[int, int, str]] = set()
    for st in m.states.values():
        if st.call is None or _checked_on_its_own(st, m):
            continue
        for name, value in st.call.args:
            for var in sorted(ir.variables(value)):
                if var in st.reads or (var in m.variables and m.variables[var].kind == "place"):
                    continue  # a place is the run's, not information a state could leak; naming it suffices
                where = (value.span.start, value.span.end, var) if value.span is not None else None
                if where is not None and where in seen:
                    continue  # one call of an imported fragment, met again in another instance
                if where is not None:
                    seen.add(where)
                yield make(codes.UNDECLARED_READ, f"argument `{name}` reads `{var}`, which the state does not "
                           "declare in `reads`", value.span, label=f"reads `{var}`",
                           data={"state": st.name, "var": var, "argument": name})


def _checked_on_its_own(st: State, m: Machine) -> bool:
    """A state of an instance of a fragment from this file: the fragment is checked as a machine itself."""
    return st.instance is not None and _source(st.span) is _source(m.span)


def _source(span: Span | None) -> object:
    """The file a span points into (None without a span)."""
    return span.source if span is not None else None


__all__ = ["check_call_reads"]
