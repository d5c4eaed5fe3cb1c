"""Tool implementations: the agent tool kit, the built-in `bash`, and Python callables registered from a module.

Only tools in the machine's interface table can be called. A tool returns a
dict of results; the runtime checks it against the declared result types. A
tool that raises, times out or returns the wrong shape is a *failed
operation*: the run goes to the fallback, it never crashes.

`ToolBox.for_run(machine, workdir=..., skill_dir=...)` is the tool box of one
run: the kit (`read`, `write`, `edit`, `glob`, `grep`, `bash`, `fetch`,
`ask_user`; implemented in `toolkit.py`) confined to the run's places
(`places.py`), the machine's capability set (`allow ...`) enforced on every
call, and each kit call's *effect* (what it read, wrote, ran or fetched)
reported with its results (`ToolResults.effects`, `ToolBox.last_effects`,
`ToolError.effects`) for the step's `ToolCall` record.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

import attrs

from skillc.diagnostics.files import scrub
from skillc.ir.machine import Machine, Tool
from skillc.ir.toolkit import KIT
from skillc.runtime.jsonvalue import Object, Value
from skillc.sandbox.box import call_python

if TYPE_CHECKING:
    from skillc.runtime.places import Places
    from skillc.runtime.toolkit import Capabilities

ToolFn = Callable[..., Value]
#: One effect of a kit call, as the trace records it (`{"op": "write", "path": ..., "bytes": ..., "sha256": ...}`).
Effect: TypeAlias = Object
#: How long `bash` reads on after its command ended: its output is in the pipes then, and only a process that
#: left the command's process group (`setsid`) can keep them open, for good if it is a daemon.
DRAIN_GRACE_S = 2.0
#: The most seconds one `bash` call may ask for with its `timeout` argument.
MAX_BASH_TIMEOUT_S = 3600


def _find_shell() -> tuple[str, str]:
    """The shell `bash` runs commands with, and a note for stderr when it is not bash."""
    for candidate in ("/bin/bash", shutil.which("bash")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate, ""
    return "/bin/sh", "[skillc: no bash on this system: the command ran with /bin/sh]\n"


SHELL, SHELL_NOTE = _find_shell()


def _absolute(folder: str | None) -> str | None:
    """A working folder made absolute once, when the tools are set up: the toolbox enters it before calling a
    tool, so a relative one would otherwise be looked up again inside itself (`.skillc/run/.skillc/run`)."""
    return None if folder is None else os.path.abspath(folder)


class ToolError(Exception):
    """The tool failed to produce results. `effects`: what a kit call did before it failed (a `bash` command that
    timed out ran for that long), or None."""

    effects: tuple[Effect, ...] | None = None

    def __init__(self, *args: object, effects: Iterable[Effect] | None = None) -> None:
        super().__init__(*args)
        if effects is not None:
            self.effects = tuple(effects)


class ToolResults(Object):
    """A tool's results (a dict) carrying the call's effects: None for a tool that reports none (a Python tool, a
    script's result), else one JSON object per effect. Layered tool sources pass it through unchanged."""

    __slots__ = ("effects",)
    effects: tuple[Effect, ...] | None


def effects_of(result: object) -> tuple[Effect, ...] | None:
    """The effects a tool source's result carries (None: none reported)."""
    effects = getattr(result, "effects", None)
    return effects if isinstance(effects, tuple) else None


class KitTool:
    """A tool of the kit: `invoke(**args)` returns its results and its effect; calling it returns the results."""

    def invoke(self, **args: Value) -> tuple[Object, Effect]:
        raise NotImplementedError

    def __call__(self, **args: Value) -> Object:
        return self.invoke(**args)[0]


class _TimedOut(BaseException):
    """Raised inside a Python tool when its time is up (a BaseException, so the tool's `except Exception`
    cannot swallow it)."""


@attrs.define
class BashTool(KitTool):
    """Runs a shell command (`command: str`, with real bash: `/bin/bash -c`) or an argument vector (`argv`).

    Values built into a command with `++` should be quoted with `quote(x)`; an
    argument vector needs no quoting at all. Output is capped. The command runs
    in a process group of its own; on timeout the whole group is killed, and when
    the command ends any process it left behind in its group is killed too, so a
    tool step never leaves processes running (one that calls `setsid` escapes, and
    if it keeps the output open, what it writes after the command ended is not read:
    the result comes back DRAIN_GRACE_S after the command ends, its stderr saying so).

    `cwd` (an argument of the call) is a folder relative to the work folder and must lie in the run's places;
    `timeout` (seconds) replaces `timeout_s` for one call. The command's environment has `WORKDIR` (and
    `SKILL_DIR` when the run has a skill folder). Without bash on the system, `/bin/sh` runs the command and
    its stderr says so.
    """

    timeout_s: float = 60.0
    max_output: int = 1_000_000
    cwd: str | None = attrs.field(default=None, converter=_absolute)
    #: The run's places: `cwd` arguments are confined to them; None: the places of `cwd` (or the current folder).
    places: Places | None = None
    #: Called with each command's process as soon as it starts (its process group is its pid), so a caller that
    #: stops the run (`skillc serve`, when its client cancels) can kill the group; None: nobody is told.
    started: Callable[[subprocess.Popen[bytes]], None] | None = None

    def __call__(self, command: str | None = None, argv: list[str] | None = None, **more: Value) -> Object:
        return self.invoke(command=command, argv=argv, **more)[0]

    def _places(self) -> Places:
        if self.places is None:
            from skillc.runtime.places import Places  # local: places imports this module (ToolError)

            self.places = Places(self.cwd or os.getcwd())
        return self.places

    def invoke(self, command: str | None = None, argv: list[str] | None = None, cwd: str | None = None,
               timeout: int | float | None = None, **_: Value) -> tuple[Object, Effect]:
        if (command is None) == (argv is None):
            raise ToolError("bash takes exactly one of `command` or `argv`")
        if command is not None and not isinstance(command, str):
            raise ToolError(f"`command` must be text, not {type(command).__name__}")
        if argv is not None and not (isinstance(argv, list) and all(isinstance(a, str) for a in argv)):
            raise ToolError("`argv` must be a list of strings")
        args: list[str] = [SHELL, "-c", command] if command is not None else list(argv or [])
        if not args:
            raise ToolError("`argv` is empty")
        limit = self.timeout_s
        if timeout is not None:
            if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
                raise ToolError(f"`timeout` must be a positive number of seconds, not {timeout!r}")
            limit = min(float(timeout), MAX_BASH_TIMEOUT_S)
        env: dict[str, str] | None = None
        folder = self.cwd
        if cwd is not None or self.places is not None:
            places = self._places()
            folder = str(places.folder(cwd)) if cwd is not None else (self.cwd or str(places.workdir))
            env = dict(os.environ)
            env.pop("SKILL_DIR", None)
            env.update(places.env())
        if folder is not None and not os.path.isdir(folder):
            raise ToolError(f"the working directory {folder} does not exist or is not a folder")
        shown = "." if self.places is None or folder is None else self.places.show(folder)
        started = time.monotonic()
        try:
            proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                    cwd=folder, env=env, start_new_session=True)
        except (OSError, ValueError) as exc:  # ValueError: a NUL byte in an argument
            raise ToolError(f"cannot run {args[0]!r}: {getattr(exc, 'strerror', None) or exc}") from None
        if self.started is not None:
            self.started(proc)
        out, err = _Drain(proc.stdout, self.max_output), _Drain(proc.stderr, self.max_output)
        try:
            proc.wait(timeout=limit)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc.pid)  # the timed-out command, or what it left running in the background
            proc.wait()
            # What the command wrote is in the pipes by now; only a process outside its group can hold them open.
            until = time.monotonic() + DRAIN_GRACE_S
            held = [d for d in (out, err) if not d.finish(until)]
        effect: Effect = {"op": "bash", "exit_code": proc.returncode,
                          "duration_ms": round((time.monotonic() - started) * 1000, 1), "cwd": shown}
        if timed_out:
            raise ToolError(f"timed out after {limit:g} s (its processes were killed)",
                            effects=({**effect, "exit_code": None, "timed_out": True},))
        note = ("\n[skillc: output left unread: a process that left the command's process group holds it open]"
                if held else "")
        shell_note = SHELL_NOTE if command is not None else ""
        return {"stdout": out.text(), "stderr": shell_note + err.text() + note, "exit_code": proc.returncode}, effect


