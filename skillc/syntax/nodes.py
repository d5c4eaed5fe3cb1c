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

import attrs

from skillc.diagnostics.source import Span

#: Per node class: the fields its repr shows (those with `repr=True`), in declaration order.
_REPR_FIELDS: dict[type, tuple[str, ...]] = {}

@attrs.frozen
class Node:
    """Base of every AST node."""

    span: Span | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)

    def __repr__(self) -> str:
        """What attrs' generated `__repr__` returns (`Name(id='x')`: the class and the fields it shows, in order).

        Written once here instead of generated for each of the node classes (`repr=False` on them): generating
        them was a third of importing this module (~9 ms of every `check` and `fmt`). A tree cannot contain
        itself, so attrs' guard against printing a node inside its own repr has nothing to catch.
        """
        cls = type(self)
        names = _REPR_FIELDS.get(cls)
        if names is None:
            names = _REPR_FIELDS[cls] = tuple(a.name for a in attrs.fields(cls) if a.repr)
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{cls.__qualname__.rsplit('>.', 1)[-1]}({shown})"

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


@attrs.frozen(repr=False)
class Stmt(Node):
    """A node that stands on its own line and can carry comments."""

    leading: tuple[str, ...] = attrs.field(default=(), kw_only=True)
    trailing: str | None = attrs.field(default=None, kw_only=True)
    blank_before: bool = attrs.field(default=False, eq=False, repr=False, kw_only=True)


@attrs.frozen(repr=False)
class Block(Stmt):
    """A statement with a brace-delimited body of statements."""

    header: str | None = attrs.field(default=None, kw_only=True)
    end_comments: tuple[str, ...] = attrs.field(default=(), kw_only=True)

    @property
    def body(self) -> tuple[Stmt, ...]:
        items: tuple[Stmt, ...] = getattr(self, "items")  # noqa: B009 - every subclass declares `items`; Block does not
        return items


# ---------------------------------------------------------------- expressions


@attrs.frozen(repr=False)
class Expr(Node):
    """Base of expressions."""


@attrs.frozen(repr=False)
class Name(Expr):
    id: str


@attrs.frozen(repr=False)
class IntLit(Expr):
    value: int


@attrs.frozen(repr=False)
class FloatLit(Expr):
    value: float


@attrs.frozen(repr=False)
class StrLit(Expr):
    value: str


@attrs.frozen(repr=False)
class BoolLit(Expr):
    value: bool


@attrs.frozen(repr=False)
class NoneLit(Expr):
    pass


@attrs.frozen(repr=False)
class BinOp(Expr):
    """`left op right` for arithmetic, `++`, comparisons, `and`, `or` and `in`."""

    op: str
    left: Expr
    right: Expr


@attrs.frozen(repr=False)
class Not(Expr):
    operand: Expr


@attrs.frozen(repr=False)
class Neg(Expr):
    operand: Expr


@attrs.frozen(repr=False)
class Field(Expr):
    obj: Expr
    name: str


@attrs.frozen(repr=False)
class Index(Expr):
    obj: Expr
    key: Expr


@attrs.frozen(repr=False)
class CallExpr(Expr):
    func: str
    args: tuple[Expr, ...]


@attrs.frozen(repr=False)
class ListLit(Expr):
    items: tuple[Expr, ...]


@attrs.frozen(repr=False)
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


@attrs.frozen(repr=False)
class TypeExpr(Node):
    """Base of written types."""


@attrs.frozen(repr=False)
class NamedType(TypeExpr):
    name: str


@attrs.frozen(repr=False)
class ListType(TypeExpr):
    item: TypeExpr


@attrs.frozen(repr=False)
class MapType(TypeExpr):
    key: TypeExpr
    value: TypeExpr


@attrs.frozen(repr=False)
class EnumType(TypeExpr):
    labels: tuple[str, ...]


@attrs.frozen(repr=False)
class OptionalType(TypeExpr):
    inner: TypeExpr


# ---------------------------------------------------------------- small pieces


@attrs.frozen(repr=False)
class Param(Node):
    name: str
    type: TypeExpr


@attrs.frozen(repr=False)
class Arg(Node):
    name: str
    value: Expr


@attrs.frozen(repr=False)
class Binding(Node):
    """`param: target` in a `use`."""

    name: str
    target: str


@attrs.frozen(repr=False)
class Assign(Node):
    """`target = value`, `target += value` or `target -= value` on an edge."""

    target: str
    op: str
    value: Expr


