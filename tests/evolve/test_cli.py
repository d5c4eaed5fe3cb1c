"""`skillc evolve` end to end: the bench "beats" suite, real machines run by the runtime with a scripted model, the
task's real verifier, the real check gate, and scripted reflection/self-verifier whose first diagnosis misleads.

The root writes `answer: 42` to answer.txt (the wrong format: the read-back and the verifier fail). Reflection's
best-ranked child A "fixes the value" and writes result.txt instead; below A it keeps insisting (A1, A2, …). The
second child does not check (the gate refuses it); the third is the fix. The tree search backs off A (it passes
fewer cases than the root) and succeeds; greedy refinement spends the budget on A's branch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.cli import main

FIXTURE = Path(__file__).parents[1] / "bench" / "fixtures" / "beats"
SUITE = str(FIXTURE / "suite.toml")
EXECUTOR = f"scripted:{FIXTURE / 'script.json'}"
GOOD = (FIXTURE / "beats.skm").read_text(encoding="utf-8")
WRONG_FORMAT = GOOD.replace("printf '%s", "printf 'answer: %s")
WRONG_FILE = GOOD.replace("> answer.txt", "> result.txt")
UNCHECKED = GOOD.replace("-> read_back", "-> readback")
VALUE_CASE = ("def check(workdir, outputs, trace):\n"
              "    path = workdir / 'answer.txt'\n"
              "    return path.is_file() and '42' in path.read_text()\n")


def _roles() -> dict[str, Any]:
    """The role script: hypotheses, cases and ranked children per version."""
    chain = ["A", "A1", "A2", "A3", "A4", "A5"]
    reflect: dict[str, Any] = {"root": [
        {"operations": [{"op": "add", "id": "h1", "description": "the computed value is wrong",
                         "prediction": "answer.txt does not hold 42"},
                        {"op": "add", "id": "h2", "description": "the answer file is wrong",
                         "prediction": "answer.txt is missing"}],
         "children": [{"name": "A", "rank": 1, "machine": WRONG_FILE},
                      {"name": "C", "rank": 2, "machine": UNCHECKED},
                      {"name": "B", "rank": 3, "machine": GOOD}]}]}
    for i, (parent, child) in enumerate(zip(chain, chain[1:])):
        reflect[parent] = [{"children": [{"name": child, "rank": 1, "machine": f"# attempt {i}\n{WRONG_FILE}"}]}]
    verify = {"h1": [[{"id": "value42", "kind": "python", "source": VALUE_CASE, "strength": "semantic"}]],
              "h2": [[{"id": "exists", "kind": "shell", "source": "test -f answer.txt", "strength": "hard"}]]}
    return {"reflect": reflect, "verify": verify}


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    """The root machine and the role script, written to `tmp_path`."""
    machine = tmp_path / "root.skm"
    machine.write_text(WRONG_FORMAT, encoding="utf-8")
    roles = tmp_path / "roles.json"
    roles.write_text(json.dumps(_roles()), encoding="utf-8")
    return machine, roles


def _evolve(machine: Path, roles: Path, out: Path, *extra: str) -> Any:
    """`skillc evolve` in this process."""
    args = [str(machine), "--suite", SUITE, "--task", "t1", "--executor", EXECUTOR,
            "--reflect-model", f"scripted:{roles}", "-o", str(out), *extra]
    return CliRunner().invoke(main, ["evolve", *args], catch_exceptions=False)


def test_the_full_search_succeeds_and_writes_the_evolved_machine(setup: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "full"
    result = _evolve(*setup, out)
    assert result.exit_code == 0, result.output
    assert (out / "evolved.skm").read_text(encoding="utf-8") == GOOD
    # the root carries the suite's SKILL.md (a patch may edit it); a child given as whole machine text has none
    assert not (out / "SKILL.md").exists()
    tree = json.loads((out / "tree.json").read_text(encoding="utf-8"))
    assert tree["success"] and tree["executions"] == 2 and tree["saved"] == 1
    runs = [tree["nodes"][s["node"]]["name"] for s in tree["steps"] if s["kind"] == "run"]
    assert runs == ["root", "A", "B"]
    assert [s["jump"] for s in tree["steps"] if s["kind"] == "run"] == [False, False, True]
    refused = [n for n in tree["nodes"] if n["invalid"]]
    assert [n["name"] for n in refused] == ["C"] and "SKM102" in refused[0]["invalid"]
    assert tree["evidence"]["columns"] == ["value42", "exists"]
    rows = dict(zip(tree["evidence"]["rows"], tree["evidence"]["values"]))
    ids = {n["name"]: n["id"] for n in tree["nodes"]}
    assert rows[ids["root"]] == [1, 1] and rows[ids["A"]] == [0, 0] and rows[ids["B"]] == [1, 1]
    assert "succeeded" in (out / "report.md").read_text(encoding="utf-8")
    assert (out / "tree.dot").read_text(encoding="utf-8").startswith("digraph evolve {")
    assert "evolve: succeeded; best version B" in result.output
    assert "2 of 5 evolved executions used, 1 saved by the gate" in result.output
    assert f"machine: {out / 'evolved.skm'}" in result.output


def test_greedy_refinement_is_trapped_and_exits_4(setup: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "greedy"
    result = _evolve(*setup, out, "--greedy", "--budget", "3", "--json")
    assert result.exit_code == 4, result.output
    found = json.loads(result.output)
    assert not found["success"] and found["executions"] == 3 and found["budget"] == 3
    assert [line.split(":")[0] for line in found["trajectory"] if line.startswith("run")] == [
        "run root", "run A", "run A1", "run A2"]
    # the best evaluated version is still the root (it passes the cases A's branch fails), and it is written
    assert found["best"]["name"] == "root" and found["best"]["reward"] == 0
    assert (out / "evolved.skm").read_text(encoding="utf-8") == WRONG_FORMAT
    assert (out / "SKILL.md").read_text(encoding="utf-8") == (FIXTURE / "SKILL.md").read_text(encoding="utf-8")
    assert found["files"]["skill"] == str(out / "SKILL.md")
    assert set(found) >= {"nodes", "evaluated", "refused", "saved", "hypotheses", "cases", "files", "diagnostics"}
    assert found["files"]["tree"] == str(out / "tree.json") and (out / "tree.json").is_file()


def test_json_summary_of_a_success(setup: tuple[Path, Path], tmp_path: Path) -> None:
    result = _evolve(*setup, tmp_path / "j", "--json")
    found = json.loads(result.output)
    assert result.exit_code == 0 and found["success"] and found["best"]["name"] == "B"
    assert found["best"]["reward"] == 1 and found["best"]["score"] >= 2
    assert found["hypotheses"] == {"h1": "active", "h2": "active"} and found["cases"] == 2
    assert found["nodes"] == 4 and found["evaluated"] == 3 and found["refused"] == 1 and found["saved"] == 1


def test_the_ablations_without_the_verifier_and_without_the_gate(setup: tuple[Path, Path], tmp_path: Path) -> None:
    found = json.loads(_evolve(*setup, tmp_path / "nv", "--no-verifier", "--budget", "3", "--json").output)
    # no cases: every unrewarded version scores alike, so PUCT follows the prior down A's branch
    assert not found["success"] and found["cases"] == 0 and found["executions"] == 3
    result = _evolve(*setup, tmp_path / "ng", "--no-gate")
    # without the gate the unchecked candidate C is sent to the bench runner, which cannot run it: the search stops
    # with SKM844 (the core's BenchExecutor: a cell without a trace is a role failure), keeping what it found
    assert result.exit_code == 4 and "error[SKM844]" in result.output and "version C did not run" in result.output
    assert (tmp_path / "ng" / "evolved.skm").read_text(encoding="utf-8") == WRONG_FORMAT


@pytest.mark.parametrize(("extra", "code"), [
    (["--budget", "-1"], "SKM840"),
    (["--children", "0"], "SKM840"),
    (["--task", "t9"], "SKM840"),
    (["--executor", "bogus:x"], "SKM731"),
    (["--reflect-model", "scripted:/nonexistent/roles.json"], "SKM841"),
])
def test_bad_flags_are_diagnostics_with_exit_2_and_nothing_written(setup: tuple[Path, Path], tmp_path: Path,
                                                                   extra: list[str], code: str) -> None:
    out = tmp_path / "bad"
    result = _evolve(*setup, out, *extra)
    assert result.exit_code == 2, result.output
    assert f"error[{code}]" in result.output and "Traceback" not in result.output
    assert not out.exists()


def test_a_role_script_of_the_wrong_shape_and_a_missing_machine(setup: tuple[Path, Path], tmp_path: Path) -> None:
    machine, roles = setup
    roles.write_text(json.dumps({"reflect": {"root": [{"children": [{"name": "A", "rank": 0, "machine": ""}]}]}}),
                     encoding="utf-8")
    result = _evolve(machine, roles, tmp_path / "o1")
    assert result.exit_code == 2 and "error[SKM841]" in result.output and "rank" in result.output
    result = _evolve(tmp_path / "missing.skm", roles, tmp_path / "o2")
    assert result.exit_code == 2 and "error[SKM901]" in result.output and not (tmp_path / "o2").exists()


def test_an_unchecked_root_exits_1_and_a_used_folder_is_refused(setup: tuple[Path, Path], tmp_path: Path) -> None:
    machine, roles = setup
    machine.write_text(UNCHECKED, encoding="utf-8")
    result = _evolve(machine, roles, tmp_path / "u")
    assert result.exit_code == 1 and "SKM102" in result.output and not (tmp_path / "u").exists()
    (tmp_path / "used" / "runs").mkdir(parents=True)
    result = _evolve(machine, roles, tmp_path / "used")
    assert result.exit_code == 2 and "already holds an evolution" in result.output


def test_the_gate_reads_the_machines_archive_and_a_damaged_one_is_refused(setup: tuple[Path, Path],
                                                                         tmp_path: Path) -> None:
    machine, roles = setup
    result = _evolve(machine, roles, tmp_path / "a0", "--budget", "0")
    assert result.exit_code == 4 and not (tmp_path / "root.archive").exists()  # no archive is created
    (tmp_path / "root.archive").mkdir()
    (tmp_path / "root.archive" / "manifest.json").write_text("[]", encoding="utf-8")
    result = _evolve(machine, roles, tmp_path / "a1")
    assert result.exit_code == 2 and "error[SKM807]" in result.output and not (tmp_path / "a1").exists()
    assert _evolve(machine, roles, tmp_path / "a2", "--no-gate", "--budget", "0").exit_code == 4


def test_the_default_folder_is_relative_to_the_current_one(setup: tuple[Path, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    machine, roles = setup
    monkeypatch.chdir(tmp_path)
    args = ["evolve", "root.skm", "--suite", SUITE, "--task", "t1", "--executor", EXECUTOR,
            "--reflect-model", "scripted:roles.json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = Path(".skillc") / "evolve" / "root"
    assert (tmp_path / out / "evolved.skm").read_text(encoding="utf-8") == GOOD
    assert f"machine: {out / 'evolved.skm'}" in result.output and (tmp_path / out / "runs" / "versions").is_dir()
