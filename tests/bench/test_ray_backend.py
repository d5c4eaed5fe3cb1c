"""The Ray backend against a real, separate local Ray cluster that this module starts and stops.

The cluster is started with `ray start --head` in its own session (2 CPUs, a small object
store, its own temp dir, no dashboard, no usage stats) and stopped by signalling exactly
its processes — never `ray stop`, which ends every Ray process of the machine. Without
Ray the module skips, unless SKILLC_REQUIRE_RAY=1 (CI), where a missing Ray fails.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import pytest

from skillc.bench import codes
from skillc.bench.backends import BackendError
from skillc.bench.ray_backend import RayBackend, RayBackendError, Shipped, land, resolve_address, ship
from skillc.bench.results import Cell, Row
from skillc.bench.runner import make_backend

ROOT = Path(__file__).resolve().parents[2]
BEATS = ROOT / "tests" / "bench" / "fixtures" / "beats"
SKILLC = Path(sys.executable).parent / "skillc"


def _need_ray() -> None:
    """Skip without Ray, or fail when CI requires it."""
    if importlib.util.find_spec("ray") is not None:
        return
    if os.environ.get("SKILLC_REQUIRE_RAY") == "1":
        pytest.fail("SKILLC_REQUIRE_RAY=1 but ray is not installed (pip install 'skillc[bench]')")
    pytest.skip("needs ray (pip install 'skillc[bench]'; CI sets SKILLC_REQUIRE_RAY=1)")


def _ray_command() -> list[str]:
    """The `ray` command of this interpreter's environment."""
    script = Path(sys.executable).parent / "ray"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ray.scripts.scripts"]


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent, process group, start time) of a live process, or None."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return int(fields[1]), int(fields[2]), fields[19]


def _cluster(group: int, leader: str | None) -> dict[int, str]:
    """The processes (pid: start time) of the group, of its leader if it still is the one started at `leader`,
    and all their descendants: Ray's workers get process groups of their own."""
    table = {int(e.name): _stat(int(e.name)) for e in Path("/proc").iterdir() if e.name.isdigit()}
    known = {pid: st for pid, st in table.items() if st is not None}
    found = {pid for pid, (_, pgid, start) in known.items() if pgid == group or (pid == group and start == leader)}
    grew = True
    while grew:
        more = {pid for pid, (parent, _, _) in known.items() if parent in found} - found
        found |= more
        grew = bool(more)
    return {pid: known[pid][2] for pid in found}


def _signal(processes: dict[int, str], number: int) -> None:
    """Send a signal to each of these processes (ours) by id, unless its id now names another process."""
    for pid, start in processes.items():
        now = _stat(pid)
        if now is not None and now[2] == start:
            try:
                os.kill(pid, number)
            except ProcessLookupError:
                pass


def _stop(group: int, leader: str | None = None, known: dict[int, str] | None = None) -> None:
    """End exactly the processes of the cluster we started: SIGTERM, a short grace, then SIGKILL."""
    processes = {**(known or {}), **_cluster(group, leader)}
    _signal(processes, signal.SIGTERM)
    deadline = time.monotonic() + 1.5
    while time.monotonic() < deadline and _cluster(group, leader):
        time.sleep(0.1)
    _signal({**processes, **_cluster(group, leader)}, signal.SIGKILL)


#: Kills a process group once its standard input closes: when the test process is gone, however it went.
_REAPER = """
import os, signal, sys, time
group = int(sys.argv[1])
sys.stdin.buffer.read()
for number in (signal.SIGTERM, signal.SIGKILL):
    try:
        os.killpg(group, number)
    except ProcessLookupError:
        break
    time.sleep(1.5)
"""