_set = object.__setattr__


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
    """`bash` keeps its own timeout (it kills the process group); a person answering `ask_user` gets no limit; a
    tool that bounds every wait itself (`bounded`: an MCP server's tool) gets no second limit."""
    if isinstance(fn, BashTool) or getattr(fn, "bounded", False) is True:
        return True
    from skillc.runtime.interaction import AskUser  # local: interaction imports this module (ToolError)

    return isinstance(fn, AskUser)


def _within(timeout_s: float | None, fn: ToolFn, args: Object) -> Value:
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
    box: Object = {}

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


#: `--tools` functions run in a box (`skillc.sandbox`) unless this is set to 0 (then in skillc's process, for tools
#: written for the in-process contract); see docs/security.md.
ENV_CONFINE_TOOLS = "SKILLC_CONFINE_TOOLS"


class ConfinedTool:
    """One function of a `--tools` module, called in a box (`skillc.sandbox`) each time: a fresh process in the
    current folder (the run's work folder, the only one it may write where Landlock exists), with a minimal
    environment (skillc's own `SKILLC_*` settings kept, no secrets), no network and the tool timeout. Arguments
    and results travel as JSON; module state does not survive between calls; its prints go to stderr."""

    bounded = True  # the box enforces the timeout: the tool box adds none of its own

    def __init__(self, path: Path, name: str, timeout_s: float | None) -> None:
        self.path, self.name, self.timeout_s = path, name, timeout_s
        self.__name__ = name

    def __call__(self, **args: Value) -> Value:
        """Run the function in a box; ToolError when it raises, exits, times out or returns no JSON."""


        timeout = self.timeout_s if self.timeout_s and self.timeout_s > 0 else MAX_BASH_TIMEOUT_S
        env = {k: v for k, v in os.environ.items() if k.startswith("SKILLC_")}
        call = call_python(self.path, self.name, scratch=Path.cwd(), kwargs=args,
                           module=f"skillc_tools_{self.path.stem}", env=env, timeout_s=timeout)
        if call.box.stderr:
            sys.stderr.write(call.box.stderr.decode("utf-8", errors="replace"))
        if call.box.timed_out:
            raise ToolError(f"timed out after {timeout:g} s")
        problem = call.problem()
        if problem is not None:
            kind = call.answer.get("kind") if call.answer is not None else None
            raise ToolError(f"the tool called {problem}" if kind == "exit" else problem)
        return call.value


