"""Syntax errors: one coded diagnostic with a precise span and a useful note or hint."""

from __future__ import annotations

import pytest

from skillc.api import parse

# (source, code, (line, col) of the primary span, a substring of the message, note or hint)
FAIL = [
    ("machine m { model a { write x } }", "SKM009", (1, 23), "did you mean `writes`?"),
    ("machine m { modle a {} }", "SKM010", (1, 13), "did you mean `model`?"),
    ("machine m {\n  model a {\n    -> \n  }\n}", "SKM011", (4, 3), "write the target state"),
    ("machine m { input q: }", "SKM012", (1, 22), "expected a type"),
    ("machine m { model a { when x and -> b } }", "SKM013", (1, 34), "expression"),
    ("machine m { model a { when 1 < x <= 3 -> b } }", "SKM008", (1, 34), "join the comparisons"),
    ("machine m { rule forbid rm }", "SKM014", (1, 28), "quoted sentence"),
    ("machine m { model a { when x == 1 b } }", "SKM015", (1, 35), "insert `->`"),
    ("model a {}", "SKM016", (1, 1), "top level"),
    ("machine m {\n  model a {\n", "SKM005", (2, 12), "never closed"),
    ('machine m { doc "abc\n}', "SKM003", (1, 17), '"""'),
    ('machine m { doc "a\\x" }', "SKM006", (1, 19), "\\x"),
    ("machine m { var x: int = 1 @ 2 }", "SKM002", (1, 28), "`@`"),
    ("machine m { tool t(a: int) -> b }", "SKM004", (1, 31), "`(`"),
]


def _text(d) -> str:
    return " ".join([d.message, d.label, d.hint or "", *d.notes, *(s.message for s in d.secondary)])


@pytest.mark.parametrize(("source", "code", "pos", "needle"), FAIL, ids=[f[1] for f in FAIL])
def test_syntax_error(source: str, code: str, pos: tuple[int, int], needle: str) -> None:
    module, diags = parse(source)
    assert (module is None) == (code != "SKM006")  # a bad escape does not stop the parse
    assert [str(d.code) for d in diags] == [code]
    assert diags[0].span.start_pos == pos
    assert needle in _text(diags[0])


def test_unclosed_block_points_at_the_open_brace() -> None:
    _, diags = parse("machine m {\n  model a {\n    -> b\n")
    (d,) = diags
    assert d.secondary[0].span.start_pos == (2, 11)
    assert d.secondary[0].message == "this block is never closed"


def test_keywords_are_whole_words_and_contextual() -> None:
    module, diags = parse("machine m { var variable: int var model: str start model "
                          "model model { reads model -> model } }")
    assert diags == []
    state = module.machines[0].items[-1]
    assert state.name == "model" and state.kind == "model"


def test_unicode_in_error_columns() -> None:
    _, diags = parse('machine m { doc "é😀" model a { when -> b } }')
    assert diags[0].span.start_pos == (1, 37)
    assert diags[0].message == "an expression is missing here"
