"""The per-cell cost of `skillc bench`'s harness (issue 18's goals: ≤ 5 ms a cell; 1,000 cells in ≤ 10 s, 2 workers).

    python bench/bench_harness.py [--cells 1000] [--workers 2]

Measures, per cell: appending a results row (one write + fsync; and rows appended
eight to a commit, as a runner can when several cells end together), reading the
results back and computing the pending cells, judging five RFC requirements
against a workdir and a tool-call list, and each verifier kind (file, Python,
shell). The shell verifier starts a process, so it is shown apart: a suite that
uses one pays it on top of the harness.

Then the runner end to end (`skillc.bench.runner`) on a one-step machine with a
scripted executor, so the run itself costs almost nothing: the time per cell in
one in-process worker split into the run and the harness around it (fresh
workdir, tools, reading and scoring the trace, the row), the whole bench per cell
(suite, check, report included), and `--cells` cells through a process pool of
`--workers` workers (pool start-up included).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.bench.effects import (
    CallPattern,
    FileRequirement,
    NoFileRequirement,
    NoToolRequirement,
    OrderRequirement,
    ToolCall,
    ToolRequirement,
    check_requirements,
)
from skillc.bench.results import Row, matrix, open_writer, read_results
from skillc.bench.verify import FileVerifier, PythonVerifier, ShellVerifier, verify
from skillc.diagnostics import Diagnostic

REQUIREMENTS = (
    FileRequirement("answer", "answer.txt", r"^[A-E]\n?$"),
    NoFileRequirement("no-temp", "*.tmp"),
    ToolRequirement("readback", CallPattern("bash", r"cat\s+answer\.txt", "command")),
    NoToolRequirement("no-delete", CallPattern("bash", r"rm\s+-rf")),
    OrderRequirement("write-then-read", CallPattern("bash", ">"), CallPattern("bash", "cat")),
)
CALLS = [ToolCall("bash", {"command": "printf B > answer.txt"}), ToolCall("bash", {"command": "cat answer.txt"})]


def per_cell(n: int, fn) -> float:
    """Milliseconds per call of fn(i) over n calls."""
    start = time.perf_counter()
    for i in range(n):
        fn(i)
    return (time.perf_counter() - start) * 1000 / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cells", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2, help="workers of the process-pool figure")
    args = parser.parse_args()
    n = args.cells
    cells = matrix([f"t{i}" for i in range(n // 2)], ["machine", "native"], ["scripted"], 1)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "answer.txt").write_text("B\n")
        (folder / "verifiers.py").write_text("def check(workdir, outputs, trace):\n    return True\n")
        writer = open_writer(folder / "results.jsonl")
        assert not isinstance(writer, Diagnostic)
        rows = [("append a row (write + fsync)", per_cell(len(cells), lambda i: writer.append(
            Row(cells[i], True, True, steps=5, prompt_tokens=900, completion_tokens=40, outcome="success"))))]
        batch = matrix([f"b{i}" for i in range(n // 2)], ["machine", "native"], ["scripted"], 1)
        rows.append(("append_all, 8 rows a commit (one fsync)", per_cell(len(batch) // 8, lambda i: writer.append_all(
            [Row(c, True, True, outcome="success") for c in batch[8 * i: 8 * i + 8]])) / 8))
        writer.close()
        cells += batch[: 8 * (len(batch) // 8)]
        start = time.perf_counter()
        results = read_results(folder / "results.jsonl")
        assert results.pending(cells) == [] and len(results.rows) == len(cells)
        rows.append((f"read {len(cells)} rows + pending", (time.perf_counter() - start) * 1000 / len(cells)))
        rows.append(("judge 5 requirements", per_cell(n, lambda i: check_requirements(
            REQUIREMENTS, workdir=folder, calls=CALLS, outcome="success"))))
        trace = folder / "trace.jsonl"
        trace.write_text('{"kind": "header"}\n')
        work = folder / "work"  # a cell's work folder: python and shell verifiers get a scratch copy of it
        work.mkdir()
        (work / "answer.txt").write_text("B\n")
        rows.append(("file verifier", per_cell(n, lambda i: verify(
            FileVerifier("answer.txt", matches="^B"), workdir=work, outputs={}, trace=trace))))
        rows.append(("python verifier (imported each cell, copy)", per_cell(min(n, 300), lambda i: verify(
            PythonVerifier("verifiers:check", folder), workdir=work, outputs={}, trace=trace))))
        harness = sum(ms for name, ms in rows if not name.startswith("append_all"))
        rows.append(("shell verifier `true` (a process; not harness)", per_cell(min(n, 100), lambda i: verify(
            ShellVerifier("true"), workdir=work, outputs={}, trace=trace))))
    print(f"{'per cell':<48} {'ms':>8}")
    for name, ms in rows:
        print(f"{name:<48} {ms:>8.3f}")
    print(f"{'harness total (row by row, no shell verifier)':<48} {harness:>8.3f}")
    runner_figures(n, args.workers)


# ---------------------------------------------------------------- the runner, end to end

MACHINE = """machine tiny {
  doc "One model step and a terminal: the cheapest run, so what is measured is the harness around it."
  input question: str
  var answer: str
  start solve
  model solve {
    reads question
    writes answer
    prompt "Answer the question."
    -> done
  }
  terminal done: success {
    requires answer
  }
  fallback {
  }
}
"""
SCRIPT = '{"outputs": {"solve": [{"answer": "42"}], "native": [{"action": "finish", "outcome": "success"}]}}'
SUITE = """[suite]
name = "harness"
machine = "tiny.skm"
skill = "SKILL.md"
tasks = "tasks.jsonl"

