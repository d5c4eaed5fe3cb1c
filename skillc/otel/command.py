"""`--otel ENDPOINT` of `skillc run` and `skillc bench`, and `skillc.api.export_otel`: a finished run (or every cell of
a bench) sent as OpenTelemetry spans. A collector that refuses or cannot be reached is a warning (SKM880), never an
exception, and never changes the run's result or exit status.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics import internal_error
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, make
from skillc.otel import codes as otel_codes
from skillc.otel.send import endpoint_problem, send
from skillc.runtime.command import RunConfig, RunReport, Usage, run
from skillc.runtime.record import RunTrace, read_run

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from skillc.bench.command import BenchResult


@attrs.define
class OtelResult(HasDiagnostics):
    """`export_otel`: the spans made, whether the collector (or exporter) took them, and the warnings."""

    spans: int
    sent: bool
    diagnostics: list[Diagnostic]


def export_otel(trace: RunTrace | str | os.PathLike[str], endpoint: str | None = None, *,
                exporter: SpanExporter | None = None, timeout_s: float = 5.0) -> OtelResult:
    """Send a finished run (a `RunTrace`, or a trace file) as OpenTelemetry spans: `invoke_agent {machine}` with one
    `chat {model}` / `execute_tool {tool}` span per step, by OTLP/HTTP to `endpoint` (or to an SDK `exporter`).
    A collector that refuses or cannot be reached is the warning SKM880, never an exception."""
    problem = endpoint_problem(endpoint) if endpoint is not None else None
    if problem is not None:
        return OtelResult(0, False, [make(diagnostics_codes.IO_ERROR, problem)])
    if isinstance(trace, RunTrace):
        run_trace: RunTrace | None = trace
    else:
        run_trace, problems = read_run(os.fspath(trace))
        if run_trace is None:
            why = "; ".join(d.message for d in problems[:1]) or "it holds no run"
            return OtelResult(0, False, [make(otel_codes.TRACE_NOT_READ_FOR_SPANS,
                                              f"no spans were sent: the trace {trace} "
                                              f"cannot be read ({why})")])
    try:
        assert run_trace is not None
        sent = send(run_trace, endpoint, exporter=exporter, timeout_s=timeout_s)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return OtelResult(0, False, [internal_error(exc, "sending the run's spans")])
    return OtelResult(sent.spans, sent.exported, list(sent.diagnostics))


def run_with_otel(config: RunConfig, endpoint: str, *, timeout_s: float = 5.0) -> RunReport:
    """`skillc run --otel ENDPOINT`: `run`, then its spans sent once the run has ended (built from its trace; a run
    without `--trace` writes one to a temporary folder for the purpose). A failure to send is a warning in the
    report's diagnostics: the run's result, its trace and its exit status do not change."""
    problem = endpoint_problem(endpoint)
    if problem is not None:
        return RunReport(None, usage=Usage(problem, "--otel"))
    with tempfile.TemporaryDirectory(prefix="skillc-otel-") as scratch:
        own = config.trace is None and config.resume is None
        report = run(attrs.evolve(config, trace=str(Path(scratch) / "run.jsonl")) if own else config)
        if report.result is not None and report.result.trace:
            report.diagnostics.extend(export_otel(report.result.trace, endpoint, timeout_s=timeout_s).diagnostics)
            if own:
                report.result = attrs.evolve(report.result, trace=None)
    return report


def bench_otel(result: BenchResult, endpoint: str, *, timeout_s: float = 5.0) -> list[Diagnostic]:
    """Send every cell of a finished bench (each row's trace) as OpenTelemetry spans, one `invoke_agent` trace per
    cell, to `endpoint` (OTLP/HTTP). A collector that refuses is one warning (SKM880) per cell, never an exception;
    the bench's rows, report and exit status do not change."""
    outcome = result.outcome
    if outcome is None or outcome.out is None:
        return []
    found: list[Diagnostic] = []
    for row in outcome.rows:
        if row.trace is None:
            continue
        path = Path(row.trace) if os.path.isabs(row.trace) else outcome.out / row.trace
        sent = export_otel(path, endpoint, timeout_s=timeout_s).diagnostics
        found.extend(sent)
        if any(d.severity.name == "ERROR" for d in sent):
            break  # a bad endpoint: said once
    return found
