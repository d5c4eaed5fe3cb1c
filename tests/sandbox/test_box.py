"""The box (`skillc.sandbox.box.run_confined`): what a confined child cannot do, on this machine's strongest layers
and with each optional layer forced off (the degradation path every machine without Landlock or namespaces takes).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from skillc.sandbox import _box
from skillc.sandbox.box import call_python, disabled_layers, run_confined

LANDLOCK = _box.landlock_abi() >= 1
needs_landlock = pytest.mark.skipif(not LANDLOCK, reason="this kernel has no Landlock")
#: Every test that does not need a layer runs with all layers and with the optional ones forced off.
MODES = [pytest.param((), id="strongest"), pytest.param(("landlock", "namespaces"), id="degraded")]


def _sh(script: str, scratch: Path, off: tuple[str, ...] = (), timeout_s: float = 20, **kw: object):
    return run_confined(["/bin/sh", "-c", script], scratch=scratch, timeout_s=timeout_s, disable=off, **kw)


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    folder = tmp_path / "scratch"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("off", MODES)
def test_the_child_sees_no_secret_of_the_parent_environment(scratch: Path, off, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-1234")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/agent.sock")
    box = _sh("env", scratch, off)
    assert box.ok, box.stderr
    env = dict(line.split("=", 1) for line in box.stdout.decode().splitlines() if "=" in line)
    assert "sk-secret-1234" not in box.stdout.decode() and "SSH_AUTH_SOCK" not in env
    assert env["HOME"] == str(scratch.resolve()) and env["PWD"] == str(scratch.resolve())
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "PWD", "SHLVL", "_"}


@needs_landlock
def test_the_child_cannot_write_or_read_outside_scratch(scratch: Path, tmp_path: Path) -> None:
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("PRIVATE KEY\n")
    outside = tmp_path / "outside.txt"
    box = _sh(f"echo in > inside.txt; echo out > {outside}; cat {secret}; echo x >> {secret}; echo done", scratch)
    assert (scratch / "inside.txt").read_text() == "in\n"
    assert not outside.exists() and secret.read_text() == "PRIVATE KEY\n"
    assert b"PRIVATE KEY" not in box.stdout and box.stdout.endswith(b"done\n")
    assert "landlock-write" in box.layers and "landlock-read" in box.layers


def test_without_landlock_the_write_is_not_prevented_and_the_box_says_so(scratch: Path, tmp_path: Path) -> None:
    """The degradation path is honest: the layer is reported missing, and nothing pretends to stop the write."""
    outside = tmp_path / "outside.txt"
    box = _sh(f"echo out > {outside}", scratch, ("landlock",))
    assert dict(box.missing)["landlock"] == "turned off" and not any(n.startswith("landlock") for n in box.layers)
    assert outside.read_text() == "out\n"


@pytest.mark.parametrize("off", MODES)
def test_on_timeout_the_child_and_its_daemon_grandchildren_are_killed(scratch: Path, tmp_path: Path, off) -> None:
    marker = tmp_path / "alive"
    script = (f"setsid sh -c 'sleep 1; touch {marker}' & "
              f"(setsid sh -c 'sleep 1; touch {marker}.2' &); sleep 60")
    started = time.monotonic()
    box = _sh(script, scratch, off, timeout_s=0.5, writable=[tmp_path])  # the marker's folder: a write can tell
    assert box.timed_out and box.exit is None and time.monotonic() - started < 15
    time.sleep(1.2)  # past the daemon's second
    assert not marker.exists() and not Path(f"{marker}.2").exists()


@pytest.mark.parametrize("off", MODES)
def test_a_daemon_left_behind_by_a_child_that_exits_is_killed(scratch: Path, tmp_path: Path, off) -> None:
    marker = tmp_path / "alive"
    box = _sh(f"(setsid sh -c 'sleep 1; touch {marker}' &); exit 0", scratch, off, writable=[tmp_path])
    assert box.ok
    time.sleep(1.2)  # past the daemon's second
    assert not marker.exists()


def test_the_child_dies_when_the_parent_is_killed(tmp_path: Path) -> None:
    """PR_SET_PDEATHSIG: a skillc killed with SIGKILL leaves no confined process behind."""
    scratch = tmp_path / "s"
    scratch.mkdir()
    marker = tmp_path / "alive"
    program = (f"from pathlib import Path\nfrom skillc.sandbox.box import run_confined\n"
               f"run_confined(['/bin/sh', '-c', 'sleep 2; touch {marker}'], scratch=Path({str(scratch)!r}), "
               f"timeout_s=30, disable=('landlock',))\n")
    parent = subprocess.Popen([sys.executable, "-c", program])
    deadline = time.monotonic() + 60
    while not _children(parent.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert _children(parent.pid), "the box never started"
    time.sleep(0.3)  # the supervisor has forked the target
    parent.kill()
    parent.wait(timeout=10)
    time.sleep(2.5)  # past the target's two seconds
    assert not marker.exists()


def _children(pid: int) -> list[str]:
    """The child processes of `pid` (none once it is gone)."""
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


@pytest.mark.parametrize("off", MODES)
def test_no_tcp_connection_leaves_the_box(scratch: Path, off) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    try:
        code = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
                f"    print('connected')\nexcept OSError as e:\n    print('refused', e)\n")
        box = run_confined([sys.executable, "-I", "-c", code], scratch=scratch, timeout_s=20, disable=off)
    finally:
        listener.close()
    if off:  # without namespaces and Landlock nothing stops it: the box must say so
        assert dict(box.missing).get("network"), box.missing
    else:
        assert box.stdout.startswith(b"refused"), (box.stdout, box.stderr)


def test_memory_limit_stops_a_greedy_child(scratch: Path) -> None:
    box = run_confined([sys.executable, "-I", "-c", "x = bytearray(3 << 30)\nprint('got it')"], scratch=scratch,
                       timeout_s=20, memory_mb=512)
    assert not box.ok and b"got it" not in box.stdout and b"MemoryError" in box.stderr


def test_output_is_bounded(scratch: Path) -> None:
    box = _sh("head -c 3000000 /dev/zero", scratch)
    assert box.ok and box.truncated and len(box.stdout) == 1 << 20


def test_layers_can_be_turned_off_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "landlock, bogus")
    assert disabled_layers(("namespaces",)) == {"landlock", "namespaces"}


@pytest.mark.parametrize("off", MODES)
def test_call_python_returns_values_and_reasons(scratch: Path, tmp_path: Path, off) -> None:
    module = tmp_path / "mod.py"
    module.write_text("import os\ndef f(p, n):\n    print('noise')\n    return p.name, n + 1\n"
                      "def boom():\n    raise ValueError('no')\n")
    call = call_python(module, "f", scratch=scratch, args=["/x/y", 1], paths=[0], timeout_s=20, disable=off)
    assert call.problem() is None and call.value == ("y", 2) and call.box.stderr == b"noise\n"
    assert call_python(module, "boom", scratch=scratch, timeout_s=20, disable=off).problem() == "ValueError: no"
    described = call_python(module, None, scratch=scratch, timeout_s=20, disable=off)
    assert set(described.answer["functions"]) == {"f", "boom"}


def test_the_layers_applied_are_reported(scratch: Path) -> None:
    box = _sh("true", scratch)
    assert {"session", "rlimits", "minimal-env", "scratch-cwd"} <= set(box.layers)
    if LANDLOCK:
        assert "landlock-write" in box.layers
    else:
        assert "landlock" in dict(box.missing)
    assert os.getpid() > 0


def test_a_missing_layer_is_a_note_saying_what_it_would_prevent(scratch: Path) -> None:
    from skillc.sandbox.box import degraded_notes

    box = _sh("true", scratch, ("landlock",))
    notes = degraded_notes(box)
    assert [str(d.code) for d in notes if "`landlock`" in d.message] == ["SKM944"]
    assert "writes outside the scratch folder" in notes[0].message and not notes[0].is_error


def test_available_layers_says_what_this_machine_gives() -> None:
    from skillc.sandbox.box import available_layers

    found = available_layers()
    assert set(found) == {"landlock", "namespaces"}
    assert found["landlock"].startswith("ABI ") == LANDLOCK


def test_a_fork_bomb_is_held_to_the_process_limit(scratch: Path) -> None:
    """RLIMIT_NPROC in the box's own user namespace, and as root (whose processes the kernel does not count) a pids
    cgroup of the box's own; where neither is there, the box says so."""
    code = ("import os, time\nn = 0\nwhile n < 400:\n    try:\n        pid = os.fork()\n    except OSError:\n"
            "        break\n    if pid == 0:\n        time.sleep(30)\n        os._exit(0)\n    n += 1\nprint(n)\n")
    parent = _box._pids_parent() if os.geteuid() == 0 else None
    before = set(os.listdir(parent)) if parent is not None else set()
    box = run_confined([sys.executable, "-I", "-S", "-c", code], scratch=scratch, timeout_s=30, processes=32)
    limited = "pids-cgroup" in box.layers or (os.geteuid() != 0 and "user-namespace" in box.layers)
    if limited:
        assert box.ok and int(box.stdout) <= 32, (box.stdout, box.stderr)
    else:
        assert "pids-cgroup" in dict(box.missing) or "user-namespace" not in box.layers, box.missing
    if parent is not None:  # the box's cgroup went with it (another test process's running boxes may have theirs)
        left = [d for d in set(os.listdir(parent)) - before
                if d.startswith("skillc-box-") and not _box._alive(int(d.removeprefix("skillc-box-")))]
        assert not left, left
