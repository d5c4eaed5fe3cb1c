"""`skillc build` offline: twelve skill shapes build to checked machines that match their golden files.

Regenerate the goldens after an intended change with
`SKILLC_UPDATE_GOLDEN=1 pytest tests/frontends/markdown/test_build.py` and review the diff.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import skillc
from skillc.frontends.markdown import build
from skillc.frontends.markdown.clauses import classify, extract_clauses, split_sentences
from skillc.frontends.markdown.document import parse_document
from skillc.frontends.markdown.tree import parse_tree
from tests.conftest import codes

SKILLS = Path(__file__).parent / "skills"
DOCS = sorted(SKILLS.glob("*.md"))
UPDATE = bool(os.environ.get("SKILLC_UPDATE_GOLDEN"))


def counters(m) -> dict[str, int]:
    return {v.name: v.max for v in m.variables.values() if v.kind == "counter"}


def built(name: str):
    md = SKILLS / name
    return build(md, output=md.with_suffix(".skm"))


def test_there_are_at_least_twelve_shapes() -> None:
    assert len(DOCS) >= 12


@pytest.mark.parametrize("md", DOCS, ids=lambda p: p.stem)
def test_skill_builds_to_its_golden_machine(md: Path) -> None:
    result = build(md, output=md.with_suffix(".skm"))
    assert result.ok, codes(result.diagnostics)
    golden = md.with_suffix(".skm")
    if UPDATE:
        golden.write_text(result.text, encoding="utf-8")
    assert result.text == golden.read_text(encoding="utf-8"), f"{golden.name} differs; see the module docstring"
    assert result.coverage >= 0.95, [r.clause.text for r in result.rows if not r.covered]


@pytest.mark.parametrize("md", DOCS, ids=lambda p: p.stem)
def test_golden_machine_passes_the_checker(md: Path) -> None:
    result = skillc.check(md.with_suffix(".skm"))
    assert result.machine is not None
    assert not [d for d in result.diagnostics if d.is_error], codes(result.diagnostics)
    # SKM270 (success rests on model text only) is the checker telling the truth about an offline draft whose
    # deliverable no tool state produces; every other warning is a defect of the draft.
    assert not [d for d in result.diagnostics if d.severity.name == "WARNING" and str(d.code) != "SKM270"], \
        codes(result.diagnostics)


def _machine(name: str):
    result = built(name)
    assert result.ok, codes(result.diagnostics)
    return result.machine, result


def test_numbered_workflow_is_a_chain_of_model_states_in_order() -> None:
    m, _ = _machine("01_numbered_workflow.md")
    # step 7 runs `twine check` (a tool); the bullet of step 1 that runs `git status` is a tool state of its own
    steps = [s for s in m.states.values() if s.kind in ("model", "tool")]
    assert len(steps) == 12
    assert steps[0].name.startswith("confirm")
    assert [s.provenance.start for s in steps] == sorted(s.provenance.start for s in steps)
    # A prohibition that names no operation is a constraint of the states it concerns (issue 14: no invented
    # parameterless tool for a `rule forbid` that could never fail).
    assert not [r for r in m.rules if r.kind == "forbid"]
    assert any("Never reuse a version number" in (s.prompt or "") for s in steps)


def test_decision_tree_becomes_judges_routing_on_their_labels() -> None:
    m, _ = _machine("02_decision_tree.md")
    judges = {s.name: s for s in m.states.values() if s.kind == "judge"}
    root = judges["checkout_page_load"]
    assert set(m.variables[root.writes[0]].type.labels) == {"no", "yes"}
    cdn = judges["check_cdn_status"]
    assert set(m.variables[cdn.writes[0]].type.labels) == {"cache_errors", "no_errors"}
    assert {e.target for e in cdn.edges} == {"purge_cdn_cache", "roll_back_last"}
    # "return to the top of the tree" is a counted back edge
    back = [e for s in m.states.values() for e in s.edges if e.target == "use_decision_tree"]
    assert back and back[0].assigns and back[0].assigns[0].var in counters(m)


def test_checklist_becomes_a_verify_judge_with_a_bounded_revise_loop() -> None:
    m, _ = _machine("03_checklist_verify.md")
    verify = [s for s in m.states.values() if s.kind == "judge" and s.name.startswith("verify_")]
    assert len(verify) == 2
    for v in verify:
        assert set(m.variables[v.writes[0]].type.labels) == {"passed", "failed"}
        revise = [e for e in v.edges if e.target.startswith("revise_")]
        assert revise and revise[0].assigns, "the revise edge bumps a counter"
    assert all(limit == 2 for limit in counters(m).values())


def test_until_loop_goes_back_to_the_test_run_and_is_bounded() -> None:
    m, _ = _machine("04_until_tests_pass.md")
    fix = m.states["fix_failing_code"]
    back = [e for e in fix.edges if e.target == "run_test_suite"]
    assert back and back[0].assigns
    assert fix.edges[-1].target == "fallback"  # still failing after the last round


def test_prohibitions_become_constraints_and_the_report_says_so() -> None:
    m, result = _machine("05_prohibitions_policy.md")
    # No operation is invented for a prohibition to forbid: every declared tool is one a state calls.
    called = {s.call.tool for s in m.states.values() if s.call is not None}
    assert set(m.tools) <= called
    assert not [r for r in m.rules if r.kind == "forbid"]
    prompts = " ".join(s.prompt or "" for s in m.states.values())
    assert "NEVER copy payment card numbers" in prompts  # the model states are told
    assert len(result.rules.prohibitions) >= 6
    assert all(landed for _, landed in result.rules.prohibitions)
    assert "kept as constraints in prompts" in result.rules.render()


def test_front_matter_tools_make_tool_states() -> None:
    m, result = _machine("07_front_matter_tools.md")
    tools = [s for s in m.states.values() if s.kind == "tool"]
    assert len(tools) == 4
    assert tools[0].call.tool == "bash"
    assert "SKM306" not in codes(result.diagnostics)  # `Read` is a kit tool now: it has an interface


def test_commands_become_tool_states_even_without_a_declared_tool() -> None:
    # Issue 14: commands a step says to run are run by `bash`, declared by default with a note (SKM315).
    m, result = _machine("04_until_tests_pass.md")
    run = m.states["run_test_suite"]
    assert run.kind == "tool" and run.call.tool == "bash"
    assert "SKM315" in codes(result.diagnostics)
    assert result.rules.bash_added


def test_allow_tool_turns_commands_into_tool_states(tmp_path: Path) -> None:
    from skillc.frontends.markdown import Options

    md = SKILLS / "04_until_tests_pass.md"
    result = build(md, output=tmp_path / "x.skm", options=Options(tools=frozenset({"bash"})))
    assert result.ok, codes(result.diagnostics)
    run = result.machine.states["run_test_suite"]
    assert run.kind == "tool" and run.call.tool == "bash"


def test_no_procedure_compiles_to_one_state_with_a_warning() -> None:
    m, result = _machine("08_no_procedure.md")
    assert [s.kind for s in m.states.values() if s.kind in ("model", "judge", "tool")] == ["model"]
    assert "SKM304" in codes(result.diagnostics)
    assert result.coverage == 1.0


def test_multi_way_condition_is_one_judge_with_a_label_per_case() -> None:
    m, _ = _machine("10_conditional_steps.md")
    advisory = m.states["decide_open_advisory"]
    labels = m.variables[advisory.writes[0]].type.labels
    assert len(labels) == 3 and labels[-1] == "otherwise"
    stop = [s for s in m.states.values() if s.kind == "terminal" and s.name == "stopped"]
    assert stop, "`reject the pull request and stop` ends the run"


def test_bounded_retry_uses_the_stated_limit() -> None:
    m, _ = _machine("12_table_retry_loop.md")
    assert 3 in counters(m).values()
    # "wait 30 seconds and run them again" runs the smoke-test step again, not some other state
    back = [e for e in m.states["wait_seconds_run"].edges if e.assigns]
    assert [e.target for e in back] == ["run_smoke_tests"]
    assert counters(m)[back[0].assigns[0].var] == 3


def test_an_action_that_sounds_like_a_jump_is_an_action(tmp_path: Path) -> None:
    md = tmp_path / "SKILL.md"
    md.write_text("# Ops\n\n1. Inspect the web service.\n2. Inspect the cache.\n"
                  "   If the cache reports errors, restart it and inspect it again.\n")
    result = build(md)
    assert result.ok, codes(result.diagnostics)
    m = result.machine
    restart = m.states["restart_inspect_again"]
    assert [e.target for e in restart.edges if e.assigns] == ["inspect_cache"]


def test_every_state_and_rule_records_its_lines() -> None:
    for md in DOCS:
        m, _ = _machine(md.name)
        for s in m.states.values():
            if s.kind in ("model", "judge", "tool"):
                assert s.provenance is not None and s.provenance.file == md.name, s.name
        assert all(r.provenance is not None for r in m.rules)


# ---------------------------------------------------------------- clauses


@pytest.mark.parametrize("sentence, kind", [
    ("NEVER push to main.", "forbid"),
    ("**Do not** delete the branch.", "forbid"),
    ("You must not share tokens.", "forbid"),
    ("You cannot push to main.", "forbid"),
    ("Customers report that they cannot check out.", ""),
    ("You MUST sign the commit.", "require"),
    ("ALWAYS run the linter.", "require"),
    ("If the build fails, open a ticket.", "branch"),
    ("Otherwise, merge the pull request.", "branch"),
    ("Repeat until all tests pass.", "loop"),
    ("Retry the upload, but try at most 3 times.", "loop"),
    ("Verify that the page renders.", "verify"),
    ("Make sure nothing is staged.", "verify"),
    ("Stop when the queue is empty.", "terminate"),
    ("You are done when the report is sent.", "terminate"),
    ("The cache lives in /var/cache.", ""),
    ("Keep each fix as small as possible.", ""),
])
def test_classify(sentence: str, kind: str) -> None:
    assert classify(sentence) == kind


def test_sentences_keep_their_lines_and_abbreviations() -> None:
    text = "Run the tests, e.g. with pytest. Then\nread the output. Fix it."
    assert [(s, a, z) for s, a, z in split_sentences(text)] == [
        ("Run the tests, e.g. with pytest.", 0, 0), ("Then\nread the output.", 0, 1), ("Fix it.", 1, 1)]


def test_clause_lines_point_into_the_document() -> None:
    doc, _ = parse_document((SKILLS / "10_conditional_steps.md").read_bytes(), "10.md")
    lines = doc.text.split("\n")
    for c in extract_clauses(doc):
        if c.block.kind in ("item", "para"):
            first = re.sub(r"[*_`]", "", c.text.split("\n")[0])[:20]
            assert first in re.sub(r"[*_`]", "", lines[c.start - 1]), (c.start, c.text)


def test_tree_parsing() -> None:
    tree = parse_tree("Is it up?\n├─ Yes → Is it fast?\n│   ├─ Yes → Done\n│   └─ No → Profile it\n└─ No → Restart it")
    assert tree.text == "Is it up?"
    assert [c.label for c in tree.children] == ["Yes", "No"]
    assert [c.text for c in tree.children[0].children] == ["Done", "Profile it"]
    assert parse_tree("just some code\nwith lines") is None
