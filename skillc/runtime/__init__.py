"""Stage 4: the runtime. Runs checked machines; replays and resumes runs.

Entry points: `run_file` (what `skillc run` does), `resume_run`, `replay_file`.
"""

from __future__ import annotations

import re
from pathlib import Path
import attrs

from skillc.runtime.executors import Executor, ExecutorError, make_executor
from skillc.runtime.interpreter import Interpreter, RunError, RunOptions, RunResult, machine_hash
from skillc.runtime.journal import Journal, JournalError
from skillc.runtime.tools import ToolBox, ToolError

__all__ = [
    "Executor", "ExecutorError", "Interpreter", "Journal", "JournalError", "ReplayReport", "RunError",
    "RunOptions", "RunResult", "ToolBox", "ToolError", "make_executor", "machine_hash", "replay_file",
]


@attrs.frozen
class ReplayReport:
    """The verdict of replaying a trace: ok, or the first divergence."""

    ok: bool
    message: str
    recorded: tuple[str, ...]
    visited: tuple[str, ...]
    outcome: str | None


def replay_file(machine, source_text: str, trace: str | Path, *, other_machine: bool = False) -> ReplayReport:
    """Drive a machine with a trace's recorded outputs; verify the path, the absence of fallback, the outcome.

    A trace of another machine (its content hash differs) or of an unfinished run (no footer) does not
    replay unless `other_machine` allows the first (as when a revised machine must replay old traces).
    """
    from skillc.runtime.executors.replay import ReplayExecutor

    executor = ReplayExecutor(str(trace))
    recorded = tuple(s["state"] for s in executor.steps)
    recorded_hash = executor.header.get("skillc.machine_hash")
    if not other_machine and recorded_hash != machine_hash(source_text):
        return ReplayReport(False, f"the trace was recorded with another machine (`{executor.header.get('skillc.machine')}`"
                            f", hash {recorded_hash}; this one is `{machine.name}`, hash {machine_hash(source_text)});"
                            " pass --other-machine to replay it anyway", recorded, (), None)
    if executor.footer is None:
        return ReplayReport(False, f"the trace has no footer: its run did not finish ({len(recorded)} steps recorded)",
                            recorded, (), None)
    expected = executor.footer.get("skillc.outcome")
    interpreter = Interpreter(machine, executor, ToolBox(), RunOptions(retries=0, max_steps=len(recorded) + 1),
                              source_text)
    inputs = executor.header.get("inputs")
    try:
        result = interpreter.run(inputs if isinstance(inputs, dict) else {})
    except RunError as exc:
        return ReplayReport(False, f"the trace's inputs do not fit this machine: {exc}", recorded, (), None)
    visited = result.visited
    divergence = re.search(r"step \d+: the (?:trace recorded|machine entered).*", result.error or "")
    if divergence:
        return ReplayReport(False, f"diverged at {divergence.group(0)}", recorded, visited, result.outcome)
    if visited != recorded:
        i = next((k for k, (a, b) in enumerate(zip(visited, recorded)) if a != b), min(len(visited), len(recorded)))
        got = visited[i] if i < len(visited) else f"terminal `{result.terminal}`"
        want = recorded[i] if i < len(recorded) else "the end of the trace"
        return ReplayReport(False, f"diverged at step {i}: the trace recorded {want}, the machine went to {got}",
                            recorded, visited, result.outcome)
    if result.terminal == "fallback":
        return ReplayReport(False, f"the replay reached the fallback: {result.error}", recorded, visited,
                            result.outcome)
    if expected is not None and expected != result.outcome:
        return ReplayReport(False, f"the trace ended {expected}, the replay ends {result.outcome}", recorded,
                            visited, result.outcome)
    return ReplayReport(True, f"replayed {len(recorded)} steps to `{result.terminal}` ({result.outcome})",
                        recorded, visited, result.outcome)

