"""Issue #34: `skillc import langgraph MODULE:ATTR` imports the user's module in a box, never in skillc's process.

A property that raises, a module that changes the recursion limit or leaves a non-daemon thread running, a module
that hangs, and a signal while the module imports: each is the right diagnostic or exit status, never SKM900 or a
"failed import". The module also runs without skillc's environment and cannot write outside the box.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("langgraph")

from skillc.frontends.importers.langgraph import to_skm_confined
from skillc.sandbox import _box

AGENT = '''\
from typing import TypedDict
from langgraph.graph import StateGraph, START, END

class State(TypedDict):
    x: int

def step(state: State) -> dict:
    return {"x": 1}

builder = StateGraph(State)
builder.add_node("step", step)
builder.add_edge(START, "step")
builder.add_edge("step", END)
graph = builder.compile()
'''


def _cli(tmp_path: Path, spec: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillc", "import", "langgraph", spec], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "NO_COLOR": "1", **env}, timeout=120)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    return tmp_path


def test_a_property_that_raises_is_a_failed_import_not_an_internal_error(folder: Path) -> None:
    (folder / "weird.py").write_text("class W:\n    @property\n    def graph(self):\n        raise ValueError('boom')\n"
                                     "holder = W()\n", encoding="utf-8")
    r = _cli(folder, "weird:holder.graph")
    assert r.returncode == 1 and "SKM650" in r.stdout and "ValueError: boom" in r.stdout, r.stdout + r.stderr
    assert "SKM900" not in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_a_module_that_lowers_the_recursion_limit_is_still_translated(folder: Path) -> None:
    (folder / "shallow.py").write_text(textwrap.dedent('''\
        import sys
        from agent import graph

        def _depth():
            frame, n = sys._getframe(), 0
            while frame is not None:
                frame, n = frame.f_back, n + 1
            return n

        sys.setrecursionlimit(_depth() + 4)  # room for nothing more than the import itself
        '''), encoding="utf-8")
    r = _cli(folder, "shallow:graph")
    assert r.returncode == 0 and "SKM900" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert "machine " in r.stdout


def test_a_module_that_leaves_a_non_daemon_thread_running_does_not_hold_the_command(folder: Path) -> None:
    (folder / "threaded.py").write_text("import threading, time\nfrom agent import graph\n"
                                        "threading.Thread(target=time.sleep, args=(3600,)).start()\n",
                                        encoding="utf-8")
    started = time.monotonic()
    r = _cli(folder, "threaded:graph")
    assert r.returncode == 0 and "machine " in r.stdout, r.stdout + r.stderr
    assert time.monotonic() - started < 60


def test_a_module_that_hangs_is_stopped_at_the_limit(folder: Path) -> None:
    (folder / "hangs.py").write_text("while True:\n    pass\n", encoding="utf-8")
    started = time.monotonic()
    text, found = to_skm_confined("hangs:graph", folder=str(folder), timeout_s=2)
    assert text is None and [str(d.code) for d in found] == ["SKM940"]
    assert time.monotonic() - started < 30


def test_the_module_sees_no_secret_and_cannot_write_outside_the_box(folder: Path, tmp_path: Path) -> None:
    outside = tmp_path / "dropped.txt"
    (folder / "nosy.py").write_text(textwrap.dedent(f'''\
        import os
        try:
            open({str(outside)!r}, "w").write("x")
        except OSError:
            pass
        raise SystemExit("key: " + os.environ.get("OPENAI_API_KEY", "none"))
        '''), encoding="utf-8")
    r = _cli(folder, "nosy:graph", OPENAI_API_KEY="sk-live-secret")
    assert r.returncode == 1 and "key: none" in r.stdout and "sk-live-secret" not in r.stdout, r.stdout
    if _box.landlock_abi() >= 1:
        assert not outside.exists()


def _children(pid: int) -> list[str]:
    """The child processes of `pid` (none once it is gone)."""
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_the_module_imports_stops_the_command(folder: Path, sig: int, status: int) -> None:
    (folder / "slow.py").write_text("import time\ntime.sleep(60)\n", encoding="utf-8")

    def defaults() -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)

    proc = subprocess.Popen([sys.executable, "-m", "skillc", "import", "langgraph", "slow:graph"], cwd=folder,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=defaults)
    try:
        deadline = time.monotonic() + 60
        while not _children(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # until skillc has started the box and waits for it
        time.sleep(0.5)  # the module is importing (it sleeps for a minute)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert proc.returncode == status, (out, err)
    assert "SKM650" not in out and "failed" not in out
