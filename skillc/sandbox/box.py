"""`run_confined`: one command in a box, the strongest confinement this machine offers, and what was applied.

The box is a supervisor process (`_box.py`, standard library only) in a new session with a minimal
environment, in the scratch folder. It enters new user, PID and network namespaces where the kernel lets it,
reaps every orphan, and forks the target, which sets its resource limits and Landlock rules before `exec`.
Every layer is detected at run time; one that is missing is reported (`Confined.missing`), never faked.
`SKILLC_SANDBOX_OFF=landlock,namespaces` turns layers off (the degradation path, for tests and for kernels
that misbehave).
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Final

import attrs

import skillc
from skillc.diagnostics import Diagnostic, make
from skillc.sandbox import _box, codes

_BOX: Final = Path(_box.__file__)
#: The most bytes of the target's stdout and of its stderr that are kept.
MAX_OUTPUT: Final = 1 << 20
#: The layers a caller (or `SKILLC_SANDBOX_OFF`) may turn off.
OPTIONAL_LAYERS: Final = ("landlock", "namespaces", "pids-cgroup")
#: Seconds the parent waits past the timeout for the supervisor to report before it kills the box itself.
GRACE_S: Final = 10.0
#: The environment variable that turns layers off (comma-separated names from OPTIONAL_LAYERS).
ENV_OFF: Final = "SKILLC_SANDBOX_OFF"
#: Whether a box of this process has entered the namespaces (then the next ones skip the supervisor's probe).
_ENTERED: dict[bool, bool] = {}

_ETC: Final = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "passwd", "group", "nsswitch.conf",
               "hosts", "host.conf", "resolv.conf", "ssl", "ca-certificates", "alternatives", "mime.types",
               "os-release", "protocols", "services", "debian_version", "bash.bashrc", "profile", "inputrc",
               "locale.alias", "timezone")
_SYSTEM: Final = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/proc", "/dev/null", "/dev/zero",
                  "/dev/urandom", "/dev/random", "/dev/full")
_DEVICES: Final = ("/dev/null", "/dev/zero", "/dev/full")


@attrs.frozen
class Confined:
    """What a confined command did, and how it was confined.

    `exit`: its exit status (None when a signal ended it: `signal`, or it timed out); `timed_out`: killed at the
    time limit with everything it started; `strays`: processes it left running that the box killed;
    `layers`: the confinement applied; `missing`: (layer, why) for each one this machine did not give.
    """

    exit: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    signal: int | None = None
    strays: int = 0
    layers: tuple[str, ...] = ()
    missing: tuple[tuple[str, str], ...] = ()
    truncated: bool = False

    @property
    def ok(self) -> bool:
        """It ran to completion and exited 0."""
        return self.exit == 0 and not self.timed_out

    @property
    def killed(self) -> bool:
        """A signal ended it (a resource limit: SIGKILL, SIGXCPU, SIGXFSZ, SIGSEGV …) or the time limit did."""
        return self.timed_out or self.signal is not None

    def why(self) -> str:
        """How it ended, in a few words, for a failure's reason."""
        if self.timed_out:
            return "it ran past its time limit and was killed with everything it started"
        if self.signal is not None:
            return f"it was killed by {_signal_name(self.signal)}" + (
                " (its CPU time limit)" if self.signal == signal.SIGXCPU else
                " (its file size limit)" if self.signal == signal.SIGXFSZ else "")
        return f"it exited {self.exit}"


#: What each optional layer would have prevented, for SKM944.
_PREVENTS: Final = {
    "landlock": ("writes outside the scratch folder, reads outside the system and Python, TCP and signals out of "
                 "the box"),
    "namespaces": "network use and processes outliving the box outside the reaper's reach",
    "network": "network connections",
    "reaper": "daemons outliving the box",
    "pids-cgroup": "fork bombs run as root (the kernel does not count root's processes against RLIMIT_NPROC; the "
                   "timeout still ends them)",
}


def degraded_notes(box: Confined) -> list[Diagnostic]:
    """SKM944 (a note) for each layer the box did not get, with what it would have prevented."""

    return [make(codes.CONFINEMENT_DEGRADED, f"confinement layer `{layer}` is missing ({why}): it would prevent "
                                             f"{_PREVENTS.get(layer, 'more')}")
            for layer, why in box.missing]


