"""The interpreter: run a checked machine step by step.

After each state's operation the first edge whose guard holds is taken, its
assignments are applied left to right, and counters are kept within their
maximum (an overflow goes to the fallback). Model and judge outputs are parsed
and type-checked against the write set and retried with the validation error
a bounded number of times; a failed tool call, an executor that cannot answer
or an output that stays invalid goes to the fallback. State is replaced only
when a step's writes are all valid, and each step is committed to the journal
before the next begins.

Places: a machine's place variables (`workdir`, `skill_dir`) are set to absolute paths before the first
state (`RunOptions.workdir`, `RunOptions.skill_dir`); a machine that uses `skill_dir` in a run without one is
refused before anything runs. Success predicates: on arrival at a terminal its `predicates` are judged over
the world (`judge`: the run's work folder; a replay reads the verdicts its trace recorded), and one that does
not hold sends the run to the fallback (reason `predicate`); the verdicts are in the footer and the evidence.
Waiting: an `ask_user` call that nobody can answer (`interaction.NeedsUser`) in a journaled run persists the
run as waiting (`RunResult.waiting`); `resume(run_id, answer=…)` gives that step the answer, once. Without a
journal the step fails (reason `needs_user`).

Each step is recorded as a typed `record.Step` (and the run's ends as a
`RunHeader` and a `Footer`); an `on_step` callback sees every step after it
is committed, with the variables as the next step begins. What crosses the
seam to a state's operation and back is typed too: the operation (`ask`,
`call_tool`) returns an `Answer` or raises `StepFailed`, each carrying an
`Operation`; one step (`step`) is a `Stepped`, whose `record()` is its `Step`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import cast

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.code import Code
from skillc.diagnostics.files import JSONProblem, kept_path, loads, scrub
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.evaluate import EvalError, WorkFolder, World, evaluate
from skillc.ir.machine import FALLBACK, Edge, Machine, State
from skillc.ir.printexpr import show_expr
from skillc.runtime.executors.base import DeadlineError, Executor, ExecutorError, Response, absolute_spec, count
from skillc.runtime.interaction import AskUser, NeedsUser, menu_problem
from skillc.runtime.journal import Journal, JournalError, Lease, Wait
from skillc.runtime.jsonvalue import Env, Object, Value
from skillc.runtime.prompts import Prompts, Request
from skillc.runtime.record import (
    EndReason,
    Footer,
    Outcome,
    RunHeader,
    RunTrace,
    Step,
    StepError,
    StepKind,
    ToolCall,
    Verdict,
    load_run,
    new_header,
)
from skillc.runtime.tools import ToolError, effects_of
from skillc.runtime.toolsource import ToolSource, tools_for
from skillc.runtime.trace import REDACTED, Redactor, TraceError, TraceWriteError, TraceWriter, named_secrets
from skillc.runtime.values import apply_outputs, check_value, coerce

#: Called with each committed step and the variables as the next step begins.
OnStep = Callable[[Step, Mapping[str, Value]], None]


class RunError(Exception):
    """The run cannot start: bad inputs, missing tool implementations, an unknown run to resume."""

    code: Code = diagnostics_codes.RUN_REFUSED


@attrs.frozen(slots=False)  # made once a step: a frozen slotted class is built twice as slowly
class Operation:
    """What a state's operation did, as its step records it (all None: nothing was asked or called).

    `name`: `chat` (model and judge states) or `execute_tool`; `errors`: the failed attempts before the answer
    (an invalid output retried, an executor error). The other fields are `record.Step`'s of the same name.
    """

    name: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    raw_output: str | None = None
    retries: int | None = None
    output: Object | None = None
    label: str | None = None
    tool_call: ToolCall | None = None
    tool_result: Object | None = None
    errors: tuple[StepError, ...] = ()
    #: An `ask_user` call's answer: who gave it (`interaction.USER`, `CALLBACK`, `PREPARED`; None: a script, a trace).
    answered_by: str | None = None


#: A chat that has no answer yet (made once: `ask` starts from it at every step).
_CHAT = Operation("chat")


@attrs.frozen(slots=False)  # (as Operation)
class Answer:
    """A state's operation done: the variables after it and what its step records of it."""

    env: Env
    operation: Operation = Operation()


class StepFailed(Exception):
    """An operation failed for good: the run goes to the fallback, `error` recorded as the step's and the run's cause.

    What a state's operation raises (`Interpreter.ask`, `Interpreter.call_tool`, and their overrides in a subclass
    that answers operations another way, as refine's replayer does). `operation`: what it did before it failed (the
    last answer, the tool call), recorded on the step; the variables stay as they were.
    """

    def __init__(self, error: StepError, operation: Operation = Operation()) -> None:
        super().__init__(error.message)
        self.error = error
        self.operation = operation


class WaitForUser(Exception):
    """A journaled run's `ask_user` call that nobody can answer: the loop persists the run as waiting."""

    def __init__(self, question: str, options: tuple[str, ...] | None) -> None:
        super().__init__(question)
        self.question = question
        self.options = options


