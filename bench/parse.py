"""Parse + lower time by machine size. Run: python bench/parse.py [--sizes 10,100,1000,10000]"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gen import synthetic_machine
from skillc.api import load, parse


def measure(text: str, repeat: int) -> tuple[float, float]:
    """Median seconds for parse alone and for parse + lower."""
    parse_times, load_times = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        parse(text)
        t1 = time.perf_counter()
        result = load(text)
        t2 = time.perf_counter()
        assert result.ok, [d.code for d in result.diagnostics][:5]
        parse_times.append(t1 - t0)
        load_times.append(t2 - t1)
    return statistics.median(parse_times), statistics.median(load_times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="10,100,1000,10000")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    load("machine warmup { start d terminal d: success fallback }")  # build the parser once
    print(f"{'states':>8} {'lines':>8} {'parse ms':>10} {'parse+lower ms':>15} {'µs/state':>9}")
    for n in (int(s) for s in args.sizes.split(",")):
        text = synthetic_machine(n)
        repeat = args.repeat if n <= 1000 else max(1, args.repeat // 2)
        p, pl = measure(text, repeat)
        print(f"{n:>8} {text.count(chr(10)):>8} {p * 1e3:>10.1f} {pl * 1e3:>15.1f} {pl / n * 1e6:>9.1f}")


if __name__ == "__main__":
    main()
