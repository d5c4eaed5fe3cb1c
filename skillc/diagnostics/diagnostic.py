"""The diagnostic record every stage returns instead of raising."""

from __future__ import annotations

import os
import traceback
from collections.abc import Iterable, Mapping

import attrs

from skillc.diagnostics.code import Code, Severity
from skillc.diagnostics.codes import INTERNAL_ERROR
from skillc.diagnostics.source import Span

__all__ = ["Diagnostic", "HasDiagnostics", "Label", "Severity", "Suggestion", "has_errors", "internal_error", "make",
           "unique"]


@attrs.frozen
class Label:
    """A secondary span with a short message ("this earlier guard already covers it")."""

    span: Span
    message: str = ""


@attrs.frozen
class Suggestion:
    """A "did you mean" hint as a value: the name that was written and the close one meant instead.

    Given as a diagnostic's `hint`, it is printed as the hint (`did you mean `plan`?`) and kept in `data`
    (`name`, `suggestion`), so an editor's quick fix replaces the name without reading the text.
    """

    name: str
    replacement: str

    def __str__(self) -> str:
        return f"did you mean `{self.replacement}`?"


@attrs.frozen
class Diagnostic:
    """One finding: a stable code, a message, where, and how to fix it.

    `code` is the `Code` record of a stage's table (number, slug, default severity, documentation): compare it
    with the table's constants (`d.code == codes.UNDEFINED_VARIABLE`); `str(d.code)` is `"SKM103"`, what
    every output format prints. `data` names what the finding is about for programs that act on it.
    """

    code: Code
    message: str
    span: Span | None = None
    severity: Severity = Severity.ERROR
    label: str = ""
    secondary: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    hint: str | None = None
    witness: tuple[str, ...] = ()
    #: What the finding is about, as named values (`("state", "plan"), ("var", "draft")`) that a consumer reads
    #: instead of parsing the message; sorted by key, never rendered.
    data: tuple[tuple[str, str], ...] = ()

    def datum(self, key: str) -> str | None:
        """The value of one of `data`'s keys; None when the producer gave none."""
        return next((value for k, value in self.data if k == key), None)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def with_severity(self, severity: Severity) -> Diagnostic:
        """A copy with another severity (configuration, --strict)."""
        return attrs.evolve(self, severity=severity)

    def sort_key(self) -> tuple[str, int, str]:
        """Order by file, position, then code, so output is stable."""
        if self.span is None:
            return ("", 0, self.code.code)
        return (self.span.path, self.span.start, self.code.code)


def make(
    code: Code,
    message: str,
    span: Span | None = None,
    *,
    label: str = "",
    secondary: Iterable[Label] = (),
    notes: Iterable[str] = (),
    hint: str | Suggestion | None = None,
    witness: Iterable[str] = (),
    data: Mapping[str, str] | None = None,
) -> Diagnostic:
    """Build a diagnostic whose severity (and, unless given, hint) are the defaults of its code.

    A `Suggestion` hint is printed as its text and named in `data` (`name`, `suggestion`)."""
    if isinstance(hint, Suggestion):
        data = {**(data or {}), "name": hint.name, "suggestion": hint.replacement}
        hint = str(hint)
    return Diagnostic(
        code=code,
        message=message,
        span=span,
        severity=code.severity,
        label=label,
        secondary=tuple(secondary),
        notes=tuple(notes),
        hint=hint if hint is not None else code.hint,
        witness=tuple(witness),
        data=tuple(sorted(data.items())) if data else (),
    )



def has_errors(diagnostics: Iterable[Diagnostic]) -> bool:
    """True when any diagnostic is an error."""
    return any(d.is_error for d in diagnostics)


class HasDiagnostics:
    """Mixin for stage results that carry a `diagnostics` list."""

    diagnostics: list[Diagnostic]

    @property
    def ok(self) -> bool:
        """True when no error was found (warnings allowed)."""
        return not has_errors(self.diagnostics)


def internal_error(exc: BaseException, what: str) -> Diagnostic:
    """SKM900 for an exception skillc did not expect (a bug): the note says what it was doing."""
    notes = [f"while {what}: {type(exc).__name__}: {exc}"]
    if os.environ.get("SKILLC_DEBUG"):
        notes.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return make(INTERNAL_ERROR,
                "internal error in skillc (this is a bug, not a problem with your input)", notes=notes)


def unique(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Drop repeats (an imported file checked on its own and through an import reports once)."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for d in diagnostics:
        key = (d.code, d.message, d.span.path if d.span else None, d.span.start if d.span else None)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
