"""Do a Choice state's rules cover every input? Asked of Z3 in the source's own number model.

JSON numbers are never NaN or infinite, so ASL's numeric comparisons are
decided over the reals here (the checker's float model, IEEE doubles, would
find NaN uncovered by `x < 0` and `x >= 0`). Only the expressions the ASL
importer generates occur: comparisons of a path with a literal or another
path, `and`, `or`, `not`, and free Booleans for what is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import z3

from skillc.check import smt
from skillc.syntax import nodes as n
from skillc.syntax.strings import encode_plain

_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


class _Encoder:
    def __init__(self, types: dict[str, str]) -> None:
        self.types = types
        self.vars: dict[str, z3.ExprRef] = {}

    def var(self, name: str) -> z3.ExprRef:
        if name not in self.vars:
            t = self.types.get(name, "bool")
            self.vars[name] = {"float": z3.Real, "str": z3.String}.get(t, z3.Bool)(name)
        return self.vars[name]

    def encode(self, e: n.Expr) -> z3.ExprRef:
        """The Z3 term of an expression the ASL importer generates."""
        method = _ENCODE.get(type(e))
        if method is None:
            raise ValueError(f"unexpected expression {type(e).__name__}")
        return method(self, e)

    def _binop(self, e: n.BinOp) -> z3.ExprRef:
        if e.op in ("and", "or"):
            f = z3.And if e.op == "and" else z3.Or
            return f(self.encode(e.left), self.encode(e.right))
        return _CMP[e.op](self.encode(e.left), self.encode(e.right))


# The AST classes the ASL importer generates, looked up by the node's exact class; any
# other class is a bug in the importer (tests/frontends/importers/test_dispatch.py lists them).
# Each encoder takes its own node class (hence Any).
_ENCODE: dict[type[n.Expr], Callable[[_Encoder, Any], z3.ExprRef]] = {
    n.BinOp: _Encoder._binop,
    n.Not: lambda enc, e: z3.Not(enc.encode(e.operand)),
    n.Neg: lambda enc, e: -enc.encode(e.operand),
    n.Name: lambda enc, e: enc.var(e.id),
    n.BoolLit: lambda enc, e: z3.BoolVal(e.value),
    n.FloatLit: lambda enc, e: z3.RealVal(str(e.value)),
    n.IntLit: lambda enc, e: z3.RealVal(str(e.value)),
    n.StrLit: lambda enc, e: z3.StringVal(e.value),
}


def uncovered(guards: list[n.Expr], types: dict[str, str], timeout_ms: int = 2000) -> tuple[str, dict[str, str]]:
    """("covered", {}), ("gap", a witness: variable -> value) or ("unknown", {})."""
    enc = _Encoder(types)
    solver = smt.solver(timeout_ms)  # a context of its own and a budget in resource units: the same answer anywhere
    solver.add(z3.Not(z3.Or([enc.encode(g) for g in guards])) if guards else z3.BoolVal(True))
    verdict = solver.check()
    if verdict == z3.unsat:
        return "covered", {}
    if verdict != z3.sat:
        return "unknown", {}
    model = solver.model()
    values = {name: smt.model_value(model, v) for name, v in enc.vars.items()}
    return "gap", {name: encode_plain(x) if isinstance(x, str) else str(x) for name, x in values.items()}
