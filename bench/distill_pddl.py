"""Distil skills from PDDL plans and execute them on held-out problems in PDDLGym, per domain.

Run: python bench/distill_pddl.py [--domains blocks,gripper] [--gripper-train 3] [--gripper-heldout 5]

For each domain, pyperplan solves PDDLGym's training problems (blocks: all 5; gripper: the first
`--gripper-train`) and held-out test problems (blocks: all 15; gripper: the first `--gripper-heldout`,
which grow to more balls than any training problem); the plans played in PDDLGym are the traces. The
library is distilled from the training traces, then every held-out problem is played in PDDLGym with
the skills called wherever they apply. Goals: 0 execution errors, every problem solved, >= 40% fewer turns.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.frontends.distill import distill, pddl
from skillc.frontends.distill.library import load_skills
from skillc.frontends.distill.verify import verify


def split(name: str, args) -> tuple[list[str], list[str]]:
    """The training and held-out problem files of a domain."""
    train, test = pddl.problems(name, "train"), pddl.problems(name, "test")
    if name == "gripper":
        return train[:args.gripper_train], test[:args.gripper_heldout]
    return train, test


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domains", default="blocks,gripper")
    parser.add_argument("--gripper-train", type=int, default=3)
    parser.add_argument("--gripper-heldout", type=int, default=5)
    args = parser.parse_args()
    header = (f"{'domain':<8} {'train':>5} {'steps':>9} {'skills':>6} {'held-out':>8} {'steps':>9} {'won':>5} "
              f"{'calls':>5} {'errors':>6} {'turns skills/prim':>17} {'fewer':>6} {'plan s':>6} {'distil s':>8} "
              f"{'verify s':>8}")
    rows = []
    for name in args.domains.split(","):
        train_files, held_files = split(name, args)
        start = time.perf_counter()
        train = pddl.collect(name, "train", train_files)
        heldout = pddl.collect(name, "test", held_files)
        t_plan = time.perf_counter() - start
        start = time.perf_counter()
        distilled = distill(train)
        t_distil = time.perf_counter() - start
        skills = load_skills(distilled, distilled.clusters)
        start = time.perf_counter()
        kept, ev, problems = verify(distilled, skills, heldout)
        t_verify = time.perf_counter() - start
        sizes = lambda ts: f"{min(len(t.steps) for t in ts)}-{max(len(t.steps) for t in ts)}"  # noqa: E731
        rows.append(f"{name:<8} {len(train):>5} {sizes(train):>9} {len(kept):>6} {len(heldout):>8} "
                    f"{sizes(heldout):>9} {ev.won:>5} {ev.calls:>5} {ev.errors:>6} "
                    f"{f'{ev.turns}/{ev.primitive_turns}':>17} {ev.reduction:>6.1%} {t_plan:>6.1f} "
                    f"{t_distil:>8.2f} {t_verify:>8.1f}")
        print(f"{name}: skills {', '.join(c.name for c in kept)}; held-out {', '.join(held_files)}")
        for d in problems:
            print(f"  {d.code}: {d.message}")
    print()
    print(header)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