@attrs.frozen(repr=False)
class WriteItem(Node):
    """`var` or `var = result` in a `writes` list."""

    var: str
    result: str | None = None


@attrs.frozen(repr=False)
class Provenance(Node):
    """`from "FILE":START-END`: where in the skill document this came from."""

    file: str
    start: int
    end: int | None = None


# ---------------------------------------------------------------- statements


@attrs.frozen(repr=False)
class Doc(Stmt):
    text: str


@attrs.frozen(repr=False)
class SourceDecl(Stmt):
    path: str


@attrs.frozen(repr=False)
class Import(Stmt):
    path: str


@attrs.frozen(repr=False)
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


@attrs.frozen(repr=False)
class FieldDecl(Stmt):
    name: str
    type: TypeExpr


@attrs.frozen(repr=False)
class RecordDecl(Block):
    name: str
    items: tuple[FieldDecl, ...]


@attrs.frozen(repr=False)
class EnumDecl(Stmt):
    name: str
    labels: tuple[str, ...]


@attrs.frozen(repr=False)
class VarDecl(Stmt):
    """`input NAME: T [= init]` or `var NAME: T [= init]`."""

    kind: str
    name: str
    type: TypeExpr
    init: Expr | None = None


@attrs.frozen(repr=False)
class CounterDecl(Stmt):
    name: str
    max: int


@attrs.frozen(repr=False)
class Start(Stmt):
    target: str


@attrs.frozen(repr=False)
class Reads(Stmt):
    names: tuple[str, ...]


@attrs.frozen(repr=False)
class Writes(Stmt):
    items: tuple[WriteItem, ...]


@attrs.frozen(repr=False)
class Prompt(Stmt):
    text: str


@attrs.frozen(repr=False)
class Call(Stmt):
    tool: str
    args: tuple[Arg, ...]


@attrs.frozen(repr=False)
class From(Stmt):
    where: Provenance


@attrs.frozen(repr=False)
class Edge(Stmt):
    """`when GUARD -> target { assigns }`; `guard` is None for the default edge."""

    guard: Expr | None
    target: str
    assigns: tuple[Assign, ...] = ()


def _evidence(items: Iterable[Expr | str]) -> tuple[Expr, ...]:
    """Evidence items as expressions; a (dotted) name may be given as text."""
    return tuple(name_expr(i) if isinstance(i, str) else i for i in items)


@attrs.frozen(repr=False)
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


StateItem = Reads | Writes | Prompt | Call | Doc | From | Edge


@attrs.frozen(repr=False)
class State(Block):
    """A `model`, `judge` or `tool` state."""

    kind: str
    name: str
    items: tuple[StateItem, ...]


@attrs.frozen(repr=False)
class Terminal(Block):
    name: str
    outcome: str
    items: tuple[Stmt, ...] = ()


@attrs.frozen(repr=False)
class Fallback(Block):
    items: tuple[Stmt, ...] = ()


@attrs.frozen(repr=False)
class Rule(Stmt):
    """`rule required OP`, `rule order OP before OP`, `rule forbid OP`, `rule ends OP in OUTCOME`,
    `rule reads B from A`, with its quotation (`outcome` only for `ends`)."""

    kind: str
    ops: tuple[str, ...]
    quote: str
    where: Provenance | None = None
    outcome: str | None = None


@attrs.frozen(repr=False)
class Use(Stmt):
    """`use FRAGMENT as NAME(param: var, …) -> (exit: state, …)`."""

    fragment: str
    name: str
    bindings: tuple[Binding, ...]
    exits: tuple[Binding, ...] = ()


@attrs.frozen(repr=False)
class UseTools(Stmt):
    """`use tools KIT` (the whole kit) or `use tools KIT(tool, …)` (those tools of it)."""

    kit: str
    tools: tuple[str, ...] = ()


@attrs.frozen(repr=False)
class Allow(Stmt):
    """`allow "Read", "Bash(git diff:*)"`: capability entries in allowed-tools spelling, as written."""

    entries: tuple[str, ...]
    entry_spans: tuple[Span | None, ...] = attrs.field(default=(), eq=False, repr=False, kw_only=True)


@attrs.frozen(repr=False)
class Machine(Block):
    name: str
    items: tuple[Stmt, ...]


@attrs.frozen(repr=False)
class Fragment(Block):
    name: str
    params: tuple[Param, ...]
    exits: tuple[str, ...]
    items: tuple[Stmt, ...]


@attrs.frozen(repr=False)
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
