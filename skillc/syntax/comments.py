"""Attach comments to statements so the printer can keep them.

A comment on the line where a statement ends is that statement's `trailing`
comment; a comment on the line of a block's opening brace, before its first
statement, is the block's `header`; any other comment belongs to the next statement of the innermost block
that contains it (`leading`), or to the block's `end_comments` when no statement
follows it. Comments inside an expression move above their statement. The same
pass records blank lines before statements, and blank lines between leading
comments (as empty strings in `leading`) so that a file's header comment stays
apart from the first declaration.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, TypeVar

import attrs
import lark

from skillc.diagnostics import SourceFile, Span
from skillc.syntax import nodes as n

Container = n.Module | n.Machine | n.Fragment | n.State | n.Terminal | n.Fallback | n.RecordDecl
_N = TypeVar("_N", bound=n.Node)


@attrs.define
class _Placed:
    """The comments found for one statement or block while scanning."""

    leading: list[tuple[int, int, str]] = attrs.Factory(list)  # (start, end, text)
    trailing: str | None = None
    end: list[str] = attrs.Factory(list)
    header: str | None = None


def _span(node: n.Node) -> Span:
    """A parsed node's span (the parser gives every node one)."""
    assert node.span is not None, node
    return node.span


def attach_comments(module: n.Module, comments: Iterable[lark.Token], source: SourceFile) -> n.Module:
    """Return the module with comments and blank-line flags placed on its statements."""
    text = source.text
    placed: defaultdict[int, _Placed] = defaultdict(_Placed)
    blocks = _blocks(module)
    starts = [_span(b).start for b in blocks]
    for tok in comments:
        pos = tok.start_pos or 0
        block = _innermost(blocks, starts, pos)
        items = block.body
        before: n.Stmt | None = None
        after: n.Stmt | None = None
        for item in items:
            if _span(item).end <= pos:
                before = item
            elif after is None:
                after = item
                break
        body = str(tok).rstrip()
        if before is not None and "\n" not in text[_span(before).end : pos] and placed[id(before)].trailing is None:
            placed[id(before)].trailing = body
        elif (before is None and isinstance(block, n.Block) and placed[id(block)].header is None
              and "\n" not in text[_span(block).start : pos]):
            placed[id(block)].header = body
        elif after is not None:
            placed[id(after)].leading.append((pos, tok.end_pos or pos, body))
        else:
            placed[id(block)].end.append(body)
    return _rebuild(module, placed, text)


def _blocks(root: n.Module) -> list[Container]:
    """All nodes that own a statement body, in source order (outer before inner)."""
    found: list[Container] = []

    def walk(node: n.Node) -> None:
        if isinstance(node, n.CONTAINERS):
            found.append(node)
            for item in node.body:
                walk(item)

    walk(root)
    found.sort(key=lambda b: (_span(b).start, -_span(b).end))
    return found


def _innermost(blocks: list[Container], starts: list[int], pos: int) -> Container:
    """The innermost block whose span contains `pos`: the latest-starting one, since blocks nest."""
    for b in reversed(blocks[: bisect.bisect_right(starts, pos)]):
        if _span(b).start <= pos < _span(b).end:
            return b
    return blocks[0]


def _rebuild(node: _N, placed: dict[int, _Placed], text: str, prev_end: int | None = None) -> _N:
    """Copy the tree, filling comments and blank_before from `placed`."""
    key = id(node)
    if isinstance(node, n.CONTAINERS):
        items = []
        cursor = text.find("{", _span(node).start) + 1 if isinstance(node, n.Block) else 0
        for item in node.body:
            items.append(_rebuild(item, placed, text, cursor))
            cursor = _span(item).end
        changes: dict[str, Any] = {"items": tuple(items)}
        info = placed.get(key)
        if info and info.end:
            changes["end_comments"] = tuple(info.end)
        if info and info.header:
            changes["header"] = info.header
        node = attrs.evolve(node, **changes)
        if isinstance(node, n.Module):
            return node
    assert isinstance(node, n.Stmt), node
    info = placed.get(key) or _Placed()
    comments = sorted(info.leading)
    leading: list[str] = []
    for i, (pos, _, body) in enumerate(comments):
        if i and _has_blank_line(text, comments[i - 1][1], pos):
            leading.append("")
        leading.append(body)
    if comments and _has_blank_line(text, comments[-1][1], _span(node).start):
        leading.append("")
    first = comments[0][0] if comments else _span(node).start
    blank = prev_end is not None and _has_blank_line(text, prev_end, first)
    return attrs.evolve(node, leading=tuple(leading), trailing=info.trailing, blank_before=blank)


def _has_blank_line(text: str, start: int, end: int) -> bool:
    """True when the whitespace between two statements contains an empty line."""
    gap = text[start:end]
    lines = gap.split("\n")
    return any(not line.strip() for line in lines[1:-1])
