"""The bench runner: the matrix of cells, one isolated run per cell, rows as they complete, the report.

`run_bench(config, backend, progress)` loads the suite, checks the machine once, opens
the results store, skips every cell that already has a row (a killed bench resumes
where it stopped; a cell that was running when it was killed has no row and runs
again from a fresh workdir; `bench.json` (`manifest.py`) refuses to mix rows of
another machine, skill document or limits, or of suite tasks that changed), sends
the pending cells to a backend and appends each row as it comes back, then writes
the report over the matrix's rows.

`run_cell(job)` is one cell, self-contained enough to run in another process or a Ray
task: a fresh workdir with the task's fixture, the machine or a baseline run with real
tools inside it, the trace scored by `score.score_run`. It never raises for a failing
cell: an executor that cannot be made, a harness problem or a bug becomes a row whose
`error` names the exception. Executors that load a model are kept per worker process
and spec; `scripted:` and `replay:` executors are made afresh for every cell, so every
cell starts its script from the top.
"""

from __future__ import annotations

import contextlib
import fnmatch
import hashlib
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, cast

import attrs

from skillc.bench import codes
from skillc.bench.backends import Backend, BackendError, LocalBackend
from skillc.bench.cells import CellPaths, cell_paths, fresh_workdir, kill_group, run_hook, safe_name
from skillc.bench.effects import Requirement
from skillc.bench.inside import inner_calls, watching
from skillc.bench.manifest import keep_manifest, manifest_of
from skillc.bench.report import build_report, write_report
from skillc.bench.results import Cell, Row, matrix, open_writer, read_results
from skillc.bench.score import score_run
from skillc.bench.suite import Suite, Task, bound_inputs, check_inputs, load_suite
from skillc.check.source import check_source
from skillc.diagnostics import Diagnostic, Severity, has_errors, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.files import FileProblem, read_text, write_output
from skillc.diagnostics.flags import seconds_problem
from skillc.frontends.markdown.pipeline import build
from skillc.ir.loader import load
from skillc.ir.suggest import did_you_mean
from skillc.runtime.baselines import skill_document
from skillc.runtime.executors import SPECS, ExecutorError, make_executor
from skillc.runtime.executors.scripted import ScriptError
from skillc.runtime.interaction import AskUser
from skillc.runtime.interpreter import RunError, RunOptions, machine_hash
from skillc.runtime.record import TraceError, load_run
from skillc.runtime.session import MODES, Mode, default_skill_dir, run_mode, run_tools
from skillc.runtime.tools import ToolError, tools_confined

if TYPE_CHECKING:
    from skillc.bench.manifest import Manifest
    from skillc.bench.report import Report
    from skillc.ir.machine import Machine
    from skillc.runtime.executors.base import Executor
    from skillc.runtime.tools import ToolBox

#: Executor kinds read from a file in microseconds: made anew per cell (a script restarts), never cached.
_FRESH_KINDS = ("scripted", "replay")
#: In an executor spec, replaced by the cell's task id (one script per task).
TASK_PLACEHOLDER = "{task}"
#: In an executor spec, replaced by the label of the cell's machine under test (`native` for native cells).
MACHINE_PLACEHOLDER = "{machine}"
#: The step budget when neither --max-steps nor the suite's `max_steps` gives one.
DEFAULT_MAX_STEPS = 100

#: Told the number of cells and how many were already done; yields a callback given every new row.
Progress = Callable[[int, int], AbstractContextManager[Callable[[Row], None]]]


#: The backends `make_backend` knows.
BACKENDS = ("local", "ray")




def make_backend(name: str, workers: int = 1, address: str | None = None) -> Backend:
    """The backend called `name` (`local` or `ray`); BackendError when it cannot be had."""
    if name == "local":
        return LocalBackend(workers)
    if name == "ray":
        try:
            from skillc.bench.ray_backend import RayBackend  # local, guarded: the ray backend (optional extra)
        except ImportError as exc:
            raise BackendError(f"the ray backend is not available: {exc} (pip install 'skillc[bench]')") from None
        backend: Backend = RayBackend(address, workers=workers)
        return backend
    raise BackendError(f"unknown backend {name!r}; expected one of {', '.join(BACKENDS)}")


@attrs.frozen
class Limits:
    """The runtime's limits for every cell of a bench."""

    max_steps: int = DEFAULT_MAX_STEPS
    tool_timeout_s: float = 60.0
    model_timeout_s: float = 120.0
    step_deadline_s: float = 600.0
    retries: int = 2


@attrs.frozen
class CellJob:
    """Everything a worker needs to run one cell (picklable: paths, the task and requirements as records).

    `executor` is the spec to make the executor from (file paths absolute, `{task}` filled in); the
    cell keeps the spec as the user wrote it.
    """

    cell: Cell
    executor: str
    out: Path
    machine: Path
    machine_hash: str
    skill: Path | None
    task: Task
    requirements: tuple[Requirement, ...] = ()
    failed_runs_comply: bool = False
    tools: tuple[Path, ...] = ()
    limits: Limits = Limits()
    #: The suite's `[inputs]` bindings (machine input → template of task fields).
    bindings: Mapping[str, str] = attrs.field(factory=dict)
    #: The suite's per-cell setup and teardown commands, their timeout, and the suite's folder (told to them).
    setup: str | None = None
    teardown: str | None = None
    setup_timeout: float = 60.0
    suite_dir: Path | None = None
    #: Whether the suite's tool modules run in a box, decided where the bench starts (a Ray worker's environment
    #: is its cluster's): `SKILLC_CONFINE_TOOLS=0` there runs them in the worker's process.
    confine_tools: bool = attrs.field(factory=tools_confined)

    @property
    def mode(self) -> Mode:
        """The run's mode: the cell's mode without its machine's label (`machine:offline` → machine)."""
        return cast(Mode, self.cell.mode.partition(":")[0])


