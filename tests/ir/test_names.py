"""Names: reserved words and fresh names."""

from __future__ import annotations

from skillc.ir.names import RESERVED_VARIABLES, unique


def test_unique_takes_the_first_free_suffix() -> None:
    assert unique("x", set()) == "x"
    assert unique("x", {"x"}) == "x_2"
    assert unique("x", {"x", "x_2", "x_3"}) == "x_4"
    assert unique("x", {"x_2"}) == "x"


def test_literal_and_operator_words_are_reserved() -> None:
    assert {"true", "false", "none", "and", "or", "not", "in"} == RESERVED_VARIABLES


def test_unique_can_start_at_a_later_suffix() -> None:
    assert unique("x", set(), start=5) == "x"
    assert unique("x", {"x"}, start=5) == "x_5"
    assert unique("x", {"x", "x_5"}, start=5) == "x_6"
