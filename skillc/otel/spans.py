"""A run's trace as OpenTelemetry spans (planned as plain records; `send.py` hands them to the SDK).

One span per run, `invoke_agent {machine}`, and under it one span per step: `chat {model}` for a model or judge
state (and for a baseline's turn), `execute_tool {tool}` for a tool state; a baseline turn that called a tool
gets an `execute_tool` span inside its `chat` span. Attributes follow the OpenTelemetry GenAI semantic
conventions (`gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`,
`gen_ai.usage.output_tokens`, `gen_ai.tool.name`, `gen_ai.agent.name`) and skillc's own (`skillc.machine.hash`,
`skillc.state.name`, `skillc.state.kind`, `skillc.edge`, `skillc.outcome`, …).

**Times.** A trace records when the run started (the header's `started`, UTC, to the second) and how long each
step's operation took (`skillc.latency_ms`), not when each step began. Step `i` is placed at the run's start plus
the latencies of the steps before it, and ends its latency later; the run ends when its last step does. The
steps are therefore back to back, and the time the runtime spent between operations (guards, the journal, the
trace) is not shown. A resumed run starts a new segment at its resumption header's `started`. A trace without
`started` (none of skillc's) is placed to end at `now`.
"""

from __future__ import annotations

import calendar
import time
from collections.abc import Mapping
from typing import Final, Literal

import attrs

from skillc.runtime.jsonvalue import Object
from skillc.runtime.record import RunHeader, RunTrace, Step

SpanKind = Literal["internal", "client"]
AttributeValue = str | int | float | bool
#: How a state kind's step is named and what operation it is.
_CHAT: Final = "chat"
_TOOL: Final = "execute_tool"
NS: Final = 1_000_000  # nanoseconds per millisecond


@attrs.frozen
class SpanEvent:
    """Something that happened inside a span (a failed attempt of the step)."""

    name: str
    time_ns: int
    attributes: Mapping[str, AttributeValue]


@attrs.frozen
class PlannedSpan:
    """One span to emit: its name, times, attributes, status and children (in order)."""

    name: str
    start_ns: int
    end_ns: int
    attributes: Mapping[str, AttributeValue]
    kind: SpanKind = "internal"
    error: str | None = None  # the status description when the span failed (None: unset/ok)
    events: tuple[SpanEvent, ...] = ()
    children: tuple[PlannedSpan, ...] = ()

    def count(self) -> int:
        """This span and every span under it."""
        return 1 + sum(c.count() for c in self.children)


def started_ns(header: RunHeader) -> int | None:
    """The header's start time in nanoseconds since the epoch, or None (absent or not ISO 8601 UTC)."""
    if not header.started:
        return None
    for pattern in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"):
        try:
            parsed = time.strptime(header.started, pattern)
        except ValueError:
            continue
        fraction = 0.0
        if "." in header.started:
            fraction = float("0." + header.started.rsplit(".", 1)[1].rstrip("Z"))
        return int((calendar.timegm(parsed) + fraction) * 1_000_000_000)
    return None


def _put(out: dict[str, AttributeValue], key: str, value: object) -> None:
    if isinstance(value, (str, int, float, bool)):
        out[key] = value


