"""Issue #34, the bench's part: inputs that were internal errors (SKM900) or wrong words, outputs that followed a
link out of their folder, and a suite loader that was quadratic in its tasks."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from skillc.bench.cells import cell_paths, fresh_workdir
from skillc.bench.results import Cell, open_writer
from skillc.bench.suite import TomlLocator, load_suite
from skillc.diagnostics import Diagnostic, SourceFile
from tests.bench.helpers import FIXTURE, bench_cli, copy_beats


@pytest.fixture
def beats(tmp_path: Path) -> Path:
    return copy_beats(tmp_path)


def test_a_suite_that_is_a_symlink_loop(tmp_path: Path) -> None:
    (tmp_path / "loop.toml").symlink_to("loop.toml")
    code, text = bench_cli(str(tmp_path / "loop.toml"), "--executor", "scripted:x.json")
    assert code == 2 and "SKM901" in text and "symlink loop" in text and "SKM900" not in text


def test_a_fixture_path_that_is_a_symlink_loop(beats: Path) -> None:
    (beats / "loop").symlink_to("loop")
    text = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        'id = "t1"', 'id = "t1"\nworkdir = "loop"')
    (beats / "s.toml").write_text(text, encoding="utf-8")
    found = load_suite(beats / "s.toml").diagnostics
    assert [(str(d.code), "symlink loop" in d.message) for d in found] == [("SKM704", True)]


def test_a_results_file_that_is_a_fifo(beats: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    os.mkfifo(out / "results.jsonl")
    code, text = bench_cli(str(beats / "suite.toml"), "--executor", f"scripted:{beats / 'script.json'}", "-o", str(out))
    assert code == 2 and "SKM901" in text and "it is a FIFO" in text and "SKM900" not in text


def test_a_task_line_with_a_lone_surrogate(beats: Path) -> None:
    (beats / "t.jsonl").write_text('{"id": "x\\ud800", "inputs": {"question": "q"}}\n', encoding="utf-8")
    (beats / "s.toml").write_text('[suite]\nskill = "SKILL.md"\nmachine = "beats.skm"\ntasks = "t.jsonl"\n\n'
                                  '[verify]\nfile = "a"\n', encoding="utf-8")
    found = load_suite(beats / "s.toml").diagnostics
    assert [str(d.code) for d in found] == ["SKM705"]
    assert "lone surrogate" in found[0].message and "\\ud800" in found[0].message and "YAML" not in found[0].message
    code, text = bench_cli(str(beats / "s.toml"), "--executor", f"scripted:{beats / 'script.json'}")
    assert code == 2 and "SKM900" not in text


def test_a_suite_nested_deeply(beats: Path) -> None:
    (beats / "deep.toml").write_text('[suite]\nskill = "SKILL.md"\n[suite.inputs]\nq = ' + "[" * 5000 + "]" * 5000
                                     + "\n", encoding="utf-8")
    found = load_suite(beats / "deep.toml").diagnostics
    assert [str(d.code) for d in found] == ["SKM700"] and "nested more than" in found[0].message


def test_an_output_folder_that_is_a_device(beats: Path) -> None:
    code, text = bench_cli(str(beats / "suite.toml"), "--executor", f"scripted:{beats / 'script.json'}",
                           "-o", "/dev/full")
    assert code == 2 and "it is a device, not a folder" in text and "File exists" not in text


def test_a_results_file_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "results.jsonl").symlink_to(tmp_path / "victim.txt")
    found = open_writer(out / "results.jsonl")
    assert isinstance(found, Diagnostic) and str(found.code) == "SKM542" and "symlink" in found.message
    assert not (tmp_path / "victim.txt").exists()


def test_a_cells_folder_that_is_a_symlink_is_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "keep.txt").write_text("mine", encoding="utf-8")
    (out / "cells").symlink_to(tmp_path / "elsewhere")
    paths = cell_paths(out, Cell("keep.txt", "machine", "scripted", 0))
    found = fresh_workdir(out, paths, None)
    assert found is not None and str(found.code) == "SKM542"
    assert [p.name for p in (tmp_path / "elsewhere").iterdir()] == ["keep.txt"]


def _locate_all(count: int) -> float:
    """Seconds per task to locate every task's id in a suite of `count` inline tasks."""
    text = '[suite]\nskill = "SKILL.md"\n\n' + "".join(f'[[task]]\nid = "t{i}"\n\n' for i in range(count))
    locator = TomlLocator(SourceFile.from_text("s.toml", text))
    started = time.perf_counter()
    for i in range(count):
        locator.span(("task", i, "id"))
    return (time.perf_counter() - started) / count


def test_locating_tasks_is_linear() -> None:
    """Locating one task's key cost time proportional to the number of tables (12,000 inline tasks: 28 s of
    CPU); now it does not grow with them. Measured as a ratio, so a slow machine does not fail it."""
    small, large = min(_locate_all(500) for _ in range(3)), min(_locate_all(8000) for _ in range(3))
    assert large < 4 * small, (small, large)


