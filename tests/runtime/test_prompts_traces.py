"""What a state sees (only its reads), prompt size over long horizons, traces, redaction, replay."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from skillc.runtime.trace import read_trace
from tests.conftest import EXAMPLES, ROOT
from tests.runtime.helpers import Recorder, checked, run

WIDE = """machine wide {
  input public_a: str
  input secret_b: str
  var note_c: str
  var note_d: str
  var label_e: enum { yes, no }

  start first

  model first {
    reads public_a
    writes note_c
    prompt "Summarise public_a."
    -> second
  }

  model second {
    reads note_c
    writes note_d
    prompt "Refine the note."
    -> third
  }

  judge third {
    reads note_d
    writes label_e
    prompt "Is the note fine?"
    when label_e == no -> redo
    -> done
  }

  terminal done: success { requires note_d }
  terminal redo: partial { requires note_d }
  fallback
}
"""


def test_no_undeclared_value_ever_appears_in_a_prompt() -> None:
    sentinels = {"public_a": "SENTINEL-A-1f3", "secret_b": "SENTINEL-B-9c2"}
    answers = {"first": {"note_c": "SENTINEL-C-77e"}, "second": {"note_d": "SENTINEL-D-a01"},
               "third": {"label_e": "yes"}}
    rec = Recorder(lambda req: json.dumps(answers[req.state]))
    r = run(WIDE, {}, sentinels, executor=rec)
    assert r.outcome == "success"
    machine = checked(WIDE)
    values = {**sentinels, "note_c": "SENTINEL-C-77e", "note_d": "SENTINEL-D-a01"}
    for req in rec.requests:
        text = json.dumps(req.messages)
        reads = machine.states[req.state].reads
        for var, value in values.items():
            assert (value in text) == (var in reads), (req.state, var)
        assert "SENTINEL-B" not in text and "secret_b" not in text


def test_prompt_size_does_not_grow_with_the_number_of_steps() -> None:
    loop = """machine counter_loop {
  var note: str = ""
  counter steps max 200

  start work

  model work {
    reads note
    writes note
    prompt "Update the note with the latest observation."
    when steps < 200 -> work { steps += 1 }
    -> done
  }

  terminal done: success
  fallback
}
"""
    rec = Recorder(lambda req: json.dumps({"note": "n" * 40}))
    r = run(loop, {}, executor=rec)
    assert r.outcome == "success" and len(rec.requests) == 201
    sizes = {len(json.dumps(req.messages)) for req in rec.requests[1:]}
    assert len(sizes) == 1  # the same size at step 2 and at step 200


def test_trace_records_and_secret_redaction(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRETVALUE-123456")
    answers = {"first": {"note_c": "mentions sk-test-SECRETVALUE-123456 by accident"},
               "second": {"note_d": "d"}, "third": {"label_e": "no"}}
    trace = tmp_path / "t.jsonl"
    r = run(WIDE, {}, {"public_a": "a", "secret_b": "b"}, executor=Recorder(lambda req: json.dumps(answers[req.state])),
            trace=trace)
    assert r.outcome == "partial"
    raw = trace.read_text()
    assert "SECRETVALUE" not in raw and "[redacted]" in raw
    header, steps, footer = read_trace(trace)
    assert header["skillc.machine"] == "wide" and len(header["skillc.machine_hash"]) == 16
    assert header["inputs"] == {"public_a": "a", "secret_b": "b"}
    assert [s["state"] for s in steps] == ["first", "second", "third"]
    judge = steps[2]
    assert judge["label"] == "no" and judge["kind"] == "judge" and judge["target"] == "redo" and judge["edge"] == 0
    for key in ("gen_ai.operation.name", "gen_ai.request.model", "gen_ai.usage.input_tokens",
                "gen_ai.usage.output_tokens", "skillc.latency_ms", "skillc.retries", "inputs", "output"):
        assert key in steps[0], key
    assert footer["skillc.outcome"] == "partial" and footer["skillc.evidence"] == {"note_d": "d"}


def _skillc(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120)


LIVEMATH_SCRIPT = {"outputs": {
    "analyze": [{"restatement": "2+2", "work": "2+2=4", "result": "4"}],
    "review_options": [{"fit_A": "contradicts", "fit_B": "fits", "fit_C": "contradicts", "fit_D": "contradicts",
                        "fit_E": "contradicts"}],
    "pick": [{"choice": "B", "doubt": "", "sanity_check": "ok"}],
    "judge_complete": [{"completeness": "complete"}]}}


def test_run_and_replay_from_the_command_line(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps(LIVEMATH_SCRIPT))
    machine = EXAMPLES / "livemath" / "livemath.skm"
    trace = tmp_path / "run.jsonl"
    r = _skillc("run", str(machine), "--input", "question=What is 2+2?", "--input", 'options=["3","4","5","6","7"]',
                "--executor", f"scripted:{script}", "--trace", str(trace), "--workdir", str(tmp_path),
                "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 0, r.stderr
    assert "outcome: success (terminal `verified`)" in r.stdout
    assert (tmp_path / "answer.txt").read_text() == "B"
    r = _skillc("replay", str(machine), str(trace))
    assert r.returncode == 0 and r.stdout.startswith("ok: replayed 6 steps to `verified`")
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    for rec in records:
        if rec.get("state") == "read_back":  # the file held a trailing newline: the guard, not a model, sees it
            rec["tool_result"]["stdout"] = rec["output"]["readback"] = "B\n"
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("\n".join(json.dumps(x) for x in records) + "\n")
    r = _skillc("replay", str(machine), str(tampered))
    assert r.returncode == 1
    assert "the trace ended success, the replay ends partial" in r.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    r = _skillc("replay", str(machine), str(bad))
    assert r.returncode == 2 and "not JSON" in r.stderr and "Traceback" not in r.stderr


def test_run_refuses_unchecked_machines_and_bad_inputs(tmp_path: Path) -> None:
    broken = tmp_path / "b.skm"
    broken.write_text(WIDE.replace("reads note_c\n", "reads note_c, note_d\n"))
    r = _skillc("run", str(broken), "--executor", "scripted:nothing.json")
    assert r.returncode == 1 and "SKM210" in r.stdout and "only checked machines run" in r.stderr
    good = tmp_path / "g.skm"
    good.write_text(WIDE)
    script = tmp_path / "s.json"
    script.write_text("{}")
    r = _skillc("run", str(good), "--executor", f"scripted:{script}", "--input", "public_a=x",
                "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 2 and "input `secret_b` (str) is required" in r.stderr
    r = _skillc("run", str(good), "--executor", "gpt:4", "--input", "public_a=x", "--input", "secret_b=y",
                "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 2 and "unknown executor" in r.stderr
    script.write_text("[1, 2]")
    r = _skillc("run", str(good), "--executor", f"scripted:{script}", "--input", "public_a=x", "--input",
                "secret_b=y", "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 2 and "a script is an object" in r.stderr and "Traceback" not in r.stderr
