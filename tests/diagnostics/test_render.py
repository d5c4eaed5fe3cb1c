"""Output formats keep everything a diagnostic carries: secondary labels in JSON, one flattened text elsewhere."""

from __future__ import annotations

import json

from skillc.diagnostics import Label, SourceFile, Span, codes, make
from skillc.diagnostics.render import flat_text, render, to_sarif

SOURCE = SourceFile.from_text("lib/a.skm", "machine m {\n  start a\n}\n")


def _diagnostic():
    return make(codes.UNDEFINED_VARIABLE, "`x` is not defined", Span(SOURCE, 14, 21), label="used here",
                hint="declare it",
                secondary=[Label(Span(SOURCE, 0, 7), "declared in this machine")],
                notes=["a note"], witness=["a -> b", "b -> c"])


def test_json_keeps_secondary_labels() -> None:
    (line,) = render([_diagnostic()], "json").splitlines()
    obj = json.loads(line)
    assert obj["label"] == "used here"
    assert obj["related"] == [{"file": "lib/a.skm", "line": 1, "column": 1, "end_line": 1, "end_column": 8,
                               "message": "declared in this machine"}]
    assert obj["notes"] == ["a note"] and obj["witness"] == ["a -> b", "b -> c"]


def test_flat_text_holds_hint_witness_and_notes() -> None:
    d = _diagnostic()
    assert flat_text(d) == "`x` is not defined\nhelp: declare it\nwitness: a -> b\nwitness: b -> c\nnote: a note"
    assert flat_text(make(codes.IO_ERROR, "cannot read")) == "cannot read"


def test_sarif_messages_are_the_flat_text() -> None:
    d = _diagnostic()
    (result,) = to_sarif([d])["runs"][0]["results"]
    assert result["message"]["text"] == flat_text(d)
    assert result["relatedLocations"][0]["message"]["text"] == "declared in this machine"
