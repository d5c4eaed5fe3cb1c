"""AST nodes for `.skm`: frozen attrs classes named after the grammar rules.

Spans are excluded from equality and repr, so two trees compare equal when their
structure is equal, wherever they came from. Comments are content: a statement
carries the comments above it (`leading`) and the one after it on its line
(`trailing`); a block carries the comment after its opening brace (`header`)
and the comments before its closing brace (`end_comments`).
`blank_before` remembers a blank line in the source and is layout, not content.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Union

import attrs

from skillc.diagnostics.source import Span

@attrs.frozen
class Node:
    """Base of every AST node."""

    span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)

    def children(self) -> Iterator[Node]:
        """Direct child nodes, in source order."""
        for a in attrs.fields(type(self)):
            if not a.eq:
                continue
            value = getattr(self, a.name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, tuple):
                yield from (v for v in value if isinstance(v, Node))


@attrs.frozen
class Stmt(Node):
    """A node that stands on its own line and can carry comments."""

    leading: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    trailing: str | None = attrs.field(default=None, kw_only=True)
    blank_before: bool = attrs.field(default=False, eq=False, repr=False, kw_only=True)


@attrs.frozen
class Block(Stmt):
    """A statement with a brace-delimited body of statements."""

    header: str | None = attrs.field(default=None, kw_only=True)
    end_comments: tuple[str, ...] = attrs.field(default=(), kw_only=True)

    @property
    def body(self) -> tuple[Stmt, ...]:
        items: tuple[Stmt, ...] = getattr(self, "items")  # every subclass declares `items`
        return items


# ---------------------------------------------------------------- expressions


@attrs.frozen
class Expr(Node):
    """Base of expressions."""


@attrs.frozen
class Name(Expr):
    id: str


@attrs.frozen
class IntLit(Expr):
    value: int


@attrs.frozen
class FloatLit(Expr):
    value: float


@attrs.frozen
class StrLit(Expr):
    value: str


@attrs.frozen
class BoolLit(Expr):
    value: bool


@attrs.frozen
class NoneLit(Expr):
    pass


@attrs.frozen
class BinOp(Expr):
    """`left op right` for arithmetic, `++`, comparisons, `and`, `or` and `in`."""

    op: str
    left: Expr
    right: Expr


@attrs.frozen
class Not(Expr):
    operand: Expr


@attrs.frozen
class Neg(Expr):
    operand: Expr


@attrs.frozen
class Field(Expr):
    obj: Expr
    name: str


@attrs.frozen
class Index(Expr):
    obj: Expr
    key: Expr


@attrs.frozen
class CallExpr(Expr):
    func: str
    args: tuple[Expr, ...]


@attrs.frozen
class ListLit(Expr):
    items: tuple[Expr, ...]


@attrs.frozen
class SetLit(Expr):
    """`{a, b}` on the right of `in`."""

    items: tuple[Expr, ...]


def dotted_name(e: Expr) -> str | None:
    """`a.b.c` as one name when the expression is written as names and dots only, else None."""
    parts: list[str] = []
    while isinstance(e, Field):
        parts.append(e.name)
        e = e.obj
    if not isinstance(e, Name):
        return None
    parts.append(e.id)
    return ".".join(reversed(parts))


def name_expr(dotted: str) -> Expr:
    """The expression a (dotted) name is written as: `a.b` is `Field(Name(a), b)`."""
    head, *rest = dotted.split(".")
    out: Expr = Name(head)
    for part in rest:
        out = Field(out, part)
    return out


# ---------------------------------------------------------------- types


@attrs.frozen
class TypeExpr(Node):
    """Base of written types."""


@attrs.frozen
class NamedType(TypeExpr):
    name: str


@attrs.frozen
class ListType(TypeExpr):
    item: TypeExpr


@attrs.frozen
class MapType(TypeExpr):
    key: TypeExpr
    value: TypeExpr


@attrs.frozen
class EnumType(TypeExpr):
    labels: tuple[str, ...]


@attrs.frozen
class OptionalType(TypeExpr):
    inner: TypeExpr


# ---------------------------------------------------------------- small pieces


@attrs.frozen
class Param(Node):
    name: str
    type: TypeExpr


@attrs.frozen
class Arg(Node):
    name: str
    value: Expr


@attrs.frozen
class Binding(Node):
    """`param: target` in a `use`."""

    name: str
    target: str


@attrs.frozen
class Assign(Node):
    """`target = value`, `target += value` or `target -= value` on an edge."""

    target: str
    op: str
    value: Expr


@attrs.frozen
class WriteItem(Node):
    """`var` or `var = result` in a `writes` list."""

    var: str
    result: str | None = None


@attrs.frozen
class Provenance(Node):
    """`from "FILE":START-END`: where in the skill document this came from."""

    file: str
    start: int
    end: int | None = None


# ---------------------------------------------------------------- statements


@attrs.frozen
class Doc(Stmt):
    text: str


@attrs.frozen
class SourceDecl(Stmt):
    path: str


@attrs.frozen
class Import(Stmt):
    path: str


@attrs.frozen
class ToolDecl(Stmt):
    name: str
    params: tuple[Param, ...]
    results: tuple[Param, ...]
    #: `from mcp "docs"`: the MCP server (a name of `[tool.skillc.mcp]`) that serves the tool; None: not MCP.
    mcp: str | None = None
    #: `as "get-page"`: the tool's name on that server, when it is not `name`.
    remote: str | None = None
    #: Where the server's name is (for diagnostics about it).
    mcp_span: Span | None = attrs.field(default=None, eq=False, repr=False)


@attrs.frozen
class FieldDecl(Stmt):
    name: str
    type: TypeExpr


@attrs.frozen
class RecordDecl(Block):
    name: str
    items: tuple[FieldDecl, ...]


@attrs.frozen
class EnumDecl(Stmt):
    name: str
    labels: tuple[str, ...]


@attrs.frozen
class VarDecl(Stmt):
    """`input NAME: T [= init]` or `var NAME: T [= init]`."""

    kind: str
    name: str
    type: TypeExpr
    init: Expr | None = None


@attrs.frozen
class CounterDecl(Stmt):
    name: str
    max: int


@attrs.frozen
class Start(Stmt):
    target: str


@attrs.frozen
class Reads(Stmt):
    names: tuple[str, ...]


@attrs.frozen
class Writes(Stmt):
    items: tuple[WriteItem, ...]


@attrs.frozen
class Prompt(Stmt):
    text: str


@attrs.frozen
class Call(Stmt):
    tool: str
    args: tuple[Arg, ...]


@attrs.frozen
class From(Stmt):
    where: Provenance


@attrs.frozen
class Edge(Stmt):
    """`when GUARD -> target { assigns }`; `guard` is None for the default edge."""

    guard: Expr | None
    target: str
    assigns: tuple[Assign, ...] = ()


def _evidence(items: Iterable[Expr | str]) -> tuple[Expr, ...]:
    """Evidence items as expressions; a (dotted) name may be given as text."""
    return tuple(name_expr(i) if isinstance(i, str) else i for i in items)


@attrs.frozen
class Requires(Stmt):
    """`requires answer, status == 0, exists("report.md")`: a terminal's evidence, in order.

    A (dotted) name is a variable that must hold a value on arrival; any other item is a Boolean
    predicate. Items may be given as text for names (`Requires(("answer",))`).
    """

    evidence: tuple[Expr, ...] = attrs.field(converter=_evidence)

    @property
    def names(self) -> tuple[str, ...]:
        """The items written as (dotted) names, in order (predicates left out)."""
        return tuple(name for name in map(dotted_name, self.evidence) if name is not None)


StateItem = Union[Reads, Writes, Prompt, Call, Doc, From, Edge]


@attrs.frozen
class State(Block):
    """A `model`, `judge` or `tool` state."""

    kind: str
    name: str
    items: tuple[StateItem, ...]


@attrs.frozen
class Terminal(Block):
    name: str
    outcome: str
    items: tuple[Stmt, ...] = ()


@attrs.frozen
class Fallback(Block):
    items: tuple[Stmt, ...] = ()


@attrs.frozen
class Rule(Stmt):
    """`rule required OP`, `rule order OP before OP`, `rule forbid OP`, `rule ends OP in OUTCOME`,
    `rule reads B from A`, with its quotation (`outcome` only for `ends`)."""

    kind: str
    ops: tuple[str, ...]
    quote: str
    where: Provenance | None = None
    outcome: str | None = None


@attrs.frozen
class Use(Stmt):
    """`use FRAGMENT as NAME(param: var, …) -> (exit: state, …)`."""

    fragment: str
    name: str
    bindings: tuple[Binding, ...]
    exits: tuple[Binding, ...] = ()


@attrs.frozen
class UseTools(Stmt):
    """`use tools KIT` (the whole kit) or `use tools KIT(tool, …)` (those tools of it)."""

    kit: str
    tools: tuple[str, ...] = ()


@attrs.frozen
class Allow(Stmt):
    """`allow "Read", "Bash(git diff:*)"`: capability entries in allowed-tools spelling, as written."""

    entries: tuple[str, ...]
    entry_spans: tuple[Span | None, ...] = attrs.field(default=(), eq=False, repr=False, kw_only=True)


@attrs.frozen
class Machine(Block):
    name: str
    items: tuple[Stmt, ...]


@attrs.frozen
class Fragment(Block):
    name: str
    params: tuple[Param, ...]
    exits: tuple[str, ...]
    items: tuple[Stmt, ...]


@attrs.frozen
class Module(Node):
    """A whole `.skm` file."""

    items: tuple[Stmt, ...]
    end_comments: tuple[str, ...] = attrs.field(default=(), kw_only=True)

    @property
    def body(self) -> tuple[Stmt, ...]:
        return self.items

    @property
    def machines(self) -> tuple[Machine, ...]:
        return tuple(i for i in self.items if isinstance(i, Machine))

    @property
    def fragments(self) -> tuple[Fragment, ...]:
        return tuple(i for i in self.items if isinstance(i, Fragment))

    @property
    def imports(self) -> tuple[Import, ...]:
        return tuple(i for i in self.items if isinstance(i, Import))


CONTAINERS = (Module, Machine, Fragment, State, Terminal, Fallback, RecordDecl)
