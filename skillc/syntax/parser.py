"""Parse `.skm` text into an AST (`skillc.syntax.nodes`) plus diagnostics; never raises on user error.

The LALR parser builds nodes directly (an inline Lark transformer), so no parse
tree is materialised; spans are computed from the first and last token of each
rule because all tokens are kept.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar, cast

import lark
from lark import Token

from skillc.diagnostics import Diagnostic, SourceFile, Span, codes, make
from skillc.diagnostics.files import read_bytes
from skillc.syntax import nodes as n
from skillc.syntax.comments import attach_comments
from skillc.syntax.errors import Signature, example_index, syntax_error
from skillc.syntax.grammar import keyword_terminals, make_lark
from skillc.syntax.strings import decode_plain, decode_triple

MAX_DEPTH = 100
MAX_INT_DIGITS = 4300  # Python's default int/str conversion limit
_VALUE_TOKENS = frozenset({"NAME", "INT", "FLOAT", "STRING", "TRIPLE_STRING"})

Children = list[Any]  # what Lark hands a rule callback: tokens (all are kept), built nodes, None placeholders
_E = TypeVar("_E", bound=n.Node)


class _Abort(Exception):
    """Internal: stop parsing after a fatal diagnostic (nesting too deep)."""


class _Builder(lark.Transformer[Token, n.Module]):
    """Turn each reduced rule into an AST node (one method per grammar rule)."""

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.reset(SourceFile("<string>", ""))

    def reset(self, source: SourceFile) -> None:
        self.source = source
        self.diagnostics: list[Diagnostic] = []
        self.comments: list[Token] = []
        self.depth: dict[int, int] = {}

    # ------------------------------------------------------------ helpers

    def _span(self, children: Children) -> Span | None:
        first, last = _pos(children, False), _pos(children, True)
        if first is None or last is None:
            return None
        return Span(self.source, first, last)

    @staticmethod
    def _values(children: Children) -> list[Any]:
        """Children that carry meaning: nodes, strings and name/number tokens."""
        return [
            c
            for c in children
            if c is not None and (not isinstance(c, Token) or c.type in _VALUE_TOKENS)
        ]

    def _expr(self, cls: Callable[..., _E], children: Children, *args: object) -> _E:
        """Build an expression or type node, tracking nesting depth (SKM007 past MAX_DEPTH)."""
        node = cls(*args, span=self._span(children))
        self._nest(node, children, 1)
        return node

    def _nest(self, node: n.Node, children: Children, extra: int) -> None:
        depth = extra + max((self.depth.get(id(c), 1) for c in children if isinstance(c, (n.Expr, n.TypeExpr))),
                            default=0)
        if depth > MAX_DEPTH:
            kind = "type" if isinstance(node, n.TypeExpr) else "expression"
            self.diagnostics.append(
                make(codes.NESTING_TOO_DEEP, f"{kind} nested more than {MAX_DEPTH} levels deep",
                     node.span or self._span(children), label="too deep")
            )
            raise _Abort
        self.depth[id(node)] = depth

    # ------------------------------------------------------------ module level

    def module(self, ch: Children) -> n.Module:
        return n.Module(tuple(self._values(ch)), span=Span(self.source, 0, len(self.source.text)))

    def import_decl(self, ch: Children) -> n.Import:
        return n.Import(decode_plain(str(self._values(ch)[0])[1:-1])[0], span=self._span(ch))

    def machine(self, ch: Children) -> n.Machine:
        v = self._values(ch)
        return n.Machine(str(v[0]), tuple(v[1:]), span=self._span(ch))

    def fragment(self, ch: Children) -> n.Fragment:
        v = self._values(ch)
        params: tuple[n.Param, ...] = ()
        exits: tuple[str, ...] = ()
        rest = v[1:]
        if rest and isinstance(rest[0], list) and rest[0] and isinstance(rest[0][0], n.Param):
            params, rest = tuple(rest[0]), rest[1:]
        if rest and isinstance(rest[0], tuple):
            exits, rest = rest[0], rest[1:]
        return n.Fragment(str(v[0]), params, exits, tuple(rest), span=self._span(ch))

    def exit_list(self, ch: Children) -> tuple[str, ...]:
        return tuple(str(t) for t in self._values(ch))

    def doc_decl(self, ch: Children) -> n.Doc:
        return n.Doc(str(self._values(ch)[0]), span=self._span(ch))

    def source_decl(self, ch: Children) -> n.SourceDecl:
        return n.SourceDecl(str(self._values(ch)[0]), span=self._span(ch))

    # ------------------------------------------------------------ declarations

    def tool_decl(self, ch: Children) -> n.ToolDecl:
        name = str(ch[1])
        params: tuple[n.Param, ...] = ()
        results: tuple[n.Param, ...] = ()
        source: _ToolSource | None = None
        seen_arrow = False
        for c in ch[2:]:
            if isinstance(c, Token) and str(c) == "->":
                seen_arrow = True
            elif isinstance(c, _ToolSource):
                source = c
            elif isinstance(c, list):
                if seen_arrow:
                    results = tuple(c)
                else:
                    params = tuple(c)
        if source is None:
            return n.ToolDecl(name, params, results, span=self._span(ch))
        return n.ToolDecl(name, params, results, str(source.server), None if source.remote is None else
                          str(source.remote), source.server.span, span=self._span(ch))

    def tool_source(self, ch: Children) -> _ToolSource:
        server, *remote = (v for v in self._values(ch) if isinstance(v, _Str))
        return _ToolSource(server, remote[0] if remote else None)

    def param_list(self, ch: Children) -> list[n.Param]:
        return [c for c in ch if isinstance(c, n.Param)]

    def param(self, ch: Children) -> n.Param:
        v = self._values(ch)
        return n.Param(str(v[0]), v[1], span=self._span(ch))

    def record_decl(self, ch: Children) -> n.RecordDecl:
        v = self._values(ch)
        return n.RecordDecl(str(v[0]), tuple(v[1:]), span=self._span(ch))

    def field_decl(self, ch: Children) -> n.FieldDecl:
        v = self._values(ch)
        return n.FieldDecl(str(v[0]), v[1], span=self._span(ch))

    def enum_decl(self, ch: Children) -> n.EnumDecl:
        v = self._values(ch)
        return n.EnumDecl(str(v[0]), v[1], span=self._span(ch))

    def label_list(self, ch: Children) -> tuple[str, ...]:
        return tuple(str(t) for t in self._values(ch))

    def _var(self, kind: str, ch: Children) -> n.VarDecl:
        v = self._values(ch)
        init = v[2] if len(v) > 2 else None
        return n.VarDecl(kind, str(v[0]), v[1], init, span=self._span(ch))

    def input_decl(self, ch: Children) -> n.VarDecl:
        return self._var("input", ch)

    def var_decl(self, ch: Children) -> n.VarDecl:
        return self._var("var", ch)

    def counter_decl(self, ch: Children) -> n.CounterDecl:
        v = self._values(ch)
        return n.CounterDecl(str(v[0]), self._int(v[1], ch), span=self._span(ch))

    def start_decl(self, ch: Children) -> n.Start:
        return n.Start(str(self._values(ch)[0]), span=self._span(ch))

    # ------------------------------------------------------------ types

    def optional_type(self, ch: Children) -> n.OptionalType:
        return self._expr(n.OptionalType, ch, self._values(ch)[0])

    def named_type(self, ch: Children) -> n.NamedType:
        return n.NamedType(str(self._values(ch)[0]), span=self._span(ch))

    def list_type(self, ch: Children) -> n.ListType:
        return self._expr(n.ListType, ch, self._values(ch)[0])

    def map_type(self, ch: Children) -> n.MapType:
        v = self._values(ch)
        return self._expr(n.MapType, ch, v[0], v[1])

    def enum_type(self, ch: Children) -> n.EnumType:
        return n.EnumType(self._values(ch)[0], span=self._span(ch))

    # ------------------------------------------------------------ states

    def _state(self, kind: str, ch: Children) -> n.State:
        v = self._values(ch)
        return n.State(kind, str(v[0]), tuple(v[1:]), span=self._span(ch))

    def model_state(self, ch: Children) -> n.State:
        return self._state("model", ch)

    def judge_state(self, ch: Children) -> n.State:
        return self._state("judge", ch)

    def tool_state(self, ch: Children) -> n.State:
        return self._state("tool", ch)

    def reads(self, ch: Children) -> n.Reads:
        return n.Reads(tuple(str(x) for x in self._values(ch)), span=self._span(ch))

    def writes(self, ch: Children) -> n.Writes:
        return n.Writes(tuple(self._values(ch)), span=self._span(ch))

    def write_item(self, ch: Children) -> n.WriteItem:
        v = self._values(ch)
        return n.WriteItem(str(v[0]), str(v[1]) if len(v) > 1 else None, span=self._span(ch))

    def prompt(self, ch: Children) -> n.Prompt:
        return n.Prompt(str(self._values(ch)[0]), span=self._span(ch))

    def call(self, ch: Children) -> n.Call:
        v = self._values(ch)
        return n.Call(str(v[0]), tuple(v[1:]), span=self._span(ch))

    def arg(self, ch: Children) -> n.Arg:
        v = self._values(ch)
        return n.Arg(str(v[0]), v[1], span=self._span(ch))

    def from_decl(self, ch: Children) -> n.From:
        v = self._values(ch)
        where = n.Provenance(decode_plain(str(v[0])[1:-1])[0], self._int(v[1], ch),
                             self._int(v[2], ch) if len(v) > 2 else None, span=self._span(ch))
        return n.From(where, span=where.span)

    def edge(self, ch: Children) -> n.Edge:
        v = self._values(ch)
        guard = v[0] if isinstance(v[0], n.Expr) else None
        rest = v[1:] if guard is not None else v
        target = str(rest[0])
        assigns = rest[1] if len(rest) > 1 else ()
        return n.Edge(guard, target, assigns, span=self._span(ch))

    def assign_block(self, ch: Children) -> tuple[n.Assign, ...]:
        return tuple(c for c in ch if isinstance(c, n.Assign))

    def _assign(self, op: str, ch: Children) -> n.Assign:
        v = self._values(ch)
        return n.Assign(str(v[0]), op, v[1], span=self._span(ch))

    def assign_set(self, ch: Children) -> n.Assign:
        return self._assign("=", ch)

    def assign_add(self, ch: Children) -> n.Assign:
        return self._assign("+=", ch)

    def assign_sub(self, ch: Children) -> n.Assign:
        return self._assign("-=", ch)

    def terminal(self, ch: Children) -> n.Terminal:
        v = self._values(ch)
        return n.Terminal(str(v[0]), str(v[1]), tuple(v[2:]), span=self._span(ch))

    def fallback(self, ch: Children) -> n.Fallback:
        return n.Fallback(tuple(self._values(ch)), span=self._span(ch))

    def requires(self, ch: Children) -> n.Requires:
        return n.Requires(tuple(self._values(ch)), span=self._span(ch))

    # ------------------------------------------------------------ rules and uses

    def rule(self, ch: Children) -> n.Rule:
        v = self._values(ch)
        kind, ops, *outcome = v[0]
        where = v[2].where if len(v) > 2 else None
        return n.Rule(kind, ops, str(v[1]), where, outcome[0] if outcome else None, span=self._span(ch))

    def rule_required(self, ch: Children) -> tuple[str, tuple[str, ...]]:
        return ("required", tuple(str(x) for x in self._values(ch)))

    def rule_order(self, ch: Children) -> tuple[str, tuple[str, ...]]:
        return ("order", tuple(str(x) for x in self._values(ch)))

    def rule_forbid(self, ch: Children) -> tuple[str, tuple[str, ...]]:
        return ("forbid", tuple(str(x) for x in self._values(ch)))

    def rule_ends(self, ch: Children) -> tuple[str, tuple[str, ...], str]:
        op, outcome = (str(x) for x in self._values(ch))
        return ("ends", (op,), outcome)

    def rule_reads(self, ch: Children) -> tuple[str, tuple[str, ...]]:
        return ("reads", tuple(str(x) for x in self._values(ch)))

    def use_decl(self, ch: Children) -> n.Use:
        # The fragment's name may be the word `tools` (a keyword token, which `_values` leaves out).
        v = self._values(ch[2:])
        bindings = tuple(b for b in v[1:] if isinstance(b, n.Binding))
        exits = next((x for x in v[1:] if isinstance(x, tuple)), ())
        return n.Use(str(ch[1]), str(v[0]), bindings, tuple(exits), span=self._span(ch))

    def use_tools(self, ch: Children) -> n.UseTools:
        kit, *tools = (str(t) for t in self._values(ch))
        return n.UseTools(kit, tuple(tools), span=self._span(ch))

    def allow_decl(self, ch: Children) -> n.Allow:
        entries = self._values(ch)
        return n.Allow(tuple(str(e) for e in entries), entry_spans=tuple(e.span for e in entries),
                       span=self._span(ch))

    def use_exits(self, ch: Children) -> tuple[n.Binding, ...]:
        # Spanned, so that the `use` ends at the exit list's `)` (a bare tuple has no position).
        return _Spanned((c for c in ch if isinstance(c, n.Binding)), self._span(ch))

    def binding(self, ch: Children) -> n.Binding:
        v = self._values(ch)
        return n.Binding(str(v[0]), str(v[1]), span=self._span(ch))

    def qualname(self, ch: Children) -> _QualName:
        return _QualName(".".join(str(t) for t in self._values(ch)), self._span(ch))

    def string(self, ch: Children) -> _Str:
        tok = ch[0]
        if tok.type == "TRIPLE_STRING":
            value = decode_triple(str(tok)[3:-3])
        else:
            value, bad = decode_plain(str(tok)[1:-1])
            for start, end, text in bad:
                at = tok.start_pos + 1 + start
                self.diagnostics.append(
                    make(codes.INVALID_ESCAPE, f"unknown escape sequence `{text}` in a string",
                         Span(self.source, at, tok.start_pos + 1 + end), label="not an escape")
                )
        return _Str(value, Span(self.source, tok.start_pos, tok.end_pos))

    # ------------------------------------------------------------ expressions

    def or_op(self, ch: Children) -> n.BinOp:
        v = self._values(ch)
        return self._expr(n.BinOp, ch, "or", v[0], v[1])

    def and_op(self, ch: Children) -> n.BinOp:
        v = self._values(ch)
        return self._expr(n.BinOp, ch, "and", v[0], v[1])

    def not_op(self, ch: Children) -> n.Not:
        return self._expr(n.Not, ch, self._values(ch)[0])

    def neg(self, ch: Children) -> n.Neg:
        return self._expr(n.Neg, ch, self._values(ch)[0])

    def member(self, ch: Children) -> n.BinOp:
        v = self._values(ch)
        return self._expr(n.BinOp, ch, "in", v[0], v[1])

    def set_lit(self, ch: Children) -> n.SetLit:
        return self._expr(n.SetLit, ch, tuple(self._values(ch)))

    def field(self, ch: Children) -> n.Field:
        v = self._values(ch)
        return self._expr(n.Field, ch, v[0], str(v[1]))

    def index(self, ch: Children) -> n.Index:
        v = self._values(ch)
        return self._expr(n.Index, ch, v[0], v[1])

    def name(self, ch: Children) -> n.Name:
        return self._expr(n.Name, ch, str(ch[0]))

    def int_lit(self, ch: Children) -> n.IntLit:
        return self._expr(n.IntLit, ch, self._int(ch[0], ch))

    def _int(self, token: object, ch: Children) -> int:
        """An INT token's value; past Python's 4,300-digit conversion limit it is SKM147 (a limit that is
        process-wide, so it is not raised here)."""
        digits = str(token).lstrip("0") or "0"
        if len(digits) > MAX_INT_DIGITS:
            self.diagnostics.append(make(codes.INTEGER_TOO_LARGE,
                                         f"an integer literal of {len(digits):,} digits is too large",
                                         self._span(ch), label=f"more than {MAX_INT_DIGITS:,} digits",
                                         hint="use a smaller number"))
            raise _Abort
        return int(digits)

    def float_lit(self, ch: Children) -> n.FloatLit:
        value = float(ch[0])
        if not math.isfinite(value):
            self.diagnostics.append(make(codes.NUMBER_OUT_OF_RANGE, f"the number `{ch[0]}` is too large",
                                         self._span(ch), label="not a finite float"))
            raise _Abort
        return self._expr(n.FloatLit, ch, value)

    def str_lit(self, ch: Children) -> n.StrLit:
        s = ch[0]
        return self._expr(n.StrLit, [s], str(s))

    def true_lit(self, ch: Children) -> n.BoolLit:
        return self._expr(n.BoolLit, ch, True)

    def false_lit(self, ch: Children) -> n.BoolLit:
        return self._expr(n.BoolLit, ch, False)

    def none_lit(self, ch: Children) -> n.NoneLit:
        return self._expr(n.NoneLit, ch)

    def call_expr(self, ch: Children) -> n.CallExpr:
        v = self._values(ch)
        return self._expr(n.CallExpr, ch, str(v[0]), tuple(v[1:]))

    def list_lit(self, ch: Children) -> n.ListLit:
        return self._expr(n.ListLit, ch, tuple(self._values(ch)))

    def atom(self, ch: Children) -> n.Expr:
        # "(" expr ")": parentheses are not kept; the printer re-inserts the needed ones.
        inner: n.Expr = self._values(ch)[0]
        self._nest(inner, [inner], 1)
        return inner


def _binop(op: str) -> Callable[[_Builder, Children], n.BinOp]:
    def build(self: _Builder, ch: Children) -> n.BinOp:
        v = self._values(ch)
        return self._expr(n.BinOp, ch, op, v[0], v[1])

    build.__doc__ = f"`{op}`"
    return build


for _rule, _op in {
    "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
    "add": "+", "sub": "-", "concat": "++", "mul": "*", "div": "/", "mod": "%",
}.items():
    setattr(_Builder, _rule, _binop(_op))


class _QualName(str):
    """A dotted name that remembers its span while it travels up to its node."""

    span: Span | None

    def __new__(cls, value: str, span: Span | None) -> _QualName:
        obj = super().__new__(cls, value)
        obj.span = span
        return obj


class _Spanned(tuple):  # type: ignore[type-arg]
    """Nodes of a bracketed list that remember the list's span (brackets included)."""

    span: Span | None

    def __new__(cls, items: Iterable[object], span: Span | None) -> _Spanned:
        obj = super().__new__(cls, items)
        obj.span = span
        return obj


