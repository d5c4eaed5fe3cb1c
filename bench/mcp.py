"""MCP call overhead: one machine run through `skillc serve --mcp` against the same run made directly.

The machine is `tests/mcp/fixtures/answer.skm` (a model state answered by a scripted executor, then a real `bash`
step that writes answer.txt, then a terminal whose predicate reads it), so every row runs the same two steps.
Rows, each `--calls` times (median and p90 wall ms per run, after `--warmup` unmeasured ones):

- `interpreter`: the runtime alone, in process, the machine checked once (what a served call runs).
- `api.run`: `skillc.api.run` in process: the machine loaded and checked (Z3) again for every run.
- `skillc run`: the command in a new process (Python start-up, imports, check, run).
- `mcp stdio (2025-11-25)` / `mcp stdio (2026-07-28)` / `mcp http (2025-11-25)`: `tools/call` from the SDK's client
  to one long-lived `skillc serve --mcp` (the run in a fresh work folder, its file hashed, the structured result).

Overhead per call = an MCP row's median minus `interpreter`'s. The server's start (imports and the check, about as
long as `skillc run`) is paid once per server and shown apart.

Run: python bench/mcp.py [--calls 50] [--warmup 3]
"""

from __future__ import annotations

import argparse
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# Run as a script, this file's folder comes first on the path and its name would hide the `mcp` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

from skillc import api  # noqa: E402

MACHINE = ROOT / "tests" / "mcp" / "fixtures" / "answer.skm"
SCRIPT = f"scripted:{ROOT / 'tests' / 'mcp' / 'fixtures' / 'answer.json'}"
ARGS = {"question": "2+2?"}


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def timed(fn: Callable[[], Any], calls: int, warmup: int) -> list[float]:
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(calls):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def interpreter_rows(calls: int, warmup: int, scratch: Path) -> list[float]:
    from skillc.runtime import Interpreter, Journal, RunOptions, make_executor
    from skillc.runtime.session import run_tools

    checked = api.load_checked(str(MACHINE))
    assert checked.machine is not None
    journal = Journal(scratch / "direct.sqlite")
    n = [0]

    def once() -> None:
        n[0] += 1
        work = scratch / f"direct-{n[0]}"
        work.mkdir()
        tools = run_tools(checked.machine, "machine", workdir=work)
        options = RunOptions(trace=work.with_suffix(".jsonl"), journal=journal, executor_spec=SCRIPT,
                             workdir=str(work))
        result = Interpreter(checked.machine, make_executor(SCRIPT), tools, options, checked.text).run(dict(ARGS))
        assert result.outcome == "success", result

    return timed(once, calls, warmup)


def api_rows(calls: int, warmup: int, scratch: Path) -> list[float]:
    n = [0]

    def once() -> None:
        n[0] += 1
        work = scratch / f"api-{n[0]}"
        work.mkdir()
        report = api.run(api.RunConfig(machine=str(MACHINE), executor=SCRIPT, inputs=("question=2+2?",),
                                       workdir=str(work), trace=str(work.with_suffix(".jsonl")),
                                       journal=str(scratch / "api.sqlite")))
        assert report.result is not None and report.result.outcome == "success", report

    return timed(once, calls, warmup)


def cli_rows(calls: int, warmup: int, scratch: Path) -> list[float]:
    n = [0]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def once() -> None:
        n[0] += 1
        work = scratch / f"cli-{n[0]}"
        work.mkdir()
        r = subprocess.run([sys.executable, "-m", "skillc", "run", str(MACHINE), "--executor", SCRIPT, "--input",
                            "question=2+2?", "--workdir", str(work), "--journal", str(scratch / "cli.sqlite")],
                           capture_output=True, text=True, env=env, cwd=scratch)
        assert r.returncode == 0, r.stderr

    return timed(once, calls, warmup)


