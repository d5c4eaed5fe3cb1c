"""`skillc dot --trace` for native and prompt-only traces: tool calls mapped onto tool states, the path inferred."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import skillc
from skillc.render import overlay_from_trace, render_image, to_dot, to_mermaid
from skillc.render.overlay import shortest_path
from skillc.runtime import RunOptions, ToolBox
from skillc.runtime.baselines import run_baseline
from skillc.runtime.executors.scripted import ScriptedExecutor
from tests.runtime.test_baselines import FINISH, INPUTS, READ, SKILL, WRITE
from tests.runtime.test_baselines import MACHINE as LIVEMATH


def _trace(tmp_path: Path, replies: list, m=None, mode: str = "native", inputs=None) -> Path:
    m = m or skillc.check(LIVEMATH).machine
    trace = tmp_path / f"{mode}.jsonl"
    run_baseline(m, mode, ScriptedExecutor({"outputs": {mode: replies}}), ToolBox.default(cwd=str(tmp_path)),
                 RunOptions(trace=trace, max_steps=20), INPUTS if inputs is None else inputs, SKILL)
    return trace


def test_a_native_run_is_drawn_along_the_tool_states_its_calls_fit(tmp_path: Path) -> None:
    m = skillc.check(LIVEMATH).machine
    ov = overlay_from_trace(m, _trace(tmp_path, [WRITE, READ, FINISH]))
    # `printf %s …` fits `write`, `cat …` fits `read_back` (both call bash(command)); the states between are inferred
    assert ov.visits == {"analyze": 1, "review_options": 1, "pick": 1, "judge_complete": 1, "write": 1,
                         "read_back": 1, "verified": 1}
    assert ov.terminal == "verified" and ("read_back", 1) in ov.final_path and ("write", 1) in ov.final_path
    assert ov.edges[("pick", 1)] == 1 and ("repair", 0) not in ov.edges
    assert "inferred" in ov.note and "2 tool calls" in ov.note and ov.unmatched == ()


def test_argument_text_then_order_along_the_graph_decide(tmp_path: Path) -> None:
    m = skillc.check(LIVEMATH).machine
    ov = overlay_from_trace(m, _trace(tmp_path, [READ, READ, FINISH]))
    # two `cat` calls: both fit read_back; from read_back it cannot be reached again, so the second one jumps there
    assert ov.visits["read_back"] == 2 and "write" in ov.visits
    twice = skillc.check("""machine twice {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var a: str
  var b: str
  start first
  tool first {
    call bash(command: "ls")
    writes a = stdout
    -> second
  }
  tool second {
    call bash(command: "ls")
    writes b = stdout
    -> done
  }
  terminal done: success { requires a, b }
  fallback
}
""").machine
    ls = {"action": "bash", "args": {"command": "ls"}}
    ov = overlay_from_trace(twice, _trace(tmp_path, [ls, ls, {**FINISH, "evidence": {}}], m=twice, inputs={}))
    assert ov.visits == {"first": 1, "second": 1, "done": 1} and ov.final_path == {("first", 0), ("second", 0)}


def test_a_call_no_tool_state_fits_is_listed_and_a_failed_run_ends_where_it_can(tmp_path: Path) -> None:
    m = skillc.check(LIVEMATH).machine
    odd = {"action": "bash", "args": {"command": "echo hi"}}
    ov = overlay_from_trace(m, _trace(tmp_path, [odd, {"action": "finish", "outcome": "failed"}]))
    # "echo hi" has bash's argument names, so it fits a bash state (no literal matches): the nearest one, `write`
    assert ov.visits["write"] == 1 and ov.terminal == "fallback"
    trace = tmp_path / "by-hand.jsonl"
    records = [{"type": "header", "skillc.mode": "prompt-only"},
               {"type": "step", "step": 0, "state": "prompt-only", "tool_call": {"tool": "bash", "args": {"cmd": "x"}}},
               {"type": "footer", "skillc.outcome": "partial", "skillc.terminal": "prompt-only"}]
    trace.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    ov = overlay_from_trace(m, trace)
    assert ov.unmatched == (0,) and "fit no tool state (steps 0)" in ov.note and ov.terminal == "unverified"


def test_shortest_path_needs_an_edge_unless_empty_is_allowed() -> None:
    m = skillc.check(LIVEMATH).machine
    assert shortest_path(m, "analyze", ["analyze"], allow_empty=True) == []
    assert shortest_path(m, "pick", ["pick"], allow_empty=False) == [("pick", 0), ("repair", 0)]
    assert shortest_path(m, "verified", ["analyze"], allow_empty=False) is None


def test_the_drawing_says_the_path_is_inferred(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc import cli

    m = skillc.check(LIVEMATH).machine
    trace = _trace(tmp_path, [WRITE, READ, FINISH])
    dot = to_dot(m, overlay_from_trace(m, trace))
    assert "native run: path inferred from its 2 tool calls" in dot
    assert '"read_back" -> "verified"' in dot and 'color="#d93025"' in dot.split('"read_back" -> "verified"')[1]
    assert "note left of s_analyze: native run#58; path inferred" in to_mermaid(m, overlay_from_trace(m, trace))
    result = CliRunner().invoke(cli.main, ["dot", str(LIVEMATH), "--trace", str(trace)])
    assert result.exit_code == 0 and result.output == dot
    if shutil.which("dot") is None:
        pytest.skip("Graphviz is not installed")
    svg = render_image(dot, "svg").decode()
    assert "path inferred" in svg and "×1" in svg
