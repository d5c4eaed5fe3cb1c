"""What the language server knows about one document: definitions, references, words at positions.

Built from the parsed AST (and, for fragments defined in imported files, the
loader's result), so it works on any document that parses, even one with type
errors. Positions are offsets; `skillc.lsp.lines` converts them for the protocol.
"""

from __future__ import annotations

import bisect
import re
from typing import Literal

import attrs

from skillc.diagnostics import Span
from skillc.syntax import nodes as n

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_SKIP = re.compile(r'"""(?:[^"]|"(?!""))*"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*')


# What a name of a document defines (`rule` only names a document symbol, never a definition).
SymbolKind = Literal["state", "terminal", "variable", "tool", "fragment", "type", "instance", "rule"]


@attrs.define
class Definition:
    """One definition of a name: what it is, where it is written and where its name is."""

    name: str
    kind: SymbolKind
    span: Span
    name_span: Span
    node: n.Node | None = None


@attrs.define
class Index:
    """Definitions by name, and every identifier occurrence (outside strings and comments)."""

    text: str
    definitions: dict[str, list[Definition]] = attrs.Factory(dict)
    occurrences: list[tuple[int, int, str]] = attrs.Factory(list)  # (start, end, word), in order
    _starts: list[int] | None = None

    def define(self, name: str, kind: SymbolKind, node: n.Node) -> None:
        span = node.span
        if span is None:
            return
        at = name_offset(self.text, span.start, span.end, name)
        name_span = Span(span.source, at, at + len(name)) if at is not None else span
        self.definitions.setdefault(name, []).append(Definition(name, kind, span, name_span, node))

    def word_at(self, offset: int) -> tuple[int, int, str] | None:
        """The identifier (possibly dotted) covering an offset."""
        i = bisect.bisect_right(self.starts, offset) - 1
        if i >= 0:
            start, end, word = self.occurrences[i]
            if start <= offset <= end:
                return start, end, word
        return None

    @property
    def starts(self) -> list[int]:
        if self._starts is None or len(self._starts) != len(self.occurrences):
            self._starts = [o[0] for o in self.occurrences]
        return self._starts


def name_offset(text: str, start: int, end: int, name: str) -> int | None:
    """Where a declaration's name is in `text[start:end]`: its first whole-word occurrence after the leading
    keyword (as `Span.narrow`, without compiling a pattern per name)."""
    at = start
    while at < end and (text[at].isalnum() or text[at] == "_"):
        at += 1
    while True:
        at = text.find(name, at, end)
        if at == -1:
            return None
        before = text[at - 1] if at > 0 else " "
        after = text[at + len(name)] if at + len(name) < len(text) else " "
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after in "_."):
            return at
        at += 1


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
