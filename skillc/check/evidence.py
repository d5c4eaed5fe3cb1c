"""Terminal evidence: what a terminal's `requires` reads is assigned on every path into it.

Rejected (SKM213): `terminal done: success { requires answer }` when some path
reaches `done` without assigning `answer`; likewise a predicate
(`requires status == 0`) that reads a variable some path leaves unassigned.
The diagnostic prints that path.
"""

from __future__ import annotations

from collections.abc import Iterator

from skillc.check import codes
from skillc.check.context import CheckContext
from skillc.check.dataflow import dataflow, witness
from skillc.diagnostics import Diagnostic, make
from skillc.ir import expr as ir
from skillc.ir.machine import Machine
from skillc.ir.printexpr import show_expr


def check_terminal_evidence(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Each reachable terminal's evidence, the variables its predicates read included, ⊆ Def(terminal)."""
    flow = dataflow(m, context)
    for name, st in m.states.items():
        if not st.is_terminal or name not in flow.reached:
            continue
        for var in flow.missing(st.requires, flow.defined[name]):
            yield make(codes.EVIDENCE_NOT_ASSIGNED,
                       f"terminal `{name}` requires `{var}`, which may not be assigned when it is reached",
                       st.span_of(f"requires:{var}"), label=f"requires `{var}`", witness=witness(m, var, name),
                       hint=f"assign `{var}` on every path into `{name}`, or drop it from `requires`")
        for predicate in st.predicates:
            for var in flow.missing(sorted(ir.variables(predicate)), flow.defined[name]):
                yield make(codes.EVIDENCE_NOT_ASSIGNED, f"terminal `{name}` requires `{show_expr(predicate)}`, which "
                           f"reads `{var}`, which may not be assigned when it is reached", predicate.span or st.span,
                           label=f"reads `{var}`", witness=witness(m, var, name),
                           hint=f"assign `{var}` on every path into `{name}`, or drop the predicate")
