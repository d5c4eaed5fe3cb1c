"""`skillc run`, `replay`, `score` and `test`: each command's config, driver and typed result (`skillc.api` re-exports
them). Only a machine that passes `skillc check` runs, replays, is scored or explored: the gate is
`skillc.language.load_checked`, which imports the checker only when a command runs, so that importing this package
still loads no checker.

A user error comes back in the result (a `Usage` for a bad flag, coded diagnostics for a runtime error), never as
an exception.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import attrs

from skillc import runtime
from skillc.bench.score import TraceScore, score_trace_file, tally
from skillc.bench.suite import load_suite
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.code import Code
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, make
from skillc.diagnostics.files import FileProblem, JSONProblem, loads, read_text
from skillc.diagnostics.flags import seconds_problem
from skillc.ir import types as T
from skillc.ir.machine import Machine
from skillc.ir.suggest import did_you_mean
from skillc.language import load_checked
from skillc.runtime.executors import Budget, ExecutorError, make_executor, spec_file
from skillc.runtime.executors.scripted import ScriptError
from skillc.runtime.guard import refuse_resume_changes, refuse_trace_target, resumed_places
from skillc.runtime.interaction import AskUser, Question
from skillc.runtime.interpreter import RunError, RunOptions, RunResult
from skillc.runtime.journal import Journal, JournalError, Wait
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.replay import ReplayReport
from skillc.runtime.session import default_skill_dir, run_mode, run_tools
from skillc.runtime.tools import ToolError
from skillc.runtime.trace import TraceError

if TYPE_CHECKING:
    from skillc.testing.explore import TestReport


@attrs.define
class Usage:
    """A usage error the command line reports the way click reports a bad flag (exit 2)."""

    message: str
    param: str | None = None


@attrs.define
class RunConfig:
    """Everything `skillc run` takes: the machine, its inputs, the executor and the runtime's limits.

    `workdir`: the run's work folder (default: the current folder). `skill_dir`: the skill's folder (the place
    `skill_dir`, read-only to the tools); default: the folder of the machine's `source` document when it exists.
    With `resume`, both default to the folders the run last ran in (its journal keeps them). `allow_hosts`: hosts
    `fetch` may reach. Answers to `ask_user`: `answer` a callback (called with the question, a `str` whose
    `options` is the menu, and returning the answer) or, with `resume`, the text that answers the question the run
    waits on (`--answer`); `answers` answers given in advance, in order. With none of them and no terminal, a
    journaled run waits (`RunReport.waiting`) and resumes once with `RunConfig(resume=RUN_ID, answer=TEXT)`; without
    a journal (`journal=None`) the call fails as "needs a user".
    """

    machine: str | None = None
    executor: str | None = None  # scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL, local[:PATH]
    inputs: tuple[str, ...] = ()  # NAME=VALUE (JSON unless the variable is a string or an enum)
    input_file: str | None = None  # a JSON object of inputs
    base_url: str | None = None
    strategy: str = "auto"
    trace: str | None = None
    max_steps: int = 1000
    retries: int = 2
    journal: str | None = ".skillc/runs.sqlite"  # None: no journal (a run that asks and has nobody to ask fails)
    resume: str | None = None  # a run id
    tools: tuple[str, ...] = ()  # Python files whose functions implement tools
    workdir: str | None = None
    tool_timeout_s: float = 60.0
    model_timeout_s: float = 120.0
    #: Tokens of one reply of the openai and anthropic executors: a state that writes a report or a file's content
    #: needs thousands, and a reply cut short is not valid JSON.
    max_tokens: int = 8192
    step_deadline_s: float = 600.0
    mode: Literal["machine", "native", "prompt-only"] = "machine"
    skill_dir: str | None = None
    allow_hosts: tuple[str, ...] = ()
    answer: str | Callable[[str], str] | None = None
    answers: tuple[str, ...] | list[str] = ()



@attrs.define
class RunReport(HasDiagnostics):
    """`skillc run`: the run's result, or why there was none (the machine's check, a usage error, or a
    runtime error: `error`, a coded diagnostic, also in `diagnostics`; its SKM5xx code, or SKM501 for a
    refusal that has no code of its own, `error_coded` False)."""

    result: RunResult | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False
    usage: Usage | None = None
    error: Diagnostic | None = None
    error_coded: bool = True
    machine_path: str | None = None
    interrupted: bool = False  # Ctrl-C or SIGTERM stopped the run; its committed steps are in the journal
    run_id: str | None = None  # with `interrupted`: the run `--resume` continues (None: no run had started)
    journal: str | None = None  # the journal the run is kept in (for the command that resumes it)
    workdir: str | None = None  # the run's work folder and skill folder (absolute), as its journal keeps them
    skill_dir: str | None = None

    @property
    def waiting(self) -> Wait | None:
        """The question a run waits on (its `question`, `options`, `run_id`), or None."""
        return self.result.waiting if self.result is not None else None

    @property
    def error_line(self) -> str | None:
        """The runtime error as one line: `error[SKM5xx]: message` (the message alone when it has no code)."""
        if self.error is None:
            return None
        return f"error[{self.error.code}]: {self.error.message}" if self.error_coded else self.error.message


def _input_value(machine: Machine, raw: str) -> tuple[str, Value]:
    """`name=value` from --input: strings as written, anything else as JSON."""
    name, sep, value = raw.partition("=")
    if not sep:
        raise _UsageError(f"expected NAME=VALUE, got {raw!r}", "--input")
    var = machine.variables.get(name)
    if var is not None and isinstance(T.strip_optional(var.type), (T.StrT, T.EnumT)):
        return name, value
    try:
        return name, json.loads(value)
    except ValueError:
        raise _UsageError(f"the value of `{name}` is not JSON: {value!r}", "--input") from None


class _UsageError(Exception):
    """A usage problem found deep in `run`; becomes `RunReport.usage`."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.usage = Usage(message, param)


