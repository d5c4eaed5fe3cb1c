"""Resolve and type-check AST expressions into IR expressions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from skillc.diagnostics import Code, Diagnostic, Suggestion, codes, make
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.suggest import did_you_mean
from skillc.ir.toolkit import WORLD_FUNCTIONS
from skillc.ir.types import Type
from skillc.syntax import nodes as n

_COMPARE = {"==", "!=", "<", "<=", ">", ">="}
_ARITH = {"+", "-", "*", "/", "%"}
FUNCTIONS = ("len", "str", "contains", "quote", "trusted")
#: Functions over the world (`exists(path)`, `file(path)`): only in a terminal's `requires`.
WORLD = tuple(WORLD_FUNCTIONS)


class ExprLowerer:
    """Lower expressions against a variable table, reporting into a shared list.

    `world` allows the world functions (`exists`, `file`): a terminal's `requires` lowers with it.
    """

    def __init__(self, variables: dict[str, Type], report: Callable[[Diagnostic], None], world: bool = False) -> None:
        self.variables = variables
        self.report = report
        self.world = world

    # ------------------------------------------------------------ entry points

    def lower(self, e: n.Expr, expected: Type | None = None) -> ir.Expr:
        """Lower `e`; `expected` lets bare names resolve to labels of an enum."""
        return _LOWER[type(e)](self, e, expected)

    def constant(self, e: n.Expr, expected: Type) -> ir.Expr:
        """Lower an initialiser, which must be a constant (literals, labels, lists of them)."""
        value = self.lower(e, expected)
        if not _is_constant(value):
            self.report(make(codes.NON_CONSTANT_INITIALISER, "an initial value must be a constant", e.span,
                             label="reads a variable or computes"))
            return ir.Const(T.ERROR, value=None, span=e.span)
        return value

    # ------------------------------------------------------------ helpers

    def _error(self, code: Code, message: str, e: n.Expr, label: str = "",
               hint: str | Suggestion | None = None) -> ir.Expr:
        self.report(make(code, message, e.span, label=label, hint=hint or None))
        return ir.Const(T.ERROR, value=None, span=e.span)

    @staticmethod
    def _bad(*types: Type) -> bool:
        return any(isinstance(t, T.ErrorT) for t in types)

    def _dotted(self, e: n.Expr) -> str | None:
        """`a.b.c` as one name when it is written as names and dots only."""
        if isinstance(e, n.Name):
            return e.id
        if isinstance(e, n.Field):
            head = self._dotted(e.obj)
            return f"{head}.{e.name}" if head is not None else None
        return None

    # ------------------------------------------------------------ leaves

    def _Name(self, e: n.Name, expected: Type | None) -> ir.Expr:
        t = self.variables.get(e.id)
        if t is not None:
            return ir.Var(t, name=e.id, span=e.span)
        enum = T.strip_optional(expected) if expected is not None else None
        if isinstance(enum, T.EnumT):
            if e.id in enum.labels:
                return ir.Label(enum, value=e.id, span=e.span)
            return self._error(codes.UNDEFINED_LABEL, f"`{e.id}` is not a label of {T.show(enum)}", e,
                               label="unknown label", hint=did_you_mean(e.id, enum.labels)
                               or "labels: " + ", ".join(enum.labels))
        return self._error(codes.UNDEFINED_VARIABLE, f"undefined variable `{e.id}`", e, label="not declared",
                           hint=did_you_mean(e.id, self.variables))

    def _IntLit(self, e: n.IntLit, expected: Type | None) -> ir.Expr:
        return ir.Const(T.INT, value=e.value, span=e.span)

    def _FloatLit(self, e: n.FloatLit, expected: Type | None) -> ir.Expr:
        return ir.Const(T.FLOAT, value=e.value, span=e.span)

    def _StrLit(self, e: n.StrLit, expected: Type | None) -> ir.Expr:
        return ir.Const(T.STR, value=e.value, span=e.span)

    def _BoolLit(self, e: n.BoolLit, expected: Type | None) -> ir.Expr:
        return ir.Const(T.BOOL, value=e.value, span=e.span)

    def _NoneLit(self, e: n.NoneLit, expected: Type | None) -> ir.Expr:
        return ir.Const(T.NONE, value=None, span=e.span)

    def _ListLit(self, e: n.ListLit, expected: Type | None) -> ir.Expr:
        item_expected = expected.item if isinstance(expected, T.ListT) else None
        items = tuple(self.lower(i, item_expected) for i in e.items)
        if not items:
            return ir.ListExpr(T.ListT(T.ANY), items=(), span=e.span)
        if item_expected is not None and all(T.assignable(i.type, item_expected) for i in items):
            return ir.ListExpr(T.ListT(item_expected), items=items, span=e.span)
        item_t = items[0].type
        for i, node in zip(items[1:], e.items[1:]):
            if not (T.assignable(i.type, item_t) or T.assignable(item_t, i.type)):
                return self._error(codes.TYPE_MISMATCH, f"list items mix {T.show(item_t)} and {T.show(i.type)}", node,
                                   label="different type")
            if isinstance(i.type, T.FloatT):
                item_t = i.type
        return ir.ListExpr(T.ListT(item_t), items=items, span=e.span)

    def _SetLit(self, e: n.SetLit, expected: Type | None) -> ir.Expr:
        if not e.items and isinstance(T.strip_optional(expected) if expected else None, T.MapT):
            return ir.Const(T.MapT(T.ANY), value={}, span=e.span)
        return self._error(codes.TYPE_MISMATCH, "a set `{…}` may only appear on the right of `in`", e,
                           hint="`{}` alone is the empty map")

    # ------------------------------------------------------------ operators

    def _Not(self, e: n.Not, expected: Type | None) -> ir.Expr:
        x = self.lower(e.operand, T.BOOL)
        if not self._bad(x.type) and not isinstance(x.type, T.BoolT):
            return self._error(codes.TYPE_MISMATCH, f"`not` needs a bool, found {T.show(x.type)}", e.operand,
                               label=T.show(x.type))
        return ir.Not(T.BOOL, operand=x, span=e.span)

    def _Neg(self, e: n.Neg, expected: Type | None) -> ir.Expr:
        x = self.lower(e.operand)
        if self._bad(x.type):
            return ir.Neg(T.ERROR, operand=x, span=e.span)
        if not T.is_numeric(x.type):
            return self._error(codes.TYPE_MISMATCH, f"`-` needs a number, found {T.show(x.type)}", e.operand,
                               label=T.show(x.type))
        if isinstance(x, ir.Const):
            return ir.Const(x.type, value=-x.value, span=e.span)
        return ir.Neg(x.type, operand=x, span=e.span)

    def _pair(self, e: n.BinOp) -> tuple[ir.Expr, ir.Expr]:
        """Lower both operands; a bare name that is not a variable may be a label of the other side."""
        def is_label_candidate(x: n.Expr) -> bool:
            return isinstance(x, n.Name) and x.id not in self.variables

        if is_label_candidate(e.left) and not is_label_candidate(e.right):
            right = self.lower(e.right)
            left = self.lower(e.left, right.type)
        else:
            left = self.lower(e.left)
            right = self.lower(e.right, left.type)
        return left, right

    def _BinOp(self, e: n.BinOp, expected: Type | None) -> ir.Expr:
        op = e.op
        if op in ("and", "or"):
            left, right = self.lower(e.left, T.BOOL), self.lower(e.right, T.BOOL)
            for side, node in ((left, e.left), (right, e.right)):
                if not self._bad(side.type) and not isinstance(side.type, T.BoolT):
                    return self._error(codes.TYPE_MISMATCH, f"`{op}` needs bool operands, found {T.show(side.type)}",
                                       node, label=T.show(side.type))
            return ir.BinOp(T.BOOL, op=op, left=left, right=right, span=e.span)
        if op == "in":
            return self._member(e)
        left, right = self._pair(e)
        if self._bad(left.type, right.type):
            return ir.BinOp(T.BOOL if op in _COMPARE else T.ERROR, op=op, left=left, right=right, span=e.span)
        lt, rt = left.type, right.type
        if op in ("==", "!="):
            if not T.comparable(lt, rt):
                return self._mismatch(e, lt, rt, f"cannot compare {T.show(lt)} with {T.show(rt)}")
            return ir.BinOp(T.BOOL, op=op, left=left, right=right, span=e.span)
        if op in _COMPARE:
            if not (T.is_numeric(lt) and T.is_numeric(rt)):
                return self._mismatch(e, lt, rt, f"`{op}` compares numbers, not {T.show(lt)} and {T.show(rt)}")
            return ir.BinOp(T.BOOL, op=op, left=left, right=right, span=e.span)
        if op == "++":
            for side_t, node in ((lt, e.left), (rt, e.right)):
                if not T.is_scalar(side_t):
                    return self._error(codes.TYPE_MISMATCH, f"`++` joins scalars into a string, not {T.show(side_t)}",
                                       node, label=T.show(side_t))
            return ir.BinOp(T.STR, op=op, left=left, right=right, span=e.span)
        if op in _ARITH:
            if not (T.is_numeric(lt) and T.is_numeric(rt)):
                hint = "use `++` to join strings" if op == "+" and T.StrT() in (lt, rt) else None
                return self._mismatch(e, lt, rt, f"`{op}` needs numbers, not {T.show(lt)} and {T.show(rt)}", hint)
            result = T.FLOAT if op == "/" or T.FLOAT in (lt, rt) else T.INT
            return ir.BinOp(result, op=op, left=left, right=right, span=e.span)
        raise AssertionError(op)

    def _mismatch(self, e: n.BinOp, lt: Type, rt: Type, message: str, hint: str | None = None) -> ir.Expr:
        return self._error(codes.TYPE_MISMATCH, message, e, label=f"{T.show(lt)} {e.op} {T.show(rt)}", hint=hint)

    def _member(self, e: n.BinOp) -> ir.Expr:
        if isinstance(e.right, n.SetLit):
            left = self.lower(e.left)
            items = tuple(self.lower(i, left.type) for i in e.right.items)
            for item, node in zip(items, e.right.items):
                if not self._bad(left.type, item.type) and not T.comparable(left.type, item.type):
                    return self._error(codes.TYPE_MISMATCH,
                                       f"cannot test {T.show(left.type)} against {T.show(item.type)}",
                                       node, label=T.show(item.type))
            return ir.InSet(T.BOOL, operand=left, items=items, span=e.span)
        right = self.lower(e.right)
        rt = T.strip_optional(right.type)
        left = self.lower(e.left, rt.item if isinstance(rt, T.ListT) else None)
        ok = T.searchable(right.type, left.type)
        if ok is None:
            return self._error(codes.TYPE_MISMATCH,
                               f"`in` needs a list, map, string or `{{…}}` on the right, not {T.show(rt)}",
                               e.right, label=T.show(rt))
        if not ok:
            return self._error(codes.TYPE_MISMATCH, f"cannot look for {T.show(left.type)} in {T.show(rt)}", e.left,
                               label=T.show(left.type))
        return ir.Call(T.BOOL, func="contains", args=(right, left), span=e.span)

    # ------------------------------------------------------------ postfix and calls

    def _Field(self, e: n.Field, expected: Type | None) -> ir.Expr:
        dotted = self._dotted(e)
        if dotted is not None and dotted in self.variables:
            return ir.Var(self.variables[dotted], name=dotted, span=e.span)
        obj = self.lower(e.obj)
        if self._bad(obj.type):
            return ir.GetField(T.ERROR, obj=obj, field=e.name, span=e.span)
        base = T.strip_optional(obj.type)
        if not isinstance(base, T.RecordT):
            return self._error(codes.TYPE_MISMATCH, f"{T.show(obj.type)} has no fields", e, label=f"`.{e.name}`")
        ft = base.field(e.name)
        if ft is None:
            return self._error(codes.TYPE_MISMATCH, f"record {base.name} has no field `{e.name}`", e,
                               label="unknown field", hint=did_you_mean(e.name, [f for f, _ in base.fields]))
        if isinstance(obj.type, T.OptionalT) and not isinstance(ft, T.OptionalT):
            ft = T.OptionalT(ft)
        return ir.GetField(ft, obj=obj, field=e.name, span=e.span)

    def _Index(self, e: n.Index, expected: Type | None) -> ir.Expr:
        obj = self.lower(e.obj)
        key = self.lower(e.key)
        if self._bad(obj.type, key.type):
            return ir.GetIndex(T.ERROR, obj=obj, key=key, span=e.span)
        base = obj.type
        if isinstance(base, T.ListT):
            if not isinstance(key.type, T.IntT):
                return self._error(codes.TYPE_MISMATCH, f"list index must be int, not {T.show(key.type)}", e.key)
            return ir.GetIndex(base.item, obj=obj, key=key, span=e.span)
        if isinstance(base, T.MapT):
            if not isinstance(key.type, T.StrT):
                return self._error(codes.TYPE_MISMATCH, f"map key must be str, not {T.show(key.type)}", e.key)
            return ir.GetIndex(base.value, obj=obj, key=key, span=e.span)
        return self._error(codes.TYPE_MISMATCH, f"{T.show(base)} cannot be indexed", e.obj, label=T.show(base))

    def _CallExpr(self, e: n.CallExpr, expected: Type | None) -> ir.Expr:
        if e.func in WORLD:
            return self._world(e)
        if e.func not in FUNCTIONS:
            known = FUNCTIONS + WORLD if self.world else FUNCTIONS
            return self._error(codes.BAD_FUNCTION_CALL, f"unknown function `{e.func}`", e, label="not a built-in",
                               hint=did_you_mean(e.func, known) or "built-ins: " + ", ".join(known))
        args = tuple(self.lower(a) for a in e.args)
        arity = {"len": 1, "str": 1, "contains": 2, "quote": 1, "trusted": 1}[e.func]
        if len(args) != arity:
            return self._error(codes.BAD_FUNCTION_CALL, f"`{e.func}` takes {arity} argument{'s' if arity > 1 else ''}, "
                               f"got {len(args)}", e)
        if self._bad(*(a.type for a in args)):
            return ir.Call(T.ERROR, func=e.func, args=args, span=e.span)
        if e.func == "len":
            t = T.strip_optional(args[0].type)
            if not isinstance(t, (T.StrT, T.ListT, T.MapT)):
                return self._error(codes.BAD_FUNCTION_CALL, f"`len` needs a str, list or map, not {T.show(t)}",
                                   e.args[0])
            return ir.Call(T.INT, func="len", args=args, span=e.span)
        if e.func == "quote":
            if not T.is_scalar(T.strip_optional(args[0].type)):
                return self._error(codes.BAD_FUNCTION_CALL,
                                   f"`quote` shell-quotes a scalar, not {T.show(args[0].type)}", e.args[0])
            return ir.Call(T.STR, func="quote", args=args, span=e.span)
        if e.func == "trusted":  # the value unchanged: marks text meant as shell code (see check/injection.py)
            return ir.Call(args[0].type, func="trusted", args=args, span=e.span)
        if e.func == "str":  # scalars as text; lists, maps and records as JSON
            return ir.Call(T.STR, func="str", args=args, span=e.span)
        hay, needle = args
        ok = T.searchable(hay.type, needle.type)
        if ok is None:
            return self._error(codes.BAD_FUNCTION_CALL,
                               f"`contains` searches a list, map or str, not {T.show(hay.type)}", e.args[0])
        if not ok:
            return self._error(codes.BAD_FUNCTION_CALL, f"cannot look for {T.show(needle.type)} in {T.show(hay.type)}",
                               e.args[1])
        return ir.Call(T.BOOL, func="contains", args=args, span=e.span)


    def _world(self, e: n.CallExpr) -> ir.Expr:
        """`exists(path)` or `file(path)`: evaluated over the work folder on arrival at a terminal, so only there."""
        params, result = WORLD_FUNCTIONS[e.func]
        args = tuple(self.lower(a) for a in e.args)
        if not self.world:
            return self._error(codes.WORLD_FUNCTION_OUTSIDE_REQUIRES, f"`{e.func}` looks at the world, which only a "
                               "terminal's `requires` may do", e, label="not in `requires`",
                               hint="world predicates are evaluated on arrival at a terminal; elsewhere, read the "
                               "file in a tool state (`call read(path: …)`) and test its result")
        if len(args) != len(params):
            return self._error(codes.BAD_FUNCTION_CALL, f"`{e.func}` takes {len(params)} argument"
                               f"{'s' if len(params) != 1 else ''}, got {len(args)}", e)
        for arg, want, node in zip(args, params, e.args):
            if not self._bad(arg.type) and not T.assignable(arg.type, want):
                return self._error(codes.BAD_FUNCTION_CALL, f"`{e.func}` takes a {T.show(want)} path, not "
                                   f"{T.show(arg.type)}", node, label=T.show(arg.type))
        return ir.Call(T.ERROR if self._bad(*(a.type for a in args)) else result, func=e.func, args=args, span=e.span)


# One lowering method per AST expression class, looked up by the node's exact class.
# Each method takes its own node class (hence Any).
_LOWER: dict[type[n.Expr], Callable[[ExprLowerer, Any, Type | None], ir.Expr]] = {
    n.Name: ExprLowerer._Name,
    n.IntLit: ExprLowerer._IntLit,
    n.FloatLit: ExprLowerer._FloatLit,
    n.StrLit: ExprLowerer._StrLit,
    n.BoolLit: ExprLowerer._BoolLit,
    n.NoneLit: ExprLowerer._NoneLit,
    n.ListLit: ExprLowerer._ListLit,
    n.SetLit: ExprLowerer._SetLit,
    n.Not: ExprLowerer._Not,
    n.Neg: ExprLowerer._Neg,
    n.BinOp: ExprLowerer._BinOp,
    n.Field: ExprLowerer._Field,
    n.Index: ExprLowerer._Index,
    n.CallExpr: ExprLowerer._CallExpr,
}


def _is_constant(e: ir.Expr) -> bool:
    if isinstance(e, (ir.Const, ir.Label)):
        return True
    if isinstance(e, ir.ListExpr):
        return all(_is_constant(i) for i in e.items)
    return False
