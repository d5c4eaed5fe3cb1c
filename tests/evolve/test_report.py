"""The evolution's files: the tree as JSON, the trajectory report, a drawing real `dot` accepts, the evolved machine."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from skillc.evolve.report import evolution_dot, evolution_json, evolution_markdown, write_evolution
from tests.evolve import scenario


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
    assert "| node | exists | json | checked |" in text and "| B1 | 1 | 1 | 1 |" in text


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz `dot` is not installed")
def test_the_drawing_is_valid_graphviz(evolution: scenario.Evolution, tmp_path: Path) -> None:
    text = evolution_dot(evolution)
    assert "style=dashed, color=red" in text and "refused by the gate" in text and "penwidth=3" in text
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
    assert problem is not None and problem.code == "SKM901"
