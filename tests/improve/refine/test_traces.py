"""Trace import: the committed example of each format, pairing and noise filtering, and coded bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.improve.refine.traces import load_traces, parse_traces

ROOT = Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples" / "refine" / "traces"


def codes(diagnostics) -> list[str]:
    return [str(d.code) for d in diagnostics]


def test_a_machine_mode_run_gives_model_and_tool_events_with_states_and_the_footers_outcome() -> None:
    (trace,), problems = load_traces(EXAMPLES / "skillc-machine.jsonl")
    assert problems == [] and trace.format == "skillc" and trace.mode == "machine" and trace.outcome == "success"
    assert [(e.kind, e.state) for e in trace.events] == [
        ("model", "analyze"), ("model", "review_options"), ("model", "pick"), ("model", "judge_complete"),
        ("tool", "write"), ("tool", "read_back")]
    pick = trace.events[2]
    assert pick.output is not None and pick.output["choice"] == "B" and json.loads(pick.text)["choice"] == "B"
    assert pick.inputs["question"] == "What is 6 times 7?" and pick.line == 4
    write = trace.events[4]
    assert write.tool == "bash" and write.args == {"command": "printf %s B > answer.txt"}
    assert write.result == {"stdout": "", "exit_code": 0}
    assert trace.inputs["options"][1] == "42" and trace.evidence == {"choice": "B", "readback": "B"}


def test_a_native_run_gives_each_turn_as_a_model_event_and_its_call_as_a_tool_event() -> None:
    (trace,), problems = load_traces(EXAMPLES / "skillc-native.jsonl")
    assert problems == [] and trace.mode == "native"
    assert [e.kind for e in trace.events] == ["model", "tool", "model", "tool", "model"]
    assert trace.events[0].output == {"action": "bash", "args": {"command": "printf %s B > answer.txt"}}
    assert trace.events[3].result == {"stdout": "B", "exit_code": 0} and trace.events[3].state is None
    assert trace.events[4].output is not None and trace.events[4].output["action"] == "finish"


def test_chat_transcripts_pair_tool_calls_with_their_results_by_id() -> None:
    traces, problems = load_traces(EXAMPLES / "chat.jsonl")
    assert problems == [] and [t.outcome for t in traces] == ["success", "failed"]
    first = traces[0]
    assert [e.kind for e in first.events] == ["model", "tool", "tool", "model"]
    assert first.events[1].result == {"stdout": "", "exit_code": 0}  # the JSON text read as its object
    assert first.events[2].args == {"command": "cat answer.txt"} and first.events[2].call_id == "call_2"
    assert traces[1].events[0].text == "3 + 4 = 7: option B." and traces[1].events[0].line == 2


def test_claude_code_logs_drop_subagents_and_todos_and_end_at_the_result() -> None:
    (trace,), problems = load_traces(EXAMPLES / "claude-code.jsonl")
    assert problems == [] and trace.format == "claude-code" and trace.outcome == "success"
    assert [(e.kind, e.tool) for e in trace.events] == [
        ("model", None), ("tool", "Bash"), ("tool", "Task"), ("tool", "Bash"), ("model", None)]
    assert trace.events[2].result == "answer.txt holds exactly B."  # the subagent's own Read is not an event
    assert trace.events[3].result == "B" and trace.events[1].line == 5


def _claude(*records: dict) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


def _use(i: str, name: str = "Bash", parent: str | None = None) -> dict:
    return {"type": "assistant", "parent_tool_use_id": parent,
            "message": {"content": [{"type": "tool_use", "id": i, "name": name, "input": {"command": "ls"}}]}}


def _result(i: str, content: object = "ok", error: bool = False) -> dict:
    return {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": i, "content": content,
                                                     "is_error": error}]}}


def test_claude_code_outcomes_errors_and_several_sessions_in_one_file() -> None:
    text = _claude(_use("a"), _result("a", "boom", error=True), {"type": "result", "subtype": "error_max_turns",
                                                                  "is_error": True},
                   _use("b"), _result("b"), {"type": "result", "subtype": "success", "is_error": False})
    traces, problems = parse_traces(text, "log.jsonl")
    assert problems == [] and [t.outcome for t in traces] == ["failed", "success"]
    assert traces[0].events[0].result == {"error": "boom"}


def test_claude_code_log_without_a_result_is_unfinished_and_unpaired_ids_are_warnings() -> None:
    (trace,), problems = parse_traces(_claude(_use("a"), _use("b"), _result("b"), _result("zz")), "cut.jsonl")
    assert trace.outcome == "unfinished" and [e.result for e in trace.events] == [None, "ok"]
    assert sorted(codes(problems)) == ["SKM804", "SKM804", "SKM805"]
    assert all(not p.is_error for p in problems)
    messages = " ".join(p.message for p in problems)
    assert "`a`" in messages and "`zz`" in messages


def test_a_damaged_line_is_an_error_at_its_line_and_column_and_the_others_are_kept() -> None:
    good = (EXAMPLES / "chat.jsonl").read_text(encoding="utf-8").splitlines()
    text = good[0] + "\n" + '{"messages": [1, }' + "\n" + good[1] + "\n"
    traces, problems = parse_traces(text, "t.jsonl")
    assert len(traces) == 2 and codes(problems) == ["SKM802"]
    (problem,) = problems
    assert problem.span is not None and problem.span.start_pos == (2, 18) and problem.hint


@pytest.mark.parametrize("record, field", [
    ({"messages": "hi", "outcome": "success"}, "messages"),
    ({"messages": [], "outcome": "won"}, "outcome"),
    ({"messages": [{"content": "x"}], "outcome": "success"}, "role"),
    ({"messages": [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": "bash",
                                                                                "arguments": "{oops"}}]}],
      "outcome": "success"}, "arguments"),
    ({"messages": [{"role": "tool", "content": "x"}], "outcome": "success"}, "tool_call_id"),
])
def test_bad_chat_records_are_refused_with_the_field_named(record: dict, field: str) -> None:
    traces, problems = parse_traces(json.dumps(record) + "\n", "t.jsonl")
    assert traces == [] and codes(problems) == ["SKM803"] and field in problems[0].message
    assert problems[0].span is not None and problems[0].span.start_pos == (1, 1)


def test_bad_claude_code_blocks_are_refused_and_the_rest_is_read() -> None:
    bad = {"type": "assistant", "message": {"content": [{"type": "tool_use", "name": "Bash", "input": {}}]}}
    traces, problems = parse_traces(_claude(bad, _use("a"), _result("a"), {"type": "result", "subtype": "success"}),
                                    "t.jsonl")
    assert codes(problems) == ["SKM803"] and "`id`" in problems[0].message
    assert len(traces) == 1 and traces[0].events[0].result == "ok"


def test_formats_that_cannot_be_recognised_or_read(tmp_path: Path) -> None:
    assert codes(parse_traces('{"events": []}\n', "x.jsonl")[1]) == ["SKM801"]
    for empty in ("", "\n \n"):
        problems = parse_traces(empty, "x.jsonl")[1]
        assert codes(problems) == ["SKM801"] and "x.jsonl is empty" in problems[0].message
    assert codes(parse_traces("{}", "x.jsonl", format="yaml")[1]) == ["SKM801"]
    assert codes(load_traces(tmp_path / "missing.jsonl")[1]) == ["SKM800"]
    assert codes(load_traces(tmp_path)[1]) == ["SKM800"]
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe{}")
    assert codes(load_traces(binary)[1]) == ["SKM800"]
    bom = tmp_path / "bom.jsonl"  # a UTF-8 byte-order mark before the first record is not part of it
    bom.write_bytes(b"\xef\xbb\xbf" + (EXAMPLES / "chat.jsonl").read_bytes())
    with_mark, problems = load_traces(bom)
    assert problems == [] and [t.id for t in with_mark] == [t.id for t in load_traces(EXAMPLES / "chat.jsonl")[0]]
    # Every line refused: the file holds no trace, and says why at each line (no second, vaguer error).
    assert codes(parse_traces('{"messages": 1, "outcome": "success"}\n', "x.jsonl")[1]) == ["SKM803"]
    # A log that never got past its init record holds no trace at all.
    assert codes(parse_traces(_claude({"type": "system", "subtype": "init"}), "x.jsonl")[1]) == ["SKM806"]


def test_a_bad_skillc_run_trace_reports_the_run_records_codes() -> None:
    text = (EXAMPLES / "skillc-machine.jsonl").read_text(encoding="utf-8").splitlines()
    text[2] = text[2].replace('"step": 1', '"step": "one"')
    traces, problems = parse_traces("\n".join(text) + "\n", "run.jsonl")
    assert traces == [] and codes(problems) == ["SKM523"] and problems[0].span.start_pos[0] == 3
    (forced,), _ = parse_traces((EXAMPLES / "skillc-native.jsonl").read_text(encoding="utf-8"), "n", "skillc")
    assert forced.mode == "native"


def test_importing_the_same_run_twice_gives_one_content_address() -> None:
    (a,), _ = load_traces(EXAMPLES / "skillc-machine.jsonl")
    (b,), _ = parse_traces((EXAMPLES / "skillc-machine.jsonl").read_text(encoding="utf-8"), "elsewhere.jsonl")
    assert a.id == b.id and a.source != b.source


@pytest.mark.parametrize("code", ["SKM800", "SKM801", "SKM802", "SKM803", "SKM804", "SKM805", "SKM806"])
def test_each_import_codes_documented_examples_do_what_they_say(code: str, tmp_path: Path) -> None:
    from skillc.improve import codes as refine_codes

    entry = next(c for c in refine_codes.ALL if c.code == code)
    bad, good = tmp_path / "bad.jsonl", tmp_path / "good.jsonl"
    bad.write_bytes(entry.bad.encode("latin-1") if code == "SKM800" else entry.bad.encode("utf-8"))
    good.write_text(entry.good, encoding="utf-8")
    assert code in codes(load_traces(bad)[1])
    traces, problems = load_traces(good)
    assert traces and problems == []
