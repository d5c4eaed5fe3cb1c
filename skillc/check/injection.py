"""Shell injection: text a model or a tool produced, spliced into a `bash` command without `quote()`.

A `bash` command built with `++` runs through `/bin/sh -c`, so a value that
holds `; rm -rf ~` or `$(…)` becomes shell code. Values a model wrote (the
`writes` of model and judge states), tool results (`writes x = stdout`) and
anything an edge assigns from them are *untrusted*; an untrusted value that can
carry text (str, or a list, map or record holding text) must reach a `command`
only through `quote(x)` (SKM510). `trusted(x)` is the explicit, per-value
opt-out for text meant to be shell code (a command a model wrote on purpose).
A command that is a variable as a whole (`command: cmd`) is deliberate and not
reported; enums, numbers and booleans cannot carry shell syntax; inputs come
from the caller and are trusted. The places (`skill_dir`, `workdir`) are
trusted paths, but a path may hold spaces or shell characters, so they too
reach a command only through `quote()` (`quote(skill_dir ++ "/scripts/x.py")`),
as does anything an edge computes from them. The `argv` form needs no quoting at all.
"""

from __future__ import annotations

from collections.abc import Iterator

from skillc.check.context import CheckContext
from skillc.diagnostics import Diagnostic, codes, make
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import Machine

SAFE_CALLS = ("quote", "trusted")


def untrusted_variables(m: Machine) -> set[str]:
    """Variables that can hold model- or tool-produced values, or a place's path (edge assignments propagate them)."""
    tainted = {v for st in m.states.values() if st.kind in ("model", "judge") for v in st.writes}
    tainted |= {var for st in m.states.values() for var, _ in st.bindings}
    tainted |= {name for name, v in m.variables.items() if v.kind == "place"}
    changed = True
    while changed:
        changed = False
        for st in m.states.values():
            for e in st.edges:
                for a in e.assigns:
                    if a.var not in tainted and _mentions(a.value, tainted):
                        tainted.add(a.var)
                        changed = True
    return tainted


def _mentions(e: ir.Expr, names: set[str]) -> bool:
    return any(isinstance(x, ir.Var) and x.name in names for x in ir.walk(e))


def carries_text(t: T.Type) -> bool:
    """True when values of `t` can hold arbitrary text."""
    t = T.strip_optional(t)
    if isinstance(t, T.StrT):
        return True
    if isinstance(t, T.ListT):
        return carries_text(t.item)
    if isinstance(t, T.MapT):
        return True  # keys are text
    if isinstance(t, T.RecordT):
        return any(carries_text(ft) for _, ft in t.fields)
    return False


def _operands(e: ir.Expr) -> Iterator[ir.Expr]:
    """The pieces a `++` chain joins (a lone expression is one piece)."""
    if isinstance(e, ir.BinOp) and e.op == "++":
        yield from _operands(e.left)
        yield from _operands(e.right)
    else:
        yield e


def _unquoted(e: ir.Expr, tainted: set[str], m: Machine) -> ir.Var | None:
    """An untrusted, text-carrying variable in `e` that no `quote()`/`trusted()` wraps."""
    if isinstance(e, ir.Call) and e.func in SAFE_CALLS:
        return None
    if isinstance(e, ir.Var):
        var = m.variables.get(e.name)
        return e if e.name in tainted and var is not None and carries_text(var.type) else None
    if isinstance(e, (ir.GetField, ir.GetIndex)) and not carries_text(e.type):
        return None  # a number or a label picked out of a record stays harmless
    for child in e.children():
        found = _unquoted(child, tainted, m)
        if found is not None:
            return found
    return None


def check_shell_injection(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Untrusted text spliced into a bash `command` must be quoted."""
    calls = [(name, st) for name, st in m.states.items()
             if st.call is not None and st.call.tool == "bash"]
    if not calls:
        return
    tainted = untrusted_variables(m)
    for name, st in calls:
        assert st.call is not None  # `calls` holds the states with a call
        for arg, value in st.call.args:
            parts = list(_operands(value))
            if arg != "command" or len(parts) < 2:
                continue
            for part in parts:
                var = _unquoted(part, tainted, m)
                if var is None:
                    continue
                origin = ("is a path the runtime sets (it may hold spaces or shell characters)"
                          if var.name in m.variables and m.variables[var.name].kind == "place"
                          else "comes from a model or a tool")
                yield make(codes.UNQUOTED_SHELL_VALUE, f"`{var.name}` {origin} and is spliced into the bash "
                           f"command of `{name}` without `quote()`", part.span or st.span,
                           label="unquoted", hint=f"write `quote({var.name})`, or `trusted({var.name})` if it is "
                           "meant to be shell code")
