"""Diagnostics shared by every stage: spans, the record, the `Code` value, rendering.

The list of every code is `skillc.registry` (it imports each stage's table); this
package holds none of it, so importing it loads no stage.
"""

from skillc.diagnostics.code import Code
from skillc.diagnostics.diagnostic import (
    Diagnostic,
    Label,
    Severity,
    Suggestion,
    has_errors,
    internal_error,
    make,
    unique,
)
from skillc.diagnostics.source import SourceFile, Span

__all__ = [
    "Code",
    "Diagnostic",
    "Label",
    "Severity",
    "SourceFile",
    "Span",
    "Suggestion",
    "has_errors",
    "internal_error",
    "make",
    "unique",
]
