"""The results store: one JSONL row per cell (task × mode × executor × repeat), append-only and resumable.

A row is written as one whole line with one `write` on an `O_APPEND` descriptor and
fsynced before the next cell counts as done, so a bench killed at any moment leaves at
most its last line torn. Reading drops a torn last line (a line without its newline,
even one that happens to parse); the writer cuts it off before appending, so the next
row never glues onto it. `pending(cells)` is every cell without a row: a resumed bench
runs only those, and no cell gets two rows. A cell that was running when the bench was
killed has no row, so it runs again (from a fresh workdir). One process writes a
results file at a time (an `flock` held while the writer is open; SKM722 otherwise).
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import cast

import attrs

from skillc.bench import codes
from skillc.bench.effects import OUTCOMES, Outcome
from skillc.diagnostics import Diagnostic, SourceFile, Span, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.files import FileProblem, JSONProblem, loads, open_input
from skillc.runtime.trace import env_redactor

#: The version written in every row's "v"; a row of another version is reported, not guessed at.
SCHEMA_VERSION = 1


@attrs.frozen(order=True)
class Cell:
    """One point of the bench matrix."""

    task: str
    mode: str
    executor: str
    repeat: int

    @property
    def key(self) -> str:
        """A stable, unambiguous key: the four fields as a compact JSON array."""
        return json.dumps([self.task, self.mode, self.executor, self.repeat], separators=(",", ":"),
                          ensure_ascii=False)


def matrix(tasks: Sequence[str], modes: Sequence[str], executors: Sequence[str], repeats: int) -> list[Cell]:
    """Every cell, task-major (so a partial bench has covered whole tasks in every mode)."""
    return [Cell(t, m, e, r) for t in tasks for r in range(repeats) for e in executors for m in modes]


@attrs.frozen
class Row:
    """The result of one cell. `success`/`rfc` are None when the cell never got that far (or RFC was unverifiable)."""

    cell: Cell
    success: bool | None
    rfc: bool | None
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    outcome: Outcome = "unfinished"
    trace: str | None = None
    error: str | None = None
    horizon: int | None = None
    violated: tuple[str, ...] = ()

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, object]:
        """The row as the JSON object of one results line."""
        return {"v": SCHEMA_VERSION, "task": self.cell.task, "mode": self.cell.mode,
                "executor": self.cell.executor, "repeat": self.cell.repeat, "success": self.success,
                "rfc": self.rfc, "steps": self.steps, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "latency_s": self.latency_s, "outcome": self.outcome,
                "trace": self.trace, "error": self.error, "horizon": self.horizon, "violated": list(self.violated)}

    @classmethod
    def from_json(cls, obj: object) -> Row:
        """A row from its JSON object; RowProblem says what is wrong with one that is not a row."""
        if not isinstance(obj, dict):
            raise RowProblem(f"a JSON {type(obj).__name__}, not an object")
        if obj.get("v") != SCHEMA_VERSION:
            raise RowProblem(f"a row of version {obj.get('v')!r}; this skillc reads version {SCHEMA_VERSION}")
        f = _Fields(obj)
        cell = Cell(f.text("task"), f.text("mode"), f.text("executor"), f.count("repeat"))
        outcome = f.text("outcome")
        if outcome not in OUTCOMES:
            raise RowProblem(f"`outcome` is {outcome!r}, not one of {', '.join(OUTCOMES)}")
        violated = obj.get("violated", [])
        if not isinstance(violated, list) or not all(isinstance(v, str) for v in violated):
            raise RowProblem("`violated` is not a list of requirement ids")
        return cls(cell, f.flag("success"), f.flag("rfc"), f.count("steps"), f.count("prompt_tokens"),
                   f.count("completion_tokens"), f.seconds("latency_s"), outcome,
                   f.optional_text("trace"), f.optional_text("error"), f.optional_count("horizon"), tuple(violated))


class RowProblem(ValueError):
    """A results line that is not a row; the message says why."""


@attrs.frozen
class _Fields:
    """Typed access to a row object's fields, each checked (a Boolean is not a number)."""

    obj: Mapping[str, object]

    def _get(self, name: str, ok: bool, want: str) -> object:
        if not ok:
            raise RowProblem(f"`{name}` is {self.obj.get(name)!r}, not {want}")
        return self.obj.get(name)

    def text(self, name: str) -> str:
        return cast(str, self._get(name, isinstance(self.obj.get(name), str), "a string"))

    def optional_text(self, name: str) -> str | None:
        value = self.obj.get(name)
        return cast("str | None", self._get(name, value is None or isinstance(value, str), "a string or null"))

    def count(self, name: str) -> int:
        value = self.obj.get(name)
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return cast(int, self._get(name, ok, "a count"))

    def optional_count(self, name: str) -> int | None:
        return None if self.obj.get(name) is None else self.count(name)

    def flag(self, name: str) -> bool | None:
        value = self.obj.get(name)
        return cast("bool | None", self._get(name, value is None or isinstance(value, bool), "true, false or null"))

    def seconds(self, name: str) -> float:
        value = self.obj.get(name)
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0
        return float(cast(float, self._get(name, ok, "a number of seconds")))


