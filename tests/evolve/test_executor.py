"""The bench runner as the executor, and one evolution over real runs: real machines, the runtime with a scripted
model, the task's real verifier, the real check gate."""

from __future__ import annotations

from pathlib import Path

from skillc.bench.suite import load_suite
from skillc.evolve.cases import Draft
from skillc.evolve.executor import BenchExecutor
from skillc.evolve.gate import check_gate
from skillc.evolve.loop import Roles, evolve
from skillc.evolve.roles import Reflection, Script, ScriptedReflector, ScriptedVerifier
from skillc.evolve.state import Child, Node, Operation

FIXTURE = Path(__file__).parents[1] / "bench" / "fixtures" / "beats"
SCRIPT = f"scripted:{FIXTURE / 'script.json'}"
GOOD = (FIXTURE / "beats.skm").read_text(encoding="utf-8")
# Writes the answer to the wrong file: the read-back fails and the verifier finds no answer.txt.
WRONG_FILE = GOOD.replace("\" > answer.txt\")", "\" > other.txt\")")
# Does not check: an edge to a state that does not exist.
UNCHECKED = GOOD.replace("-> read_back", "-> readback")


def _executor(out: Path) -> BenchExecutor:
    loaded = load_suite(FIXTURE / "suite.toml")
    assert loaded.suite is not None
    return BenchExecutor(loaded.suite, loaded.suite.tasks[0], SCRIPT, out)


def test_a_version_runs_as_a_bench_cell_with_its_own_work_folder(tmp_path: Path) -> None:
    assert WRONG_FILE != GOOD and UNCHECKED != GOOD
    executor = _executor(tmp_path)
    good = executor.execute(Node(0, GOOD, name="root"))
    assert good.reward == 1 and (good.workdir / "answer.txt").read_text(encoding="utf-8") == "42\n"
    assert good.trace.is_file() and ("answer", '"42"') in good.outputs
    wrong = executor.execute(Node(1, WRONG_FILE, name="wrong"))
    assert wrong.reward == 0 and (wrong.workdir / "other.txt").is_file()
    assert not (wrong.workdir / "answer.txt").exists() and wrong.workdir != good.workdir


def test_evolution_over_real_runs_refuses_the_unchecked_candidate_and_finds_the_fix(tmp_path: Path) -> None:
    script = Script(
        reflect={"root": (Reflection(
            (Operation("add", "h1", "the answer goes to the wrong file", "answer.txt does not exist"),),
            (Child(UNCHECKED, 1, "unchecked"), Child(GOOD, 2, "fixed"))),)},
        verify={"h1": ((Draft("answer-file", "shell", "test -f answer.txt", "hard"),),)},
        execute={})
    roles = Roles(_executor(tmp_path), ScriptedReflector(script), ScriptedVerifier(script))
    evolution = evolve(WRONG_FILE, roles, gate=check_gate)
    assert evolution.success and evolution.best.name == "fixed"
    assert evolution.executions == 1 and evolution.saved == 1
    refused = [evolution.tree.node(s.node) for s in evolution.steps if s.kind == "refused"]
    assert [n.name for n in refused] == ["unchecked"] and "SKM102" in (refused[0].invalid or "")
    assert evolution.knowledge.evidence.row(evolution.best.id) == (1,)
    assert evolution.knowledge.evidence.row(0) == (0,)
