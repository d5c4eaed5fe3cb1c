"""The results store: rows round-trip, torn tails are dropped, damage is reported, and a SIGKILLed bench resumes
without losing or repeating a cell."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from skillc.bench.results import Cell, Results, Row, matrix, open_writer, read_results
from skillc.diagnostics import Diagnostic

ROOT = Path(__file__).resolve().parents[2]


def _row(cell: Cell, **kw: object) -> Row:
    return Row(cell, True, False, steps=4, prompt_tokens=120, completion_tokens=30, latency_s=0.25, outcome="success",
               trace=f"traces/{cell.task}.jsonl", horizon=25, violated=("readback",), **kw)  # type: ignore[arg-type]


def _writer(path: Path):
    writer = open_writer(path)
    assert not isinstance(writer, Diagnostic), writer
    return writer


def test_rows_round_trip(tmp_path: Path) -> None:
    cells = matrix(["a", "b|c"], ["machine", "native"], ["scripted"], 2)
    assert len(cells) == 8 and len({c.key for c in cells}) == 8
    rows = [_row(c) for c in cells] + [Row(Cell("z", "machine", "x", 0), None, None, error="executor crashed")]
    with _writer(tmp_path / "out" / "results.jsonl") as writer:
        for row in rows[:3]:
            writer.append(row)
        writer.append_all(rows[3:])  # a group commit: whole lines, one fsync
    got = read_results(tmp_path / "out" / "results.jsonl")
    assert got == Results(tuple(rows))
    assert got.rows[0].total_tokens == 150


def test_cell_key_is_stable_and_unambiguous() -> None:
    assert Cell("q1", "machine", "local:gemma", 2).key == '["q1","machine","local:gemma",2]'
    assert Cell("a|b", "c", "d", 0).key != Cell("a", "b|c", "d", 0).key


def test_missing_file_is_empty_and_everything_is_pending(tmp_path: Path) -> None:
    results = read_results(tmp_path / "none.jsonl")
    cells = matrix(["a"], ["m"], ["e"], 3)
    assert results == Results(()) and results.pending(cells) == cells


def test_torn_last_line_is_dropped_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    a, b, c = matrix(["a", "b", "c"], ["m"], ["e"], 1)
    line_b = json.dumps(_row(b).to_json())
    path.write_text(json.dumps(_row(a).to_json()) + "\n" + line_b, encoding="utf-8")  # b's newline never landed
    got = read_results(path)
    assert got.torn and [r.cell for r in got.rows] == [a] and got.diagnostics == ()
    assert got.pending([a, b, c]) == [b, c]
    path.write_text(json.dumps(_row(a).to_json()) + "\n" + line_b[:40], encoding="utf-8")  # half of b written
    with _writer(path) as writer:
        writer.append(_row(b))
    got = read_results(path)
    assert not got.torn and [r.cell for r in got.rows] == [a, b] and got.diagnostics == ()


def test_damaged_and_duplicate_lines_are_reported_with_their_line(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    a, b = matrix(["a", "b"], ["m"], ["e"], 1)
    good = json.dumps(_row(a).to_json())
    bad_type = json.dumps({**_row(b).to_json(), "steps": -1})
    bad_outcome = json.dumps({**_row(b).to_json(), "outcome": "won"})
    old = json.dumps({**_row(b).to_json(), "v": 0})
    path.write_text("\n".join([good, "not json", bad_type, bad_outcome, old, good, "[1]"]) + "\n", encoding="utf-8")
    got = read_results(path)
    assert [r.cell for r in got.rows] == [a]
    found = [(str(d.code), d.span.start_pos[0] if d.span else 0, d.message) for d in got.diagnostics]
    assert [(c, line) for c, line, _ in found] == [
        ("SKM720", 2), ("SKM720", 3), ("SKM720", 4), ("SKM720", 5), ("SKM721", 6), ("SKM720", 7)]
    assert found[1][2] == "line 3 is `steps` is -1, not a count"
    assert found[2][2] == "line 4 is `outcome` is 'won', not one of success, partial, failed, unfinished"
    assert found[3][2] == "line 5 is a row of version 0; this skillc reads version 1"
    assert found[4][2] == 'line 6 is a second row for cell ["a","m","e",0]'
    assert got.diagnostics[4].severity.name == "WARNING"


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    first = _writer(path)
    second = open_writer(path)
    assert isinstance(second, Diagnostic) and str(second.code) == "SKM722"
    first.close()
    _writer(path).close()


BENCH = textwrap.dedent("""
    import sys, os, time
    from skillc.bench.results import Row, matrix, open_writer, read_results
    path, runs, gate = sys.argv[1], sys.argv[2], sys.argv[3]
    cells = matrix([f"t{i}" for i in range(40)], ["machine", "native"], ["scripted"], 3)
    writer = open_writer(path)
    assert not hasattr(writer, "code"), writer
    for n, cell in enumerate(read_results(path).pending(cells)):
        with open(runs, "a") as log:  # the cell "runs": its side effect is logged before its row is written
            log.write(cell.key + "\\n")
        deadline = time.monotonic() + 60  # the 31st cell waits for the gate: the test kills the bench here
        while n >= 30 and not os.path.exists(gate) and time.monotonic() < deadline:
            time.sleep(0.01)
        writer.append(Row(cell, True, True, steps=1, outcome="success"))
    print("done", flush=True)
""")


def test_sigkill_mid_bench_then_resume_loses_and_repeats_no_cell(tmp_path: Path) -> None:
    path, runs, gate = tmp_path / "results.jsonl", tmp_path / "runs.log", tmp_path / "go"
    cells = matrix([f"t{i}" for i in range(40)], ["machine", "native"], ["scripted"], 3)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", BENCH, str(path), str(runs), str(gate)], env=env,
                            stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (runs.exists() and runs.read_bytes().count(b"\n") > 30):  # the 31st cell is running
        assert proc.poll() is None and time.monotonic() < deadline, f"the bench ended or stalled (exit {proc.poll()})"
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    killed = read_results(path)
    assert len(killed.rows) == 30 and not killed.torn, "the bench was not killed mid-run"
    gate.touch()
    out = subprocess.run([sys.executable, "-c", BENCH, str(path), str(runs), str(gate)], env=env, capture_output=True,
                         timeout=60, check=True)
    assert out.stdout == b"done\n"
    final = read_results(path)
    assert final.diagnostics == () and not final.torn
    keys = [r.cell.key for r in final.rows]
    assert sorted(keys) == sorted(c.key for c in cells)  # none lost
    assert path.read_bytes().count(b"\n") == len(cells)  # none written twice
    executions = runs.read_text().split()
    # Only the cell in flight at the kill (run, row not yet durable) ran twice.
    assert len(executions) == len(cells) + 1 and executions.count(executions[30]) == 2
    assert final.pending(cells) == []
