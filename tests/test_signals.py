"""SIGTERM stops the long commands as Ctrl-C does (files whole, resumable) with exit 143; Ctrl-C during start-up
exits 130 quietly; a second signal while the first is handled cuts nothing short.

Every child runs `python -m skillc` for real, with SIGINT and SIGTERM put back to their defaults (CI may start the
suite with them ignored), and every wait is bounded.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from skillc import console
from skillc.bench.results import read_results
from tests.improve.evolve.test_cli import WRONG_FORMAT, slow_evolve

SKILLC = [sys.executable, "-m", "skillc"]
BEATS = Path(__file__).parent / "bench" / "fixtures" / "beats"
SCRIPT = f"scripted:{BEATS / 'script.json'}"


def _defaults() -> None:
    """In the child: SIGINT and SIGTERM as a fresh process has them (a background job inherits SIGINT ignored)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _start(args: list[str], **kwargs: object) -> subprocess.Popen[str]:
    """`skillc ARGS` as a child with its outputs piped and the stop signals at their defaults."""
    return subprocess.Popen([*SKILLC, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL, preexec_fn=_defaults, **kwargs)  # type: ignore[call-overload]


def _stop_when(proc: subprocess.Popen[str], ready: Callable[[], bool], *signals: int) -> tuple[str, str]:
    """Wait (at most 60 s) until `ready()`, send the signals to the child, and collect its outputs (at most 60 s)."""
    try:
        deadline = time.monotonic() + 60
        while not ready() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready(), "the child never got to the point where it is stopped"
        for i, number in enumerate(signals):
            proc.send_signal(number)
            if i == 0 and len(signals) > 1:
                # Pending signals are handled lowest number first (SIGINT before SIGTERM): let the first one be
                # taken before the others arrive while the command is writing what it kept.
                time.sleep(0.05)
        return proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_sigterm_stops_a_bench_between_rows_with_143(tmp_path: Path) -> None:
    """SIGTERM mid-bench: SKM723 saying "terminated", exit 143, whole rows, no report; a rerun runs the rest."""
    out = tmp_path / "out"
    args = ["bench", str(BEATS / "suite.toml"), "--modes", "machine,native", "--repeats", "2",
            "--executor", SCRIPT, "-o", str(out), "--quiet"]
    proc = _start(args, env={**os.environ, "SKILLC_BENCH_TEST_DELAY": "0.5"})
    stdout, stderr = _stop_when(proc, lambda: _lines(out / "results.jsonl") >= 2, signal.SIGTERM)
    assert proc.returncode == 143, stderr
    assert "warning[SKM723]: terminated (SIGTERM): " in stderr and "Traceback" not in stderr, stderr
    results = read_results(out / "results.jsonl")
    assert results.diagnostics == () and not results.torn and 2 <= len(results.rows) < 16
    assert not (out / "report.md").exists() and f"{len(results.rows)} run now" in stdout
    done = subprocess.run([*SKILLC, *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert f"{16 - len(results.rows)} run now, {len(results.rows)} done before" in done.stdout


@pytest.mark.parametrize("signals", [(signal.SIGTERM,), (signal.SIGTERM, signal.SIGTERM, signal.SIGINT,
                                                          signal.SIGTERM, signal.SIGINT)],
                         ids=["once", "again-while-stopping"])
def test_sigterm_stops_evolve_and_writes_the_versions_run(tmp_path: Path, signals: tuple[int, ...]) -> None:
    """SIGTERM to the evolve process alone (as `kill` or `timeout` sends it) while a version's tool sleeps: exit 143,
    SKM846 saying "terminated", tree.json / report.md / evolved.skm whole; more signals while it writes change
    nothing."""
    args, out, started = slow_evolve(tmp_path)
    proc = _start(args)
    stdout, stderr = _stop_when(proc, started.exists, *signals)
    assert proc.returncode == 143, stderr
    assert "Traceback" not in stderr and "warning[SKM846]: terminated (SIGTERM) after 1 of" in stderr, stderr
    assert "evolve: no rewarded version (interrupted); best version root" in stdout
    tree = json.loads((out / "tree.json").read_text(encoding="utf-8"))
    assert tree["interrupted"] and tree["executions"] == 1
    assert [n["reward"] for n in tree["nodes"]] == [0, 0, None]  # S was cut short: not run, not counted
    assert (out / "evolved.skm").read_text(encoding="utf-8") == WRONG_FORMAT
    assert "(interrupted: the versions run so far)" in (out / "report.md").read_text(encoding="utf-8")
    assert not [p for p in out.rglob("*") if p.name.startswith(".") and "tmp" in p.name]  # no temp file left


def test_sigterm_stops_a_journaled_run_which_resumes(tmp_path: Path) -> None:
    """SIGTERM while a tool runs: exit 143, the run id named, the journal's run `interrupted` with the steps
    before it committed; `--resume` finishes it from there."""
    started = tmp_path / "started"
    machine = tmp_path / "beats.skm"
    machine.write_text((BEATS / "beats.skm").read_text(encoding="utf-8").replace(
        'call bash(command: "cat answer.txt")',
        f'call bash(command: "if [ ! -e {started} ]; then touch {started}; sleep 60; fi; cat answer.txt")'),
        encoding="utf-8")
    (tmp_path / "SKILL.md").write_text((BEATS / "SKILL.md").read_text(encoding="utf-8"), encoding="utf-8")
    journal = tmp_path / "runs.sqlite"
    common = ["--tools", str(BEATS / "marks.py"), "--journal", str(journal), "--workdir", str(tmp_path)]
    proc = _start(["run", str(machine), "--executor", SCRIPT, "--input", "question=q", *common])
    stdout, stderr = _stop_when(proc, started.exists, signal.SIGTERM)
    assert proc.returncode == 143 and stdout == "", stderr
    assert stderr.startswith("skillc run: terminated; every committed step is kept: `skillc run --resume "), stderr
    run_id = stderr.split("--resume ")[1].split("`")[0]
    with sqlite3.connect(journal) as db:
        assert db.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone() == ("interrupted",)
        assert db.execute("SELECT COUNT(*) FROM steps WHERE run_id = ?", (run_id,)).fetchone() == (3,)
    done = subprocess.run([*SKILLC, "run", "--resume", run_id, "--json", *common], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["outcome"] == "success" and result["run_id"] == run_id and result["steps"] == 4


_SLOW_IMPORT = """
import sys, time
class Slow:
    def find_spec(self, name, path=None, target=None):
        if name == "skillc.cli":
            sys.stderr.write("importing\\n"); sys.stderr.flush(); time.sleep(30)
        return None
sys.meta_path.insert(0, Slow())
sys.argv = ["skillc", "check", "nothing.skm"]
from skillc.__main__ import main
main()
"""


def test_ctrl_c_while_starting_exits_130_quietly(tmp_path: Path) -> None:
    """Ctrl-C while skillc still imports its command line (a slow import, held open by the harness): exit 130 and
    one line, not click's "Aborted!" with 1 nor a traceback."""
    proc = subprocess.Popen([sys.executable, "-c", _SLOW_IMPORT], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL, preexec_fn=_defaults, cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])})
    try:
        assert proc.stderr is not None
        assert proc.stderr.readline() == "importing\n"  # bounded: the harness sleeps 30 s at most
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)
    assert proc.returncode == 130 and stdout == "" and stderr == "skillc: interrupted\n", stderr


