"""Fuzz the toolchain: N inputs (half grammar-generated, half mutated examples) through every stage.

    python bench/fuzz.py [--inputs 100000] [--jobs 2] [--seed 0]

Prints the number of inputs, how many parsed and how many checked clean, the
diagnostics by code, and the internal errors (the goal is 0), with the first
few offending inputs saved under bench/fuzz-failures/.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillc.testing.fuzz import FuzzReport, grammar_strategy, mutate, run_pipeline, seeds  # noqa: E402


def _batch(args: tuple[int, int, int]) -> FuzzReport:
    seed, count, kind = args
    rng = random.Random(seed)
    report = FuzzReport()
    if kind == 0:
        corpus = seeds([ROOT / "examples", ROOT / "stdlib"])
        for _ in range(count):
            run_pipeline(mutate(rng.choice(corpus), rng), report)
    else:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hseed

        @hseed(seed)
        @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(grammar_strategy())
        def feed(text):
            run_pipeline(text.encode("utf-8", errors="surrogatepass"), report)

        feed()
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    per = 2000
    batches = [(args.seed * 100_003 + i, min(per, args.inputs - i * per), i % 2) for i in range((args.inputs + per - 1) // per)]
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        reports = pool.map(_batch, batches)
    total = FuzzReport()
    for r in reports:
        total.inputs += r.inputs
        total.parsed += r.parsed
        total.checked_clean += r.checked_clean
        total.codes.update(r.codes)
        total.internal += r.internal
    elapsed = time.perf_counter() - start
    print(f"inputs {total.inputs:,}   parsed {total.parsed:,}   checked clean {total.checked_clean:,}   "
          f"internal errors {len(total.internal)}   ({elapsed:.0f} s)")
    print("diagnostics by code:")
    for code, n in sorted(total.codes.items()):
        print(f"  {code} {n:>8,}")
    if total.internal:
        out = ROOT / "bench" / "fuzz-failures"
        out.mkdir(exist_ok=True)
        for i, (data, why) in enumerate(total.internal[:20]):
            (out / f"case{i}.skm").write_bytes(data)
            print(f"  internal error: {why}  -> {out / f'case{i}.skm'}")
        sys.exit(1)


if __name__ == "__main__":
    main()
