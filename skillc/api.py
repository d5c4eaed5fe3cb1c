"""The Python API: parse, load and format `.skm` without touching the CLI.

A `str` argument is `.skm` *text*; a `pathlib.Path` (or any `os.PathLike`) is a
file to read. User errors come back as diagnostics, never as exceptions.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from skillc.diagnostics import Diagnostic
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.ir.loader import LoadResult, Loader
from skillc.diagnostics.source import SourceFile
from skillc.syntax import nodes
from skillc.syntax.parser import parse_source, read_source
from skillc.syntax.printer import print_module


@attrs.define
class ParseResult(HasDiagnostics):
    """A module (None after a syntax error) and the diagnostics found while parsing."""

    module: nodes.Module | None
    diagnostics: list[Diagnostic]


    def __iter__(self):
        yield self.module
        yield self.diagnostics


def parse(source: str | os.PathLike, *, path: str | None = None) -> ParseResult:
    """Parse `.skm` text (a `str`) or a file (a path) into an AST."""
    if isinstance(source, os.PathLike):
        src, diags = read_source(source)
        if src is None:
            return ParseResult(None, diags)
    else:
        src = SourceFile(path or "<string>", source.replace("\r\n", "\n"))
    module, diags = parse_source(src)
    return ParseResult(module, diags)


def load(source: str | os.PathLike, *, path: str | None = None, root: str | os.PathLike | None = None) -> LoadResult:
    """Parse, resolve imports and lower to a `Machine`; `result.machine` is None when that failed."""
    loader = Loader(Path(root) if root is not None else None)
    if isinstance(source, os.PathLike):
        return loader.load_path(Path(source))
    text = source.replace("\r\n", "\n")
    return loader.load_source(SourceFile(path or "<string>", text), Path(path) if path else None)


def format_text(text: str, *, path: str = "<string>") -> tuple[str | None, list[Diagnostic]]:
    """The canonical form of `.skm` text, or None with diagnostics when it does not parse."""
    module, diags = parse(text, path=path)
    if module is None:
        return None, diags
    return print_module(module), diags
