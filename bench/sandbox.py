"""What the box costs (issue #34): the wall time of one confined command or Python call against the same unconfined.

    python bench/sandbox.py [--calls 20]

Rows: `/bin/true` started plainly (subprocess) and in the box (`run_confined`) with every layer this machine offers
and with the optional ones off (SKILLC_SANDBOX_OFF); a Python interpreter started plainly and in the box; a
module's function called in the box (`call_python`, what a suite's Python verifier and a confined `--tools`
function cost) against a plain `python -I` running the same call. Prints `row | median ms | p90 ms | layers` and
the layers this machine gave. About 20 s on 2 cores.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skillc.sandbox.box import available_layers, call_python, run_confined

MODULE = "def verify(workdir, outputs, trace):\n    return True, 'ok'\n"


def _time(fn: Callable[[], object], calls: int) -> tuple[float, float]:
    """Median and 90th percentile wall milliseconds of `calls` calls (one warm-up first)."""
    fn()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[min(len(times) - 1, int(len(times) * 0.9))]


def main() -> None:
    """Measure and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=20)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder)
        module = scratch / "verifier.py"
        module.write_text(MODULE, encoding="utf-8")
        box = run_confined(["/bin/true"], scratch=scratch, timeout_s=30)
        plain_call = [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {folder!r}); "
                                                  "import verifier; verifier.verify(None, {}, None)"]
        rows: list[tuple[str, Callable[[], object], str]] = [
            ("/bin/true, plain", lambda: subprocess.run(["/bin/true"], check=True), "none"),
            ("/bin/true, box", lambda: run_confined(["/bin/true"], scratch=scratch, timeout_s=30),
             ", ".join(box.layers)),
            ("/bin/true, box without landlock/namespaces",
             lambda: run_confined(["/bin/true"], scratch=scratch, timeout_s=30, disable=("landlock", "namespaces")),
             "always-on layers only"),
            ("python -I -c pass, plain", lambda: subprocess.run([sys.executable, "-I", "-c", "pass"], check=True),
             "none"),
            ("python -I -c pass, box", lambda: run_confined([sys.executable, "-I", "-c", "pass"], scratch=scratch,
                                                            timeout_s=30), "all"),
            ("verifier call, plain python -I", lambda: subprocess.run(plain_call, check=True), "none"),
            ("verifier call, call_python (box)", lambda: call_python(module, "verify", scratch=scratch,
                                                                     args=[folder, {}, folder], timeout_s=30), "all"),
        ]
        print(f"{'row':<46} | {'median ms':>9} | {'p90 ms':>7} | layers")
        print("-" * 46 + "-|-" + "-" * 9 + "-|-" + "-" * 7 + "-|-------")
        for name, fn, layers in rows:
            median, p90 = _time(fn, calls)
            print(f"{name:<46} | {median:9.1f} | {p90:7.1f} | {layers}")
    print("this machine:", available_layers())


if __name__ == "__main__":
    main()
