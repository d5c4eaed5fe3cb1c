"""Checkpoint and resume: kill a run with SIGKILL mid-way, resume it, and never repeat a committed tool step."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.conftest import ROOT

MACHINE = """machine slow_loop {
  tool work(n: int) -> (done: int)
  var last: int

  counter i max 6

  start step

  tool step {
    reads i
    call work(n: i)
    writes last = done
    when i < 6 -> step { i += 1 }
    -> finished
  }

  terminal finished: success { requires last }
  fallback
}
"""

# `work(n)` logs its call, then, from call `hold` on, waits for the file `gate` (for at most 30 s, under the tool
# timeout): a run killed while it waits has committed exactly the steps before, however slow the machine is.
TOOLS = """import os, time

def work(n):
    with open({log!r}, "a") as f:
        f.write(f"{{n}}\\n")
    deadline = time.monotonic() + 30
    while n >= {hold} and not os.path.exists({gate!r}) and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep({pause})
    return {{"done": n}}
"""


def wait_for_calls(log: Path, calls: int, proc: subprocess.Popen) -> None:
    """Until `log` holds `calls` tool calls; fails (killing `proc`) if the run ends or 60 s pass first."""
    deadline = time.monotonic() + 60
    while not (log.exists() and len(log.read_text().split()) >= calls):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            _, err = proc.communicate(timeout=30)
            raise AssertionError(f"the run made {len(log.read_text().split()) if log.exists() else 0} of {calls} "
                                 f"tool calls (exit {proc.returncode}): {err!r}")
        time.sleep(0.02)


def test_resume_after_sigkill_never_repeats_a_committed_tool_step(tmp_path: Path) -> None:
    machine = tmp_path / "slow.skm"
    machine.write_text(MACHINE)
    log = tmp_path / "calls.log"
    tools = tmp_path / "slowtools.py"
    gate = tmp_path / "go"
    tools.write_text(TOOLS.format(log=str(log), gate=str(gate), hold=2, pause=0.05))
    script = tmp_path / "none.json"
    script.write_text("{}")
    journal = tmp_path / "runs.sqlite"
    # the tool logs into tmp_path: the run's work folder, the one folder a confined `--tools` function may write
    base = [sys.executable, "-m", "skillc", "run", "--journal", str(journal), "--tools", str(tools),
            "--workdir", str(tmp_path)]
    proc = subprocess.Popen([*base[:3], "run", str(machine), "--executor", f"scripted:{script}",
                             "--journal", str(journal), "--tools", str(tools), "--workdir", str(tmp_path),
                             "--trace", str(tmp_path / "t.jsonl")],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for_calls(log, 3, proc)  # work(2) is running, and waits for the gate
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    db = sqlite3.connect(journal)
    (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    committed = [row[0] for row in db.execute("SELECT step FROM steps WHERE run_id = ? ORDER BY step", (run_id,))]
    db.close()
    assert committed == [0, 1]  # the steps before the one in flight, each committed before the next began

    gate.touch()
    r = subprocess.run([*base, "--resume", run_id], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "outcome: success (terminal `finished`)" in r.stdout
    calls = Counter(int(x) for x in log.read_text().split())
    assert sorted(calls) == list(range(7))
    for n in committed:  # step n called work(n)
        assert calls[n] == 1, (n, calls)
    assert calls[2] == 2 and sum(calls.values()) == 8  # only the step in flight at the kill ran twice
    trace = (tmp_path / "t.jsonl").read_text()
    assert '"skillc.resumed_at_step"' in trace and '"type": "footer"' in trace

    again = subprocess.run([*base, "--resume", run_id], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2 and "already finished" in again.stderr
    unknown = subprocess.run([*base, "--resume", "nope"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert unknown.returncode == 2 and "no run `nope`" in unknown.stderr
