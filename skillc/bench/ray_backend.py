"""The Ray backend: every bench cell a Ray task on an existing Ray cluster, results as they complete.

`RayBackend(address, workers=N)` connects to a cluster somebody started (`ray start --head`):
`address` is the head's GCS address `host:port`, else the `RAY_ADDRESS` environment variable,
else `"auto"` (the cluster `ray start` last started on this machine). It never starts a cluster of
its own. Before `ray.init` it opens a TCP connection to the address and greets it as an HTTP/2
client (Ray's GCS is a gRPC server, which answers with a SETTINGS frame), so a wrong address, a
dead head or a port where something else listens fails in seconds with a coded error rather than
leaving `ray.init` retrying for minutes (or for good). A process already connected to Ray
keeps its connection, and `close()` leaves it open; otherwise `close()` disconnects and puts back
the SIGTERM handler and faulthandler setting `ray.init` changed. A SIGTERM handler of the caller's
(the command line's, which stops the bench between rows with exit 143) is put back right after
`ray.init`, whose own handler would exit on the spot.

`map_unordered(fn, jobs)` keeps at most `workers` tasks in flight, each asking `num_cpus` CPUs of
the cluster (1 by default; `num_cpus=` or `SKILLC_RAY_NUM_CPUS`), and yields each result as
`ray.wait` sees it finish. A task whose worker died (a segfault, the OOM killer, a lost node) is
not retried (unless `retries=`): the tasks still running are collected and yielded, then
`RayBackendError` (SKM728) names the cell, which has no row and runs again when the bench does. A map
that stops early (a cell's own exception, or a consumer that stops reading) force-cancels the cells still
running and waits for them (`CANCEL_WAIT_S`), since cancelling kills their workers.

Traces: a cell writes its workdir and trace under OUT on the node that ran it. When that node is
not the driver's, the task sends the trace's bytes back and the driver writes them to the same
path unless a shared filesystem already shows the file there; a row whose trace is still not
visible on the driver gets `error` set (SKM729). Workdirs are not sent back (put OUT on storage
every node mounts to keep them).
"""

from __future__ import annotations

import faulthandler
import importlib
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Final, Generic, TypeVar

import attrs

from skillc.bench import codes
from skillc.bench.backends import BackendError
from skillc.bench.results import Row
from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.code import Code

J = TypeVar("J")
R = TypeVar("R")

#: Where the address comes from when none is given (Ray's own variable).
ADDRESS_VARIABLE = "RAY_ADDRESS"
#: The CPUs each cell's task asks for, when `num_cpus` is not given.
NUM_CPUS_VARIABLE = "SKILLC_RAY_NUM_CPUS"
#: How long the probe of the head waits for the connection, and then for its HTTP/2 answer.
PROBE_TIMEOUT_S = 3.0
#: Set (to 1) when the cluster speaks TLS: the probe then only connects, since its greeting is plain HTTP/2.
TLS_VARIABLE = "RAY_USE_TLS"
#: The HTTP/2 client connection preface and an empty SETTINGS frame; a gRPC server's first frame is SETTINGS.
_HTTP2_GREETING = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_FRAME_HEADER, _SETTINGS = 9, 4


#: How long a map that stopped early waits for the cells it force-cancelled (their workers are killed): a next map
#: whose task leased a worker being killed died with WorkerCrashedError (seen once in the suite, after a cell's bug).
CANCEL_WAIT_S: Final = 10.0


