"""Baselines (native, prompt-only) and scoring: compliance is judged separately from success."""

from __future__ import annotations

import json
from pathlib import Path

import skillc
from skillc.runtime import RunOptions, ToolBox
from skillc.runtime.baselines import render_prose, run_baseline
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.score import score_trace
from skillc.runtime.trace import read_trace
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


def test_native_mode_puts_the_skill_and_the_whole_transcript_in_every_prompt(tmp_path: Path) -> None:
    actions = [{"action": "bash", "args": {"command": "printf %s B > answer.txt"}},
               {"action": "bash", "args": {"command": "cat answer.txt"}},
               {"action": "finish", "outcome": "success", "evidence": {"choice": "B", "readback": "B"}}]
    result, trace = _native(tmp_path, actions)
    assert (result.outcome, result.steps) == ("success", 3)
    assert (tmp_path / "answer.txt").read_text() == "B"
    header, steps, footer = read_trace(trace)
    assert header["skillc.mode"] == "native"
    sizes = [s["skillc.prompt_chars"] for s in steps]
    assert sizes == sorted(sizes) and sizes[0] > len("Always write the final letter to answer.txt.")
    assert steps[0]["tool_call"] == {"tool": "bash", "args": {"command": "printf %s B > answer.txt"}}
    assert steps[1]["tool_result"]["stdout"] == "B"
    assert footer["skillc.outcome"] == "success"


def test_bad_actions_become_observations_not_crashes(tmp_path: Path) -> None:
    actions = ["not json", {"action": "rm", "args": {}}, {"action": "bash", "args": {"cmd": "x"}},
               {"action": "finish", "outcome": "partial", "evidence": {"choice": "B", "readback": ""}}]
    result, trace = _native(tmp_path, actions, mode="prompt-only")
    assert result.outcome == "partial"
    _, steps, _ = read_trace(trace)
    assert [s["tool_result"].get("error", "")[:20] for s in steps[:3]] == [
        "reply with one JSON ", "no tool `rm`", "unknown argument `cm"]


def test_prose_rendering_carries_instructions_edges_and_rules() -> None:
    prose = render_prose(_machine())
    assert "Begin at step `analyze`." in prose
    assert "if readback == str(choice), continue with `verified`." in prose
    assert "- Always write the final letter to answer.txt." in prose


def test_score_separates_compliance_from_success(tmp_path: Path) -> None:
    ok, ok_trace = _native(tmp_path, [{"action": "finish", "outcome": "success",
                                       "evidence": {"choice": "B", "readback": "B"}}])
    sc = score_trace(_machine(), ok_trace)
    assert sc.compliant and sc.outcome == "success"
    assert any("not observable in native mode" in u for u in sc.unverifiable)
    _, bad_trace = _native(tmp_path, [{"action": "finish", "outcome": "success", "evidence": {"choice": "B"}}])
    sc = score_trace(_machine(), bad_trace)
    assert not sc.compliant and sc.outcome == "success"
    assert sc.violations == ("terminal evidence missing: readback",)


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
    machine = skillc.check(text).machine
    trace = tmp_path / "t.jsonl"
    records = [{"type": "header", "skillc.mode": "native"},
               {"type": "step", "step": 0, "state": "native", "tool_call": {"tool": "rm", "args": {"path": "x"}}},
               {"type": "footer", "skillc.outcome": "success", "skillc.terminal": "native",
                "skillc.evidence": {"out": "x"}}]
    trace.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    sc = score_trace(machine, trace)
    assert not sc.compliant
    assert any("forbidden `rm` ran at step 0" in v for v in sc.violations)
    assert any("required `bash` never ran" in v for v in sc.violations)
