"""Clauses grouped into units: commands join their step, arms their condition, bullets their item."""

from __future__ import annotations

import attrs
import pytest

from skillc.frontends.markdown.clauses import extract_clauses
from skillc.frontends.markdown.document import parse_document
from skillc.frontends.markdown.units import Sections, Unit, group_units

DOC = """# Release

## Procedure

1. Run the tests.

   ```bash
   pytest -q
   ```

2. Decide whether the changelog is current.
   - If it is, go on.
   - Otherwise, update it.
3. If the build is red, fix it. If the docs are stale, rebuild them.

## Checks

- [ ] Verify that the version is bumped.
- [ ] Verify that the tag exists.

## Phase 1: Notes

Write the notes.
"""


def units() -> list[Unit]:
    doc, diags = parse_document(DOC)
    assert doc is not None, diags
    return group_units(extract_clauses(doc))


def test_a_fence_after_a_step_is_its_command() -> None:
    first = units()[0]
    assert first.kind == "step" and first.command is not None and "pytest -q" in first.command.text


def test_a_decision_leads_its_own_if_and_otherwise_bullets() -> None:
    decision = units()[1]
    assert decision.kind == "branch" and decision.lead is not None
    assert "changelog" in decision.lead.text and decision.otherwise is not None and len(decision.arms) == 1


def test_conditions_without_otherwise_become_yes_no_questions_in_order() -> None:
    branches = [u for u in units() if u.kind == "branch" and u.lead is None]
    assert [len(u.arms) for u in branches] == [1, 1]
    assert "build is red" in branches[0].arms[0].text and "docs are stale" in branches[1].arms[0].text


def test_consecutive_checks_of_a_section_are_one_verification() -> None:
    (verify,) = [u for u in units() if u.kind == "verify"]
    assert len(verify.clauses) == 2


def test_units_are_frozen() -> None:
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        units()[0].notes = ()  # type: ignore[misc]


def test_sections_know_the_procedure_of_a_phase() -> None:
    doc, _ = parse_document(DOC)
    assert doc is not None
    sections = Sections.of(doc)
    procedure = doc.lines.index("## Procedure") + 1
    checks = doc.lines.index("## Checks") + 1
    phase = doc.lines.index("## Phase 1: Notes") + 1
    assert sections.section(procedure + 2) == (procedure, checks)
    assert sections.section(phase + 2) == (phase, len(doc.lines) + 1)
    assert sections.procedure(phase + 2) == 1  # `Phase 1` belongs to the document's top heading