@attrs.define
class RunOptions:
    """Knobs of one run."""

    retries: int = 2
    max_steps: int = 1000
    trace: Path | None = None
    journal: Journal | None = None
    secrets: list[str] = attrs.Factory(list)
    executor_spec: str = ""
    machine_path: str = "<string>"
    #: Seconds one model/judge step may spend on its requests, retries and Retry-After waits included.
    step_deadline_s: float | None = None
    #: Longest Retry-After wait honoured between two attempts (a server asking for more is not waited for).
    max_retry_wait_s: float = 60.0
    #: The folder the run's tools run in, recorded in the trace's header (None: not recorded there; the place
    #: `workdir`, the world of the terminals' predicates and the folder a journal keeps for a resume are then the
    #: process's current folder).
    workdir: str | None = None
    #: The skill's folder, the place `skill_dir` (None: the run has none; a machine that uses it is refused).
    skill_dir: str | None = None
    #: The `ask_user` implementation the run's tools call (an `interaction.AskUser`), so each answer's step can
    #: record who gave it; None: not recorded.
    user: AskUser | None = None
    #: A resume's `workdir` is the one its journal kept when the resume was set up (no folder named): if another
    #: resume moved the run before this one took the lease, it is refused instead of moving the run back.
    workdir_kept: bool = False


@attrs.frozen
class RunResult:
    """How a run ended. `error`: the message of the failure that sent it to the fallback; `reason`: the typed
    cause of any fallback (an edge that leads there included), as its footer records it."""

    run_id: str | None
    outcome: str
    terminal: str
    evidence: dict
    steps: int
    trace: str | None
    error: str | None = None
    visited: tuple[str, ...] = ()
    edges: tuple[tuple[str, int], ...] = ()
    missing_evidence: tuple[str, ...] = ()
    reason: EndReason | None = None
    #: The run waits for the user's answer (outcome `waiting`): the question, its menu, the step and state asking.
    waiting: Wait | None = None
    #: The predicates of the terminal the run arrived at, judged over the world (also in `evidence`).
    predicates: tuple[Verdict, ...] = ()


@attrs.frozen(slots=False)  # (as Operation)
class Stepped:
    """One state run (`Interpreter.step`): its operation, the edge taken, the variables after it, the next state.

    `failure`: what sent the run to the fallback (None when an edge led there, or elsewhere); `errors` holds it last.
    `env` is the variables as the next step begins (unchanged when the step failed).
    """

    index: int
    state: State
    inputs: Object
    operation: Operation
    latency_ms: float
    env: Env
    target: str
    edge: int | None = None
    assignments: Object | None = None
    errors: tuple[StepError, ...] = ()
    warnings: tuple[str, ...] = ()
    failure: StepError | None = None

    def record(self) -> Step:
        """The step as the trace, the journal and `on_step` see it."""
        op = self.operation
        return Step(index=self.index, state=self.state.name, kind=cast(StepKind, self.state.kind), inputs=self.inputs,
                    operation=op.name, model=op.model, input_tokens=op.input_tokens, output_tokens=op.output_tokens,
                    tool_name=op.tool_call.tool if op.tool_call is not None else None, tool_call=op.tool_call,
                    raw_output=op.raw_output, retries=op.retries, errors=self.errors, output=op.output,
                    label=op.label, warnings=self.warnings, latency_ms=self.latency_ms, edge=self.edge,
                    assignments=self.assignments, target=self.target, tool_result=op.tool_result,
                    answered_by=op.answered_by)


def machine_hash(text: str) -> str:
    """A content hash that identifies the machine a trace or journal was made with."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()[:16]


def parse_inputs(machine: Machine, given: Object) -> Object:
    """Validated input values (defaults applied); RunError lists every problem."""
    problems = [f"`{k}` is not an input of `{machine.name}`" for k in given
                if k not in machine.variables or not machine.variables[k].is_input]
    values: Object = {}
    for v in machine.variables.values():
        if not v.is_input:
            continue
        if v.name in given:
            value = given[v.name]
        elif v.init is not None:
            value = evaluate(v.init, {})
        elif isinstance(v.type, T.OptionalT):
            value = None
        else:
            problems.append(f"input `{v.name}` ({T.show(v.type)}) is required")
            continue
        problems += check_value(value, v.type, f"input `{v.name}`")
        values[v.name] = coerce(value, v.type)
    if problems:
        raise RunError("; ".join(problems))
    return values


def uses_variable(machine: Machine, name: str) -> bool:
    """True when some state, edge, initialiser or predicate of the machine reads `name`."""
    for st in machine.states.values():
        if name in st.reads or name in st.requires:
            return True
        exprs: list[ir.Expr | None] = [*st.predicates, *(v for _, v in st.call.args)] if st.call else [*st.predicates]
        for e in st.edges:
            exprs += [e.guard, *(a.value for a in e.assigns)]
        if any(name in ir.variables(x) for x in exprs if x is not None):
            return True
    return any(v.init is not None and name in ir.variables(v.init) for v in machine.variables.values())


def place_values(machine: Machine, workdir: str | None, skill_dir: str | None, *,
                 required: bool = True) -> Object:
    """The values of the machine's place variables: `workdir` (default: the current folder) and `skill_dir`, as
    absolute paths. RunError (with `required`) when the machine uses `skill_dir` and the run has none."""
    values: Object = {}
    for v in machine.variables.values():
        if v.kind != "place":
            continue
        if v.name == "workdir":
            values[v.name] = os.path.abspath(workdir or os.getcwd())
        elif v.name == "skill_dir" and skill_dir is not None:
            values[v.name] = os.path.abspath(skill_dir)
        elif v.name == "skill_dir" and required and uses_variable(machine, v.name):
            raise RunError(f"`{machine.name}` uses `skill_dir`, but this run has no skill folder: give "
                           "--skill-dir DIR (the API: RunConfig(skill_dir=…)), or run a machine whose `source` "
                           "names its skill document")
    return values


def initial_env(machine: Machine, inputs: Object) -> Env:
    """Inputs, counters at 0 and initialised variables: everything defined before the first state."""
    env = dict(inputs)
    for v in machine.variables.values():
        if v.is_counter:
            env[v.name] = 0
        elif not v.is_input and v.init is not None:
            env[v.name] = coerce(evaluate(v.init, {}), v.type)
    return env


def json_answer(text: str) -> Value:
    """Parse a model's answer as JSON, tolerating a Markdown code fence around it (depth-limited)."""
    stripped = text.strip()
    fence = re.match(r"^```(?:json)?\s*\n(.*)\n```$", stripped, re.S)
    if fence:
        stripped = fence.group(1)
    try:
        return scrub(loads(stripped))  # JSON escapes can spell lone surrogates too
    except JSONProblem as exc:
        raise json.JSONDecodeError(str(exc), stripped, 0) from None




