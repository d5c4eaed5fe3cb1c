"""Baselines (native, prompt-only) and scoring: compliance is judged separately from success (the loop itself:
test_baselines.py)."""

from __future__ import annotations

import json
from pathlib import Path

import skillc
from skillc.runtime import RunOptions, ToolBox
from skillc.runtime.baselines import render_prose, run_baseline
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.record import load_run
from tests.conftest import EXAMPLES

MACHINE = EXAMPLES / "livemath" / "livemath.skm"
INPUTS = {"question": "What is 2+2?", "options": ["3", "4", "5", "6", "7"]}


def _machine():
    return skillc.check(MACHINE).machine


def _native(tmp_path: Path, actions: list[dict], mode: str = "native"):
    trace = tmp_path / f"{mode}.jsonl"
    skill = (EXAMPLES / "livemath" / "SKILL.md").read_text()
    result = run_baseline(_machine(), mode, ScriptedExecutor({"outputs": {mode: actions}}),
                          ToolBox.default(cwd=str(tmp_path)), RunOptions(trace=trace, max_steps=20), INPUTS, skill)
    return result, trace


def test_prose_rendering_carries_instructions_edges_and_rules() -> None:
    prose = render_prose(_machine())
    assert "Begin at step `analyze`." in prose
    assert "if readback == str(choice), continue with `verified`." in prose
    assert "- Always write the final letter to answer.txt." in prose


def _score(trace: Path, workdir: Path | None = None):
    """A baseline run scored the way the bench scores it: the machine's rules as effects, livemath's verifier."""
    from skillc.bench.score import score_run
    from skillc.bench.verify import FileVerifier

    return score_run(load_run(trace), trace, requirements=(), workdir=workdir,
                     verifier=FileVerifier("answer.txt", equals="B"), machine=_machine())


def test_score_separates_compliance_from_success(tmp_path: Path) -> None:
    """A real native run scored: success from the file it left, RFC from its calls and the evidence it handed over."""
    write = {"action": "bash", "args": {"command": "printf %s B > answer.txt"}}
    read = {"action": "bash", "args": {"command": "cat answer.txt"}}
    _, ok_trace = _native(tmp_path, [write, read, {"action": "finish", "outcome": "success",
                                                   "evidence": {"choice": "B", "readback": "B"}}])
    sc = _score(ok_trace, tmp_path)
    assert (sc.success, sc.rfc, sc.outcome) == (True, True, "success")
    assert {v.status for v in sc.state_rules} == {"not applicable"}
    _, bad_trace = _native(tmp_path, [write, {"action": "finish", "outcome": "success", "evidence": {"choice": "B"}}])
    sc = _score(bad_trace, tmp_path)
    assert sc.success is True and sc.rfc is False and sc.outcome == "success"  # the file is right; the run was not
    assert sc.compliance.violated == ("rule-6", "evidence")
    assert next(v.reason for v in sc.compliance.verdicts if v.id == "evidence") == "evidence missing: readback"


def test_score_checks_tool_rules_in_every_mode(tmp_path: Path) -> None:
    text = """machine careful {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  tool rm(path: str) -> (exit_code: int)
  var out: str
  start look

  tool look {
    call bash(command: "ls")
    writes out = stdout
    -> done
  }

  terminal done: success { requires out }
  fallback
  rule forbid rm "Never delete files."
  rule required bash "Always look first."
}
"""
    from skillc.bench.score import score_run

    machine = skillc.check(text).machine
    trace = tmp_path / "t.jsonl"
    records = [{"type": "header", "skillc.mode": "native"},
               {"type": "step", "step": 0, "state": "native", "tool_call": {"tool": "rm", "args": {"path": "x"}}},
               {"type": "footer", "skillc.outcome": "success", "skillc.terminal": "native",
                "skillc.evidence": {"out": "x"}}]
    trace.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    sc = score_run(load_run(trace), trace, requirements=(), workdir=None, verifier=None, machine=machine)
    assert sc.rfc is False and sc.success is None
    reasons = {v.quote: (v.status, v.reason) for v in sc.compliance.verdicts}
    assert reasons["Never delete files."] == ("violated", "call 1 is `rm`")
    assert reasons["Always look first."] == ("violated", "no call of `bash`")
