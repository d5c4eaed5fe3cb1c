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


def replay_file(machine, source_text: str, trace: str | Path) -> ReplayReport:
    """Drive a machine with a trace's recorded outputs; verify the path, the absence of fallback, the outcome."""
    from skillc.runtime.executors.replay import ReplayExecutor

    executor = ReplayExecutor(str(trace))
    recorded = tuple(s["state"] for s in executor.steps)
    expected = (executor.footer or {}).get("skillc.outcome")
    interpreter = Interpreter(machine, executor, ToolBox(), RunOptions(retries=0, max_steps=len(recorded) + 1),
                              source_text)
    result = interpreter.run(executor.header.get("inputs") or {})
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

