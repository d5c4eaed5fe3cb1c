"""Offsets ↔ LSP positions in linear time: one line-offset index per text, shared by every feature.

LSP positions are 0-based (line, column); columns count UTF-16 code units unless the client and
server agreed on another position encoding at initialisation (`set_encoding`: "utf-8" or
"utf-32"; pygls picks the client's first choice, Neovim offers UTF-8 first). A `LineIndex` is built
once per text (one scan for newlines, in C) and answers each conversion with a bisect plus work on
one line only (none when the text is ASCII, the usual case). `line_index(text)` keeps the indexes of the last few
texts (a document's versions, the files of its imports), keyed by the text itself: Python caches
a string's hash, so a lookup is O(1) after the first.
"""

from __future__ import annotations

import bisect
import threading
from collections import OrderedDict

from lsprotocol import types as lsp

from skillc.diagnostics import Span

ENCODING = "utf-16"


def set_encoding(encoding: str) -> None:
    """The position encoding of this session ("utf-16", "utf-8" or "utf-32")."""
    global ENCODING
    ENCODING = encoding if encoding in ("utf-8", "utf-32") else "utf-16"


def units(text: str) -> int:
    """The length of a text in the session's column units."""
    if text.isascii() or ENCODING == "utf-32":
        return len(text)
    if ENCODING == "utf-8":
        return len(text.encode("utf-8"))
    return len(text.encode("utf-16-le")) // 2


class LineIndex:
    """Line starts of one text, and conversions between offsets and LSP positions."""

    __slots__ = ("_ascii", "starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self.starts = starts
        self._ascii = text.isascii()

    def line_of(self, offset: int) -> int:
        """The 0-based line of an offset."""
        return bisect.bisect_right(self.starts, offset) - 1

    def line_text(self, line: int) -> str:
        """A 0-based line without its newline ('' past the end)."""
        if not 0 <= line < len(self.starts):
            return ""
        end = self.starts[line + 1] - 1 if line + 1 < len(self.starts) else len(self.text)
        return self.text[self.starts[line]:end]

    def position(self, offset: int) -> lsp.Position:
        """The LSP position of an offset (clamped to the text)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        if self._ascii:
            return lsp.Position(line, offset - start)
        return lsp.Position(line, units(self.text[start:offset]))

    def range(self, start: int, end: int) -> lsp.Range:
        return lsp.Range(self.position(start), self.position(end))

    def offset(self, pos: lsp.Position) -> int:
        """The offset of an LSP position (a column past the line's end is its end; a line past the text, its end)."""
        if pos.line >= len(self.starts):
            return len(self.text)
        if pos.line < 0:
            return 0
        start = self.starts[pos.line]
        end = self.starts[pos.line + 1] - 1 if pos.line + 1 < len(self.starts) else len(self.text)
        if self._ascii:
            return start + min(max(pos.character, 0), end - start)
        line = self.text[start:end]
        return start + chars_col(line, pos.character)

    def end_position(self) -> lsp.Position:
        return self.position(len(self.text))


def chars_col(line_text: str, col_units: int) -> int:
    """A 0-based column in the session's units as a code-point column (inside a character: rounds up)."""
    col_units = max(0, col_units)
    if line_text.isascii() or ENCODING == "utf-32":
        return min(col_units, len(line_text))
    count = 0
    for i, ch in enumerate(line_text):
        if count >= col_units:
            return i
        count += (1 if ord(ch) < 0x80 else 2 if ord(ch) < 0x800 else 3 if ord(ch) < 0x10000 else 4) \
            if ENCODING == "utf-8" else (2 if ord(ch) > 0xFFFF else 1)
    return len(line_text)


_CACHE: OrderedDict[str, LineIndex] = OrderedDict()
_CACHE_SIZE = 16


_LOCK = threading.Lock()


def line_index(text: str) -> LineIndex:
    """The (cached) index of a text."""
    with _LOCK:
        found = _CACHE.get(text)
        if found is not None:
            _CACHE.move_to_end(text)
            return found
    index = LineIndex(text)
    with _LOCK:
        _CACHE[text] = index
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return index


def span_range(span: Span) -> lsp.Range:
    """The LSP range of a span, through its source's (cached) index."""
    return line_index(span.source.text).range(span.start, span.end)
