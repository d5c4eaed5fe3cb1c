"""`skillc evolve` end to end: the bench "beats" suite, real machines run by the runtime with a scripted model, the
task's real verifier, the real check gate, and scripted reflection/self-verifier whose first diagnosis misleads.

The root writes `answer: 42` to answer.txt (the wrong format: the read-back and the verifier fail). Reflection's
best-ranked child A "fixes the value" and writes result.txt instead; below A it keeps insisting (A1, A2, …). The
second child does not check (the gate refuses it); the third is the fix. The tree search backs off A (it passes
fewer cases than the root) and succeeds; greedy refinement spends the budget on A's branch.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from skillc.cli import main

FIXTURE = Path(__file__).parents[2] / "bench" / "fixtures" / "beats"
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
    for i, (parent, child) in enumerate(itertools.pairwise(chain)):
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
    assert found["interrupted"] is False
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
    # without the gate the unchecked candidate C costs an execution (reward 0: it cannot run), then B is found
    assert result.exit_code == 0 and "SKM844" not in result.output, result.output
    assert "3 of 5 evolved executions used, 0 saved by the gate" in result.output
    assert "  run C: reward 0 (jump); not run: fails skillc check (SKM102: undefined state `readback`)" \
        in result.output.splitlines()
    tree = json.loads((tmp_path / "ng" / "tree.json").read_text(encoding="utf-8"))
    assert [tree["nodes"][s["node"]]["name"] for s in tree["steps"] if s["kind"] == "run"] == ["root", "A", "C", "B"]
    assert not any(n["invalid"] for n in tree["nodes"]) and tree["executions"] == 3 and tree["saved"] == 0
    notes = {n["name"]: n["note"] for n in tree["nodes"] if n["note"]}  # why C did not really run, kept in the tree
    assert list(notes) == ["C"] and notes["C"].startswith("not run: fails skillc check (SKM102")
    assert "not run: fails skillc check" in (tmp_path / "ng" / "report.md").read_text(encoding="utf-8")
    assert (tmp_path / "ng" / "evolved.skm").read_text(encoding="utf-8") == GOOD


@pytest.mark.parametrize(("extra", "code"), [
    (["--budget", "-1"], "SKM840"),
    (["--children", "0"], "SKM840"),
    (["--task", "t9"], "SKM840"),
    (["--repair-rounds", "0"], "SKM840"),
    (["--max-cases", "0"], "SKM840"),
    (["--case-timeout", "0"], "SKM840"),
    (["--fpu-reduction", "-0.5"], "SKM840"),
    (["--fpu-reduction", "nan"], "SKM840"),
    (["--model-timeout", "0"], "SKM840"),
    (["--model-timeout", "nan"], "SKM840"),
    (["--model-timeout", "inf"], "SKM840"),
    (["--model-timeout", "2e9"], "SKM840"),
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


def test_every_search_constant_has_a_flag_that_reaches_the_options(setup: tuple[Path, Path], tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.improve.evolve import command

    seen: list[command.EvolveConfig] = []

    def capture(config: command.EvolveConfig) -> command.EvolveResult:
        seen.append(config)
        return command.EvolveResult(None, None, {}, [], usage=True)

    monkeypatch.setattr(command, "run_evolve", capture)
    flags = ["--budget", "2", "--children", "4", "--rounds", "2", "--c-puct", "0.7", "--beta", "2.5",
             "--fpu-reduction", "0.25", "--repair-rounds", "5", "--max-cases", "7", "--case-timeout", "9.5",
             "--model-timeout", "33", "--greedy", "--no-verifier"]
    assert _evolve(*setup, tmp_path / "o", *flags).exit_code == 2
    options = seen[0].options
    assert (options.budget, options.branching, options.reflection_rounds, options.c_puct, options.beta) == (
        2, 4, 2, 0.7, 2.5)
    assert (options.fpu_reduction, options.repair_rounds, options.max_cases, options.case_timeout_s) == (
        0.25, 5, 7, 9.5)
    assert options.strategy == "greedy" and not options.self_verifier and seen[0].model_timeout_s == 33
    assert _evolve(*setup, tmp_path / "o").exit_code == 2  # the defaults are the issue's (EvolveOptions')
    assert seen[1].options == command.EvolveOptions() and seen[1].model_timeout_s == 120
    assert seen[1] == command.EvolveConfig(seen[1].machine, seen[1].suite, seen[1].task, seen[1].executor,
                                           reflect_model=seen[1].reflect_model, output=seen[1].output)


def test_the_search_flags_map_onto_every_field_of_the_options_record() -> None:
    from skillc.improve.evolve import command

    flags = {"budget": 2, "children": 4, "rounds": 2, "c_puct": 0.7, "beta": 2.5, "fpu_reduction": 0.25,
             "repair_rounds": 5, "max_cases": 7, "case_timeout_s": 9.5, "verifier": False, "greedy": True,
             "stop_on_success": False}
    config = command.EvolveConfig.from_flags(machine="m.skm", suite="s.toml", gate=False, **flags)
    assert config.options == command.EvolveOptions(2.5, 4, 0.7, 0.25, 2, 2, 5, 7, 9.5, "greedy", False, False)
    assert (config.machine, config.suite, config.gate) == ("m.skm", "s.toml", False)
    with pytest.raises(TypeError):  # a flag that is neither an option nor a field of the config is a bug
        command.EvolveConfig.from_flags(machine="m.skm", suite="s.toml", budgett=3)


def test_an_output_folder_that_cannot_be_made_is_skm901_with_a_hint(setup: tuple[Path, Path], tmp_path: Path) -> None:
    (tmp_path / "afile").write_text("", encoding="utf-8")
    for out, message in ((tmp_path / "afile", "is not a folder"), (tmp_path / "afile" / "x", "cannot create")):
        result = _evolve(*setup, out)
        assert result.exit_code == 2, result.output
        assert "error[SKM901]" in result.output and message in result.output and "choose another -o" in result.output
    assert (tmp_path / "afile").read_text(encoding="utf-8") == ""


def test_a_missing_task_and_a_runtime_reply_file_as_a_role_get_their_own_hints(setup: tuple[Path, Path],
                                                                               tmp_path: Path) -> None:
    machine, roles = setup
    result = _evolve(machine, roles, tmp_path / "t", "--task", "t9")
    assert result.exit_code == 2 and "help: give --task ID with one of the suite's task ids" in result.output
    args = [str(machine), "--suite", SUITE, "--task", "t1", "--executor", EXECUTOR, "-o", str(tmp_path / "r")]
    result = CliRunner().invoke(main, ["evolve", *args], catch_exceptions=False)
    assert result.exit_code == 2 and "error[SKM841]: --reflect-model (default: the --executor spec)" in result.output
    assert "a runtime scripted: reply file is no role script" in result.output and not (tmp_path / "r").exists()


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


def _archived_root(tmp_path: Path) -> Path:
    """The root after `skillc refine` accepted two real runs (the fix's success, the root's failure) into its
    archive."""
    from skillc.bench.suite import load_suite
    from skillc.improve.evolve.runner import BenchRunner
    from skillc.improve.evolve.state import Node

    loaded = load_suite(SUITE)
    assert loaded.suite is not None
    runs = BenchRunner(loaded.suite, loaded.suite.tasks[0], EXECUTOR, tmp_path / "dev")
    traces = [str(runs.execute(Node(i, text)).trace) for i, text in enumerate((GOOD, WRONG_FORMAT))]
    machine = tmp_path / "root.skm"
    machine.write_text(WRONG_FORMAT, encoding="utf-8")
    refined = CliRunner().invoke(main, ["refine", str(machine), *traces], catch_exceptions=False)
    assert refined.exit_code == 0 and "2 accepted, 0 realigned, 0 dropped" in refined.output, refined.output
    return machine


def test_the_gate_replays_the_traces_a_real_refine_archive_accepted(setup: tuple[Path, Path], tmp_path: Path) -> None:
    machine = _archived_root(tmp_path)
    root = machine.read_text(encoding="utf-8")  # refine's text: the failed run's terminal added
    assert "terminal failed_end: failed" in root and (tmp_path / "root.archive" / "manifest.json").is_file()
    fixed = root.replace("printf 'answer: %s", "printf '%s")
    # checks clean, but the accepted successful run read back "42\n", which this guard no longer takes
    strict = fixed.replace('when readback == answer ++ "\\n"', "when readback == answer")
    assert len({root, fixed, strict}) == 3
    roles = _roles()
    roles["reflect"]["root"][0]["children"] = [
        {"name": "A", "rank": 1, "machine": root.replace("> answer.txt", "> result.txt")},
        {"name": "S", "rank": 2, "machine": strict}, {"name": "B", "rank": 3, "machine": fixed}]
    script = tmp_path / "archive-roles.json"
    script.write_text(json.dumps(roles), encoding="utf-8")
    result = _evolve(machine, script, tmp_path / "ar", "--json")
    found = json.loads(result.output)
    assert result.exit_code == 0 and found["best"]["name"] == "B", result.output
    assert found["executions"] == 2 and found["saved"] == 1 and found["refused"] == 1
    refused = [line for line in found["trajectory"] if line.startswith("refused")]
    assert len(refused) == 1 and refused[0].startswith("refused S: no longer replays accepted trace "), refused
    assert refused[0].endswith(" (a success run): the trace's outcome is success, the machine ended in `failed_end` "
                               "(failed); the candidate's path: solve → note → write → read_back → failed_end")
    assert [line.split(":")[0] for line in found["trajectory"] if line.startswith("run")] == [
        "run root", "run A", "run B"]
    report = (tmp_path / "ar" / "report.md").read_text(encoding="utf-8")
    assert refused[0].removeprefix("refused S: ") in report
    assert machine.read_text(encoding="utf-8") == root  # the archive gates; evolving writes nothing beside it


def test_the_default_folder_is_relative_to_the_current_one(setup: tuple[Path, Path], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    _machine, _roles_file = setup
    monkeypatch.chdir(tmp_path)
    args = ["evolve", "root.skm", "--suite", SUITE, "--task", "t1", "--executor", EXECUTOR,
            "--reflect-model", "scripted:roles.json"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = Path(".skillc") / "evolve" / "root"
    assert (tmp_path / out / "evolved.skm").read_text(encoding="utf-8") == GOOD
    assert f"machine: {out / 'evolved.skm'}" in result.output and (tmp_path / out / "runs" / "versions").is_dir()


def slow_evolve(tmp_path: Path) -> tuple[list[str], Path, Path]:
    """An evolve whose second child sleeps in a tool call once it started: its args, output folder and mark."""
    machine, roles, started = tmp_path / "root.skm", tmp_path / "roles.json", tmp_path / "started"
    machine.write_text(WRONG_FORMAT, encoding="utf-8")
    slow = GOOD.replace('"cat answer.txt"', f'"touch {started}; sleep 60; cat answer.txt"')
    script = _roles()
    script["reflect"]["root"][0]["children"] = [{"name": "A", "rank": 1, "machine": WRONG_FILE},
                                                {"name": "S", "rank": 2, "machine": slow}]
    roles.write_text(json.dumps(script), encoding="utf-8")
    out = tmp_path / "evolved"
    return (["evolve", str(machine), "--suite", SUITE, "--task", "t1", "--executor", EXECUTOR,
             "--reflect-model", f"scripted:{roles}", "-o", str(out)], out, started)


def test_ctrl_c_mid_search_exits_130_and_writes_what_was_found(tmp_path: Path) -> None:
    """A real SIGINT to the command's process group while a version's tool call sleeps (as a terminal's Ctrl-C)."""
    args, out, started = slow_evolve(tmp_path)
    # SIGINT back to its default: a process started from a non-interactive shell may inherit it ignored
    process = subprocess.Popen([sys.executable, "-m", "skillc", *args], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert started.exists(), process.communicate(timeout=30)
        os.killpg(process.pid, signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)  # well before the sleep would end
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr and "warning[SKM846]" in stderr
    assert "evolve: no rewarded version (interrupted); best version root" in stdout
    tree = json.loads((out / "tree.json").read_text(encoding="utf-8"))
    assert tree["interrupted"] and tree["executions"] == 1
    assert [tree["nodes"][s["node"]]["name"] for s in tree["steps"] if s["kind"] == "run"] == ["root", "A"]
    assert [n["reward"] for n in tree["nodes"]] == [0, 0, None]  # S was cut short: not run, not counted
    assert Path(tree["nodes"][1]["trace"]).is_file() and tree["nodes"][2]["trace"] is None
    assert "(interrupted: the versions run so far)" in (out / "report.md").read_text(encoding="utf-8")
    assert (out / "evolved.skm").read_text(encoding="utf-8") == WRONG_FORMAT and (out / "tree.dot").is_file()


def test_an_evolution_started_beside_another_does_not_share_its_folder(setup: tuple[Path, Path], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.improve.evolve import command

    out = tmp_path / "race"
    real = command._folder_problems

    def racing(folder: Path) -> list[Any]:
        found = real(folder)
        (folder / "runs").mkdir(parents=True)  # the other evolution claims the folder right after the check
        return found

    monkeypatch.setattr(command, "_folder_problems", racing)
    result = _evolve(*setup, out)
    assert result.exit_code == 2 and "already holds an evolution (runs/)" in result.output
    assert sorted(p.name for p in out.iterdir()) == ["runs"] and not any((out / "runs").iterdir())
