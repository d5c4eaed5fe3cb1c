"""The bench runner end to end on scripted executors: the machine beats native by construction, resumption after
SIGKILL, two workers give the same rows as one, crashing cells become rows, bad flags and suites are diagnostics."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

from skillc.bench import runner
from skillc.bench.backends import Backend, BackendError, LocalBackend
from skillc.bench.cells import cell_paths
from skillc.bench.results import Row, read_results
from skillc.bench.runner import BenchConfig, CellJob, make_backend, run_bench, run_cell
from skillc.bench.suite import load_suite
from skillc.cli import main

FIXTURE = Path(__file__).parent / "fixtures" / "beats"
SCRIPT = f"scripted:{FIXTURE / 'script.json'}"
SKILLC = [sys.executable, "-m", "skillc"]


def _bench(*args: str) -> tuple[int, str]:
    """`skillc bench ARGS` in this process: the exit code and everything printed."""
    result = CliRunner().invoke(main, ["bench", *args])
    return result.exit_code, result.output


def _rows(out: Path) -> list[Row]:
    """The rows of a bench's results file, in matrix order."""
    results = read_results(out / "results.jsonl")
    assert results.diagnostics == () and not results.torn
    return sorted(results.rows, key=lambda r: r.cell)


def test_machine_beats_native_by_construction(tmp_path: Path) -> None:
    """The machine writes and reads back answer.txt; native skips it: the rows, the report and McNemar show it."""
    out = tmp_path / "out"
    code, text = _bench(str(FIXTURE / "suite.toml"), "--modes", "machine,native", "--executor", SCRIPT,
                        "-o", str(out), "--quiet")
    assert code == 0, text
    rows = _rows(out)
    assert len(rows) == 8
    machine = [r for r in rows if r.cell.mode == "machine"]
    native = [r for r in rows if r.cell.mode == "native"]
    assert [(r.success, r.rfc, r.outcome, r.error) for r in machine] == [(True, True, "success", None)] * 4
    # Native declared success, but the verifier found no answer.txt; the suite's two requirements and the
    # machine's two rules (`required write`, `required read_back`: rule-1, rule-2) are violated.
    assert [(r.success, r.rfc, r.outcome, r.violated) for r in native] == \
        [(False, False, "success", ("answer", "read-back", "rule-1", "rule-2"))] * 4
    assert all((out / r.trace).is_file() for r in rows if r.trace)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| machine | native | 4 | 4 | 0 | 4 | 0 | 0.125 | 0.0625 | +100.0 pp" in report
    assert "<img" in (out / "report.html").read_text(encoding="utf-8")
    assert "machine vs native" in text and "only machine succeeded 4, only native 0" in text
    assert f"results: {out / 'results.jsonl'}" in text


def test_json_summary(tmp_path: Path) -> None:
    """`--json` prints one object with the groups and comparisons (no NaN, which JSON lacks)."""
    code, text = _bench(str(FIXTURE / "suite.toml"), "--modes", "machine,prompt-only", "--executor", SCRIPT,
                        "-o", str(tmp_path / "out"), "--json")
    assert code == 0, text
    summary = json.loads(text)
    assert (summary["cells"], summary["ran"], summary["resumed"]) == (8, 8, 0)
    groups = {g["mode"]: g for g in summary["groups"]}
    assert groups["machine"]["compliant"] == 4 and groups["prompt-only"]["compliant"] == 0  # it never reads back
    assert groups["prompt-only"]["successes"] == 4


def test_second_run_resumes_and_runs_nothing(tmp_path: Path) -> None:
    """A finished bench run again runs no cell and reports the same rows; more repeats run only the new cells."""
    config = BenchConfig(str(FIXTURE / "suite.toml"), modes=("machine",), executors=(SCRIPT,), output=str(tmp_path))
    first = run_bench(config)
    assert (first.cells, first.ran, first.resumed) == (4, 4, 0)
    again = run_bench(config)
    assert (again.cells, again.ran, again.resumed) == (4, 0, 4)
    more = run_bench(attrs.evolve(config, repeats=2))
    assert (more.cells, more.ran, more.resumed) == (8, 4, 4)
    assert len(_rows(tmp_path)) == 8