def _confined_tools(path: Path, timeout_s: float | None) -> dict[str, ToolFn]:
    """The public functions of the module at `path`, found by importing it in a box; each called in one."""


    with tempfile.TemporaryDirectory(prefix="skillc-tools-") as scratch:
        found = call_python(path, None, scratch=Path(scratch), module=f"skillc_tools_{path.stem}",
                            timeout_s=timeout_s or 60.0)
    problem = found.problem()
    if problem is not None or found.answer is None:
        raise ToolError(f"importing {path} failed: {problem}")
    names = found.answer.get("functions")
    return {name: ConfinedTool(path.resolve(), name, timeout_s) for name in (names if isinstance(names, dict) else {})}


def tools_confined() -> bool:
    """Whether `--tools` functions run in a box: yes, unless SKILLC_CONFINE_TOOLS=0."""
    return os.environ.get(ENV_CONFINE_TOOLS, "1") != "0"


def load_module_tools(path: str | Path, *, confined: bool | None = None,
                      timeout_s: float | None = 60.0) -> dict[str, ToolFn]:
    """Public functions of a Python file, by name (`--tools mymod.py`): each run in a box (`ConfinedTool`), the
    module imported there too — or, with `confined=False` (default: SKILLC_CONFINE_TOOLS=0), imported here."""
    p = Path(path)
    if confined if confined is not None else tools_confined():
        return _confined_tools(p, timeout_s)
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

    found: dict[str, ToolFn] = {}
    for ep in entry_points(group="skillc.tools"):
        try:
            found[ep.name] = ep.load()
        except Exception:  # noqa: BLE001 - a broken plugin must not stop unrelated runs
            continue
    return found


