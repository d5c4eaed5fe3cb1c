"""`skillc replay`: drive a machine with a trace's recorded outputs and verify the path, the ending and the outcome.

A divergence is read from the run's typed `EndReason` (kind `divergence`), never
from a message. A run that ended in the fallback replays when the replay ends
there too, on the same path and for the same kind of reason (an edge that leads
to the fallback, no edge firing, a counter, an invalid output, ...).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from skillc.ir.machine import FALLBACK, Machine
from skillc.runtime.executors.replay import ReplayExecutor
from skillc.runtime.interpreter import Interpreter, RunError, RunOptions, RunResult, machine_hash
from skillc.runtime.record import EndKind, Footer, RunTrace, legacy_kind, load_run
from skillc.runtime.session import stand_in_skill_dir
from skillc.runtime.tools import ToolBox


@attrs.frozen
class ReplayReport:
    """The verdict of replaying a trace: ok, or the first divergence; `result`: the replayed run, when it ran."""

    ok: bool
    message: str
    recorded: tuple[str, ...]
    visited: tuple[str, ...]
    outcome: str | None
    result: RunResult | None = None


def recorded_end(footer: Footer) -> EndKind | None:
    """Why the recorded run ended in the fallback (None: it ended elsewhere); version-1 footers say it in words."""
    if footer.reason is not None:
        return footer.reason.kind
    if footer.terminal != FALLBACK:
        return None
    return legacy_kind(footer.error) if footer.error else "edge"


def replay_file(machine: Machine, source_text: str, trace: str | Path, *, other_machine: bool = False) -> ReplayReport:
    """Drive a machine with a trace's recorded outputs; verify the path, the ending and the outcome.

    A trace of another machine (its content hash differs) or of an unfinished run (no footer) does not
    replay unless `other_machine` allows the first (as when a revised machine must replay old traces).
    TraceError: the file is not a readable trace.
    """
    return replay_run(machine, source_text, load_run(trace), other_machine=other_machine)


def replay_run(machine: Machine, source_text: str, run: RunTrace, *, other_machine: bool = False) -> ReplayReport:
    """`replay_file` for a trace already read."""
    recorded = run.states
    header, footer = run.header, run.footer
    here = machine_hash(source_text)
    if header.mode != "machine":  # a baseline's path is its turns, not states: there is no state path to re-drive
        return ReplayReport(False, f"the trace is a {header.mode} run: `skillc replay` re-drives the machine along a "
                            "machine-mode trace's states; re-run a baseline with `--executor replay:TRACE --mode "
                            f"{header.mode}`, or score it with `skillc score`", recorded, (), None)
    if not other_machine and header.machine_hash != here:
        return ReplayReport(False, f"the trace was recorded with another machine (`{header.machine}`, hash "
                            f"{header.machine_hash}; this one is `{machine.name}`, hash {here}); pass "
                            "--other-machine to replay it anyway", recorded, (), None)
    if footer is None:
        return ReplayReport(False, f"the trace has no footer: its run did not finish ({len(recorded)} steps recorded)",
                            recorded, (), None)
    ended = recorded_end(footer)
    # A run stopped by its step limit replays under the same limit; any other gets one step more to show a divergence.
    limit = len(recorded) if ended == "step_limit" else len(recorded) + 1
    # The run's skill folder as its header recorded it (a tool call's arguments are built from it again).
    skill_dir = header.extra.get("skillc.skill_dir")
    options = RunOptions(retries=0, max_steps=limit,
                         skill_dir=skill_dir if isinstance(skill_dir, str) else stand_in_skill_dir(machine))
    interpreter = Interpreter(machine, ReplayExecutor(run), ToolBox(), options, source_text)
    try:
        result = interpreter.run(dict(header.inputs or {}))
    except RunError as exc:
        return ReplayReport(False, f"the trace's inputs do not fit this machine: {exc}", recorded, (), None)
    visited, reason = result.visited[:result.steps], result.reason  # a step limit leaves its next state unrun

    def report(ok: bool, message: str) -> ReplayReport:
        return ReplayReport(ok, message, recorded, visited, result.outcome, result)

    if reason is not None and reason.kind == "divergence":
        return report(False, f"diverged at {reason.message}")
    if visited != recorded:
        i = next((k for k, (a, b) in enumerate(zip(visited, recorded)) if a != b), min(len(visited), len(recorded)))
        got = visited[i] if i < len(visited) else f"terminal `{result.terminal}`"
        want = recorded[i] if i < len(recorded) else "the end of the trace"
        return report(False, f"diverged at step {i}: the trace recorded {want}, the machine went to {got}")
    if result.terminal == FALLBACK:
        why = f"{reason.kind}: {reason.message}" if reason is not None else "no reason recorded"
        if ended is None:
            return report(False, f"the replay reached the fallback ({why}); the trace ended in "
                                 f"`{footer.terminal}`")
        if reason is not None and reason.kind != ended:
            return report(False, f"the trace ended in the fallback by {ended}, the replay by {why}")
    if footer.outcome is not None and footer.outcome != result.outcome:
        return report(False, f"the trace ended {footer.outcome}, the replay ends {result.outcome}")
    also = f", as the trace did ({reason.kind}: {reason.message})" if result.terminal == FALLBACK and reason else ""
    return report(True, f"replayed {len(recorded)} steps to `{result.terminal}` ({result.outcome}){also}")
