"""Tool implementations: the built-in `bash` and Python callables registered from a module.

Only tools in the machine's interface table can be called. A tool returns a
dict of results; the runtime checks it against the declared result types. A
tool that raises, times out or returns the wrong shape is a *failed
operation*: the run goes to the fallback, it never crashes.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from skillc.ir.machine import Machine, Tool

ToolFn = Callable[..., Any]
#: How long `bash` reads on after its command ended: its output is in the pipes then, and only a process that
#: left the command's process group (`setsid`) can keep them open, for good if it is a daemon.
DRAIN_GRACE_S = 2.0


def _absolute(folder: str | None) -> str | None:
    """A working folder made absolute once, when the tools are set up: the toolbox enters it before calling a
    tool, so a relative one would otherwise be looked up again inside itself (`.skillc/run/.skillc/run`)."""
    return None if folder is None else os.path.abspath(folder)


class ToolError(Exception):
    """The tool failed to produce results."""


class _TimedOut(BaseException):
    """Raised inside a Python tool when its time is up (a BaseException, so the tool's `except Exception`
    cannot swallow it)."""


@attrs.define
class BashTool:
    """Runs a shell command (`command: str`) or an argument vector (`argv: list[str]`).

    Values built into a command with `++` should be quoted with `quote(x)`; an
    argument vector needs no quoting at all. Output is capped. The command runs
    in a process group of its own; on timeout the whole group is killed, and when
    the command ends any process it left behind in its group is killed too, so a
    tool step never leaves processes running (one that calls `setsid` escapes, and
    if it keeps the output open, what it writes after the command ended is not read:
    the result comes back DRAIN_GRACE_S after the command ends, its stderr saying so).
    """

    timeout_s: float = 60.0
    max_output: int = 1_000_000
    cwd: str | None = attrs.field(default=None, converter=_absolute)

    def __call__(self, command: str | None = None, argv: list[str] | None = None, **_: Any) -> dict[str, Any]:
        if (command is None) == (argv is None):
            raise ToolError("bash takes exactly one of `command` or `argv`")
        args: Any = ["/bin/sh", "-c", command] if command is not None else list(argv or [])
        if not args:
            raise ToolError("`argv` is empty")
        if self.cwd is not None and not os.path.isdir(self.cwd):
            raise ToolError(f"the working directory {self.cwd} does not exist or is not a folder")
        try:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    cwd=self.cwd, start_new_session=True)
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
            raise ToolError(f"cannot run {args[0]!r}: {getattr(exc, 'strerror', None) or exc}") from None
        out, err = _Drain(proc.stdout, self.max_output), _Drain(proc.stderr, self.max_output)
        try:
            proc.wait(timeout=self.timeout_s)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc.pid)  # the timed-out command, or what it left running in the background
            proc.wait()
            # What the command wrote is in the pipes by now; only a process outside its group can hold them open.
            until = time.monotonic() + DRAIN_GRACE_S
            held = [d for d in (out, err) if not d.finish(until)]
        if timed_out:
            raise ToolError(f"timed out after {self.timeout_s:g} s (its processes were killed)")
        note = ("\n[skillc: output left unread: a process that left the command's process group holds it open]"
                if held else "")
        return {"stdout": out.text(), "stderr": err.text() + note, "exit_code": proc.returncode}


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping the first `limit` bytes (a full pipe never blocks the command)."""

    def __init__(self, pipe, limit: int) -> None:
        super().__init__(daemon=True)
        self.pipe, self.limit = pipe, limit
        self.chunks: list[bytes] = []
        self.size = 0
        self.start()

    def run(self) -> None:
        with self.pipe:
            while chunk := self.pipe.read1(65536) if hasattr(self.pipe, "read1") else self.pipe.read(65536):
                if self.size <= self.limit:
                    self.chunks.append(chunk)
                self.size += len(chunk)

    def finish(self, until: float) -> bool:
        """Wait until the monotonic time `until` at most for the pipe's end; False when something still holds it."""
        self.join(max(until - time.monotonic(), 0.0))
        return not self.is_alive()

    def text(self) -> str:
        return _cap(b"".join(list(self.chunks)), self.limit, self.size)  # a copy: a held pipe may still be read


def _cap(data: bytes, limit: int, size: int | None = None) -> str:
    text = data[:limit].decode("utf-8", errors="replace")
    return text + ("\n[output truncated]" if (size if size is not None else len(data)) > limit else "")


def _untimed(fn: ToolFn) -> bool:
    """`bash` keeps its own timeout (it kills the process group); a person answering `ask_user` gets no limit."""
    from skillc.runtime.interaction import AskUser

    return isinstance(fn, (BashTool, AskUser))