def _signal_name(number: int) -> str:
    """SIGKILL for 9."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def disabled_layers(disable: Iterable[str] = ()) -> frozenset[str]:
    """The layers turned off, by the caller and by `SKILLC_SANDBOX_OFF`."""
    names = {n.strip() for n in os.environ.get(ENV_OFF, "").split(",") if n.strip()}
    return frozenset(n for n in (*names, *disable) if n in OPTIONAL_LAYERS)


def available_layers() -> dict[str, str]:
    """What this machine offers, by layer: the Landlock ABI, or why a layer is missing (for docs and `skillc`)."""
    abi = _box.landlock_abi()
    found = {"landlock": f"ABI {abi}" if abi else "missing: this kernel has no Landlock"}
    with tempfile.TemporaryDirectory(prefix="skillc-probe-") as scratch:
        probe = run_confined([sys.executable, "-I", "-S", "-c", "pass"], scratch=Path(scratch), timeout_s=30)
    entered = [n for n in probe.layers if n.endswith("namespace")]
    found["namespaces"] = ", ".join(entered) if entered else "missing: " + dict(probe.missing).get("namespaces", "")
    return found


def minimal_env(scratch: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """PATH, HOME (the scratch folder), TMPDIR, LANG and `extra`: nothing inherited, so no secret travels."""
    path = os.pathsep.join(dict.fromkeys((str(Path(sys.executable).parent), "/usr/local/bin", "/usr/bin", "/bin")))
    env = {"PATH": path, "HOME": str(scratch), "TMPDIR": str(scratch), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    env.update(extra or {})
    return env


def python_paths() -> tuple[str, ...]:
    """The folders this Python reads its standard library and packages from."""
    found = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable))}
    return tuple(sorted(p for p in found if p))


def skillc_home() -> str:
    """The folder skillc is imported from (site-packages, or the checkout of an editable install)."""

    return str(Path(skillc.__file__).resolve().parent.parent)


def default_readable() -> tuple[str, ...]:
    """What every confined command may read: the system's programs and libraries, a few /etc files, Python."""
    return (*_SYSTEM, *(f"/etc/{name}" for name in _ETC), *python_paths())


