"""One run of a checked machine in one mode: the interpreter for `machine`, the baseline loop otherwise.

`skillc run` and every bench cell start a run through `run_mode`, so a mode means the same in both, and build
its tools with `run_tools`: the tool kit confined to the run's places (`ToolBox.for_run`), the same for the
machine and for the native harness (which gets the whole kit, or the machine's `allow` list).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from skillc.ir.machine import Machine
from skillc.runtime.baselines import harness_machine, run_baseline, skill_document
from skillc.runtime.executors.base import Executor
from skillc.runtime.interpreter import Interpreter, RunOptions, RunResult
from skillc.runtime.jsonvalue import Object
from skillc.runtime.tools import ToolBox, ToolFn
from skillc.runtime.toolsource import ToolSource

Mode = Literal["machine", "native", "prompt-only"]
MODES: tuple[Mode, ...] = ("machine", "native", "prompt-only")


def default_skill_dir(machine: Machine) -> Path | None:
    """The skill folder of a machine built from a skill: the folder of its `source` document (relative to the
    machine's file), when that folder exists; None for a machine without a `source` or a file."""
    if machine.source_path is None:
        return None
    folder = machine.source_path.parent
    return folder.resolve() if folder.is_dir() else None


def stand_in_skill_dir(machine: Machine) -> str:
    """The skill folder of a run whose tools are not real (`skillc test`'s generated results, a replay's recorded
    ones): the folder of the machine's `source`, else a nominal `skill_dir` folder under the current one. Nothing is
    read there; the value only fills the place."""
    return str(default_skill_dir(machine) or Path("skill_dir").absolute())


def run_tools(machine: Machine, mode: Mode, *, workdir: str | Path, skill_dir: str | Path | None = None,
              modules: Sequence[str | Path] = (), timeout_s: float = 60.0, allow_hosts: Sequence[str] = (),
              ask_user: ToolFn | None = None, confine_modules: bool | None = None) -> ToolBox:
    """The tools of one run: the kit in the run's places, the `modules`' functions, `ask_user` as given.

    A baseline's harness offers tools the machine may not declare (the whole kit: `baselines.harness_machine`);
    its tool box is built for that machine, so the same confinement and capability checks apply to its calls.
    """
    if mode != "machine":

        machine = harness_machine(machine)
    return ToolBox.for_run(machine, workdir=str(workdir), skill_dir=None if skill_dir is None else str(skill_dir),
                           modules=tuple(str(m) for m in modules), timeout_s=timeout_s,
                           allow_hosts=tuple(allow_hosts), ask_user=ask_user, confine_modules=confine_modules)


def run_mode(machine: Machine, source_text: str, mode: Mode, executor: Executor, tools: ToolSource,
             options: RunOptions, inputs: Object, *, skill_text: str | None = None,
             resume: str | None = None, answer: str | None = None) -> RunResult:
    """Run (or, in machine mode, resume) `machine`; native mode sends `skill_text`, else the machine's `source`.

    `answer`: with `resume`, the user's answer to the question the run waits on.
    """
    try:
        if mode != "machine":
            document = skill_text if skill_text is not None else skill_document(machine)
            return run_baseline(machine, mode, executor, tools, options, inputs, document)
        interpreter = Interpreter(machine, executor, tools, options, source_text)
        return interpreter.resume(resume, answer) if resume else interpreter.run(inputs)
    finally:
        close = getattr(tools, "close", None)  # the MCP servers the run's tools started are stopped with it
        if callable(close):
            close()
