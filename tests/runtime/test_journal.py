"""The journal's rows read back as typed records: committed steps as the run record's `Step`s, the trace they refill."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from skillc.runtime import Interpreter, Journal, RunOptions, ToolBox
from skillc.runtime.record import Step, load_run
from tests.runtime.helpers import ECHO, Recorder, checked


def _run(tmp_path: Path, journal: Journal, answer: str = "hi"):
    machine = checked(ECHO)
    options = RunOptions(journal=journal, trace=tmp_path / "t.jsonl", workdir=str(tmp_path))
    executor = Recorder(lambda _request: json.dumps({"answer": answer}))
    box = ToolBox({"bash": lambda command: {"stdout": command, "exit_code": 0}})
    return machine, box, Interpreter(machine, executor, box, options, ECHO).run({"q": "?"})


def test_committed_steps_read_back_as_the_traces_step_records(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite")
    _, _, result = _run(tmp_path, journal)
    steps = journal.steps(result.run_id)
    assert all(isinstance(s, Step) for s in steps)
    assert [(s.index, s.state) for s in steps] == [(0, "think"), (1, "show")]
    assert steps == list(load_run(tmp_path / "t.jsonl").steps)


def test_a_step_committed_but_not_written_is_refilled_into_the_trace_on_resume(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite")
    machine, box, result = _run(tmp_path, journal)
    trace = tmp_path / "t.jsonl"
    lines = trace.read_text().splitlines()
    written = [json.loads(line) for line in lines if json.loads(line).get("type") == "step"]
    # as after a crash between the journal's commit of step 1 and the trace's write of it: no step 1, no footer
    trace.write_text("\n".join(lines[:2]) + "\n")
    db = sqlite3.connect(tmp_path / "runs.sqlite")
    db.execute("UPDATE runs SET status = 'running' WHERE run_id = ?", (result.run_id,))
    db.commit()
    db.close()
    options = RunOptions(journal=journal, trace=trace, workdir=str(tmp_path))
    resumed = Interpreter(machine, Recorder(lambda _r: "unused"), box, options, ECHO).resume(result.run_id)
    assert resumed.outcome == "success"
    refilled = [json.loads(line) for line in trace.read_text().splitlines() if json.loads(line).get("type") == "step"]
    assert refilled == written


def test_a_row_that_is_json_but_not_a_step_is_left_out(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "runs.sqlite")
    run_id = journal.start("m.skm", "hash", {"q": "?"}, "scripted:x", None)
    journal.commit_step(run_id, 0, "think", "show", {"q": "?"}, {"type": "step"})
    journal.commit_step(run_id, 1, "show", "done", {"q": "?"}, {"type": "step", "step": 1, "state": "show"})
    assert [(s.index, s.state) for s in journal.steps(run_id)] == [(1, "show")]
