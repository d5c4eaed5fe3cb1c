"""Sending a run's spans: the OpenTelemetry SDK builds them from the plan, one OTLP/HTTP request carries them.

`send(run, endpoint)` plans the spans (`spans.plan`), creates them with a private `TracerProvider` (the
application's global one is not touched), and exports them in one batch to `ENDPOINT/v1/traces` with the OTLP/HTTP
exporter, waiting at most `timeout_s`. Any exporter of the SDK can be given instead (tests pass the SDK's
`InMemorySpanExporter`). A failure to send — an error status, a refused connection, a timeout — is the warning
SKM880 with the reason the exporter logged; the SDK's own log lines are kept off the terminal. Without the `otel`
extra the warning is SKM881. Nothing here raises on a collector's behaviour.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit, urlunsplit

import attrs

from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.otel import codes
from skillc.otel.spans import PlannedSpan, plan
from skillc.runtime.jsonvalue import Object
from skillc.runtime.record import RunTrace
from skillc.version import __version__

if TYPE_CHECKING:  # the SDK (an extra) is imported only when spans are sent
    from opentelemetry.context import Context
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Tracer

#: The OTLP/HTTP path of traces, added to an endpoint given without a path.
TRACES_PATH: Final = "/v1/traces"
#: The instrumentation scope of skillc's spans.
SCOPE: Final = "skillc"


@attrs.frozen
class Sent:
    """What an export did: the spans made, whether the exporter took them, and the warnings."""

    spans: int
    exported: bool
    diagnostics: tuple[Diagnostic, ...] = ()


def traces_url(endpoint: str) -> str:
    """The collector's traces URL: `http://host:4318` becomes `http://host:4318/v1/traces`; a path is kept."""
    parts = urlsplit(endpoint)
    if parts.path in ("", "/"):
        parts = parts._replace(path=TRACES_PATH)
    return urlunsplit(parts)


def endpoint_problem(endpoint: str) -> str | None:
    """Why `endpoint` is not an OTLP/HTTP URL (None: it is one)."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"{endpoint!r} is not an http:// or https:// URL of an OTLP collector (e.g. http://127.0.0.1:4318)"
    return None


class _Captured(logging.Handler):
    """The SDK's log records while it exports (its reasons for a failure), kept instead of printed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.messages.append(record.getMessage())


@contextmanager
def _quiet_sdk() -> Iterator[_Captured]:
    """Capture the `opentelemetry` loggers' records for the duration."""
    logger = logging.getLogger("opentelemetry")
    handler = _Captured()
    old = logger.propagate, logger.level
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.DEBUG if old[1] == logging.NOTSET else old[1])
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.propagate, level = old
        logger.setLevel(level)


def _reason(messages: list[str]) -> str:
    """The SDK's account of a failed export, short: its first and last distinct messages."""
    found = list(dict.fromkeys(m.strip() for m in messages if m.strip()))
    if not found:
        return "the exporter reported a failure"
    text = found[0] if len(found) == 1 else f"{found[0]} … {found[-1]}"
    return text if len(text) <= 400 else text[:399] + "…"


def _emit(tracer: Tracer, span: PlannedSpan, parent: Context | None) -> None:
    """Create `span` (and its children) with the SDK, under `parent` (a context, None for the root)."""
    from opentelemetry import trace  # the SDK (an extra): imported only when spans are sent
    from opentelemetry.trace import SpanKind, Status, StatusCode

    kind = SpanKind.CLIENT if span.kind == "client" else SpanKind.INTERNAL
    made = tracer.start_span(span.name, context=parent, kind=kind, attributes=dict(span.attributes),
                             start_time=span.start_ns)
    for event in span.events:
        made.add_event(event.name, dict(event.attributes), timestamp=event.time_ns)
    if span.error is not None:
        made.set_status(Status(StatusCode.ERROR, span.error))
    context = trace.set_span_in_context(made)
    for child in span.children:
        _emit(tracer, child, context)
    made.end(end_time=span.end_ns)


_BASE: Final = {"service.name": "skillc"}


@functools.cache
def _resource() -> Resource:
    """The resource of skillc's spans (made once: the SDK's detectors run in threads and take milliseconds)."""
    from opentelemetry.sdk.resources import Resource  # the SDK (an extra): imported only when spans are sent

    return Resource.create(dict(_BASE))


def build_spans(root: PlannedSpan, resource: Object | None = None) -> list[ReadableSpan]:
    """The planned spans as the SDK's finished `ReadableSpan`s, in the order they ended (children first)."""
    from opentelemetry.sdk.resources import Resource  # the SDK (an extra): imported only when spans are sent
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


    collected = InMemorySpanExporter()
    provider = TracerProvider(resource=_resource() if not resource else Resource.create({**_BASE, **resource}))
    provider.add_span_processor(SimpleSpanProcessor(collected))
    tracer = provider.get_tracer(SCOPE, __version__)
    _emit(tracer, root, None)
    provider.shutdown()
    return list(collected.get_finished_spans())


def send(run: RunTrace, endpoint: str | None = None, *, exporter: SpanExporter | None = None,
         timeout_s: float = 5.0) -> Sent:
    """Plan the run's spans and export them in one batch (to `endpoint` by OTLP/HTTP, or to `exporter`)."""
    root = plan(run)
    try:
        spans = build_spans(root)
        if exporter is None:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # the extra's

            exporter = OTLPSpanExporter(endpoint=traces_url(endpoint or "http://127.0.0.1:4318"), timeout=timeout_s)
    except ImportError as exc:
        return Sent(root.count(), False, (make(codes.TELEMETRY_UNAVAILABLE, f"no spans were sent: {exc.name or exc} "
                                               "is not installed"),))
    from opentelemetry.sdk.trace.export import SpanExportResult  # the SDK (an extra), found installed above

    where = traces_url(endpoint) if endpoint else type(exporter).__name__
    with _quiet_sdk() as log:
        try:
            result = exporter.export(spans)
        except Exception as exc:  # noqa: BLE001 - a collector's failure is a warning, whatever the exporter raises
            result, reason = SpanExportResult.FAILURE, f"{type(exc).__name__}: {exc}"
        else:
            reason = _reason(log.messages)
        finally:
            try:
                exporter.shutdown()
            except Exception:  # noqa: BLE001 - shutting down a broken exporter must not hide the result
                pass
    if result is not SpanExportResult.SUCCESS:
        return Sent(len(spans), False, (make(codes.SPANS_NOT_SENT, f"the {len(spans)} spans of the run were not sent "
                                             f"to {where}: {reason}"),))
    return Sent(len(spans), True)
