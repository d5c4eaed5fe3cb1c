"""Tool sources apart from executors: real tools, scripted tools, replayed tools, and older stand-in executors."""

from __future__ import annotations

import json

import pytest

from skillc.runtime import Interpreter, RunError, RunOptions, ToolBox
from skillc.runtime.executors.base import BaseExecutor
from skillc.runtime.toolsource import ScriptedTools, ToolSource, tools_for
from tests.runtime.helpers import ECHO, Recorder, checked

TWO = """machine two {
  tool fetch(key: str) -> (value: str)
  tool store(value: str) -> (ok: bool)
  var got: str
  var saved: bool
  start get
  tool get {
    call fetch(key: "k")
    writes got = value
    -> put
  }
  tool put {
    reads got
    call store(value: got)
    writes saved = ok
    -> done
  }
  terminal done: success { requires got, saved }
  fallback
}
"""


def _never(**_: object) -> dict:
    raise AssertionError("a real tool ran")


def test_scripted_tools_answer_their_states_and_pass_the_rest_to_the_real_tools() -> None:
    machine = checked(TWO)
    stored = []
    box = ToolBox({"store": lambda value: stored.append(value) or {"ok": True}})
    source = ScriptedTools({"get": [{"value": "v1"}]}, box)
    assert isinstance(source, ToolSource) and isinstance(box, ToolSource)
    assert source.missing(machine) == []  # `fetch` is called only by a scripted state
    assert ScriptedTools({}, box).missing(machine) == ["fetch"]
    result = Interpreter(machine, BaseExecutor(), source, RunOptions(), TWO).run({})
    assert result.outcome == "success" and result.evidence == {"got": "v1", "saved": True} and stored == ["v1"]


def test_a_tool_nobody_can_answer_is_refused_before_the_run() -> None:
    with pytest.raises(RunError, match="no implementation for tool `fetch`"):
        Interpreter(checked(TWO), BaseExecutor(), ScriptedTools({"put": [{"ok": True}]}, ToolBox()), RunOptions(), TWO)


def test_a_scripted_executor_brings_its_tools_as_a_source_over_the_real_ones() -> None:
    from skillc.runtime.executors.scripted import ScriptedExecutor

    executor = ScriptedExecutor({"tools": {"get": [{"value": "a"}, {"value": "b"}]}})
    box = ToolBox({"store": lambda value: {"ok": value == "a"}, "fetch": _never})
    layered = tools_for(executor, box)
    assert isinstance(layered, ScriptedTools) and layered.over is box
    assert tools_for(BaseExecutor(), box) is box
    machine = checked(TWO)
    assert Interpreter(machine, executor, box, RunOptions(), TWO).run({}).evidence == {"got": "a", "saved": True}


def test_replayed_tools_never_call_a_real_tool(tmp_path) -> None:
    from skillc.runtime.executors.replay import ReplayedTools, ReplayExecutor

    trace = tmp_path / "t.jsonl"
    machine = checked(ECHO)
    Interpreter(machine, Recorder(lambda r: json.dumps({"answer": "x"})), ToolBox({"bash": lambda command: {
        "stdout": "recorded", "exit_code": 0}}), RunOptions(trace=trace), ECHO).run({"q": "?"})
    executor = ReplayExecutor(trace)
    source = tools_for(executor, ToolBox({"bash": _never}))
    assert isinstance(source, ReplayedTools) and source.missing(machine) == []
    result = Interpreter(machine, executor, ToolBox({"bash": _never}), RunOptions(retries=0), ECHO).run({"q": "?"})
    assert result.evidence == {"out": "recorded"}
