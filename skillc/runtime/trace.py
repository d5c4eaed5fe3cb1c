"""Writing run traces as JSON Lines: a header, one record per step, a footer.

The records and their on-disk names are `skillc.runtime.record`'s; this module
writes them safely. Secrets (API keys from the environment and any configured
values) are redacted from everything written, in values and in object keys.

Every record is written as one complete line: a write that fails (a full disk)
is cut back to the previous record, a torn last line left by a crash is dropped
before a resumed run appends, and text with lone surrogates is written with
JSON escapes, so a trace always reads back.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.code import Code
from skillc.diagnostics.files import output_target
from skillc.runtime.jsonvalue import Value
from skillc.runtime.record import Record, TraceError, load_run

__all__ = ["REDACTED", "Redactor", "TraceError", "TraceWriteError", "TraceWriter", "dumps_line", "env_redactor",
           "named_secrets", "read_trace", "redact", "secrets_from_env"]

SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.I)
REDACTED = "[redacted]"
#: Values of credential-named variables that are settings, not secrets.
_NOT_SECRET = {"", "0", "1", "true", "false", "yes", "no", "on", "off", "none", "null"}
#: Secrets shorter than this are replaced only where they stand as a whole word (not inside other words).
_WORD_ONLY_BELOW = 8


class TraceWriteError(TraceError):
    """A trace record could not be written (full disk, a device that refuses data)."""

    code: Code | None = diagnostics_codes.TRACE_WRITE_FAILED


def named_secrets(extra: Iterable[str] = ()) -> dict[str, str]:
    """Secret values by the name they are known by: credential-like environment variables, plus `extra`."""
    found = {k: v for k, v in os.environ.items() if SECRET_ENV.search(k) and v.strip().lower() not in _NOT_SECRET}
    for i, s in enumerate(s for s in extra if s):
        found.setdefault(f"secret{i}", s)
    return found


def secrets_from_env(extra: Iterable[str] = ()) -> list[str]:
    """Values to keep out of traces: environment variables that look like credentials, plus `extra`."""
    return sorted(set(named_secrets(extra).values()), key=len, reverse=True)


class Redactor:
    """Replaces secret values in JSON data (strings and keys) by a placeholder of the secret's name."""

    def __init__(self, secrets: Mapping[str, str] | Iterable[str],
                 placeholder: Callable[[str], str] = lambda name: REDACTED) -> None:
        named = dict(secrets) if isinstance(secrets, Mapping) else {f"secret{i}": s for i, s in enumerate(secrets)}
        by_value = {v: k for k, v in sorted(named.items()) if v}
        self.placeholder = placeholder
        self.names = by_value
        parts = [re.escape(v) if len(v) >= _WORD_ONLY_BELOW else rf"(?<![A-Za-z0-9_]){re.escape(v)}(?![A-Za-z0-9_])"
                 for v in sorted(by_value, key=len, reverse=True)]
        self.pattern = re.compile("|".join(parts)) if parts else None

    def text(self, s: str) -> str:
        if self.pattern is None:
            return s
        return self.pattern.sub(lambda m: self.placeholder(self.names[m.group(0)]), s)

    def __call__(self, value: Value) -> Value:
        if self.pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        return value


def env_redactor(extra: Iterable[str] = ()) -> Redactor:
    """The redactor every writer of traces, archives, reports and rows uses: the environment's secrets (and
    `extra`) become `[redacted]`, in values and in object keys."""
    return Redactor(secrets_from_env(extra))


def redact(value: Value, secrets: list[str]) -> Value:
    """A copy of a JSON value with every secret replaced (in keys too)."""
    return Redactor(secrets)(value)


def dumps_line(record: Value) -> bytes:
    """One JSONL line; text that is not valid Unicode (lone surrogates) is written as JSON escapes."""
    try:
        return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")


class TraceWriter:
    """Appends records to a JSONL trace, one whole line per record (a crash loses at most the current step)."""

    def __init__(self, path: str | Path | None, secrets: list[str] | Mapping[str, str], append: bool = False) -> None:
        self.path = Path(path) if path else None
        self.redact = Redactor(secrets)
        self.secrets = secrets
        self._fd: int | None = None
        self._regular = False
        if self.path is not None:
            try:
                output_target(self.path)  # never through a link out of its folder (FileProblem says so)
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fifo = _is_fifo(self.path)
                flags = (os.O_RDWR if append and not fifo else os.O_WRONLY) | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                flags |= os.O_APPEND if append else os.O_TRUNC
                self._fd = os.open(self.path, flags | (os.O_NONBLOCK if fifo else 0), 0o666)
                if fifo:
                    os.set_blocking(self._fd, True)
                self._regular = stat.S_ISREG(os.fstat(self._fd).st_mode)
                if append and self._regular:
                    _drop_torn_line(self._fd)
            except (OSError, ValueError) as exc:
                self.close()
                raise TraceWriteError(f"cannot write the trace {path}: {_why(exc)}") from None

    @property
    def active(self) -> bool:
        """True when records go to a file."""
        return self._fd is not None

    def write_record(self, record: Record) -> None:
        """Append one typed record (nothing is serialised when there is no file)."""
        if self._fd is not None:
            self.write(record.to_json())

    def write(self, record: dict) -> None:
        """Append one record as JSON (the journal's copies of steps are written back this way on resume)."""
        if self._fd is None:
            return
        line = dumps_line(self.redact(record))
        before = os.lseek(self._fd, 0, os.SEEK_END) if self._regular else 0
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            if self._regular:
                try:
                    os.ftruncate(self._fd, before)  # never leave half a record behind
                except OSError:
                    pass
            raise TraceWriteError(f"cannot write the trace {self.path}: {_why(exc)}") from None

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and getattr(exc, "errno", None) == 6:  # ENXIO
        return "it is a FIFO with no reader"
    return getattr(exc, "strerror", None) or str(exc)


def _is_fifo(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _drop_torn_line(fd: int) -> None:
    """Cut a last line that a crash left without its newline, so appended records start on their own line."""
    size = os.lseek(fd, 0, os.SEEK_END)
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    start = max(0, size - (1 << 20))
    tail = os.pread(fd, size - start, start)
    cut = tail.rfind(b"\n")
    os.ftruncate(fd, start + cut + 1 if cut >= 0 else (0 if start == 0 else size))
    if cut < 0 and start > 0:  # a torn line longer than 1 MiB: end it instead of searching further
        os.write(fd, b"\n")


def read_trace(path: str | Path) -> tuple[dict, list[dict], dict | None]:
    """Header, steps and footer (None for an unfinished run) of a trace file, as JSON in the current schema.

    Reading goes through `skillc.runtime.record` (so an old trace reads in today's names); code inside skillc
    uses `record.load_run` and its typed records instead.
    """
    run = load_run(path)
    return run.header.to_json(), [s.to_json() for s in run.steps], run.footer.to_json() if run.footer else None
