"""Diagnostics shared by every stage: spans, the record, the code registry, rendering."""

from skillc.diagnostics.codes import REGISTRY, Code, lookup
from skillc.diagnostics.diagnostic import Diagnostic, Label, Severity, has_errors, make
from skillc.diagnostics.source import SourceFile, Span

__all__ = [
    "REGISTRY",
    "Code",
    "Diagnostic",
    "Label",
    "Severity",
    "SourceFile",
    "Span",
    "has_errors",
    "lookup",
    "make",
]