class _ToolSource(tuple):  # type: ignore[type-arg]
    """`from mcp "SERVER" [as "NAME"]` on its way up to its tool declaration."""

    def __new__(cls, server: _Str, remote: _Str | None) -> _ToolSource:
        return super().__new__(cls, (server, remote))

    @property
    def server(self) -> _Str:
        return cast(_Str, self[0])

    @property
    def remote(self) -> _Str | None:
        return cast("_Str | None", self[1])


class _Str(str):
    """A decoded string that remembers its span."""

    span: Span | None

    def __new__(cls, value: str, span: Span | None) -> _Str:
        obj = super().__new__(cls, value)
        obj.span = span
        return obj


def _pos(c: object, last: bool) -> int | None:
    """The start offset of the first positioned child (or the end offset of the last one)."""
    if c is None:
        return None
    if isinstance(c, Token):
        return c.end_pos if last else c.start_pos
    span: Span | None = getattr(c, "span", None)
    if span is not None:
        return span.end if last else span.start
    if isinstance(c, (list, tuple)):
        for x in reversed(c) if last else c:
            p = _pos(x, last)
            if p is not None:
                return p
    return None


_local = threading.local()


def _parser() -> tuple[lark.Lark, _Builder]:
    """One parser per thread: the inline builder holds per-parse state."""
    cached = getattr(_local, "parser", None)
    if cached is None:
        builder = _Builder()

        def on_comment(tok: Token) -> Token:
            builder.comments.append(tok)
            return tok

        parser = make_lark(transformer=builder, lexer_callbacks={"COMMENT": on_comment})
        cached = _local.parser = (parser, builder)
    return cached


