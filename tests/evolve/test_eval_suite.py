"""The evaluation suite of examples/evolve/ (bench/evolve.py): every root fails its hidden verifier for a reason
the reward alone does not name, the tree search with the self-verifier and the real gate beats in-place greedy
refinement, and the gate refuses the candidates that do not check before they cost an execution."""

from __future__ import annotations

import pytest

from bench import evolve as suite
from skillc.check.source import check_source
from skillc.evolve.state import Node

TASKS = suite.tasks()
VARIANTS = {v.name: v for v in suite.VARIANTS}


def test_the_suite_has_its_tasks_and_every_root_checks_and_fails_the_hidden_verifier(tmp_path) -> None:
    assert {t.name for t in TASKS} == {"format", "format-and-check", "location", "missing-check", "skill-md"}
    for task in TASKS:
        result = check_source(task.machine, path=f"<{task.name}>")
        assert result.machine is not None and not result.failed, task.name
        executor = suite.SimulatedExecutor(task, tmp_path / task.name)
        assert executor.execute(Node(0, task.machine, name="root")).reward == 0, task.name


@pytest.fixture(scope="module")
def outcomes() -> dict[tuple[str, str], suite.Run]:
    return {(t.name, v): suite.run(t, VARIANTS[v], budget=5) for t in TASKS for v in ("full", "greedy")}


def test_greedy_refinement_is_trapped_by_every_misleading_first_diagnosis(outcomes) -> None:
    for task in TASKS:
        run = outcomes[(task.name, "greedy")]
        assert not run.evolution.success and run.evolution.executions == 5, task.name
        assert not any(s.jump for s in run.evolution.steps)


def test_the_full_search_backs_off_and_passes_where_the_evidence_shows_the_way(outcomes) -> None:
    passed = {name for (name, v), r in outcomes.items() if v == "full" and r.evolution.success}
    assert {"format", "location", "missing-check", "skill-md"} <= passed
    for name in ("location", "missing-check"):  # the first revision broke a hard case: one run, then a jump
        evolution = outcomes[(name, "full")].evolution
        assert evolution.executions == 2 and [s.jump for s in evolution.steps if s.kind == "run"][-1]
    assert sum(r.evolution.saved for (_, v), r in outcomes.items() if v == "full") >= 2  # the unpaid loops


def test_a_skill_md_task_is_evolved_through_skill_patches(outcomes) -> None:
    best = outcomes[("skill-md", "full")].evolution.best
    assert best.skill is not None and "as a JSON object" in best.skill and "JSON object" in best.machine
