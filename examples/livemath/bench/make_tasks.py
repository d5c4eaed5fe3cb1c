"""Generate the livemath bench's multiple-choice questions, deterministically from a seed.

    python examples/livemath/bench/make_tasks.py --count 60 --seed 1 > examples/livemath/bench/tasks.jsonl

Each question is one small arithmetic operation (a sum, a difference or a product of small numbers) with
five numeric options; the right one sits at each of the positions A–E equally often (in a shuffled order),
and the four distractors are the mistakes a small model makes: off by one or two, the wrong operation, a
slip of ten. Every line is a task of the suite: `inputs` match livemath.skm's `question` and `options`, and
the verifier expects exactly the right letter in answer.txt (the skill writes it without a newline).
"""

from __future__ import annotations

import argparse
import json
import random
import sys

LETTERS = "ABCDE"
OPERATIONS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b}
SIGNS = {"+": "+", "-": "-", "*": "×"}


def _operands(rng: random.Random, op: str) -> tuple[int, int]:
    """Two small operands; a difference never goes below zero."""
    if op == "*":
        return rng.randint(2, 9), rng.randint(2, 9)
    a, b = rng.randint(2, 30), rng.randint(2, 30)
    return (max(a, b), min(a, b)) if op == "-" else (a, b)


def _distractors(rng: random.Random, op: str, a: int, b: int, right: int) -> list[int]:
    """Four plausible wrong answers, distinct, non-negative and different from the right one."""
    wrong_ops = [OPERATIONS[o](a, b) for o in OPERATIONS if o != op]
    near = [right - 2, right - 1, right + 1, right + 2, right + 10, right - 10]
    pool = sorted({n for n in wrong_ops + near if n >= 0 and n != right})
    rng.shuffle(pool)
    return pool[:4]


def make_question(rng: random.Random, index: int, position: int) -> dict[str, object]:
    """One task line: the question, five options with the right one at `position`, and its verifier."""
    op = rng.choice(list(OPERATIONS))
    a, b = _operands(rng, op)
    right = OPERATIONS[op](a, b)
    options = _distractors(rng, op, a, b, right)
    options.insert(position, right)
    return {"id": f"lm-{index:03d}",
            "inputs": {"question": f"What is {a} {SIGNS[op]} {b}?", "options": [str(n) for n in options]},
            "verify": {"file": "answer.txt", "equals": LETTERS[position]}}


def make_tasks(count: int, seed: int) -> list[dict[str, object]]:
    """`count` questions; the right answer's position cycles through A–E in a shuffled order."""
    rng = random.Random(seed)
    positions = [i % len(LETTERS) for i in range(count)]
    rng.shuffle(positions)
    return [make_question(rng, i + 1, position) for i, position in enumerate(positions)]


def render(tasks: list[dict[str, object]]) -> str:
    """The JSONL text of the tasks, one compact object per line."""
    return "".join(json.dumps(t, ensure_ascii=False) + "\n" for t in tasks)


def main(argv: list[str] | None = None) -> int:
    """Print the tasks as JSONL."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=60, help="how many questions (default 60)")
    parser.add_argument("--seed", type=int, default=1, help="the random seed (default 1)")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    sys.stdout.write(render(make_tasks(args.count, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
