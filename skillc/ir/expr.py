"""Resolved, typed expressions of the IR (guards, assignments, tool arguments)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from skillc.diagnostics import Span
from skillc.ir.types import Type

_span = attrs.field(default=None, eq=False, repr=False, kw_only=True)


@attrs.frozen
class Expr:
    """Base of IR expressions; every node knows its type."""

    type: Type
    span: Span | None = _span

    def children(self) -> tuple[Expr, ...]:
        return ()


@attrs.frozen
class Var(Expr):
    name: str = attrs.field(kw_only=True)


@attrs.frozen
class Const(Expr):
    """A literal: str, int, float, bool, None or a list of constants."""

    value: Any = attrs.field(kw_only=True)


@attrs.frozen
class Label(Expr):
    """A label of the enum in `type`."""

    value: str = attrs.field(kw_only=True)


@attrs.frozen
class BinOp(Expr):
    op: str = attrs.field(kw_only=True)
    left: Expr = attrs.field(kw_only=True)
    right: Expr = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)


@attrs.frozen
class Not(Expr):
    operand: Expr = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


@attrs.frozen
class Neg(Expr):
    operand: Expr = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


@attrs.frozen
class GetField(Expr):
    obj: Expr = attrs.field(kw_only=True)
    field: str = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return (self.obj,)


@attrs.frozen
class GetIndex(Expr):
    obj: Expr = attrs.field(kw_only=True)
    key: Expr = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return (self.obj, self.key)


@attrs.frozen
class Call(Expr):
    """A built-in function: `len`, `str`, `contains`."""

    func: str = attrs.field(kw_only=True)
    args: tuple[Expr, ...] = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return self.args


@attrs.frozen
class ListExpr(Expr):
    items: tuple[Expr, ...] = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return self.items


@attrs.frozen
class InSet(Expr):
    """`x in {a, b}`."""

    operand: Expr = attrs.field(kw_only=True)
    items: tuple[Expr, ...] = attrs.field(kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return (self.operand, *self.items)


def concat_parts(e: Expr) -> list[Expr]:
    """The operands a chain of `++` joins, left to right (the expression itself when it is not one)."""
    out: list[Expr] = []
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, BinOp) and x.op == "++":
            stack.extend((x.right, x.left))
        else:
            out.append(x)
    return out


def walk(e: Expr) -> Iterator[Expr]:
    """All nodes of an expression, iteratively (depth is bounded by the parser, but be safe)."""
    stack = [e]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children()))


def variables(e: Expr | None) -> set[str]:
    """Names of the variables an expression reads."""
    out: set[str] = set()
    stack = [e] if e is not None else []
    while stack:  # `walk` without the generator: this runs for every guard, argument and assignment of every check
        node = stack.pop()
        if type(node) is Var:
            out.add(node.name)
        else:
            stack.extend(node.children())
    return out


def rename(e: Expr, mapping: Mapping[str, str]) -> Expr:
    """Rename variables (fragment instantiation)."""
    if isinstance(e, Var):
        return attrs.evolve(e, name=mapping.get(e.name, e.name))
    changes: dict[str, Any] = {}
    for a in attrs.fields(type(e)):
        value = getattr(e, a.name)
        if isinstance(value, Expr):
            changes[a.name] = rename(value, mapping)
        elif isinstance(value, tuple) and value and isinstance(value[0], Expr):
            changes[a.name] = tuple(rename(v, mapping) for v in value)
    return attrs.evolve(e, **changes) if changes else e


#: Per node class: its fields after `type` and `span`, as `shape` writes them.
_SHAPE_FIELDS: dict[type, tuple[str, ...]] = {}
_TYPE_TEXT: dict[Type, str] = {}


def shape(e: Expr, name: Callable[[Var], str]) -> str:
    """A text equal for two expressions exactly when they are equal apart from their spans and their variables
    are written the same by `name` (the keys of solver questions: faster than `repr(rename(e, ...))`)."""
    out: list[str] = []
    _shape(e, name, out)
    return "".join(out)


def _shape(e: Expr, name: Callable[[Var], str], out: list[str]) -> None:
    cls = type(e)
    t = e.type
    shown = _TYPE_TEXT.get(t)
    if shown is None:
        shown = repr(t)
        if len(_TYPE_TEXT) < 4096:  # the types of a few documents; a pathological one is just not kept
            _TYPE_TEXT[t] = shown
    if cls is Var:
        out.append(f"V({shown},{name(e)})")  # type: ignore[arg-type]
        return
    fields = _SHAPE_FIELDS.get(cls)
    if fields is None:
        fields = _SHAPE_FIELDS[cls] = tuple(a.name for a in attrs.fields(cls) if a.name not in ("type", "span"))
    out.append(cls.__name__)
    out.append("(")
    out.append(shown)
    for f in fields:
        value = getattr(e, f)
        out.append(",")
        if isinstance(value, Expr):
            _shape(value, name, out)
        elif type(value) is tuple:
            out.append("(")
            for item in value:
                if isinstance(item, Expr):
                    _shape(item, name, out)
                else:
                    out.append(repr(item))
                out.append(",")
            out.append(")")
        else:
            out.append(repr(value))
    out.append(")")
