"""One run of a checked machine in one mode: the interpreter for `machine`, the baseline loop otherwise.

`skillc run` and every bench cell start a run through `run_mode`, so a mode means the same in both.
"""

from __future__ import annotations

from typing import Any, Literal

from skillc.ir.machine import Machine
from skillc.runtime.executors.base import Executor
from skillc.runtime.interpreter import Interpreter, RunOptions, RunResult
from skillc.runtime.toolsource import ToolSource

Mode = Literal["machine", "native", "prompt-only"]
MODES: tuple[Mode, ...] = ("machine", "native", "prompt-only")


def run_mode(machine: Machine, source_text: str, mode: Mode, executor: Executor, tools: ToolSource,
             options: RunOptions, inputs: dict[str, Any], *, skill_text: str | None = None,
             resume: str | None = None) -> RunResult:
    """Run (or, in machine mode, resume) `machine`; native mode sends `skill_text`, else the machine's `source`."""
    if mode != "machine":
        from skillc.runtime.baselines import run_baseline, skill_document

        document = skill_text if skill_text is not None else skill_document(machine)
        return run_baseline(machine, mode, executor, tools, options, inputs, document)
    interpreter = Interpreter(machine, executor, tools, options, source_text)
    return interpreter.resume(resume) if resume else interpreter.run(inputs)
