"""One run scored by its effects: task success from a verifier, RFC from tool calls and the workdir.

The same function scores a bench cell and a trace given to `skillc score`, so a
figure means the same wherever it is printed. RFC counts the suite's requirements
and, given the machine, the requirements its rules and terminals make
(`skillc.bench.rules`); the machine's state rules are judged beside RFC, never in
it. Nothing here reads the outcome the model declared, except that a run which
ended `failed` or never finished is not compliant by default
(`effects.check_requirements`) and that the evidence a run owes depends on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from skillc.bench.effects import OUTCOMES, Compliance, Outcome, Requirement, check_requirements
from skillc.bench.inside import inner_calls
from skillc.bench.rules import rule_requirements
from skillc.bench.suite import Suite, Task
from skillc.bench.verify import Verification, Verifier, verify
from skillc.ir.machine import Machine
from skillc.runtime.record import RunTrace, ToolCall, load_run
from skillc.runtime.score import StateRuleVerdict, judge_state_rules


@attrs.frozen
class RunScore:
    """A run's verdicts: `success` None when no verifier was given (or the run left no workdir).

    `state_rules`: the machine's rules about its states, judged in machine mode ("not applicable" otherwise);
    they are not part of `compliance` or `rfc`.
    """

    outcome: Outcome
    success: bool | None
    success_reason: str
    compliance: Compliance
    state_rules: tuple[StateRuleVerdict, ...] = ()
    mode: str = "machine"

    @property
    def rfc(self) -> bool | None:
        """Full compliance: True, False, or None when something could not be judged."""
        return self.compliance.compliant


def tool_calls(run: RunTrace) -> tuple[ToolCall, ...]:
    """The tool calls the run made, in order (machine tool states and baseline tool turns alike)."""
    return tuple(s.tool_call for s in run.steps if s.tool_call is not None)


def run_outcome(run: RunTrace) -> Outcome:
    """How the run ended: its footer's outcome, or "unfinished" without one."""
    footer = run.footer
    if footer is None or footer.outcome not in OUTCOMES:
        return "unfinished"
    return footer.outcome


def run_outputs(run: RunTrace) -> Mapping[str, object]:
    """What the run handed over at its end: the footer's evidence (empty without a footer)."""
    return dict(run.footer.evidence) if run.footer is not None else {}


def score_run(run: RunTrace, trace: Path, *, requirements: Sequence[Requirement], workdir: Path | None,
              verifier: Verifier | None, failed_runs_comply: bool = False,
              machine: Machine | None = None, task: Task | None = None,
              inner: Sequence[ToolCall] = ()) -> RunScore:
    """Score one run: the verifier over (workdir, outputs, trace), told the task (its id and inputs) when given;
    the suite's requirements, and the machine's rules and terminal evidence when `machine` is given, over calls,
    workdir and outputs (`inner`: the commands scripts ran inside the calls, for requirements marked `inside`)."""
    outcome = run_outcome(run)
    derived = rule_requirements(machine) if machine is not None else None
    every = (*requirements, *derived.requirements) if derived is not None else tuple(requirements)
    compliance = check_requirements(every, workdir=workdir, calls=tool_calls(run), outcome=outcome,
                                    failed_runs_comply=failed_runs_comply, outputs=run_outputs(run), inner=inner)
    states = judge_state_rules(machine, derived.state_rules, run) if machine is not None and derived else ()
    success, reason = _success(run, trace, workdir, verifier, task)
    return RunScore(outcome, success, reason, compliance, states, run.header.mode)


def _success(run: RunTrace, trace: Path, workdir: Path | None, verifier: Verifier | None,
             task: Task | None) -> tuple[bool | None, str]:
    """The verifier's verdict and reason; None when there is no verifier or no workdir to judge."""
    if verifier is None:
        return None, "no verifier"
    if workdir is None or not workdir.is_dir():
        return None, "the run's workdir is not available"
    verdict: Verification = verify(verifier, workdir=workdir, outputs=run_outputs(run), trace=trace,
                                   task_id=None if task is None else task.id,
                                   inputs=None if task is None else task.inputs)
    return verdict.passed, verdict.reason


@attrs.frozen
class TraceScore:
    """`skillc score`'s verdict on one trace file: the task it was judged as (None: no verifier) and the score."""

    trace: str
    task: str | None
    task_reason: str
    workdir: str | None
    score: RunScore


@attrs.frozen
class Tally:
    """How many verdicts were True, False and None (unknown)."""

    yes: int
    no: int
    unknown: int

    @property
    def rate(self) -> float | None:
        """The share of True among the known verdicts; None when none is known."""
        known = self.yes + self.no
        return self.yes / known if known else None


