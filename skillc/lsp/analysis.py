"""One full check of a document, what it depended on, and a cache of checks by text.

`run_check` is the whole engine of `skillc check` (parse, imports, lowering, every check, Z3), with the
editor's unsaved buffers read in place of the files they are open for (`ImportCache.texts`). An
`Analysis` keeps its result with the files it read (each import with a fingerprint: the buffer's text, or
the file's size and modification time), and builds what the features need from it on first use: the
index of definitions, the resolved names, the layout of comments and strings for the fast path.
`ResultCache` returns one of the last six analyses of the same text (an undo, a save, switching back) when none of
the files it read has changed since and no watched file has.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from skillc import language
from skillc.check.context import Kept
from skillc.check.incremental import ItemParser
from skillc.check.source import CheckResult
from skillc.diagnostics import Diagnostic, SourceFile
from skillc.ir.loader import ImportCache
from skillc.lsp.index import Index, build_index
from skillc.lsp.resolve import Resolved, resolve
from skillc.lsp.trivia import Layout
from skillc.syntax import nodes as n

if TYPE_CHECKING:
    from skillc.ir.machine import Machine
    from skillc.ir.symbols import FragmentDef

Fingerprint = tuple[Any, ...]


def normalise(text: str) -> str:
    """A document's text as the checker sees it (Windows line ends normalised, as `SourceFile.from_text`)."""
    return text.replace("\r\n", "\n") if "\r" in text else text


def fingerprint(path: Path, overlay: Mapping[Path, str]) -> Fingerprint:
    """What a file read by a check was: an open buffer's text hash, else its size and modification time."""
    if path in overlay:
        return ("buffer", hash(overlay[path]))
    try:
        st = os.stat(path)
    except OSError:
        return ("missing",)
    return ("file", st.st_mtime_ns, st.st_size)


def run_check(text: str, path: str, overlay: Mapping[Path, str],
              root: str | None = None) -> tuple[CheckResult, ImportCache]:
    """One full check (in the checking thread), open buffers read instead of their files; imports confined to
    `root` when given (the workspace), else to the document's project root as `skillc check` does."""
    imports = ImportCache()
    texts = getattr(imports, "texts", None)
    if isinstance(texts, dict):
        texts.update(overlay)
    imports.parse = _parse
    return language.check(text, path=path, imports=imports, root=root, kept=KEPT), imports


#: Per-state analyses kept across the server's checks (`skillc.check.context.Kept`): an unchanged state's guard
#: verdicts are reused, not asked of the solver again.
KEPT = Kept()
_PARSER = ItemParser()
_PARSING = threading.Lock()


def _parse(source: SourceFile) -> tuple[n.Module | None, list[Diagnostic]]:
    """The entry text's parse, its items' parses kept by text across checks (`skillc.check.incremental`)."""
    with _PARSING:
        return _PARSER.parse(source)


@attrs.define(eq=False)
class Analysis:
    """The result of one full check of one text of a document."""

    uri: str
    path: str
    text: str  # normalised
    result: CheckResult
    imports: ImportCache
    deps: dict[Path, Fingerprint]
    generation: int
    symbols: Any = None  # the document symbols (serialised), built on the first request
    _layout: Layout | None = None
    _index: Index | None = None
    _resolved: Resolved | None = None

    @classmethod
    def make(cls, uri: str, path: str, text: str, result: CheckResult, imports: ImportCache,
             overlay: Mapping[Path, str], generation: int) -> Analysis:
        """The analysis of a check; its layout and index are built on first use (`prepare`, in the checking
        thread right after its findings are published, or by the first request or edit that needs them)."""
        deps = {p: fingerprint(p, overlay) for p in imports.done}
        return cls(uri, path, text, result, imports, deps, generation)

    def prepare(self) -> None:
        """Build what edits and requests read next (the layout of comments and strings, the index)."""
        _ = self.layout, self.index

    @property
    def layout(self) -> Layout | None:
        """Where the comments, strings and statements are (the trivia fast path); None when it did not parse."""
        if self._layout is None and self.module is not None:
            self._layout = Layout.build(self.text, self.module)
        return self._layout

    @property
    def module(self) -> n.Module | None:
        return self.result.module

    @property
    def machine(self) -> Machine | None:
        return self.result.machine

    @property
    def index(self) -> Index | None:
        if self._index is None and self.module is not None:
            self._index = build_index(self.module, self.text)
        return self._index

    @property
    def resolved(self) -> Resolved | None:
        if self._resolved is None and self.module is not None:
            try:
                path = str(Path(self.path).resolve()) if self.uri.startswith("file:") else self.path
            except (OSError, RuntimeError, ValueError):
                path = self.path
            self._resolved = resolve(self.module, self.text, path, self.fragment_paths())
        return self._resolved

    def fragments(self) -> dict[str, FragmentDef]:
        """Fragments of the files this check imported, by name."""
        return {name: f for lowered in self.imports.done.values() if lowered for name, f in lowered.fragments.items()}

    def fragment_paths(self) -> dict[str, str]:
        """Imported fragment -> the file that defines it."""
        return {name: f.span.path for name, f in self.fragments().items() if f.span is not None}

    def valid(self, overlay: Mapping[Path, str], generation: int) -> bool:
        """Whether a check now would read the same files (no watched file changed, no import edited)."""
        return generation == self.generation and all(fingerprint(p, overlay) == fp for p, fp in self.deps.items())


class ResultCache:
    """The last few analyses, by (path, text). Few: each holds a whole AST and machine, and every object kept
    makes the garbage collector's full passes longer."""

    def __init__(self, size: int = 6) -> None:
        self.size = size
        self.entries: OrderedDict[tuple[str, str], Analysis] = OrderedDict()

    def get(self, path: str, text: str, overlay: Mapping[Path, str], generation: int) -> Analysis | None:
        found = self.entries.get((path, text))
        if found is None:
            return None
        if not found.valid(overlay, generation):
            del self.entries[(path, text)]
            return None
        self.entries.move_to_end((path, text))
        return found

    def put(self, analysis: Analysis) -> None:
        self.entries[(analysis.path, analysis.text)] = analysis
        self.entries.move_to_end((analysis.path, analysis.text))
        while len(self.entries) > self.size:
            self.entries.popitem(last=False)

    def clear(self) -> None:
        self.entries.clear()

    def forget(self, path: str) -> None:
        """Drop a closed document's analyses."""
        for key in [k for k in self.entries if k[0] == path]:
            del self.entries[key]
