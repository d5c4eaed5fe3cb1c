"""Show IR expressions as `.skm` source, through the canonical printer (one precedence table)."""

from __future__ import annotations

from typing import Any

from skillc.ir import expr as ir
from skillc.syntax import nodes as n
from skillc.syntax.printer import expr as print_expr


def to_ast(e: ir.Expr) -> n.Expr:
    """The AST an IR expression could have been parsed from."""
    if isinstance(e, ir.Var):
        return n.Name(id=e.name)
    if isinstance(e, ir.Label):
        return n.Name(id=e.value)
    if isinstance(e, ir.Const):
        return _const(e.value)
    if isinstance(e, ir.BinOp):
        return n.BinOp(op=e.op, left=to_ast(e.left), right=to_ast(e.right))
    if isinstance(e, ir.Not):
        return n.Not(operand=to_ast(e.operand))
    if isinstance(e, ir.Neg):
        return n.Neg(operand=to_ast(e.operand))
    if isinstance(e, ir.GetField):
        return n.Field(obj=to_ast(e.obj), name=e.field)
    if isinstance(e, ir.GetIndex):
        return n.Index(obj=to_ast(e.obj), key=to_ast(e.key))
    if isinstance(e, ir.Call):
        return n.CallExpr(func=e.func, args=tuple(to_ast(a) for a in e.args))
    if isinstance(e, ir.ListExpr):
        return n.ListLit(items=tuple(to_ast(i) for i in e.items))
    if isinstance(e, ir.InSet):
        return n.BinOp(op="in", left=to_ast(e.operand), right=n.SetLit(items=tuple(to_ast(i) for i in e.items)))
    raise TypeError(f"cannot show {type(e).__name__}")


def _const(v: Any) -> n.Expr:
    if v is None:
        return n.NoneLit()
    if isinstance(v, bool):
        return n.BoolLit(value=v)
    if isinstance(v, (int, float)) and v < 0:
        return n.Neg(operand=_const(-v))
    if isinstance(v, int):
        return n.IntLit(value=v)
    if isinstance(v, float):
        return n.FloatLit(value=v)
    if isinstance(v, str):
        return n.StrLit(value=v)
    if isinstance(v, list):
        return n.ListLit(items=tuple(_const(x) for x in v))
    return n.SetLit(items=())  # the empty map, the only map constant


def show_expr(e: ir.Expr) -> str:
    """The expression as it would be written."""
    return print_expr(to_ast(e))
