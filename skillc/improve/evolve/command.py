"""`skillc evolve` put together from its flags: the suite's task, the bench runner as the version runner, reflection and
the self-verifier from their specs, the check gate, the options; the evolution run and written to its folder.

Every problem with the flags or the files (a suite with errors, an unknown task, an executor spec that cannot be
made, a role script that does not read, options out of range, an output folder in use) is found before anything
runs, as diagnostics, and nothing is written; a root machine that does not check runs nothing either.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from skillc.bench import codes as bench_codes
from skillc.bench.runner import spec_problem  # the bench's own check of a spec, so both refuse the same
from skillc.bench.suite import Suite, Task, load_suite
from skillc.check.source import check_source
from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.diagnostics.files import FileProblem, read_text
from skillc.diagnostics.flags import seconds_problem
from skillc.improve.archive import default_folder
from skillc.improve.evolve import codes, search
from skillc.improve.evolve.cases import SelfVerifier
from skillc.improve.evolve.gate import archive_gate, check_gate
from skillc.improve.evolve.loop import Evolution, Gate, Roles, evolve, no_gate, trajectory
from skillc.improve.evolve.models import model_roles
from skillc.improve.evolve.options import EvolveOptions, Strategy, option_problems
from skillc.improve.evolve.report import write_evolution
from skillc.improve.evolve.roles import Reflector, ScriptedReflector, ScriptedVerifier, load_script
from skillc.improve.evolve.runner import BenchRunner
from skillc.runtime.executors import ExecutorError, make_executor
from skillc.runtime.executors.base import Executor as ModelExecutor
from skillc.runtime.executors.scripted import ScriptError
from skillc.runtime.record import TraceError

#: The files an evolution leaves in its folder, by what they are (SKILL.md only when the best version has one).
FILES = (("machine", "evolved.skm"), ("tree", "tree.json"), ("report", "report.md"), ("drawing", "tree.dot"))


#: The flags of `skillc evolve` named otherwise than their EvolveOptions field (`--greedy` sets the strategy).
FLAG_FIELDS = {"children": "branching", "rounds": "reflection_rounds", "verifier": "self_verifier"}


@attrs.frozen
class EvolveConfig:
    """The flags of `skillc evolve` (the roles' specs default to the executor's; see docs/evolve.md).

    `options`: the search's constants, one EvolveOptions (its defaults are the flags' defaults).
    """

    machine: str
    suite: str
    task: str | None = None
    executor: str | None = None
    reflect_model: str | None = None
    verifier_model: str | None = None
    options: EvolveOptions = EvolveOptions()  # noqa: RUF009 - frozen, so one shared default is safe
    gate: bool = True
    output: str | None = None
    model_timeout_s: float = 120.0

    @classmethod
    def from_flags(cls, *, greedy: bool = False, **flags: Any) -> EvolveConfig:
        """The config from the command's flags as click names them: the search's go to `options`, by field."""
        fields = attrs.fields_dict(EvolveOptions)
        search = {FLAG_FIELDS.get(k, k): v for k, v in flags.items() if FLAG_FIELDS.get(k, k) in fields}
        rest = {k: v for k, v in flags.items() if FLAG_FIELDS.get(k, k) not in fields}
        strategy: Strategy = "greedy" if greedy else "tree"
        return cls(options=EvolveOptions(**search, strategy=strategy), **rest)

    def folder(self) -> Path:
        """Where the evolution is written (default `.skillc/evolve/MACHINE-STEM`)."""
        return Path(self.output) if self.output else Path(".skillc") / "evolve" / Path(self.machine).stem


@attrs.define
class EvolveResult(HasDiagnostics):
    """What `skillc evolve` did: the evolution and the files written (None when it ran nothing), its diagnostics.

    `usage`: a flag or file was wrong (nothing ran); `unchecked`: the root machine does not check (nothing ran).
    """

    evolution: Evolution | None
    folder: Path | None
    files: dict[str, Path]
    diagnostics: list[Diagnostic]
    usage: bool = False
    unchecked: bool = False
    budget: int = 0  # K, for the summary


@attrs.define
class _Setup:
    """What the flags resolved to, before anything runs."""
    suite: Suite
    task: Task
    machine: str
    spec: str
    reflector: Reflector
    verifier: SelfVerifier | None
    gate: Gate
    skill: str | None = None  # the suite's SKILL.md: the root's, so that a child may patch it
    models: list[ModelExecutor] = attrs.Factory(list)  # to close afterwards
    warnings: list[Diagnostic] = attrs.Factory(list)  # e.g. SKM808: the archive is out of step with the machine


def _usage(diagnostics: list[Diagnostic]) -> EvolveResult:
    """A result for flags or files that are wrong: nothing ran, nothing was written."""
    return EvolveResult(None, None, {}, diagnostics, usage=True)


def run_evolve(config: EvolveConfig) -> EvolveResult:
    """Resolve the flags, run the evolution and write its files; diagnostics, never exceptions, for user errors."""

    setup = _setup(config)
    if not isinstance(setup, _Setup):
        return _usage(setup)
    try:
        checked = check_source(Path(config.machine))
        if checked.machine is None or checked.failed:
            return EvolveResult(None, None, {}, [d for d in checked.diagnostics if d.is_error], unchecked=True)
        return _run(config, setup)
    finally:
        for model in setup.models:
            model.close()


def _run(config: EvolveConfig, setup: _Setup) -> EvolveResult:
    """The evolution over the resolved setup, then its files."""

    folder = config.folder()
    runs = (folder / "runs").resolve()  # absolute: a cell runs in its own work folder
    claimed = _claim(runs)
    if claimed is not None:
        return _usage([*setup.warnings, claimed])
    # with the gate on every candidate is checked by it, and the root by run_evolve: the executor need not check
    executor = BenchRunner(setup.suite, setup.task, setup.spec, runs, check=not config.gate)
    roles = Roles(executor, setup.reflector, setup.verifier)
    evolution = evolve(setup.machine, roles, gate=setup.gate, options=config.options, skill=setup.skill)
    diagnostics = [*setup.warnings, *evolution.diagnostics]
    problem = write_evolution(evolution, folder)
    if problem is not None:
        return EvolveResult(evolution, None, {}, [*diagnostics, problem], usage=True, budget=config.options.budget)
    files = {what: folder / name for what, name in FILES}
    if evolution.best.skill is not None:
        files["skill"] = folder / "SKILL.md"
    return EvolveResult(evolution, folder, files, diagnostics, budget=config.options.budget)


def _setup(config: EvolveConfig) -> _Setup | list[Diagnostic]:
    """The suite, its task, the root machine's text, the executor spec and the roles, or every problem found."""

    problems: list[Diagnostic] = list(option_problems(config.options))
    if (problem := seconds_problem("--model-timeout", config.model_timeout_s)) is not None:
        problems.append(make(codes.INVALID_EVOLVE_OPTION, problem))
    machine: str | None = None
    found = _suite_task(config)
    problems += found if isinstance(found, list) else []
    try:
        machine = read_text(config.machine, what="machine")
    except FileProblem as exc:
        problems.append(make(diagnostics_codes.IO_ERROR, str(exc)))
    gate, gate_found = _gate(config) if machine is not None else (None, [])
    problems += [d for d in gate_found if d.is_error]
    problems += _folder_problems(config.folder())
    spec_issue = _executor_problem(config.executor, found[1].id if isinstance(found, tuple) else "")
    problems += [spec_issue] if spec_issue else []
    models: list[ModelExecutor] = []
    roles = _roles(config, models)
    problems += roles if isinstance(roles, list) else []
    if problems or isinstance(found, list) or isinstance(roles, list) or config.executor is None \
            or gate is None or machine is None:
        for model in models:
            model.close()
        return problems
    verifier = roles[1] if config.options.self_verifier else None
    return _Setup(found[0], found[1], machine, config.executor, roles[0], verifier, gate, _skill(found[0]), models,
                  [d for d in gate_found if not d.is_error])