@attrs.define
class ToolBox:
    """The implementations available to one run (`for_run`: the kit, confined and checked, plus module tools)."""

    functions: dict[str, ToolFn] = attrs.Factory(dict)

    #: Seconds a Python tool (from --tools or an entry point) may run; None: no limit.
    timeout_s: float | None = None
    #: The run's working folder: `bash` runs there, and Python tools are called with it as the current folder
    #: (so a tool's relative paths mean the same as the shell's); None: the process's own.
    cwd: str | None = attrs.field(default=None, converter=_absolute)
    #: The run's places (`for_run`), None for a tool box built by hand.
    places: Places | None = attrs.field(default=None, kw_only=True)
    #: The machine's capability set, enforced on every call (None: no list, every declared tool allowed).
    guard: Capabilities | None = attrs.field(default=None, kw_only=True)
    #: The effects of the last call (None: the tool reports none, or no call yet); `ToolResults.effects` too.
    last_effects: tuple[Effect, ...] | None = attrs.field(default=None, init=False)

    @classmethod
    def for_run(cls, machine: Machine | None, *, workdir: str | Path, skill_dir: str | Path | None = None,
                modules: Sequence[str] = (), timeout_s: float = 60.0, allow_hosts: Iterable[str] = (),
                ask_user: ToolFn | None = None, read_extra: Iterable[str | Path] = (),
                write_extra: Iterable[str | Path] = (), confine_modules: bool | None = None) -> ToolBox:
        """The tool box of one run: the kit confined to the places (the work folder read-write, the skill folder
        read-only, the extras), `fetch` limited to `allow_hosts` and the machine's `WebFetch(domain:...)`
        entries, the machine's `allow` list enforced, then entry-point and `--tools` module tools (a module's
        function of a kit name replaces the kit's). `ask_user`: the `ask_user` tool (default: the terminal);
        `confine_modules`: box the `--tools` functions (default: `tools_confined()`)."""
        # local: interaction, places and toolkit each import this module (ToolError, KitTool)
        from skillc.runtime.interaction import AskUser
        from skillc.runtime.places import Places
        from skillc.runtime.toolkit import Capabilities, kit_tools

        places = Places(workdir, skill_dir, read_extra, write_extra)
        allowed = tuple(machine.allowed) if machine is not None else ()
        guard = Capabilities(allowed, places) if allowed else None
        functions: dict[str, ToolFn] = dict(kit_tools(places, timeout_s=timeout_s, allow_hosts=allow_hosts,
                                                      guard=guard))
        functions["bash"] = BashTool(timeout_s=timeout_s, cwd=str(places.workdir), places=places)
        functions["ask_user"] = ask_user if ask_user is not None else AskUser()
        functions.update(entry_point_tools())
        for m in modules:
            functions.update(load_module_tools(m, timeout_s=timeout_s, confined=confine_modules))
        if machine is not None and any(t.mcp is not None for t in machine.tools.values()):
            # local: serve.client imports this module; the MCP SDK itself is imported when a server starts
            from skillc.serve.client import mcp_tools

            functions.update(mcp_tools(machine, workdir=places.workdir, timeout_s=timeout_s))
        return cls(functions, timeout_s, str(places.workdir), places=places, guard=guard)

    def close(self) -> None:
        """Stop what the run's tools started and keep (the MCP servers its `from mcp` tools started); idempotent."""
        for fn in {id(f): f for f in self.functions.values() if getattr(f, "bounded", False) is True}.values():
            close = getattr(fn, "close", None)
            if callable(close):
                close()

    @classmethod
    def default(cls, modules: Sequence[str] = (), timeout_s: float = 60.0, cwd: str | None = None) -> ToolBox:
        """The kit and module tools, without a machine's capability set: `for_run` with the work folder `cwd`
        (None: the current folder, as the process's own, not entered for Python tools)."""
        box = cls.for_run(None, workdir=cwd if cwd is not None else os.getcwd(), modules=modules,
                          timeout_s=timeout_s)
        if cwd is None:
            box.cwd = None
            bash = box.functions.get("bash")
            if isinstance(bash, BashTool):
                bash.cwd = None
        return box

    def missing(self, machine: Machine) -> list[str]:
        """Tools the machine's states call that have no implementation (a kit tool the machine declares with
        parameters or results the kit does not have is not implemented by the kit)."""
        called = {s.call.tool for s in machine.states.values() if s.call is not None}
        return sorted(t for t in called if not self._implements(t, machine.tools.get(t)))

    def _implements(self, name: str, declared: Tool | None) -> bool:
        fn = self.functions.get(name)
        if fn is None:
            return False
        if declared is None or not isinstance(fn, KitTool):
            return True

        kit = KIT.get(name)
        if kit is None:
            return True
        params, results = {p for p, _ in kit.params}, {r for r, _ in kit.results}
        return all(p in params for p, _ in declared.params) and all(r in results for r, _ in declared.results)

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        """As a `ToolSource`: the results of a real call (which state calls it does not matter)."""
        return self.call(tool, args)

    def call_with_effects(self, tool: Tool, args: Object) -> tuple[ToolResults, tuple[Effect, ...] | None]:
        """Call a tool: its declared results and its effects (None: a tool that reports none)."""
        results = self.call(tool, args)
        return results, results.effects

    def call(self, tool: Tool, args: Object) -> ToolResults:
        """Call a tool; results are filtered to the declared ones (a missing one is a failure). The results are a
        `ToolResults`: `.effects` (also `last_effects`) holds what a kit call did. A call outside the machine's
        capability set is refused before the tool runs (`ToolError` "outside allowed-tools: ...")."""
        _set(self, "last_effects", None)  # not through attrs' setattr hook: this is every tool step's path
        fn = self.functions.get(tool.name)
        if fn is None:
            raise ToolError(f"no implementation for tool `{tool.name}`")
        if self.guard is not None:
            self.guard.check(tool.name, args)
        effects: tuple[Effect, ...] | None = None
        try:
            if isinstance(fn, KitTool):  # absolute paths: no need to enter the work folder
                raw, effect = fn.invoke(**args) if _untimed(fn) else _within(self.timeout_s, fn.invoke, args)
                effects = (effect,)
            else:
                with contextlib.chdir(self.cwd) if self.cwd is not None else contextlib.nullcontext():
                    raw = fn(**args) if _untimed(fn) else _within(self.timeout_s, fn, args)
        except FileNotFoundError as exc:
            if self.cwd is not None and not os.path.isdir(self.cwd):
                raise ToolError(f"the working directory {self.cwd} does not exist or is not a folder") from None
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        except ToolError as exc:
            if exc.effects is not None:
                exc.effects = tuple(scrub(e) for e in exc.effects)
            _set(self, "last_effects", exc.effects)
            raise
        except _TimedOut:
            raise ToolError(f"timed out after {self.timeout_s:g} s") from None
        except SystemExit as exc:  # a tool must not end the run, let alone the process
            raise ToolError(f"the tool called sys.exit({exc.code!r})") from None
        except Exception as exc:  # noqa: BLE001 - a failing tool is a failed operation, not a crash
            raise ToolError(f"{type(exc).__name__}: {exc}") from None
        if effects is not None:
            effects = tuple(scrub(e) for e in effects)  # file names may hold bytes that are not UTF-8
        _set(self, "last_effects", effects)  # the call ran: what it did stands even if its results are wrong
        names = [r for r, _ in tool.results]
        if not isinstance(raw, dict):
            if len(names) == 1:
                raw = {names[0]: raw}
            elif not names:
                raw = {}
            else:
                raise ToolError(f"tool `{tool.name}` must return an object with {', '.join(names)}",
                                effects=effects)
        missing = [r for r in names if r not in raw]
        if missing:
            raise ToolError(f"tool `{tool.name}` returned no {', '.join(missing)}", effects=effects)
        out = ToolResults()
        for r in names:
            out[r] = raw[r]
        out.effects = effects
        return out
