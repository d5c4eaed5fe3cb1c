"""The one gate (skillc.improve.gate): check, then replay — refine's and evolve's candidates both pass through it."""

from __future__ import annotations

from pathlib import Path

from skillc.improve import codes
from skillc.improve.archive import ArchivedTrace, commit, open_archive
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.evolve.gate import archive_gate
from skillc.improve.evolve.state import Node
from skillc.improve.gate import Entry, gate, incremental
from skillc.improve.replay import ReplayPath
from tests.render.test_diff import machine

MACHINE = """machine m {
  var notes: str
  var plan: str
  start a

  model a {
    writes notes
    prompt "write notes"
    -> done
  }

  model b {
    writes plan
    prompt "plan"
    -> done
  }

  terminal done: success
  fallback
}
"""
RENAMED = MACHINE.replace("model a", "model z").replace("start a", "start z")
REWORDED = MACHINE.replace('prompt "plan"', 'prompt "plan it"')  # no replay can see a prompt
REROUTED = MACHINE.replace("    prompt \"write notes\"\n    -> done", "    prompt \"write notes\"\n    -> b")


def entry(text: str = "hi") -> Entry:
    """A trace accepted on MACHINE: `a` writes notes, then the run ends in `done`."""
    trace = DevTrace((Event("model", output={"notes": text}, text=text, state="a"),), "success", "skillc",
                     mode="machine")
    return trace, Alignment(trace.id, ("a",))


def test_a_candidate_that_checks_and_replays_passes() -> None:
    passage = gate(MACHINE, "m.skm", [entry()], subject="the candidate")
    assert passage.ok and passage.failure is None and passage.machine is not None
    assert [ok for _, v in passage.replays for ok in [v.ok]] == [True] and passage.skipped == 0


def test_a_candidate_that_does_not_check_is_refused_with_skm821_and_the_error() -> None:
    passage = gate(MACHINE.replace("-> done", "-> nowhere"), "m.skm", [entry()], subject="the candidate")
    assert not passage.ok and passage.machine is None and passage.replays == ()
    refusal = passage.refusal
    assert refusal is not None and refusal.diagnostic.code == codes.CANDIDATE_FAILS_CHECK
    assert refusal.error is not None and "nowhere" in refusal.error.message
    assert refusal.diagnostic.message.startswith("the candidate does not check: SKM102")


def test_a_candidate_that_breaks_an_accepted_trace_is_refused_with_skm822_and_the_trace() -> None:
    trace, alignment = entry()
    passage = gate(RENAMED, "m.skm", [(trace, alignment)], subject="the candidate")
    refusal = passage.refusal
    assert refusal is not None and refusal.diagnostic.code == codes.CANDIDATE_BREAKS_REPLAY
    assert refusal.trace is trace and refusal.verdict is not None and not refusal.verdict.ok
    assert f"does not replay accepted trace {trace.id[:12]}" in refusal.diagnostic.message
    own = gate(RENAMED, "m.skm", [], subject="the candidate", own=(trace, alignment))
    assert own.refusal is not None and "does not replay the trace itself" in own.refusal.diagnostic.message


def test_an_unchanged_candidate_is_the_old_machine_unchecked_and_unreplayed() -> None:
    old = machine(MACHINE)
    passage = gate("not even parsed", "m.skm", [entry()], subject="x", old=old, select=lambda *_: [], unchanged=True)
    assert passage.ok and passage.machine is old and passage.replays == () and passage.skipped == 1


def _archived(tmp_path: Path) -> Path:
    """MACHINE beside an archive that accepted two traces, each through `a` to `done`."""
    path = tmp_path / "m.skm"
    path.write_text(MACHINE, encoding="utf-8")
    archive, _ = open_archive(path)
    assert archive is not None
    commit(path, MACHINE, archive, [ArchivedTrace(t, a, ReplayPath(("a", "done"), (("a", 0),)))
                                    for t, a in (entry("one"), entry("two"))])
    return path


def test_incremental_replay_skips_the_traces_an_edit_cannot_affect(tmp_path: Path) -> None:
    path = _archived(tmp_path)
    archive, _ = open_archive(path)
    assert archive is not None
    entries = [(e.trace, e.alignment) for e in archive.entries.values()]
    old, select = machine(MACHINE), incremental(archive)
    reworded = gate(REWORDED, "m.skm", entries, subject="c", old=old, select=select)
    assert reworded.ok and reworded.replays == () and reworded.skipped == 2  # `b` is entered by no trace
    rerouted = gate(REROUTED, "m.skm", entries, subject="c", old=old, select=select)
    assert len(rerouted.replays) == 2 and rerouted.skipped == 0  # `a`'s edge changed: both replayed
    full = gate(REWORDED, "m.skm", entries, subject="c", old=old)
    assert len(full.replays) == 2 and full.skipped == 0  # no select: every entry


def test_evolve_gets_the_incremental_gate_from_a_fresh_archive_and_the_full_one_from_a_stale_one(
        tmp_path: Path) -> None:
    path = _archived(tmp_path)
    fresh, problems = archive_gate(path)
    assert fresh is not None and problems == [] and fresh.select is not None and fresh.old is not None
    assert fresh(Node(1, REWORDED)) is None and fresh(Node(2, RENAMED)) is not None
    assert fresh.refusal is not None and fresh.refusal.diagnostic.code == codes.CANDIDATE_BREAKS_REPLAY
    path.write_text(MACHINE.replace('"plan"', '"plan by hand"'), encoding="utf-8")
    stale, problems = archive_gate(path)
    assert stale is not None and stale.select is None and [d.code for d in problems] == [codes.ARCHIVE_OUT_OF_STEP]
