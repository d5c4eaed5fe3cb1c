"""`skillc replay`: reproduced paths and fallbacks are accepted, divergences are typed, old traces replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.runtime import replay_file
from skillc.runtime.record import load_run
from tests.runtime.helpers import ECHO, checked, run
from tests.runtime.test_interpreter import LOOP

FIXTURES = Path(__file__).parent / "fixtures"

# The machines the version-1 fixtures were recorded with (by skillc 0.1.0, before the run record), verbatim.
GUARDED = """machine guarded {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var out: str
  var status: int
  start probe
  tool probe {
    call bash(command: "false")
    writes out = stdout, status = exit_code
    when status != 0 -> fallback
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""
GATE = """machine gate {
  var x: str
  start a
  model a {
    writes x
    prompt "Say."
    when x == "go" -> done
  }
  terminal done: success { requires x }
  fallback
}
"""
SPIN = """machine spin {
  var x: str
  counter n max 1
  start a
  model a {
    writes x
    prompt "Say."
    when x == "again" -> a { n += 1 }
    -> done
  }
  terminal done: success { requires x }
  fallback
}
"""


def _machine(text: str):
    import skillc

    return skillc.check(text, path="m.skm").machine  # GATE and SPIN fail the checker on purpose: still runnable


@pytest.mark.parametrize(("fixture", "text", "ending"), [
    ("v1-echo-success.jsonl", ECHO, "to `done` (success)"),
    ("v1-loop-retries.jsonl", LOOP, "to `done` (success)"),
    ("v1-guarded-fallback.jsonl", GUARDED, "as the trace did (edge: edge 1 of `probe` leads to the fallback)"),
    ("v1-gate-no-edge.jsonl", GATE, "as the trace did (no_edge: no edge fired)"),
    ("v1-spin-counter.jsonl", SPIN, "as the trace did (counter: counter `n` would reach 2, past its maximum 1)"),
    ("v1-loop-invalid-fallback.jsonl", LOOP, "as the trace did (invalid_output: no valid output after 1 attempts"),
])
def test_traces_of_skillc_0_1_0_replay_and_a_reproduced_fallback_is_accepted(fixture: str, text: str,
                                                                             ending: str) -> None:
    report = replay_file(_machine(text), text, FIXTURES / fixture)
    assert report.ok, report.message
    assert ending in report.message and report.visited == report.recorded


def test_a_new_guard_routed_fallback_run_says_why_and_replays(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    result = run(GUARDED, {"tools": {"probe": [{"stdout": "", "exit_code": 3}]}}, trace=trace)
    assert result.terminal == "fallback" and result.error is None
    assert result.reason is not None and (result.reason.kind, result.reason.state, result.reason.edge) == \
        ("edge", "probe", 0)
    footer = load_run(trace).footer
    assert footer is not None and footer.reason == result.reason and footer.error is None
    assert json.loads(trace.read_text().splitlines()[-1])["skillc.reason"]["kind"] == "edge"
    report = replay_file(checked(GUARDED), GUARDED, trace)
    assert report.ok and report.message.startswith("replayed 1 steps to `fallback` (failed), as the trace did")


def _rewrite(path: Path, out: Path, change) -> Path:
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for r in records:
        change(r)
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    return out


def test_a_replay_that_reaches_a_fallback_the_trace_did_not_fails(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    assert run(GUARDED, {"tools": {"probe": [{"stdout": "ok", "exit_code": 0}]}}, trace=trace).outcome == "success"
    tampered = _rewrite(trace, tmp_path / "x.jsonl",
                        lambda r: r.get("tool_result") and r["tool_result"].update(exit_code=1))
    report = replay_file(checked(GUARDED), GUARDED, tampered)
    assert not report.ok and "the replay reached the fallback (edge: edge 1 of `probe` leads to the fallback); " \
        "the trace ended in `done`" in report.message


def test_a_fallback_for_another_reason_is_not_a_reproduction(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    run(GUARDED, {"tools": {"probe": [{"stdout": "", "exit_code": 3}]}}, trace=trace)

    def other_reason(r: dict) -> None:
        if r["type"] == "footer":
            r["skillc.reason"] = {"kind": "no_edge", "message": "no edge fired"}
    report = replay_file(checked(GUARDED), GUARDED, _rewrite(trace, tmp_path / "x.jsonl", other_reason))
    assert not report.ok and "the trace ended in the fallback by no_edge, the replay by edge" in report.message


def test_a_divergence_is_a_typed_reason_on_the_result(tmp_path: Path) -> None:
    trace = tmp_path / "t.jsonl"
    script = {"outputs": {"think": [{"answer": "a"}], "judge_it": [{"verdict": "good"}]}}
    run(LOOP, script, {"question": "q"}, trace=trace)
    moved = _rewrite(trace, tmp_path / "x.jsonl",
                     lambda r: r.get("state") == "judge_it" and r.update(state="elsewhere"))
    report = replay_file(checked(LOOP), LOOP, moved)
    assert not report.ok and report.message == ("diverged at step 1: the trace recorded `elsewhere`, the machine is "
                                                "in `judge_it`")
    assert report.result is not None and report.result.reason is not None
    assert (report.result.reason.kind, report.result.reason.step) == ("divergence", 1)


def test_a_run_stopped_by_its_step_limit_replays_under_the_same_limit(tmp_path: Path) -> None:
    from skillc.runtime import Interpreter, RunOptions, ToolBox
    from skillc.runtime.executors.scripted import ScriptedExecutor

    trace = tmp_path / "t.jsonl"
    text = SPIN.replace('"again" -> a { n += 1 }', '"again" -> a')  # a cycle nothing pays for (SKM250)
    machine = _machine(text)
    result = Interpreter(machine, ScriptedExecutor({"outputs": {"a": [{"x": "again"}]}}), ToolBox(),
                         RunOptions(trace=trace, max_steps=3), text).run({})
    assert result.reason is not None and result.reason.kind == "step_limit" and result.steps == 3
    report = replay_file(machine, text, trace)
    assert report.ok, report.message


@pytest.mark.parametrize("command", ["replay", "score"])
def test_an_unreadable_trace_is_a_coded_diagnostic_on_the_command_line(tmp_path: Path, command: str) -> None:
    """The reader's coded finding reaches the user with its place, not as a bare message."""
    import subprocess
    import sys

    from tests.conftest import EXAMPLES

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"type": "header", "skillc.trace_version": 1}\n{not json\n')
    r = subprocess.run([sys.executable, "-m", "skillc", command, str(EXAMPLES / "livemath" / "livemath.skm"), str(bad)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "error[SKM522]" in r.stderr and f"{bad}:2:1" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_baseline_trace_is_refused_with_what_to_do_instead() -> None:
    """A native run has turns, not states: replay says so instead of blaming the machine's hash."""
    bench = Path(__file__).parent.parent / "bench" / "fixtures" / "score"
    text = (bench / "careful.skm").read_text()
    report = replay_file(checked(text), text, bench / "native-ok" / "trace.jsonl")
    assert not report.ok
    assert "native run" in report.message and "--mode native" in report.message and "hash" not in report.message
