"""Quotations of rules against the skill document (check/provenance.py): too short to locate anything,
the configurable minimum, local fragments' rules, and hard-wrapped lines."""

from __future__ import annotations

from pathlib import Path

import skillc

SOURCED = """machine m {
  source "SKILL.md"
  var answer: str
  start think
  model think {
    writes answer
    prompt "p"
    -> done
  }
  USE
  terminal done: success
  fallback
  RULE
}
"""


LOCAL = """fragment step() -> (out) {
  model inner {
    writes answer
    prompt "p"
    -> out
  }
  var answer: str
  start inner
  rule required inner "QUOTE"
}
"""


def _sourced(tmp_path: Path, rule: str, doc: str, use: str = "", config: str | None = None) -> list[str]:
    (tmp_path / "SKILL.md").write_text(doc)
    if config is not None:
        (tmp_path / "skillc.toml").write_text(config)
    f = tmp_path / "m.skm"
    f.write_text(SOURCED.replace("RULE", rule).replace("USE", use))
    return sorted(str(d.code) for d in skillc.check(f).diagnostics if d.severity.name != "NOTE")


def test_empty_blank_and_one_word_quotations_are_rejected(tmp_path: Path) -> None:
    doc = "# Skill\n\nAlways think before you answer.\n"
    for quote in ("", "   ", "A", "Always think"):
        assert "SKM225" in _sourced(tmp_path, f'rule required think "{quote}"', doc), quote
    assert _sourced(tmp_path, 'rule required think "Always think before"', doc) == []


def test_the_minimum_is_configurable(tmp_path: Path) -> None:
    doc = "Always think before you answer.\n"
    assert _sourced(tmp_path, 'rule required think "Always"', doc, config="quote-min-words = 1\n") == []
    assert "SKM290" in _sourced(tmp_path, 'rule required think "Always think first"', doc,
                                config="quote-min-words = 0\n")


def test_rules_of_local_fragments_are_checked_against_the_skill(tmp_path: Path) -> None:
    doc = "Always think before you answer.\n"
    use = "use step as s() -> (out: done)"
    (tmp_path / "SKILL.md").write_text(doc)
    for quote, expected in (("Never mentioned in the skill.", ["SKM223"]), ("think before you", [])):
        f = tmp_path / "m.skm"
        f.write_text(LOCAL.replace("QUOTE", quote) + SOURCED.replace("RULE", "").replace("USE", use)
                     .replace("-> done\n  }", "-> s\n  }", 1))
        codes = sorted(str(d.code) for d in skillc.check(f).diagnostics if d.severity.name != "NOTE")
        assert codes == expected, (quote, codes)


def test_a_hard_wrapped_line_starting_with_a_number_is_text(tmp_path: Path) -> None:
    doc = "Ship no more than\n100. Then stop and report.\n"
    assert _sourced(tmp_path, 'rule required think "Ship no more than 100. Then stop and report."', doc) == []
    # A list still loses its markers, however it is numbered.
    doc = "Steps:\n\n1. Plan the work.\n2. Do the work carefully.\n\n7. Check the work twice.\n"
    assert _sourced(tmp_path, 'rule required think "Check the work twice."', doc) == []
    assert _sourced(tmp_path, 'rule required think "Plan the work. Do the work carefully."', doc) == []


def test_a_given_root_confines_the_source_document(tmp_path: Path) -> None:
    """The language server checks with its workspace as `root`: a `source` outside it is not read (SKM224,
    naming the root), while `skillc check` without a root, and `--skill PATH`, read the document wherever it is."""
    from skillc import api

    workspace, outside = tmp_path / "ws", tmp_path / "elsewhere"
    workspace.mkdir()
    outside.mkdir()
    (outside / "SKILL.md").write_text("1. **Always** think before you answer.\n")
    text = (SOURCED.replace('source "SKILL.md"', 'source "../elsewhere/SKILL.md"').replace("USE\n", "")
            .replace("RULE", 'rule required think "Never think before you answer."'))
    machine = workspace / "m.skm"
    machine.write_text(text)
    confined = api.check(text, path=str(machine), root=workspace)
    (found,) = [d for d in confined.diagnostics if str(d.code) == "SKM224"]
    assert "outside" in found.message and str(workspace.resolve()) in found.message
    assert not [d for d in confined.diagnostics if str(d.code) == "SKM223"]  # nothing was read, nothing quoted
    free = api.check(machine)
    assert [str(d.code) for d in free.diagnostics if str(d.code).startswith("SKM22")] == ["SKM223"]
    named = api.check(text, path=str(machine), root=workspace, skill=outside / "SKILL.md")
    assert "SKM223" in [str(d.code) for d in named.diagnostics]
    (outside / "link.md").symlink_to(outside / "SKILL.md")
    (workspace / "inside.md").symlink_to(outside / "SKILL.md")  # a link inside pointing out is outside too
    linked = api.check(text.replace("../elsewhere/SKILL.md", "inside.md"), path=str(machine), root=workspace)
    assert [str(d.code) for d in linked.diagnostics if str(d.code).startswith("SKM22")] == ["SKM224"]