class _CellProblem(Exception):
    """The cell cannot run (its machine changed, its workdir cannot be made); the message goes in `error`."""


# ---------------------------------------------------------------- one cell

def run_cell(job: CellJob) -> Row:
    """Run and score one cell; a failure of any kind becomes the row's `error`, never an exception."""
    try:
        return _run_cell(job)
    except _CellProblem as exc:
        return _error_row(job, str(exc))
    except Exception as exc:  # noqa: BLE001 - a bug must not lose the cell or stop the bench; the row names it
        return _error_row(job, f"internal error: {type(exc).__name__}: {exc}")


def _error_row(job: CellJob, error: str, latency_s: float = 0.0, trace: str | None = None) -> Row:
    """The row of a cell that could not be run or scored."""
    return Row(job.cell, None, None, latency_s=latency_s, trace=trace, error=error, horizon=job.task.horizon)


def _run_cell(job: CellJob) -> Row:
    """`run_cell` without the last line of defence: the fresh work folder, the setup, the run, the teardown."""
    paths = cell_paths(job.out, job.cell)
    problem = fresh_workdir(job.out, paths, job.task.workdir)
    if problem is not None:
        return _error_row(job, problem.message)
    machine, text = _machine(job.machine, job.machine_hash)
    group = None
    if job.setup is not None:
        setup = run_hook("setup", job.setup, paths.workdir, paths.folder / "setup.log", job.setup_timeout,
                         _hook_env(job, paths))
        if setup.error is not None:
            _teardown(job, paths, setup.group)
            return _error_row(job, setup.error)
        group = setup.group
    row = _run_prepared(job, paths, machine, text)
    problem_after = _teardown(job, paths, group)
    if problem_after is not None:
        row = attrs.evolve(row, error=problem_after if row.error is None else f"{row.error}; {problem_after}")
    return row


def _hook_env(job: CellJob, paths: CellPaths) -> dict[str, str]:
    """What a setup or teardown command is told: the suite's folder, the cell's work folder, the task."""

    return {"SKILLC_SUITE_DIR": str(job.suite_dir or ""), "SKILLC_BENCH_WORKDIR": str(paths.workdir.resolve()),
            "SKILLC_TASK_ID": job.task.id,
            "SKILLC_TASK_INPUTS": json.dumps(job.task.inputs, ensure_ascii=False, default=str)}


def _teardown(job: CellJob, paths: CellPaths, group: int | None) -> str | None:
    """Run the teardown command (if any), then end what is left of the setup's process group; its error."""
    error = None
    if job.teardown is not None and paths.workdir.is_dir():
        error = run_hook("teardown", job.teardown, paths.workdir, paths.folder / "setup.log", job.setup_timeout,
                         _hook_env(job, paths)).error
    if group is not None:
        kill_group(group)
    return error


def _run_prepared(job: CellJob, paths: CellPaths, machine: Machine, text: str) -> Row:
    """Run and score a cell whose work folder is ready."""

    try:
        executor, fresh = _executor(job.executor, job.limits.model_timeout_s)
    except (ExecutorError, ScriptError, TraceError) as exc:
        return _error_row(job, f"executor {job.cell.executor}: {exc}")
    error: str | None = None
    started = time.perf_counter()
    try:
        user = _user(job)
        skill_dir = _skill_folder(job, machine)
        tools = _toolbox(job, machine, paths.workdir, skill_dir, user)
        limits = job.limits
        options = RunOptions(retries=limits.retries, max_steps=limits.max_steps, trace=paths.trace,
                             executor_spec=job.cell.executor, machine_path=str(job.machine),
                             step_deadline_s=limits.step_deadline_s, workdir=str(paths.workdir.resolve()),
                             skill_dir=None if skill_dir is None else str(skill_dir), user=user)
        skill_text = _skill_text(job.skill) if job.mode == "native" else None
        declared = {v.name for v in machine.variables.values() if v.is_input}
        inputs = job.task.inputs_for(paths.workdir, bound_inputs(job.task, job.bindings, declared))
        started = time.perf_counter()  # the row's latency is the run's, not the tools' loading
        # Python tools see the workdir as their current folder; bash scripts log the commands they run
        with contextlib.chdir(paths.workdir), watching(paths.folder):
            run_mode(machine, text, job.mode, executor, tools, options, inputs, skill_text=skill_text)
    except (RunError, ExecutorError, ToolError, ScriptError, TraceError, ValueError, OSError) as exc:
        error = f"{type(exc).__name__}: {exc}"
    finally:
        if fresh:
            executor.close()
    return _scored(job, machine, paths, time.perf_counter() - started, error)