def mcp_rows(calls: int, warmup: int, scratch: Path, mode: str) -> tuple[list[float], float]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "skillc", "serve", "--mcp", str(MACHINE), "--executor", SCRIPT,
                                         "--workdir", str(scratch / f"serve-{mode}")],
                                   env={"PYTHONPATH": str(ROOT), "PATH": os.environ.get("PATH", "")}, cwd=str(ROOT))

    async def main() -> tuple[list[float], float]:
        started = time.perf_counter()
        async with Client(params, mode=mode) as client:
            await client.list_tools()
            start_ms = (time.perf_counter() - started) * 1000
            for _ in range(warmup):
                await client.call_tool("answer_file", ARGS)
            out = []
            for _ in range(calls):
                t = time.perf_counter()
                result = await client.call_tool("answer_file", ARGS)
                out.append((time.perf_counter() - t) * 1000)
                assert not result.is_error and result.structured_content["outcome"] == "success", result
            return out, start_ms

    return anyio.run(main)


def http_rows(calls: int, warmup: int, scratch: Path) -> tuple[list[float], float]:
    import anyio
    from mcp import Client

    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "skillc", "serve", "--mcp", str(MACHINE), "--executor", SCRIPT,
                             "--workdir", str(scratch / "serve-http"), "--http", "--port", "0"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT))
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    stream = proc.stderr
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    url = ""
    while not url:
        line = lines.get(timeout=120)
        if " at http://" in line:
            url = line.split(" at ", 1)[1].split()[0]

    async def main() -> tuple[list[float], float]:
        async with Client(url, mode="legacy") as client:
            await client.list_tools()
            start_ms = (time.perf_counter() - started) * 1000
            for _ in range(warmup):
                await client.call_tool("answer_file", ARGS)
            out = []
            for _ in range(calls):
                t = time.perf_counter()
                result = await client.call_tool("answer_file", ARGS)
                out.append((time.perf_counter() - t) * 1000)
                assert not result.is_error, result
            return out, start_ms

    try:
        return anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--cli-calls", type=int, default=10, help="runs of `skillc run` (each a new process)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillc-bench-mcp-") as tmp:
        scratch = Path(tmp)
        rows: list[tuple[str, list[float], float | None]] = []
        base = interpreter_rows(opts.calls, opts.warmup, scratch)
        rows.append(("interpreter (in process, checked once)", base, None))
        rows.append(("api.run (in process, check per run)", api_rows(opts.calls, opts.warmup, scratch), None))
        rows.append(("skillc run (new process per run)", cli_rows(opts.cli_calls, 1, scratch), None))
        for mode, label in (("legacy", "mcp stdio (2025-11-25)"), ("auto", "mcp stdio (2026-07-28)")):
            samples, start_ms = mcp_rows(opts.calls, opts.warmup, scratch, mode)
            rows.append((label, samples, start_ms))
        samples, start_ms = http_rows(opts.calls, opts.warmup, scratch)
        rows.append(("mcp http (2025-11-25)", samples, start_ms))
    base_median = stats(base)[0]
    load = os.getloadavg()[0]
    print(f"answer_file (2 steps: scripted model, real bash), {opts.calls} calls each "
          f"(skillc run: {opts.cli_calls}); load {load:.1f}, {os.cpu_count()} cores")
    print(f"| {'path':<40} | {'median ms':>9} | {'p90 ms':>8} | {'overhead ms':>11} | {'server start ms':>15} |")
    print(f"|{'-' * 42}|{'-' * 10}:|{'-' * 9}:|{'-' * 12}:|{'-' * 16}:|")
    for label, samples, start in rows:
        median, p90 = stats(samples)
        overhead = f"{median - base_median:+.1f}" if label != rows[0][0] else "—"
        print(f"| {label:<40} | {median:>9.1f} | {p90:>8.1f} | {overhead:>11} | "
              f"{'' if start is None else f'{start:.0f}':>15} |")


if __name__ == "__main__":
    main()