def _journal_placeholder(name: str) -> str:
    return f"[redacted:${name}]"


_PLACEHOLDER = re.compile(r"\[redacted:\$([A-Za-z_][A-Za-z0-9_]*)\]")


def restore_secrets(value: Value, run_id: str) -> Value:
    """Put the environment's secrets back where the journal stored `[redacted:$NAME]` placeholders."""
    if isinstance(value, str):
        def back(m: re.Match) -> str:
            if m.group(1) not in os.environ:
                raise RunError(f"run `{run_id}` needs the secret ${m.group(1)}, which is not set in this "
                               "environment (the journal never stores secrets; set it and resume again)")
            return os.environ[m.group(1)]
        return _PLACEHOLDER.sub(back, value)
    if isinstance(value, list):
        return [restore_secrets(v, run_id) for v in value]
    if isinstance(value, dict):
        return {restore_secrets(k, run_id): restore_secrets(v, run_id) for k, v in value.items()}
    return value


def _as_trace_redaction(value: Value) -> Value:
    """A journal record made fit for the trace: `[redacted:$NAME]` becomes `[redacted]`."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(REDACTED, value)
    if isinstance(value, list):
        return [_as_trace_redaction(v) for v in value]
    if isinstance(value, dict):
        return {_as_trace_redaction(k): _as_trace_redaction(v) for k, v in value.items()}
    return value


class Interpreter:
    """Runs one machine with one executor (model and judge states) and one tool source (tool states).

    `tools`: a ToolBox or any other ToolSource; an executor that brings tool results of its own (a script, a
    replayed trace) layers them over it. `on_step`: called with each committed step (see `OnStep`).
    `run` starts a run, `resume` continues one, `run_from` runs the loop from variables the caller gives, `step` runs
    one state. The operations are public methods: `ask` (model and judge states) and `call_tool` (tool states) return
    an `Answer` (the variables after the operation and the typed `Operation` its step records) or raise
    `StepFailed`; a subclass that answers operations another way (refine's replayer) overrides them. `judge`
    gives a terminal's predicates their verdicts on arrival (over the work folder, or as a replayed trace
    recorded them).
    """

    def __init__(self, machine: Machine, executor: Executor, tools: ToolSource, options: RunOptions,
                 source_text: str = "", *, on_step: OnStep | None = None) -> None:
        self.machine = machine
        self.executor = executor
        self.tools = tools_for(executor, tools)
        self.options = options
        self.on_step = on_step
        self.hash = machine_hash(source_text)
        self.prompts = Prompts(machine)
        self._journal_redactor: Redactor | None = None
        self._answer: Wait | None = None  # the answer a resumed waiting step gets, once
        self._can_wait = False  # inside a journaled run's loop: an `ask_user` nobody answers makes the run wait
        self._world: World | None = None
        missing = self.tools.missing(machine)
        if missing:
            raise RunError("no implementation for tool" + ("s " if len(missing) > 1 else " ")
                           + ", ".join(f"`{t}`" for t in missing) + " (register it with --tools MODULE.py)")

    # ------------------------------------------------------------ entry points

    def run(self, inputs: Object) -> RunResult:
        """Start a new run."""
        values = parse_inputs(self.machine, scrub(inputs))
        env = initial_env(self.machine, values)
        env.update(place_values(self.machine, self.options.workdir, self.options.skill_dir))
        journal = self.options.journal
        trace = self.options.trace
        machine_path = self.options.machine_path
        run_id = journal.start(kept_path(machine_path) if os.path.exists(machine_path) else machine_path, self.hash,
                               self._private(values), absolute_spec(self.options.executor_spec),
                               None if trace is None else kept_path(str(trace)), *self._places()) if journal else None
        lease = journal.lease(run_id) if journal and run_id else None
        try:
            writer = TraceWriter(self.options.trace, self._secrets())
            writer.write_record(self._header(run_id, values, resumed_from=None))
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        return self._loop(run_id, env, self.machine.start, 0, writer, lease)

    def run_from(self, env: Mapping[str, Value], state: str | None = None, step: int = 0) -> RunResult:
        """Run the step loop from the given variables and state (default: the start), unrecorded but for `on_step`.

        For a caller that builds the variables itself and may leave some without a value (refine's replayer: a chat
        log records no inputs); a guard or argument reading one cannot be evaluated (a warning; the guard does not
        hold). Inputs are not parsed, nothing is journaled and no trace is written, so `options.trace` and
        `options.journal` are refused rather than ignored, as are an unknown state, a negative step and a value
        that is not a variable of the machine or not of its type (RunError).
        """
        if self.options.trace is not None or self.options.journal is not None:
            raise RunError("`run_from` writes no trace and no journal; run it with neither in the options")
        start = self.machine.start if state is None else state
        if start not in self.machine.states:
            raise RunError(f"`{start}` is not a state of `{self.machine.name}`")
        if step < 0:
            raise RunError(f"a run cannot start at step {step}")
        problems = self._env_problems(env)
        if problems:
            raise RunError("; ".join(problems))
        places = place_values(self.machine, self.options.workdir, self.options.skill_dir, required=False)
        return self._loop(None, {**places, **env}, start, step, TraceWriter(None, {}))

    def _places(self) -> tuple[str, str | None]:
        """The work and skill folders this run's tools work in, absolute, as the journal keeps them for a resume (no
        work folder in the options: the current folder, where the place `workdir` is then). A resume keeps them
        only when the options name the work folder: `RunConfig` and the command line default it to the kept one,
        while an `Interpreter` given none works where its caller's tool box does, which it cannot know."""
        skill_dir = self.options.skill_dir
        try:
            workdir = os.path.abspath(self.options.workdir or os.getcwd())
        except FileNotFoundError:
            raise RunError("the current folder is gone: give the run a work folder (--workdir DIR)") from None
        return workdir, None if skill_dir is None else os.path.abspath(skill_dir)

    def _secrets(self) -> dict[str, str]:
        return named_secrets(self.options.secrets)

    def _private(self, value: Value) -> Value:
        """A value as the journal stores it: secrets replaced by placeholders that name them."""
        if self._journal_redactor is None:
            self._journal_redactor = Redactor(self._secrets(), _journal_placeholder)
        return self._journal_redactor(value)

    def resume(self, run_id: str, answer: str | None = None) -> RunResult:
        """Continue a run after its last committed step; `answer`: the user's answer to the question it waits on.

        A waiting run needs the answer (RunError without one); an answer to a run that is not waiting (never was,
        or was answered already) is refused (RunError), and so is one that is not on the question's menu (the run
        stays waiting). The answer is taken once: the step that asked gets it as its tool result.
        """
        journal = self.options.journal
        if journal is None:
            raise RunError("resuming needs the run journal")
        journal.info(run_id)  # an unknown run is refused before anything is created for it
        lease = journal.lease(run_id)  # LeaseError: another process runs it
        try:
            info = journal.info(run_id)  # read again under the lease: the holder may just have finished it
            if info.machine_hash != self.hash:
                raise RunError(f"run `{run_id}` was made with another version of the machine (hash "
                               f"{info.machine_hash}, now {self.hash})")
            if info.status == "done":
                raise RunError(f"run `{run_id}` already finished ({info.outcome})"
                               + ("; it waits for no answer" if answer is not None else ""))
            point = journal.checkpoint(run_id)
            inputs = restore_secrets(info.inputs, run_id)
            if point is None:
                env, state, step = initial_env(self.machine, parse_inputs(self.machine, inputs)), self.machine.start, 0
            else:
                env, state, step = restore_secrets(point.env, run_id), point.state, point.step + 1
            so_far, readable = _so_far(info.trace_path)  # read once: to see whether it ended, and to fill it
            ended = None if info.status == "waiting" else self._ended(so_far, run_id, step, state)
            if ended is not None:  # it crashed after writing its footer, before the journal recorded the end
                journal.finish(run_id, ended.outcome or "failed")
                if answer is not None:
                    raise RunError(f"run `{run_id}` already finished ({ended.outcome}); it waits for no answer")
                lease.release(remove=True)
                places = place_values(self.machine, self.options.workdir, self.options.skill_dir, required=False)
                return self._from_footer(run_id, ended, info.trace_path, {**places, **env})
            folders = self._places()
            if self.options.workdir_kept and info.workdir is not None and os.path.realpath(
                    info.workdir) != os.path.realpath(folders[0]):
                raise RunError(f"run `{run_id}` was moved to {info.workdir} by another resume while this one "
                               "started; resume it again")
            if not os.path.isdir(folders[0]):  # refused before the answer is taken: nothing changes
                what = "is not a folder" if os.path.exists(folders[0]) else "is gone"
                raise RunError(f"run `{run_id}` works in the folder {folders[0]}, which {what}; resume it in "
                               "another work folder (--workdir DIR)")
            env.update(place_values(self.machine, self.options.workdir, self.options.skill_dir))  # before the answer
            self._answer = self._take_answer(journal, run_id, info.status, answer)
            if self._answer is None:
                self._answer = journal.answered(run_id, step)  # answered before a crash kept the step from committing
            if self._answer is not None and (self._answer.step, self._answer.state) != (step, state):
                raise JournalError(f"run `{run_id}` is damaged: its question was asked by `{self._answer.state}` at "
                                   f"step {self._answer.step}, but it resumes at `{state}`, step {step}")
            self._check_resumed(run_id, env, state)
            if self.options.workdir is not None and folders != (info.workdir, info.skill_dir):
                journal.move(run_id, *folders)  # resumed in other folders (or kept at last): its next resume is here
            writer = TraceWriter(info.trace_path, self._secrets(), append=True)
            self._fill_trace(writer, so_far, readable, journal.steps(run_id))
            writer.write_record(self._header(run_id, inputs, resumed_from=step))
        except BaseException:
            lease.release()
            raise
        return self._loop(run_id, env, state, step, writer, lease)

    @staticmethod
    def _ended(run: RunTrace | None, run_id: str, step: int, state: str) -> Footer | None:
        """The footer that ends this run's trace `run` after its last committed step (`step` steps; the run goes to
        `state` next), or None. It must be the trace's last record, name this run (older footers: follow this run's
        last header) and end where the run goes next: at `state`, or in the fallback for a predicate that failed
        at `state` or a step limit reached there. Another run sharing the file, even at once, is not this one."""
        if run is None:
            return None
        footer = run.footer
        if not run.ended or footer is None or footer.steps != step:
            return None
        if footer.extra.get("skillc.run_id", run.header.run_id) != run_id:
            return None
        reason = footer.reason
        there = reason is not None and reason.kind in ("predicate", "step_limit") and reason.state == state
        return footer if footer.terminal == state or there else None

    def _from_footer(self, run_id: str, footer: Footer, trace_path: str | None, env: Env) -> RunResult:
        """The result of a run that ended, as its footer records it; the evidence from the journal's variables (the
        trace's copy has its secrets redacted)."""
        terminal = self.machine.states.get(footer.terminal or FALLBACK) or self.machine.states[FALLBACK]
        evidence, missing = _evidence(terminal, env, footer.predicates)
        return RunResult(run_id, footer.outcome or "failed", terminal.name, evidence, footer.steps or 0, trace_path,
                         footer.error, missing_evidence=missing, reason=footer.reason, predicates=footer.predicates)

    @staticmethod
    def _take_answer(journal: Journal, run_id: str, status: str, answer: str | None) -> Wait | None:
        """The answer a resumed run's waiting step gets (recorded in the journal, once), or None; RunError when a
        waiting run has none, a run that is not waiting is given one, or the answer is not on the menu."""
        wait = journal.waiting(run_id) if status == "waiting" else None
        if wait is None:
            if answer is not None:
                raise RunError(f"run `{run_id}` is not waiting for an answer (it is {status}); an answer is given "
                               "once, to the question a run waits on")
            return None
        if answer is None:
            raise RunError(f"run `{run_id}` waits for the user's answer to {wait.question!r}; resume it with "
                           "--answer TEXT" + (f" (one of: {', '.join(wait.options)})" if wait.options else ""))
        problem = menu_problem(answer, wait.options)
        if problem is not None:
            raise RunError(f"{problem}; run `{run_id}` still waits")
        return journal.answer(run_id, answer)

    def _check_resumed(self, run_id: str, env: Env, state: str) -> None:
        """A journal's state must fit the machine: known state, every value of its declared type."""
        if state not in self.machine.states:
            raise JournalError(f"run `{run_id}` is damaged: its next state `{state}` is not in the machine")
        problems = self._env_problems(env)
        if problems:
            raise JournalError(f"run `{run_id}` is damaged: its saved state does not fit the machine ("
                               + "; ".join(problems[:3]) + ")")

    def _env_problems(self, env: Mapping[str, Value]) -> list[str]:
        """What keeps `env` from being the machine's variables: unknown names, values not of their variable's type."""
        problems = [f"`{k}` is not a variable of `{self.machine.name}`" for k in env if k not in self.machine.variables]
        for name, value in env.items():
            if name in self.machine.variables:
                problems += check_value(value, self.machine.variables[name].type, f"`{name}`")
        return problems

    def _fill_trace(self, writer: TraceWriter, so_far: RunTrace | None, readable: bool,
                    committed: list[Step]) -> None:
        """Append committed steps that a crash kept out of the trace (committed before written), in order."""
        if writer.path is None or not readable:
            return  # an unreadable trace is not repaired; the resumed part is still appended
        last = max((s.index for s in so_far.steps), default=-1) if so_far is not None else -1
        for record in committed:
            if record.index > last:
                writer.write(_as_trace_redaction(record.to_json()))

    # ------------------------------------------------------------ the loop

    def _header(self, run_id: str | None, inputs: Object, resumed_from: int | None) -> RunHeader:
        header = new_header(self.machine.name, "machine", self.options.executor_spec, inputs, machine_hash=self.hash,
                            run_id=run_id, resumed_at_step=resumed_from, workdir=self.options.workdir)
        if self.options.skill_dir is not None:
            header = attrs.evolve(header, extra={"skillc.skill_dir": os.path.abspath(self.options.skill_dir)})
        return header

    def _loop(self, run_id, env: Env, state: str, step: int, writer: TraceWriter,
              lease: Lease | None = None) -> RunResult:
        visited: list[str] = []
        taken: list[tuple[str, int]] = []
        reason: EndReason | None = None
        tokens_in = tokens_out = 0
        latency = 0.0
        journal = self.options.journal if run_id is not None else None
        on_step = self.on_step
        recorded = writer.active or journal is not None or on_step is not None
        finished = False
        waiting: Wait | None = None
        verdicts: tuple[Verdict, ...] = ()
        self._can_wait = journal is not None
        try:
            while True:
                st = self.machine.states[state]
                if st.is_terminal:
                    if st.predicates:
                        verdicts = self.judge(st, env)
                        failed = next((v for v in verdicts if not v.holds), None)
                        if failed is not None:
                            reason = EndReason("predicate", f"requires {failed.predicate}: {failed.reason or 'false'}",
                                               step - 1 if step > 0 else None, st.name)
                            state = FALLBACK
                    break
                visited.append(state)
                if step >= self.options.max_steps:
                    reason = EndReason("step_limit", f"step limit {self.options.max_steps} reached", step, state)
                    state = FALLBACK
                    break
                try:
                    moved = self._step(st, env, step)
                except WaitForUser as asked:
                    assert journal is not None and run_id is not None
                    visited.pop()  # the state asked and waits: its step has not run
                    waiting = Wait(run_id, step, st.name, asked.question, asked.options)
                    journal.wait(run_id, step, st.name, asked.question, asked.options)
                    break
                env, state, edge = moved.env, moved.target, moved.edge
                if edge is not None:
                    taken.append((st.name, edge))
                tokens_in += moved.operation.input_tokens or 0
                tokens_out += moved.operation.output_tokens or 0
                latency += moved.latency_ms
                if state == FALLBACK:
                    reason = EndReason.of(moved.failure, step, st.name) if moved.failure is not None else EndReason(
                        "edge", f"edge {(edge or 0) + 1} of `{st.name}` leads to the fallback", step, st.name, edge)
                if recorded:  # a run nobody records (no trace, journal or callback) makes no Step: it is the hot loop
                    record = moved.record()
                    if journal is not None:
                        journal.commit_step(run_id, step, st.name, state, self._private(env),
                                            self._private(record.to_json()))
                    writer.write_record(record)
                    if on_step is not None:
                        on_step(record, env)
                step += 1
            if waiting is not None:
                self._can_wait = False
                return RunResult(run_id, "waiting", waiting.state, {}, step,
                                 str(writer.path) if writer.path else None, None, tuple(visited), tuple(taken),
                                 waiting=waiting)
            terminal = self.machine.states[state]
            evidence, missing = _evidence(terminal, env, verdicts)
            outcome: Outcome = terminal.outcome or "failed"
            error = reason.message if reason is not None and reason.kind != "edge" else None
            writer.write_record(Footer(terminal=terminal.name, outcome=outcome, evidence=evidence, steps=step,
                                       error=error, reason=reason, input_tokens=tokens_in, output_tokens=tokens_out,
                                       latency_ms=round(latency, 3), predicates=verdicts,
                                       extra={} if run_id is None else {"skillc.run_id": run_id}))
            if journal is not None:
                journal.finish(run_id, outcome)
            finished = True
        except TraceWriteError as exc:
            raise TraceWriteError(f"{exc}; the run stopped at step {step}"
                                  + (f" and resumes with --resume {run_id}" if journal is not None else "")) from None
        except BaseException:
            if journal is not None:
                journal.interrupt(run_id)  # still resumable; `interrupted` says it did not simply crash
            raise
        finally:
            self._can_wait = False
            writer.close()
            if lease is not None:
                lease.release(remove=finished)
        return RunResult(run_id, outcome, terminal.name, evidence, step,
                         str(writer.path) if writer.path else None, error, tuple(visited), tuple(taken), missing,
                         reason, predicates=verdicts)

    def step(self, state: str, env: Mapping[str, Value], index: int = 0) -> Stepped:
        """Run one state from the given variables: its operation, then the first edge whose guard holds.

        Unrecorded (no journal, trace or `on_step`) and with no step limit: the single step `run_from`'s loop takes,
        for a caller that drives the machine itself (stateful tests). An unknown state or terminal, or a value that
        is not a variable of the machine or not of its type, is refused (RunError).
        """
        st = self.machine.states.get(state)
        if st is None or st.is_terminal:
            raise RunError(f"`{state}` is not a state of `{self.machine.name}` with an operation")
        problems = self._env_problems(env)
        if problems:
            raise RunError("; ".join(problems))
        return self._step(st, dict(env), index)

    def _step(self, st: State, env: Env, index: int) -> Stepped:
        """`step` without its checks: the loop's own."""
        inputs = {r: env.get(r) for r in st.reads}
        started = time.perf_counter()
        try:
            answer = self.call_tool(st, env) if st.kind == "tool" else self.ask(st, env)
        except StepFailed as exc:
            latency = round((time.perf_counter() - started) * 1000, 3)
            return Stepped(index, st, inputs, exc.operation, latency, env, FALLBACK,
                           errors=(*exc.operation.errors, exc.error), failure=exc.error)
        latency = round((time.perf_counter() - started) * 1000, 3)
        new_env, op = answer.env, answer.operation
        if new_env is env:  # an override that changed nothing: the assignments must not write into the variables given
            new_env = dict(env)
        warnings: tuple[str, ...] = ()  # rare: a tuple grown, not a list copied at every step
        for e in st.edges:
            try:
                fires = e.guard is None or bool(evaluate(e.guard, new_env))
            except EvalError as exc:
                warnings += (f"guard of edge {e.index + 1}: {exc}",)
                fires = False
            if not fires:
                continue
            assigned, failure = self._assign(e, new_env)
            if failure is not None:
                return Stepped(index, st, inputs, op, latency, env, FALLBACK, e.index, None,
                               (*op.errors, failure), warnings, failure)
            return Stepped(index, st, inputs, op, latency, new_env, e.target, e.index, assigned, op.errors, warnings)
        failure = StepError("no_edge", "no edge fired")
        return Stepped(index, st, inputs, op, latency, env, FALLBACK, errors=(*op.errors, failure),
                       warnings=warnings, failure=failure)

    def _assign(self, edge: Edge, env: Env) -> tuple[Object, StepError | None]:
        """Apply an edge's assignments to `env` in place, left to right; the values assigned, or what failed."""
        assigned: Object = {}
        for a in edge.assigns:
            try:
                value = evaluate(a.value, env)
            except EvalError as exc:
                return assigned, StepError("assignment", f"assignment to `{a.var}`: {exc}")
            var = self.machine.variables[a.var]
            if a.op == "+=":
                value = env[a.var] + value
            elif a.op == "-=":
                value = env[a.var] - value
            if var.is_counter and not 0 <= value <= (var.max or 0):
                return assigned, StepError("counter", f"counter `{a.var}` would reach {value}, past its maximum "
                                                      f"{var.max}")
            env[a.var] = coerce(value, var.type)
            assigned[a.var] = env[a.var]
        return assigned, None

    # ------------------------------------------------------------ operations (a subclass may answer them otherwise)

    def ask(self, st: State, env: Env) -> Answer:
        """A model or judge state: ask until an answer fits its writes (retries with the validation error)."""
        unset = [f"`{r}`" for r in st.reads if r not in env]
        if unset:  # only `run_from` can leave a value out: the checker refuses a read before every path writes it
            raise StepFailed(StepError("arguments", f"`{st.name}` reads {', '.join(unset)}, which "
                                                    + ("have" if len(unset) > 1 else "has") + " no value"))
        request = self.prompts.request(st, env)
        errors: list[StepError] = []
        done = _CHAT  # what the step records so far: the last answer, the attempts
        tokens_in = tokens_out = 0
        deadline = None if self.options.step_deadline_s is None else time.monotonic() + self.options.step_deadline_s
        for attempt in range(self.options.retries + 1):
            try:
                response = self._complete(request, deadline)
            except ExecutorError as exc:
                done = attrs.evolve(done, retries=attempt)
                if exc.kind == "divergence":  # a replay that left its trace: retrying cannot bring it back
                    raise StepFailed(StepError("divergence", str(exc)), attrs.evolve(done, errors=tuple(errors))) \
                        from None
                errors.append(StepError(exc.kind, f"executor: {exc}"))
                if attempt == self.options.retries or not wait_to_retry(exc, deadline, self.options.max_retry_wait_s):
                    raise StepFailed(StepError(exc.kind, f"the executor failed: {exc}"),
                                     attrs.evolve(done, errors=tuple(errors))) from None
                continue
            tokens_in += count(response.input_tokens) or 0
            tokens_out += count(response.output_tokens) or 0
            model = response.model if isinstance(response.model, str) else None
            try:
                output = json_answer(response.text)
            except json.JSONDecodeError as exc:
                problems = [f"the reply is not JSON ({exc.msg})"]
            else:
                new_env, problems = apply_outputs(self.machine, st, env, output)
                if not problems:  # the output as answered: records and maps as their merge patches
                    label = new_env[st.writes[0]] if st.kind == "judge" else None
                    return Answer(new_env, Operation("chat", model, tokens_in, tokens_out, response.text, attempt,
                                                     output, label, errors=tuple(errors)))
            if response.cut:  # the backend stopped at its reply budget: say so, not only what the cut text lacks
                problems = ["the reply was cut off at the reply budget: answer within it, more briefly", *problems]
            errors.append(StepError("invalid_output", "invalid output: " + "; ".join(problems)))
            done = Operation("chat", model, tokens_in, tokens_out, response.text, attempt)
            request = request.retry(response.text, problems)
        raise StepFailed(StepError("invalid_output", f"no valid output after {self.options.retries + 1} attempts: "
                                                     f"{errors[-1].message}"), attrs.evolve(done, errors=tuple(errors)))

    def _complete(self, request: Request, deadline: float | None) -> Response:
        """One request within the step's deadline; a reply that is not text is an executor failure."""
        response = complete_within(self.executor, request, deadline, self.options.step_deadline_s)
        return attrs.evolve(response, text=scrub(response.text))

    def call_tool(self, st: State, env: Env) -> Answer:
        """A tool state: call its tool with the arguments evaluated, check the results and bind them."""
        call = st.call
        assert call is not None
        tool = self.machine.tools[call.tool]
        try:
            args = {name: evaluate(value, env) for name, value in call.args}
        except EvalError as exc:
            raise StepFailed(StepError("arguments", f"cannot build the arguments of `{tool.name}`: {exc}")) from None
        asks = tool.name == "ask_user"
        if asks and args.get("options") is None and tool.param("options") is not None:
            labels = self.menu(st)
            if labels is not None:  # the answer goes into an enum: its labels are the menu
                args["options"] = list(labels)
        done = Operation("execute_tool", tool_call=ToolCall(tool.name, args))
        answered_by = None
        user = self.options.user
        try:
            if asks and self._answer is not None and self._answer.state == st.name:
                result: Value = {"answer": self._answer.answer}  # the user's answer to the question the run waited on
                self._answer, answered_by = None, "user"
            else:
                if asks and user is not None:
                    user.last_source = None
                result = self.tools.result(st.name, tool, args)
                if asks and user is not None:
                    answered_by = user.last_source
        except ExecutorError as exc:
            if exc.kind == "divergence":
                raise StepFailed(StepError("divergence", str(exc)), done) from None
            raise StepFailed(StepError("tool", f"tool `{tool.name}` failed: {exc}"), done) from None
        except NeedsUser as exc:
            if self._can_wait:
                raise WaitForUser(exc.question, exc.options) from None
            raise StepFailed(StepError("needs_user", str(exc)), done) from None
        except ToolError as exc:
            if exc.effects is not None:  # what a kit call did before it failed (a command that timed out)
                done = attrs.evolve(done, tool_call=ToolCall(tool.name, args, exc.effects))
            raise StepFailed(StepError("tool", f"tool `{tool.name}` failed: {exc}"), done) from None
        if (effects := effects_of(result)) is not None:  # a kit call's effects, for the trace
            done = attrs.evolve(done, tool_call=ToolCall(tool.name, args, effects))
        if not isinstance(result, dict):
            raise StepFailed(StepError("tool", f"tool `{tool.name}` returned {type(result).__name__}, not its "
                                               "results"), done)
        result = scrub(result)
        new_env, problems = bind_results(self.machine, st, env, result)
        if problems:
            raise StepFailed(StepError("tool", f"tool `{tool.name}` returned invalid results: " + "; ".join(problems)),
                             done)
        return Answer(new_env, attrs.evolve(done, tool_result=result, answered_by=answered_by,
                                            output={var: new_env[var] for var, _ in st.bindings}))

    def menu(self, st: State) -> tuple[str, ...] | None:
        """An `ask_user` state's menu when it gives no `options`: the labels of the enum its `answer` goes into."""
        for var, res in st.bindings:
            if res == "answer" and var in self.machine.variables:
                t = T.strip_optional(self.machine.variables[var].type)
                if isinstance(t, T.EnumT):
                    return tuple(t.labels)
        return None

    def judge(self, terminal: State, env: Mapping[str, Value]) -> tuple[Verdict, ...]:
        """The verdicts of a terminal's predicates, judged over the world on arrival (a replay's executor that
        recorded them answers instead: `verdicts(terminal)`). A predicate that cannot be evaluated (a missing file,
        a path outside the work folder) does not hold; the reason says why."""
        recorded = getattr(self.executor, "verdicts", None)
        if callable(recorded):
            found: tuple[Verdict, ...] = recorded(terminal)
            return found
        if self._world is None:
            self._world = WorkFolder(self.options.workdir or os.getcwd())
        return tuple(verdict(terminal.name, p, env, self._world) for p in terminal.predicates)


