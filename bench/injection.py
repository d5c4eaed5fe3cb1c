"""Shell injection property runs: random string-building machines, checked, then run with payload replies.

    .venv/bin/python bench/injection.py [--count 2000] [--seed 0]

Each machine comes from the grammar of `tests/check/test_injection_property.py`; it is checked with
`skillc check` and run (real runtime, scripted model, real bash, a fresh work folder) once per reply, three
payload replies each (a refused machine that none of them broke is run again with every payload in every
untrusted field). Prints runs, machines the checker passed, payloads executed by machines it passed (the
goal: 0), and the refused machines that no payload broke (false positives at most: a payload list does
not prove a machine safe, and many such commands are broken shell that no reply can run).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.check.test_injection_property import Sample, broken_shell, every_payload, generate, run_sample


def main() -> int:
    """Run the samples and print the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    machines = passed = executed_passed = executed_refused = refused_safe = broken = invalid = runs = 0
    failures: list[str] = []
    started = time.monotonic()
    for _ in range(args.count):
        sample = generate(rng)
        with tempfile.TemporaryDirectory() as tmp:
            outcome = run_sample(sample, Path(tmp))
        machines += 1
        if outcome.other_errors:
            invalid += 1
            continue
        runs += len(sample.replies) if not outcome.executed else 1
        if outcome.passed:
            passed += 1
            if outcome.executed:
                executed_passed += 1
                failures.append(sample.text)
        elif outcome.executed:
            executed_refused += 1
        else:  # refused, and three payloads did not break it: try every payload before calling it safe
            with tempfile.TemporaryDirectory() as tmp:
                again = run_sample(Sample(sample.text, every_payload()), Path(tmp))
            runs += len(every_payload()) if not again.executed else 1
            if again.executed:
                executed_refused += 1
            else:
                refused_safe += 1
                with tempfile.TemporaryDirectory() as tmp:
                    broken += broken_shell(sample, Path(tmp))
    elapsed = time.monotonic() - started
    rows = [
        ("machines", machines), ("machines the grammar got wrong (not counted)", invalid),
        ("runs (machine × payload reply)", runs), ("machines the checker passed", passed),
        ("payloads executed by passed machines (goal 0)", executed_passed),
        ("refused machines a payload broke (true positives)", executed_refused),
        ("refused machines no payload broke (false positives, at most)", refused_safe),
        ("  of which the command is not valid shell (bash exits 2)", broken),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value:>6}")
    print(f"{'seconds':<{width}}  {elapsed:>6.0f}")
    for text in failures[:3]:
        print("\n--- a passed machine that ran a payload:\n" + text)
    return 1 if executed_passed else 0


if __name__ == "__main__":
    raise SystemExit(main())
