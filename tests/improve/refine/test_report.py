"""The refine report: statuses, edits, the .skm diff, replay verdicts and the dropped reason, as text and JSON."""

from __future__ import annotations

import json

from skillc.improve.refine.accept import accept
from skillc.improve.refine.report import render, skm_diff, summarize
from tests.improve.refine.test_accept import GOOD, SKIP
from tests.improve.refine.test_align import PARTIAL, partial


def test_an_accepted_and_a_dropped_trace_are_reported() -> None:
    text = PARTIAL.read_text(encoding="utf-8")
    first = accept(text, str(PARTIAL), partial(), GOOD)
    assert first.text is not None and first.final.machine is not None
    second = accept(first.text, str(PARTIAL), first.final.machine, SKIP, [(GOOD, first.final.aligned.alignment)])
    a, b = summarize(first, text, "m.skm"), summarize(second, first.text, "m.skm")
    assert a.status == "accepted" and "+  tool bash_cat {" in a.diff and a.diff.startswith("--- a/m.skm")
    assert b.status == "dropped" and b.diff == "" and b.changes == () and b.tried
    out = render([a, b])
    assert f"trace {GOOD.id[:12]}: accepted, 5 edits" in out
    assert "  + state: tool state `bash_cat`" in out and "  aligned: write, bash_cat" in out
    assert f"  replay {GOOD.id[:12]}: FAILS at event 3" in out and "  dropped: SKM822" in out
    assert "    witness: path: analyze -> " in out
    assert out.endswith("1 accepted, 0 realigned, 1 dropped of 2 traces")
    data = json.loads(json.dumps(b.to_json()))
    assert data["status"] == "dropped" and data["reason"]["code"] == "SKM822"
    assert data["replays"][-1]["ok"] is False and data["replays"][-1]["diverged_at"] == 3
    assert [c["kind"] for c in data["tried"]] == ["variable", "judge"]


def test_no_change_no_diff() -> None:
    assert skm_diff("a\n", "a\n", "m.skm") == ""
