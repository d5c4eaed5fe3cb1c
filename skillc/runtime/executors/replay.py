"""`replay:TRACE` — drive a machine with the outputs and tool results a trace recorded.

No model or tool is called. Each request and each tool call must come from the
state the trace recorded at that step; the first divergence stops the replay
as a step error of kind `divergence`. The executor answers model and judge
states; its `tool_source` answers tool states from the same trace, in step with it,
and `verdicts` gives a terminal's predicates the verdicts the footer recorded (the
world is not looked at again).
"""

from __future__ import annotations

import json
from pathlib import Path

from skillc.ir.machine import Machine, State, Tool
from skillc.ir.printexpr import show_expr
from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.interaction import NeedsUser
from skillc.runtime.jsonvalue import Object
from skillc.runtime.prompts import Request
from skillc.runtime.record import ErrorKind, RunTrace, Step, Verdict, load_run
from skillc.runtime.tools import ToolError
from skillc.runtime.toolsource import ToolSource


class Divergence(ExecutorError):
    """The machine asked for a state other than the one the trace recorded next."""

    kind: ErrorKind = "divergence"


class Cursor:
    """The position in a trace's steps, shared by the executor and its tool source."""

    def __init__(self, steps: tuple[Step, ...]) -> None:
        self.steps = steps
        self.position = 0

    def take(self, state: str) -> Step:
        """The next recorded step, which must be of `state`."""
        if self.position >= len(self.steps):
            raise Divergence(f"step {self.position}: the machine entered `{state}`, but the trace ends after "
                             f"{len(self.steps)} steps")
        step = self.steps[self.position]
        if step.state != state:
            raise Divergence(f"step {self.position}: the trace recorded `{step.state}`, the machine is in `{state}`")
        self.position += 1
        return step


class ReplayExecutor(BaseExecutor):
    """Serves a trace's recorded answers in order."""

    def __init__(self, trace: str | Path | RunTrace) -> None:
        self.run = trace if isinstance(trace, RunTrace) else load_run(trace)
        self.header, self.steps, self.footer = self.run.header, self.run.steps, self.run.footer
        self.cursor = Cursor(self.steps)
        self.name = "replay"

    @property
    def position(self) -> int:
        return self.cursor.position

    def complete(self, request: Request) -> Response:
        step = self.cursor.take(request.state)
        if step.output is not None:
            text = json.dumps(dict(step.output), ensure_ascii=False)
        elif step.raw_output is not None:
            text = step.raw_output
        else:
            raise ExecutorError(f"step {step.index}: the trace has no output for `{request.state}`")
        return Response(text, model="replay")

    def tool_source(self, over: ToolSource) -> ToolSource:
        """The recorded tool results (no tool runs, whatever `over` offers)."""
        return ReplayedTools(self.cursor)

    def verdicts(self, terminal: State) -> tuple[Verdict, ...]:
        """The verdicts the footer recorded for `terminal`'s predicates, in the machine's order; a predicate the
        trace has no verdict for does not hold (the replay then ends in the fallback, which the trace did not)."""

        verdicts = self.footer.predicates if self.footer is not None else ()
        recorded = {v.predicate: v for v in verdicts if v.terminal == terminal.name}
        out = []
        for p in terminal.predicates:
            text = show_expr(p)
            out.append(recorded.get(text) or Verdict(terminal.name, text, False, "the trace recorded no verdict for "
                                                                                "this predicate"))
        return tuple(out)


class ReplayedTools:
    """A ToolSource that answers tool states with the results a trace recorded."""

    def __init__(self, cursor: Cursor) -> None:
        self.cursor = cursor

    def missing(self, machine: Machine) -> list[str]:
        return []

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        step = self.cursor.take(state)
        if step.tool_result is None and any(e.kind == "needs_user" for e in step.errors):

            raise NeedsUser(str(args.get("question", "")), args.get("options"),
                            "nobody answered it in the recorded run")
        if step.tool_result is None:
            raise ToolError(f"step {step.index}: the trace has no result for tool `{tool.name}`")
        return dict(step.tool_result)
