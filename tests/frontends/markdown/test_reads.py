"""Reads come from the checker's definite-assignment analysis, run on the draft as a machine skeleton."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillc
from skillc.check.dataflow import solve
from skillc.frontends.markdown.clauses import extract_clauses
from skillc.frontends.markdown.document import parse_document, read_document
from skillc.frontends.markdown.draft import DMachine, Options
from skillc.frontends.markdown.graph import build_graph
from skillc.frontends.markdown.placement import place
from skillc.frontends.markdown.reads import Assigned, infer_reads
from skillc.frontends.markdown.structural import bash_declared, has_commands
from skillc.frontends.markdown.units import Sections, group_units

SKILLS = Path(__file__).parent / "skills"


def phases(doc) -> tuple[DMachine, Assigned]:
    """The draft after the reads phase, and what that phase found assigned."""
    clauses = extract_clauses(doc)
    options = Options()
    declared = bash_declared(doc, options)
    draft = DMachine(options.source, declared, declared or has_commands(clauses))
    sections = Sections.of(doc)
    build_graph(doc, clauses, options, draft, sections, group_units(clauses))
    place(draft, clauses, sections)
    return draft, infer_reads(draft, sections)


@pytest.mark.parametrize("md", sorted(SKILLS.glob("*.md")), ids=lambda p: p.stem)
def test_the_skeleton_agrees_with_the_checker_on_the_built_machine(md: Path) -> None:
    doc, _ = read_document(md)
    assert doc is not None
    draft, assigned = phases(doc)
    machine = skillc.check(md.with_suffix(".skm")).machine
    assert machine is not None
    flow = solve(machine)
    for name in [*draft.states, *draft.terminals]:
        built = {v for v in draft.vars if flow.defined[name] >> flow.bits[v] & 1}
        assert set(assigned.at(name)) == built, name


def test_a_result_made_on_one_arm_only_is_not_read_after_the_join() -> None:
    doc, diags = parse_document("""# Triage

1. Read the report.
2. If the report is a crash, collect the stack trace.
3. Write the summary of the report.
""")
    assert doc is not None, diags
    draft, assigned = phases(doc)
    collect = next(s for s in draft.states.values() if s.name.startswith("collect"))
    summary = next(s for s in draft.states.values() if s.name.startswith("write_summary"))
    made = collect.writes[0][0]
    read_report = draft.states[draft.order[0]].writes[0][0]
    assert made not in assigned.at(summary.name) and made not in summary.reads
    assert read_report in summary.reads
