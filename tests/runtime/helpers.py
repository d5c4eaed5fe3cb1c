"""Helpers for runtime tests: check a machine from text and run it in-process."""

from __future__ import annotations

from pathlib import Path

import skillc
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.executors.scripted import ScriptedExecutor

# A model answer shown with bash, quoted: the smallest machine with a model step and a tool step.
ECHO = """machine echo {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input q: str
  var answer: str
  var out: str
  start think
  model think {
    reads q
    writes answer
    prompt "Answer."
    -> show
  }
  tool show {
    reads answer
    call bash(command: "printf %s " ++ quote(answer))
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""


def checked(text: str):
    """The machine of `text`, which must pass the checker."""
    result = skillc.check(text, path="machine.skm")
    problems = [f"{d.code!s} {d.message}" for d in result.diagnostics if d.severity.name != "NOTE"]
    assert not problems, problems
    return result.machine


def run(text: str, script: dict, inputs: dict | None = None, *, trace: Path | None = None, retries: int = 2,
        tools: ToolBox | None = None, max_steps: int = 1000, executor=None):
    machine = checked(text)
    executor = executor or ScriptedExecutor(script)
    interp = Interpreter(machine, executor, tools or ToolBox.default(), RunOptions(retries=retries, trace=trace,
                         max_steps=max_steps), text)
    return interp.run(inputs or {})


class Recorder(BaseExecutor):
    """Answers from a function of the request, and keeps every request it saw."""

    def __init__(self, answer) -> None:
        self.answer = answer
        self.requests = []
        self.name = "recorder"

    def complete(self, request):
        self.requests.append(request)
        result = self.answer(request)
        if isinstance(result, Exception):
            raise result
        return result if isinstance(result, Response) else Response(result)


__all__ = ["ECHO", "ExecutorError", "Recorder", "checked", "run"]
