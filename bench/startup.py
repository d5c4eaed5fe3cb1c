"""Process start-up: `skillc --version`, `check` and `fmt --check` of one 12-state file, beside `python -c pass`.

Run: python bench/startup.py [--runs 15] [--skillc PATH]

Each command is started as a new process `--runs` times (after one warm-up run that is not counted) and timed
from outside, start to exit; the table gives min and median wall milliseconds, the median CPU milliseconds of
the process (user + system: what a busy machine does not inflate) and the goal (issue 13), which is wall time
on an otherwise idle machine.

The children write and read their bytecode under a fresh `PYTHONPYCACHEPREFIX` (and without
`PYTHONDONTWRITEBYTECODE`), so the uncounted warm-up compiles every module once and the counted runs start
as an installed skillc does; otherwise a tree without `__pycache__` (a pristine copy compared with
`--skillc`) pays for compiling all of skillc, ~0.5 s, on every start.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MACHINE = ROOT / "examples" / "livemath" / "livemath.skm"  # 12 states


def commands(skillc: str) -> list[tuple[str, list[str], float | None]]:
    """(label, argv, goal in ms) for each measured command."""
    return [
        ("python -c pass", [sys.executable, "-c", "pass"], None),
        ("skillc --version", [skillc, "--version"], 80.0),
        ("skillc check (12 states)", [skillc, "check", str(MACHINE)], 300.0),
        ("skillc fmt --check (12 states)", [skillc, "fmt", "--check", str(MACHINE)], 250.0),
    ]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_process(argv: list[str], runs: int, env: dict[str, str] | None = None) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of `runs` starts of `argv` (one uncounted warm-up first); a failure stops the bench."""
    walls, cpus = [], []
    for i in range(runs + 1):
        c0, t0 = _children_cpu(), time.perf_counter()
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              env=env)
        elapsed, cpu = time.perf_counter() - t0, _children_cpu() - c0
        if done.returncode != 0:
            sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode(errors='replace')[-500:]}")
        if i:
            walls.append(elapsed)
            cpus.append(cpu)
    return walls, cpus


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--skillc", default=str(Path(sys.executable).with_name("skillc")),
                    help="The skillc console script to time (default: the one beside this python).")
    args = ap.parse_args()
    pycache = tempfile.mkdtemp(prefix="skillc-startup-pyc-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": pycache}
    print(f"{'command':<32} {'min ms':>8} {'median ms':>10} {'cpu ms':>8} {'goal ms':>8} {'ok':>4}")
    try:
        for label, argv, goal in commands(args.skillc):
            walls, cpus = time_process(argv, args.runs, env)
            low, mid, cpu = min(walls) * 1e3, statistics.median(walls) * 1e3, statistics.median(cpus) * 1e3
            verdict = "" if goal is None else ("yes" if mid <= goal else "no")
            print(f"{label:<32} {low:>8.1f} {mid:>10.1f} {cpu:>8.1f} {'' if goal is None else f'{goal:.0f}':>8} "
                  f"{verdict:>4}")
    finally:
        shutil.rmtree(pycache, ignore_errors=True)


if __name__ == "__main__":
    main()