def run(config: RunConfig) -> RunReport:
    """Run a checked machine (or resume a crashed or waiting run) with the executor, tools and limits of `config`."""

    c = config
    journal: Journal | None = None
    for flag, seconds in (("--tool-timeout", c.tool_timeout_s), ("--model-timeout", c.model_timeout_s),
                          ("--step-deadline", c.step_deadline_s)):
        if (problem := seconds_problem(flag, seconds)) is not None:
            return RunReport(None, [make(diagnostics_codes.IO_ERROR, problem)], usage=Usage(problem))
    try:
        if isinstance(c.answer, str) and not c.resume:
            return RunReport(None, usage=Usage("--answer answers the question a waiting run asked: give it with "
                                               "--resume RUN_ID", "--answer"))
        if c.resume and c.journal is None:
            return RunReport(None, usage=Usage("--resume continues a run from its journal; give the journal",
                                               "--resume"))
        if c.resume and c.mode != "machine":  # a baseline keeps no journal: there is nothing to resume
            return RunReport(None, usage=Usage(f"--resume continues machine-mode runs; a {c.mode} run cannot be "
                                               "resumed", "--resume"))
        if c.resume and not Path(str(c.journal)).is_file():  # opening it would make an empty journal here
            raise JournalError(f"no run journal at {c.journal}: a resume reads the journal its run was started "
                               "with (--journal; the default .skillc/runs.sqlite is relative to the current folder)")
        journal = Journal(c.journal) if c.journal is not None else None
        machine_path, executor_spec = c.machine, c.executor
        workdir_given, skill_dir_given = c.workdir, c.skill_dir
        if c.resume:
            assert journal is not None
            info = journal.info(c.resume)
            refuse_resume_changes(info, executor_spec, bool(c.inputs or c.input_file), c.trace, machine_path)
            machine_path = machine_path or info.machine_path
            executor_spec = executor_spec or info.executor
            workdir_given, skill_dir_given = resumed_places(info, c.workdir, c.skill_dir)
        if not machine_path or not executor_spec:
            return RunReport(None, usage=Usage("give MACHINE and --executor (or --resume RUN_ID)"))
        if c.workdir is not None and not Path(c.workdir).is_dir():
            return RunReport(None, usage=Usage(f"no such folder: {c.workdir}", "--workdir"))
        if c.skill_dir is not None and not Path(c.skill_dir).is_dir():
            return RunReport(None, usage=Usage(f"no such folder: {c.skill_dir}", "--skill-dir"))
        if isinstance(c.max_tokens, bool) or not isinstance(c.max_tokens, int) or c.max_tokens < 1:
            return RunReport(None, usage=Usage(f"a reply needs at least 1 token (got {c.max_tokens!r})",
                                               "--max-tokens"))
        refuse_trace_target(c.trace, [machine_path, c.journal, c.input_file, *c.tools, spec_file(executor_spec)])
        checked = load_checked(machine_path)
        if checked.machine is None:
            return RunReport(None, checked.diagnostics, checked.unchecked, machine_path=machine_path)
        machine = checked.machine
        given: Object = {}
        if c.input_file:
            given = loads(read_text(c.input_file, what="JSON file"))
            if not isinstance(given, dict):
                return RunReport(None, usage=Usage("the input file must hold a JSON object", "--input-file"))
        given.update(dict(_input_value(machine, raw) for raw in c.inputs))
        executor = make_executor(executor_spec, base_url=c.base_url, strategy=c.strategy, timeout_s=c.model_timeout_s,
                                 budget=Budget(max_tokens=c.max_tokens))
        workdir = Path(workdir_given or ".").resolve()
        skill_dir = Path(skill_dir_given).resolve() if skill_dir_given is not None else default_skill_dir(machine)
        user = AskUser(answer=c.answer if callable(c.answer) else None, prepared=list(c.answers))
        answer = c.answer if isinstance(c.answer, str) else None
        if c.resume and answer is None and (callable(c.answer) or c.answers):
            assert journal is not None
            wait = journal.waiting(c.resume)  # a callback or prepared answer answers the question the run waits on
            if wait is not None:
                answer = (str(c.answer(Question(wait.question, wait.options))) if callable(c.answer)
                          else user.prepared.pop(0))
        tools = run_tools(machine, c.mode, workdir=workdir, skill_dir=skill_dir, modules=c.tools,
                          timeout_s=c.tool_timeout_s, allow_hosts=c.allow_hosts, ask_user=user)
        options = RunOptions(retries=c.retries, max_steps=c.max_steps, trace=Path(c.trace) if c.trace else None,
                             journal=journal, executor_spec=executor_spec, machine_path=str(machine_path),
                             step_deadline_s=c.step_deadline_s, workdir=str(workdir),
                             skill_dir=None if skill_dir is None else str(skill_dir), user=user,
                             workdir_kept=bool(c.resume) and c.workdir is None and workdir_given is not None)
        return RunReport(run_mode(machine, checked.text, c.mode, executor, tools, options, given, resume=c.resume,
                                  answer=answer), journal=c.journal, workdir=str(Path(workdir).resolve()),
                         skill_dir=None if skill_dir is None else str(Path(skill_dir).resolve()))
    except KeyboardInterrupt:  # the interpreter marked its run interrupted (resumable); a baseline keeps none
        return RunReport(None, interrupted=True, run_id=c.resume or (journal.started if journal else None))
    except _UsageError as exc:
        return RunReport(None, usage=exc.usage)
    except (RunError, ExecutorError, JournalError, ToolError, ScriptError, TraceError, FileProblem, JSONProblem,
            ValueError) as exc:
        error, coded = _runtime_error(exc)
        return RunReport(None, [error], error=error, error_coded=coded)