def _bench_processes(parent: int) -> list[int]:
    """The live processes told they belong to the bench `parent` (its pool's fork server, workers and their
    children carry SKILLC_BENCH_PARENT=parent), zombies left out."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            state = (entry / "stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if f"SKILLC_BENCH_PARENT={parent}".encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_a_killed_bench_takes_its_pool_with_it(beats: Path, tmp_path: Path) -> None:
    """`bench --workers 2` killed with SIGKILL: its fork server and workers die with it (they were left running,
    holding the caller's stdout). The cells' setups signal that the workers are busy."""
    import signal
    import subprocess
    import sys

    suite = (beats / "suite.toml").read_text(encoding="utf-8").replace(
        'tools = ["marks.py"]', 'tools = ["marks.py"]\nsetup = "touch \\"$SKILLC_SUITE_DIR/ready.$SKILLC_TASK_ID\\"; '
        'exec sleep 30"\nsetup_timeout = 60')
    (beats / "slow.toml").write_text(suite, encoding="utf-8")
    bench = subprocess.Popen([sys.executable, "-m", "skillc", "bench", str(beats / "slow.toml"), "--modes", "machine",
                              "--executor", f"scripted:{beats / 'script.json'}", "--workers", "2", "-q",
                              "-o", str(tmp_path / "out")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(list(beats.glob("ready.*"))) < 2 and time.monotonic() < deadline and bench.poll() is None:
            time.sleep(0.1)
        assert len(list(beats.glob("ready.*"))) == 2, "the workers never started their cells"
        before = _bench_processes(bench.pid)
        assert len(before) >= 3  # the fork server and two workers (and the setups' sleeps)
        bench.kill()
        bench.wait(timeout=10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            left = [p for p in _bench_processes(bench.pid)
                    if b"forkserver" in Path(f"/proc/{p}/cmdline").read_bytes()]
            if not left:
                break
            time.sleep(0.1)
        assert left == [], "the pool outlived the bench"
    finally:
        for pid in _bench_processes(bench.pid):  # the setups' sleeps (not the bench's to end: they are ours)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_the_pool_starts_with_stop_signals_held() -> None:
    """A SIGINT that arrives while the pool starts its worker processes is handled once they are up, never in the
    middle of starting one (a worker half started when the bench exits printed a traceback on its stderr)."""
    import signal

    from skillc.bench.backends import _stops_deferred

    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    try:
        with _stops_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            assert seen == []  # held
        deadline = time.monotonic() + 5
        while not seen and time.monotonic() < deadline:
            time.sleep(0.01)
        assert seen == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_worker_whose_pool_is_gone_exits_quietly(capsys: pytest.CaptureFixture[str]) -> None:
    """The fork server's excepthook drops the FileNotFoundError a worker gets when the bench removed its pool's
    semaphores before the worker read them; any other error is printed as usual."""
    from skillc.bench.orphans import _quiet_when_pool_gone

    def raised(filename: str, error: str) -> tuple[type[BaseException], BaseException, object]:
        try:
            exec(compile(f"raise {error}", filename, "exec"))
        except BaseException as exc:  # noqa: BLE001 - captured for the hook
            return type(exc), exc, exc.__traceback__
        raise AssertionError("not raised")

    _quiet_when_pool_gone(*raised("/usr/lib/python3.11/multiprocessing/synchronize.py",
                                  "FileNotFoundError(2, 'No such file or directory')"))  # type: ignore[arg-type]
    assert capsys.readouterr().err == ""
    _quiet_when_pool_gone(*raised("/work/cell.py", "ValueError('a real problem')"))  # type: ignore[arg-type]
    assert "ValueError: a real problem" in capsys.readouterr().err


def test_finalizers_are_quiet_after_an_interrupt(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """An interrupt while the machine is checked can cut a Z3 context short; its finalizer then failed with a
    traceback ("Exception ignored in: Context.__del__") as the bench exited. After an interrupt the bench drops
    such reports."""
    import sys

    from skillc.bench import runner

    monkeypatch.setattr(sys, "unraisablehook", sys.unraisablehook)  # put back after the test

    def interrupted(path: object) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "load_suite", interrupted)
    outcome = runner.run_bench(runner.BenchConfig(suite=str(FIXTURE / "suite.toml"), executors=("scripted:x",)))
    assert outcome.interrupted

    class Half:
        def __del__(self) -> None:
            raise AttributeError("'Context' object has no attribute 'owner'")

    Half()  # collected at once: its finalizer's error goes to sys.unraisablehook
    assert "Exception ignored" not in capsys.readouterr().err


@pytest.mark.parametrize("where", ["outside", "absolute", "link"])
def test_a_suite_runs_no_module_and_copies_no_fixture_from_outside_its_root(tmp_path: Path, beats: Path,
                                                                           where: str) -> None:
    """A tools module or fixture folder outside the suite's root (no project marker here: the suite's folder)
    is SKM745 at load, before any cell: `../evil.py`, an absolute path, or a link out of the folder."""
    (tmp_path / "evil.py").write_text("def stamp() -> str:\n    return 'ran'\n", encoding="utf-8")
    (tmp_path / "secrets").mkdir()
    target = {"outside": "../evil.py", "absolute": str(tmp_path / "evil.py"), "link": "linked.py"}[where]
    if where == "link":
        (beats / "linked.py").symlink_to(tmp_path / "evil.py")
    suite = beats / "suite.toml"
    text = suite.read_text(encoding="utf-8").replace('tools = ["marks.py"]', f'tools = ["marks.py", "{target}"]')
    suite.write_text(text + '\n[[task]]\nid = "t3"\nworkdir = "../secrets"\ninputs = { question = "q?" }\n',
                     encoding="utf-8")
    result = load_suite(suite)
    found = [d for d in result.diagnostics if str(d.code) == "SKM745"]
    assert result.suite is None and len(found) == 2, [d.message for d in result.diagnostics]
    assert "outside the suite's root" in found[0].message


def test_a_suite_inside_a_project_may_use_the_project_s_code(tmp_path: Path) -> None:
    """With a project marker above it, the root is the project: `../tools.py` next to the suite's folder is fine."""
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project / "bench")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    shutil.move(str(project / "bench" / "marks.py"), str(project / "marks.py"))
    suite = project / "bench" / "suite.toml"
    suite.write_text(suite.read_text(encoding="utf-8").replace('"marks.py"', '"../marks.py"'), encoding="utf-8")
    result = load_suite(suite)
    assert result.suite is not None, [d.message for d in result.diagnostics]