@attrs.frozen
class Results:
    """The rows of a results file (first row of each cell), what was wrong with it, and whether its tail was torn."""

    rows: tuple[Row, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    torn: bool = False

    def done(self) -> frozenset[str]:
        """The keys of the cells that have a row."""
        return frozenset(r.cell.key for r in self.rows)

    def pending(self, cells: Iterable[Cell]) -> list[Cell]:
        """The cells without a row, in the order given."""
        done = self.done()
        return [c for c in cells if c.key not in done]


def read_results(path: str | Path) -> Results:
    """Every row of a results file; a missing file is an empty one, a torn last line is dropped."""
    try:
        data = open_input(path)
    except FileProblem as exc:
        if not os.path.lexists(path):
            return Results(())
        return Results((), (make(diagnostics_codes.IO_ERROR, str(exc)),))
    lines = data.split(b"\n")
    torn = lines.pop() != b""  # text after the last newline is a row whose write was cut short
    rows: list[Row] = []
    seen: set[str] = set()
    problems: list[Diagnostic] = []
    source: SourceFile | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = Row.from_json(loads(line))
        except (JSONProblem, RowProblem) as exc:
            source = source or SourceFile.from_text(str(path), data.decode("utf-8", errors="replace"))
            problems.append(make(codes.DAMAGED_RESULTS, f"line {number} is {exc}", _line_span(source, number)))
            continue
        if row.cell.key in seen:
            source = source or SourceFile.from_text(str(path), data.decode("utf-8", errors="replace"))
            problems.append(make(codes.DUPLICATE_RESULT, f"line {number} is a second row for cell {row.cell.key}",
                                 _line_span(source, number)))
            continue
        seen.add(row.cell.key)
        rows.append(row)
    return Results(tuple(rows), tuple(problems), torn)


def _line_span(source: SourceFile, line: int) -> Span:
    """The span of a whole 1-based line."""
    start = source.line_starts[line - 1]
    return Span(source, start, start + len(source.line_text(line)))


class ResultsWriter:
    """The one writer of a results file: holds its lock, appends whole fsynced lines."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd
        self.redact = env_redactor()  # the one redactor of traces, archives, reports and rows

    def append(self, row: Row) -> None:
        """Write the row as one line and fsync it; when this returns, the cell is done."""
        self.append_all([row])

    def append_all(self, rows: Sequence[Row]) -> None:
        """Write the rows as whole lines in one write and fsync once (a group commit of cells that ended together).

        A kill during the write leaves a prefix of whole lines and at most one torn line at the end.
        """
        if self._fd is None:
            raise ValueError("the results writer is closed")
        data = b"".join((json.dumps(self.redact(r.to_json()), ensure_ascii=False, separators=(", ", ": ")) + "\n")
                        .encode("utf-8") for r in rows)
        written = 0
        while written < len(data):  # a regular file takes it all at once; a short write is finished, never re-sent
            written += os.write(self._fd, data[written:])
        os.fsync(self._fd)

    def close(self) -> None:
        """Release the lock and the file."""
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None

    def __enter__(self) -> ResultsWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _cut_torn_tail(fd: int) -> None:
    """Truncate the file after its last newline, dropping a line a killed writer left half-written."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    chunk, end = 1 << 16, size
    while end > 0:
        start = max(0, end - chunk)
        at = os.pread(fd, end - start, start).rfind(b"\n")
        if at >= 0:
            os.ftruncate(fd, start + at + 1)
            return
        end = start
    os.ftruncate(fd, 0)


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    return "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
        else "a socket" if stat.S_ISSOCK(mode) else "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def _writable(target: Path) -> Diagnostic | None:
    """Why the results file cannot go at `target`: its folder is not a folder (a device, a file), or the file is a
    symlink (SKM542: never followed); None when it can."""
    folder = target.parent
    try:
        if folder.exists() and not folder.is_dir():
            what = _kind(folder.stat().st_mode) if not folder.is_file() else "a file"
            return make(diagnostics_codes.IO_ERROR, f"cannot write the bench into {folder}: it is {what}, not a folder",
                        hint="give -o a folder (it is created if missing)")
        folder.mkdir(parents=True, exist_ok=True)
    except (OSError, RuntimeError) as exc:
        return make(diagnostics_codes.IO_ERROR, f"cannot write the bench into {folder}: "
                    f"{getattr(exc, 'strerror', None) or exc}")
    if target.is_symlink():
        return make(diagnostics_codes.UNSAFE_OUTPUT, f"cannot write {target}: it is a symlink (to "
                    f"{os.readlink(target)}); results are never written through a link",
                    hint="remove the link, or write to another output folder (-o)")
    return None


def open_writer(path: str | Path) -> ResultsWriter | Diagnostic:
    """The results file opened for appending under an exclusive lock; SKM722 if another bench holds it."""
    target = Path(path)
    problem = _writable(target)
    if problem is not None:
        return problem
    try:
        # O_NOFOLLOW: a link planted where the results go is never followed out of the output folder;
        # O_NONBLOCK: a FIFO swapped in since the check does not block the open (it is refused below).
        fd = os.open(target, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK,
                     0o666)
    except OSError as exc:
        return make(diagnostics_codes.IO_ERROR, f"cannot write {target}: {exc.strerror or exc}")
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        return make(diagnostics_codes.IO_ERROR, f"cannot write {target}: it is {_kind(kind)}, not a results file",
                    hint="remove it, or write to another output folder (-o)")
    os.set_blocking(fd, True)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return make(codes.RESULTS_LOCKED, f"{target} is being written by another bench")
    _cut_torn_tail(fd)
    return ResultsWriter(target, fd)
