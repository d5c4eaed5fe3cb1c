"""Show IR expressions as `.skm` source (for prose renderings and messages)."""

from __future__ import annotations

from skillc.ir import expr as ir
from skillc.syntax.strings import encode_plain

_PREC = {"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4,
         "+": 5, "-": 5, "++": 5, "*": 6, "/": 6, "%": 6}


def show_expr(e: ir.Expr) -> str:
    """The expression as it would be written (parenthesised where precedence needs it)."""
    return _show(e)[0]


def _show(e: ir.Expr) -> tuple[str, int]:
    if isinstance(e, ir.Var):
        return e.name, 9
    if isinstance(e, ir.Const):
        v = e.value
        if isinstance(v, str):
            return encode_plain(v), 9
        if isinstance(v, bool):
            return ("true" if v else "false"), 9
        if v is None:
            return "none", 9
        if isinstance(v, list):
            return "[" + ", ".join(show_expr(ir.Const(e.type, value=x)) for x in v) + "]", 9
        if isinstance(v, dict):
            return "{}", 9
        return repr(v) if isinstance(v, float) else str(v), 9
    if isinstance(e, ir.Label):
        return e.value, 9
    if isinstance(e, ir.BinOp):
        p = _PREC[e.op]
        left, lp = _show(e.left)
        right, rp = _show(e.right)
        return f"{left if lp > p - (p != 4) else f'({left})'} {e.op} {right if rp > p else f'({right})'}", p
    if isinstance(e, ir.Not):
        s, p = _show(e.operand)
        return f"not {s if p >= 3 else f'({s})'}", 3
    if isinstance(e, ir.Neg):
        s, p = _show(e.operand)
        return f"-{s if p >= 7 else f'({s})'}", 7
    if isinstance(e, ir.GetField):
        s, p = _show(e.obj)
        return f"{s if p >= 8 else f'({s})'}.{e.field}", 8
    if isinstance(e, ir.GetIndex):
        s, p = _show(e.obj)
        return f"{s if p >= 8 else f'({s})'}[{show_expr(e.key)}]", 8
    if isinstance(e, ir.Call):
        if e.func == "contains" and len(e.args) == 2:
            return f"contains({show_expr(e.args[0])}, {show_expr(e.args[1])})", 9
        return f"{e.func}(" + ", ".join(show_expr(a) for a in e.args) + ")", 9
    if isinstance(e, ir.ListExpr):
        return "[" + ", ".join(show_expr(i) for i in e.items) + "]", 9
    if isinstance(e, ir.InSet):
        return f"{_show(e.operand)[0]} in {{" + ", ".join(show_expr(i) for i in e.items) + "}", 4
    return "?", 9
