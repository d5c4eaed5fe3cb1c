"""What the language server knows about one document: definitions, references, words at positions.

Built from the parsed AST (and, for fragments defined in imported files, the
loader's result), so it works on any document that parses, even one with type
errors. Positions are 0-based (line, UTF-16 column) as LSP wants them.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import attrs

from skillc.diagnostics import Span
from skillc.syntax import nodes as n

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SKIP = re.compile(r'"""(?:[^"]|"(?!""))*"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*')


def utf16_col(line_text: str, col_chars: int) -> int:
    """A 0-based code-point column as a UTF-16 column."""
    return len(line_text[:col_chars].encode("utf-16-le")) // 2


def chars_col(line_text: str, col_utf16: int) -> int:
    """A 0-based UTF-16 column as a code-point column."""
    units = 0
    for i, ch in enumerate(line_text):
        if units >= col_utf16:
            return i
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text)


def lsp_position(text_lines: list[str], offset_line: int, offset_col: int) -> tuple[int, int]:
    """1-based (line, column) of skillc into a 0-based LSP position."""
    line = text_lines[offset_line - 1] if 0 < offset_line <= len(text_lines) else ""
    return offset_line - 1, utf16_col(line, offset_col - 1)


# What a name of a document defines (`rule` only names a document symbol, never a definition).
SymbolKind = Literal["state", "terminal", "variable", "tool", "fragment", "type", "instance", "rule"]


@attrs.define
class Definition:
    """One definition of a name: what it is, where it is written and where its name is."""

    name: str
    kind: SymbolKind
    span: Span
    name_span: Span
    node: Any = None


@attrs.define
class Index:
    """Definitions by name, and every identifier occurrence (outside strings and comments)."""

    text: str
    definitions: dict[str, list[Definition]] = attrs.Factory(dict)
    occurrences: list[tuple[int, int, str]] = attrs.Factory(list)  # (start, end, word)

    def define(self, name: str, kind: SymbolKind, node: n.Node) -> None:
        span = node.span
        if span is None:
            return
        self.definitions.setdefault(name, []).append(Definition(name, kind, span, span.narrow(name), node))

    def word_at(self, offset: int) -> tuple[int, int, str] | None:
        """The identifier (possibly dotted) covering an offset."""
        for start, end, word in self.occurrences:
            if start <= offset <= end:
                return start, end, word
        return None


def build_index(module: n.Module, text: str) -> Index:
    """Definitions and occurrences of one parsed document."""
    index = Index(text)
    for item in module.items:
        if isinstance(item, (n.RecordDecl, n.EnumDecl)):
            index.define(item.name, "type", item)
        elif isinstance(item, (n.Machine, n.Fragment)):
            if isinstance(item, n.Fragment):
                index.define(item.name, "fragment", item)
                for p in item.params:
                    index.define(p.name, "variable", p)
            for decl in item.items:
                if isinstance(decl, n.State):
                    index.define(decl.name, "state", decl)
                elif isinstance(decl, n.Terminal):
                    index.define(decl.name, "terminal", decl)
                elif isinstance(decl, n.Fallback):
                    index.define("fallback", "terminal", decl)
                elif isinstance(decl, n.VarDecl | n.CounterDecl):
                    index.define(decl.name, "variable", decl)
                elif isinstance(decl, n.ToolDecl):
                    index.define(decl.name, "tool", decl)
                elif isinstance(decl, (n.RecordDecl, n.EnumDecl)):
                    index.define(decl.name, "type", decl)
                elif isinstance(decl, n.Use):
                    index.define(decl.name, "instance", decl)
    masked = _SKIP.sub(lambda m: " " * len(m.group(0)), text)
    index.occurrences = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(masked)]
    return index
