"""The per-cell cost of `skillc bench`'s harness parts that exist today (issue 18's goal: ≤ 5 ms a cell).

    python bench/bench_harness.py [--cells 1000]

Measures, per cell: appending a results row (one write + fsync; and rows appended
eight to a commit, as a runner can when several cells end together), reading the
results back and computing the pending cells, judging five RFC requirements
against a workdir and a tool-call list, and each verifier kind (file, Python,
shell). The shell verifier starts a process, so it is shown apart: a suite that
uses one pays it on top of the harness.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.bench.effects import (  # noqa: E402
    CallPattern,
    FileRequirement,
    NoFileRequirement,
    NoToolRequirement,
    OrderRequirement,
    ToolCall,
    ToolRequirement,
    check_requirements,
)
from skillc.bench.results import Row, matrix, open_writer, read_results  # noqa: E402
from skillc.bench.verify import FileVerifier, PythonVerifier, ShellVerifier, verify  # noqa: E402
from skillc.diagnostics import Diagnostic  # noqa: E402

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
    n = parser.parse_args().cells
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
        rows.append(("file verifier", per_cell(n, lambda i: verify(
            FileVerifier("answer.txt", matches="^B"), workdir=folder, outputs={}, trace=trace))))
        rows.append(("python verifier (imported each cell)", per_cell(min(n, 300), lambda i: verify(
            PythonVerifier("verifiers:check", folder), workdir=folder, outputs={}, trace=trace))))
        harness = sum(ms for name, ms in rows if not name.startswith("append_all"))
        rows.append(("shell verifier `true` (a process; not harness)", per_cell(min(n, 100), lambda i: verify(
            ShellVerifier("true"), workdir=folder, outputs={}, trace=trace))))
    print(f"{'per cell':<48} {'ms':>8}")
    for name, ms in rows:
        print(f"{name:<48} {ms:>8.3f}")
    print(f"{'harness total (row by row, no shell verifier)':<48} {harness:>8.3f}")


if __name__ == "__main__":
    main()