def _so_far(trace_path: str | None) -> tuple[RunTrace | None, bool]:
    """What a resumed run's trace holds so far, and whether it can be filled in: (None, True) for no trace yet or an
    empty one, (None, False) for one that cannot be read."""
    if not trace_path:
        return None, True
    try:
        return load_run(trace_path), True
    except TraceError:
        return None, not os.path.exists(trace_path) or os.path.getsize(trace_path) == 0


def _evidence(terminal: State, env: Mapping[str, Value], verdicts: tuple[Verdict, ...]) -> tuple[dict, tuple[str, ...]]:
    """A terminal's evidence (its `requires` values, then each predicate's verdict under its source text) and the
    `requires` that `env` lacks."""
    evidence: dict = {r: env.get(r) for r in terminal.requires}
    evidence.update((v.predicate, v.holds) for v in verdicts)
    return evidence, tuple(r for r in terminal.requires if r not in env)


def verdict(terminal: str, predicate: ir.Expr, env: Mapping[str, Value], world: World) -> Verdict:
    """One predicate judged: whether it holds, and why not (the failure of its evaluation, or what was false)."""

    text = show_expr(predicate)
    try:
        holds = evaluate(predicate, env, world)
    except EvalError as exc:
        return Verdict(terminal, text, False, str(exc))
    if holds is True:
        return Verdict(terminal, text, True)
    return Verdict(terminal, text, False, why_false(predicate, env, world))


