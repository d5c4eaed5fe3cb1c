"""Rebuild the PDDL trace sets: pyperplan's plans played in PDDLGym (needs `pddlgym` and `pyperplan`).

Run from the repository root: python examples/traces/pddl/regenerate.py
Training traces come from PDDLGym's training problems, held-out traces from its test problems: all of
blocks' (5 training problems of 8 to 35 steps, 15 held-out of 1 to 29 steps), and three of gripper's each
(13, 29 and 45 steps in training; 21, 37 and 53 held out: the largest held-out problem carries more balls
than any training one).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from skillc.frontends.distill import pddl  # noqa: E402
from skillc.frontends.distill.trace import dumps  # noqa: E402

HERE = Path(__file__).resolve().parent
SETS = {
    "blocks": (pddl.problems("blocks", "train"), pddl.problems("blocks", "test")),
    "gripper": (["prob01.pddl", "prob03.pddl", "prob05.pddl"], ["prob02.pddl", "prob04.pddl", "prob06.pddl"]),
}

if __name__ == "__main__":
    for name, (train, heldout) in SETS.items():
        for split, chosen, stem in (("train", train, "train"), ("test", heldout, "heldout")):
            traces = pddl.collect(name, split, chosen)
            (HERE / f"{name}-{stem}.jsonl").write_text(dumps(traces))
            print(f"{name}-{stem}.jsonl: {len(traces)} traces")
