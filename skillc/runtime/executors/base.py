"""The executor interface: something that answers model/judge requests (and may stand in for tools)."""

from __future__ import annotations

from typing import Any, Protocol

import attrs

from skillc.runtime.prompts import Request


class ExecutorError(Exception):
    """The backend failed to answer (transport error, HTTP error, timeout, exhausted script).

    `retry_after`: seconds the server asked to wait before trying again (HTTP Retry-After), if it said.
    """

    def __init__(self, message: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def count(value: Any) -> int | None:
    """A usage count as the backend reported it, or None when it sent something that is not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def retry_after(headers: Any) -> float | None:
    """Seconds from a Retry-After header (a number of seconds or an HTTP date); None when absent or bad."""
    try:
        raw = headers.get("retry-after-ms")
        if raw is not None:
            return max(0.0, float(raw) / 1000)
        raw = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime
    import time

    try:
        return max(0.0, parsedate_to_datetime(raw).timestamp() - time.time())
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


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
