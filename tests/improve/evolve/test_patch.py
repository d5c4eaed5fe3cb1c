"""Revisions as patches: typed edits of the syntax tree printed by the project printer, SKILL.md edits then the
offline build, and both forms (and the whole text) as children of a real evolution with the real check gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

import attrs
import pytest

from skillc.check.source import check_source
from skillc.improve.edits import EDIT_FIELDS, EDIT_OPS, Edit, EditOp, Patch, PatchError, SkillEdit, patch_lines
from skillc.improve.evolve.gate import check_gate
from skillc.improve.evolve.loop import Roles, evolve
from skillc.improve.evolve.options import EvolveOptions
from skillc.improve.evolve.patch import apply_patch, build_skill
from skillc.improve.evolve.roles import Script, ScriptedReflector, ScriptedRunner, load_script
from tests.improve.evolve.test_gate import MACHINE as GATE_MACHINE

MACHINE = GATE_MACHINE.replace("  model a {", "  # the only step\n  model a {")  # a comment to keep
VERIFY = 'model verify {\n  reads notes\n  prompt "check the notes"\n  -> done\n}'
SKILL = "# Answer\n\nWork out the answer.\nWrite the answer to answer.txt.\n"


def _checks(text: str) -> bool:
    result = check_source(text, path="<patched>")
    return result.machine is not None and not result.failed


def test_machine_edits_change_the_tree_and_keep_comments() -> None:
    patch = Patch((Edit("add_state", state="a", text=VERIFY), Edit("retarget", state="a", index=0, target="verify"),
                   Edit("set_prompt", state="a", text="write notes as JSON"),
                   Edit("add_statement", text="var checked: bool = false")))
    text, skill = apply_patch(MACHINE, None, patch)
    assert skill is None and _checks(text)
    assert "# the only step" in text and 'prompt "write notes as JSON"' in text and "var checked: bool = false" in text
    assert text.index("model a") < text.index("model verify") < text.index("terminal done")
    assert "-> verify" in text.split("model verify")[0]


def test_edges_guards_counters_and_start() -> None:
    text, _ = apply_patch(MACHINE, None, Patch((Edit("add_state", text=VERIFY),
                                                Edit("add_edge", state="a", text='notes == ""', target="verify"))))
    assert 'when notes == "" -> verify\n    -> done' in text  # before the default edge
    guarded, _ = apply_patch(text, None, Patch((Edit("set_guard", state="a", index=0, text='notes != ""'),)))
    assert 'when notes != "" -> verify' in guarded
    removed, _ = apply_patch(guarded, None, Patch((Edit("remove_edge", state="a", index=0),
                                                   Edit("remove_state", state="verify"))))
    assert removed == MACHINE
    counted, _ = apply_patch(MACHINE, None, Patch((Edit("set_counter", name="tries", max=3),)))
    assert "counter tries max 3" in counted
    assert "counter tries max 5" in apply_patch(counted, None, Patch((Edit("set_counter", name="tries", max=5),)))[0]
    started, _ = apply_patch(MACHINE, None, Patch((Edit("add_state", text=VERIFY), Edit("start", target="verify"))))
    assert "start verify" in started and not _checks(started)  # `a` unreachable, `notes` never written: the check
    assert started.index("model verify") < started.index("terminal done")  # after the last state


def test_a_retry_loop_checks_only_when_its_edge_pays_a_counter() -> None:
    loop = Edit("add_edge", state="a", text='notes == ""', target="a")
    unpaid, _ = apply_patch(MACHINE, None, Patch((loop,)))
    assert not _checks(unpaid)  # SKM250: a cycle no counter pays for
    paid, _ = apply_patch(MACHINE, None, Patch((Edit("set_counter", name="tries", max=3),
                                                Edit("add_edge", state="a", text='notes == "" and tries < 3',
                                                     target="a", assigns="tries += 1"))))
    assert 'when notes == "" and tries < 3 -> a { tries += 1 }' in paid and _checks(paid)
    with pytest.raises(PatchError, match="edit 0"):
        apply_patch(MACHINE, None, Patch((Edit("add_edge", state="a", target="a", assigns="tries +="),)))


@pytest.mark.parametrize("edit, words", [
    (Edit("set_prompt", state="nowhere", text="x"), "no state `nowhere`"),
    (Edit("retarget", state="a", index=3, target="done"), "has no edge 3"),
    (Edit("add_state", text=VERIFY.replace("verify", "a")), "a state `a` exists already"),
    (Edit("add_state", text="model {"), "does not parse"),
    (Edit("add_edge", state="a", text="notes ==", target="done"), "the edge `when notes == -> done` does not parse"),
    (Edit("set_prompt", state="done", text="x"), "is a terminal"),
    (Edit("set_counter", name="c", max=0), "max"),
    (Edit("add_statement", text=VERIFY), "use add_state"),
])
def test_an_edit_that_does_not_apply_names_itself(edit: Edit, words: str) -> None:
    with pytest.raises(PatchError, match="edit 0") as caught:
        apply_patch(MACHINE, None, Patch((edit,)))
    assert words in str(caught.value)


def test_a_skill_patch_is_built_offline_and_keeps_the_patched_document() -> None:
    root = build_skill(SKILL)
    text, skill = apply_patch(root, SKILL, Patch(skill=(SkillEdit("Write the answer to answer.txt.",
                                                                  "Write the answer to answer.txt as JSON."),)))
    assert skill is not None and "as JSON" in skill and "as JSON" in text and "as JSON" not in root
    assert 'source "SKILL.md"' in text and _checks(text)
    for bad, words in [(Patch(skill=(SkillEdit("nothing like it", "x"),)), "occurs 0 times"),
                       (Patch(skill=(SkillEdit("answer", "x"),)), "occurs 3 times")]:
        with pytest.raises(PatchError, match=words):
            apply_patch(root, SKILL, bad)
    with pytest.raises(PatchError, match=r"needs a parent with a SKILL.md"):
        apply_patch(root, None, Patch(skill=(SkillEdit("a", "b"),)))
    with pytest.raises(PatchError, match="not both"):
        apply_patch(root, SKILL, Patch((Edit("start", target="x"),), (SkillEdit("a", "b"),)))


def _script(tmp_path: Path, children: list[dict[str, object]], runs: dict[str, int]) -> Script:
    data = {"reflect": {"root": [{"children": children}]},
            "execute": {name: {"reward": reward} for name, reward in runs.items()}}
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    script = load_script(path)
    assert isinstance(script, Script), script
    return script


def test_patch_children_evolve_with_the_real_gate_and_a_bad_patch_costs_no_execution(tmp_path: Path) -> None:
    root = build_skill(SKILL)
    children: list[dict[str, object]] = [
        {"name": "bad", "rank": 1, "patch": {"machine": [{"op": "set_prompt", "state": "nowhere", "text": "x"}]}},
        {"name": "loop", "rank": 2, "patch": {"machine": [  # checks? no: an unpaid cycle (SKM250)
            {"op": "add_edge", "state": "apply_answer", "text": "result == \"\"", "target": "apply_answer"}]}},
        {"name": "md", "rank": 3, "patch": {"skill": [{"find": "answer.txt.", "replace": "answer.txt as JSON."}]}},
        {"name": "whole", "rank": 4, "machine": MACHINE},
    ]
    script = _script(tmp_path, children, {"root": 0, "md": 0, "whole": 1})
    roles = Roles(ScriptedRunner(script, tmp_path / "out"), ScriptedReflector(script))
    result = evolve(root, roles, gate=check_gate, skill=SKILL, options=EvolveOptions(budget=5))
    by_name = {node.name: node for node in result.tree.nodes}
    assert by_name["bad"].invalid is not None and "the patch does not apply" in by_name["bad"].invalid
    assert by_name["loop"].invalid is not None and "SKM250" in by_name["loop"].invalid
    assert by_name["md"].skill is not None and "as JSON" in by_name["md"].skill and "as JSON" in by_name["md"].machine
    assert by_name["md"].evaluated and result.best.name == "whole" and result.success
    assert (result.executions, result.saved) == (2, 2)


def test_the_script_refuses_a_child_that_is_both_a_patch_and_a_text(tmp_path: Path) -> None:
    for child, words in [({"name": "x", "rank": 1, "machine": "m", "patch": {"machine": []}}, "not both"),
                         ({"name": "x", "rank": 1, "patch": {"machine": [{"op": "rename"}]}}, "op must be one of"),
                         ({"name": "x", "rank": 1, "patch": {"other": []}}, "not `other`"),
                         ({"name": "x", "rank": 1, "patch": {"machine": [{"op": "start", "index": "1"}]}},
                          "integers")]:
        path = tmp_path / "roles.json"
        path.write_text(json.dumps({"reflect": {"root": [{"children": [child]}]}}), encoding="utf-8")
        loaded = load_script(path)
        assert not isinstance(loaded, Script) and str(loaded.code) == "SKM841" and words in loaded.message


# ---------------------------------------------------------------- edges' assignments, state lines, terminals, rules

TOOLED = """machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var notes: str
  var out: str
  var status: int
  var verdict: enum { sound, flawed }
  counter tries max 3
  # the skill's one rule
  rule required save "Always save the notes."
  start a

  model a {
    writes notes
    prompt "write notes"
    -> review
  }

  judge review {
    reads notes
    writes verdict
    prompt "judge the notes"
    when verdict == flawed and tries < 3 -> a { tries += 1 }
    -> save
  }

  tool save {
    reads notes
    call bash(command: "echo " ++ quote(notes) ++ " > notes.txt")
    writes status = exit_code
    -> done
  }

  terminal done: success
  fallback
}
"""
UNPAID = TOOLED.replace("when verdict == flawed and tries < 3 -> a { tries += 1 }", "when verdict == flawed -> a")
RULE = 'rule required save "Always save the notes."'


def _codes(text: str) -> set[str]:
    return {str(d.code) for d in check_source(text, path="<patched>").diagnostics if d.is_error}


def _patched(text: str, *edits: Edit) -> str:
    return apply_patch(text, None, Patch(edits))[0]


def test_the_fixtures_check_and_the_unpaid_loop_does_not() -> None:
    assert _checks(TOOLED) and _codes(UNPAID) == {"SKM250"}


def test_an_existing_edges_assignments_pay_for_its_cycle() -> None:
    paid = _patched(UNPAID, Edit("set_guard", state="review", index=0, text="verdict == flawed and tries < 3"),
                    Edit("add_assigns", state="review", index=0, assigns="tries += 1"))
    assert paid == TOOLED and _checks(paid)  # the printed text is the hand-written one, comment included
    assert _codes(_patched(UNPAID, Edit("set_assigns", state="review", index=0, assigns="tries += 1"))) == {"SKM251"}
    cleared = _patched(TOOLED, Edit("set_assigns", state="review", index=0, assigns=""))
    assert "when verdict == flawed and tries < 3 -> a\n" in cleared and _codes(cleared) == {"SKM250"}
    both = _patched(TOOLED, Edit("add_assigns", state="review", index=0, assigns="notes = \"\""))
    assert '-> a { tries += 1, notes = "" }' in both


def test_reads_and_writes_gain_and_lose_names() -> None:
    text = _patched(TOOLED, Edit("add_read", state="save", name="verdict"),
                    Edit("add_write", state="save", name="out", text="stdout"),
                    Edit("remove_write", state="save", name="status"))
    assert "reads notes, verdict\n    call bash" in text and "writes out = stdout\n" in text
    assert "status = exit_code" not in text and _checks(text)
    dropped = _patched(TOOLED, Edit("remove_read", state="save", name="notes"))
    assert "tool save {\n    call bash" in dropped and "SKM131" in _codes(dropped)  # the last name drops the line
    assert _patched(dropped, Edit("add_read", state="save", name="notes")) == TOOLED  # back in the canonical place
    unwritten = _patched(TOOLED, Edit("remove_write", state="a", name="notes"))
    assert "model a {\n    prompt" in unwritten
    bound = _patched(TOOLED, Edit("add_write", state="a", name="out", text="stdout"))
    assert "writes notes, out = stdout" in bound and not _checks(bound)  # only a tool state binds results: the check


def test_a_tool_states_call_and_one_argument() -> None:
    arg = _patched(TOOLED, Edit("set_arg", state="save", name="command", text='"cat > notes.txt"'))
    assert 'call bash(command: "cat > notes.txt")' in arg and _checks(arg)
    whole = _patched(TOOLED, Edit("set_call", state="save", text='call bash(command: "printf %s " ++ quote(notes))'))
    assert 'call bash(command: "printf %s " ++ quote(notes))\n    writes status' in whole and _checks(whole)
    renamed = TOOLED.replace("tool bash(", "tool caller(").replace("call bash(", "call caller(")
    recalled = _patched(renamed, Edit("set_call", state="save", text='caller(command: "true")'))
    assert 'call caller(command: "true")' in recalled and _checks(recalled)
    unknown = _patched(TOOLED, Edit("set_arg", state="save", name="timeout_s", text="60"))
    assert 'quote(notes) ++ " > notes.txt", timeout_s: 60)' in unknown and not _checks(unknown)  # not a parameter
    added = _patched(TOOLED, Edit("remove_state", state="save"),
                     Edit("add_state", state="review", text="tool save {\n  reads notes\n  writes status = exit_code\n"
                                                             "  -> done\n}"),
                     Edit("set_call", state="save", text='bash(command: "true")'))
    assert 'reads notes\n    call bash(command: "true")\n    writes status' in added and _checks(added)


def test_a_terminals_outcome_and_requirements() -> None:
    text = _patched(TOOLED, Edit("set_outcome", state="done", text="failed"),
                    Edit("set_requires", state="done", text="notes, status"))
    assert "terminal done: failed { requires notes, status }" in text
    assert _checks(text)
    back = _patched(text, Edit("set_outcome", state="done", text="success"), Edit("set_requires", state="done"))
    assert back == TOOLED


def test_a_judges_verdict_set_is_its_variables_type() -> None:
    text = _patched(TOOLED, Edit("set_type", name="verdict", text="enum { sound, flawed, unsure }"),
                    Edit("add_state", state="done", text="terminal unsure: failed"),
                    Edit("add_edge", state="review", text="verdict == unsure", target="unsure"))
    assert "var verdict: enum { sound, flawed, unsure }" in text
    assert "when verdict == unsure -> unsure\n    -> save" in text and _checks(text)
    old_type = _patched(TOOLED, Edit("add_edge", state="review", text="verdict == unsure", target="done"))
    assert _codes(old_type) == {"SKM105"}  # not a label of the old type


def test_rules_are_added_removed_and_replaced_by_their_source() -> None:
    added = _patched(TOOLED, Edit("add_statement", text='rule order review before save "Review before saving."'))
    assert 'rule order review before save "Review before saving."' in added and _checks(added)
    removed = _patched(added, Edit("remove_statement", find=RULE))
    assert RULE not in removed and "rule order review" in removed and _checks(removed)
    replaced = _patched(TOOLED, Edit("replace_statement", find=RULE, text='rule forbid a "Never write notes."'))
    assert '  # the skill\'s one rule\n  rule forbid a "Never write notes."' in replaced  # the comment stays
    assert _codes(replaced) == {"SKM222"}  # `a` is on every path: the check refutes the new rule
    located = TOOLED.replace(RULE, RULE + ' from "SKILL.md":3')
    assert RULE not in _patched(located, Edit("remove_statement", find=RULE))  # no `from` given: any provenance
    with pytest.raises(PatchError, match="occurs 0 times"):
        _patched(located, Edit("remove_statement", find=RULE + ' from "SKILL.md":4'))
    counter = _patched(TOOLED, Edit("replace_statement", find="var out: str", text="var out: str = \"\""))
    assert 'var out: str = ""' in counter and _checks(counter)


@pytest.mark.parametrize("edit, words", [
    (Edit("add_assigns", state="review", index=0), "give the `assigns`"),
    (Edit("set_assigns", state="review", index=2, assigns="tries += 1"), "has no edge 2"),
    (Edit("set_assigns", state="review", index=0, assigns="tries +"), "does not parse"),
    (Edit("add_read", state="review", name="notes"), "`review` reads `notes` already"),
    (Edit("remove_read", state="a", name="notes"), "`a` does not read `notes`"),
    (Edit("add_read", state="a"), "give the variable's `name`"),
    (Edit("add_read", state="a", name="not a name"), "does not parse"),
    (Edit("add_read", state="a", name="notes, out"), "`notes, out` is not one variable"),
    (Edit("add_write", state="save", name="out, notes"), "is not one variable"),
    (Edit("add_write", state="a", name="notes"), "`a` writes `notes` already"),
    (Edit("remove_write", state="save", name="out"), "`save` does not write `out`"),
    (Edit("add_write", state="done", name="out"), "is a terminal"),
    (Edit("set_call", state="a", text='bash(command: "x")'), "`a` is a model state; only a tool state has a call"),
    (Edit("set_call", state="save", text=""), "give the call as `text`"),
    (Edit("set_call", state="save", text="bash(command: )"), "does not parse"),
    (Edit("set_arg", state="save", name="command"), "give the argument's `name`"),
    (Edit("set_outcome", state="a", text="failed"), "`a` is a state, not a terminal"),
    (Edit("set_outcome", state="done", text="two words"), "one word"),
    (Edit("set_requires", state="nowhere", text="notes"), "no state `nowhere`"),
    (Edit("set_type", name="nothing", text="str"), "no `var` or `input` named `nothing`"),
    (Edit("set_type", name="notes", text="list["), "does not parse"),
    (Edit("set_type", name="notes", text='str = "x"'), "is not one type"),
    (Edit("set_arg", state="save", name="command", text='"a", timeout_s: 1'), "is not one expression"),
    (Edit("add_read", state="save", name="out\n}\nmodel z {\n  reads notes"), "is not one reads line"),
    (Edit("remove_statement", find='rule required a "x"'), "occurs 0 times"),
    (Edit("remove_statement", find="model a {\n}"), "blocks: remove_state"),
    (Edit("remove_statement"), "`find` must be one machine-level statement"),
    (Edit("replace_statement", find=RULE, text="model z {\n}"), "not blocks"),
    (Edit("replace_statement", find=RULE), "not blocks"),
])
def test_a_new_edit_that_does_not_apply_names_itself(edit: Edit, words: str) -> None:
    with pytest.raises(PatchError, match="edit 0") as caught:
        apply_patch(TOOLED, None, Patch((edit,)))
    assert words in str(caught.value) and f"({edit.op})" in str(caught.value)


def test_edit_fields_describe_the_edit_record() -> None:
    fields = {f.name: f.type for f in attrs.fields(Edit) if f.name != "op"}
    assert [name for name, _ in EDIT_FIELDS] == list(fields)
    assert all(kind == ("integer" if "int" in str(fields[name]) else "string") for name, kind in EDIT_FIELDS)
    assert set(EDIT_OPS) == set(get_args(EditOp)) and len(set(EDIT_OPS)) == len(EDIT_OPS)


def test_patch_lines_are_short_and_name_every_set_field() -> None:
    patch = Patch((Edit("add_assigns", state="review", index=0, assigns="tries += 1"),
                   Edit("set_prompt", state="a", text="x" * 200)))
    first, second = patch_lines(patch)
    assert first == 'add_assigns state="review" index=0 assigns="tries += 1"'
    assert second.startswith('set_prompt state="a" text="xxx') and second.endswith('…"') and len(second) < 100
    assert patch_lines(Patch(skill=(SkillEdit("a\nb", "c"),))) == ('skill find="a\\nb" replace="c"',)
