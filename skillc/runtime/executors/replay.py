"""`replay:TRACE` — drive a machine with the outputs and tool results a trace recorded.

No model or tool is called. Each request must come from the state the trace
recorded at that step; the first divergence stops the replay with a report.
"""

from __future__ import annotations

import json
from typing import Any

from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.prompts import Request
from skillc.runtime.trace import read_trace


class Divergence(ExecutorError):
    """The machine asked for a state other than the one the trace recorded next."""


class ReplayExecutor(BaseExecutor):
    """Serves a trace's recorded answers in order."""

    def __init__(self, path: str) -> None:
        self.header, self.steps, self.footer = read_trace(path)
        self.position = 0
        self.name = "replay"

    def _take(self, state: str) -> dict:
        if self.position >= len(self.steps):
            raise Divergence(f"step {self.position}: the machine entered `{state}`, but the trace ends after "
                             f"{len(self.steps)} steps")
        record = self.steps[self.position]
        if record["state"] != state:
            raise Divergence(f"step {self.position}: the trace recorded `{record['state']}`, the machine is in "
                             f"`{state}`")
        self.position += 1
        return record

    def complete(self, request: Request) -> Response:
        record = self._take(request.state)
        if "output" in record:
            text = json.dumps(record["output"], ensure_ascii=False)
        elif "skillc.raw_output" in record:
            text = record["skillc.raw_output"]
        else:
            raise ExecutorError(f"step {record['step']}: the trace has no output for `{request.state}`")
        return Response(text, model="replay")

    def stands_in(self, state: str) -> bool:
        return True

    def tool_result(self, state: str, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        record = self._take(state)
        result = record.get("tool_result")
        if not isinstance(result, dict):
            raise ExecutorError(f"step {record['step']}: the trace has no result for tool `{tool}`")
        return result
