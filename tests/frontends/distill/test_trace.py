"""The `skillc-trace/1` format: reading, validation, exclusion of failed runs."""

from __future__ import annotations

import json

import attrs
import pytest

from skillc.frontends.distill.trace import dumps, parse_traces, read_traces, successful
from tests.conftest import codes
from tests.frontends.distill.conftest import TRAIN, jsonl, trace


def test_committed_traces_round_trip(train_traces):
    assert len(train_traces) >= 12
    again, problems = parse_traces(dumps(train_traces))
    assert not problems and again == train_traces
    first = train_traces[0]
    assert first.env == "textworld" and first.success and first.steps[-1].done
    assert first.entities and first.game["generator"] == "tw-cooking"
    assert all(s.available_actions for s in first.steps)


def test_step_fields_are_kept():
    t = trace(["take apple from counter", "eat apple"])
    (back,), problems = parse_traces(jsonl(t))
    assert not problems
    assert back.steps[0].action == "take apple from counter" and back.steps[0].next_observation == "obs 1"
    assert back.steps[1].done and back.actions == ("take apple from counter", "eat apple")


@pytest.mark.parametrize("line, words", [
    ("{not json", "is not JSON"),
    ("[1, 2]", "not a trace object"),
    ('{"id": "a", "success": true}', "has no `steps`"),
    ('{"id": "a", "success": true, "steps": "take apple"}', "`steps` of the trace is str, not a list"),
    ('{"id": 3, "success": true, "steps": []}', "`id` of the trace is int"),
    ('{"id": "a", "success": "yes", "steps": []}', "`success` of the trace is str, not true or false"),
    ('{"id": "a", "success": true, "steps": [{"action": "eat"}]}', "step 1 has no `observation`"),
    ('{"id": "a", "success": true, "steps": [{"observation": "", "action": " ", "next_observation": "", '
     '"available_actions": [], "score": 0, "done": true}]}', "the action of step 1 is empty"),
    ('{"id": "a", "success": true, "steps": [{"observation": "", "action": "eat", "next_observation": "", '
     '"available_actions": [1], "score": 0, "done": true}]}', "not a string"),
    ('{"id": "a", "success": true, "steps": [{"observation": "", "action": "eat", "next_observation": "", '
     '"available_actions": [], "score": true, "done": true}]}', "`score` of step 1 is bool, not a number"),
    ('{"format": "other/2", "id": "a", "success": true, "steps": []}', "the format is 'other/2'"),
    ('{"id": "a", "success": true, "steps": [], "entities": {"apple": 1}}', "`entities` must map"),
])
def test_bad_lines_are_skm401_with_their_line(line, words):
    good = jsonl(trace(["eat apple"], ident="ok"))
    traces, problems = parse_traces(good + line + "\n", "t.jsonl")
    assert [t.id for t in traces] == ["ok"]
    assert codes(problems) == ["SKM401"]
    assert words in problems[0].message and "line 2" in problems[0].message
    assert problems[0].span.start_pos[0] == 2


def test_duplicate_ids_and_blank_lines(tmp_path):
    t = jsonl(trace(["eat apple"], ident="same"))
    traces, problems = parse_traces(t + "\n\n" + t)
    assert len(traces) == 1 and codes(problems) == ["SKM401"] and "used twice" in problems[0].message
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(t)
    b.write_text(t)
    traces, problems = read_traces([a, b])
    assert len(traces) == 1 and "more than one file" in problems[0].message


def test_unreadable_inputs_are_diagnostics(tmp_path):
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00")
    _, problems = read_traces([tmp_path / "missing.jsonl", tmp_path, tmp_path / "bin.jsonl"])
    assert codes(problems) == ["SKM401"] * 3
    assert "cannot read" in problems[0].message and "folder" in problems[1].message
    assert "UTF-8" in problems[2].message


def test_failed_traces_are_left_out_with_a_reason():
    won = trace(["eat apple"], ident="won")
    lost = trace(["eat apple"], ident="lost", success=False)
    unfinished = trace(["eat apple"], ident="unfinished")
    unfinished = attrs.evolve(unfinished, steps=(attrs.evolve(unfinished.steps[0], done=False),))
    empty = trace([], ident="empty")
    kept, problems = successful([won, lost, unfinished, empty])
    assert [t.id for t in kept] == ["won"]
    assert codes(problems) == ["SKM402"] * 3
    text = " ".join(p.message for p in problems)
    assert "`success` is false" in text and "not `done`" in text and "no steps" in text


def test_committed_file_is_one_trace_per_line():
    lines = TRAIN.read_text().splitlines()
    assert all(json.loads(line)["format"] == "skillc-trace/1" for line in lines)
