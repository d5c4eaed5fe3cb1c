"""The seam records: content addresses and the JSON the archive stores, read back exactly."""

from __future__ import annotations

import pytest

from skillc.improve.events import Alignment, DevTrace, Event

EVENTS = (Event("model", text="think", output={"plan": "make"}, state="plan", line=3, inputs={"q": "x"}),
          Event("tool", tool="bash", args={"command": "make"}, result={"exit_code": 0}, line=4, call_id="c1"))


def test_a_trace_round_trips_through_its_json_and_keeps_its_id() -> None:
    trace = DevTrace(EVENTS, "success", "chat", "t.jsonl", None, {"q": "x"}, {"plan": "make"})
    back = DevTrace.from_json(trace.to_json())
    assert back.id == trace.id and back.events[0] == EVENTS[0] and back.evidence == {"plan": "make"}
    assert back.events[1].call_id is None  # the pairing id is not stored: it is not part of what happened


def test_the_id_is_the_content_not_where_it_was_read_from() -> None:
    a = DevTrace(EVENTS, "success", "chat", "a.jsonl")
    assert a.id == DevTrace(EVENTS, "success", "claude-code", "b.jsonl").id
    assert a.id != DevTrace(EVENTS, "failed", "chat").id
    assert a.id != DevTrace(EVENTS, "success", "chat", inputs={"q": "y"}).id
    assert a.id != DevTrace(EVENTS[:1], "success", "chat").id


def test_traces_without_inputs_keep_the_address_of_the_first_seam() -> None:
    # The id the lead's first events.py gave: sha256 over outcome and events only (no empty inputs key).
    import hashlib
    import json

    plain = (Event("tool", tool="bash", args={"command": "ls"}, result="a"),)
    body = json.dumps({"outcome": "success", "events": [e.to_json() for e in plain]}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    assert DevTrace(plain, "success", "chat").id == hashlib.sha256(body.encode()).hexdigest()


def test_alignment_round_trips_and_bad_records_are_value_errors() -> None:
    alignment = Alignment("abc", ("plan", None))
    assert Alignment.from_json(alignment.to_json()) == alignment
    for bad in ({"trace": 1, "states": []}, {"trace": "a", "states": [1]}):
        with pytest.raises(ValueError):
            Alignment.from_json(bad)
    for bad_trace in ({"events": "x", "outcome": "success", "format": "chat"},
                      {"events": [], "outcome": "won", "format": "chat"},
                      {"events": [{"kind": "dance"}], "outcome": "success", "format": "chat"}):
        with pytest.raises(ValueError):
            DevTrace.from_json(bad_trace)