def why_false(e: ir.Expr, env: Mapping[str, Value], world: World) -> str:
    """Why a predicate that evaluated to false is false, in words (best effort: the values it compared)."""
    def value(x: ir.Expr) -> str:
        try:
            return json.dumps(evaluate(x, env, world), ensure_ascii=False)[:200]
        except (EvalError, TypeError, ValueError):
            return "?"

    try:
        if isinstance(e, ir.Call) and e.func == "exists":
            return "no such file in the work folder"
        if isinstance(e, ir.Not) and isinstance(e.operand, ir.Call) and e.operand.func == "exists":
            return "it exists in the work folder"
        if isinstance(e, ir.BinOp) and e.op == "and":
            part = e.left if not evaluate(e.left, env, world) else e.right
            return why_false(part, env, world)
        if isinstance(e, ir.BinOp) and e.op in ("==", "!=", "<", "<=", ">", ">="):
            shown = [(show_expr(x), value(x)) for x in (e.left, e.right) if not isinstance(x, (ir.Const, ir.Label))]
            if shown:
                return "false (" + ", ".join(f"{name} is {v}" for name, v in shown) + ")"
    except EvalError as exc:
        return str(exc)
    return "false"


def bind_results(machine: Machine, st: State, env: Mapping[str, Value],
                 result: Mapping[str, Value]) -> tuple[Object, list[str]]:
    """A tool state's bindings applied to a copy of `env`, or what keeps `result` from being the tool's results.

    The results are checked against the tool's declared ones first; on any problem `env` is returned as given.
    """
    assert st.call is not None
    problems = [e for name, t in machine.tools[st.call.tool].results
                for e in check_value(result.get(name), t, f"result `{name}`")]
    if problems:
        return dict(env), problems
    new_env = dict(env)
    for var, res in st.bindings:
        # An optional result the tool left out is none (check_value accepted its absence above).
        new_env[var] = coerce(result.get(res), machine.variables[var].type)
    return new_env, []