def _scored(job: CellJob, machine: Machine, paths: CellPaths, latency_s: float, error: str | None) -> Row:
    """The row of a cell whose run ended: its trace scored by effects (an error kept when there was one)."""

    trace = str(paths.trace.relative_to(job.out))
    if not paths.trace.is_file():
        return _error_row(job, error or "the run wrote no trace", latency_s)
    try:
        run = load_run(paths.trace)
    except TraceError as exc:
        return _error_row(job, error or f"the run's trace is unreadable: {exc}", latency_s, trace)
    # The machine's own rules count in every mode: RFC asks the same of a native run as of the machine.
    score = score_run(run, paths.trace, requirements=job.requirements, workdir=paths.workdir,
                      verifier=job.task.verifier, failed_runs_comply=job.failed_runs_comply, machine=machine,
                      task=job.task, inner=inner_calls(paths.folder))
    footer = run.footer
    prompt = sum(s.input_tokens or 0 for s in run.steps)
    completion = sum(s.output_tokens or 0 for s in run.steps)
    if footer is not None:
        prompt = footer.input_tokens if footer.input_tokens is not None else prompt
        completion = footer.output_tokens if footer.output_tokens is not None else completion
        if error is None and footer.reason is not None and footer.reason.kind in ("executor", "needs_user"):
            # The executor failed (no answer, a timeout), or the skill asked and the task gives no answer: said
            # beside the verdicts.
            error = footer.reason.message
    violated = score.compliance.violated
    return Row(job.cell, score.success, score.rfc, steps=len(run.steps), prompt_tokens=prompt,
               completion_tokens=completion, latency_s=round(latency_s, 6), outcome=score.outcome, trace=trace,
               error=error, horizon=job.task.horizon, violated=violated)


# ---------------------------------------------------------------- per-process caches

_MACHINES: dict[tuple[Path, str], tuple[Machine, str]] = {}
_EXECUTORS: dict[tuple[str, float], Executor] = {}
_SKILLS: dict[Path, str] = {}


def remember_machine(path: Path, machine: Machine, text: str) -> None:
    """Keep a machine this process has already checked, so in-process cells do not load it again."""

    _MACHINES[(path, machine_hash(text))] = (machine, text)


def _machine(path: Path, digest: str) -> tuple[Machine, str]:
    """The machine the bench checked, loaded once per process; refused if the file changed since."""

    key = (path, digest)
    if key not in _MACHINES:
        try:
            text = read_text(path, what=".skm file")
        except FileProblem as exc:
            raise _CellProblem(str(exc)) from None
        if machine_hash(text) != digest:
            raise _CellProblem(f"{path} changed since the bench checked it")
        loaded = load(path)
        if loaded.machine is None:
            raise _CellProblem(f"{path} no longer loads")
        _MACHINES[key] = (loaded.machine, text)
    return _MACHINES[key]


def _executor(spec: str, timeout_s: float) -> tuple[Executor, bool]:
    """The executor of a spec and whether it is fresh (the caller closes it) or this process's cached one."""

    if _kind(spec) in _FRESH_KINDS:
        return make_executor(spec, timeout_s=timeout_s), True
    key = (spec, timeout_s)
    if key not in _EXECUTORS:
        _EXECUTORS[key] = make_executor(spec, timeout_s=timeout_s)
    return _EXECUTORS[key], False


def _kind(spec: str) -> str:
    """An executor spec's kind: `local` for `local?n_ctx=…` too."""
    return spec.partition(":")[0].partition("?")[0]


def _skill_text(path: Path | None) -> str | None:
    """The skill document native mode sends (None: the baseline reads the machine's `source`)."""
    if path is None:
        return None
    if path not in _SKILLS:
        _SKILLS[path] = path.read_text(encoding="utf-8")
    return _SKILLS[path]


def _user(job: CellJob) -> AskUser:
    """The cell's `ask_user`: the task's prepared answers, in order, and never the terminal. A question the task
    gives no answer for fails the run as "needs a user" (a bench never waits, and nobody invents the answer)."""

    return AskUser(prepared=list(job.task.answers), terminal=False)


def _skill_folder(job: CellJob, machine: Machine) -> Path | None:
    """The cell's skill folder (the place `skill_dir`, read-only): the suite's skill document's folder, else the
    folder of the machine's `source`."""

    return job.skill.parent.resolve() if job.skill is not None else default_skill_dir(machine)


def _toolbox(job: CellJob, machine: Machine, workdir: Path, skill_dir: Path | None, user: AskUser) -> ToolBox:
    """Real tools for one cell, as `skillc run` builds them (`session.run_tools`): the kit confined to the cell's
    workdir and the skill folder, the suite's modules loaded afresh, the task's answers for `ask_user`."""

    return run_tools(machine, job.mode, workdir=workdir.resolve(), skill_dir=skill_dir,
                     modules=job.tools, timeout_s=job.limits.tool_timeout_s, ask_user=user,
                     confine_modules=job.confine_tools)


# ---------------------------------------------------------------- the bench

