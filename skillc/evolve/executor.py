"""The bench runner as the executor of a version: one `run_cell` per node, on one task, in a fresh work folder.

Each node's machine text is written to `OUT/versions/N.skm` and run as the bench cell
(task, machine, executor spec, repeat = N), so every version gets its own `OUT/cells/…/rN/work`
and trace, kept as the cached output the test cases later run on. The reward is the task
verifier's verdict on the row (1 only when it passed); nothing else of the verifier reaches the
search. A cell that never ran (no trace: the executor could not be made, the workdir failed) is a
RoleError, not a reward of 0, so a broken harness is not mistaken for a bad version.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from skillc.bench.runner import Limits, cell_job, run_cell
from skillc.bench.suite import Suite, Task
from skillc.evolve.roles import RoleError
from skillc.evolve.state import Node, Output


@attrs.frozen
class BenchExecutor:
    """Runs versions of the suite's machine on one task with one executor spec (scripted, replay or a model)."""

    suite: Suite
    task: Task
    spec: str
    out: Path
    limits: Limits = Limits()

    def execute(self, node: Node) -> Output:
        """One bench cell for the node; its work folder, trace, declared outputs and binary reward."""
        from skillc.bench.cells import cell_paths
        from skillc.bench.results import Cell
        from skillc.bench.score import run_outputs
        from skillc.runtime.interpreter import machine_hash
        from skillc.runtime.record import TraceError, load_run

        machine = self.out / "versions" / f"{node.id}.skm"
        machine.parent.mkdir(parents=True, exist_ok=True)
        machine.write_text(node.machine, encoding="utf-8")
        cell = Cell(self.task.id, "machine", self.spec, node.id)
        row = run_cell(cell_job(cell, self.suite, self.task, machine, machine_hash(node.machine), self.out,
                                self.limits, self.suite.skill))
        paths = cell_paths(self.out, cell)
        if row.trace is None or not paths.trace.is_file():
            raise RoleError(f"version {node.name or node.id} did not run: {row.error or 'no trace'}")
        try:
            outputs = run_outputs(load_run(paths.trace))
        except TraceError as exc:
            raise RoleError(f"version {node.name or node.id} left an unreadable trace: {exc}") from None
        cached = tuple((k, json.dumps(v, default=str)) for k, v in sorted(outputs.items()))
        return Output(paths.workdir, paths.trace, int(row.success is True), cached)
