"""Incremental parsing for re-checks of an edited text: each item of a machine or fragment parsed once per text.

An editor re-checks a document after every edit, and parsing is most of a check (at 1,500 states 0.27 s of
0.45 s here). `ItemParser.parse` splits the text by a cheap scan (strings, comments and brackets, no
grammar) into *items* — the statements of each machine's and fragment's body, each with the comments and
blank lines above it — and a *frame* (everything else: imports, records, enums, the blocks' headers and
closing lines). Each item is parsed on its own, inside its block's real header (the same grammar context),
and kept by its text; the frame is parsed with the blocks' bodies left out. The tree is then assembled,
every node moved to its offset in the new text (`relocate`), so that it equals what `parse_source` returns
for the whole text, spans, comments and blank-line flags included (a property test over random edits of
the examples holds them equal). An edit costs the parse of the item it touched and the frame, plus moving
the nodes. Whenever the scan or an item's parse is in doubt (a syntax error, an unterminated string, a
diagnostic of the parser, an item that does not start on a line of its own) the whole text is parsed as
before, so errors are always reported by the full parse.

The loader takes the parser through `ImportCache.parse` (the language server sets it); nothing else
changes: lowering and every check run on the assembled tree as on a fresh one.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from typing import Any

import attrs

from skillc.diagnostics import Diagnostic, SourceFile, Span
from skillc.diagnostics.source import text_edit
from skillc.syntax import nodes as n
from skillc.syntax.parser import parse_source

_TOKEN = re.compile(r'"""|"|#|[{}()\[\]\n]')
_STRING_END = re.compile(r'(?:[^"\\\n\r]|\\.)*"')
_NOT_SPACE = re.compile(r"\S")
_OPEN, _CLOSE = "{([", "})]"
#: Blocks with fewer items are parsed whole with the frame (splitting them saves nothing).
MIN_ITEMS = 8
#: Parsed items kept (by text): enough for every item of a few large documents.
CACHE_ITEMS = 20_000
#: Paths whose last scan is kept (an edit of one of them rescans only the item it touched).
SCANS_KEPT = 16


@attrs.frozen
class Block:
    """A top-level machine or fragment body: its header (up to the end of the `{` line), its items' bounds
    (each from the line after the previous item to the end of its own last line), where its tail begins."""

    header: tuple[int, int]
    items: tuple[tuple[int, int], ...]


def scan(text: str, min_items: int = MIN_ITEMS) -> list[Block] | None:
    """The splittable blocks of a text (those of at least `min_items` items), or None when the scan is in doubt
    (an unterminated string, brackets that do not balance, a statement on the line of its block's `{`)."""
    depth = 0
    line_start = 0
    blocks: list[Block] = []
    block_start = -1
    body_start = -1
    items: list[tuple[int, int]] = []
    item_open = -1  # start of the current item's chunk (the line after the previous item), -1 before the first
    last_code_end = -1  # end of the last line holding code (not only a comment) at depth >= 1 inside the block
    line_has_code = False
    pos = 0
    length = len(text)

    def code_at(offset: int) -> None:
        """Code at `offset` on the current line: at depth 1 and first on its line it starts an item."""
        nonlocal line_has_code, item_open
        if depth == 1 and not line_has_code and body_start >= 0:
            if text[line_start:offset].strip():
                raise _Doubt  # code before it on the same line that the scan did not see (cannot happen)
            if item_open >= 0:
                items.append((item_open, last_code_end))
            item_open = last_code_end if items or item_open >= 0 else body_start
        line_has_code = True

    try:
        while pos < length:
            # Any other character on the line is code; find the next interesting one.
            m = _TOKEN.search(text, pos)
            stop = m.start() if m is not None else length
            if stop > pos:
                first = _NOT_SPACE.search(text, pos, stop)  # no slice of the text: this runs for every token
                if first is not None:
                    code_at(first.start())
            if m is None:
                break
            tok = m.group()
            at = m.start()
            if tok == "\n":
                if line_has_code and depth >= 1:
                    last_code_end = at + 1
                line_start = at + 1
                line_has_code = False
                pos = at + 1
                continue
            if tok == "#":
                end = text.find("\n", at)
                pos = length if end < 0 else end
                continue
            if tok == '"""':
                code_at(at)
                end = text.find('"""', at + 3)
                if end < 0:
                    return None
                pos = end + 3
                continue
            if tok == '"':
                code_at(at)
                s = _STRING_END.match(text, at + 1)
                if s is None:
                    return None
                pos = s.end()
                continue
            if tok in _OPEN:
                if tok == "{" and depth == 0:
                    block_start, depth, pos = line_start, 1, at + 1
                    line_has_code = True
                    rest = text.find("\n", pos)
                    body_start = -1
                    end_of_line = length if rest < 0 else rest
                    items, item_open, last_code_end = [], -1, -1
                    opens_body = text[block_start:at].lstrip().startswith(("machine ", "fragment "))
                    if opens_body and not text[pos:end_of_line].split("#", 1)[0].strip():
                        body_start = end_of_line + 1  # else a record or enum, or code on the `{` line: parsed whole
                    continue
                code_at(at)
                depth += 1
                pos = at + 1
                continue
            # a closing bracket
            if depth == 1 and tok == "}":
                if item_open >= 0:
                    items.append((item_open, last_code_end))
                if body_start >= 0 and not text[line_start:at].strip() and len(items) >= min_items:
                    blocks.append(Block((block_start, body_start), tuple(items)))
                depth, body_start, item_open = 0, -1, -1
                line_has_code = True
                pos = at + 1
                continue
            code_at(at)
            depth -= 1
            if depth < 0:
                return None
            pos = at + 1
    except _Doubt:
        return None
    if depth != 0:
        return None
    return blocks


