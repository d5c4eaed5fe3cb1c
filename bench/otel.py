"""OpenTelemetry export of runs: spans per second, from a trace to the SDK and to a real OTLP/HTTP receiver.

A synthetic machine-mode trace of `--steps` steps (two model steps for each tool step, tokens and latencies on
every step) is turned into spans as `skillc run --otel` does (`skillc.api.export_otel`): the plan, the SDK's spans,
one export. Three sinks: the plan alone (no SDK), the SDK's `InMemorySpanExporter`, and OTLP/HTTP to a receiver on
127.0.0.1 (a `http.server` thread that reads each request and answers 200; it does not decode the protobuf).
Each row is the median of `--repeat` exports of the same trace.

Run: python bench/otel.py [--steps 10 100 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc import api
from skillc.otel.spans import plan
from skillc.runtime.record import Footer, RunHeader, RunTrace, Step, ToolCall


def synthetic_trace(steps: int) -> RunTrace:
    """A finished machine-mode run: every third step a tool call, the others model answers."""
    records = []
    for i in range(steps):
        if i % 3 == 2:
            records.append(Step(index=i, state=f"s{i}", kind="tool", operation="execute_tool", tool_name="bash",
                                tool_call=ToolCall("bash", {"command": f"step {i}"}), latency_ms=12.5, edge=0,
                                target=f"s{i + 1}", tool_result={"stdout": "", "exit_code": 0}))
        else:
            records.append(Step(index=i, state=f"s{i}", kind="model", operation="chat", model="gpt-4o-mini",
                                input_tokens=300, output_tokens=40, retries=0, latency_ms=850.0, edge=0,
                                target=f"s{i + 1}"))
    header = RunHeader(machine="bench", machine_hash="0123456789abcdef", run_id="r1", executor="openai:gpt-4o-mini",
                       started="2026-12-04T10:00:00Z")
    footer = Footer(terminal="done", outcome="success", evidence={}, steps=steps, input_tokens=300 * steps,
                    output_tokens=40 * steps, latency_ms=sum(s.latency_ms or 0 for s in records))
    return RunTrace(header, tuple(records), footer)


class _Sink(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


def _median(fn: Any, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    print("| steps | spans | plan only (spans/s) | SDK, in memory (spans/s) | OTLP/HTTP to 127.0.0.1 (spans/s) |")
    print("|---|---|---|---|---|")
    try:
        for steps in args.steps:
            run = synthetic_trace(steps)
            spans = plan(run).count()

            def memory() -> None:
                assert api.export_otel(run, exporter=InMemorySpanExporter()).sent  # noqa: B023 - called in this iteration

            def otlp() -> None:
                result = api.export_otel(run, url, timeout_s=30.0)  # noqa: B023 - called in this iteration
                assert result.sent, result.diagnostics

            rates = [spans / _median(lambda: plan(run), args.repeat),  # noqa: B023 - called in this iteration
                     spans / _median(memory, args.repeat),
                     spans / _median(otlp, args.repeat)]
            print(f"| {steps:,} | {spans:,} | " + " | ".join(f"{r:,.0f}" for r in rates) + " |")
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


if __name__ == "__main__":
    main()
