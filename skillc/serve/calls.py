"""One served call: a run of a checked machine in a thread of its own, its folder, its stop, its report.

No MCP here: `server.py` speaks the protocol, this module runs machines. A call gets a fresh work folder
(`ROOT/calls/NAME-ID/work`, its trace beside it) unless its machine takes a `workdir` argument that names a
folder under the root, and is journaled in `ROOT/runs.sqlite`, so a run that waits for its user survives the
call (and the server) and continues once with `skillc_resume` (a token from `tokens.py`).

The run's thread talks to the event loop only through its `Call`: `events` carries `Need`s (the run needs the
client: the user's answer through elicitation, or the client's model through sampling) and the final `Finished`
/ `Failed`; `answer` hands back what the client said. `stop()` ends a run the client cancelled or left: between
operations the run stops when the next one would start, and inside one (a `bash` command, a Python tool, a model
request) what it waits on is cut short where it can be (a `bash` command's process group is killed, a question to
the client abandoned) and `Stopped` raised when the operation returns, so the interpreter marks the run
interrupted in its journal and closes its trace. Waits are bounded: `stop` waits `grace_s` at most.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import os
import queue
import signal
import stat
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.from_thread
import anyio.lowlevel
import attrs

from skillc.diagnostics.code import Code
from skillc.ir.machine import Machine, Tool
from skillc.runtime import make_executor
from skillc.runtime.executors.base import Executor, ExecutorError, Response
from skillc.runtime.interaction import USER, AskUser, NeedsUser
from skillc.runtime.interpreter import Interpreter, RunError, RunOptions, RunResult
from skillc.runtime.journal import Journal
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.prompts import Request
from skillc.runtime.record import read_run
from skillc.runtime.session import default_skill_dir, run_tools
from skillc.runtime.tools import BashTool, ToolBox
from skillc.runtime.toolsource import ToolSource, tools_for
from skillc.serve import codes
from skillc.serve.catalog import WORKDIR_ARG, Entry

#: Most files a result lists (the rest are counted in `files_truncated`).
MAX_FILES = 1000
#: Seconds `stop` waits for a run's thread to end by default.
STOP_GRACE_S = 10.0
#: Executor kinds that hold a run's own state (a script's position): made afresh for every call.
PER_CALL_KINDS = ("scripted", "replay", "recorded")


class TokenRefused(RunError):
    """A resume token's run cannot take the answer: it is not waiting (finished, or answered already), the answer
    is off its menu, or the machine changed since (SKM893)."""

    code = codes.BAD_RESUME_TOKEN


class Stopped(KeyboardInterrupt):
    """Raised in a run's thread when its call is stopped: the interpreter marks the run interrupted (resumable),
    closes the trace and releases the lease, as for Ctrl-C; `bash` kills its process group on the way out."""


class Guard:
    """Stops one run: before its next operation, or inside one by killing what it waits on.

    Every model request and tool call runs between `enter` and `leave`. Once stopped, `enter` raises `Stopped`,
    and so does `leave`, whatever the operation returned: a step whose operation was cut short is never
    committed (a resumed run does it again, as after a crash). What an operation waits on is cut short where it
    can be: a `bash` command's process group is killed (`started` hears of each command), a question or a sampled
    reply that the client has not answered is abandoned (`Call.ask`). A Python tool or a model request of another
    executor is not interrupted: its result is dropped when it returns (within its own timeout).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.stopped = False
        self._procs: list[subprocess.Popen[bytes]] = []

    def enter(self) -> None:
        if self.stopped:
            raise Stopped()

    def leave(self) -> None:
        with self._lock:
            self._procs.clear()
        if self.stopped:
            raise Stopped()

    def started(self, proc: subprocess.Popen[bytes]) -> None:
        """A `bash` command started (its process group is its pid): killed at once when the run is stopped."""
        with self._lock:
            self._procs.append(proc)
            stopped = self.stopped
        if stopped:
            _kill_group(proc.pid)

    def stop(self) -> None:
        """Stop the run (from any thread); idempotent."""
        with self._lock:
            self.stopped = True
            procs = list(self._procs)
        for proc in procs:
            _kill_group(proc.pid)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class GuardedExecutor:
    """An executor whose requests the guard can stop; the inner executor's tool results are not offered (the
    call layers them itself) and everything else (`limit_time`, a replay's `verdicts`) is passed through."""

    def __init__(self, inner: Executor, guard: Guard) -> None:
        self.inner = inner
        self.guard = guard
        self.name = inner.name

    def complete(self, request: Request) -> Response:
        self.guard.enter()
        try:
            return self.inner.complete(request)
        finally:
            self.guard.leave()

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str) -> Any:
        if name == "tool_source":
            raise AttributeError(name)
        return getattr(self.inner, name)


