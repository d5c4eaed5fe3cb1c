"""Every shipped machine and every `.skm` block of the docs loads cleanly."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import skillc
from tests.conftest import EXAMPLES, MACHINE_EXAMPLES, ROOT, STDLIB, codes

EXAMPLE_DIRS = MACHINE_EXAMPLES
REQUIRED = {"livemath", "spreadsheet", "data-analysis", "long-context-qa", "warehouse", "ctf"}


def test_the_six_required_examples_exist() -> None:
    assert {p.name for p in EXAMPLE_DIRS} >= REQUIRED


@pytest.mark.parametrize("folder", EXAMPLE_DIRS, ids=lambda p: p.name)
def test_example_loads_cleanly_beside_its_skill(folder: Path) -> None:
    machine_file = folder / f"{folder.name}.skm"
    skill = folder / "SKILL.md"
    assert machine_file.is_file() and skill.is_file()
    result = skillc.check(machine_file)
    assert [d for d in result.diagnostics if d.severity.name != "NOTE"] == [], codes(result.diagnostics)
    m = result.machine
    assert m.source == "SKILL.md"
    lines = skill.read_text(encoding="utf-8").splitlines()
    assert m.rules, "an example without rules does not exercise the language"
    for rule in (r for r in m.rules if not r.from_fragment):
        assert rule.provenance is not None and rule.provenance.end <= len(lines)
        cited = " ".join(lines[rule.provenance.start - 1 : rule.provenance.end])
        normalised = re.sub(r"\s+", " ", cited.replace("**", "").replace("`", ""))
        assert re.sub(r"\s+", " ", rule.quote.replace("`", "")) in normalised, rule.quote


def test_livemath_has_the_published_shape() -> None:
    s = skillc.load(EXAMPLES / "livemath" / "livemath.skm").machine.summary()
    assert (s["states"], s["transitions"], s["variables"]) == (10, 12, 19)


def test_examples_use_the_stdlib_and_structured_state() -> None:
    texts = {p.name: (p / f"{p.name}.skm").read_text() for p in EXAMPLE_DIRS}
    assert sum('import "stdlib/' in t for t in texts.values()) >= 2
    warehouse = skillc.load(EXAMPLES / "warehouse" / "warehouse.skm").machine
    assert any(type(v.type).__name__ == "MapT" for v in warehouse.variables.values())
    ctf = skillc.load(EXAMPLES / "ctf" / "ctf.skm").machine
    records = [v.type for v in ctf.variables.values() if type(v.type).__name__ == "RecordT"]
    assert any(len(r.fields) == 5 for r in records)


@pytest.mark.parametrize("path", sorted(STDLIB.glob("*.skm")), ids=lambda p: p.name)
def test_stdlib_fragment_loads_cleanly(path: Path) -> None:
    result = skillc.load(path)
    assert result.diagnostics == []
    assert result.fragments


def _doc_blocks() -> list[tuple[str, int, str]]:
    blocks = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for m in re.finditer(r"^```skm\n(.*?)^```", text, re.S | re.M):
            line = text.count("\n", 0, m.start()) + 1
            blocks.append((doc.name, line, m.group(1)))
    return blocks


def test_language_reference_has_examples() -> None:
    assert sum(1 for name, _, _ in _doc_blocks() if name == "language.md") >= 8


def test_language_reference_lists_exactly_the_grammar_keywords() -> None:
    from skillc.syntax.grammar import keyword_terminals

    text = (ROOT / "docs" / "language.md").read_text(encoding="utf-8")
    block = re.search(r"```text\n(import machine .*?)```", text, re.S).group(1)
    assert set(block.split()) == set(keyword_terminals().values())


@pytest.mark.parametrize(("doc", "line", "block"),
                         [b for b in _doc_blocks() if b[0] != "diagnostics.md"],
                         ids=lambda x: str(x) if isinstance(x, int) else None)
def test_doc_example_loads_cleanly(doc: str, line: int, block: str) -> None:
    result = skillc.check(block, path=str(ROOT / "docs" / f"example_{line}.skm"))
    assert skillc.format_text(block)[0] is not None
    # Doc examples name a `source` that is not shipped beside the docs (SKM224).
    found = [d for d in result.diagnostics if d.severity.name != "NOTE" and str(d.code) != "SKM224"]
    assert found == [], f"{doc}:{line}: {codes(found)}"
