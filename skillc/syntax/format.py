"""The formatter: `.skm` text → its canonical form, refused when the result would not parse back the same."""

from __future__ import annotations

from skillc.diagnostics import codes
from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.diagnostics.source import SourceFile
from skillc.syntax import printer
from skillc.syntax.parser import parse_source


def format_source(text: str, path: str = "<string>") -> tuple[str | None, list[Diagnostic]]:
    """The canonical text and the parser's diagnostics; None when it does not parse or would not round-trip."""
    module, diagnostics = parse_source(SourceFile.from_text(path, text))
    if module is None:
        return None, diagnostics
    new = printer.print_module(module)  # through the module, so a test can stand in a broken printer
    if parse_source(SourceFile.from_text(path, new))[0] != module:
        return None, [make(codes.INTERNAL_ERROR, "internal error: the formatted file would not parse back to the "
                           f"same program, so {path} was left untouched (this is a bug)")]
    return new, diagnostics