def _skill(suite: Suite) -> str | None:
    """The suite's skill document as text (the suite's loader found the file), or None."""

    try:
        return read_text(suite.skill, what="skill document") if suite.skill is not None else None
    except FileProblem:
        return None  # gone since the suite was read: the root simply has no SKILL.md to patch


def _gate(config: EvolveConfig) -> tuple[Gate | None, list[Diagnostic]]:
    """`skillc check`, plus the replay of every trace refine accepted when MACHINE.archive/ exists beside it."""

    if not config.gate:
        return no_gate, []
    if not default_folder(config.machine).is_dir():
        return check_gate, []  # opening an archive creates its folder: never beside a machine that has none
    return archive_gate(config.machine)


#: The hint of a task that is missing or not chosen.
_TASK_HINT = "give --task ID with one of the suite's task ids"


def _suite_task(config: EvolveConfig) -> tuple[Suite, Task] | list[Diagnostic]:
    """The suite and the task to evolve on (`--task`, or the suite's only task)."""

    loaded = load_suite(config.suite)
    if loaded.suite is None:
        return list(loaded.diagnostics)
    tasks = loaded.suite.tasks
    ids = ", ".join(t.id for t in tasks)
    if config.task is None and len(tasks) != 1:
        return [make(codes.INVALID_EVOLVE_OPTION, f"the suite has {len(tasks)} tasks ({ids}); choose one with --task",
                     hint=_TASK_HINT)]
    task = next((t for t in tasks if config.task in (None, t.id)), None)
    if task is None:
        return [make(codes.INVALID_EVOLVE_OPTION, f"the suite has no task `{config.task}`; its tasks are {ids}",
                     hint=_TASK_HINT)]
    return loaded.suite, task