@attrs.frozen
class BenchConfig:
    """Everything `skillc bench` takes. `max_steps` None: the suite's `max_steps`, else DEFAULT_MAX_STEPS."""

    suite: str | None = None
    modes: tuple[str, ...] = MODES
    executors: tuple[str, ...] = ()
    repeats: int = 1
    workers: int = 1
    output: str | None = None  # default .skillc/bench/<suite name>
    backend: str = "local"
    address: str | None = None
    max_steps: int | None = None
    model_timeout_s: float = 120.0
    tool_timeout_s: float = 60.0
    step_deadline_s: float = 600.0
    retries: int = 2
    report_only: bool = False
    #: Machines under test from outside the suite (`--machine`, each a column of the report) and builds of the
    #: suite's skill folder (`--build offline|model:SPEC`); none: the suite's `machine`.
    machines: tuple[str, ...] = ()
    builds: tuple[str, ...] = ()
    #: `--tasks`: comma-separated shell patterns of the task ids to run (None: every task).
    tasks: str | None = None
    #: `--dry-run`: resolve every cell, check inputs, set up one cell's work folder; run nothing.
    dry_run: bool = False


@attrs.frozen
class BenchOutcome:
    """What a bench did: its rows (the matrix's, including earlier runs' when resumed) and where it wrote.

    `usage`: bad flags or a bad suite (nothing ran); `unchecked`: the machine failed `skillc check`;
    `incomplete`: the backend failed or the bench was interrupted, and some cells have no row (run the bench again
    to finish them); `interrupted`: an interrupt (SIGINT) stopped it (no report is written then).
    """

    diagnostics: tuple[Diagnostic, ...] = ()
    suite: str | None = None
    out: Path | None = None
    rows: tuple[Row, ...] = ()
    report: Report | None = None
    cells: int = 0
    ran: int = 0
    resumed: int = 0
    usage: bool = False
    unchecked: bool = False
    incomplete: bool = False
    interrupted: bool = False
    #: A dry run: what would run (`planned`: the cells without a row), the machines under test, the set-up cell.
    dry_run: bool = False
    planned: tuple[Cell, ...] = ()
    machines: tuple[tuple[str, str], ...] = ()
    setup_note: str | None = None

    @property
    def results(self) -> Path | None:
        """The results file."""
        return None if self.out is None else self.out / "results.jsonl"

    @property
    def reports(self) -> tuple[Path, ...]:
        """The report files, once written."""
        return () if self.out is None or self.report is None else (self.out / "report.md", self.out / "report.html")


def _usage(*diagnostics: Diagnostic) -> BenchOutcome:
    """A bench refused before anything ran."""
    return BenchOutcome(tuple(diagnostics), usage=True)


def _flag_problems(config: BenchConfig, tasks: Sequence[str]) -> list[Diagnostic]:
    """Bad modes, a missing or unusable executor (for any of the tasks), an unknown backend, counts below 1."""
    problems = [make(codes.UNKNOWN_BENCH_MODE, f"unknown mode `{m}`; the modes are {', '.join(MODES)}",
                     hint=did_you_mean(m, MODES)) for m in config.modes if m not in MODES]
    if not config.modes:
        problems.append(make(codes.UNKNOWN_BENCH_MODE, f"no mode given; the modes are {', '.join(MODES)}"))
    if not config.executors:
        problems.append(make(codes.INVALID_BENCH_EXECUTOR, "give at least one executor (--executor SPEC)"))
    problems += [p for spec in config.executors
                 if MACHINE_PLACEHOLDER not in spec and (p := spec_problem(spec, tasks)) is not None]
    if config.backend not in BACKENDS:
        problems.append(make(codes.BACKEND_FAILED, f"unknown backend `{config.backend}`; the backends are "
                                                   f"{', '.join(BACKENDS)}"))
    for name, value in (("repeats", config.repeats), ("workers", config.workers), ("max steps", config.max_steps)):
        if value is not None and value < 1:
            problems.append(make(codes.INVALID_BENCH_COUNT, f"{name} must be at least 1, not {value}"))
    for name, seconds in (("--model-timeout", config.model_timeout_s), ("--tool-timeout", config.tool_timeout_s)):
        if (problem := seconds_problem(name, seconds)) is not None:
            problems.append(make(codes.INVALID_BENCH_COUNT, problem))
    return problems


def spec_problem(spec: str, tasks: Sequence[str], machines: Sequence[str] = ("native",)) -> Diagnostic | None:
    """Why an executor spec cannot work, found before any cell runs (each task's and machine's scripted file is
    read here)."""

    kind = _kind(spec)
    if kind not in ("scripted", "replay", "openai", "anthropic", "local"):
        return make(codes.INVALID_BENCH_EXECUTOR, f"unknown executor {spec!r}; expected one of {SPECS}")
    if kind not in _FRESH_KINDS:
        return None  # a model is loaded (or a server asked) by the cells themselves, not twice
    fills = [spec.replace(TASK_PLACEHOLDER, t).replace(MACHINE_PLACEHOLDER, m) for t in tasks or [""]
             for m in machines]
    for filled in dict.fromkeys(fills):
        try:
            make_executor(filled).close()
        except (ExecutorError, ScriptError, TraceError, ValueError) as exc:
            return make(codes.INVALID_BENCH_EXECUTOR, f"executor {filled!r}: {exc}")
    return None


