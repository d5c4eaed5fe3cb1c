"""Evaluate IR expressions over concrete values: the runtime's guard semantics, in one place.

Values are JSON-like: `str`, `int`, `float`, `bool`, `None` (none), lists,
dicts (maps and records) and enum labels as `str`. Errors that depend on
values (a missing key, an index out of range, division by zero, an int too
large for a float, an unset variable) raise `EvalError`; type errors cannot happen in a lowered machine.
"""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable, Mapping
from typing import Any

from skillc.ir import expr as ir


Env = Mapping[str, Any]


class EvalError(Exception):
    """A guard or assignment could not be evaluated with these values."""


class UnsetVariable(EvalError):
    """The expression read a variable that has no value."""

    def __init__(self, name: str) -> None:
        super().__init__(f"variable `{name}` has no value")
        self.name = name


def text(value: Any) -> str:
    """How a value prints inside `++` and `str()`: scalars plainly, structures as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (int, str)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def evaluate(e: ir.Expr, env: Mapping[str, Any]) -> Any:
    """The value of an expression; `env` maps assigned variables to values."""
    method = _EVAL.get(type(e))
    if method is None:  # pragma: no cover - every IR class is listed
        raise TypeError(f"cannot evaluate {type(e).__name__}")
    return method(e, env)


def _var(e: ir.Var, env: Env) -> Any:
    if e.name not in env:
        raise UnsetVariable(e.name)
    return env[e.name]


def _binop(e: ir.BinOp, env: Env) -> Any:
    op = e.op
    if op == "and":
        return bool(evaluate(e.left, env)) and bool(evaluate(e.right, env))
    if op == "or":
        return bool(evaluate(e.left, env)) or bool(evaluate(e.right, env))
    a, b = evaluate(e.left, env), evaluate(e.right, env)
    if op == "==":
        return _equal(a, b)
    if op == "!=":
        return not _equal(a, b)
    if op == "++":
        return text(a) + text(b)
    try:
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "%":
            return a % b
    except ZeroDivisionError:
        raise EvalError(f"division by zero in `{op}`") from None
    except OverflowError:  # an int beyond the range of a float, beside a float or in `/`
        raise EvalError(f"number too large for a float in `{op}`") from None
    except TypeError:
        raise EvalError(f"`{op}` on none") from None
    raise AssertionError(op)


def _equal(a: Any, b: Any) -> bool:
    """Equality in which `true` is not `1` (Python's bool is an int)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)


def _index(e: ir.GetIndex, env: Env) -> Any:
    obj, key = evaluate(e.obj, env), evaluate(e.key, env)
    try:
        return obj[key]
    except (IndexError, KeyError, TypeError):
        raise EvalError(f"no item {key!r}") from None


def _field(e: ir.GetField, env: Env) -> Any:
    obj = evaluate(e.obj, env)
    if obj is None:
        return None
    try:
        return obj[e.field]
    except (KeyError, TypeError):
        raise EvalError(f"no field `{e.field}`") from None


def _call(e: ir.Call, env: Env) -> Any:
    args = [evaluate(a, env) for a in e.args]
    if e.func == "len":
        return len(args[0]) if args[0] is not None else 0
    if e.func == "str":
        return text(args[0])
    if e.func == "quote":
        return shlex.quote(text(args[0]))
    if e.func == "trusted":
        return args[0]
    if e.func == "contains":
        hay, needle = args
        try:
            return hay is not None and needle in hay
        except TypeError:  # none looked up in a string
            raise EvalError("`contains` of none in a string") from None
    raise AssertionError(e.func)


_EVAL: dict[type[ir.Expr], Callable[[Any, Env], Any]] = {
    ir.Var: _var,
    ir.Const: lambda e, env: e.value,
    ir.Label: lambda e, env: e.value,
    ir.BinOp: _binop,
    ir.Not: lambda e, env: not evaluate(e.operand, env),
    ir.Neg: lambda e, env: -evaluate(e.operand, env),
    ir.GetField: _field,
    ir.GetIndex: _index,
    ir.Call: _call,
    ir.ListExpr: lambda e, env: [evaluate(i, env) for i in e.items],
    ir.InSet: lambda e, env: any(_equal(evaluate(e.operand, env), evaluate(i, env)) for i in e.items),
}
