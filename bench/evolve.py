"""The evaluation suite of `skillc evolve` (issue 20): pass rate within K for the search and its ablations.

Each task of examples/evolve/ is a bench suite (`suite.toml`, one task, its hidden verifier
`hidden_verifier.py`, for two tasks the suite's Python tool `tools.py`) with the initial skill
(`machine.skm`, or the suite's `SKILL.md`, built offline), the runtime's scripted model (`script.json`:
answers per state name) and the scripted reflection and self-verifier replies (`roles.json`: misleading
first diagnoses, every revision a machine or SKILL.md patch). Every version is run by the real bench
runner (`skillc.improve.evolve.runner.BenchRunner`: the interpreter executes the machine, tool states run
bash and the suite's tools in the cell's fresh work folder, model states get the script's answer for
their name) and rewarded by the task's hidden verifier, which the search only sees as the binary reward.
In every task the root's failure has more than one plausible cause that the reward alone cannot tell apart.

Variants: full (tree search, self-verifier, the real `skillc check` gate), no-verifier, no-tree (in-place
refinement of the last version, with the self-verifier), greedy (in-place, no self-verifier) and no-gate
(full without the check gate). The table gives the pass rate within K=5, the evolved executions, the
candidates the gate refused (each an execution saved) and the wall time per evolution excluding the task
executions (the bench cells), which is mostly the generated test cases' subprocesses.

Run: python bench/evolve.py [--budget 5] [--repeat 3] [--only TASK]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillc.bench import suite as bench_suite  # noqa: E402
from skillc.improve.evolve.gate import check_gate  # noqa: E402
from skillc.improve.evolve.loop import Evolution, Gate, Roles, evolve, no_gate  # noqa: E402
from skillc.improve.evolve.options import EvolveOptions  # noqa: E402
from skillc.improve.evolve.patch import build_skill  # noqa: E402
from skillc.improve.evolve.roles import Script, ScriptedReflector, ScriptedVerifier, load_script  # noqa: E402
from skillc.improve.evolve.runner import BenchRunner  # noqa: E402
from skillc.improve.evolve.state import Node, Output  # noqa: E402

SUITE = ROOT / "examples" / "evolve"


@attrs.frozen
class Task:
    """One task of the suite: the bench suite and its task, the root version, the model spec and the role script."""

    name: str
    suite: bench_suite.Suite
    task: bench_suite.Task
    machine: str
    skill: str | None
    spec: str  # the runtime executor every version runs with: `scripted:` the task's script.json
    script: Script


def load_task(folder: Path) -> Task:
    """A task folder of the suite (SystemExit naming the problem when it does not load)."""
    loaded = bench_suite.load_suite(folder / "suite.toml")
    if loaded.suite is None or len(loaded.suite.tasks) != 1:
        raise SystemExit(f"{folder}: not a one-task suite: {[d.message for d in loaded.diagnostics]}")
    suite = loaded.suite
    script = load_script(folder / "roles.json")
    if not isinstance(script, Script):
        raise SystemExit(f"{folder}: {script.message}")
    skill = suite.skill.read_text(encoding="utf-8") if suite.skill is not None else None
    if suite.machine is not None:
        machine = suite.machine.read_text(encoding="utf-8")
    elif skill is not None:
        machine = build_skill(skill)
    else:
        raise SystemExit(f"{folder}: the suite names neither a machine nor a skill")
    return Task(folder.name, suite, suite.tasks[0], machine, skill, f"scripted:{folder / 'script.json'}", script)


def tasks(only: str | None = None) -> list[Task]:
    """Every task of the suite (or the one named)."""
    return [load_task(f) for f in sorted(SUITE.iterdir())
            if (f / "suite.toml").is_file() and (only is None or f.name == only)]


@attrs.define
class TimedRunner:
    """The bench runner, timed: `seconds` is the time spent in bench cells (excluded from the search's time)."""

    inner: BenchRunner
    seconds: float = 0.0

    def execute(self, node: Node) -> Output:
        """Run the version as one bench cell and add its wall time."""
        start = time.perf_counter()
        try:
            return self.inner.execute(node)
        finally:
            self.seconds += time.perf_counter() - start


def runner(task: Task, out: Path, check: bool = True) -> TimedRunner:
    """The task's versions run as bench cells under `out` (`check` off when a gate checks every candidate)."""
    return TimedRunner(BenchRunner(task.suite, task.task, task.spec, out, check=check))


@attrs.frozen
class Variant:
    """One configuration of the search."""

    name: str
    strategy: str
    verifier: bool
    gate: Gate


VARIANTS = (Variant("full", "tree", True, check_gate), Variant("no-verifier", "tree", False, check_gate),
            Variant("no-tree (in-place)", "greedy", True, check_gate), Variant("greedy", "greedy", False, check_gate),
            Variant("no-gate", "tree", True, no_gate))


@attrs.frozen
class Run:
    """One evolution of one task under one variant."""

    task: str
    variant: str
    evolution: Evolution
    wall_s: float
    search_s: float  # wall time without the task executions (the bench cells)


def run(task: Task, variant: Variant, budget: int, out: Path | None = None) -> Run:
    """Evolve the task's root under the variant (its bench cells under `out`, else a scratch folder)."""
    with tempfile.TemporaryDirectory(prefix="skillc-evolve-bench-") as scratch:
        timed = runner(task, out or Path(scratch), check=variant.gate is no_gate)
        roles = Roles(timed, ScriptedReflector(task.script),
                      ScriptedVerifier(task.script) if variant.verifier else None)
        options = EvolveOptions(budget=budget, strategy=variant.strategy,  # type: ignore[arg-type]
                                self_verifier=variant.verifier)
        start = time.perf_counter()
        evolution = evolve(task.machine, roles, gate=variant.gate, options=options, skill=task.skill)
        wall = time.perf_counter() - start
    return Run(task.name, variant.name, evolution, wall, wall - timed.seconds)


def table(runs: Sequence[Run], n_tasks: int, budget: int) -> list[str]:
    """The summary table: one row per variant."""
    lines = [f"| variant | pass rate within K={budget} | evolved executions (mean) | saved by the gate (total) | "
             "wall s per evolution excl. execution (median / max) |", "|---|---|---|---|---|"]
    for variant in VARIANTS:
        mine = [r for r in runs if r.variant == variant.name]
        first = {r.task: r for r in reversed(mine)}  # outcomes are deterministic: one repeat per task
        passed = sum(r.evolution.success for r in first.values())
        execs = statistics.mean(r.evolution.executions for r in first.values())
        saved = sum(r.evolution.saved for r in first.values())
        lines.append(f"| {variant.name} | {passed}/{n_tasks} | {execs:.2f} | {saved} | "
                     f"{statistics.median(r.search_s for r in mine):.2f} / {max(r.search_s for r in mine):.2f} |")
    return lines


def detail(runs: Sequence[Run]) -> list[str]:
    """Per task and variant: success, executions, saved, the versions run."""
    lines = ["| task | variant | success | executions | saved | versions run |", "|---|---|---|---|---|---|"]
    seen: set[tuple[str, str]] = set()
    for r in runs:
        if (r.task, r.variant) in seen:
            continue
        seen.add((r.task, r.variant))
        e = r.evolution
        ran = " → ".join(e.tree.node(s.node).name + ("*" if s.jump else "") for s in e.steps if s.kind == "run")
        lines.append(f"| {r.task} | {r.variant} | {'yes' if e.success else 'no'} | {e.executions} | {e.saved} | "
                     f"{ran} |")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Run every task under every variant and print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3, help="repeats per cell, for the wall time")
    parser.add_argument("--only", default=None, help="one task of examples/evolve/")
    args = parser.parse_args(argv)
    suite = tasks(args.only)
    if not suite:
        parser.error(f"no task {args.only!r} in {SUITE}")
    runs = [run(t, v, args.budget) for _ in range(args.repeat) for t in suite for v in VARIANTS]
    problems: list[Any] = [(r.task, r.variant, d) for r in runs for d in r.evolution.diagnostics if d.is_error]
    print("\n".join(table(runs, len(suite), args.budget)))
    print()
    print("\n".join(detail(runs)))
    print("\n(* = the search jumped: the version's parent is not the version run just before it)")
    for task, variant, d in problems[:5]:
        print(f"error ({task}, {variant}): {d.code}: {d.message}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