class _Doubt(Exception):
    """Internal: the scan cannot split this text safely."""


_WRAPPER = "machine m {\n"


def _moved(bounds: tuple[tuple[int, int], ...], delta: int) -> tuple[tuple[int, int], ...]:
    return tuple((lo + delta, hi + delta) for lo, hi in bounds)


def rescan(old: str, blocks: list[Block], new: str) -> list[Block] | None:
    """`scan(new)` from the scan of `old`, when they differ inside one item that stays one item; else None.

    The scan reads left to right and its state at an item's bounds is always the same (depth 1, at a line's
    start, the previous item ended there). So when the changed region lies inside one item and that item's new
    text, scanned alone inside a block, is exactly one item from its first to its last character, the scan of
    the rest is the old one, moved by the change in length."""
    edit = text_edit(old, new)
    if edit is None:
        return blocks
    delta = edit.delta
    for b, block in enumerate(blocks):
        for i, (lo, hi) in enumerate(block.items):
            if not (lo <= edit.start and edit.old_end <= hi):
                continue
            chunk = new[lo:hi + delta]
            inner = scan(_WRAPPER + chunk + "}\n", min_items=1)
            if inner != [Block((0, len(_WRAPPER)), ((len(_WRAPPER), len(_WRAPPER) + len(chunk)),))]:
                return None
            items = (*block.items[:i], (lo, hi + delta), *_moved(block.items[i + 1:], delta))
            later = [Block(_moved((x.header,), delta)[0], _moved(x.items, delta)) for x in blocks[b + 1:]]
            return [*blocks[:b], Block(block.header, items), *later]
    return None


# ---------------------------------------------------------------------------- moving nodes

_FIELDS: dict[type, tuple[str, ...]] = {}
_PLAIN = re.compile(r"(?:str|int|bool|float|None|tuple\[str, \.\.\.\])(?: \| (?:str|int|bool|float|None))*")
_MOVERS: dict[type, Any] = {}


