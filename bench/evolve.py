"""The evaluation suite of `skillc evolve` (issue 20): pass rate within K for the search and its ablations.

Each task of examples/evolve/ is a folder: the initial skill (`machine.skm`, or `SKILL.md` built offline), the
scripted reflection and self-verifier replies (`roles.json`: misleading first diagnoses, revisions as machine or
SKILL.md patches), the simulated agent (`behaviour.json`: which files a version leaves, decided by phrases of
its machine text — the machine the patches actually produced; a null file is not written) and the hidden
verifier (`hidden_verifier.py`, `check(workdir) -> bool`, which the search only sees as the binary reward).
In every task the root's failure has more than one plausible cause that the reward alone cannot tell apart.

Variants: full (tree search, self-verifier, the real `skillc check` gate), no-verifier, no-tree (in-place
refinement of the last version, with the self-verifier), greedy (in-place, no self-verifier) and no-gate
(full without the check gate). The table gives the pass rate within K=5, the evolved executions, the
candidates the gate refused (each an execution saved) and the wall time per evolution excluding the task
executions (the simulated agent's time), which is mostly the generated test cases' subprocesses.

Run: python bench/evolve.py [--budget 5] [--repeat 3] [--only TASK]
"""

from __future__ import annotations

import argparse
import json
import runpy
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillc.evolve.gate import check_gate  # noqa: E402
from skillc.evolve.loop import Evolution, Gate, Roles, evolve, no_gate  # noqa: E402
from skillc.evolve.options import EvolveOptions  # noqa: E402
from skillc.evolve.patch import build_skill  # noqa: E402
from skillc.evolve.roles import Script, ScriptedReflector, ScriptedVerifier, load_script  # noqa: E402
from skillc.evolve.state import Node, Output  # noqa: E402

SUITE = ROOT / "examples" / "evolve"


@attrs.frozen
class Task:
    """One task of the suite."""

    name: str
    machine: str
    skill: str | None
    script: Script
    files: tuple[tuple[str, str | None], ...]
    rules: tuple[tuple[tuple[str, ...], tuple[tuple[str, str | None], ...]], ...]
    hidden: Callable[[Path], bool]


def load_task(folder: Path) -> Task:
    """A task folder of the suite."""
    script = load_script(folder / "roles.json")
    if not isinstance(script, Script):
        raise SystemExit(f"{folder}: {script.message}")
    skill = (folder / "SKILL.md").read_text(encoding="utf-8") if (folder / "SKILL.md").exists() else None
    machine = build_skill(skill) if skill is not None else (folder / "machine.skm").read_text(encoding="utf-8")
    behaviour = json.loads((folder / "behaviour.json").read_text(encoding="utf-8"))
    rules = tuple((tuple(r["when"]), tuple(sorted(r["files"].items()))) for r in behaviour["rules"])
    hidden = runpy.run_path(str(folder / "hidden_verifier.py"))["check"]
    return Task(folder.name, machine, skill, script, tuple(sorted(behaviour["files"].items())), rules, hidden)


def tasks(only: str | None = None) -> list[Task]:
    """Every task of the suite (or the one named)."""
    return [load_task(f) for f in sorted(SUITE.iterdir()) if f.is_dir() and (only is None or f.name == only)]


@attrs.define
class SimulatedExecutor:
    """The task's simulated agent: the files its rules give the version's machine text, rewarded by the hidden
    verifier; `seconds` is the time spent executing (excluded from the search's wall time)."""

    task: Task
    out: Path
    seconds: float = 0.0

    def execute(self, node: Node) -> Output:
        """Run a version: write its files to a fresh work folder, then ask the hidden verifier."""
        start = time.perf_counter()
        files = dict(self.task.files)
        for phrases, written in self.task.rules:
            if all(p in node.machine for p in phrases):
                files.update(written)
        work = self.out / "nodes" / str(node.id) / "work"
        work.mkdir(parents=True)
        for name, text in files.items():
            if text is not None:  # a rule's null: the version no longer writes that file
                (work / name).write_text(text, encoding="utf-8")
        trace = work.parent / "trace.jsonl"
        trace.write_text("", encoding="utf-8")
        reward = int(bool(self.task.hidden(work)))
        self.seconds += time.perf_counter() - start
        return Output(work, trace, reward)


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
    search_s: float  # wall time without the task executions


def run(task: Task, variant: Variant, budget: int) -> Run:
    """Evolve the task's root under the variant."""
    with tempfile.TemporaryDirectory(prefix="skillc-evolve-bench-") as folder:
        executor = SimulatedExecutor(task, Path(folder))
        roles = Roles(executor, ScriptedReflector(task.script),
                      ScriptedVerifier(task.script) if variant.verifier else None)
        options = EvolveOptions(budget=budget, strategy=variant.strategy,  # type: ignore[arg-type]
                                self_verifier=variant.verifier)
        start = time.perf_counter()
        evolution = evolve(task.machine, roles, gate=variant.gate, options=options, skill=task.skill)
        wall = time.perf_counter() - start
    return Run(task.name, variant.name, evolution, wall, wall - executor.seconds)


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
    runs = [run(t, v, args.budget) for _ in range(args.repeat) for t in suite for v in VARIANTS]
    problems: list[Any] = [d for r in runs for d in r.evolution.diagnostics if d.is_error]
    print("\n".join(table(runs, len(suite), args.budget)))
    print()
    print("\n".join(detail(runs)))
    print("\n(* = the search jumped: the version's parent is not the version run just before it)")
    for d in problems[:5]:
        print(f"error: {d.code}: {d.message}")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
