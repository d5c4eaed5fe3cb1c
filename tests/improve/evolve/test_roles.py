"""The scripted roles: the script file checked field by field (SKM841), machine files, recorded replies and runs."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from skillc.improve.edits import EDIT_FIELDS, EDIT_OPS, Edit, Patch, SkillEdit, patch_json
from skillc.improve.evolve import codes
from skillc.improve.evolve.cases import Draft, VerifyRequest
from skillc.improve.evolve.roles import (
    Reflection,
    ReflectRequest,
    RoleError,
    Script,
    ScriptedReflector,
    ScriptedRunner,
    ScriptedVerifier,
    load_script,
)
from skillc.improve.evolve.state import Hypothesis, Knowledge, Node, Output, PatchTree

SKILL_PATCH = Patch(skill=(SkillEdit("a\nb", "c"),))


@pytest.mark.parametrize(("text", "fragment"), [
    ("{", "not JSON"),
    ('{"reflect": {"root": {"children": []}}}', "reflect.root must be a list"),
    ('{"reflected": {}}', "unknown key `reflected`"),
    ('{"execute": {"root": {"reward": 2}}}', "execute.root.reward must be 0 or 1"),
    ('{"execute": {"root": {"reward": 0, "files": {"../x": ""}}}}', "not a path inside"),
    ('{"verify": {"h1": [[{"id": "c", "kind": "perl", "source": "", "strength": "hard"}]]}}', "kind is python"),
    ('{"reflect": {"root": [{"children": [{"name": "a", "rank": 0, "machine": "m"}]}]}}', "rank must be"),
])
def test_a_bad_script_is_refused_with_skm841(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "roles.json"
    path.write_text(text, encoding="utf-8")
    problem = load_script(path)
    assert not isinstance(problem, Script)
    assert str(problem.code) == codes.INVALID_ROLE_SCRIPT.code and fragment in problem.message


def test_a_missing_script_is_refused_with_skm841(tmp_path: Path) -> None:
    problem = load_script(tmp_path / "absent.json")
    assert not isinstance(problem, Script) and str(problem.code) == codes.INVALID_ROLE_SCRIPT.code


def test_children_read_machine_files_next_to_the_script(tmp_path: Path) -> None:
    (tmp_path / "fixed.skm").write_text("machine fixed {}\n", encoding="utf-8")
    path = tmp_path / "roles.json"
    child_json = '{"name": "f", "rank": 2, "machine_file": "fixed.skm"}'
    path.write_text('{"reflect": {"root": [{}, {"children": [' + child_json + ']}]}}', encoding="utf-8")
    script = load_script(path)
    assert isinstance(script, Script)
    reflector = ScriptedReflector(script)
    root = PatchTree.rooted("m").root

    def ask(round_: int) -> Reflection:
        return reflector.reflect(ReflectRequest(root, PatchTree((root,)), Knowledge(), round_, round_ == 3))

    assert ask(1).children == () and ask(3).children == ()  # round 1 recorded empty, round 3 not recorded
    child = ask(2).children[0]
    assert (child.name, child.rank, child.machine) == ("f", 2, "machine fixed {}\n")
    missing = tmp_path / "bad.json"
    missing.write_text('{"reflect": {"root": [{"children": [{"machine_file": "nope.skm"}]}]}}', encoding="utf-8")
    problem = load_script(missing)
    assert not isinstance(problem, Script) and "machine_file" in problem.message


def test_the_scripted_verifier_replays_rounds_per_hypothesis(tmp_path: Path) -> None:
    path = tmp_path / "roles.json"
    path.write_text('{"verify": {"h1": [[{"id": "c", "kind": "shell", "source": "true", "strength": "hard"}]]}}',
                    encoding="utf-8")
    script = load_script(path)
    assert isinstance(script, Script)
    output = Output(tmp_path, tmp_path / "t.jsonl", 0)

    def ask(hypothesis: str, round_: int) -> tuple[Draft, ...]:
        request = VerifyRequest(Hypothesis(hypothesis, "d", "p"), 0, output, round_)
        return ScriptedVerifier(script).propose(request).drafts

    assert [d.id for d in ask("h1", 1)] == ["c"] and ask("h1", 2) == () and ask("h2", 1) == ()


def test_the_scripted_executor_writes_the_recorded_files(tmp_path: Path) -> None:
    path = tmp_path / "roles.json"
    path.write_text('{"execute": {"root": {"reward": 1, "files": {"out/a.txt": "hi"}}}}', encoding="utf-8")
    script = load_script(path)
    assert isinstance(script, Script)
    executor = ScriptedRunner(script, tmp_path / "runs")
    output = executor.execute(Node(0, "m", name="root"))
    assert output.reward == 1 and (output.workdir / "out" / "a.txt").read_text(encoding="utf-8") == "hi"
    assert output.trace.is_file()
    with pytest.raises(RoleError):
        executor.execute(Node(1, "m", name="other"))


def test_a_patch_edit_takes_every_field_and_patch_json_reads_back(tmp_path: Path) -> None:
    values: dict[str, object] = {name: (2 if kind == "integer" else f"v-{name}") for name, kind in EDIT_FIELDS}
    patch = Patch(tuple(attrs.evolve(Edit(op), **values) for op in EDIT_OPS) + (Edit("start", target="b"),))
    reply = {"reflect": {"root": [{"children": [{"name": "p", "rank": 1, "patch": patch_json(patch)},
                                                {"name": "s", "rank": 2, "patch": patch_json(SKILL_PATCH)}]}]}}
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(reply), encoding="utf-8")
    script = load_script(path)
    assert isinstance(script, Script), script
    children = script.reflect["root"][0].children
    assert (children[0].patch, children[1].patch) == (patch, SKILL_PATCH)
    assert patch_json(Patch((Edit("start", target="b"),))) == {"machine": [{"op": "start", "target": "b"}]}


@pytest.mark.parametrize(("edit", "fragment"), [
    ({"op": "set_assigns", "find": 3}, "find must be a string"),
    ({"op": "set_assigns", "max": "3"}, "index and max are integers"),
    ({"op": "set_assigns", "where": "x"}, "unknown key `where`"),
])
def test_a_bad_edit_field_is_refused(tmp_path: Path, edit: dict[str, object], fragment: str) -> None:
    path = tmp_path / "roles.json"
    path.write_text(json.dumps({"reflect": {"root": [{"children": [{"patch": {"machine": [edit]}}]}]}}),
                    encoding="utf-8")
    problem = load_script(path)
    assert not isinstance(problem, Script) and fragment in problem.message
