"""`scripted:FILE` — deterministic answers per state, for tests and demos.

The file is JSON:

    {"outputs": {"analyze": [{"analysis": "…"}], "check": [{"verdict": "complete"}, "not json"]},
     "tools":   {"write": [{"stdout": "", "exit_code": 0}]}}

Each state's answers are used in order (the last one repeats). An answer that
is a string is sent verbatim (to test invalid output); an object is sent as
JSON. `tools` is optional: a tool state without scripted results runs for real.
"""

from __future__ import annotations

import json
from pathlib import Path

from skillc.diagnostics.files import FileProblem, JSONProblem, loads, read_text
from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.jsonvalue import Value
from skillc.runtime.prompts import Request
from skillc.runtime.toolsource import ScriptedTools, ToolSource


class ScriptError(ValueError):
    """The script file is unreadable or malformed."""


class ScriptedExecutor(BaseExecutor):
    """Replays a fixed script of answers."""

    def __init__(self, script: dict) -> None:
        if not isinstance(script, dict) or not isinstance(script.get("outputs", {}), dict) \
                or not isinstance(script.get("tools", {}), dict):
            raise ScriptError('a script is an object {"outputs": {STATE: [ANSWER, …]}, "tools": {STATE: [RESULT, …]}}')
        for section in ("outputs", "tools"):
            for state, answers in script.get(section, {}).items():
                if not isinstance(answers, list) or not answers:
                    raise ScriptError(f"`{section}.{state}` must be a non-empty list")
        self.outputs: dict[str, list] = script.get("outputs", {})
        self.tools: dict[str, list] = script.get("tools", {})
        self.used: dict[str, int] = {}
        self.name = "scripted"

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedExecutor:

        try:
            data = loads(read_text(path, what="script"))
        except (FileProblem, JSONProblem) as exc:
            raise ScriptError(f"cannot read script {path}: {exc}") from None
        return cls(data)

    def _next(self, section: dict, key: str) -> Value:
        answers = section[key]
        i = self.used.get(key, 0)
        self.used[key] = i + 1
        return answers[min(i, len(answers) - 1)]

    def complete(self, request: Request) -> Response:
        if request.state not in self.outputs:
            raise ExecutorError(f"the script has no answer for state `{request.state}`")
        answer = self._next(self.outputs, request.state)
        text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        return Response(text, model="scripted")

    def tool_source(self, over: ToolSource) -> ToolSource:
        """The script's `tools` section as a ToolSource over `over` (states it does not name run for real)."""
        return ScriptedTools(self.tools, over, self.used) if self.tools else over
