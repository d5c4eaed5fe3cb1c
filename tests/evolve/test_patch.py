"""Revisions as patches: typed edits of the syntax tree printed by the project printer, SKILL.md edits then the
offline build, and both forms (and the whole text) as children of a real evolution with the real check gate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.check.source import check_source
from skillc.evolve.gate import check_gate
from skillc.evolve.loop import Roles, evolve
from skillc.evolve.options import EvolveOptions
from skillc.evolve.patch import Edit, Patch, PatchError, SkillEdit, apply_patch, build_skill
from skillc.evolve.roles import Script, ScriptedExecutor, ScriptedReflector, load_script
from tests.evolve.test_gate import MACHINE as GATE_MACHINE

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
    with pytest.raises(PatchError, match="needs a parent with a SKILL.md"):
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
    roles = Roles(ScriptedExecutor(script, tmp_path / "out"), ScriptedReflector(script))
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
        assert not isinstance(loaded, Script) and loaded.code == "SKM841" and words in loaded.message