def _keyword_as_name(error: lark.exceptions.UnexpectedInput) -> bool:
    """Recover when a keyword stands where only a name fits, and read it as that name.

    LALR merges look-ahead sets, so a keyword can be accepted by the lexer in a
    state where the parser then needs a NAME (a record field called `fallback`
    on its own line). Keywords are contextual, so the word is a name there.
    """
    if not isinstance(error, lark.exceptions.UnexpectedToken):
        return False
    tok = error.token
    if tok.type not in keyword_terminals() or "NAME" not in (error.accepts or error.expected or ()):
        return False
    try:
        error.interactive_parser.feed_token(Token.new_borrow_pos("NAME", str(tok), tok))
    except lark.exceptions.UnexpectedInput:
        return False
    return True


def _examples(parser: lark.Lark, builder: _Builder) -> dict[Signature, str]:
    cached = getattr(_local, "examples", None)
    if cached is None:
        def parse_example(text: str) -> object:
            builder.reset(SourceFile("<example>", text))
            return parser.parse(text)

        cached = _local.examples = example_index(parse_example)
    return cached


def parse_source(source: SourceFile) -> tuple[n.Module | None, list[Diagnostic]]:
    """Parse a source file; return the module (None on a syntax error) and diagnostics."""
    parser, builder = _parser()
    builder.reset(source)
    try:
        tree: object = parser.parse(source.text, on_error=_keyword_as_name)
    except _Abort:
        return None, builder.diagnostics
    except lark.exceptions.UnexpectedInput as exc:
        found = list(builder.diagnostics)
        return None, found + [syntax_error(exc, source, _examples(parser, builder), parser)]
    assert isinstance(tree, n.Module), tree  # the inline builder turns the `module` rule into one
    return attach_comments(tree, builder.comments, source), builder.diagnostics


