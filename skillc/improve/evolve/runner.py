"""The bench runner as the version runner (roles.VersionRunner): one `run_cell` per node, on one task, in a fresh \
work folder.

Each node's machine text is written to `OUT/versions/N.skm` and run as the bench cell
(task, machine, executor spec, repeat = N), so every version gets its own `OUT/cells/…/rN/work`
and trace, kept as the cached output the test cases later run on. The reward is the task
verifier's verdict on the row (1 only when it passed); nothing else of the verifier reaches the
search: the bench runs it on a scratch copy of the work folder and trace (`skillc.bench.verify`), so what
it writes there is never part of the cached output.

A version that does not pass `skillc check` (only possible without the gate, the `--no-gate` ablation)
cannot run: the bench runs checked machines only. It is checked here, before its cell (unless `check` is off:
the caller's gate has checked every candidate, and the command the root), and costs its
execution with reward 0, what a user would see: the run failed. Its cell gets a fresh work folder (the
task's fixture, as a run that did nothing would leave it) and a trace with no step whose footer is a
failed outcome with the check's reason as its error, so the cases run on it as on any output and simply
do not hold where they need the run's work. A cell of a version that checks but never ran (no trace:
the executor could not be made, the workdir failed) is a RoleError, not a reward of 0, so a broken
harness is not mistaken for a bad version; so is a work folder or trace that cannot be written for a
version that does not check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.bench.cells import cell_paths, fresh_workdir
from skillc.bench.results import Cell
from skillc.bench.runner import Limits, cell_job, run_cell
from skillc.bench.score import run_outputs
from skillc.bench.suite import Suite, Task
from skillc.improve.evolve.gate import check_gate
from skillc.improve.evolve.roles import RoleError
from skillc.improve.evolve.state import Node, Output
from skillc.runtime.interpreter import machine_hash
from skillc.runtime.record import EndReason, Footer, TraceError, load_run, new_header

if TYPE_CHECKING:
    from skillc.bench.cells import CellPaths


@attrs.frozen
class BenchRunner:
    """Runs versions of the suite's machine on one task with one executor spec (scripted, replay or a model)."""

    suite: Suite
    task: Task
    spec: str
    out: Path
    limits: Limits = Limits()  # noqa: RUF009 - frozen, so one shared default is safe
    #: Check each version before its cell; off when a gate checked every candidate already (no second check).
    check: bool = True

    def execute(self, node: Node) -> Output:
        """One bench cell for the node; its work folder, trace, declared outputs and binary reward."""
        machine = self.out / "versions" / f"{node.id}.skm"
        try:
            machine.parent.mkdir(parents=True, exist_ok=True)
            machine.write_text(node.machine, encoding="utf-8")
        except OSError as exc:  # e.g. a full disk: the harness failed, not the version
            raise RoleError(f"version {node.name or node.id} did not run: cannot write {machine}: "
                            f"{exc.strerror or exc}") from None
        cell = Cell(self.task.id, "machine", self.spec, node.id)
        paths = cell_paths(self.out, cell)
        unchecked = check_gate(node) if self.check else None
        if unchecked is not None:
            return self._not_run(node, paths, machine, unchecked)
        row = run_cell(cell_job(cell, self.suite, self.task, machine, machine_hash(node.machine), self.out,
                                self.limits, self.suite.skill))
        if row.trace is None or not paths.trace.is_file():
            raise RoleError(f"version {node.name or node.id} did not run: {row.error or 'no trace'}")
        try:
            outputs = run_outputs(load_run(paths.trace))
        except TraceError as exc:
            raise RoleError(f"version {node.name or node.id} left an unreadable trace: {exc}") from None
        cached = tuple((k, json.dumps(v, default=str)) for k, v in sorted(outputs.items()))
        return Output(paths.workdir, paths.trace, int(row.success is True), cached)

    def _not_run(self, node: Node, paths: CellPaths, machine: Path, why: str) -> Output:
        """The cached output of a version that does not check: a fresh work folder, a trace saying why, reward 0."""
        name = node.name or node.id
        problem = fresh_workdir(self.out, paths, self.task.workdir)
        if problem is not None:
            raise RoleError(f"version {name} did not run: {problem.message}")
        message = f"not run: {why}"
        header = new_header(str(machine), "machine", self.spec, {}, machine_hash=machine_hash(node.machine),
                            workdir=str(paths.workdir))
        footer = Footer(outcome="failed", steps=0, error=message, reason=EndReason("other", message))
        lines = "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in (header, footer))
        try:
            paths.trace.write_text(lines, encoding="utf-8")
        except OSError as exc:
            raise RoleError(f"version {name} did not run: cannot write {paths.trace}: {exc}") from None
        return Output(paths.workdir, paths.trace, 0, note=message)