def absolute_spec(spec: str, task: str, machine: str = "native") -> str:
    """The spec a worker makes its executor from: `{task}` and `{machine}` filled in, a file path made absolute."""
    filled = spec.replace(TASK_PLACEHOLDER, task).replace(MACHINE_PLACEHOLDER, machine)
    kind, sep, rest = filled.partition(":")
    if not sep or kind not in (*_FRESH_KINDS, "local") or not rest:
        return filled
    path, query, options = rest.partition("?") if kind == "local" else (rest, "", "")
    return f"{kind}:{os.path.abspath(path)}{query}{options}"


@attrs.frozen
class Subject:
    """One machine under test: its label in the cells' modes (`machine:LABEL`), file, checked text's hash and
    the checked machine."""

    label: str
    path: Path
    hash: str
    machine: Machine


@attrs.frozen
class _Plan:
    """A bench ready to run: the suite (its tasks filtered), its checked machines and what native mode sends."""

    suite: Suite
    subjects: tuple[Subject, ...]
    skill: Path | None

    def subject(self, mode: str) -> Subject:
        """The machine a cell's mode runs: `machine:LABEL` names it; plain modes run the first."""
        label = mode.partition(":")[2]
        return next((s for s in self.subjects if s.label == label), self.subjects[0])

    @property
    def machine_hash(self) -> str:
        """What `bench.json` records as the machine: its hash, or one digest of every label and hash."""
        if len(self.subjects) == 1:
            return self.subjects[0].hash

        text = "\n".join(f"{s.label}={s.hash}" for s in self.subjects)
        return "machines:" + hashlib.sha256(text.encode()).hexdigest()


def mode_labels(modes: Sequence[str], subjects: Sequence[str]) -> list[str]:
    """The cells' modes: as given for one machine; with several, machine and prompt-only once per machine
    (`machine:LABEL`), native once (it runs the skill document, with the first machine's tools)."""
    if len(subjects) <= 1:
        return list(modes)
    return [label for m in modes for label in ([m] if m == "native" else [f"{m}:{s}" for s in subjects])]


def _filter_tasks(suite: Suite, patterns: str | None) -> Suite | Diagnostic:
    """The suite with only the tasks `--tasks` keeps (SKM743 when it keeps none)."""

    if patterns is None:
        return suite
    wanted = [p.strip() for p in patterns.split(",") if p.strip()]
    kept = tuple(t for t in suite.tasks if any(fnmatch.fnmatchcase(t.id, p) for p in wanted))
    if not kept:
        ids = ", ".join(t.id for t in suite.tasks[:8]) + (", …" if len(suite.tasks) > 8 else "")
        return make(codes.NO_MATCHING_TASK, f"--tasks {patterns!r} matches no task of {suite.path.name}",
                    hint=f"the task ids are {ids}")
    return attrs.evolve(suite, tasks=kept)


def _machine_files(config: BenchConfig, suite: Suite, out: Path) -> list[tuple[str, Path]] | Diagnostic:
    """The machines under test as (label, file): each `--machine`, each `--build` (built into OUT/builds/), else
    the suite's `machine`."""

    found: list[tuple[str, Path]] = []
    for raw in config.machines:
        label, named = _labelled(raw)
        path = Path(named).absolute()
        if not path.is_file():
            return make(codes.INVALID_MACHINE_UNDER_TEST, f"--machine {raw}: "
                        f"{'not a file' if path.exists() else 'no such file'}")
        found.append((label or path.stem, path))
    for raw in config.builds:
        label, spec = _labelled(raw)
        label = label or spec.partition(":")[0]
        built = _build(spec, suite, out / "builds" / f"{safe_name(label)}.skm")
        if isinstance(built, Diagnostic):
            return built
        found.append((label, built))
    if not found and suite.machine is not None:
        found.append((suite.machine.stem, suite.machine))
    labels = [label for label, _ in found]
    twice = next((label for label in labels if labels.count(label) > 1), None)
    if twice is not None:
        return make(codes.INVALID_MACHINE_UNDER_TEST, f"two machines under test are called {twice!r}; each is a "
                    "column of the report", hint="give the files different names")
    return found


def _labelled(raw: str) -> tuple[str | None, str]:
    """`LABEL=VALUE` as (LABEL, VALUE); a value without a plain label in front as (None, value)."""

    m = re.fullmatch(r"([A-Za-z0-9_.-]+)=(.+)", raw)
    return (m.group(1), m.group(2)) if m else (None, raw)


def _build(spec: str, suite: Suite, target: Path) -> Path | Diagnostic:
    """Compile the suite's skill folder (`offline`, or `model:SPEC` with the LLM compiler) into `target`."""

    if spec != "offline" and not spec.startswith("model:"):
        return make(codes.INVALID_MACHINE_UNDER_TEST, f"--build {spec!r}: expected `offline` or `model:SPEC`")
    if suite.skill is None:
        return make(codes.INVALID_MACHINE_UNDER_TEST, f"--build {spec}: the suite names no `skill` to build")

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return make(diagnostics_codes.IO_ERROR, f"cannot write the build into {target.parent}: {exc.strerror or exc}")
    result = build(suite.skill, output=target, model=None if spec == "offline" else spec.removeprefix("model:"))
    if not result.ok or result.text is None:
        first = next((d for d in result.diagnostics if d.is_error), None)
        return make(codes.INVALID_MACHINE_UNDER_TEST, f"--build {spec}: the build of {suite.skill} failed"
                    + (f": {first.code} {first.message}" if first is not None else ""))
    try:
        write_output(target, result.text, regular=True)
    except FileProblem as exc:
        return make(exc.code, str(exc))
    return target


