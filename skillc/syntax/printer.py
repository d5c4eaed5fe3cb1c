"""The canonical printer behind `skillc fmt`: AST → `.skm` text.

Printing is total (every AST prints) and stable: `parse(print(ast)) == ast` and
printing a re-parsed file gives the same text. Comments are printed where the
parser attached them; blank lines from the source are kept (collapsed to one),
and blocks are always separated by one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from skillc.syntax import nodes as n
from skillc.syntax.strings import encode_block, encode_plain

INDENT = "  "

# Binding strength of each operator; higher binds tighter.
_PREC = {"or": 1, "and": 2, "==": 4, "!=": 4, "<": 4, "<=": 4, ">": 4, ">=": 4, "in": 4,
         "+": 5, "-": 5, "++": 5, "*": 6, "/": 6, "%": 6}
_NOT, _NEG, _POSTFIX, _ATOM = 3, 7, 8, 9


def print_module(module: n.Module) -> str:
    """Render a whole file."""
    out: list[str] = []
    _body(module.items, 0, out, top=True)
    for c in module.end_comments:
        if out and out[-1] != "" and module.items:
            out.append("")
        out.append(c)
    return "\n".join(out) + "\n" if out else ""


def print_node(node: n.Node, level: int = 0) -> str:
    """Render any statement, type or expression (used by tools and error messages)."""
    if isinstance(node, n.Expr):
        return expr(node)
    if isinstance(node, n.TypeExpr):
        return type_text(node)
    if not isinstance(node, n.Stmt):
        raise TypeError(f"cannot print {type(node).__name__}")
    out: list[str] = []
    _stmt(node, level, out)
    return "\n".join(out)


def _multiline(item: n.Stmt) -> bool:
    return isinstance(item, (n.State, n.RecordDecl, n.Machine, n.Fragment)) or (
        isinstance(item, (n.Terminal, n.Fallback)) and not _inline_terminal(item)
    )


def _body(items: Iterable[n.Stmt], level: int, out: list[str], top: bool = False) -> None:
    previous: n.Stmt | None = None
    for item in items:
        if previous is not None:
            both_imports = isinstance(item, n.Import) and isinstance(previous, n.Import)
            if item.blank_before or _multiline(item) or _multiline(previous) or (top and not both_imports):
                out.append("")
        _stmt(item, level, out)
        previous = item


def _stmt(item: n.Stmt, level: int, out: list[str]) -> None:
    pad = INDENT * level
    for c in item.leading:
        out.append(pad + c if c else "")
    lines = _render(item, level)
    if item.trailing:
        lines[-1] += "  " + item.trailing
    out.extend(lines)


def _block(head: str, node: n.Block, level: int) -> list[str]:
    pad = INDENT * level
    inner: list[str] = []
    _body(node.body, level + 1, inner)
    for c in node.end_comments:
        inner.append(INDENT * (level + 1) + c)
    header = f"  {node.header}" if node.header else ""
    if not inner and not header:
        return [f"{pad}{head} {{}}"]
    return [f"{pad}{head} {{{header}", *inner, f"{pad}}}"]


def _string(value: str, level: int) -> str:
    if "\n" in value:
        block = encode_block(value, INDENT * (level + 1))
        if block is not None:
            return block
    return encode_plain(value)


def _provenance(p: n.Provenance) -> str:
    span = f"{p.start}-{p.end}" if p.end is not None else f"{p.start}"
    return f"from {encode_plain(p.file)}:{span}"


def _params(params: Iterable[n.Param]) -> str:
    return ", ".join(f"{p.name}: {type_text(p.type)}" for p in params)


def _inline_terminal(node: n.Terminal | n.Fallback) -> bool:
    return not node.end_comments and not node.header and all(not i.leading and not i.trailing for i in node.items) and (
        len(node.items) == 0 or (len(node.items) == 1 and isinstance(node.items[0], n.Requires))
    )


def _render(item: n.Stmt, level: int) -> list[str]:
    """Lines for one statement (its own comments excepted)."""
    pad = INDENT * level
    r = _RENDER.get(type(item))
    if r is None:
        raise TypeError(f"cannot print {type(item).__name__}")
    result = r(item, level)
    return result if isinstance(result, list) else [pad + result]


def _terminal(t: n.Terminal, level: int) -> list[str]:
    head = f"terminal {t.name}: {t.outcome}"
    return _terminal_like(head, t, level)


def _fallback(f: n.Fallback, level: int) -> list[str]:
    return _terminal_like("fallback", f, level)


def _terminal_like(head: str, t: n.Terminal | n.Fallback, level: int) -> list[str]:
    if _inline_terminal(t):
        if not t.items:
            return [INDENT * level + head]
        return [INDENT * level + f"{head} {{ {_render(t.items[0], 0)[0]} }}"]
    return _block(head, t, level)


def _fragment_head(f: n.Fragment) -> str:
    exits = f" -> ({', '.join(f.exits)})" if f.exits else ""
    return f"fragment {f.name}({_params(f.params)}){exits}"


def _tool_decl(t: n.ToolDecl, level: int) -> str:
    results = f" -> ({_params(t.results)})" if t.results else ""
    source = ""
    if t.mcp is not None:
        source = f" from mcp {encode_plain(t.mcp)}" + (f" as {encode_plain(t.remote)}" if t.remote is not None else "")
    return f"tool {t.name}({_params(t.params)}){results}{source}"


def _var(v: n.VarDecl, level: int) -> str:
    init = f" = {expr(v.init)}" if v.init is not None else ""
    return f"{v.kind} {v.name}: {type_text(v.type)}{init}"


def _edge(e: n.Edge, level: int) -> str:
    guard = f"when {expr(e.guard)} " if e.guard is not None else ""
    assigns = ""
    if e.assigns:
        assigns = " { " + ", ".join(f"{a.target} {a.op} {expr(a.value)}" for a in e.assigns) + " }"
    return f"{guard}-> {e.target}{assigns}"


def _writes(w: n.Writes, level: int) -> str:
    return "writes " + ", ".join(f"{i.var} = {i.result}" if i.result is not None else i.var for i in w.items)


def _rule(r: n.Rule, level: int) -> str:
    ops = {"order": lambda: f"{r.ops[0]} before {r.ops[1]}", "reads": lambda: f"{r.ops[0]} from {r.ops[1]}",
           "ends": lambda: f"{r.ops[0]} in {r.outcome}"}.get(r.kind, lambda: r.ops[0])()
    where = f" {_provenance(r.where)}" if r.where is not None else ""
    return f"rule {r.kind} {ops} {encode_plain(r.quote)}{where}"


def _use(u: n.Use, level: int) -> str:
    binds = ", ".join(f"{b.name}: {b.target}" for b in u.bindings)
    exits = ""
    if u.exits:
        exits = " -> (" + ", ".join(f"{b.name}: {b.target}" for b in u.exits) + ")"
    return f"use {u.fragment} as {u.name}({binds}){exits}"


# Each renderer takes its own node class (hence Any) and returns one line, or every line already indented.
_RENDER: dict[type[n.Stmt], Callable[[Any, int], str | list[str]]] = {
    n.Import: lambda i, lv: f"import {encode_plain(i.path)}",
    n.Machine: lambda m, lv: _block(f"machine {m.name}", m, lv),
    n.Fragment: lambda f, lv: _block(_fragment_head(f), f, lv),
    n.Doc: lambda d, lv: f"doc {_string(d.text, lv)}",
    n.SourceDecl: lambda s, lv: f"source {encode_plain(s.path)}",
    n.ToolDecl: _tool_decl,
    n.RecordDecl: lambda r, lv: _block(f"record {r.name}", r, lv),
    n.FieldDecl: lambda f, lv: f"{f.name}: {type_text(f.type)}",
    n.EnumDecl: lambda e, lv: f"enum {e.name} {{ {', '.join(e.labels)} }}",
    n.VarDecl: _var,
    n.CounterDecl: lambda c, lv: f"counter {c.name} max {c.max}",
    n.Start: lambda s, lv: f"start {s.target}",
    n.State: lambda s, lv: _block(f"{s.kind} {s.name}", s, lv),
    n.Reads: lambda r, lv: "reads " + ", ".join(r.names),
    n.Writes: _writes,
    n.Prompt: lambda p, lv: f"prompt {_string(p.text, lv)}",
    n.Call: lambda c, lv: f"call {c.tool}(" + ", ".join(f"{a.name}: {expr(a.value)}" for a in c.args) + ")",
    n.From: lambda f, lv: _provenance(f.where),
    n.Edge: _edge,
    n.Terminal: _terminal,
    n.Fallback: _fallback,
    n.Requires: lambda r, lv: "requires " + ", ".join(expr(e) for e in r.evidence),
    n.Rule: _rule,
    n.Use: _use,
    n.UseTools: lambda u, lv: f"use tools {u.kit}" + (f"({', '.join(u.tools)})" if u.tools else ""),
    n.Allow: lambda a, lv: "allow " + ", ".join(encode_plain(e) for e in a.entries),
}


# ---------------------------------------------------------------- types


def type_text(t: n.TypeExpr) -> str:
    """Render a type."""
    r = _TYPE.get(type(t))
    if r is None:
        raise TypeError(f"cannot print type {type(t).__name__}")
    return r(t)


# Each renderer takes its own type class (hence Any).
_TYPE: dict[type[n.TypeExpr], Callable[[Any], str]] = {
    n.NamedType: lambda t: t.name,
    n.ListType: lambda t: f"list[{type_text(t.item)}]",
    n.MapType: lambda t: f"map[{type_text(t.key)}, {type_text(t.value)}]",
    n.EnumType: lambda t: "enum { " + ", ".join(t.labels) + " }",
    n.OptionalType: lambda t: f"{type_text(t.inner)}?",
}


# ---------------------------------------------------------------- expressions


def _prec(e: n.Expr) -> int:
    if isinstance(e, n.BinOp):
        return _PREC[e.op]
    if isinstance(e, n.Not):
        return _NOT
    if isinstance(e, n.Neg):
        return _NEG
    if isinstance(e, (n.Field, n.Index)):
        return _POSTFIX
    return _ATOM


def _wrap(e: n.Expr, needs: bool) -> str:
    return f"({expr(e)})" if needs else expr(e)


def _binop(e: n.BinOp) -> str:
    p = _PREC[e.op]
    if p == 4:  # comparisons do not associate: both operands must bind tighter
        left = _wrap(e.left, _prec(e.left) <= p)
        right_needs = _prec(e.right) <= p and not isinstance(e.right, n.SetLit)
        return f"{left} {e.op} {_wrap(e.right, right_needs)}"
    left_needs = _prec(e.left) < p or (e.op == "or" and _prec(e.left) == _PREC["and"])
    right_needs = _prec(e.right) <= p or (e.op == "or" and _prec(e.right) == _PREC["and"])
    return f"{_wrap(e.left, left_needs)} {e.op} {_wrap(e.right, right_needs)}"


def _items(open_: str, items: Iterable[n.Expr], close: str) -> str:
    return open_ + ", ".join(expr(a) for a in items) + close


# Each renderer takes its own expression class (hence Any).
_EXPR: dict[type[n.Expr], Callable[[Any], str]] = {
    n.Name: lambda e: e.id,
    n.IntLit: lambda e: str(e.value),
    n.FloatLit: lambda e: repr(float(e.value)),
    n.StrLit: lambda e: encode_plain(e.value),
    n.BoolLit: lambda e: "true" if e.value else "false",
    n.NoneLit: lambda e: "none",
    n.BinOp: _binop,
    n.Not: lambda e: f"not {_wrap(e.operand, _prec(e.operand) < _NOT)}",
    n.Neg: lambda e: f"-{_wrap(e.operand, _prec(e.operand) < _NEG)}",
    n.Field: lambda e: f"{_wrap(e.obj, _prec(e.obj) < _POSTFIX)}.{e.name}",
    n.Index: lambda e: f"{_wrap(e.obj, _prec(e.obj) < _POSTFIX)}[{expr(e.key)}]",
    n.CallExpr: lambda e: _items(f"{e.func}(", e.args, ")"),
    n.ListLit: lambda e: _items("[", e.items, "]"),
    n.SetLit: lambda e: _items("{", e.items, "}"),
}


def expr(e: n.Expr) -> str:
    """Render an expression with the fewest parentheses that keep its structure (plus `and` inside `or`)."""
    return _EXPR[type(e)](e)