def wait_to_retry(exc: ExecutorError, deadline: float | None, max_wait_s: float, *,
                  now: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> bool:
    """Honour a server's Retry-After before the next attempt; False when no attempt should follow.

    False when the wait asked for is longer than `max_wait_s` or would pass `deadline` (a `now()` value, by default
    `time.monotonic()`; None: no deadline), or, without a Retry-After, when the deadline has passed. Otherwise
    `sleep`s the wait, if any, and is True. Shared by the interpreter and the baseline loop.
    """
    wait = getattr(exc, "retry_after", None)
    if not wait:
        return deadline is None or now() < deadline
    if wait > max_wait_s:
        return False
    if deadline is not None and now() + wait >= deadline:
        return False
    sleep(wait)
    return True


def complete_within(executor: Executor, request: Request, deadline: float | None, deadline_s: float | None) -> Response:
    """One executor call bounded by what is left of the step's deadline; a reply that is not text is an error."""
    if deadline is not None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeadlineError(f"no answer within the step deadline of {deadline_s:g} s")
        limit = getattr(executor, "limit_time", None)
        if limit is not None:
            limit(remaining)
    response = executor.complete(request)
    if not isinstance(response.text, str):
        raise ExecutorError(f"the reply's content is {type(response.text).__name__}, not text")
    return response