def test_resumption_after_sigkill(tmp_path: Path) -> None:
    """A bench killed mid-run resumes: every cell ends with exactly one row, and no finished cell ran again."""
    out, log = tmp_path / "out", tmp_path / "marks.log"
    args = [*SKILLC, "bench", str(FIXTURE / "suite.toml"), "--modes", "machine,native", "--repeats", "2",
            "--executor", SCRIPT, "-o", str(out), "--quiet"]
    gate = tmp_path / "go"
    # marks.py logs outside the cells' work folders, which a boxed tool may not write: it runs in-process here
    env = {**os.environ, "SKILLC_BENCH_TEST_LOG": str(log), "SKILLC_BENCH_TEST_HOLD": "3",
           "SKILLC_BENCH_TEST_GATE": str(gate), "SKILLC_CONFINE_TOOLS": "0"}
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (_line_count(out / "results.jsonl") >= 3 and _line_count(log) > 3):  # the 4th cell is running
            assert proc.poll() is None and time.monotonic() < deadline, f"the bench ended or stalled ({proc.poll()})"
            time.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    before = read_results(out / "results.jsonl").rows
    assert len(before) == 3, "the bench should have been killed in its 4th cell"
    gate.touch()
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    keys = [json.dumps([x["task"], x["mode"], x["executor"], x["repeat"]]) for x in lines]
    assert len(keys) == len(set(keys)) == 16  # every cell once
    calls = [Path(x).resolve() for x in log.read_text(encoding="utf-8").splitlines()]
    for row in before:  # a cell finished before the kill ran exactly once
        assert calls.count(cell_paths(out, row.cell).workdir.resolve()) == 1
    assert f"{len(before)} done before" in done.stdout