def _plan(config: BenchConfig, suite: Suite, out: Path) -> _Plan | BenchOutcome:
    """Check each machine under test once (an unchecked one is refused) and find the document native mode sends."""

    files = _machine_files(config, suite, out)
    if isinstance(files, Diagnostic):
        return _usage(files)
    if not files:
        return _usage(make(codes.BENCH_NEEDS_MACHINE, f"the suite {suite.path} names no machine, and no --machine "
                                                      "or --build is given; every mode runs with a machine's tools "
                                                      "and inputs"))
    subjects: list[Subject] = []
    for label, path in files:
        subject = _subject(label, path, suite)
        if isinstance(subject, BenchOutcome):
            return subject
        subjects.append(subject)
    machine = subjects[0].machine
    skill = suite.skill
    if skill is None and skill_document(machine) is not None:
        skill = machine.source_path  # the document native mode sends, read by the cells
    if "native" in config.modes and skill is None:
        return _usage(make(codes.NO_SKILL_DOCUMENT, "native mode sends the skill document, but the suite names no "
                                                    "`skill` and the machine's `source` cannot be read"))
    if skill is not None:  # read once here: a document that is not UTF-8 text is refused before any cell runs

        try:
            _SKILLS[skill] = read_text(skill, what="skill document")
        except FileProblem as exc:
            return _usage(make(diagnostics_codes.IO_ERROR, str(exc)))
    return _Plan(suite, tuple(subjects), skill)


def _subject(label: str, path: Path, suite: Suite) -> Subject | BenchOutcome:
    """One machine under test, checked as `skillc check` does and its tasks' inputs checked against it."""

    checked = check_source(path)
    problems = tuple(d for d in checked.diagnostics if d.severity is not Severity.NOTE)
    if checked.machine is None or checked.failed:
        return BenchOutcome(problems, suite.name, unchecked=True)
    try:
        text = read_text(path, what=".skm file")
    except FileProblem as exc:
        return _usage(make(diagnostics_codes.IO_ERROR, str(exc)))
    inputs = check_inputs(suite, checked.machine)  # a task that could never start is refused once, not per cell
    if has_errors(inputs):
        return _usage(*inputs)
    remember_machine(path, checked.machine, text)
    return Subject(label, path, machine_hash(text), checked.machine)


def _limits(config: BenchConfig, suite: Suite) -> Limits:
    """The limits of every cell: the flags, the suite's step budget, the default."""
    return Limits(config.max_steps or suite.max_steps or DEFAULT_MAX_STEPS, config.tool_timeout_s,
                  config.model_timeout_s, config.step_deadline_s, config.retries)


def _manifest(plan: _Plan, limits: Limits) -> Manifest:
    """What the rows of a bench depend on beyond their cell: the machine, native's document, the limits, the suite."""

    skill = _skill_text(plan.skill)
    return manifest_of(plan.suite, plan.machine_hash, None if skill is None else machine_hash(skill),
                       attrs.asdict(limits))


def _jobs(plan: _Plan, limits: Limits, out: Path, cells: Sequence[Cell]) -> list[CellJob]:
    """The job of every cell to run."""
    tasks = {t.id: t for t in plan.suite.tasks}
    return [cell_job(c, plan.suite, tasks[c.task], plan.subject(c.mode).path, plan.subject(c.mode).hash, out,
                     limits, plan.skill) for c in cells]


def cell_job(cell: Cell, suite: Suite, task: Task, machine: Path, digest: str, out: Path, limits: Limits,
             skill: Path | None) -> CellJob:
    """The job of one cell of `suite`'s `task` on the checked machine file (`digest`: its text's hash)."""
    mode, _, label = cell.mode.partition(":")
    label = label or ("native" if mode == "native" else machine.stem)
    return CellJob(cell, absolute_spec(cell.executor, task.id, label), out, machine, digest, skill, task,
                   (*suite.requirements, *task.requirements), suite.failed_runs_comply, suite.tools, limits,
                   suite.bindings, suite.setup, suite.teardown, suite.setup_timeout, suite.folder)


def _no_progress(total: int, done: int) -> AbstractContextManager[Callable[[Row], None]]:
    """No progress display (the API's default)."""
    return contextlib.nullcontext(lambda row: None)


def output_folder(config: BenchConfig, suite_name: str) -> Path:
    """Where the bench writes: `-o`, else `.skillc/bench/<suite name>` (absolute)."""

    return Path(config.output or Path(".skillc") / "bench" / safe_name(suite_name)).absolute()


