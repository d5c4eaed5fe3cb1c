"""The bench runner as the executor, and one evolution over real runs: real machines, the runtime with a scripted
model, the task's real verifier, the real check gate."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillc.bench.suite import load_suite
from skillc.improve.evolve import runner as runner_module
from skillc.improve.evolve.cases import Case, Draft, run_case
from skillc.improve.evolve.gate import check_gate
from skillc.improve.evolve.loop import Roles, evolve, no_gate
from skillc.improve.evolve.models import describe_output
from skillc.improve.evolve.roles import Reflection, RoleError, Script, ScriptedReflector, ScriptedVerifier
from skillc.improve.evolve.runner import BenchRunner
from skillc.improve.evolve.state import Child, Node, Operation
from skillc.runtime.record import load_run

FIXTURE = Path(__file__).parents[2] / "bench" / "fixtures" / "beats"
SCRIPT = f"scripted:{FIXTURE / 'script.json'}"
GOOD = (FIXTURE / "beats.skm").read_text(encoding="utf-8")
# Writes the answer to the wrong file: the read-back fails and the verifier finds no answer.txt.
WRONG_FILE = GOOD.replace("\" > answer.txt\")", "\" > other.txt\")")
# Does not check: an edge to a state that does not exist.
UNCHECKED = GOOD.replace("-> read_back", "-> readback")


def _executor(out: Path, spec: str = SCRIPT, check: bool = True) -> BenchRunner:
    loaded = load_suite(FIXTURE / "suite.toml")
    assert loaded.suite is not None
    return BenchRunner(loaded.suite, loaded.suite.tasks[0], spec, out, check=check)


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


def test_a_version_that_does_not_check_costs_its_execution_with_reward_0(tmp_path: Path) -> None:
    # the executor spec cannot even be made: the version is refused for what it is, before its cell would run
    executor = _executor(tmp_path, f"scripted:{tmp_path / 'missing.json'}")
    output = executor.execute(Node(4, UNCHECKED, name="unchecked"))
    assert output.reward == 0 and output.outputs == () and output.note.startswith("not run: fails skillc check")
    assert output.workdir.is_dir() and list(output.workdir.iterdir()) == []  # the fixture-less task's fresh folder
    footer = load_run(output.trace).footer
    assert footer is not None and footer.outcome == "failed" and footer.steps == 0
    assert footer.error is not None and footer.error.startswith("not run: fails skillc check (SKM102")
    assert footer.reason is not None and footer.reason.message == footer.error
    # the cases run on it as on any output: one that needs the run's work does not hold, none is broken
    answer = run_case(Case("answer", "shell", "test -f answer.txt", "hard", frozenset()), output, 30)
    trace = run_case(Case("trace", "python", "def check(workdir, outputs, trace):\n"
                                             "    return 'not run' in trace.read_text()\n", "hard", frozenset()),
                     output, 30)
    assert (answer.holds, answer.error, trace.holds, trace.error) == (False, None, True, None)


def test_a_harness_failure_is_still_a_role_error(tmp_path: Path) -> None:
    with pytest.raises(RoleError, match="version fine did not run: executor scripted:"):
        _executor(tmp_path, f"scripted:{tmp_path / 'missing.json'}").execute(Node(1, GOOD, name="fine"))
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "cells").write_text("not a folder", encoding="utf-8")
    with pytest.raises(RoleError, match="version unchecked did not run: cannot prepare the workdir"):
        _executor(tmp_path / "blocked").execute(Node(2, UNCHECKED, name="unchecked"))


def test_without_the_gate_the_unchecked_candidate_spends_an_execution(tmp_path: Path) -> None:
    script = Script(
        reflect={"root": (Reflection((), (Child(UNCHECKED, 1, "unchecked"), Child(GOOD, 2, "fixed"))),)},
        verify={}, execute={})
    roles = Roles(_executor(tmp_path), ScriptedReflector(script), ScriptedVerifier(script))
    evolution = evolve(WRONG_FILE, roles, gate=no_gate)
    assert evolution.success and evolution.best.name == "fixed" and evolution.diagnostics == ()
    assert evolution.executions == 2 and evolution.saved == 0
    runs = [(evolution.tree.node(s.node).name, s.reward) for s in evolution.steps if s.kind == "run"]
    assert runs == [("root", 0), ("unchecked", 0), ("fixed", 1)]


def test_a_version_the_gate_checked_is_not_checked_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checks: list[str] = []

    def counted(node: Node) -> str | None:
        checks.append(node.name)
        return check_gate(node)

    monkeypatch.setattr(runner_module, "check_gate", counted)
    # behind the gate the command turns the executor's check off; without it the executor checks every version
    for gate, check, expected in ((check_gate, False, []), (no_gate, True, ["root", "fixed"])):
        script = Script(reflect={"root": (Reflection((), (Child(GOOD, 1, "fixed"),)),)}, verify={}, execute={})
        roles = Roles(_executor(tmp_path / gate.__name__, check=check), ScriptedReflector(script),
                      ScriptedVerifier(script))
        checks.clear()
        evolution = evolve(WRONG_FILE, roles, gate=gate)
        assert evolution.success and evolution.executions == 1 and checks == expected


def test_a_version_file_that_cannot_be_written_is_a_role_error(tmp_path: Path) -> None:
    (tmp_path / "versions").write_text("not a folder", encoding="utf-8")
    with pytest.raises(RoleError, match=r"version fine did not run: cannot write .*versions/1.skm"):
        _executor(tmp_path).execute(Node(1, GOOD, name="fine"))


def test_behind_a_gate_the_executor_does_not_check_again(tmp_path: Path) -> None:
    # with `check` off (a gate checked every candidate) an unchecked text goes straight to its cell, which the
    # bench refuses to run: a harness failure, not the charged "not run" of the no-gate path
    with pytest.raises(RoleError, match="version unchecked did not run"):
        _executor(tmp_path / "gated", check=False).execute(Node(4, UNCHECKED, name="unchecked"))
    output = _executor(tmp_path / "ungated").execute(Node(4, UNCHECKED, name="unchecked"))
    assert output.reward == 0 and output.note.startswith("not run: fails skillc check")


# A hidden verifier that passes on answer.txt = 42, and meanwhile leaves its expectation, a log and a rewritten
# answer in the folder it is given.
TAMPERING_SUITE = '''\
[suite]
name = "tampering"
skill = "SKILL.md"
machine = "beats.skm"
tools = ["marks.py"]

[verify]
shell = """grep -qx 42 answer.txt; ok=$?; echo 42 > expected.txt; echo verdict $ok >> verifier.log; \\
printf 0 > answer.txt; exit $ok"""

[[task]]
id = "t1"
inputs = { question = "six times seven?" }
'''


def _files(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_hidden_verifiers_writes_never_reach_the_cached_output_or_the_cases(tmp_path: Path) -> None:
    suite_dir = tmp_path / "suite"
    suite_dir.mkdir()
    for name in ("SKILL.md", "beats.skm", "marks.py"):
        (suite_dir / name).write_bytes((FIXTURE / name).read_bytes())
    (suite_dir / "suite.toml").write_text(TAMPERING_SUITE, encoding="utf-8")
    loaded = load_suite(suite_dir / "suite.toml")
    assert loaded.suite is not None
    tampered = BenchRunner(loaded.suite, loaded.suite.tasks[0], SCRIPT, tmp_path / "out").execute(
        Node(0, GOOD, name="root"))
    plain = _executor(tmp_path / "plain").execute(Node(0, GOOD, name="root"))  # a verifier that only reads
    assert tampered.reward == 1  # the verifier's verdict on what the run left
    assert _files(tampered.workdir) == _files(plain.workdir)  # byte-identical to what the run left
    assert (tampered.workdir / "answer.txt").read_text(encoding="utf-8") == "42\n"
    cases = {"expected": "test -e expected.txt", "log": "test -e verifier.log", "answer": "grep -qx 42 answer.txt"}
    results = {name: run_case(Case(name, "shell", source, "hard", frozenset()), tampered, 30)
               for name, source in cases.items()}
    assert {name: (r.holds, r.error) for name, r in results.items()} == {
        "expected": (False, None), "log": (False, None), "answer": (True, None)}
    # both model roles see a run through describe_output: the verifier's files are not in it either
    shown = describe_output(tampered)
    assert "answer.txt" in shown and "expected.txt" not in shown and "verifier.log" not in shown
