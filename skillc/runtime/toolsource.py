"""Where a tool state's results come from: real tools, a script, a recorded trace — apart from the executor.

An `Executor` answers model and judge requests; a `ToolSource` answers tool
states. `ToolBox` (real implementations) is one; `ScriptedTools` answers some
states from a script and passes the rest on; `replay:` traces bring their own
(`executors/replay.py`). An executor made from a file that also holds tool
results offers them with `tool_source(over)`, and `tools_for` layers that over
the tools a run was given, so callers keep passing one executor and one tool box.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from skillc.ir.machine import Machine, Tool
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.tools import ToolError


@runtime_checkable
class ToolSource(Protocol):
    """Answers tool states: `result` raises ToolError (or ExecutorError) for a call that fails."""

    def missing(self, machine: Machine) -> list[str]:
        """Tools the machine's states call that this source cannot answer for."""
        ...

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        """The results of calling `tool` with `args` in `state`."""
        ...


def _calls(machine: Machine) -> list[tuple[str, str]]:
    """(state, tool) of every tool state."""
    return [(s.name, s.call.tool) for s in machine.states.values() if s.call is not None]


class ScriptedTools:
    """Results per state from a script (used in order, the last one repeats); other states go to `over`."""

    def __init__(self, results: Mapping[str, list[Value]], over: ToolSource,
                 used: dict[str, int] | None = None) -> None:
        self.results = results
        self.over = over
        self.used = {} if used is None else used  # shared with the script's executor: one count per script

    def missing(self, machine: Machine) -> list[str]:
        lacking = set(self.over.missing(machine))
        return sorted({tool for state, tool in _calls(machine) if tool in lacking and state not in self.results})

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        if state not in self.results:
            return self.over.result(state, tool, args)
        answers = self.results[state]
        i = self.used.get("tool:" + state, 0)
        self.used["tool:" + state] = i + 1
        answer = answers[min(i, len(answers) - 1)]
        if not isinstance(answer, dict):
            raise ToolError(f"scripted result for tool state `{state}` must be an object")
        return answer


def tools_for(executor: object, tools: ToolSource) -> ToolSource:
    """The tool source of a run: the executor's own results (a script, a trace) over `tools`, else `tools`."""
    own = getattr(executor, "tool_source", None)
    if callable(own):
        source: ToolSource = own(tools)
        return source
    return tools
