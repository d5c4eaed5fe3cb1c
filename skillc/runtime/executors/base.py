"""The executor interface: something that answers model/judge requests (and may stand in for tools)."""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from skillc.runtime.prompts import Request


class ExecutorError(Exception):
    """The backend failed to answer (transport error, HTTP error, timeout, exhausted script)."""


@attrs.frozen
class Response:
    """A model's raw answer with usage figures when the backend reports them."""

    text: str
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None


class Executor(Protocol):
    """Answers requests; `tool_result` may replace a tool call (scripts and replays), else returns None."""

    name: str

    def complete(self, request: Request) -> Response: ...

    def stands_in(self, state: str) -> bool: ...

    def tool_result(self, state: str, tool: str, args: dict[str, Any]) -> dict[str, Any] | None: ...

    def close(self) -> None: ...


class BaseExecutor:
    """Defaults: no tool stand-ins, nothing to close."""

    name = "base"

    def stands_in(self, state: str) -> bool:
        """True when this executor supplies the results of a tool state (no real tool runs)."""
        return False

    def tool_result(self, state: str, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def close(self) -> None:
        return None
