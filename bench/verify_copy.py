"""What it costs that a verifier runs on a scratch copy of the cell (skillc.bench.verify), on the shipped suites.

    python bench/verify_copy.py [--repeats 20] [--trace-kb 100]

For every task of every shipped suite (examples/*/bench/suite.toml, examples/evolve/*/suite.toml) a work folder
is made as the bench makes a cell's (the task's fixture folder copied in, plus an answer.txt), with a trace of
`--trace-kb` KiB beside it (a 200-event warehouse run writes about that much). Per cell it times the task's
verifier as the bench runs it (`verify`: the copy, the fingerprint before and after, the verifier) and the
verifier alone on a folder it may change (`verify_here`), and prints, per suite, the median over its tasks of
the medians over `--repeats` calls: the files and KiB copied, the isolation's cost (the difference) and the
verifier's own time. A file verifier only reads, gets no copy, and costs nothing extra.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.bench.suite import Task, load_suite
from skillc.bench.verify import FileVerifier, verify, verify_here

ROOT = Path(__file__).resolve().parent.parent
SUITES = sorted((ROOT / "examples").glob("*/bench/suite.toml")) + sorted((ROOT / "examples" / "evolve").glob(
    "*/suite.toml"))


def _cell(task: Task, root: Path, trace_kb: int) -> tuple[Path, Path]:
    """A cell's work folder (the fixture, and an answer) and a trace of `trace_kb` KiB."""
    work = root / "work"
    if task.workdir is not None:
        shutil.copytree(task.workdir, work)
    else:
        work.mkdir()
    (work / "answer.txt").write_text('{"answer": 42}', encoding="utf-8")
    trace = root / "trace.jsonl"
    line = '{"kind": "step", "state": "apply_event", "note": "' + "x" * 200 + '"}\n'
    trace.write_text(line * (trace_kb * 1024 // len(line) + 1), encoding="utf-8")
    return work, trace


def _median_ms(fn, repeats: int) -> float:
    """The median of `repeats` timings of fn(), in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _task_figures(task: Task, repeats: int, trace_kb: int) -> tuple[int, float, float, float]:
    """(files, KiB, isolation ms, verifier ms) of one task's cell."""
    with tempfile.TemporaryDirectory() as tmp:
        work, trace = _cell(task, Path(tmp), trace_kb)
        files = [p for p in work.rglob("*") if p.is_file()]
        kib = (sum(p.stat().st_size for p in files) + trace.stat().st_size) / 1024
        assert task.verifier is not None
        verifier = task.verifier
        with tempfile.TemporaryDirectory() as scratch:  # verify_here may change what it is given: a copy of it
            mine = Path(scratch) / "work"
            shutil.copytree(work, mine)
            alone = _median_ms(lambda: verify_here(verifier, workdir=mine, outputs={}, trace=trace), repeats)
        full = _median_ms(lambda: verify(verifier, workdir=work, outputs={}, trace=trace), repeats)
    return len(files), kib, max(0.0, full - alone), alone


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--trace-kb", type=int, default=100)
    args = parser.parse_args()
    print(f"{'suite':<34} {'tasks':>5} {'verifier':>8} {'files':>5} {'KiB':>7} {'copy ms':>8} {'verifier ms':>11}")
    for path in SUITES:
        loaded = load_suite(path)
        assert loaded.suite is not None, path
        tasks = loaded.suite.tasks
        name = str(path.relative_to(ROOT / "examples").parent)
        kind = type(tasks[0].verifier).__name__.removesuffix("Verifier").lower()
        if all(isinstance(t.verifier, FileVerifier) for t in tasks):
            print(f"{name:<34} {len(tasks):>5} {kind:>8} {'-':>5} {'-':>7} {'0 (no copy)':>8}")
            continue
        figures = [_task_figures(t, args.repeats, args.trace_kb) for t in tasks]
        files, kib, copy, alone = (statistics.median(column) for column in zip(*figures))
        print(f"{name:<34} {len(tasks):>5} {kind:>8} {files:>5.0f} {kib:>7.1f} {copy:>8.2f} {alone:>11.2f}")


if __name__ == "__main__":
    main()
