"""Show IR expressions as `.skm` source, through the canonical printer (one precedence table)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillc.ir import expr as ir
from skillc.syntax import nodes as n
from skillc.syntax.printer import expr as print_expr


def to_ast(e: ir.Expr) -> n.Expr:
    """The AST an IR expression could have been parsed from."""
    convert = _TO_AST.get(type(e))
    if convert is None:
        raise TypeError(f"cannot show {type(e).__name__}")
    return convert(e)


def _items(items: tuple[ir.Expr, ...]) -> tuple[n.Expr, ...]:
    return tuple(to_ast(i) for i in items)


# One converter per IR class, looked up by the node's exact class; each takes its own class (hence Any).
_TO_AST: dict[type[ir.Expr], Callable[[Any], n.Expr]] = {
    ir.Var: lambda e: n.Name(id=e.name),
    ir.Label: lambda e: n.Name(id=e.value),
    ir.Const: lambda e: _const(e.value),
    ir.BinOp: lambda e: n.BinOp(op=e.op, left=to_ast(e.left), right=to_ast(e.right)),
    ir.Not: lambda e: n.Not(operand=to_ast(e.operand)),
    ir.Neg: lambda e: n.Neg(operand=to_ast(e.operand)),
    ir.GetField: lambda e: n.Field(obj=to_ast(e.obj), name=e.field),
    ir.GetIndex: lambda e: n.Index(obj=to_ast(e.obj), key=to_ast(e.key)),
    ir.Call: lambda e: n.CallExpr(func=e.func, args=_items(e.args)),
    ir.ListExpr: lambda e: n.ListLit(items=_items(e.items)),
    ir.InSet: lambda e: n.BinOp(op="in", left=to_ast(e.operand), right=n.SetLit(items=_items(e.items))),
}


def _const(v: object) -> n.Expr:
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