class GuardedTools:
    """A tool source whose calls the guard can stop."""

    def __init__(self, inner: ToolSource, guard: Guard) -> None:
        self.inner = inner
        self.guard = guard

    def missing(self, machine: Machine) -> list[str]:
        return self.inner.missing(machine)

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        self.guard.enter()
        try:
            return self.inner.result(state, tool, args)
        finally:
            self.guard.leave()


# ---------------------------------------------------------------- what crosses between the run and the loop

@attrs.frozen
class Elicit:
    """The run asks its user (`ask_user`): the question and its menu (None: a free answer)."""

    question: str
    options: tuple[str, ...] | None = None


@attrs.frozen
class Sample:
    """A model or judge state for the client's model: the system prompt, the chat (user/assistant turns), the
    reply's token budget and how long the client may take."""

    state: str
    system: str
    messages: tuple[tuple[str, str], ...]
    max_tokens: int
    timeout_s: float | None


Need = Elicit | Sample


@attrs.frozen
class Reply:
    """The client's model's answer to a `Sample`."""

    text: str
    model: str | None = None


@attrs.frozen
class Report:
    """A call's result, as its structured content (`content()`)."""

    machine: str
    status: Literal["finished", "waiting"]
    workdir: str
    run_id: str | None
    trace: str | None
    outcome: str | None = None
    terminal: str | None = None
    steps: int = 0
    evidence: Object = attrs.Factory(dict)
    error: str | None = None
    files: tuple[Object, ...] = ()
    files_truncated: int = 0
    question: str | None = None
    options: tuple[str, ...] | None = None
    resume_token: str | None = None

    def content(self) -> Object:
        out: Object = {"status": self.status, "machine": self.machine, "run_id": self.run_id,
                               "workdir": self.workdir, "trace": self.trace}
        if self.status == "finished":
            out.update(outcome=self.outcome, terminal=self.terminal, steps=self.steps, evidence=self.evidence,
                       error=self.error, files=list(self.files))
            if self.files_truncated:
                out["files_truncated"] = self.files_truncated
        else:
            out.update(question=self.question, options=None if self.options is None else list(self.options),
                       steps=self.steps, resume_token=self.resume_token)
        return out

    def summary(self) -> str:
        """The text a client shows: one paragraph."""
        if self.status == "waiting":
            menu = f" (one of: {', '.join(self.options)})" if self.options else ""
            return (f"`{self.machine}` waits for the user: {self.question}{menu}. Answer with skillc_resume(token, "
                    f"answer) using resume_token {self.resume_token}. Work folder: {self.workdir}.")
        parts = [f"`{self.machine}` ended in `{self.terminal}` ({self.outcome}) after {self.steps} steps."]
        if self.error:
            parts.append(f"Why: {self.error}.")
        if self.evidence:

            shown = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)[:200]}" for k, v in self.evidence.items())
            parts.append(f"Evidence: {shown}.")
        if self.files:
            listed = ", ".join(f"{f['path']} ({f['bytes']} bytes, sha256 {f['sha256'][:12]}…)" for f in self.files[:20])
            more = len(self.files) - 20 + self.files_truncated
            parts.append(f"Delivered: {listed}" + (f" and {more} more" if more > 0 else "") + ".")
        else:
            parts.append("No file delivered.")
        parts.append(f"Work folder: {self.workdir}." + (f" Trace: {self.trace}." if self.trace else ""))
        return " ".join(parts)


@attrs.frozen
class Finished:
    report: Report


@attrs.frozen
class Failed:
    """The run could not start or broke: `message` for the client (with its SKM code when it has one)."""

    message: str


@attrs.frozen
class Ended:
    """The run's thread ended because the call was stopped (the run is interrupted in its journal)."""

    run_id: str | None


Event = Need | Finished | Failed | Ended


