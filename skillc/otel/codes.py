"""Diagnostic codes of the OpenTelemetry export (SKM880–SKM889), listed in `skillc.registry`.

Telemetry never changes a run: a collector that refuses the spans, cannot be reached, or an environment without
the `otel` extra is a warning, and the run, its trace and its exit status stay as they were. The examples are
command lines; `tests/otel/` produces each code from real input (a receiver on 127.0.0.1 that answers 500, a
port nobody listens on, the SDK hidden from the import system).
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, W

_GOOD: Final = ("skillc run m.skm --executor scripted:a.json --otel http://127.0.0.1:4318   "
                "# a collector listening there (OTLP/HTTP)")

SPANS_NOT_SENT: Final = Code(
    "SKM880", "spans-not-sent", W, "the run's spans could not be sent to the OpenTelemetry collector",
    "With `--otel ENDPOINT` (or `skillc.api.export_otel`) the run's trace is turned into spans when the run ends "
    "and sent once, by OTLP over HTTP, waiting at most the export timeout. A collector that answers with an "
    "error status, refuses the connection or does not answer in time gets nothing more: the spans are dropped "
    "with this warning, naming the endpoint and the reason, and the run, its trace and its exit status are left "
    "as they were.",
    "skillc run m.skm --executor scripted:a.json --otel http://127.0.0.1:9   # nobody listens on port 9", _GOOD,
    "check that the collector listens on the endpoint (OTLP/HTTP, usually port 4318, path /v1/traces)",
    runnable=False, lang="text")
TELEMETRY_UNAVAILABLE: Final = Code(
    "SKM881", "telemetry-unavailable", W, "the OpenTelemetry packages are not installed, so no spans were sent",
    "Sending spans needs `opentelemetry-sdk` and `opentelemetry-exporter-otlp-proto-http` (the `otel` extra: "
    "`pip install 'skillc[otel]'`). Without them `--otel` sends nothing and says so; the run itself is not "
    "affected.",
    "skillc run m.skm --executor scripted:a.json --otel http://127.0.0.1:4318   # without the otel extra", _GOOD,
    "pip install 'skillc[otel]'", runnable=False, lang="text")
TRACE_NOT_READ_FOR_SPANS: Final = Code(
    "SKM882", "trace-not-read-for-spans", W, "the run's trace could not be read back, so no spans were sent",
    "Spans are built from the trace the run wrote (its header's start time, each step's state, kind, model, "
    "tokens, tool and latency, the footer's outcome). A trace that cannot be read back (removed or damaged "
    "while the run ended, or a run that wrote none) gives no spans; the run's result stands.",
    "skillc run m.skm --executor scripted:a.json --trace /dev/full --otel http://127.0.0.1:4318", _GOOD,
    "keep the trace file readable until the run has ended", runnable=False, lang="text")

ALL: Final[tuple[Code, ...]] = (SPANS_NOT_SENT, TELEMETRY_UNAVAILABLE, TRACE_NOT_READ_FOR_SPANS)
