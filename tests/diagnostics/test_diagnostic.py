"""`make()`: a `Code` value gives the diagnostic its code, severity and default hint."""

from __future__ import annotations

from skillc.diagnostics import Code, Diagnostic, Label, Severity, SourceFile, Span, codes, make


def test_make_takes_severity_and_hint_from_the_code_object() -> None:
    # Not in any table: make() must not look it up.
    custom = Code("SKM998", "made-up", Severity.NOTE, "s", "e", "", "", hint="do this")
    d = make(custom, "message")
    assert (str(d.code), d.severity, d.hint, d.message) == ("SKM998", Severity.NOTE, "do this", "message")
    assert make(custom, "m", hint="other").hint == "other"


def test_make_with_a_table_constant_fills_every_field() -> None:
    span = Span(SourceFile.from_text("a.skm", "machine m {}\n"), 0, 7)
    there = Label(span, "there")
    d = make(codes.UNDEFINED_VARIABLE, "undefined", span, label="here", secondary=[there], notes=["n"],
             witness=["a -> b"])
    assert d == Diagnostic(code=codes.UNDEFINED_VARIABLE, message="undefined", span=span, severity=Severity.ERROR,
                           label="here", secondary=(there,), notes=("n",), hint=codes.UNDEFINED_VARIABLE.hint,
                           witness=("a -> b",))
    assert codes.UNDEFINED_VARIABLE.code == "SKM103" and codes.UNDEFINED_VARIABLE.slug == "undefined-variable"