def read_source(path: str | Path) -> tuple[SourceFile | None, list[Diagnostic]]:
    """Read a file as UTF-8 (CRLF normalised); unreadable or binary files become diagnostics."""
    data, problem = read_bytes(path, folder="a directory, not a .skm file")
    if problem is not None or data is None:
        return None, [problem] if problem is not None else []
    return decode_source(str(path), data)


def decode_source(path: str, data: bytes) -> tuple[SourceFile | None, list[Diagnostic]]:
    """Decode bytes as UTF-8 text; report binary or mis-encoded input with its position."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8", errors="replace").replace("\r\n", "\n")
        source = SourceFile(path, prefix)
        at = len(prefix)
        return None, [make(codes.INVALID_ENCODING, f"{path} is not UTF-8 text (invalid byte 0x{data[exc.start]:02x})",
                           Span(source, at, at), label="here")]
    source = SourceFile.from_text(path, text)
    nul = source.text.find("\x00")
    if nul != -1:
        return None, [make(codes.INVALID_ENCODING, f"{path} contains NUL bytes; it looks like a binary file",
                           Span(source, nul, nul + 1), label="NUL byte")]
    return source, []


def parse(text: str, path: str = "<string>") -> tuple[n.Module | None, list[Diagnostic]]:
    """Parse `.skm` text."""
    return parse_source(SourceFile.from_text(path, text))
