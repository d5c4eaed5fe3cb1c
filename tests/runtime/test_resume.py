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

TOOLS = """import time

def work(n):
    with open({log!r}, "a") as f:
        f.write(f"{{n}}\\n")
    time.sleep(0.4)
    return {{"done": n}}
"""


def test_resume_after_sigkill_never_repeats_a_committed_tool_step(tmp_path: Path) -> None:
    machine = tmp_path / "slow.skm"
    machine.write_text(MACHINE)
    log = tmp_path / "calls.log"
    tools = tmp_path / "slowtools.py"
    tools.write_text(TOOLS.format(log=str(log)))
    script = tmp_path / "none.json"
    script.write_text("{}")
    journal = tmp_path / "runs.sqlite"
    base = [sys.executable, "-m", "skillc", "run", "--journal", str(journal), "--tools", str(tools)]
    proc = subprocess.Popen([*base[:3], "run", str(machine), "--executor", f"scripted:{script}",
                             "--journal", str(journal), "--tools", str(tools), "--trace", str(tmp_path / "t.jsonl")],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    db = sqlite3.connect(journal)
    (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    committed = [row[0] for row in db.execute("SELECT step FROM steps WHERE run_id = ? ORDER BY step", (run_id,))]
    db.close()
    assert 2 <= len(committed) < 7 and committed == list(range(len(committed)))

    r = subprocess.run([*base, "--resume", run_id], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "outcome: success (terminal `finished`)" in r.stdout
    calls = Counter(int(x) for x in log.read_text().split())
    assert sorted(calls) == list(range(7))
    for n in committed:  # step n called work(n)
        assert calls[n] == 1, (n, calls)
    assert sum(calls.values()) <= 8  # at most the one step in flight at the kill ran twice
    trace = (tmp_path / "t.jsonl").read_text()
    assert '"skillc.resumed_at_step"' in trace and '"type": "footer"' in trace

    again = subprocess.run([*base, "--resume", run_id], cwd=ROOT, capture_output=True, text=True)
    assert again.returncode == 2 and "already finished" in again.stderr
    unknown = subprocess.run([*base, "--resume", "nope"], cwd=ROOT, capture_output=True, text=True)
    assert unknown.returncode == 2 and "no run `nope`" in unknown.stderr