def _executor_problem(spec: str | None, task: str) -> Diagnostic | None:
    """Why the executor spec cannot run the task's versions (SKM731, as `skillc bench`), or None."""

    if spec is None:
        return make(bench_codes.INVALID_BENCH_EXECUTOR, "give the executor the versions run with (--executor SPEC)")
    return spec_problem(spec, [task])


#: The hint of every problem with the output folder.
_FOLDER_HINT = "choose another -o folder (a new or empty one that can be written)"


def _folder_problems(folder: Path) -> list[Diagnostic]:
    """An output folder that is a file, cannot be created or written, or already holds an evolution's runs."""

    if folder.exists() and not folder.is_dir():
        return [make(diagnostics_codes.IO_ERROR, f"{folder} is not a folder", hint=_FOLDER_HINT)]
    if (folder / "runs").exists():
        return [make(diagnostics_codes.IO_ERROR, f"{folder} already holds an evolution (runs/)", hint=_FOLDER_HINT)]
    place = folder.absolute()
    while not place.exists() and place != place.parent:  # the nearest part of the path that exists
        place = place.parent
    if not place.is_dir():
        return [make(diagnostics_codes.IO_ERROR, f"cannot create {folder}: {place} is not a folder", hint=_FOLDER_HINT)]
    if not os.access(place, os.W_OK | os.X_OK):
        return [make(diagnostics_codes.IO_ERROR, f"cannot write {folder}: {place} is not writable", hint=_FOLDER_HINT)]
    return []


def _claim(runs: Path) -> Diagnostic | None:
    """Create the runs/ folder, failing when it exists: two evolutions started together never share a folder."""
    try:
        runs.mkdir(parents=True)
    except FileExistsError:
        return make(diagnostics_codes.IO_ERROR, f"{runs.parent} already holds an evolution (runs/)", hint=_FOLDER_HINT)
    except OSError as exc:
        return make(diagnostics_codes.IO_ERROR, f"cannot create {runs}: {exc.strerror or exc}", hint=_FOLDER_HINT)
    return None