def _resolve_program(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """argv with its program as an absolute path (exec does not search PATH)."""
    program = argv[0]
    if os.sep not in program:
        program = shutil.which(program, path=env.get("PATH")) or program
    return [os.path.abspath(program), *argv[1:]]


def _read_bounded(f: IO[bytes]) -> tuple[bytes, bool]:
    """The first MAX_OUTPUT bytes of a file, and whether there was more."""
    f.seek(0)
    data = f.read(MAX_OUTPUT + 1)
    return data[:MAX_OUTPUT], len(data) > MAX_OUTPUT


def run_confined(argv: Sequence[str], *, scratch: Path, readable: Iterable[str | Path] = (),
                 writable: Iterable[str | Path] = (), env: Mapping[str, str] | None = None,
                 timeout_s: float, memory_mb: int | None = 2048, file_mb: int = 256, processes: int = 256,
                 network: bool = False, stdin: bytes | None = None, restrict_reads: bool = True,
                 disable: Iterable[str] = (), cwd: Path | None = None) -> Confined:
    """Run `argv` confined: cwd and HOME `scratch` (the only folder it may write, with `writable`), reads limited
    to `readable`, the system and Python (when `restrict_reads`), no network unless `network`, the environment
    `minimal_env(scratch, env)`, in `cwd` (a folder in scratch; default scratch), at most `timeout_s` of wall time \
(CPU time likewise), `memory_mb` of address
    space, `file_mb` per file and `processes`; killed with everything it started at the end.

    OSError when the box itself cannot start (no Python, no fork); KeyboardInterrupt kills the box and goes on.
    """
    scratch = Path(scratch).resolve()
    full_env = minimal_env(scratch, env)
    disabled = sorted(disabled_layers(disable))
    spec: dict[str, object] = {
        "argv": _resolve_program(argv, full_env), "env": full_env, "cwd": str(cwd or scratch),
        "readable": [*default_readable(), *map(str, readable), str(scratch)],
        "writable": [str(scratch), *_DEVICES, *map(str, writable)],
        "network": network, "restrict_reads": restrict_reads, "timeout_s": timeout_s,
        "cpu_s": max(1, int(timeout_s) + 1), "memory_mb": memory_mb, "file_mb": file_mb, "processes": processes,
        "disabled": disabled, "parent": os.getpid(), "probe": not _ENTERED.get(network, False),
    }
    read_fd, write_fd = os.pipe()
    spec["status_fd"] = write_fd
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as given:
        given.write(stdin or b"")
        given.seek(0)
        try:
            proc = subprocess.Popen([sys.executable, "-I", "-S", str(_BOX), json.dumps(spec)], cwd=scratch,
                                    env=full_env, stdin=given, stdout=out, stderr=err, pass_fds=(write_fd,),
                                    start_new_session=True)
        finally:
            os.close(write_fd)
        try:
            _wait(proc, timeout_s + GRACE_S)
            report = _report(read_fd)
        finally:
            os.close(read_fd)
            if proc.poll() is None:
                _kill(proc)
        stdout, cut_out = _read_bounded(out)
        stderr, cut_err = _read_bounded(err)
    result = _result(report, stdout, stderr, cut_out or cut_err, disabled)
    if "user-namespace" in result.layers or "pid-namespace" in result.layers:
        _ENTERED[network] = True
    return result


def _wait(proc: subprocess.Popen[bytes], limit_s: float) -> None:
    """Wait for the supervisor; past `limit_s` (it hung) kill it — its target dies with it (PDEATHSIG).

    A pidfd wakes this the moment the supervisor ends; `Popen.wait(timeout=…)` polls with sleeps of up to 50 ms,
    which a tool call of a run paid every time."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # not Linux 5.3+, or no pidfds here: poll
        fd = None
    try:
        if fd is not None:
            select.select([fd], [], [], limit_s)
        proc.wait(timeout=0 if fd is not None else limit_s)
    except subprocess.TimeoutExpired:
        _kill(proc)
    finally:
        if fd is not None:
            os.close(fd)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Kill the box's session leader and its process group; the target dies with it (PDEATHSIG)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
    proc.wait()


def _report(fd: int) -> dict[str, object]:
    """The supervisor's status line (empty when it died before writing one)."""
    chunks = []
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    try:
        found = json.loads(b"".join(chunks).decode() or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _result(report: dict[str, object], stdout: bytes, stderr: bytes, truncated: bool,
            disabled: list[str]) -> Confined:
    """The typed result of a box's status line (a box with no report was killed from outside: timed out)."""
    if not report:
        return Confined(None, stdout, stderr, timed_out=True, truncated=truncated,
                        missing=tuple((n, "turned off") for n in disabled))
    exit_code, sig = report.get("exit"), report.get("signal")
    missing = report.get("missing")
    layers = report.get("layers")
    strays = report.get("strays")
    return Confined(exit_code if isinstance(exit_code, int) else None, stdout, stderr,
                    timed_out=report.get("timed_out") is True, signal=sig if isinstance(sig, int) else None,
                    strays=strays if isinstance(strays, int) else 0,
                    layers=tuple(str(x) for x in layers) if isinstance(layers, list) else (),
                    missing=tuple((str(k), str(v)) for k, v in missing.items()) if isinstance(missing, dict) else (),
                    truncated=truncated)


# ------------------------------------------------------------------ a Python function in the box

_PYCALL: Final = Path(__file__).with_name("_pycall.py")


@attrs.frozen
class PythonCall:
    """A confined Python call: its answer (`_pycall.py`'s JSON; None when it gave none) and how the box ended."""

    answer: dict[str, object] | None
    box: Confined

    @property
    def value(self) -> object:
        """The returned value (a tuple comes back as a tuple)."""
        assert self.answer is not None
        value = self.answer.get("value")
        if isinstance(value, dict) and set(value) == {"__tuple__"} and isinstance(value["__tuple__"], list):
            return tuple(value["__tuple__"])
        return value

    def problem(self) -> str | None:
        """Why the call gave no value, in a few words; None when it did."""
        if self.answer is None:
            said = self.box.stderr.decode("utf-8", errors="replace").strip().splitlines()
            return self.box.why() + (f": {said[-1][:200]}" if said and not self.box.timed_out else "")
        if self.answer.get("ok") is True:
            return None
        return str(self.answer.get("error", "it failed"))


def call_python(file: Path, function: str | None, *, scratch: Path, folder: Path | None = None,
                args: Sequence[object] = (),
                kwargs: Mapping[str, object] | None = None, paths: Iterable[int] = (), module: str | None = None,
                readable: Iterable[str | Path] = (), writable: Iterable[str | Path] = (),
                env: Mapping[str, str] | None = None, timeout_s: float, memory_mb: int | None = 2048,
                disable: Iterable[str] = ()) -> PythonCall:
    """Load the module `file` in a box and call `function(*args, **kwargs)` (the args at `paths` as Paths), or
    describe its public functions (`function` None). `folder` (default: the file's) is readable and first on the
    module's path, for its neighbours; so is skillc (a verifier may use `skillc.runtime.record`); the box runs in
    `scratch`."""
    file = Path(file).resolve()
    home = Path(folder).resolve() if folder is not None else file.parent
    request = {"op": "describe" if function is None else "call", "file": str(file), "folder": str(home),
               "module": module or file.stem, "function": function, "args": list(args),
               "kwargs": dict(kwargs or {}), "paths": list(paths)}
    box = run_confined([sys.executable, "-I", str(_PYCALL)], scratch=scratch,
                       readable=[str(home), str(file), str(_PYCALL), skillc_home(), *map(str, readable)],
                       writable=writable, env=env,
                       timeout_s=timeout_s, memory_mb=memory_mb, stdin=json.dumps(request, default=str).encode(),
                       disable=disable)
    try:
        answer = json.loads(box.stdout.decode("utf-8")) if box.stdout else None
    except ValueError:
        answer = None
    return PythonCall(answer if isinstance(answer, dict) else None, box)
