"""The language card is generated from the grammar, the reference and the tool kit: complete, checked, stable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import skillc
from skillc.frontends.markdown import card as c
from skillc.ir.exprs import FUNCTIONS
from skillc.ir.toolkit import KIT_SOURCE, PLACES, WORLD_FUNCTIONS


def _words(text: str) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))


@pytest.mark.parametrize("level", ["full", "brief"])
def test_every_rule_and_keyword_of_the_grammar_is_on_the_card(level: c.Level) -> None:
    rules, keywords = c.grammar_constructs()
    assert {"use_tools", "allow_decl", "rule_reads", "fragment", "optional_type"} <= rules  # the parse is real
    words = _words(c.card(level))
    assert rules - words == set()
    assert keywords - words == set()


def test_the_card_follows_the_reference_keyword_list() -> None:
    """The reference's keyword list (docs/language.md §2) is the grammar's: both on the card."""
    text = c.language_path().read_text(encoding="utf-8")
    block = re.search(r"The keywords are:\n\n```text\n(.*?)```", text, re.S)
    assert block is not None
    assert set(block.group(1).split()) - _words(c.card()) == set()


def test_the_tool_kit_builtins_places_and_stdlib_are_on_the_card() -> None:
    text = c.card()
    for name, source in KIT_SOURCE.items():
        assert source.removeprefix("tool ") in text, name
    for name in (*FUNCTIONS, *WORLD_FUNCTIONS, *PLACES):
        assert f"`{name}" in text, name
    for path in sorted(Path(skillc.__file__).resolve().parent.parent.joinpath("stdlib").glob("*.skm")):
        assert f'import "stdlib/{path.name}"' in text
    for kind in c.RULE_KINDS:
        assert f"`rule {kind} " in text
    assert "ask_user" in text and "skill_dir ++ \"/references/" in text and "stderr" in text


def test_every_rule_kind_of_the_grammar_says_what_it_proves() -> None:
    rules, _ = c.grammar_constructs()
    kinds = {r.removeprefix("rule_") for r in rules if r.startswith("rule_")}
    assert kinds == set(c.RULE_KINDS)


def test_the_worked_example_passes_the_checker(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text(c.EXAMPLE_SKILL, encoding="utf-8")
    machine = tmp_path / "release_notes.skm"
    machine.write_text(c.EXAMPLE_MACHINE, encoding="utf-8")
    result = skillc.check(machine, skill=tmp_path / "SKILL.md")
    assert result.machine is not None
    assert [str(d.code) for d in result.diagnostics if d.is_error or d.severity.name == "WARNING"] == []
    assert c.EXAMPLE_MACHINE in c.card()  # the card shows the very text that was checked


def test_the_card_is_deterministic() -> None:
    first = c.card()
    c.card.cache_clear()
    assert c.card() == first
    assert c.card("brief") != first and len(c.card("brief")) < len(first) / 2


def test_the_reference_has_every_section_and_builtin_the_card_takes() -> None:
    assert c.problems() == []


def test_a_renamed_section_of_the_reference_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(c, "SECTIONS", (*c.SECTIONS, "## 99. A section the reference does not have"))
    reference = c.language_path().read_text(encoding="utf-8")
    assert c.problems() == ["docs/language.md has no section `## 99. A section the reference does not have`; "
                            "update card.SECTIONS"]
    assert "## 99." not in c._semantics(reference)  # a build still gets a card, without it
    with pytest.raises(c.CardError, match="99"):
        c._semantics(reference, strict=True)
    assert c.problems(reference.replace("| `quote(x)`", "| quote"))[-1:] == [
        "the built-in `quote` has no row in the tables of docs/language.md"]