def step_spans(step: Step, start: int, agent: str) -> PlannedSpan:
    """The span of one step (with a tool span inside a baseline turn that called a tool)."""
    end = start + round((step.latency_ms or 0.0) * NS)
    tool = step.tool_call.tool if step.tool_call is not None else step.tool_name
    is_tool = step.kind == "tool" or (step.kind is None and step.operation == _TOOL)
    attrs_: dict[str, AttributeValue] = {"gen_ai.agent.name": agent, "skillc.state.name": step.state,
                                         "skillc.step": step.index}
    _put(attrs_, "skillc.state.kind", step.kind)
    _put(attrs_, "skillc.edge", step.edge)
    _put(attrs_, "skillc.target", step.target)
    failed = step.target == "fallback" and bool(step.errors)
    error = step.errors[-1].message if failed else None
    events = tuple(SpanEvent("skillc.step_error", start,
                             {"skillc.error.kind": e.kind, "skillc.error.message": e.message})
                   for e in step.errors)
    if failed:
        attrs_["error.type"] = step.errors[-1].kind
    if is_tool:
        attrs_["gen_ai.operation.name"] = _TOOL
        _put(attrs_, "gen_ai.tool.name", tool)
        attrs_["gen_ai.tool.type"] = "function"
        return PlannedSpan(f"{_TOOL} {tool}" if tool else _TOOL, start, end, attrs_, "internal", error, events)
    attrs_["gen_ai.operation.name"] = _CHAT
    _put(attrs_, "gen_ai.request.model", step.model)
    _put(attrs_, "gen_ai.response.model", step.model)
    _put(attrs_, "gen_ai.usage.input_tokens", step.input_tokens)
    _put(attrs_, "gen_ai.usage.output_tokens", step.output_tokens)
    _put(attrs_, "skillc.retries", step.retries)
    _put(attrs_, "skillc.label", step.label)
    children: tuple[PlannedSpan, ...] = ()
    if tool:  # a baseline's turn that called a tool: the trace does not split its time, so the tool spans it all
        inner: dict[str, AttributeValue] = {"gen_ai.operation.name": _TOOL, "gen_ai.tool.name": tool,
                                            "gen_ai.tool.type": "function", "gen_ai.agent.name": agent,
                                            "skillc.state.name": step.state, "skillc.step": step.index}
        _put(inner, "skillc.state.kind", step.kind)
        children = (PlannedSpan(f"{_TOOL} {tool}", start, end, inner),)
    name = f"{_CHAT} {step.model}" if step.model else _CHAT
    return PlannedSpan(name, start, end, attrs_, "client", error, events, children)


def plan(run: RunTrace, *, now_ns: int | None = None) -> PlannedSpan:
    """The run's span with one child per step (see the module docstring for the times)."""
    header = run.headers[0] if run.headers else run.header
    agent = header.machine or "machine"
    total = sum(round((s.latency_ms or 0.0) * NS) for s in run.steps)
    start = started_ns(header)
    if start is None:
        start = (now_ns if now_ns is not None else time.time_ns()) - total
    resumes = {h.resumed_at_step: started_ns(h) for h in (run.headers or (run.header,))
               if h.resumed_at_step is not None}
    clock = start
    children = []
    for step in run.steps:
        resumed = resumes.get(step.index)
        if resumed is not None and resumed > clock:
            clock = resumed
        span = step_spans(step, clock, agent)
        children.append(span)
        clock = span.end_ns
    footer = run.footer
    attrs_: dict[str, AttributeValue] = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": agent,
                                         "skillc.mode": run.header.mode, "skillc.steps": len(run.steps)}
    _put(attrs_, "skillc.machine.hash", run.header.machine_hash)
    _put(attrs_, "skillc.run_id", run.header.run_id)
    _put(attrs_, "gen_ai.conversation.id", run.header.run_id)
    _put(attrs_, "skillc.executor", run.header.executor)
    error = None
    if footer is not None:
        _put(attrs_, "skillc.outcome", footer.outcome)
        _put(attrs_, "skillc.terminal", footer.terminal)
        tokens_in = footer.input_tokens if footer.input_tokens is not None else sum(s.input_tokens or 0
                                                                                     for s in run.steps)
        tokens_out = footer.output_tokens if footer.output_tokens is not None else sum(s.output_tokens or 0
                                                                                        for s in run.steps)
        attrs_["gen_ai.usage.input_tokens"] = tokens_in
        attrs_["gen_ai.usage.output_tokens"] = tokens_out
        if footer.reason is not None:
            attrs_["skillc.reason"] = footer.reason.kind
            if footer.reason.kind != "edge":
                attrs_["error.type"] = footer.reason.kind
                error = footer.reason.message
    else:
        attrs_["skillc.outcome"] = "unfinished"
    return PlannedSpan(f"invoke_agent {agent}", start, max(clock, start), attrs_, "internal", error,
                       children=tuple(children))


def describe(span: PlannedSpan, depth: int = 0) -> list[Object]:
    """The planned spans as JSON objects, depth first (for `--json` and tests)."""
    out = [{"name": span.name, "depth": depth, "start_ns": span.start_ns, "end_ns": span.end_ns,
            "attributes": dict(span.attributes), "error": span.error}]
    for child in span.children:
        out += describe(child, depth + 1)
    return out
