"""Acceptance: check + replay of the current trace and every accepted one; realign once; drop with the witness."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from skillc.diagnostics import make
from skillc.improve import codes
from skillc.improve.events import DevTrace, Event
from skillc.improve.refine import accept as accept_module
from skillc.improve.refine.accept import Attempt, accept
from skillc.improve.refine.edit import Candidate, Change
from tests.improve.refine.test_align import GOOD, OK, PARTIAL, ROOT, RULED, machine, native, partial

SKIP = native([("printf %s E > answer.txt", OK)], inputs={"question": "other", "options": ["1", "2", "3", "4", "5"]})


def test_a_trace_that_needs_a_new_state_is_accepted_and_replays() -> None:
    text = PARTIAL.read_text(encoding="utf-8")
    v = accept(text, str(PARTIAL), partial(), GOOD)
    assert v.status == "accepted" and v.reason is None and v.text is not None
    assert "tool bash_cat {" in v.text
    assert [tid for tid, _ in v.final.replays] == [GOOD.id] and v.final.replays[0][1].ok


def test_a_trace_that_would_break_an_accepted_one_is_dropped_with_the_divergence() -> None:
    text = PARTIAL.read_text(encoding="utf-8")
    first = accept(text, str(PARTIAL), partial(), GOOD)
    assert first.text is not None and first.final.machine is not None
    archive = [(GOOD, first.final.aligned.alignment)]
    v = accept(first.text, str(PARTIAL), first.final.machine, SKIP, archive)
    assert v.status == "dropped" and len(v.attempts) == 2 and v.text is None
    assert v.reason is not None and str(v.reason.code) == "SKM822"
    assert f"accepted trace {GOOD.id[:12]}" in v.reason.message
    assert v.reason.witness[0].startswith("event 3:")  # the read-back the candidate would skip
    broken = dict(v.final.replays)[GOOD.id]
    assert not broken.ok and "write_route" in broken.states


def test_an_incremental_selection_that_leaves_the_archive_out_accepts() -> None:
    # The gate only knows what it replays: with no archived trace selected, the same candidate is accepted.
    text = PARTIAL.read_text(encoding="utf-8")
    first = accept(text, str(PARTIAL), partial(), GOOD)
    assert first.text is not None and first.final.machine is not None
    archive = [(GOOD, first.final.aligned.alignment)]
    v = accept(first.text, str(PARTIAL), first.final.machine, SKIP, archive, select=lambda old, new, entries: [])
    assert v.status == "accepted" and v.skipped == 1


def test_an_alignment_bypassing_a_rule_is_dropped() -> None:
    m = machine(RULED)
    skip = DevTrace((Event("tool", tool="bash", args={"command": "make"}, result=OK),
                     Event("tool", tool="bash", args={"command": "deploy now"}, result=OK)), "success", "chat")
    v = accept(RULED, str(ROOT / "m.skm"), m, skip)
    assert v.status == "dropped" and v.reason is not None and str(v.reason.code) == "SKM820"
    assert all(a.candidate is None for a in v.attempts)  # nothing was edited


def test_a_candidate_that_does_not_check_is_dropped_with_the_checker_finding() -> None:
    # A run that only calls a tool the machine lacks and succeeds: its new state would reach `verified`
    # without `choice` ever being written.
    trace = DevTrace((Event("tool", tool="notify", args={"text": "done"}, result={"ok": True}),), "success", "chat")
    v = accept(PARTIAL.read_text(encoding="utf-8"), str(PARTIAL), partial(), trace)
    assert v.status == "dropped" and v.reason is not None and str(v.reason.code) == "SKM821"
    assert "SKM213" in v.reason.message and "`choice`" in v.reason.message


def test_a_candidate_that_does_not_parse_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    text = PARTIAL.read_text(encoding="utf-8")
    broken = text.replace("-> verified\n  }", "-> nowhere\n  }", 1)
    change = Change("edge", "write", "write -> nowhere")
    monkeypatch.setattr(accept_module, "propose", lambda *a, **k: Candidate(broken, (change,)))
    v = accept(text, str(PARTIAL), partial(), GOOD)
    assert v.status == "dropped" and v.reason is not None and str(v.reason.code) == "SKM821"
    assert "nowhere" in v.reason.message


def _failing_first(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Make the first attempt fail as if its candidate had not replayed; the calls' `only_reachable` flags."""
    calls: list[bool] = []
    real = accept_module.attempt

    def flaky(*args: Any, only_reachable: bool = False, **kw: Any) -> tuple[Attempt, int]:
        calls.append(only_reachable)
        got, skipped = real(*args, only_reachable=only_reachable, **kw)
        if not calls[1:]:
            got = attrs.evolve(got, failure=make(codes.CANDIDATE_BREAKS_REPLAY, "forced"))
        return got, skipped

    monkeypatch.setattr(accept_module, "attempt", flaky)
    return calls


def test_a_realignment_that_changes_nothing_is_not_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _failing_first(monkeypatch)
    v = accept(PARTIAL.read_text(encoding="utf-8"), str(PARTIAL), partial(), GOOD)
    assert calls == [False] and v.status == "dropped" and len(v.attempts) == 2
    assert v.attempts[1].aligned.alignment == v.attempts[0].aligned.alignment


def test_a_different_realignment_is_tried_and_can_be_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _failing_first(monkeypatch)
    real = accept_module.align

    def other(machine: Any, trace: Any, **kw: Any) -> Any:
        got = real(machine, trace, **kw)
        if not kw.get("only_reachable"):
            return got  # the second alignment names the new state otherwise, so it is a different candidate
        states = tuple("read_back" if s == "bash_cat" else s for s in got.alignment.states)
        return attrs.evolve(got, alignment=attrs.evolve(got.alignment, states=states))

    monkeypatch.setattr(accept_module, "align", other)
    v = accept(PARTIAL.read_text(encoding="utf-8"), str(PARTIAL), partial(), GOOD)
    assert calls == [False, True] and v.status == "realigned" and v.attempts[0].failure is not None
    assert v.text is not None and "tool read_back {" in v.text


@pytest.mark.parametrize("event, shown", [
    (Event("tool", tool="list+files", args={"path": "."}, result=OK), "a tool `list+files`"),
    (Event("tool", tool="a\x00b", args={"command": "ls"}, result=OK), "a tool `a\\u0000b`"),
    (Event("tool", tool="Bash\ufeff", args={"command": "ls"}, result=OK), "a tool `Bash\\ufeff`"),
    (Event("tool", tool="bash", args={"c}mmand": "cat answer.txt"}, result=OK), "an argument of `bash` `c}mmand`"),
    (Event("tool", tool="fetch_page", args={"url": "x"}, result={"model": "y"}), "a result of `fetch_page` `model`"),
    (Event("model", text="Pick.", output={"my answer": "A"}), "a value a model step writes `my answer`"),
])
def test_a_name_that_cannot_be_written_drops_the_trace(event: Event, shown: str) -> None:
    """Names from a log become `.skm` names; one that cannot be (found by bench/fuzz.py: it was SKM900) drops the trace
    with SKM824, before any edit is made."""
    text = PARTIAL.read_text(encoding="utf-8")
    trace = DevTrace((event, *GOOD.events), "success", "chat")
    v = accept(text, str(PARTIAL), partial(), trace)
    assert v.status == "dropped" and v.reason is not None and str(v.reason.code) == "SKM824", v.reason
    assert shown in v.reason.message
    assert all(a.candidate is None for a in v.attempts)