def _roles(config: EvolveConfig, models: list[ModelExecutor]) -> tuple[Reflector, SelfVerifier] | list[Diagnostic]:
    """Reflection and the self-verifier: `scripted:FILE` is a role script, any other spec a model executor."""

    reflect_spec = config.reflect_model or config.executor
    verify_spec = config.verifier_model or reflect_spec
    if reflect_spec is None or verify_spec is None:
        return []  # no executor either: reported as SKM731
    made: dict[str, tuple[Reflector, SelfVerifier] | Diagnostic] = {}
    for flag, spec in (("--reflect-model", reflect_spec), ("--verifier-model", verify_spec)):
        if spec not in made:
            pair = _role_pair(flag, spec, config.model_timeout_s, config.options.branching, models)
            if isinstance(pair, Diagnostic) and spec == config.executor and spec.startswith("scripted:"):
                pair = attrs.evolve(pair, hint=_RUNTIME_SCRIPT_HINT)
            made[spec] = pair
    reflect, verify = made[reflect_spec], made[verify_spec]
    problems = [r for r in (reflect, verify) if isinstance(r, Diagnostic)][:1 if reflect is verify else 2]
    if problems or isinstance(reflect, Diagnostic) or isinstance(verify, Diagnostic):
        return problems
    return reflect[0], verify[1]


#: The hint when a role defaults to a `scripted:` executor spec, which names a runtime reply file, not a role script.
_RUNTIME_SCRIPT_HINT = ("the roles default to the --executor spec, and a runtime scripted: reply file is no role "
                        "script: give --reflect-model scripted:ROLES.json (roles.py's format) or a model spec")


def _role_pair(flag: str, spec: str, timeout_s: float, branching: int,
               models: list[ModelExecutor]) -> tuple[Reflector, SelfVerifier] | Diagnostic:
    """Both roles from one spec: replayed from a role script, or asked of one model."""

    kind, _, rest = spec.partition(":")
    if kind == "scripted" and rest:
        script = load_script(Path(rest))
        if isinstance(script, Diagnostic):
            return attrs.evolve(script, message=f"{flag} (default: the --executor spec) {script.message}")
        return ScriptedReflector(script), ScriptedVerifier(script)
    try:
        model = make_executor(spec, timeout_s=timeout_s)
    except (ExecutorError, ScriptError, TraceError, ValueError) as exc:
        return make(bench_codes.INVALID_BENCH_EXECUTOR, f"{flag} {spec!r}: {exc}")
    models.append(model)
    return model_roles(model, branching=branching)


def summary(result: EvolveResult) -> dict[str, object]:
    """The trajectory summary of a finished evolution as one JSON object (what `--json` prints)."""

    evolution = result.evolution
    assert evolution is not None
    k, best = evolution.knowledge, evolution.best
    scores = search.values(evolution.tree, k.bank, k.evidence).scores
    nodes = evolution.tree.nodes
    return {"success": evolution.success, "interrupted": evolution.interrupted, "nodes": len(nodes),
            "evaluated": sum(n.evaluated for n in nodes),
            "refused": sum(n.invalid is not None for n in nodes), "executions": evolution.executions,
            "budget": result.budget, "saved": evolution.saved,
            "best": {"id": best.id, "name": best.name, "reward": best.reward, "score": scores.get(best.id)},
            "hypotheses": {h.id: h.state for h in k.store.hypotheses}, "cases": len(k.bank.cases),
            "trajectory": list(trajectory(evolution)),
            "files": {what: str(path) for what, path in result.files.items()},
            "diagnostics": [{"code": str(d.code), "severity": d.severity.name.lower(), "message": d.message}
                            for d in result.diagnostics]}


def summary_lines(found: dict[str, object]) -> list[str]:
    """The same summary as lines of text."""
    best = found["best"]
    assert isinstance(best, dict)
    score = best["score"]
    outcome = "succeeded" if found["success"] else "no rewarded version"
    lines = [f"evolve: {outcome}{' (interrupted)' if found['interrupted'] else ''}; best version "
             f"{best['name'] or best['id']} (node {best['id']}), reward {best['reward']}, "
             f"score {'-' if score is None else f'{score:.3f}'}",
             f"{found['nodes']} nodes ({found['evaluated']} run, {found['refused']} refused by the gate), "
             f"{found['executions']} of {found['budget']} evolved executions used, {found['saved']} saved by the gate"]
    trajectory = found["trajectory"]
    files = found["files"]
    assert isinstance(trajectory, list) and isinstance(files, dict)
    lines += [f"  {line}" for line in trajectory]
    lines += [f"{what}: {path}" for what, path in files.items()]
    return lines
