"""Run traces as JSON Lines: a header, one record per step, a footer.

Attribute names follow the OpenTelemetry GenAI conventions where they fit
(`gen_ai.operation.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens`,
`gen_ai.usage.output_tokens`); skillc's own use the `skillc.` prefix. Secrets
(API keys from the environment and any configured values) are redacted from
everything written.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.I)
REDACTED = "[redacted]"


class TraceError(ValueError):
    """A trace file is missing, unreadable or malformed."""


def secrets_from_env(extra: Iterable[str] = ()) -> list[str]:
    """Values to keep out of traces: environment variables that look like credentials, plus `extra`."""
    found = [v for k, v in os.environ.items() if SECRET_ENV.search(k) and len(v) >= 8]
    return sorted({*found, *(s for s in extra if s)}, key=len, reverse=True)


def redact(value: Any, secrets: list[str]) -> Any:
    """A copy of a JSON value with every secret replaced."""
    if not secrets:
        return value
    if isinstance(value, str):
        for s in secrets:
            if s in value:
                value = value.replace(s, REDACTED)
        return value
    if isinstance(value, list):
        return [redact(v, secrets) for v in value]
    if isinstance(value, dict):
        return {k: redact(v, secrets) for k, v in value.items()}
    return value


class TraceWriter:
    """Appends records to a JSONL trace, flushing each one (a crash loses at most the current step)."""

    def __init__(self, path: str | Path | None, secrets: list[str], append: bool = False) -> None:
        self.path = Path(path) if path else None
        self.secrets = secrets
        self._out: TextIO | None = None
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._out = self.path.open("a" if append else "w", encoding="utf-8")

    def write(self, record: dict) -> None:
        if self._out is None:
            return
        self._out.write(json.dumps(redact(record, self.secrets), ensure_ascii=False, sort_keys=False) + "\n")
        self._out.flush()

    def close(self) -> None:
        if self._out is not None:
            self._out.close()
            self._out = None


def read_trace(path: str | Path) -> tuple[dict, list[dict], dict | None]:
    """Header, steps and footer (None for an unfinished run) of a trace file."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceError(f"cannot read trace {path}: {getattr(exc, 'strerror', None) or exc}") from None
    records = []
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{path}:{i}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict) or record.get("type") not in ("header", "step", "footer"):
            raise TraceError(f"{path}:{i}: not a trace record (expected type header, step or footer)")
        records.append(record)
    if not records or records[0]["type"] != "header":
        raise TraceError(f"{path}: the first record must be the header")
    headers = [r for r in records if r["type"] == "header"]
    header = headers[-1]  # a resumed run appends a second header
    steps = [r for r in records if r["type"] == "step"]
    footers = [r for r in records if r["type"] == "footer"]
    for s in steps:
        if not isinstance(s.get("state"), str) or not isinstance(s.get("step"), int):
            raise TraceError(f"{path}: a step record lacks `state` or `step`")
    return header, steps, (footers[-1] if footers else None)