class RayBackendError(BackendError):
    """The Ray backend failed; `code` is its diagnostic code (SKM725–SKM729)."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(message)
        self.code = code

    def diagnostic(self) -> Diagnostic:
        """The failure as a coded diagnostic."""
        return make(self.code, str(self))


@attrs.frozen
class Shipped(Generic[R]):
    """What a cell's task sends back: its result, the trace's bytes when the driver cannot see them, its node."""

    result: R
    trace_data: bytes | None
    node: str


class RayBackend:
    """Cells as Ray tasks on an existing cluster; `workers` bounds the tasks in flight."""

    def __init__(self, address: str | None = None, *, workers: int = 1, num_cpus: float | None = None,
                 retries: int = 0, runtime_env: Mapping[str, object] | None = None) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.workers = workers
        self.num_cpus = _num_cpus(num_cpus)
        self.retries = retries
        self.address = resolve_address(address)
        ray = _import_ray()
        self._before = _ProcessState.now()
        self._owns = _connect(ray, self.address, runtime_env)
        self._before.keep_sigterm()
        self.node = str(ray.get_runtime_context().get_node_id())
        self._ray: ModuleType | None = ray

    def map_unordered(self, fn: Callable[[J], R], jobs: Sequence[J]) -> Iterator[R]:
        """`fn(job)` for every job as a Ray task, yielded as each finishes; RayBackendError when a task died."""
        ray = self._connected()
        task = ray.remote(run_shipped).options(num_cpus=self.num_cpus, max_retries=self.retries)
        queue = iter(jobs)
        running: dict[object, J] = {}  # by Ray object ref
        died: list[str] = []
        try:
            for job in queue:
                running[task.remote(fn, job, self.node)] = job
                if len(running) >= self.workers:
                    break
            while running:
                done, _ = ray.wait(list(running), num_returns=1)
                job = running.pop(done[0])
                shipped = _fetch(ray, done[0], job, died)
                if not died:
                    next_job = next(queue, None)
                    if next_job is not None:
                        running[task.remote(fn, next_job, self.node)] = next_job
                if shipped is not None:
                    yield land(shipped, job)
        finally:
            for ref in running:  # the consumer stopped early: do not leave cells running on the cluster
                ray.cancel(ref, force=True)
            if running:  # force-cancelling kills their workers: let that finish before the next map's tasks lease
                ray.wait(list(running), num_returns=len(running), timeout=CANCEL_WAIT_S)
        if died:
            raise RayBackendError(codes.RAY_TASK_DIED, f"{len(died)} Ray task(s) died: {'; '.join(died)}")

    def _connected(self) -> ModuleType:
        """Ray, while the backend is open."""
        if self._ray is None:
            raise ValueError("the Ray backend is closed")
        return self._ray

    def close(self) -> None:
        """Disconnect from the cluster (idempotent); a connection that was there before is left open."""
        if self._ray is not None and self._owns:
            self._ray.shutdown()
            self._before.restore()
        self._ray = None


@attrs.frozen
class _ProcessState:
    """What `ray.init` changes in the driver's process (a SIGTERM handler that exits, faulthandler on)."""

    sigterm: object
    faulthandler: bool

    @classmethod
    def now(cls) -> _ProcessState:
        """The state as it is."""
        return cls(signal.getsignal(signal.SIGTERM), faulthandler.is_enabled())

    def keep_sigterm(self) -> None:
        """Put back a SIGTERM handler of the caller's at once: the command line's stops the bench between rows
        (rows kept, exit 143), where Ray's would exit on the spot."""
        if callable(self.sigterm) and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.sigterm)

    def restore(self) -> None:
        """Put it back once the connection is closed, so the rest of the process behaves as before."""
        if self.sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self.sigterm)  # type: ignore[arg-type]
        if not self.faulthandler:
            faulthandler.disable()


def resolve_address(address: str | None) -> str:
    """The address to connect to: the one given, else `RAY_ADDRESS`, else "auto"; RayBackendError if malformed."""
    chosen = (address or os.environ.get(ADDRESS_VARIABLE) or "auto").strip()
    if chosen == "auto":
        return chosen
    if chosen.startswith("ray://"):
        raise RayBackendError(codes.INVALID_RAY_SETTING,
                              f"`{chosen}` is a Ray Client address; give the head node's GCS address HOST:PORT "
                              f"(the one `ray start --head` prints) and run the bench on a machine of the cluster")
    _host_port(chosen)
    return chosen