def _address_when_up(started: subprocess.Popen[bytes], temp: Path, log: Path) -> str:
    """The head's address, once `ray start` has written it (it does so when the head is up)."""
    written = temp / "ray_current_cluster"
    deadline = time.monotonic() + 90
    while not (written.exists() and written.read_text().strip()):
        assert started.poll() is None, f"ray start failed:\n{log.read_text(errors='replace')}"
        assert time.monotonic() < deadline, f"ray start took over 90 s:\n{log.read_text(errors='replace')}"
        time.sleep(0.1)
    return written.read_text().strip()


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    """The address of a local Ray cluster started for these tests (and stopped after them).

    `ray start --block` runs in a session of its own and stays in the foreground as the cluster's owner
    (SIGTERM makes it stop its processes). A reaper process holds a pipe from this one: if this process
    dies without tearing down (SIGTERM from `timeout`, SIGKILL), the pipe closes and the reaper ends the
    cluster's process group, so a killed test run leaves no cluster behind.
    """
    _need_ray()
    temp = Path(tempfile.mkdtemp(prefix="skr-"))  # short: Ray's socket paths live under it (108-byte limit)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    log = temp / "start.log"
    with log.open("wb") as out:
        started = subprocess.Popen(
            [*_ray_command(), "start", "--head", "--block", "--port=0", "--node-ip-address=127.0.0.1",
             "--num-cpus=2", "--num-gpus=0", "--object-store-memory=80000000", f"--temp-dir={temp}",
             "--disable-usage-stats", "--include-dashboard=false"],
            stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    leader = (_stat(started.pid) or (0, 0, None))[2]
    reaper = subprocess.Popen([sys.executable, "-c", _REAPER, str(started.pid)], stdin=subprocess.PIPE,
                              start_new_session=True)
    try:
        yield _address_when_up(started, temp, log)
    finally:
        reaper.kill()  # a normal end: stop the cluster here, and never signal its group id once it is free
        reaper.wait(timeout=30)
        processes = _cluster(started.pid, leader)
        started.terminate()  # `ray start --block` stops its node's processes on SIGTERM
        try:
            started.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        _stop(started.pid, leader, processes)
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def backend(ray_address: str) -> Iterator[RayBackend]:
    """One connection to the cluster, 2 tasks in flight, shared by the tests of toy cells."""
    connected = RayBackend(ray_address, workers=2)
    yield connected
    connected.close()
    connected.close()  # idempotent


def double(n: int) -> int:
    """A toy cell."""
    return 2 * n


def die_on_two(n: int) -> int:
    """A toy cell whose worker dies (as a segfault or the OOM killer would end it) for n == 2."""
    if n == 2:
        os._exit(1)
    time.sleep(0.2)
    return n


def fail_on_two(n: int) -> int:
    """A toy cell with a bug for n == 2."""
    if n == 2:
        raise KeyError("bug in the cell")
    return n


def spans(n: float) -> tuple[float, float]:
    """When the toy cell ran (start, end)."""
    start = time.time()
    time.sleep(n)
    return start, time.time()


def missing_trace(n: int) -> Row:
    """A row whose trace file was never written."""
    return Row(Cell(f"t{n}", "machine", "scripted", 0), True, True, trace=f"/nonexistent/skillc/{n}/trace.jsonl")


def write_trace(path: str) -> Row:
    """A toy cell that writes its trace."""
    Path(path).write_bytes(b'{"kind": "header"}\n')
    return Row(Cell(Path(path).parent.name, "machine", "scripted", 0), True, True, trace=path)


def _closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_results_come_back_as_tasks_complete(backend: RayBackend) -> None:
    assert sorted(backend.map_unordered(double, list(range(20)))) == [2 * n for n in range(20)]
    assert list(backend.map_unordered(double, [])) == []


def test_workers_bound_the_tasks_in_flight(backend: RayBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "workers", 1)
    ran = sorted(backend.map_unordered(spans, [0.15] * 3))
    assert all(end <= next_start + 0.01 for (_, end), (next_start, _) in itertools.pairwise(ran))


def test_a_dead_worker_is_a_coded_error_after_the_others_finish(backend: RayBackend) -> None:
    got: list[int] = []
    with pytest.raises(RayBackendError) as caught:
        for n in backend.map_unordered(die_on_two, [0, 1, 2, 3]):
            got.append(n)
    assert caught.value.code is codes.RAY_TASK_DIED
    assert "WorkerCrashedError" in str(caught.value) and "2" in str(caught.value)
    assert isinstance(caught.value, BackendError)  # the runner's contract: rows so far kept, the rest resumable
    assert 2 not in got and {0, 1} <= set(got)
    assert sorted(backend.map_unordered(double, [1, 2])) == [2, 4]  # the cluster and the connection live on


def test_stopping_early_cancels_the_cells_still_running(backend: RayBackend) -> None:
    started = time.monotonic()
    results = backend.map_unordered(spans, [0.05, 120.0, 120.0])
    assert isinstance(results, Generator)
    next(results)
    results.close()  # the bench was interrupted: the 120 s cells must not hold the cluster's 2 CPUs
    assert sorted(backend.map_unordered(double, [1, 2])) == [2, 4]
    # Uncancelled, the new cells would wait 120 s for a CPU; cancelled, they wait for fresh workers, which took
    # 20 s on a loaded 2-core CI machine (a 15 s bound failed there), so the bound sits halfway.
    assert time.monotonic() - started < 60


def test_a_bug_in_the_cell_is_raised_as_itself(backend: RayBackend) -> None:
    with pytest.raises(KeyError, match="bug in the cell"):
        list(backend.map_unordered(fail_on_two, [0, 1, 2, 3]))


def bug_or_sleep(n: int) -> int:
    """A toy cell with a bug for n == 0 that others outlive: n == 1 sleeps half a minute."""
    if n == 0:
        raise KeyError("bug in the cell")
    time.sleep(30)
    return n


def test_a_map_stopped_by_a_bug_waits_for_the_cells_it_cancelled(backend: RayBackend,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Force-cancelling kills the cancelled cells' workers; the next map's tasks must not lease one being killed."""
    import ray

    from skillc.bench.ray_backend import CANCEL_WAIT_S

    waits: list[tuple[int, object, object]] = []
    real_wait = ray.wait

    def spy(refs: list[object], *args: object, **kwargs: object) -> object:
        waits.append((len(refs), kwargs.get("num_returns"), kwargs.get("timeout")))
        return real_wait(refs, *args, **kwargs)

    monkeypatch.setattr(ray, "wait", spy)
    started = time.monotonic()
    with pytest.raises(KeyError, match="bug in the cell"):
        list(backend.map_unordered(bug_or_sleep, [0, 1]))
    assert time.monotonic() - started < 25  # the sleeping cell was cancelled, not waited out
    assert (1, 1, CANCEL_WAIT_S) in waits
    monkeypatch.undo()
    assert [r.error is not None for r in backend.map_unordered(missing_trace, [1, 2])] == [True, True]


def test_a_row_without_a_visible_trace_is_flagged(backend: RayBackend) -> None:
    rows = list(backend.map_unordered(missing_trace, [1, 2]))
    assert len(rows) == 2
    assert all(r.error is not None and r.error.startswith("SKM729 trace-not-visible") for r in rows)
    assert all(r.success is True and r.rfc is True for r in rows)  # the row's results stand


def test_a_task_on_another_node_sends_its_trace_back(backend: RayBackend, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker compares its node with the driver's: the same node sends nothing, another sends the bytes."""
    import skillc.bench.ray_backend as ray_backend

    landed: list[bytes | None] = []

    def recording(shipped: Shipped[Row], job: object = None) -> Row:
        landed.append(shipped.trace_data)
        return land(shipped, job)

    monkeypatch.setattr(ray_backend, "land", recording)
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    assert len(list(backend.map_unordered(write_trace, [str(tmp_path / "a" / "trace.jsonl")]))) == 1
    monkeypatch.setattr(backend, "node", "a-node-that-is-not-this-one")
    assert len(list(backend.map_unordered(write_trace, [str(tmp_path / "b" / "trace.jsonl")]))) == 1
    assert landed == [None, b'{"kind": "header"}\n']


def test_a_trace_from_another_node_is_written_on_the_driver(tmp_path: Path) -> None:
    trace = tmp_path / "cells" / "t1" / "trace.jsonl"
    trace.parent.mkdir(parents=True)
    trace.write_bytes(b'{"kind": "header"}\n')
    row = Row(Cell("t1", "machine", "scripted", 0), True, True, trace="cells/t1/trace.jsonl")

    class Job:
        out = tmp_path

    assert ship(row, Job(), "node-a", "node-a").trace_data is None  # same node: nothing to send
    shipped = ship(row, Job(), "node-b", "node-a")
    assert shipped.trace_data == b'{"kind": "header"}\n'
    trace.unlink()  # the driver's filesystem does not have it
    assert land(shipped, Job()) == row
    assert trace.read_bytes() == b'{"kind": "header"}\n'
    trace.write_bytes(b"shared\n")  # already visible (shared storage): never overwritten
    assert land(shipped, Job()) == row and trace.read_bytes() == b"shared\n"
    flagged = land(Shipped(row, None, "node-b"), type("Elsewhere", (), {"out": tmp_path / "gone"})())
    assert flagged.error is not None and "SKM729" in flagged.error and "node-b" in flagged.error


def test_bench_rows_equal_the_local_backend(ray_address: str, tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """`skillc bench --backend ray` (the good example of SKM725–SKM727) gives the local backend's rows, latency
    aside."""
    from skillc.bench.runner import BenchConfig, run_bench

    assert _shell_example(codes.NO_RAY_CLUSTER.good, ray_address, tmp_path, without_ray=False) == []
    monkeypatch.chdir(tmp_path / "suite")
    local = run_bench(BenchConfig("suite.toml", executors=("scripted:script.json",), output=str(tmp_path / "local")))
    assert not local.diagnostics and local.ran == 12
    assert _rows(tmp_path / "out") == _rows(tmp_path / "local")
    assert len(_rows(tmp_path / "out")) == 12
    for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines():
        assert (tmp_path / "out" / json.loads(line)["trace"]).is_file()


def test_a_worker_dying_in_a_bench_keeps_the_rows_and_the_rerun_finishes(ray_address: str, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A cell whose Ray worker dies: SKM728 naming it, exit 4, the other rows kept; the next run adds only it."""
    # marks.py kills the process that calls it: in-process, that is the worker (a boxed call would only fail)
    monkeypatch.setenv("SKILLC_CONFINE_TOOLS", "0")
    suite = tmp_path / "beats"
    shutil.copytree(BEATS, suite)
    (suite / "dying").mkdir()
    (suite / "dying" / "die").write_text("", encoding="utf-8")  # marks.py exits its process in this workdir
    with (suite / "suite.toml").open("a", encoding="utf-8") as f:
        f.write('\n[[task]]\nid = "t5"\ninputs = { question = "and now?" }\nworkdir = "dying"\n')
    command = [str(SKILLC), "bench", str(suite / "suite.toml"), "--modes", "machine", "--executor",
               f"scripted:{suite / 'script.json'}", "--backend", "ray", "--address", ray_address, "--workers", "2",
               "-o", str(tmp_path / "out"), "--quiet"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.returncode == 4, first.stdout + first.stderr
    assert "error[SKM728]" in first.stdout + first.stderr and '"t5"' in first.stdout + first.stderr
    assert "Traceback" not in first.stderr
    assert "t5" not in {r["task"] for r in _rows(tmp_path / "out")}
    (suite / "dying" / "die").unlink()
    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stdout + second.stderr
    assert sorted(str(r["task"]) for r in _rows(tmp_path / "out")) == ["t1", "t2", "t3", "t4", "t5"]


def _rows(out: Path) -> list[dict[str, object]]:
    """The rows of a bench's results, sorted, without latency."""
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return sorted(({k: v for k, v in r.items() if k != "latency_s"} for r in rows), key=json.dumps)


@pytest.mark.parametrize(("address", "code"), [
    ("10.0.0.5", codes.INVALID_RAY_SETTING), ("10.0.0.5:port", codes.INVALID_RAY_SETTING),
    ("10.0.0.5:70000", codes.INVALID_RAY_SETTING), ("ray://10.0.0.5:10001", codes.INVALID_RAY_SETTING),
])
def test_malformed_addresses_are_refused(address: str, code: codes.Code) -> None:
    with pytest.raises(RayBackendError) as caught:
        resolve_address(address)
    assert caught.value.code is code and str(caught.value.diagnostic().code) == code.code


def test_address_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.7:6379")
    assert resolve_address(None) == "10.0.0.7:6379"
    assert resolve_address("10.0.0.8:6380") == "10.0.0.8:6380"
    monkeypatch.delenv("RAY_ADDRESS")
    assert resolve_address(None) == "auto"


def test_nothing_listening_fails_fast() -> None:
    _need_ray()
    started = time.monotonic()
    with pytest.raises(RayBackendError) as caught:
        RayBackend(f"127.0.0.1:{_closed_port()}")
    assert caught.value.code is codes.NO_RAY_CLUSTER
    assert time.monotonic() - started < 10


@contextlib.contextmanager
def _not_ray(reply: bytes | None) -> Iterator[str]:
    """The address of a TCP listener that is not a Ray head: it holds each connection open without a word (None),
    or sends `reply` and closes it. It listens where Ray dials a loopback address (this node's IP)."""
    from skillc.bench.ray_backend import _as_ray_dials, _host_port

    server = socket.socket()
    server.bind((_host_port(_as_ray_dials("127.0.0.1:1"))[0], 0))
    server.listen(8)
    held: list[socket.socket] = []

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # the listener was closed: the test is over
                return
            if reply is None:
                held.append(conn)
                continue
            with conn:
                conn.sendall(reply)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for conn in held:
            conn.close()


@pytest.mark.parametrize("reply", [None, b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", b""],
                         ids=["silent", "http", "closes"])
def test_a_port_that_is_not_a_ray_head_fails_fast(reply: bytes | None) -> None:
    """Something listens but does not speak gRPC: SKM726 within the probe's few seconds, not Ray's endless retries."""
    _need_ray()
    with _not_ray(reply) as address:
        started = time.monotonic()
        with pytest.raises(RayBackendError) as caught:
            RayBackend(address)
        elapsed = time.monotonic() - started
    assert caught.value.code is codes.NO_RAY_CLUSTER and "not a Ray head" in str(caught.value)
    assert elapsed < 10


@pytest.mark.parametrize("value", ["0", "-1", "two", "nan"])
def test_cpus_per_cell_must_be_positive(value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_RAY_NUM_CPUS", value)
    with pytest.raises(RayBackendError) as caught:
        RayBackend("10.0.0.5:6379")
    assert caught.value.code is codes.INVALID_RAY_SETTING


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    with pytest.raises(RayBackendError) as caught:
        make_backend("ray", 1, "10.0.0.5:6379")
    assert caught.value.code is codes.RAY_NOT_INSTALLED and "skillc[bench]" in str(caught.value)


_RAY_CODES = [c for c in codes.ALL if "SKM725" <= c.code <= "SKM729"]
_CODE = re.compile(r"SKM\d{3}")
_REPORTED = re.compile(r"(?:error|warning)\[(SKM\d{3})\]")


def _shell_example(text: str, address: str, folder: Path, *, without_ray: bool) -> list[str]:
    """The codes `skillc bench` reports for the example's command line, run in a copy of the beats suite."""
    command = text.strip().splitlines()[-1].split()
    assert command[0] == "skillc"
    suite = folder / "suite"
    if not suite.exists():
        shutil.copytree(BEATS, suite)
    env = dict(os.environ)
    if without_ray:  # an environment where `import ray` fails, as after a plain `pip install skillc`
        (folder / "noray" / "ray").mkdir(parents=True, exist_ok=True)
        (folder / "noray" / "ray" / "__init__.py").write_text("raise ImportError(\"No module named 'ray'\")\n")
        env["PYTHONPATH"] = str(folder / "noray")
    args = [a.replace("127.0.0.1:6379", address).replace("10.0.0.5:6379", address) for a in command[1:]]
    result = subprocess.run([str(SKILLC), *args, "--quiet", "-o", str(folder / "out")], cwd=suite, env=env,
                            capture_output=True, text=True, timeout=120)
    assert "Traceback" not in result.stderr
    found = _REPORTED.findall(result.stdout + result.stderr)
    assert (result.returncode == 0) == (not found), result.stderr
    return found


def _python_example(text: str, address: str, folder: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The codes the Python example prints or raises, run in `folder`."""
    found: list[str] = []
    try:
        exec(compile(text.replace("127.0.0.1:6379", address), "example", "exec"), {"__name__": "example"})
    except RayBackendError as exc:
        found.append(exc.code.code)
    return found + _CODE.findall(capsys.readouterr().out)


@pytest.mark.parametrize("code", _RAY_CODES, ids=lambda c: c.code)
def test_ray_code_examples(code: codes.Code, ray_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                           capsys: pytest.CaptureFixture[str]) -> None:
    """Each Ray code's bad example yields it and its good example yields nothing (against the session cluster)."""
    monkeypatch.chdir(tmp_path)
    if code.lang == "python":
        assert code.code in _python_example(code.bad, ray_address, tmp_path, capsys)
        assert _python_example(code.good, ray_address, tmp_path, capsys) == []
        return
    bad_address = f"127.0.0.1:{_closed_port()}" if code is codes.NO_RAY_CLUSTER else ray_address
    assert code.code in _shell_example(code.bad, bad_address, tmp_path / "bad",
                                       without_ray=code is codes.RAY_NOT_INSTALLED)
    # The good command line of SKM725–SKM727 is one and the same: test_bench_rows_equal_the_local_backend runs it.
    goods = {c.good.strip().splitlines()[-1].replace("10.0.0.5:6379", "127.0.0.1:6379")
             for c in (codes.RAY_NOT_INSTALLED, codes.NO_RAY_CLUSTER, codes.INVALID_RAY_SETTING)}
    assert len(goods) == 1