[verify]
file = "answer.txt"
equals = "42"

[[require]]
kind = "file"
path = "answer.txt"

[[require]]
kind = "no-file"
path = "*.tmp"
"""


def write_suite(folder: Path, tasks: int) -> Path:
    """A suite of `tasks` tasks over a one-step machine, with its scripted executor's file."""
    (folder / "tiny.skm").write_text(MACHINE, encoding="utf-8")
    (folder / "SKILL.md").write_text("# tiny\n\nAnswer the question.\n", encoding="utf-8")
    (folder / "script.json").write_text(SCRIPT, encoding="utf-8")
    (folder / "tasks.jsonl").write_text("".join(f'{{"id": "t{i}", "inputs": {{"question": "q{i}"}}}}\n'
                                                for i in range(tasks)), encoding="utf-8")
    (folder / "suite.toml").write_text(SUITE, encoding="utf-8")
    return folder / "suite.toml"


def runner_figures(cells: int, workers: int) -> None:
    """Harness time per cell of `run_cell` with a scripted executor, and `cells` cells through `workers` workers."""
    from skillc.bench.backends import LocalBackend
    from skillc.bench.report import build_report
    from skillc.bench.runner import BenchConfig, run_bench

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suite = write_suite(folder, cells // 2)
        spec = f"scripted:{folder / 'script.json'}"
        config = BenchConfig(str(suite), modes=("machine", "native"), executors=(spec,), output=str(folder / "one"))
        timings: list[float] = []
        started = time.perf_counter()
        one = run_bench(config, progress=_timer(timings))
        wall = time.perf_counter() - started
        assert one.ran == cells and not one.diagnostics, one.diagnostics
        cell_ms = sum(timings) * 1000 / cells
        run_ms = sum(r.latency_s for r in one.rows) * 1000 / cells
        started = time.perf_counter()
        report_s = (build_report(one.rows), time.perf_counter() - started)[1]
        print()
        print(f"{'runner, scripted executor, 1 worker (in-process)':<56} {'ms/cell':>8}")
        print(f"{'cell end to end (run_cell + row appended)':<56} {cell_ms:>8.3f}")
        print(f"{'  the run itself (interpreter or baseline + executor)':<56} {run_ms:>8.3f}")
        print(f"{'  harness (workdir, tools, trace read, scoring, row)':<56} {cell_ms - run_ms:>8.3f}")
        print(f"{'whole bench, 1 worker (suite, check, cells, report)':<56} {wall * 1000 / cells:>8.3f}")
        print(f"{'  of which build_report (10,000 bootstrap resamples)':<56} {report_s * 1000 / cells:>8.3f}")
        backend = LocalBackend(workers)
        ticks: list[float] = []
        started = time.perf_counter()
        many = run_bench(attrs.evolve(config, output=str(folder / "many"), workers=workers), backend=backend,
                         progress=_timer(ticks))
        pooled = time.perf_counter() - started
        backend.close()
        assert many.ran == cells and not many.diagnostics, many.diagnostics
        print()
        print(f"{cells} cells, {workers} workers (process pool): {pooled:.2f} s in all "
              f"({pooled * 1000 / cells:.3f} ms a cell; goal: 1,000 cells in 10 s), of which the cells "
              f"(pool start-up to the last row) {sum(ticks):.2f} s and the report {pooled - sum(ticks):.2f} s "
              f"with the suite and the check")


def _timer(timings: list[float]):
    """A progress callback that records the time between rows (each: one cell run and its row appended)."""
    import contextlib

    @contextlib.contextmanager
    def progress(total: int, done: int):
        last = [time.perf_counter()]  # from here: the jobs are about to be sent

        def tick(row: object) -> None:
            now = time.perf_counter()
            timings.append(now - last[0])
            last[0] = now

        yield tick

    return progress


if __name__ == "__main__":
    main()
