"""The evolve loop end to end with scripted roles: a misleading first diagnosis traps greedy refinement, while the
tree search backs off within K and succeeds; the ablations (no self-verifier, no gate) on the same script."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from skillc.evolve import codes
from skillc.evolve.loop import Evolution, no_gate, trajectory
from skillc.evolve.roles import Script, load_script
from tests.evolve import scenario
from tests.evolve.scenario import scenario as _scenario


@pytest.fixture
def script(tmp_path: Path) -> Script:
    return scenario.load(tmp_path)


_evolve = scenario.run


def _names(evolution: Evolution, kind: str = "run") -> list[str]:
    return [evolution.tree.node(s.node).name for s in evolution.steps if s.kind == kind]


def test_the_tree_search_backs_off_the_misleading_branch_and_succeeds(script: Script, tmp_path: Path) -> None:
    started = time.perf_counter()
    evolution = _evolve(script, tmp_path / "full")
    elapsed = time.perf_counter() - started
    assert evolution.success and evolution.best.name == "B1"
    assert _names(evolution) == ["root", "A", "B", "B1"]
    assert evolution.executions == 3 and evolution.saved == 1 and _names(evolution, "refused") == ["C"]
    assert [s.jump for s in evolution.steps if s.kind == "run"] == [False, False, True, False]
    k = evolution.knowledge
    assert {h.id: h.state for h in k.store.hypotheses} == {"h1": "refuted", "h2": "active", "h3": "active"}
    # h1's case was pruned with it; the repaired json case and h3's case made it into the matrix
    assert [c.id for c in k.bank.cases] == ["exists", "json", "checked"]
    assert k.evidence.columns == ("exists", "json", "checked")
    ids = {n.name: n.id for n in evolution.tree.nodes}
    assert k.evidence.row(ids["root"]) == (1, 0, 0) and k.evidence.row(ids["A"]) == (0, 0, 0)
    assert k.evidence.row(ids["B"]) == (1, 1, 0) and k.evidence.row(ids["B1"]) == (1, 1, 1)
    assert evolution.diagnostics == ()
    assert "run B: reward 0 (jump)" in trajectory(evolution)
    assert elapsed < 30  # generous on 2 shared cores; the report gives the measured figure


def test_greedy_refinement_is_trapped_by_the_first_diagnosis(script: Script, tmp_path: Path) -> None:
    evolution = _evolve(script, tmp_path / "greedy", strategy="greedy")
    assert not evolution.success
    assert _names(evolution) == ["root", "A", "A1", "A2", "A3", "A4"] and evolution.executions == 5


def test_without_the_self_verifier_the_tree_has_no_evidence_to_back_off_with(script: Script,
                                                                             tmp_path: Path) -> None:
    evolution = _evolve(script, tmp_path / "noverify", self_verifier=False)
    # every unrewarded version scores alike (Q̂ = 1/2), so PUCT follows the prior down the misleading branch;
    # exploration tries C once N(root) = 4 (0.4 + 1.4 · 0.245 · 2 = 1.086 > A's 0.5 + 1.4 · 0.665 · 2 / 4 = 0.966),
    # the gate refuses it, and the budget is spent on A's branch before B is ever run
    assert not evolution.success and evolution.executions == 5 and evolution.saved == 1
    assert _names(evolution) == ["root", "A", "A1", "A2", "A3", "A4"]
    assert evolution.knowledge.bank.cases == ()


def test_without_the_gate_the_broken_candidate_costs_an_execution(script: Script, tmp_path: Path) -> None:
    evolution = _evolve(script, tmp_path / "nogate", gate=no_gate)
    assert evolution.success and _names(evolution) == ["root", "A", "C", "B", "B1"]
    assert evolution.executions == 4 and evolution.saved == 0


def test_the_budget_bounds_the_evolved_executions(script: Script, tmp_path: Path) -> None:
    evolution = _evolve(script, tmp_path / "k1", budget=1)
    assert evolution.executions == 1 and _names(evolution) == ["root", "A"] and not evolution.success
    assert evolution.best.name == "root"  # root passes the hard `exists` case, A does not


def test_a_zero_budget_runs_the_root_and_reflects_on_nothing(script: Script, tmp_path: Path) -> None:
    evolution = _evolve(script, tmp_path / "k0", budget=0)
    assert _names(evolution) == ["root"] and [s.kind for s in evolution.steps] == ["run"]
    assert len(evolution.tree.nodes) == 1 and evolution.best.name == "root"


def test_an_unscripted_execution_stops_the_search_with_skm844(script: Script, tmp_path: Path) -> None:
    broken = Script(script.reflect, script.verify, {k: v for k, v in script.execute.items() if k != "B"})
    evolution = _evolve(broken, tmp_path / "missing")
    assert [d.code for d in evolution.diagnostics] == [codes.ROLE_FAILED.code]
    assert _names(evolution) == ["root", "A"] and not evolution.success
    assert evolution.best.name == "root"  # what it found before the failure


def test_an_operation_that_does_not_fit_is_dropped_with_skm842(script: Script, tmp_path: Path) -> None:
    data = _scenario()
    data["reflect"]["root"][0]["operations"].append({"op": "refute", "id": "h9"})
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_script(path)
    assert isinstance(loaded, Script)
    evolution = _evolve(loaded, tmp_path / "op")
    assert evolution.success
    assert [d.code for d in evolution.diagnostics] == [codes.INVALID_HYPOTHESIS_OPERATION.code]


def test_options_out_of_range_run_nothing(script: Script, tmp_path: Path) -> None:
    evolution = _evolve(script, tmp_path / "bad", branching=0)
    assert [d.code for d in evolution.diagnostics] == [codes.INVALID_EVOLVE_OPTION.code]
    assert evolution.steps == () and not evolution.tree.root.evaluated and not (tmp_path / "bad").exists()


def test_a_candidate_identical_to_a_version_that_ran_is_refused(tmp_path: Path) -> None:
    data = _scenario()
    data["reflect"]["root"][1]["children"].insert(0, {"name": "same", "rank": 1, "machine": "machine root"})
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_script(path)
    assert isinstance(loaded, Script)
    evolution = _evolve(loaded, tmp_path / "twin")
    refused = [evolution.tree.node(s.node) for s in evolution.steps if s.kind == "refused"]
    assert [n.name for n in refused][0] == "same" and "the same version as root" in (refused[0].invalid or "")
    assert evolution.success and "same" not in _names(evolution)
