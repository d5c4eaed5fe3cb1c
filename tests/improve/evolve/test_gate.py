"""The check/replay gate on real machines: `skillc check` and the refine replayer decide, nothing is faked."""

from __future__ import annotations

from pathlib import Path

from skillc.improve import codes
from skillc.improve.archive import ArchivedTrace, commit, open_archive
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.evolve.gate import archive_gate, check_gate, replay_gate
from skillc.improve.evolve.state import Node
from skillc.improve.replay import ReplayPath

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
    trace = _accepted()[0]
    assert reason == (f"no longer replays accepted trace {trace.id[:12]} (a success run): the machine ended in "
                      "`done` before event 0 (aligned to `a`); the candidate's path: b → done")
    assert replay_gate([])(Node(1, RENAMED)) is None  # no accepted traces: the check alone decides
    broken = gate(Node(2, MACHINE.replace("start a", "start z")))
    assert broken is not None and broken.startswith("fails skillc check")


def test_the_archive_gate_replays_the_traces_refine_accepted_beside_the_machine(tmp_path: Path) -> None:
    machine = tmp_path / "m.skm"
    machine.write_text(MACHINE, encoding="utf-8")
    empty, problems = archive_gate(machine)  # no archive yet: the check alone decides
    assert empty is not None and empty.entries == () and problems == []
    assert not (tmp_path / "m.archive").exists()  # and no archive folder is created for it
    archive, _ = open_archive(machine)
    assert archive is not None
    trace, alignment = _accepted()
    commit(machine, MACHINE, archive, [ArchivedTrace(trace, alignment, ReplayPath(("a", "done"), (("a", 0),)))])
    gate, problems = archive_gate(machine)
    assert gate is not None and problems == [] and gate.entries == ((trace, alignment),)
    assert gate(Node(0, MACHINE)) is None
    reason = gate(Node(1, RENAMED))
    assert reason is not None and reason.startswith(f"no longer replays accepted trace {trace.id[:12]}")


def test_the_archive_gate_reports_a_damaged_archive_instead_of_gating_without_it(tmp_path: Path) -> None:
    machine = tmp_path / "m.skm"
    machine.write_text(MACHINE, encoding="utf-8")
    (tmp_path / "m.archive").mkdir()
    (tmp_path / "m.archive" / "manifest.json").write_text("{not json", encoding="utf-8")
    gate, problems = archive_gate(machine)
    assert gate is None and [d.code for d in problems] == [codes.DAMAGED_ARCHIVE]