def tally(values: Sequence[bool | None]) -> Tally:
    """Count a sequence of verdicts."""
    return Tally(sum(v is True for v in values), sum(v is False for v in values), sum(v is None for v in values))


def score_trace_file(trace: Path, machine: Machine, *, suite: Suite | None = None, task_id: str | None = None,
                     workdir: Path | None = None) -> TraceScore:
    """Score one trace file as `skillc score` does (TraceError when the trace cannot be read)."""
    run = load_run(trace)
    where = workdir if workdir is not None else recorded_workdir(run, trace) or cell_workdir(trace)
    task, why = (None, "no suite") if suite is None else pick_task(suite, run, task_id, where)
    requirements = (*suite.requirements, *(task.requirements if task else ())) if suite else ()
    score = score_run(run, trace, requirements=requirements, workdir=where,
                      verifier=task.verifier if task else None,
                      failed_runs_comply=suite.failed_runs_comply if suite else False, machine=machine, task=task,
                      inner=inner_calls(trace.parent) if trace.name == "trace.jsonl" else ())
    if task is None:
        score = attrs.evolve(score, success_reason=f"no verifier ({why})")
    return TraceScore(str(trace), task.id if task else None, why, str(where) if where else None, score)


def recorded_workdir(run: RunTrace, trace: Path | None = None) -> Path | None:
    """The folder the run's header says its tools ran in, if it still exists and holds the trace file the user
    named (`trace`): a header names any folder it likes, so one that does not hold the trace is not judged (a
    tampered trace would score another folder's files); `--workdir` names it instead."""
    where = run.header.workdir
    try:
        if not where or not Path(where).is_dir():
            return None
        folder = Path(where).resolve()
    except (OSError, ValueError):  # a name too long, a NUL: no folder of this machine
        return None
    if trace is not None and folder not in trace.resolve().parents:
        return None
    return folder


def cell_workdir(trace: Path) -> Path | None:
    """The workdir a bench cell's trace (`…/rN/trace.jsonl`) sits beside (`…/rN/work/`), if there is one."""
    work = trace.parent / "work"
    return work if trace.name == "trace.jsonl" and work.is_dir() else None


def pick_task(suite: Suite, run: RunTrace, task_id: str | None, workdir: Path | None) -> tuple[Task | None, str]:
    """The task a run is judged as: the one named, else the only one whose inputs the run's header holds."""
    if task_id is not None:
        task = next((t for t in suite.tasks if t.id == task_id), None)
        return task, "--task" if task is not None else f"the suite has no task `{task_id}`"
    given = run.header.inputs or {}
    matches = [t for t in suite.tasks if _same_inputs(t, given, workdir)]
    if len(matches) == 1:
        return matches[0], "its inputs"
    if not matches:
        return None, "no task of the suite has this run's inputs; give --task"
    return None, f"{len(matches)} tasks have this run's inputs ({', '.join(t.id for t in matches[:3])}); give --task"


def _same_inputs(task: Task, given: Mapping[str, object], workdir: Path | None) -> bool:
    """True when every input of the task has the value the run was given (the header also holds defaults)."""
    want = task.inputs_for(workdir) if workdir is not None else task.inputs
    return all(k in given and given[k] == v for k, v in want.items())


def score_json(ts: TraceScore) -> dict[str, object]:
    """One trace's score as the JSON object `skillc score --json` prints (documented in docs/runtime.md)."""
    sc = ts.score
    return {"trace": ts.trace, "mode": sc.mode, "task": ts.task, "task_reason": ts.task_reason,
            "workdir": ts.workdir, "outcome": sc.outcome, "success": sc.success, "success_reason": sc.success_reason,
            "rfc": sc.rfc, "rfc_reason": sc.compliance.reason,
            "requirements": [{"id": v.id, "status": v.status, "reason": v.reason, "quote": v.quote}
                             for v in sc.compliance.verdicts],
            "state_rules": [{"id": v.id, "status": v.status, "reason": v.reason, "quote": v.quote}
                            for v in sc.state_rules]}


def summary_json(scores: Sequence[TraceScore]) -> dict[str, object]:
    """The summary line of `skillc score --json`: rates over the known verdicts, and the counts."""
    success = tally([t.score.success for t in scores])
    rfc = tally([t.score.rfc for t in scores])
    return {"summary": True, "traces": len(scores), "task_success": success.rate,
            "success": {"passed": success.yes, "failed": success.no, "unknown": success.unknown},
            "request_level_full_compliance": rfc.rate,
            "rfc": {"compliant": rfc.yes, "not_compliant": rfc.no, "unknown": rfc.unknown}}