@pytest.mark.parametrize("workers", [1, 2])
def test_sigint_keeps_the_rows_and_resumes(tmp_path: Path, workers: int) -> None:
    """Ctrl-C (a real SIGINT) stops the bench between rows: SKM723, exit 130, whole rows, no report; a rerun
    runs only the cells without a row."""
    out = tmp_path / "out"
    args = [*SKILLC, "bench", str(FIXTURE / "suite.toml"), "--modes", "machine,native", "--repeats", "2",
            "--workers", str(workers), "--executor", SCRIPT, "-o", str(out), "--quiet"]
    env = {**os.environ, "SKILLC_BENCH_TEST_DELAY": "0.5"}
    # SIGINT back to its default in the child: a shell starts background jobs with it ignored.
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and _line_count(out / "results.jsonl") < 2 and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "SKM723" in stderr and "Traceback" not in stderr and "Aborted" not in stderr
    results = read_results(out / "results.jsonl")
    assert results.diagnostics == () and not results.torn and 2 <= len(results.rows) < 16
    assert not (out / "report.md").exists() and f"{len(results.rows)} run now" in stdout
    done = subprocess.run(args, env={**env, "SKILLC_BENCH_TEST_DELAY": "0"}, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"{16 - len(results.rows)} run now, {len(results.rows)} done before" in done.stdout
    assert len(_rows(out)) == 16


def test_an_interrupt_before_the_cells_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C while the machine is checked: SKM723, exit 130, no summary and no results file."""
    def interrupted(*args: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_plan", interrupted)
    code, text = _bench(str(FIXTURE / "suite.toml"), "--executor", SCRIPT, "-o", str(tmp_path / "out"), "--quiet")
    assert code == 130 and "SKM723" in text and "bench beats:" not in text
    assert not (tmp_path / "out" / "results.jsonl").exists()


def _line_count(path: Path) -> int:
    """Complete lines in a file that may not exist yet."""
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def test_two_workers_give_the_same_rows(tmp_path: Path) -> None:
    """A process pool of two gives the rows one in-process worker gives (all but latency)."""
    def rows(workers: int) -> list[Row]:
        out = tmp_path / f"w{workers}"
        outcome = run_bench(BenchConfig(str(FIXTURE / "suite.toml"), executors=(SCRIPT,), repeats=2,
                                        workers=workers, output=str(out)))
        assert outcome.diagnostics == () and outcome.ran == 24
        return [attrs.evolve(r, latency_s=0.0) for r in _rows(out)]

    assert rows(2) == rows(1)


def test_scripts_restart_for_every_cell(tmp_path: Path) -> None:
    """A scripted executor starts its script from the top in every cell (a second answer is never reached)."""
    script = json.loads((FIXTURE / "script.json").read_text(encoding="utf-8"))
    script["outputs"]["solve"] = [{"answer": "42"}, {"answer": "wrong"}]
    (tmp_path / "script.json").write_text(json.dumps(script), encoding="utf-8")
    outcome = run_bench(BenchConfig(str(FIXTURE / "suite.toml"), modes=("machine",), repeats=3,
                                    executors=(f"scripted:{tmp_path / 'script.json'}",), output=str(tmp_path / "o")))
    assert [r.success for r in outcome.rows] == [True] * 12


def test_task_placeholder_picks_a_script_per_task(tmp_path: Path) -> None:
    """`{task}` in the spec names each task's own script; the row keeps the spec as written."""
    script = json.loads((FIXTURE / "script.json").read_text(encoding="utf-8"))
    for task in ("t1", "t2", "t3", "t4"):
        script["outputs"]["solve"] = [{"answer": "42" if task != "t3" else "41"}]
        (tmp_path / f"{task}.json").write_text(json.dumps(script), encoding="utf-8")
    spec = f"scripted:{tmp_path}/{{task}}.json"
    outcome = run_bench(BenchConfig(str(FIXTURE / "suite.toml"), modes=("machine",), executors=(spec,),
                                    output=str(tmp_path / "o")))
    assert {r.cell.task: r.success for r in outcome.rows} == {"t1": True, "t2": True, "t3": False, "t4": True}
    assert {r.cell.executor for r in outcome.rows} == {spec}


def _job(tmp_path: Path, spec: str = SCRIPT, mode: str = "machine") -> CellJob:
    """The job of cell t1 × mode × spec of the fixture suite, writing under tmp_path."""
    from skillc.runtime.interpreter import machine_hash

    suite = load_suite(FIXTURE / "suite.toml").suite
    assert suite is not None and suite.machine is not None
    digest = machine_hash(suite.machine.read_text(encoding="utf-8"))
    return CellJob(runner.Cell("t1", mode, spec, 0), spec, tmp_path, suite.machine, digest, suite.skill,
                   suite.tasks[0], suite.requirements, tools=suite.tools)


def test_an_executor_that_cannot_answer_is_an_error_row(tmp_path: Path) -> None:
    """A script without an answer for the model state: the cell ends failed, its row says why."""
    (tmp_path / "empty.json").write_text('{"outputs": {}}', encoding="utf-8")
    row = run_cell(_job(tmp_path, f"scripted:{tmp_path / 'empty.json'}"))
    assert (row.success, row.outcome) == (False, "failed")
    assert row.error is not None and "no answer for state `solve`" in row.error


def test_an_executor_that_cannot_be_made_is_an_error_row(tmp_path: Path) -> None:
    """A script file that is gone by the time the cell runs: a row with the error, no verdicts."""
    row = run_cell(_job(tmp_path, f"scripted:{tmp_path / 'gone.json'}"))
    assert (row.success, row.rfc, row.outcome) == (None, None, "unfinished")
    assert row.error is not None and row.error.startswith(f"executor scripted:{tmp_path / 'gone.json'}")


def test_a_bug_becomes_an_error_row_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An exception the harness did not expect is kept in the row (type and message), not raised or hidden."""
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("scoring exploded")

    monkeypatch.setattr("skillc.bench.runner.score_run", broken)
    row = run_cell(_job(tmp_path))
    assert row.error == "internal error: RuntimeError: scoring exploded"
    assert row.success is None


def test_a_machine_changed_after_the_check_is_refused(tmp_path: Path) -> None:
    """A worker never runs a machine other than the one the bench checked."""
    job = attrs.evolve(_job(tmp_path), machine_hash="0" * 16)
    row = run_cell(job)
    assert row.error is not None and "changed since the bench checked it" in row.error


def test_report_only_rebuilds_the_report(tmp_path: Path) -> None:
    """`--report-only -o DIR` writes the report from the results file and runs nothing."""
    out = tmp_path / "out"
    assert _bench(str(FIXTURE / "suite.toml"), "--modes", "machine", "--executor", SCRIPT, "-o", str(out),
                  "-q")[0] == 0
    (out / "report.md").unlink()
    shutil.rmtree(out / "cells")
    code, text = _bench("--report-only", "-o", str(out))
    assert code == 0, text
    assert "4 cells, 0 run now, 4 done before" in text  # every row is an earlier run's
    assert "| machine |" in (out / "report.md").read_text(encoding="utf-8")
    assert not (out / "cells").exists()


@pytest.mark.parametrize(("args", "code"), [
    (["--modes", "machine,natve"], "SKM730"),
    (["--modes", ""], "SKM730"),
    (["--executor", "bogus:x"], "SKM731"),
    (["--executor", "scripted:/no/such/script.json"], "SKM731"),
    (["--repeats", "0"], "SKM732"),
    (["--workers", "0"], "SKM732"),
    (["--tool-timeout", "nan"], "SKM732"),
    (["--model-timeout", "inf"], "SKM732"),
    (["--backend", "slurm"], "SKM735"),
])
def test_bad_flags_are_coded_diagnostics(tmp_path: Path, args: list[str], code: str) -> None:
    """A bad flag: exit 2, its code, no traceback, nothing written."""
    executor = [] if "--executor" in args else ["--executor", SCRIPT]
    status, text = _bench(str(FIXTURE / "suite.toml"), *executor, *args, "-o", str(tmp_path / "out"))
    assert status == 2, text
    assert code in text and "Traceback" not in text
    assert not (tmp_path / "out").exists()


def test_no_executor_is_a_coded_diagnostic(tmp_path: Path) -> None:
    """Without --executor nothing can run."""
    status, text = _bench(str(FIXTURE / "suite.toml"), "-o", str(tmp_path / "out"))
    assert (status, "SKM731" in text) == (2, True)


def test_a_bad_suite_is_diagnosed_at_its_line(tmp_path: Path) -> None:
    """A suite with a typo: exit 2, the suite's own code at file:line, no traceback."""
    suite = tmp_path / "suite.toml"
    suite.write_text((FIXTURE / "suite.toml").read_text(encoding="utf-8").replace("machine = ", "machnie = ")
                     .replace('"beats.skm"', f'"{FIXTURE / "beats.skm"}"')
                     .replace('"SKILL.md"', f'"{FIXTURE / "SKILL.md"}"')
                     .replace('"marks.py"', f'"{FIXTURE / "marks.py"}"'), encoding="utf-8")
    status, text = _bench(str(suite), "--executor", SCRIPT, "-o", str(tmp_path / "out"))
    assert status == 2, text
    assert "SKM701" in text and re.search(r"suite\.toml:\d+:\d+", text) and "Traceback" not in text


def test_a_missing_suite_is_a_diagnostic(tmp_path: Path) -> None:
    """A suite file that does not exist: exit 2 with a diagnostic."""
    status, text = _bench(str(tmp_path / "nope.toml"), "--executor", SCRIPT)
    assert status == 2 and "error[" in text and "Traceback" not in text


def test_an_unchecked_machine_is_refused(tmp_path: Path) -> None:
    """A machine that fails `skillc check` never runs: exit 1 with its findings."""
    for name in ("SKILL.md", "marks.py", "script.json", "suite.toml"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    text = (FIXTURE / "beats.skm").read_text(encoding="utf-8").replace("-> note\n", "-> nowhere\n")
    (tmp_path / "beats.skm").write_text(text, encoding="utf-8")
    status, output = _bench(str(tmp_path / "suite.toml"), "--executor", SCRIPT, "-o", str(tmp_path / "out"))
    assert status == 1, output
    assert "nowhere" in output and not (tmp_path / "out").exists()


def test_the_default_output_folder_is_named_after_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without -o the bench writes into .skillc/bench/<suite name> of the current folder."""
    monkeypatch.chdir(tmp_path)
    assert _bench(str(FIXTURE / "suite.toml"), "--modes", "machine", "--executor", SCRIPT, "-q")[0] == 0
    assert len(_rows(tmp_path / ".skillc" / "bench" / "beats")) == 4


def test_a_missing_per_task_script_is_found_before_anything_runs(tmp_path: Path) -> None:
    """With `{task}`, every task's script is read up front: one missing is SKM731 naming it, and nothing runs."""
    for task in ("t1", "t2", "t4"):
        shutil.copy(FIXTURE / "script.json", tmp_path / f"{task}.json")
    status, text = _bench(str(FIXTURE / "suite.toml"), "--executor", f"scripted:{tmp_path}/{{task}}.json",
                          "-o", str(tmp_path / "out"))
    assert status == 2 and "SKM731" in text and "t3.json" in text
    assert not (tmp_path / "out").exists()


def test_a_dead_worker_keeps_the_rows_and_the_rerun_finishes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker process killed mid-bench: SKM735, exit 4, the rows so far kept; the next run finishes the rest."""
    # marks.py kills the process that calls it: in-process, that is the worker (a boxed call would only fail)
    monkeypatch.setenv("SKILLC_CONFINE_TOOLS", "0")
    suite = tmp_path / "beats"
    shutil.copytree(FIXTURE, suite)
    (suite / "dying").mkdir()
    (suite / "dying" / "die").write_text("", encoding="utf-8")  # marks.py exits its process in this workdir
    with (suite / "suite.toml").open("a", encoding="utf-8") as f:
        f.write('\n[[task]]\nid = "t5"\ninputs = { question = "and now?" }\nworkdir = "dying"\n')
    args = [str(suite / "suite.toml"), "--modes", "machine", "--executor", SCRIPT, "--workers", "2",
            "-o", str(tmp_path / "out"), "-q"]
    status, text = _bench(*args)
    assert status == 4, text
    assert "SKM735" in text and "cells have no row" in text
    kept = read_results(tmp_path / "out" / "results.jsonl").rows
    assert "t5" not in {r.cell.task for r in kept}
    (suite / "dying" / "die").unlink()
    status, text = _bench(*args)
    assert status == 0, text
    assert sorted(r.cell.task for r in _rows(tmp_path / "out")) == ["t1", "t2", "t3", "t4", "t5"]


def test_the_report_lists_modes_in_the_order_asked(tmp_path: Path) -> None:
    """Groups follow --modes (not the order cells happened to finish in)."""
    outcome = run_bench(BenchConfig(str(FIXTURE / "suite.toml"), modes=("prompt-only", "machine"),
                                    executors=(SCRIPT,), workers=2, output=str(tmp_path)))
    assert outcome.report is not None
    assert [s.mode for s in outcome.report.summaries] == ["prompt-only", "machine"]
    assert [(c.first, c.second) for c in outcome.report.comparisons] == [("prompt-only", "machine")]


def test_a_changed_bench_is_refused(tmp_path: Path) -> None:
    """Rows of one step budget (or machine) are never mixed with another's: SKM737, nothing runs."""
    args = [str(FIXTURE / "suite.toml"), "--modes", "machine", "--executor", SCRIPT, "-o", str(tmp_path), "-q"]
    assert _bench(*args)[0] == 0
    status, text = _bench(*args, "--max-steps", "7")
    assert status == 2 and "SKM737" in text and "limits" in text
    assert len(_rows(tmp_path)) == 4
    manifest = json.loads((tmp_path / "bench.json").read_text(encoding="utf-8"))
    assert manifest["limits"]["max_steps"] == 100
    assert _bench(*args, "--modes", "native")[0] == 0  # another mode is a new cell, not a change


def test_progress_is_told_the_total_the_done_and_every_row(tmp_path: Path) -> None:
    """The progress callback starts at the cells already done and sees each new row once, after it is written."""
    import contextlib
    from collections.abc import Callable, Iterator

    seen: list[tuple[int, int]] = []
    rows: list[str] = []

    @contextlib.contextmanager
    def progress(total: int, done: int) -> Iterator[Callable[[Row], None]]:
        seen.append((total, done))
        yield lambda row: rows.append(row.cell.key)

    config = BenchConfig(str(FIXTURE / "suite.toml"), modes=("machine",), executors=(SCRIPT,), output=str(tmp_path))
    run_bench(config, progress=progress)
    run_bench(attrs.evolve(config, repeats=2), progress=progress)
    assert seen == [(4, 0), (8, 4)]
    assert len(rows) == len(set(rows)) == 8
    assert set(rows) == {r.cell.key for r in _rows(tmp_path)}


def test_without_matplotlib_the_rows_are_kept_and_the_report_explained(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing `bench` extra: every row is written, the report's absence is a diagnostic with the fix, exit 2."""
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib…` now fails
    status, text = _bench(str(FIXTURE / "suite.toml"), "--modes", "machine", "--executor", SCRIPT,
                          "-o", str(tmp_path), "-q")
    assert status == 2 and "skillc[bench]" in text and "--report-only" in text and "Traceback" not in text
    assert len(_rows(tmp_path)) == 4 and not (tmp_path / "report.html").exists()
    monkeypatch.undo()  # the real matplotlib back
    assert _bench("--report-only", "-o", str(tmp_path))[0] == 0
    assert (tmp_path / "report.html").is_file()


def test_a_misspelt_mode_gets_a_did_you_mean(tmp_path: Path) -> None:
    """`--modes machin` names the mode it was probably meant to be; nothing is written."""
    out = tmp_path / "out"
    outcome = run_bench(BenchConfig(str(FIXTURE / "suite.toml"), modes=("machin",), executors=(SCRIPT,),
                                    output=str(out)))
    assert [(str(d.code), d.hint) for d in outcome.diagnostics] == [("SKM730", "did you mean `machine`?")]
    assert not out.exists()


def test_make_backend() -> None:
    """`local` is the process pool; an unknown name is a BackendError naming the backends."""
    backend: Backend = make_backend("local", 3)
    assert isinstance(backend, LocalBackend) and backend.workers == 3
    with pytest.raises(BackendError, match="local, ray"):
        make_backend("slurm")


def test_ray_without_its_module_is_a_backend_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """When skillc.bench.ray_backend cannot be imported, `ray` is a BackendError with the install hint."""
    monkeypatch.setitem(sys.modules, "skillc.bench.ray_backend", None)  # makes the import fail
    with pytest.raises(BackendError, match="skillc\\[bench\\]"):
        make_backend("ray", 1, None)
