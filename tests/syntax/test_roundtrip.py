"""Properties: parse(print(ast)) == ast for generated ASTs, and formatting is idempotent."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from skillc.api import format_text, parse
from skillc.syntax.printer import print_module
from tests.strategies import modules

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(modules)
def test_parse_print_roundtrip(module) -> None:
    text = print_module(module)
    parsed, diags = parse(text)
    assert [d for d in diags if d.is_error] == [], text
    assert parsed == module, text


@SETTINGS
@given(modules)
def test_fmt_is_idempotent(module) -> None:
    once = print_module(module)
    twice, _ = format_text(once)
    assert twice == once
