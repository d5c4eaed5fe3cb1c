"""The evolution's files: the tree as JSON, the trajectory report, a drawing real `dot` accepts, the evolved machine."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from skillc.improve.evolve.gate import check_gate
from skillc.improve.evolve.loop import Evolution, Roles, evolve
from skillc.improve.evolve.options import EvolveOptions
from skillc.improve.evolve.report import evolution_dot, evolution_json, evolution_markdown, write_evolution
from skillc.improve.evolve.roles import Script, ScriptedReflector, ScriptedRunner, load_script
from tests.improve.evolve import scenario
from tests.improve.evolve.test_gate import MACHINE as GATE_MACHINE


@pytest.fixture(scope="module")
def evolution(tmp_path_factory: pytest.TempPathFactory) -> scenario.Evolution:
    folder = tmp_path_factory.mktemp("evolve")
    return scenario.run(scenario.load(folder), folder / "out")


def test_the_tree_json_holds_nodes_values_hypotheses_and_the_matrix(evolution: scenario.Evolution) -> None:
    data = json.loads(json.dumps(evolution_json(evolution)))
    nodes = {n["name"]: n for n in data["nodes"]}
    assert data["success"] and data["best"] == nodes["B1"]["id"]
    assert (data["executions"], data["saved"]) == (3, 1)
    assert nodes["C"]["invalid"] and nodes["C"]["reward"] is None and nodes["C"]["score"] is None
    # B1: rewarded, all three hard cases hold, no semantic case left (h1's was pruned): 2 + (1 + 0) / 2
    assert nodes["root"]["visits"] == 4 and nodes["B1"]["score"] == pytest.approx(2.5)
    assert nodes["root"]["q"] == pytest.approx(2.5) and nodes["A"]["q_normalised"] == pytest.approx(0.0)
    assert [(o["op"], o["id"]) for o in data["operations"]] == [("add", "h1"), ("add", "h2"), ("refute", "h1"),
                                                                 ("add", "h3")]
    assert data["evidence"]["columns"] == ["exists", "json", "checked"]
    assert data["evidence"]["values"][data["evidence"]["rows"].index(nodes["B1"]["id"])] == [1, 1, 1]
    assert [s["jump"] for s in data["steps"] if s["kind"] == "run"] == [False, False, True, False]


def test_the_markdown_report_shows_the_trajectory_and_the_evidence(evolution: scenario.Evolution) -> None:
    text = evolution_markdown(evolution)
    assert "succeeded: best version `B1`, 3 evolved executions, 1 saved by the check/replay gate" in text
    assert "1. run B: reward 0 (jump)" in text and "1. refused C: error[SKM101]" in text
    assert "- `h1` (refuted): the computed value is wrong" in text
    assert "| node | exists | json | checked | s |" in text and "| B1 | 1 | 1 | 1 | 2.50 |" in text
    assert "- `exists` (hard, shell; owned by h2)" in text  # h1's case was pruned with it


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_the_drawing_is_valid_graphviz(evolution: scenario.Evolution, tmp_path: Path) -> None:
    text = evolution_dot(evolution)
    assert "style=dashed, color=red" in text and "refused by the gate" in text and "penwidth=3" in text
    assert 'label="jump"' in text and "error[SKM101]: the candidate does not check" in text  # the gate's reason
    done = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "<svg" in done.stdout


def test_write_evolution_writes_every_file_whole(evolution: scenario.Evolution, tmp_path: Path) -> None:
    assert write_evolution(evolution, tmp_path / "result") is None
    names = sorted(p.name for p in (tmp_path / "result").iterdir())
    assert names == ["evolved.skm", "report.md", "tree.dot", "tree.json"]
    assert (tmp_path / "result" / "evolved.skm").read_text(encoding="utf-8") == "machine B1"
    assert json.loads((tmp_path / "result" / "tree.json").read_text(encoding="utf-8"))["v"] == 1


def test_write_evolution_reports_an_unwritable_folder(evolution: scenario.Evolution, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    problem = write_evolution(evolution, blocker / "result")
    assert problem is not None and str(problem.code) == "SKM901"


@pytest.fixture(scope="module")
def patched(tmp_path_factory: pytest.TempPathFactory) -> tuple[Evolution, list[dict[str, object]]]:
    """An evolution whose children are a machine patch, a patch that does not apply and a whole text."""
    folder = tmp_path_factory.mktemp("patched")
    children: list[dict[str, object]] = [
        {"name": "edited", "rank": 1, "patch": {"machine": [
            {"op": "set_counter", "name": "tries", "max": 2},
            {"op": "add_edge", "state": "a", "text": 'notes == "" and tries < 2', "target": "a"},
            {"op": "add_assigns", "state": "a", "index": 0, "assigns": "tries += 1"},
            {"op": "set_prompt", "state": "a", "text": "write the notes " + "at length " * 10}]}},
        {"name": "broken", "rank": 2, "patch": {"machine": [{"op": "remove_read", "state": "a", "name": "x"}]}},
        {"name": "whole", "rank": 3, "machine": GATE_MACHINE},
    ]
    path = folder / "roles.json"
    path.write_text(json.dumps({"reflect": {"root": [{"children": children}]},
                                "execute": {"root": {"reward": 0}, "edited": {"reward": 1}}}), encoding="utf-8")
    script = load_script(path)
    assert isinstance(script, Script), script
    roles = Roles(ScriptedRunner(script, folder / "out"), ScriptedReflector(script))
    return evolve(GATE_MACHINE, roles, gate=check_gate, options=EvolveOptions(budget=2)), children


def test_the_tree_json_records_each_childs_patch_as_a_role_script_patch(
        patched: tuple[Evolution, list[dict[str, object]]], tmp_path: Path) -> None:
    evolution, children = patched
    data = json.loads(json.dumps(evolution_json(evolution)))
    nodes = {n["name"]: n for n in data["nodes"]}
    assert nodes["edited"]["reward"] == 1 and nodes["broken"]["invalid"] and evolution.success
    assert nodes["root"]["patch"] is None and nodes["whole"]["patch"] is None
    assert [nodes[c["name"]]["patch"] for c in children[:2]] == [c["patch"] for c in children[:2]]
    back = tmp_path / "again.json"  # pasted back into a role script, the patches read as the same records
    again = [{"name": name, "rank": 1, "patch": nodes[name]["patch"]} for name in ("edited", "broken")]
    back.write_text(json.dumps({"reflect": {"root": [{"children": again}]}}), encoding="utf-8")
    script = load_script(back)
    assert isinstance(script, Script), script
    by_name = {node.name: node for node in evolution.tree.nodes}
    assert [c.patch for c in script.reflect["root"][0].children] == [by_name["edited"].patch, by_name["broken"].patch]


def test_the_markdown_report_shows_each_revisions_edits_one_line_each(
        patched: tuple[Evolution, list[dict[str, object]]]) -> None:
    text = evolution_markdown(patched[0])
    section = text.split("## Revisions\n\n")[1].split("\n\n")[0].splitlines()
    assert section[:3] == ["- `edited` (from `root`, rank 1; ran: reward 1, s 2.50): a patch:",
                           '  - `set_counter name="tries" max=2`',
                           '  - `add_edge state="a" text="notes == \\"\\" and tries < 2" target="a"`']
    assert section[4].startswith('  - `set_prompt state="a" text="write the notes at length') and "…" in section[4]
    assert section[5:] == ["- `broken` (from `root`, rank 2; refused by the gate): a patch:",
                           '  - `remove_read state="a" name="x"`',
                           "- `whole` (from `root`, rank 3; not run): the whole machine text"]


def test_the_markdown_report_lists_each_revisions_structural_diff(
        patched: tuple[Evolution, list[dict[str, object]]]) -> None:
    text = evolution_markdown(patched[0])
    section = text.split("## What changed\n\n")[1].split("\n\n")[1].splitlines()
    assert section[0].startswith("- `edited` (from `root`): state `a` changed; edge a -> a added"), section
    assert section[1] == "- `broken` (from `root`): no state or edge changed"  # its patch did not apply
    assert section[2].startswith("- `whole` (from `root`): ")