def _host_port(address: str) -> tuple[str, int]:
    """`host:port` split and checked; RayBackendError when it is not one."""
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise RayBackendError(codes.INVALID_RAY_SETTING,
                              f"the Ray address `{address}` is not HOST:PORT (e.g. 10.0.0.5:6379) or auto")
    return host.strip("[]"), int(port)


def _num_cpus(given: float | None) -> float:
    """The CPUs per task: `given`, else SKILLC_RAY_NUM_CPUS, else 1; RayBackendError when not a positive number."""
    text = os.environ.get(NUM_CPUS_VARIABLE, "1") if given is None else str(given)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < float("inf"):  # NaN fails both comparisons
        raise RayBackendError(codes.INVALID_RAY_SETTING,
                              f"the CPUs per cell must be a positive number, not `{text}` ({NUM_CPUS_VARIABLE})")
    return value


def _import_ray() -> ModuleType:
    """The ray module; RayBackendError (SKM725) when it is not installed."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise RayBackendError(codes.RAY_NOT_INSTALLED,
                              f"the ray backend needs Ray, which is not installed here ({exc}); "
                              f"pip install 'skillc[bench]'") from None


def _connect(ray: ModuleType, address: str, runtime_env: Mapping[str, object] | None) -> bool:
    """Connect this process to the cluster as a driver; False when it already was (then it is not ours to close).

    An existing connection is used as it is, but a given address is still probed, so a wrong one is never
    silently replaced by the cluster the process happens to be connected to.
    """
    if ray.is_initialized():
        _probe(address)
        return False
    target = _bootstrap() if address == "auto" else address
    _probe(target)
    try:
        ray.init(address=target, logging_level=logging.ERROR, log_to_driver=False,
                 runtime_env=dict(runtime_env) if runtime_env is not None else None)
    except (ConnectionError, RuntimeError, ValueError, OSError) as exc:
        raise RayBackendError(codes.NO_RAY_CLUSTER, f"cannot connect to the Ray cluster at {target}: {exc}") from None
    return True


def _bootstrap() -> str:
    """The address "auto" stands for: the cluster `ray start` last started on this machine."""
    try:
        services = importlib.import_module("ray._private.services")
        found = services.canonicalize_bootstrap_address_or_die("auto")
    except ConnectionError as exc:  # none running, or several and no way to choose
        raise RayBackendError(codes.NO_RAY_CLUSTER,
                              f"address auto found no single Ray cluster on this machine ({exc}); start one with "
                              f"`ray start --head`, or give --address HOST:PORT or RAY_ADDRESS") from None
    except (ImportError, AttributeError):  # a Ray without that helper: let ray.init find it
        return "auto"
    return str(found)


def _probe(address: str) -> None:
    """Connect to the head's GCS port and check that a gRPC server answers; RayBackendError (SKM726) otherwise.

    The host is the one Ray will dial: it replaces a loopback host by the machine's own IP address.
    """
    if address == "auto":
        return
    dialled = _as_ray_dials(address)
    host, port = _host_port(dialled)
    shown = address if dialled == address else f"{address} (which Ray dials as {dialled})"
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S) as conn:
            wrong = None if os.environ.get(TLS_VARIABLE, "0").lower() in ("1", "true") else _not_grpc(conn)
    except OSError as exc:
        raise RayBackendError(codes.NO_RAY_CLUSTER,
                              f"no Ray cluster answers at {shown} ({exc.strerror or exc}); start one with "
                              f"`ray start --head` and pass the address it prints") from None
    if wrong is not None:
        raise RayBackendError(codes.NO_RAY_CLUSTER,
                              f"something listens at {shown}, but it is not a Ray head ({wrong}); give the GCS "
                              f"address `ray start --head` prints (port 6379 unless --port says otherwise)")


def _not_grpc(conn: socket.socket) -> str | None:
    """Why the server on `conn` is not a gRPC server (Ray's GCS is one), or None when it answers HTTP/2.

    Ray's own client retries a server that accepts connections but never speaks gRPC for minutes; this
    greeting takes one round trip with a real head, and at most PROBE_TIMEOUT_S with anything else.
    """
    deadline = time.monotonic() + PROBE_TIMEOUT_S
    header = b""
    try:
        conn.sendall(_HTTP2_GREETING)
        while len(header) < _FRAME_HEADER:
            conn.settimeout(max(deadline - time.monotonic(), 0.001))
            chunk = conn.recv(_FRAME_HEADER - len(header))
            if not chunk:
                return "it closed the connection without an HTTP/2 answer"
            header += chunk
    except TimeoutError:
        return f"no HTTP/2 answer within {PROBE_TIMEOUT_S:g} s"
    except OSError as exc:
        return f"the connection failed: {exc.strerror or exc}"
    if header[3] != _SETTINGS:
        return f"it answered {header!r}, not HTTP/2"
    return None


def _as_ray_dials(address: str) -> str:
    """The address as `ray.init` will connect to it (loopback replaced by this node's IP), or as given."""
    try:
        services = importlib.import_module("ray._private.services")
        return str(services.canonicalize_bootstrap_address(address) or address)
    except Exception:  # noqa: BLE001 - a private helper; without it the probe dials the address as given
        return address


def _fetch(ray: ModuleType, ref: object, job: object, died: list[str]) -> Shipped[Any] | None:
    """A finished task's Shipped; None (and a note in `died`) when its worker or node died.

    An exception raised by `fn` itself is re-raised as itself, as the local backend would.
    """
    exceptions = ray.exceptions
    try:
        return ray.get(ref)
    except exceptions.RayTaskError as exc:
        raise exc.as_instanceof_cause() from None
    except exceptions.RayError as exc:
        died.append(f"cell {describe(job)}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
        return None


def describe(job: object) -> str:
    """A job's name in messages: its cell's key when it has one."""
    cell = getattr(job, "cell", None)
    key = getattr(cell, "key", None)
    return str(key) if key is not None else repr(job)[:120]


def run_shipped(fn: Callable[[J], R], job: J, driver_node: str) -> Shipped[R]:
    """On a worker: `fn(job)`, with the trace's bytes when this worker is on another node than the driver."""
    ray = importlib.import_module("ray")
    node = str(ray.get_runtime_context().get_node_id())
    return ship(fn(job), job, node, driver_node)


def ship(result: R, job: object, node: str, driver_node: str) -> Shipped[R]:
    """The result with its trace's bytes attached when it was made on another node than the driver's."""
    trace = trace_path(result, job)
    data = None
    if node != driver_node and trace is not None and trace.is_file():
        data = trace.read_bytes()
    return Shipped(result, data, node)


def trace_path(result: object, job: object) -> Path | None:
    """Where the trace of a result that is a row lives: a relative path is under the job's `out` folder."""
    if not isinstance(result, Row) or result.trace is None:
        return None
    path = Path(result.trace)
    out = getattr(job, "out", None)
    return path if path.is_absolute() or out is None else Path(out) / path


def land(shipped: Shipped[R], job: object = None) -> R:
    """On the driver: write a shipped trace where the row says it is (unless already visible); flag a missing one."""
    result = shipped.result
    path = trace_path(result, job)
    if path is None:
        return result
    if shipped.trace_data is not None and not path.exists():
        try:
            _write_atomic(path, shipped.trace_data)
        except OSError as exc:
            return _flag(result, path, f"writing it failed: {exc.strerror or exc}")
    if not path.exists():
        return _flag(result, path, f"it was written on node {shipped.node} and not sent back")
    return result


def _write_atomic(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file, so a reader never sees half a trace."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.part")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def _flag(result: R, path: Path, why: str) -> R:
    """The row with an error saying its trace is not visible on the driver (SKM729)."""
    assert isinstance(result, Row)
    note = f"{codes.TRACE_NOT_VISIBLE.code} {codes.TRACE_NOT_VISIBLE.slug}: the trace {path} is not visible on " \
           f"the driver ({why})"
    return attrs.evolve(result, error=f"{result.error}; {note}" if result.error else note)
