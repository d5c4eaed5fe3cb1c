"""The spans of a run, with the SDK's in-memory exporter: structure, parent and child, attributes, times."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

import itertools

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from skillc import api
from skillc.otel.spans import plan, started_ns
from skillc.runtime.record import RunHeader, load_run
from tests.conftest import ROOT


def _export(trace: Path | object) -> list:
    memory = InMemorySpanExporter()
    result = api.export_otel(trace, exporter=memory)  # type: ignore[arg-type]
    assert result.sent and result.diagnostics == [], result.diagnostics
    spans = list(memory.get_finished_spans())
    assert result.spans == len(spans)
    return spans


def test_one_run_span_with_one_child_per_step(finished_trace: Path) -> None:
    run = load_run(finished_trace)
    spans = _export(finished_trace)
    root = [s for s in spans if s.parent is None]
    assert len(root) == 1 and root[0].name == "invoke_agent livemath"
    children = sorted((s for s in spans if s.parent is not None), key=lambda s: s.start_time)
    assert [s.name for s in children] == ["chat scripted"] * 4 + ["execute_tool bash"] * 2
    assert all(s.parent.span_id == root[0].context.span_id and s.context.trace_id == root[0].context.trace_id
               for s in children)
    assert [s.attributes["skillc.state.name"] for s in children] == list(run.states)
    r = root[0].attributes
    assert r["gen_ai.operation.name"] == "invoke_agent" and r["gen_ai.agent.name"] == "livemath"
    assert r["skillc.outcome"] == "success" and r["skillc.terminal"] == "verified"
    assert r["skillc.machine.hash"] == run.header.machine_hash and r["skillc.steps"] == 6
    assert r["gen_ai.usage.input_tokens"] == run.footer.input_tokens


def test_model_judge_and_tool_attributes(finished_trace: Path) -> None:
    by_state = {s.attributes.get("skillc.state.name"): s for s in _export(finished_trace)}
    judge = by_state["judge_complete"]
    assert judge.kind is SpanKind.CLIENT
    assert {k: judge.attributes[k] for k in ("gen_ai.operation.name", "gen_ai.request.model", "skillc.state.kind",
                                             "skillc.edge", "skillc.retries", "skillc.label")} == {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "scripted", "skillc.state.kind": "judge",
        "skillc.edge": 1, "skillc.retries": 1, "skillc.label": "complete"}
    assert "gen_ai.usage.input_tokens" in judge.attributes and "gen_ai.usage.output_tokens" in judge.attributes
    assert [e.attributes["skillc.error.kind"] for e in judge.events] == ["invalid_output"]  # the retried answer
    assert judge.status.status_code is StatusCode.UNSET
    tool = by_state["write"]
    assert tool.kind is SpanKind.INTERNAL and tool.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool.attributes["gen_ai.tool.name"] == "bash" and tool.attributes["skillc.state.kind"] == "tool"
    assert tool.attributes["gen_ai.agent.name"] == "livemath"


def test_times_start_at_the_header_and_follow_the_latencies(finished_trace: Path) -> None:
    run = load_run(finished_trace)
    spans = sorted(_export(finished_trace), key=lambda s: (s.start_time, s.parent is not None))
    root, steps = spans[0], spans[1:]
    assert root.start_time == started_ns(run.header) == steps[0].start_time
    for before, after in itertools.pairwise(steps):
        assert before.end_time == after.start_time
    for span, step in zip(steps, run.steps):
        assert span.end_time - span.start_time == round(step.latency_ms * 1_000_000)
    assert root.end_time == steps[-1].end_time


def test_a_failed_step_and_run_are_errors(tmp_path: Path) -> None:
    from tests.otel.conftest import SCRIPT

    script = dict(SCRIPT, tools={"write": [{"stdout": "", "exit_code": 0}], "read_back": ["not results"]})
    (tmp_path / "s.json").write_text(__import__("json").dumps(script), encoding="utf-8")
    trace = tmp_path / "failed.jsonl"
    api.run(api.RunConfig(machine=str(ROOT / "examples" / "livemath" / "livemath.skm"),
                          executor=f"scripted:{tmp_path / 's.json'}", trace=str(trace), workdir=str(tmp_path),
                          journal=str(tmp_path / "j.sqlite"),
                          inputs=("question=q", 'options=["1","2","3","4","5"]')))
    spans = _export(trace)
    root = next(s for s in spans if s.parent is None)
    read = next(s for s in spans if s.attributes.get("skillc.state.name") == "read_back")
    assert read.status.status_code is StatusCode.ERROR and read.attributes["error.type"] == "tool"
    assert root.status.status_code is StatusCode.ERROR and root.attributes["skillc.outcome"] == "failed"
    assert root.attributes["skillc.reason"] == "tool"


def test_a_native_turn_is_a_chat_span_around_its_tool_call() -> None:
    spans = _export(ROOT / "tests" / "conform" / "fixtures" / "livemath" / "native-clean.jsonl")
    root = next(s for s in spans if s.parent is None)
    assert root.attributes["skillc.mode"] == "native"
    turns = [s for s in spans if s.parent is not None and s.parent.span_id == root.context.span_id]
    tools = [s for s in spans if s.name == "execute_tool bash"]
    assert len(turns) == 3 and len(tools) == 2
    assert {t.parent.span_id for t in tools} <= {t.context.span_id for t in turns}
    assert all(t.start_time == p.start_time and t.end_time == p.end_time
               for t in tools for p in turns if p.context.span_id == t.parent.span_id)


def test_a_resumed_run_starts_its_second_segment_at_the_resumption() -> None:
    from skillc.runtime.record import RunTrace, Step

    first = RunHeader(machine="m", started="2026-12-01T10:00:00Z")
    second = RunHeader(machine="m", started="2026-12-01T10:05:00Z", resumed_at_step=1)
    steps = (Step(index=0, state="a", kind="tool", tool_name="bash", latency_ms=1000.0),
             Step(index=1, state="b", kind="tool", tool_name="bash", latency_ms=500.0))
    root = plan(RunTrace(second, steps, None, (first, second)))
    a, b = root.children
    assert a.start_ns == started_ns(first) and a.end_ns - a.start_ns == 1_000_000_000
    assert b.start_ns == started_ns(second) and root.end_ns == b.end_ns
    assert root.attributes["skillc.outcome"] == "unfinished"


def test_a_trace_without_a_start_time_ends_now() -> None:
    from skillc.runtime.record import RunTrace, Step

    run = RunTrace(RunHeader(machine="m"), (Step(index=0, state="a", kind="tool", latency_ms=2.0),), None)
    root = plan(run, now_ns=10_000_000_000)
    assert root.end_ns == 10_000_000_000 and root.start_ns == 10_000_000_000 - 2_000_000


def test_an_unreadable_trace_is_a_warning(tmp_path: Path) -> None:
    result = api.export_otel(tmp_path / "missing.jsonl", exporter=InMemorySpanExporter())
    assert not result.sent and [str(d.code) for d in result.diagnostics] == ["SKM882"]
    assert str(api.export_otel(tmp_path / "x.jsonl", "ftp://host").diagnostics[0].code) == "SKM901"
