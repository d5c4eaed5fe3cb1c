"""Checker time by machine size (branches, guards, nested loops). Run: python bench/check_scaling.py"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen import nested_loop_machine
from skillc.api import check, load
from skillc.check import CHECKS, CheckContext


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--by-check", action="store_true", help="also print the time of each check family")
    args = ap.parse_args()
    check("machine warmup { start d terminal d: success fallback }")
    print(f"{'states':>8} {'load ms':>9} {'checks ms':>10} {'total ms':>9} {'µs/state':>9} {'findings':>9}")
    previous = None
    for n in (int(s) for s in args.sizes.split(",")):
        text = nested_loop_machine(n)
        loads, checks, findings = [], [], 0
        per_check: dict[str, list[float]] = {}
        for _ in range(args.repeat if n <= 1000 else 1):
            t0 = time.perf_counter()
            loaded = load(text)
            t1 = time.perf_counter()
            context = CheckContext()
            found = []
            for c in CHECKS:
                s = time.perf_counter()
                found += list(c(loaded.machine, context))
                per_check.setdefault(c.__name__, []).append(time.perf_counter() - s)
            t2 = time.perf_counter()
            loads.append(t1 - t0)
            checks.append(t2 - t1)
            findings = sum(d.severity.name != "NOTE" for d in found)
        ld, ck = statistics.median(loads), statistics.median(checks)
        states = len(loaded.machine.states)
        print(f"{states:>8} {ld * 1e3:>9.1f} {ck * 1e3:>10.1f} {(ld + ck) * 1e3:>9.1f} "
              f"{(ld + ck) / states * 1e6:>9.1f} {findings:>9}")
        if args.by_check:
            for name, times in per_check.items():
                print(f"{'':>8}   {name:<28} {statistics.median(times) * 1e3:>9.1f} ms")
        if previous is not None and n == previous[0] * 10:
            print(f"{'':>8}   time({n}) / time({previous[0]}) = {(ld + ck) / previous[1]:.1f}")
        previous = (n, ld + ck)


if __name__ == "__main__":
    main()
