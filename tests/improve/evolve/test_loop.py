"""The evolve loop end to end with scripted roles: a misleading first diagnosis traps greedy refinement, while the
tree search backs off within K and succeeds; the ablations (no self-verifier, no gate) on the same script."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from skillc.improve.evolve import codes
from skillc.improve.evolve.loop import Evolution, Roles, evolve, no_gate, trajectory
from skillc.improve.evolve.options import EvolveOptions
from skillc.improve.evolve.roles import Script, ScriptedReflector, ScriptedRunner, ScriptedVerifier, load_script
from skillc.improve.evolve.state import Node, Output
from tests.improve.evolve import scenario
from tests.improve.evolve.scenario import scenario as _scenario


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
    assert [str(d.code) for d in evolution.diagnostics] == [codes.ROLE_FAILED.code]
    assert _names(evolution) == ["root", "A"] and not evolution.success
    assert evolution.best.name == "root"  # what it found before the failure


class _Interrupted(ScriptedRunner):
    """The scenario's executor, with Ctrl-C pressed while version `at` runs."""

    at = "B"

    def execute(self, node: Node) -> Output:
        if node.name == self.at:
            raise KeyboardInterrupt
        return super().execute(node)


def test_an_interrupt_stops_the_search_and_keeps_what_it_found(script: Script, tmp_path: Path) -> None:
    roles = Roles(_Interrupted(script, tmp_path / "int"), ScriptedReflector(script), ScriptedVerifier(script))
    evolution = evolve("machine root", roles, gate=scenario.gate)
    assert evolution.interrupted and [str(d.code) for d in evolution.diagnostics] == [codes.EVOLVE_INTERRUPTED.code]
    assert _names(evolution) == ["root", "A"] and evolution.executions == 1  # B's run was cut short: not counted
    b = next(n for n in evolution.tree.nodes if n.name == "B")
    assert not b.evaluated and b.visits == 0 and b.id not in evolution.knowledge.evidence.rows
    assert evolution.best.name == "root" and evolution.knowledge.evidence.rows == (0, 1)
    assert not _evolve(script, tmp_path / "whole").interrupted


def test_an_operation_that_does_not_fit_is_dropped_with_skm842(script: Script, tmp_path: Path) -> None:
    data = _scenario()
    data["reflect"]["root"][0]["operations"].append({"op": "refute", "id": "h9"})
    path = tmp_path / "roles.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_script(path)
    assert isinstance(loaded, Script)
    evolution = _evolve(loaded, tmp_path / "op")
    assert evolution.success
    assert [str(d.code) for d in evolution.diagnostics] == [codes.INVALID_HYPOTHESIS_OPERATION.code]


def test_options_out_of_range_run_nothing(script: Script, tmp_path: Path) -> None:
    evolution = _evolve(script, tmp_path / "bad", branching=0)
    assert [str(d.code) for d in evolution.diagnostics] == [codes.INVALID_EVOLVE_OPTION.code]
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
    assert next(n.name for n in refused) == "same" and "the same version as root" in (refused[0].invalid or "")
    assert evolution.success and "same" not in _names(evolution)


def test_a_case_whose_id_another_case_holds_is_dropped_and_the_same_case_is_shared(tmp_path: Path) -> None:
    add = [{"op": "add", "id": h, "description": h, "prediction": h} for h in ("h1", "h2", "h3")]
    case = {"id": "c", "kind": "shell", "source": "true", "strength": "hard"}
    raw = {"reflect": {"root": [{"operations": add, "children": [{"name": "A", "rank": 1, "machine": "machine A"}]}]},
           "verify": {"h1": [[case]], "h2": [[{**case, "source": "false"}]], "h3": [[case]]},
           "execute": {"root": {"reward": 0}, "A": {"reward": 1}}}
    (tmp_path / "roles.json").write_text(json.dumps(raw), encoding="utf-8")
    script = load_script(tmp_path / "roles.json")
    assert isinstance(script, Script)
    roles = Roles(ScriptedRunner(script, tmp_path / "out"), ScriptedReflector(script), ScriptedVerifier(script))
    evolution = evolve("machine root", roles)
    (only,) = evolution.knowledge.bank.cases
    assert (only.source, only.owners) == ("true", frozenset({"h1", "h3"}))
    assert [str(d.code) for d in evolution.diagnostics] == [codes.UNVALIDATED_CASE.code]
    assert "'h2'" in evolution.diagnostics[0].message and "its id is taken" in evolution.diagnostics[0].message


def test_at_most_b_children_are_kept_and_they_are_the_best_ranked(tmp_path: Path) -> None:
    children = [{"name": n, "rank": r, "machine": f"machine {n}"} for n, r in (("C", 3), ("A", 1), ("D", 3), ("B", 2))]
    raw = {"reflect": {"root": [{"children": children}]}, "execute": {"root": {"reward": 0}, "A": {"reward": 1}}}
    (tmp_path / "roles.json").write_text(json.dumps(raw), encoding="utf-8")
    script = load_script(tmp_path / "roles.json")
    assert isinstance(script, Script)
    roles = Roles(ScriptedRunner(script, tmp_path / "out"), ScriptedReflector(script))
    evolution = evolve("machine root", roles, options=EvolveOptions(branching=3))
    kept = [(n.name, n.rank) for n in evolution.tree.nodes[1:]]
    assert kept == [("C", 3), ("A", 1), ("B", 2)]  # D (rank 3, after C) is the one cut; the reply's order is kept
    assert evolution.success and evolution.best.name == "A"


def test_a_name_two_nodes_share_is_shown_with_its_node_id(tmp_path: Path) -> None:
    children = [{"name": "A", "rank": 1, "machine": "machine A1"}, {"name": "A", "rank": 2, "machine": "machine A2"},
                {"rank": 3, "machine": "machine unnamed"}]
    raw = {"reflect": {"root": [{"children": children}]},
           "execute": {"root": {"reward": 0}, "A": {"reward": 0}, "": {"reward": 0}}}
    (tmp_path / "roles.json").write_text(json.dumps(raw), encoding="utf-8")
    script = load_script(tmp_path / "roles.json")
    assert isinstance(script, Script)
    roles = Roles(ScriptedRunner(script, tmp_path / "out"), ScriptedReflector(script))
    lines = trajectory(evolve("machine root", roles, options=EvolveOptions(budget=3)))
    assert [line for line in lines if line.startswith("run")] == [
        "run root: reward 0", "run A (node 1): reward 0", "run A (node 2): reward 0 (jump)",
        "run node 3: reward 0 (jump)"]