def _runtime_error(exc: Exception) -> tuple[Diagnostic, bool]:
    """A runtime error as a coded diagnostic, and whether the code is its own (the runtime's errors carry their
    SKM5xx code; one without is SKM501, a run that cannot start as asked)."""
    code = getattr(exc, "code", None)
    if isinstance(code, Code):
        return make(code, str(exc)), True
    return make(diagnostics_codes.RUN_REFUSED, str(exc)), False


@attrs.define
class ReplayResult(HasDiagnostics):
    """`skillc replay`: the verdict, or why there is none (the machine's check, or an unreadable trace)."""

    report: ReplayReport | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False
    error: str | None = None


def replay(machine_path: str, trace: str, *, other_machine: bool = False) -> ReplayResult:
    """Replay a trace through a checked machine without calling models or tools."""

    checked = load_checked(machine_path)
    if checked.machine is None:
        return ReplayResult(None, checked.diagnostics, checked.unchecked)
    try:
        return ReplayResult(runtime.replay_file(checked.machine, checked.text, trace, other_machine=other_machine))
    except TraceError as exc:
        return ReplayResult(None, _found(exc), error=str(exc))


@attrs.define
class ScoreResult(HasDiagnostics):
    """`skillc score`: one score per trace, or why there are none (the machine's check, the suite's diagnostics,
    an unreadable trace, a usage error)."""

    scores: list[TraceScore]
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False
    error: str | None = None
    usage: Usage | None = None

    @property
    def compliance(self) -> float | None:
        """Request-level full compliance: the share of compliant traces among those judged (None: none judged)."""
        return tally([sc.score.rfc for sc in self.scores]).rate

    @property
    def success(self) -> float | None:
        """Task success: the share of traces their verifier passed among those verified (None: none verified)."""
        return tally([sc.score.success for sc in self.scores]).rate


