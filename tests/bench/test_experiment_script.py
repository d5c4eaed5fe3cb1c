"""bench/experiment.py (the README experiment): the task-subset mirror of a suite and the per-mode table."""

from __future__ import annotations

import json
from pathlib import Path

from bench.experiment import LIVEMATH, WAREHOUSE, complete_tasks, mirror, mode_table, violations
from skillc.bench.results import Cell, Row
from skillc.bench.suite import load_suite
from skillc.runtime.record import Outcome


def test_a_mirrored_suite_keeps_only_the_chosen_tasks_and_every_other_path(tmp_path: Path) -> None:
    suite, kept, total = mirror(WAREHOUSE, lambda t: t.get("horizon") == 25, tmp_path / "m")
    loaded = load_suite(suite)
    assert loaded.suite is not None, loaded.diagnostics
    full = load_suite(WAREHOUSE).suite
    assert full is not None
    assert [t.id for t in loaded.suite.tasks] == [t.id for t in full.tasks if t.horizon == 25]
    assert (kept, total) == (len(loaded.suite.tasks), len(full.tasks)) and 0 < kept < total
    # The machine, the skill, the tools and the fixtures are copies of the originals (SKM745: a suite runs no
    # module from outside its root), each at the same place relative to the suite.
    base, mirrored = full.path.parent.parent, loaded.suite.path.parent.parent
    for ours, theirs in [(loaded.suite.machine, full.machine), (loaded.suite.skill, full.skill),
                         *zip(loaded.suite.tools, full.tools)]:
        assert ours is not None and theirs is not None
        assert ours.relative_to(mirrored) == theirs.relative_to(base) and ours.read_bytes() == theirs.read_bytes()
    assert [t.workdir and t.workdir.relative_to(mirrored) for t in loaded.suite.tasks] == \
        [t.workdir and t.workdir.relative_to(base) for t in full.tasks if t.horizon == 25]
    assert [r.id for r in loaded.suite.requirements] == [r.id for r in full.requirements]


def test_mirroring_again_replaces_the_subset(tmp_path: Path) -> None:
    ids = [json.loads(ln)["id"] for ln in LIVEMATH.with_name("tasks.jsonl").read_text().splitlines() if ln]
    mirror(LIVEMATH, lambda t: t["id"] in ids[:3], tmp_path / "m")
    suite, kept, _ = mirror(LIVEMATH, lambda t: t["id"] in ids[:2], tmp_path / "m")
    loaded = load_suite(suite).suite
    assert loaded is not None and [t.id for t in loaded.tasks] == ids[:2] and kept == 2


def _row(task: str, mode: str, success: bool | None, rfc: bool | None, outcome: Outcome, *, prompt: int = 100,
         latency: float = 2.0, violated: tuple[str, ...] = ()) -> Row:
    return Row(Cell(task, mode, "local", 0), success, rfc, steps=3, prompt_tokens=prompt, completion_tokens=10,
               latency_s=latency, outcome=outcome, violated=violated)


def test_the_mode_table_counts_what_the_rows_say() -> None:
    rows = [_row("a", "machine", True, True, "success", prompt=300, latency=30.0),
            _row("b", "machine", False, True, "success", prompt=100, latency=30.0),
            _row("a", "native", False, False, "failed", violated=("written",)),
            _row("b", "native", None, None, "failed")]
    table = mode_table(rows).splitlines()
    machine = next(ln for ln in table if ln.startswith("| machine "))
    native = next(ln for ln in table if ln.startswith("| native "))
    assert "| 1/2 (50%) [" in machine and "| 2/2 (100%) [" in machine
    assert "| 200 |" in machine and "| 210 |" in machine  # mean prompt tokens; mean total tokens
    assert "1.0 min; 30.0 s" in machine and "| 2/0/0 |" in machine
    assert "| 0/1 (0%) [" in native and "| 0/0/2 |" in native  # the unverified cell is out of the rate
    assert violations(rows).splitlines()[2] == "| written | 0 | 1 |"


def test_only_tasks_run_in_every_mode_are_counted() -> None:
    rows = [_row("a", "machine", True, True, "success"), _row("a", "native", False, False, "failed"),
            _row("b", "machine", True, True, "success")]  # the bench was stopped before b's native cell
    assert [r.cell.task for r in complete_tasks(rows, ("machine", "native"))] == ["a", "a"]
    assert complete_tasks(rows, ("machine",)) == rows