class Call:
    """One run in its thread, and the channel between it and the event loop (which must create it)."""

    def __init__(self, entry: Entry, *, grace_s: float = STOP_GRACE_S) -> None:
        self.entry = entry
        self.id = uuid.uuid4().hex[:10]
        self.guard = Guard()
        self.grace_s = grace_s
        self.done = threading.Event()
        self._token = anyio.lowlevel.current_token()
        self._send, self._receive = anyio.create_memory_object_stream[Event](max_buffer_size=64)
        self._inbox: queue.Queue[object] = queue.Queue()  # answers (values, replies) and exceptions
        self.run_id: str | None = None
        self.thread: threading.Thread | None = None

    # ------------------------------------------------------------ loop side

    def start(self, work: Callable[[Call], Report]) -> None:
        """Run `work(self)` in a thread of its own; its report (or failure) becomes the last event."""
        self.thread = threading.Thread(target=self._main, args=(work,), name=f"skillc-call-{self.id}", daemon=True)
        self.thread.start()

    async def next_event(self) -> Event:
        return await self._receive.receive()

    def answer(self, value: Value) -> None:
        """Hand the run what the client said (a `str` answer, a `Reply`, or an exception to raise there)."""
        self._inbox.put(value)

    async def stop(self) -> bool:
        """Stop the run and wait (`grace_s` at most, shielded from cancellation) for its thread; True when it ended."""
        self.guard.stop()
        self._inbox.put(Stopped())
        with anyio.CancelScope(shield=True):
            with anyio.move_on_after(self.grace_s):
                while not self.done.is_set():
                    await anyio.sleep(0.01)
        return self.done.is_set()

    # ------------------------------------------------------------ thread side

    def _main(self, work: Callable[[Call], Report]) -> None:
        event: Event
        try:
            event = Finished(work(self))
        except Stopped:
            event = Ended(self.run_id)
        except BaseException as exc:  # noqa: BLE001 - carried to the loop, which answers the client
            code = getattr(exc, "code", None)
            prefix = f"error[{code}]: " if isinstance(code, Code) else ""
            event = Failed(prefix + (str(exc) or type(exc).__name__))
        finally:
            self.done.set()
        self.post(event)

    def post(self, event: Event) -> None:
        """Send an event to the loop (from the run's thread); dropped when the loop has gone."""
        try:
            anyio.from_thread.run_sync(self._send.send_nowait, event, token=self._token)
        except (RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.WouldBlock):
            pass

    def ask(self, need: Need) -> Value:
        """Ask the client (from the run's thread) and wait for its answer; an exception answered is raised."""
        if self.guard.stopped:
            raise Stopped()
        self.post(need)
        value = self._inbox.get()
        if isinstance(value, BaseException):
            raise value
        return value


# ---------------------------------------------------------------- the client's answers, as the runtime sees them

class ElicitingUser(AskUser):
    """`ask_user` answered through the client (MCP elicitation): the user's answer goes back into the run; a user
    who declines or cancels leaves the run waiting in its journal (a resume token answers it later)."""

    def __init__(self, call: Call | None) -> None:
        super().__init__(answer=None, terminal=False)
        self.call = call

    def __call__(self, question: str = "", options: Sequence[str] | None = None, **_: object) -> dict[str, str]:
        if self.call is None:
            return super().__call__(question, options)
        self.last_source = None
        menu = tuple(str(o) for o in options) if options else None
        reply = self.call.ask(Elicit(question, menu))
        if reply is None:
            raise NeedsUser(question, menu, "the user declined to answer through the client")
        result = self._checked(str(reply), menu, USER)
        return result


class SamplingExecutor:
    """Model and judge states answered by the client's own model (MCP sampling): the state's prompt and output
    contract (its JSON Schema in the system prompt) go to the client; the reply is validated and retried by the
    interpreter as any executor's."""

    name = "sampling"

    def __init__(self, call: Call, *, max_tokens: int = 2048, timeout_s: float | None = 120.0) -> None:
        self.call = call
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self._limit: float | None = None

    def limit_time(self, seconds: float) -> None:
        """What is left of the step's deadline bounds the next request."""
        self._limit = seconds

    def complete(self, request: Request) -> Response:

        system = "\n\n".join(str(m["content"]) for m in request.messages if m.get("role") == "system")
        system += ("\n\nYour reply must be one JSON object that validates against this JSON Schema:\n"
                   + json.dumps(request.schema, ensure_ascii=False, sort_keys=True))
        turns = tuple((str(m["role"]), str(m["content"])) for m in request.messages if m.get("role") != "system")
        timeout = self.timeout_s
        if self._limit is not None:
            timeout = self._limit if timeout is None else min(timeout, self._limit)
            self._limit = None
        reply = self.call.ask(Sample(request.state, system, turns, self.max_tokens, timeout))
        if not isinstance(reply, Reply):
            raise ExecutorError(f"the client's model gave no text reply ({type(reply).__name__})")
        return Response(reply.text, reply.model)

    def close(self) -> None:
        return None


# ---------------------------------------------------------------- the files a run delivered