def score(machine_path: str, traces: Sequence[str], *, suite: str | None = None, task: str | None = None,
          workdir: str | None = None) -> ScoreResult:
    """Score traces against a checked machine: task success from the suite task's verifier, RFC from effects."""

    if task is not None and suite is None:
        return ScoreResult([], usage=Usage("--task needs --suite", "--task"))
    checked = load_checked(machine_path)
    if checked.machine is None:
        return ScoreResult([], checked.diagnostics, checked.unchecked)
    loaded = load_suite(suite) if suite is not None else None
    if loaded is not None and loaded.suite is None:
        return ScoreResult([], list(loaded.diagnostics), error=f"{suite}: the suite has errors")
    the_suite = loaded.suite if loaded is not None else None
    if the_suite is not None and task is not None and task not in {t.id for t in the_suite.tasks}:
        hint = did_you_mean(task, [t.id for t in the_suite.tasks]) or ""
        return ScoreResult([], usage=Usage(f"the suite has no task `{task}`. {hint}".strip(), "--task"))
    try:
        return ScoreResult([score_trace_file(Path(t), checked.machine, suite=the_suite, task_id=task,
                                             workdir=Path(workdir) if workdir else None) for t in traces])
    except TraceError as exc:
        return ScoreResult([], _found(exc), error=str(exc))


def _found(exc: Exception) -> list[Diagnostic]:
    """The coded finding a trace reader raised with, when it has one."""
    diagnostic = getattr(exc, "diagnostic", None)
    return [diagnostic] if isinstance(diagnostic, Diagnostic) else []


@attrs.define
class ExploreResult(HasDiagnostics):
    """`skillc test`: the exploration's report and the machine explored, or the diagnostics why it was not."""

    report: TestReport | None
    machine: Machine | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False


def explore(machine_path: str, *, coverage: str = "transitions", examples: int = 200, seed: int = 0,
            traces: str | None = None) -> ExploreResult:
    """Explore a checked machine with generated outputs; traces are kept in `traces` (else only failing ones)."""
    from skillc.testing.explore import explore as run_explore  # local: it loads the solver (z3)

    checked = load_checked(machine_path)
    if checked.machine is None:
        return ExploreResult(None, None, checked.diagnostics, checked.unchecked)
    keep = Path(traces) if traces else Path(tempfile.mkdtemp(prefix="skillc-test-"))
    try:
        keep.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file or a device (`/dev/full`) where the folder goes, no permission, a full disk
        why = "not a folder" if isinstance(exc, FileExistsError) else exc.strerror or exc
        return ExploreResult(None, None, [make(diagnostics_codes.IO_ERROR, f"--traces {traces}: cannot keep traces "
                                               f"there ({why})")])
    report = run_explore(checked.machine, checked.text, examples=examples, seed=seed, coverage=coverage, traces=keep)
    if not traces and not report.failures:
        shutil.rmtree(keep, ignore_errors=True)
    return ExploreResult(report, checked.machine)
