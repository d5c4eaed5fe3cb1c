"""The run record: every record round-trips, old traces load, bad files get coded problems at their lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.runtime import codes
from skillc.runtime.record import (
    END_KINDS,
    ERROR_KINDS,
    TRACE_VERSION,
    EndReason,
    Footer,
    RunHeader,
    Step,
    StepError,
    ToolCall,
    TraceError,
    legacy_kind,
    load_run,
    parse_run,
    read_run,
)
from tests.runtime.helpers import ECHO, run

FIXTURES = Path(__file__).parent / "fixtures"
OLD_TRACES = sorted(FIXTURES.glob("v1-*.jsonl"))


def full_step() -> Step:
    return Step(index=3, state="think", kind="model", inputs={"q": "?"}, operation="chat", prompt_chars=120,
                model="m", input_tokens=10, output_tokens=4, tool_name=None, tool_call=ToolCall("bash", {"c": "ls"}),
                raw_output='{"a": 1}', retries=1, errors=(StepError("invalid_output", "invalid output: x"),),
                output={"a": 1}, label="yes", warnings=("guard of edge 1: no key",), latency_ms=1.5, edge=2,
                assignments={"n": 1}, target="next", tool_result={"stdout": ""}, extra={"x.custom": [1]})


def test_every_record_round_trips_through_json() -> None:
    records = [
        RunHeader(skillc_version="0.1.0", machine="m", machine_hash="ab", run_id="r1", mode="native", executor="e",
                  inputs={"q": "?"}, started="2026-01-01T00:00:00Z", resumed_at_step=4, extra={"x.note": 1}),
        RunHeader(), full_step(), Step(index=0, state="s"),
        Footer(terminal="fallback", outcome="failed", evidence={"a": None}, steps=7, error="no edge fired",
               reason=EndReason("no_edge", "no edge fired", 6, "s", None), input_tokens=1, output_tokens=2,
               latency_ms=3.25, extra={"x.more": True}),
        Footer(),
    ]
    for record in records:
        data = json.loads(json.dumps(record.to_json()))
        assert type(record).from_json(data) == record
    for value in (StepError("tool", "tool `x` failed"), EndReason("edge", "edge 2 leads there", 1, "s", 1),
                  ToolCall("t", {})):
        assert type(value).from_json(json.loads(json.dumps(value.to_json()))) == value


def test_a_chat_step_always_states_model_and_tokens_and_headers_start_with_their_type() -> None:
    data = Step(index=0, state="s", operation="chat").to_json()
    assert data["gen_ai.request.model"] is None and data["gen_ai.usage.input_tokens"] is None
    header = json.dumps(RunHeader(machine="m").to_json())
    assert header.startswith('{"type": "header"') and f'"skillc.trace_version": {TRACE_VERSION}' in header


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                                  max_size=3), max_leaves=6)
_objects = st.dictionaries(st.text(max_size=4), _json, max_size=3)
_opt_int = st.none() | st.integers(min_value=0, max_value=10**6)
_steps = st.builds(
    Step, index=st.integers(min_value=0, max_value=10**6), state=st.text(min_size=1, max_size=8),
    kind=st.sampled_from([None, "model", "judge", "tool", "turn"]), inputs=st.none() | _objects,
    operation=st.sampled_from([None, "chat", "execute_tool"]), model=st.none() | st.text(max_size=5),
    input_tokens=_opt_int, output_tokens=_opt_int, tool_call=st.none() | st.builds(ToolCall, st.text(max_size=5),
                                                                                  _objects),
    raw_output=st.none() | st.text(max_size=10), retries=_opt_int,
    errors=st.lists(st.builds(StepError, st.sampled_from(ERROR_KINDS), st.text(max_size=10)), max_size=3).map(tuple),
    output=st.none() | _objects, label=st.none() | st.text(max_size=4),
    warnings=st.lists(st.text(max_size=5), max_size=2).map(tuple),
    latency_ms=st.none() | st.floats(min_value=0, max_value=1e6), edge=_opt_int, target=st.none() | st.text(max_size=5),
    tool_result=st.none() | _objects)
_footers = st.builds(
    Footer, terminal=st.none() | st.text(max_size=5), outcome=st.sampled_from([None, "success", "partial", "failed"]),
    evidence=_objects, steps=_opt_int, error=st.none() | st.text(max_size=8),
    reason=st.none() | st.builds(EndReason, st.sampled_from(END_KINDS), st.text(max_size=8), _opt_int,
                                 st.none() | st.text(max_size=4), _opt_int),
    input_tokens=_opt_int, output_tokens=_opt_int)


@settings(max_examples=60, deadline=None)
@given(_steps, _footers)
def test_generated_steps_and_footers_round_trip(step: Step, footer: Footer) -> None:
    for record in (step, footer):
        assert type(record).from_json(json.loads(json.dumps(record.to_json()))) == record


@pytest.mark.parametrize("path", OLD_TRACES, ids=lambda p: p.name)
def test_traces_written_by_skillc_0_1_0_still_load(path: Path) -> None:
    trace, problems = read_run(path)
    assert problems == [] and trace is not None
    assert trace.header.version == 1 and trace.header.machine and trace.footer is not None
    raw = [json.loads(line) for line in path.read_text().splitlines()]
    for old, record in zip(raw, trace.records()):
        again = record.to_json()
        for key, value in old.items():  # every non-null field survives, in the same name; errors gain a kind
            if key == "skillc.errors":
                assert [e["message"] for e in again[key]] == value
            elif value is not None:
                assert again[key] == value, key
        assert type(record).from_json(again) == record


def test_old_error_messages_get_their_kinds() -> None:
    kinds = {p.name: [e.kind for s in load_run(p).steps for e in s.errors] for p in OLD_TRACES}
    assert kinds["v1-gate-no-edge.jsonl"] == ["no_edge"]
    assert kinds["v1-spin-counter.jsonl"] == ["counter"]
    assert set(kinds["v1-loop-invalid-fallback.jsonl"]) == {"invalid_output"}
    assert kinds["v1-loop-retries.jsonl"] == ["invalid_output", "executor"]
    assert load_run(FIXTURES / "v1-echo-native.jsonl").header.mode == "native"
    assert legacy_kind("the executor failed: step 2: the trace recorded `a`, the machine is in `b`") == "divergence"
    assert legacy_kind("executor: no answer within the step deadline of 1 s") == "deadline"
    assert legacy_kind("something else") == "other"


def _lines(*records: dict | str) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


HEADER = {"type": "header", "skillc.machine": "m", "inputs": {}}
STEP = {"type": "step", "step": 0, "state": "s"}
FOOTER = {"type": "footer", "skillc.terminal": "done", "skillc.outcome": "success"}


@pytest.mark.parametrize(("text", "code", "line", "words"), [
    (_lines(HEADER, "{not json", FOOTER), codes.MALFORMED_TRACE_LINE, 2, "not JSON"),
    (_lines(HEADER, STEP, {"type": "span"}, FOOTER), codes.NOT_A_TRACE, 3, "not a trace record"),
    (_lines(HEADER, STEP, [1, 2]), codes.NOT_A_TRACE, 3, "not a trace record"),
    (_lines(STEP, FOOTER), codes.NOT_A_TRACE, 1, "first record must be the header"),
    (_lines(HEADER, {**STEP, "step": "first"}), codes.INVALID_TRACE_RECORD, 2, "lacks `state` or `step`"),
    (_lines(HEADER, {**STEP, "gen_ai.usage.input_tokens": "many"}), codes.INVALID_TRACE_RECORD, 2,
     "`gen_ai.usage.input_tokens` is a string, not an integer"),
    (_lines(HEADER, {**STEP, "tool_call": {"args": {}}}), codes.INVALID_TRACE_RECORD, 2, "names no `tool`"),
    (_lines(HEADER, {**FOOTER, "skillc.outcome": "great"}), codes.INVALID_TRACE_RECORD, 2, "not one of success"),
    (_lines(HEADER, {**STEP, "skillc.errors": [{"kind": "oops", "message": "m"}]}), codes.INVALID_TRACE_RECORD, 2,
     "`kind` is 'oops'"),
    (_lines({**HEADER, "skillc.trace_version": 99, "skillc.version": "9.0"}, STEP), codes.UNSUPPORTED_TRACE_VERSION,
     1, "written by skillc 9.0 in trace format version 99; this skillc reads versions 1 to"),
    (_lines(HEADER, STEP, {**HEADER, "skillc.trace_version": "2"}), codes.UNSUPPORTED_TRACE_VERSION, 3,
     "not a positive integer"),
])
def test_bad_traces_get_coded_problems_at_their_lines(text: str, code, line: int, words: str) -> None:
    trace, problems = parse_run(text, "t.jsonl")
    assert trace is None and problems
    first = problems[0]
    assert str(first.code) == code.code and first.span is not None and first.span.start_pos[0] == line
    assert words in first.message, first.message


def test_every_problem_of_a_file_is_reported_and_a_torn_last_line_is_not_one() -> None:
    _, problems = parse_run(_lines(HEADER, "{bad", {**STEP, "step": None}, "also bad", FOOTER), "t.jsonl")
    assert [(str(p.code), p.span.start_pos[0]) for p in problems] == [("SKM522", 2), ("SKM523", 3), ("SKM522", 4)]
    trace, problems = parse_run(_lines(HEADER, STEP) + '{"type": "step", "st', "t.jsonl")
    assert problems == [] and trace is not None and len(trace.steps) == 1 and trace.footer is None
    _, problems = parse_run("", "t.jsonl")
    assert [str(p.code) for p in problems] == ["SKM521"]


def test_files_that_cannot_be_read_are_skm520_and_load_run_raises_a_coded_trace_error(tmp_path: Path) -> None:
    assert [str(p.code) for p in read_run(tmp_path / "missing.jsonl")[1]] == ["SKM520"]
    assert [str(p.code) for p in read_run(tmp_path)[1]] == ["SKM520"]
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe{}")
    assert "not UTF-8" in read_run(binary)[1][0].message
    bad = tmp_path / "bad.jsonl"
    bad.write_text(_lines(HEADER, "{nope"))
    with pytest.raises(TraceError) as caught:
        load_run(bad)
    assert str(caught.value.code) == "SKM522" and str(caught.value).startswith(f"{bad}:2: ")


@pytest.mark.parametrize("code", codes.ALL, ids=lambda c: c.code)
def test_each_code_s_examples(code, tmp_path: Path) -> None:
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    bad.write_bytes(code.bad.encode("latin-1" if code is codes.UNREADABLE_TRACE else "utf-8"))
    good.write_text(code.good)
    assert [str(p.code) for p in read_run(bad)[1]][:1] == [code.code]
    assert read_run(good)[1] == []
    assert tuple(sorted(codes.ALL, key=lambda c: c.code)) == codes.ALL
    assert all("SKM520" <= c.code <= "SKM539" for c in codes.ALL)


def test_new_traces_are_written_in_the_current_version_with_typed_errors(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    run(ECHO, {"outputs": {"think": ["not json", {"answer": "hi"}]}, "tools": {"show": [{"stdout": "hi",
        "exit_code": 0}]}}, {"q": "?"}, trace=trace)
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert lines[0]["skillc.trace_version"] == TRACE_VERSION
    assert lines[1]["skillc.errors"][0]["kind"] == "invalid_output"
    loaded = load_run(trace)
    assert loaded.header.version == TRACE_VERSION and loaded.steps[0].retries == 1
    assert loaded.steps[1].tool_call == ToolCall("bash", {"command": "printf %s hi"})
    assert loaded.footer is not None and loaded.footer.reason is None and loaded.footer.outcome == "success"