def _within(timeout_s: float | None, fn: ToolFn, args: dict[str, Any]) -> Any:
    """Call a Python tool, interrupting it when `timeout_s` passes.

    In the main thread a real-time timer raises `_TimedOut` inside the tool (it
    stops sleeps and Python loops, not a C call that ignores signals). Elsewhere
    the tool runs in a daemon thread that is abandoned on timeout: the run goes
    on, but what the abandoned call still does cannot be undone.
    """
    if not timeout_s or timeout_s <= 0:
        return fn(**args)
    if threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer"):
        def expire(signum, frame):
            raise _TimedOut()

        previous = signal.signal(signal.SIGALRM, expire)
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            return fn(**args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["value"] = fn(**args)
        except BaseException as exc:  # noqa: BLE001 - carried back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise _TimedOut()
    if "error" in box:
        raise box["error"]
    return box.get("value")


def load_module_tools(path: str | Path) -> dict[str, ToolFn]:
    """Public functions of a Python file, by name (`--tools mymod.py`)."""
    p = Path(path)
    spec = importlib.util.spec_from_file_location(f"skillc_tools_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise ToolError(f"cannot load tools from {path}")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's module failed to import
        raise ToolError(f"importing {path} failed: {type(exc).__name__}: {exc}") from None
    return {name: fn for name, fn in vars(module).items()
            if inspect.isfunction(fn) and not name.startswith("_") and fn.__module__ == module.__name__}


def entry_point_tools() -> dict[str, ToolFn]:
    """Tools registered by installed packages under the `skillc.tools` entry-point group."""
    from importlib.metadata import entry_points

    found: dict[str, ToolFn] = {}
    for ep in entry_points(group="skillc.tools"):
        try:
            found[ep.name] = ep.load()
        except Exception:  # noqa: BLE001 - a broken plugin must not stop unrelated runs
            continue
    return found


@attrs.define
class ToolBox:
    """The implementations available to one run."""

    functions: dict[str, ToolFn] = attrs.Factory(dict)

    #: Seconds a Python tool (from --tools or an entry point) may run; None: no limit.
    timeout_s: float | None = None
    #: The run's working folder: `bash` runs there, and Python tools are called with it as the current folder
    #: (so a tool's relative paths mean the same as the shell's); None: the process's own.
    cwd: str | None = attrs.field(default=None, converter=_absolute)

    @classmethod
    def default(cls, modules: Sequence[str] = (), timeout_s: float = 60.0, cwd: str | None = None) -> ToolBox:
        from skillc.runtime.interaction import AskUser

        functions: dict[str, ToolFn] = {"bash": BashTool(timeout_s=timeout_s, cwd=cwd), "ask_user": AskUser()}
        functions.update(entry_point_tools())
        for m in modules:
            functions.update(load_module_tools(m))
        return cls(functions, timeout_s, cwd)

    def missing(self, machine: Machine) -> list[str]:
        """Tools the machine's states call that have no implementation."""
        called = {s.call.tool for s in machine.states.values() if s.call is not None}
        return sorted(t for t in called if t not in self.functions)

    def result(self, state: str, tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
        """As a `ToolSource`: the results of a real call (which state calls it does not matter)."""
        return self.call(tool, args)

    def call(self, tool: Tool, args: dict[str, Any]) -> dict[str, Any]:
        """Call a tool; results are filtered to the declared ones (a missing one is a failure)."""
        fn = self.functions.get(tool.name)
        if fn is None:
            raise ToolError(f"no implementation for tool `{tool.name}`")
        try:
            with contextlib.chdir(self.cwd) if self.cwd is not None else contextlib.nullcontext():
                raw = fn(**args) if _untimed(fn) else _within(self.timeout_s, fn, args)
        except FileNotFoundError as exc:
            if self.cwd is not None and not os.path.isdir(self.cwd):
                raise ToolError(f"the working directory {self.cwd} does not exist or is not a folder") from None
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        except ToolError:
            raise
        except _TimedOut:
            raise ToolError(f"timed out after {self.timeout_s:g} s") from None
        except SystemExit as exc:  # a tool must not end the run, let alone the process
            raise ToolError(f"the tool called sys.exit({exc.code!r})") from None
        except Exception as exc:  # noqa: BLE001 - a failing tool is a failed operation, not a crash
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        names = [r for r, _ in tool.results]
        if not isinstance(raw, dict):
            if len(names) == 1:
                raw = {names[0]: raw}
            elif not names:
                raw = {}
            else:
                raise ToolError(f"tool `{tool.name}` must return an object with {', '.join(names)}")
        missing = [r for r in names if r not in raw]
        if missing:
            raise ToolError(f"tool `{tool.name}` returned no {', '.join(missing)}")
        return {r: raw[r] for r in names}