def run_bench(config: BenchConfig, backend: Backend | None = None, progress: Progress | None = None) -> BenchOutcome:
    """Run every cell of the matrix that has no row yet, then write the report; problems come back as diagnostics."""
    try:
        outcome = _run_bench(config, backend, progress)
    except KeyboardInterrupt:  # while loading, checking or reporting; the cells' loop handles its own (_drive)
        _quiet_finalizers()
        return BenchOutcome((make(codes.BENCH_INTERRUPTED, "interrupted outside the cells: every row written is "
                                  "kept (run the same command again to go on)"),), incomplete=True, interrupted=True)
    if outcome.interrupted:
        _quiet_finalizers()
    return outcome


def _quiet_finalizers() -> None:
    """After an interrupt: an object the stop cut short mid-construction (a Z3 context) may fail in its finalizer
    as it is collected; the bench is ending, so such failures are not printed (they were tracebacks on stderr)."""

    sys.unraisablehook = lambda unraisable: None


def _run_bench(config: BenchConfig, backend: Backend | None, progress: Progress | None) -> BenchOutcome:
    """`run_bench` without the interrupt outside the cells."""

    if config.report_only:
        return report_only(config)
    if config.suite is None:
        return _usage(make(diagnostics_codes.IO_ERROR, "give the suite file to run"))
    loaded = load_suite(Path(config.suite))
    flags = _flag_problems(config, [t.id for t in loaded.suite.tasks] if loaded.suite else [])
    if flags or loaded.suite is None:
        return _usage(*flags, *loaded.diagnostics)
    filtered = _filter_tasks(loaded.suite, config.tasks)
    if isinstance(filtered, Diagnostic):
        return _usage(filtered)
    out = output_folder(config, filtered.name)
    plan = _plan(config, filtered, out)
    if isinstance(plan, BenchOutcome):
        return plan
    suite = plan.suite
    cells = matrix([t.id for t in suite.tasks], mode_labels(list(dict.fromkeys(config.modes)),
                                                            [s.label for s in plan.subjects]),
                   list(dict.fromkeys(config.executors)), config.repeats)
    labels = [s.label for s in plan.subjects] + (["native"] if "native" in config.modes else [])
    specs = [p for spec in config.executors if MACHINE_PLACEHOLDER in spec
             and (p := spec_problem(spec, [t.id for t in suite.tasks], labels)) is not None]
    if specs:
        return _usage(*specs)
    if config.dry_run:
        return _dry_run(plan, config, out, cells, loaded.diagnostics)
    writer = open_writer(out / "results.jsonl")
    if isinstance(writer, Diagnostic):
        return _usage(writer)
    notes: list[Diagnostic] = list(loaded.diagnostics)
    with writer:
        earlier = read_results(writer.path)
        notes += earlier.diagnostics
        pending = earlier.pending(cells)
        limits = _limits(config, suite)
        kept = keep_manifest(out, _manifest(plan, limits), suite, {r.cell.task for r in earlier.rows})
        if has_errors(kept):
            return _usage(*kept)
        notes += kept
        try:
            chosen = backend or make_backend(config.backend, config.workers, config.address)
        except BackendError as exc:
            return _usage(exc.diagnostic())
        ran, failure, interrupted = _drive(chosen, _jobs(plan, limits, out, pending), writer.append,
                                           progress or _no_progress, len(cells), len(cells) - len(pending),
                                           close=backend is None)
    if interrupted:  # stop now: the rows written are whole and durable; a report can be had with --report-only
        # Counted from the file: the interrupt may have come after a row was written but before it was counted.
        wanted = {c.key for c in pending}
        ran = sum(r.cell.key in wanted for r in read_results(out / "results.jsonl").rows)
        notes.append(make(codes.BENCH_INTERRUPTED, f"interrupted: {ran} cells ran now, {len(pending) - ran} have no "
                                                   f"row (run the same command again to run them)"))
        return BenchOutcome(tuple(notes), suite.name, out, (), None, len(cells), ran, len(cells) - len(pending),
                            incomplete=True, interrupted=True)
    if failure is not None:
        found = failure.diagnostic()
        notes.append(attrs.evolve(found, message=f"{found.message}; {len(pending) - ran} cells have no row (run "
                                                 f"the bench again to run them)"))
    place = {c.key: i for i, c in enumerate(cells)}  # matrix order: the report lists modes as --modes gave them
    rows = tuple(sorted((r for r in read_results(out / "results.jsonl").rows if r.cell.key in place),
                        key=lambda r: place[r.cell.key]))
    return _reported(BenchOutcome(tuple(notes), suite.name, out, rows, None, len(cells), ran,
                                  len(cells) - len(pending), incomplete=failure is not None), suite.name)


