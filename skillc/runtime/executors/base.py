"""The executor interface: something that answers model and judge requests.

Tool states are answered by a `ToolSource` (`runtime/toolsource.py`), not by the executor.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Protocol

import attrs

from skillc.diagnostics.files import kept_path
from skillc.runtime.prompts import Request
from skillc.runtime.record import ErrorKind


class ExecutorError(Exception):
    """The backend failed to answer (transport error, HTTP error, timeout, exhausted script).

    `retry_after`: seconds the server asked to wait before trying again (HTTP Retry-After), if it said.
    `kind`: how the failure is recorded in the trace (subclasses: `deadline`, `divergence`).
    """

    kind: ErrorKind = "executor"

    def __init__(self, message: str = "", *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def spec_file(spec: str) -> str | None:
    """The file or model an executor spec names (a script, a trace, a GGUF path), without `local`'s `?options`."""
    kind, _, rest = spec.partition(":")
    return (rest.partition("?")[0] if kind == "local" else rest) or None


#: The executors whose spec names a file or folder (a script, a trace, recorded exchanges, a GGUF model); the others
#: name a model (`openai:qwen.gguf` is a server's model name, even where a file of that name lies).
FILE_KINDS = frozenset({"scripted", "replay", "recorded", "local"})


def absolute_spec(spec: str) -> str:
    """The spec with the file it names made absolute (`scripted:run.json` → `scripted:/w/run.json`), so a journal's
    run resumes with it from any folder; a spec naming a model, or no existing path, or one already absolute, is
    unchanged."""
    kind, _, rest = spec.partition(":")
    file = spec_file(spec)
    if kind not in FILE_KINDS or not file or os.path.isabs(file) or not os.path.exists(file):
        return spec
    return f"{kind}:{kept_path(file)}{rest[len(file):]}"


def count(value: object) -> int | None:
    """A usage count as the backend reported it, or None when it sent something that is not a count."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def retry_after(headers: Mapping[str, str]) -> float | None:
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
    #: The backend stopped at the reply budget (`max_tokens`): the text is cut there.
    cut: bool = False


class DeadlineError(ExecutorError):
    """No answer within the step's deadline."""

    kind: ErrorKind = "deadline"


class Executor(Protocol):
    """Answers model and judge requests.

    An executor whose file also holds tool results (`scripted:`, `replay:`) may offer them as a ToolSource with
    `tool_source(over)`; see `runtime/toolsource.py`.
    """

    name: str

    def complete(self, request: Request) -> Response: ...

    def close(self) -> None: ...


class BaseExecutor:
    """Defaults: nothing to close."""

    name = "base"

    def close(self) -> None:
        return None
