"""Interface checks beyond name resolution: a judge writes exactly one label variable.

Tool names, argument names and types, result bindings and the labels in
guards are resolved while lowering (SKM104, SKM112–SKM114, SKM105). Rejected
here (SKM230): a judge whose `writes` is not exactly one variable of an enum type.
"""

from __future__ import annotations

from collections.abc import Iterator

from skillc.check import codes
from skillc.check.context import CheckContext
from skillc.diagnostics import Diagnostic, make
from skillc.ir import types as T
from skillc.ir.machine import Machine


def check_interface(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Judges write one enum variable."""
    for name, st in m.states.items():
        if st.kind != "judge":
            continue
        if len(st.writes) != 1:
            yield make(codes.JUDGE_OUTPUT,
                       f"judge `{name}` writes {len(st.writes)} variables; a judge writes exactly one label",
                       st.span, label="judge", hint="write one `enum` variable; use a `model` state for other outputs")
            continue
        var = m.variables[st.writes[0]]
        if not isinstance(var.type, T.EnumT):
            yield make(codes.JUDGE_OUTPUT,
                       f"judge `{name}` writes `{var.name}`, which is {T.show(var.type)}, not an enum",
                       st.span, label="judge", hint=f"declare `{var.name}` as `enum {{ … }}` or use a `model` state")