def _fields(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(a.name for a in attrs.fields(cls))
    return names


def _mover(cls: type) -> Any:
    """A function copying one node class with its spans moved, fields that hold only text or numbers copied
    as they are (generated once per class: moving every node of a 1,500-state tree is on each edit's path)."""
    lines = ["def move(node, source, delta):", "    new = NEW(CLS)"]
    for a in attrs.fields(cls):
        kind = a.type if isinstance(a.type, str) else getattr(a.type, "__name__", "")
        if _PLAIN.fullmatch(kind):
            lines.append(f"    SET(new, {a.name!r}, node.{a.name})")
        elif kind in ("Span | None", "Span"):
            lines.append(f"    v = node.{a.name}")
            lines.append(f"    SET(new, {a.name!r}, None if v is None else "
                         "SPAN(source, v.start + delta, v.end + delta))")
        else:
            lines.append(f"    SET(new, {a.name!r}, relocate(node.{a.name}, source, delta))")
    lines.append("    return new")
    scope: dict[str, Any] = {"NEW": object.__new__, "CLS": cls, "SET": object.__setattr__, "SPAN": Span,
                             "relocate": relocate}
    exec("\n".join(lines), scope)
    return scope["move"]


def relocate(node: Any, source: SourceFile, delta: int) -> Any:
    """A copy of a node (or a tuple of them) with every span moved by `delta` into `source`."""
    if node is None:
        return None
    cls = type(node)
    move = _MOVERS.get(cls)
    if move is not None:
        return move(node, source, delta)
    if cls is tuple:
        return tuple([relocate(x, source, delta) for x in node])
    if cls is Span:
        return Span(source, node.start + delta, node.end + delta)
    if isinstance(node, n.Node):
        move = _MOVERS[cls] = _mover(cls)
        return move(node, source, delta)
    return node


def _relocate_pieces(node: Any, source: SourceFile, cuts: list[tuple[int, int]]) -> Any:
    """A copy of a frame node with each offset moved back into the whole text: `cuts` are (frame offset,
    added length) in order, an offset at or after a cut moving by the lengths added up to it."""
    def move(x: int) -> int:
        added = 0
        for at, length in cuts:
            if x >= at:
                added += length
        return x + added

    def walk(value: Any) -> Any:
        cls = type(value)
        if cls is Span:
            start = move(value.start)
            end = move(value.end) if value.end > value.start else start + (value.end - value.start)
            return Span(source, start, end)
        if cls is tuple:
            return tuple([walk(x) if isinstance(x, (n.Node, Span, tuple)) else x for x in value])
        if isinstance(value, n.Node):
            new = object.__new__(cls)
            for name in _fields(cls):
                field = getattr(value, name)
                if isinstance(field, (n.Node, Span, tuple)):
                    field = walk(field)
                object.__setattr__(new, name, field)
            return new
        return value

    return walk(node)


# ---------------------------------------------------------------------------- the parser


class ItemParser:
    """`parse_source` with each item's parse kept by its text (and its block's header)."""

    def __init__(self, size: int = CACHE_ITEMS) -> None:
        self.size = size
        self.items: OrderedDict[tuple[str, str], tuple[n.Stmt, ...] | None] = OrderedDict()
        self.scans: OrderedDict[str, tuple[str, list[Block]]] = OrderedDict()  # each path's last text and its scan
        self.stats = {"items": 0, "parsed": 0, "whole": 0, "rescanned": 0}

    def parse(self, source: SourceFile) -> tuple[n.Module | None, list[Diagnostic]]:
        """The module of a source (as `parse_source`), parsing only the items not seen before."""
        blocks = self._scan(source)
        if not blocks:
            self.stats["whole"] += 1
            return parse_source(source)
        text = source.text
        chunks = [(text[b.header[0]:b.header[1]], text[lo:hi]) for b in blocks for lo, hi in b.items]
        misses = sum(1 for key in chunks if key not in self.items)
        if misses > max(MIN_ITEMS, len(chunks) // 4):  # a new document or a large paste: one parse is faster
            self.stats["whole"] += 1
            module, diagnostics = parse_source(source)
            if module is not None and not diagnostics:
                self._keep(module, text, blocks)
            return module, diagnostics
        module = self._assemble(source, blocks)
        if module is None:
            self.stats["whole"] += 1
            return parse_source(source)
        return module, []

    def _scan(self, source: SourceFile) -> list[Block] | None:
        """The scan of a source, from the scan of the last text of its path when an edit lies inside one item."""
        last = self.scans.get(source.path)
        blocks = rescan(last[0], last[1], source.text) if last is not None else None
        if blocks is None:
            blocks = scan(source.text)
        else:
            self.stats["rescanned"] += 1
        if blocks is not None:
            self.scans[source.path] = (source.text, blocks)
            self.scans.move_to_end(source.path)
            while len(self.scans) > SCANS_KEPT:
                self.scans.popitem(last=False)
        return blocks

    def _keep(self, module: n.Module, text: str, blocks: list[Block]) -> None:
        """Keep the items of a whole parse as if each had been parsed in its block's header: moved to the
        wrapper's offsets (only where the tree has one statement per item, each inside its item's text)."""
        by_line = {_line_start(text, item.span.start): item for item in module.items
                   if isinstance(item, (n.Machine, n.Fragment)) and item.span is not None}
        for block in blocks:
            parsed = by_line.get(block.header[0])
            if parsed is None or len(parsed.items) != len(block.items):
                continue
            header = text[block.header[0]:block.header[1]]
            inside = all(stmt.span is not None and lo <= stmt.span.start and stmt.span.end <= hi
                         for stmt, (lo, hi) in zip(parsed.items, block.items))
            if not inside:
                continue
            for stmt, (lo, hi) in zip(parsed.items, block.items):
                chunk = text[lo:hi]
                wrapper = SourceFile(parsed.span.path if parsed.span else "", header + chunk + "}\n")
                self._store((header, chunk), (relocate(stmt, wrapper, len(header) - lo),))

    def _store(self, key: tuple[str, str], stmts: tuple[n.Stmt, ...] | None) -> None:
        self.items[key] = stmts
        self.items.move_to_end(key)
        while len(self.items) > self.size:
            self.items.popitem(last=False)

    def _item(self, header: str, chunk: str, path: str) -> tuple[n.Stmt, ...] | None:
        """The statements of one item's text parsed inside its block's header (offsets in that wrapper)."""
        key = (header, chunk)
        found = self.items.get(key, False)
        if found is not False:
            self.items.move_to_end(key)
            self.stats["items"] += 1
            return found  # type: ignore[return-value]
        self.stats["parsed"] += 1
        module, diagnostics = parse_source(SourceFile(path, header + chunk + "}\n"))
        stmts: tuple[n.Stmt, ...] | None = None
        if module is not None and not diagnostics and len(module.items) == 1:
            block = module.items[0]
            if isinstance(block, (n.Machine, n.Fragment)) and len(block.items) == 1 and not block.end_comments:
                stmts = block.items
        self._store(key, stmts)
        return stmts

    def _assemble(self, source: SourceFile, blocks: list[Block]) -> n.Module | None:
        """The whole tree from the frame and the items, or None when any part needs the full parse."""
        text = source.text
        frame_parts: list[str] = []
        cuts: list[tuple[int, int]] = []  # (frame offset, length removed there)
        at = 0
        frame_len = 0
        bodies: list[tuple[n.Stmt, ...]] = []
        for block in blocks:
            header = text[block.header[0]:block.header[1]]
            body: list[n.Stmt] = []
            for lo, hi in block.items:
                stmts = self._item(header, text[lo:hi], source.path)
                if stmts is None:
                    return None
                body.extend(relocate(stmts, source, lo - len(header)))
            bodies.append(tuple(body))
            lo, hi = block.items[0][0], block.items[-1][1]
            frame_parts.append(text[at:lo])
            frame_len += lo - at
            cuts.append((frame_len, hi - lo))
            at = hi
        frame_parts.append(text[at:])
        frame = "".join(frame_parts)
        module, diagnostics = parse_source(SourceFile(source.path, frame))
        if module is None or diagnostics:
            return None
        whole: n.Module = _relocate_pieces(module, source, cuts)
        split = {b.header[0]: body for b, body in zip(blocks, bodies)}
        items = []
        used = 0
        for item in whole.items:
            if isinstance(item, (n.Machine, n.Fragment)) and item.span is not None:
                start = _line_start(text, item.span.start)
                if start in split:
                    if item.items:
                        return None  # the frame's block kept statements: the scan and the grammar disagree
                    object.__setattr__(item, "items", split[start])
                    used += 1
            items.append(item)
        if used != len(blocks):
            return None
        object.__setattr__(whole, "items", tuple(items))
        return whole


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1