def test_the_stop_handlers_are_put_back_and_an_ignored_signal_stays_ignored() -> None:
    """`stop_signals` installs its handler, keeps SIG_IGN, and restores what was there; SIGTERM raises Terminated
    (a KeyboardInterrupt, so every command's interrupt handling stops on it) once, and 143 is its status."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.getsignal(signal.SIGTERM)
    try:
        with console.stop_signals():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is not before[1]
            with pytest.raises(console.Terminated):
                signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGTERM)  # a second one while stopping: ignored
            assert console.stop_status(console.EXIT_INTERRUPTED) == 143 and console.stop_word() == "terminated"
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN and signal.getsignal(signal.SIGTERM) is before[1]
        signal.signal(signal.SIGINT, signal.default_int_handler)
        with console.stop_signals():
            with pytest.raises(KeyboardInterrupt) as caught:
                signal.raise_signal(signal.SIGINT)
            assert not isinstance(caught.value, console.Terminated) and console.stopped_by() == 130
    finally:
        signal.signal(signal.SIGINT, before[0] if before[0] is not None else signal.default_int_handler)


def test_refine_commit_guard_holds_sigterm_until_the_commit_is_whole() -> None:
    """A SIGTERM during refine's commit waits for the commit, then reaches the handler that was there before."""
    from skillc.improve.refine.refine import _whole

    seen: list[str] = []

    def handler(number: int, frame: object) -> None:
        seen.append("handler")
        raise console.Terminated

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        with pytest.raises(console.Terminated), _whole():
            signal.raise_signal(signal.SIGTERM)
            seen.append("commit finished")
        assert seen == ["commit finished", "handler"] and signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_the_ray_backend_keeps_the_command_lines_sigterm_handler() -> None:
    """`ray.init` installs a SIGTERM handler that exits at once; the backend puts the caller's back right after."""
    from skillc.bench.ray_backend import _ProcessState

    def ours(number: int, frame: object) -> None:
        raise console.Terminated

    def rays(number: int, frame: object) -> None:
        raise SystemExit(number)

    previous = signal.signal(signal.SIGTERM, ours)
    try:
        state = _ProcessState.now()
        signal.signal(signal.SIGTERM, rays)  # what ray.init does
        state.keep_sigterm()
        assert signal.getsignal(signal.SIGTERM) is ours
    finally:
        signal.signal(signal.SIGTERM, previous)
