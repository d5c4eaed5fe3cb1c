"""The check/replay gate on real machines: `skillc check` and the refine replayer decide, nothing is faked."""

from __future__ import annotations

from skillc.evolve.gate import check_gate, replay_gate
from skillc.evolve.state import Node
from skillc.frontends.refine.events import Alignment, DevTrace, Event

MACHINE = """machine m {
  var notes: str
  start a

  model a {
    writes notes
    prompt "write notes"
    -> done
  }

  terminal done: success
  fallback
}
"""
RENAMED = MACHINE.replace("model a", "model b").replace("start a", "start b")


def _accepted() -> tuple[DevTrace, Alignment]:
    trace = DevTrace((Event("model", output={"notes": "hi"}, text="hi", state="a"),), "success", "skillc",
                     mode="machine")
    return trace, Alignment(trace.id, ("a",))


def test_the_check_gate_passes_a_checked_machine_and_names_the_first_error() -> None:
    assert check_gate(Node(0, MACHINE)) is None
    reason = check_gate(Node(3, MACHINE.replace("-> done", "-> nowhere"), name="typo"))
    assert reason is not None and "SKM102" in reason and "nowhere" in reason
    assert check_gate(Node(1, "machine {")) is not None


def test_the_replay_gate_refuses_a_candidate_that_breaks_an_accepted_trace() -> None:
    gate = replay_gate([_accepted()])
    assert gate(Node(0, MACHINE)) is None
    reason = gate(Node(1, RENAMED))
    assert reason is not None and reason.startswith("no longer replays trace") and "`a`" in reason
    assert replay_gate([])(Node(1, RENAMED)) is None  # no accepted traces: the check alone decides
    broken = gate(Node(2, MACHINE.replace("start a", "start z")))
    assert broken is not None and broken.startswith("fails skillc check")