def delivered(workdir: Path, since: float) -> tuple[list[Object], int]:
    """Regular files under `workdir` changed at or after `since` (a time.time()), with their size and SHA-256,
    sorted by path; `.git` is not entered, links are not followed; at most MAX_FILES (the rest are counted)."""
    found: list[tuple[str, Path, int]] = []
    cutoff = int((since - 1.0) * 1e9)  # a second of slack for coarse file-system clocks
    for folder, dirs, names in os.walk(workdir):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in names:
            path = Path(folder) / name
            try:
                st = path.lstat()
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and st.st_mtime_ns >= cutoff:
                found.append((path.relative_to(workdir).as_posix(), path, st.st_size))
    found.sort()
    files = []
    for rel, path, size in found[:MAX_FILES]:
        digest = hashlib.sha256()
        try:
            with open(path, "rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError:
            continue
        files.append({"path": rel, "bytes": size, "sha256": digest.hexdigest()})
    return files, max(0, len(found) - MAX_FILES)


# ---------------------------------------------------------------- the server's runs

@attrs.define
class Settings:
    """What every call of one server shares: the executor, the tools' and models' limits, the root folder."""

    executor: str
    root: Path
    tools: tuple[str, ...] = ()
    base_url: str | None = None
    strategy: str = "auto"
    retries: int = 2
    max_steps: int = 1000
    tool_timeout_s: float = 60.0
    model_timeout_s: float = 120.0
    step_deadline_s: float = 600.0
    allow_hosts: tuple[str, ...] = ()
    #: Most tokens of a sampled reply (`--executor sampling`).
    max_tokens: int = 2048

    @property
    def journal(self) -> Path:
        return self.root / "runs.sqlite"


def make_root(workdir: str | None) -> Path:
    """The server's root: `--workdir` (made when missing), else a new temporary folder (kept after the server
    ends: results name files in it)."""
    if workdir is not None:
        root = Path(workdir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        return root
    return Path(tempfile.mkdtemp(prefix="skillc-serve-")).resolve()


class _Journal(Journal):
    """The journal, telling the call which run it registered (a stopped call names it)."""

    call: Call | None = None

    def start(self, machine_path: str, machine_hash: str, inputs: Object, executor: str,
              trace_path: str | None, workdir: str | None = None, skill_dir: str | None = None) -> str:
        run_id = super().start(machine_path, machine_hash, inputs, executor, trace_path, workdir=workdir,
                               skill_dir=skill_dir)
        if self.call is not None:
            self.call.run_id = run_id
        return run_id


class Runner:
    """Starts and resumes the runs of one server's calls (from their threads)."""

    def __init__(self, settings: Settings, shared: Executor | None = None) -> None:
        self.settings = settings
        self.shared = shared  # a model executor all calls use (openai:, anthropic:, local); None: made per call
        self._shared_lock = threading.Lock()

    # ------------------------------------------------------------ folders

    def folders(self, entry: Entry, args: Mapping[str, Value]) -> tuple[Path, Path]:
        """The call's work folder and trace path: a fresh `ROOT/calls/NAME-ID/`, or the `workdir` argument (a folder
        under the root) with the trace in a fresh call folder. ValueError names a `workdir` argument refused."""
        call_dir = self.settings.root / "calls" / f"{entry.name}-{uuid.uuid4().hex[:10]}"
        given = args.get(WORKDIR_ARG) if entry.takes_workdir else None
        if given is not None:
            if not isinstance(given, str) or not given:
                raise ValueError(f"`{WORKDIR_ARG}` must be a folder under {self.settings.root}")
            folder = Path(given) if os.path.isabs(given) else self.settings.root / given
            folder = folder.resolve()
            if not folder.is_dir() or not folder.is_relative_to(self.settings.root):
                raise ValueError(f"`{WORKDIR_ARG}` {given!r} is not a folder under the server's root "
                                 f"{self.settings.root}")
            call_dir.mkdir(parents=True)
            return folder, call_dir / "trace.jsonl"
        work = call_dir / "work"
        work.mkdir(parents=True)
        return work, call_dir / "trace.jsonl"

    # ------------------------------------------------------------ one run

    def executor(self, call: Call) -> Executor:
        spec = self.settings.executor
        if spec == "sampling":
            return SamplingExecutor(call, max_tokens=self.settings.max_tokens,
                                    timeout_s=self.settings.model_timeout_s)
        if self.shared is not None:
            return _Locked(self.shared, self._shared_lock) if spec.startswith("local") else self.shared

        return make_executor(spec, base_url=self.settings.base_url, strategy=self.settings.strategy,
                             timeout_s=self.settings.model_timeout_s)

    def _interpreter(self, call: Call, entry: Entry, workdir: Path, trace: Path | None, journal: Journal,
                     elicit: bool) -> tuple[Interpreter, ToolBox]:

        inner = self.executor(call)
        skill_dir = default_skill_dir(entry.machine)
        user = ElicitingUser(call if elicit else None)
        box = run_tools(entry.machine, "machine", workdir=workdir, skill_dir=skill_dir, modules=self.settings.tools,
                        timeout_s=self.settings.tool_timeout_s, allow_hosts=self.settings.allow_hosts, ask_user=user)
        bash = box.functions.get("bash")
        if isinstance(bash, BashTool):
            bash.started = call.guard.started  # a stopped call kills the command it waits on
        tools = GuardedTools(tools_for(inner, box), call.guard)
        options = RunOptions(retries=self.settings.retries, max_steps=self.settings.max_steps, trace=trace,
                             journal=journal, executor_spec=self.settings.executor, machine_path=entry.path,
                             step_deadline_s=self.settings.step_deadline_s, workdir=str(workdir),
                             skill_dir=None if skill_dir is None else str(skill_dir), user=user)
        return Interpreter(entry.machine, GuardedExecutor(inner, call.guard), tools, options, entry.text), box

    def start(self, call: Call, args: Mapping[str, Value], *, elicit: bool) -> Report:
        """A new run of `call.entry` with the call's arguments (from the run's thread)."""
        entry = call.entry
        inputs = {k: v for k, v in args.items() if not (entry.takes_workdir and k == WORKDIR_ARG)}
        workdir, trace = self.folders(entry, args)
        journal = _Journal(self.settings.journal)
        journal.call = call
        box = None
        try:
            started = time.time()
            interpreter, box = self._interpreter(call, entry, workdir, trace, journal, elicit)
            result = interpreter.run(inputs)
            return self.report(entry, result, workdir, started)
        finally:
            if box is not None:
                box.close()  # the MCP servers the run's tools started
            journal.close()

    def resume(self, call: Call, run_id: str, answer: str | None, *, elicit: bool) -> Report:
        """A waiting run of `call.entry` continued with the user's answer (from the run's thread)."""

        entry = call.entry
        call.run_id = run_id
        journal = _Journal(self.settings.journal)
        box = None
        try:
            info = journal.info(run_id)
            trace_path = Path(info.trace_path) if info.trace_path else None
            run, _ = read_run(trace_path) if trace_path is not None else (None, [])
            first = run.headers[0] if run is not None and run.headers else None
            kept = info.workdir or (first.workdir if first is not None else None)  # older journals: the header's
            workdir = Path(kept) if kept else trace_path.parent / "work" if trace_path is not None else (
                self.settings.root)
            started = _started(first.started if first is not None else None)
            interpreter, box = self._interpreter(call, entry, workdir, None, journal, elicit)
            try:
                result = interpreter.resume(run_id, answer)
            except RunError as exc:  # not waiting (finished, answered already), an answer off the menu, …
                raise TokenRefused(str(exc)) from None
            return self.report(entry, result, workdir, started)
        finally:
            if box is not None:
                box.close()
            journal.close()

    def report(self, entry: Entry, result: RunResult, workdir: Path, started: float) -> Report:
        if result.waiting is not None:
            w = result.waiting
            return Report(entry.name, "waiting", str(workdir), result.run_id, result.trace, steps=result.steps,
                          question=w.question, options=w.options, terminal=w.state)
        files, more = delivered(workdir, started)
        return Report(entry.name, "finished", str(workdir), result.run_id, result.trace, outcome=result.outcome,
                      terminal=result.terminal, steps=result.steps, evidence=dict(result.evidence), error=result.error,
                      files=tuple(files), files_truncated=more)


def _started(stamp: str | None) -> float:
    """A header's UTC start time as seconds since the epoch (0: unknown, so every file counts)."""
    if not stamp:
        return 0.0

    try:
        return float(calendar.timegm(time.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return 0.0


class _Locked:
    """A shared executor that answers one request at a time (the in-process local model)."""

    def __init__(self, inner: Executor, lock: threading.Lock) -> None:
        self.inner = inner
        self.lock = lock
        self.name = inner.name

    def complete(self, request: Request) -> Response:
        with self.lock:
            return self.inner.complete(request)

    def close(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


__all__ = [
    "Call",
    "Elicit",
    "ElicitingUser",
    "Ended",
    "Failed",
    "Finished",
    "Guard",
    "Need",
    "Reply",
    "Report",
    "Runner",
    "Sample",
    "SamplingExecutor",
    "Settings",
    "Stopped",
    "delivered",
    "make_root",
]