def _dry_run(plan: _Plan, config: BenchConfig, out: Path, cells: Sequence[Cell],
             notes: Sequence[Diagnostic]) -> BenchOutcome:
    """Resolve the cells (those without a row), and set up the first one's work folder in a scratch folder."""


    earlier = read_results(out / "results.jsonl")
    pending = tuple(earlier.pending(cells)) if (out / "results.jsonl").exists() else tuple(cells)
    machines = tuple((s.label, str(s.path)) for s in plan.subjects)
    outcome = BenchOutcome(tuple(notes), plan.suite.name, out, cells=len(cells), resumed=len(cells) - len(pending),
                           dry_run=True, planned=pending, machines=machines)
    first = pending[0] if pending else cells[0]
    with tempfile.TemporaryDirectory(prefix="skillc-dry-run-") as scratch:
        job = _jobs(plan, _limits(config, plan.suite), Path(scratch), [first])[0]
        paths = cell_paths(Path(scratch), first)
        problem = fresh_workdir(Path(scratch), paths, job.task.workdir)
        if problem is not None:
            return attrs.evolve(outcome, diagnostics=(*outcome.diagnostics, problem), usage=True)
        if job.setup is None:
            return attrs.evolve(outcome, setup_note=f"cell {first.key}: fixture copied, no setup command")
        started = time.perf_counter()
        result = run_hook("setup", job.setup, paths.workdir, paths.folder / "setup.log", job.setup_timeout,
                          _hook_env(job, paths))
        log = (paths.folder / "setup.log").read_text(encoding="utf-8", errors="replace")
        _teardown(job, paths, result.group)
        if result.error is not None:
            found = make(codes.SETUP_FAILED, f"cell {first.key}: {result.error}",
                         hint="its output: " + (log.strip().splitlines() or [""])[-1][:200])
            return attrs.evolve(outcome, diagnostics=(*outcome.diagnostics, found), usage=True)
        files = sum(1 for _ in paths.workdir.rglob("*"))
        return attrs.evolve(outcome, setup_note=f"cell {first.key}: setup ran in {time.perf_counter() - started:.2f} "
                                                f"s and left {files} files and folders")


def dry_run_lines(outcome: BenchOutcome) -> list[str]:
    """What `skillc bench --dry-run` prints: the cells that would run, the machines, the set-up cell."""
    lines = [f"dry run of bench {outcome.suite}: {outcome.cells} cells, {len(outcome.planned)} would run, "
             f"{outcome.resumed} done before; nothing ran"]
    lines += [f"machine {label}: {path}" for label, path in outcome.machines]
    modes = list(dict.fromkeys(c.mode for c in outcome.planned))
    tasks = list(dict.fromkeys(c.task for c in outcome.planned))
    if outcome.planned:
        lines.append(f"tasks ({len(tasks)}): {', '.join(tasks[:12])}{', …' if len(tasks) > 12 else ''}")
        lines.append(f"modes: {', '.join(modes)}")
    if outcome.setup_note:
        lines.append(outcome.setup_note)
    lines.append(f"output folder: {outcome.out}")
    return lines


def dry_run_json(outcome: BenchOutcome) -> dict[str, object]:
    """`skillc bench --dry-run --json`: the cells that would run (their keys), the machines, the set-up cell."""
    return {"suite": outcome.suite, "dry_run": True, "cells": outcome.cells, "resumed": outcome.resumed,
            "planned": [[c.task, c.mode, c.executor, c.repeat] for c in outcome.planned],
            "machines": dict(outcome.machines),
            "setup": outcome.setup_note, "output": str(outcome.out)}


def _drive(backend: Backend, jobs: Sequence[CellJob], append: Callable[[Row], None], progress: Progress,
           total: int, done: int, *, close: bool) -> tuple[int, BackendError | None, bool]:
    """Send the jobs to the backend and append each row as it arrives: how many ran, a backend failure, and
    whether an interrupt stopped it (a row is appended whole or not at all, so the file stays whole)."""
    ran = 0
    try:
        with progress(total, done) as tick:
            for row in backend.map_unordered(run_cell, jobs):
                append(row)
                ran += 1
                tick(row)
    except BackendError as exc:
        return ran, exc, False
    except KeyboardInterrupt:
        return ran, None, True
    finally:
        if close:
            backend.close()
    return ran, None, False


def _reported(outcome: BenchOutcome, title: str) -> BenchOutcome:
    """The outcome with its report built and written next to the results."""

    assert outcome.out is not None
    try:
        report = build_report(outcome.rows)
        problem = write_report(report, outcome.out, title=f"skillc bench: {title}")
    except ImportError as exc:  # the rows are kept; `--report-only` writes the report once the extra is there
        problem = make(diagnostics_codes.IO_ERROR, f"the report needs matplotlib and scipy ({exc}): pip install "
                                                   f"'skillc[bench]', then `skillc bench --report-only -o "
                                                   f"{outcome.out}`")
    if problem is not None:
        return attrs.evolve(outcome, diagnostics=(*outcome.diagnostics, problem))
    return attrs.evolve(outcome, report=report)


def report_only(config: BenchConfig) -> BenchOutcome:
    """Rebuild the report from the results file in `-o DIR` (every row in it), running nothing."""

    if config.output is None:
        return _usage(make(diagnostics_codes.IO_ERROR, "--report-only needs the bench's output folder (-o DIR)"))
    out = Path(config.output).absolute()
    results = read_results(out / "results.jsonl")
    if not results.rows:
        return _usage(*results.diagnostics, make(codes.NO_RESULTS, f"{out / 'results.jsonl'} holds no result rows"))
    name = out.name
    rows = tuple(sorted(results.rows, key=lambda r: r.cell))
    return _reported(BenchOutcome(results.diagnostics, name, out, rows, cells=len(rows), resumed=len(rows)), name)

