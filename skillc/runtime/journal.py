"""Run journals in SQLite: every committed step, so a crashed run resumes where it stopped.

A step is committed (one transaction) after its operation ran and its writes
and assignments were applied, together with the whole variable state. Resuming
continues from the last committed step, so a committed tool step never runs
twice.

One process at a time: a run is *leased* (`Lease`) by the process that runs or
resumes it. The lease is an exclusive `flock` on a small file beside the
journal, so the kernel releases it when its holder dies, even by SIGKILL; a
second `--resume` of a leased run is refused (SKM502) instead of repeating tool
steps.

Waiting: a run whose `ask_user` call has nobody to answer is marked `waiting` with the question (`wait`),
and the question is kept in the `waits` table. `answer` takes the user's answer once, under the run's lease:
the run becomes `running` again and the interpreter hands the answer to that step when it resumes; a run that
is not waiting (never was, or was already answered) refuses another answer.

Places: the folders a run was started in (its work folder and skill folder) are kept in the `places` table, so a
`--resume` typed in another folder continues where the run works (`guard.resumed_places`).

Secrets: the journal is created 0600 (owner only) because it holds the run's
inputs and variable state, and values of credential-like environment variables
are stored as `[redacted:$NAME]` placeholders, put back from the environment on
resume (see `trace.py` for what counts as a secret).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import sqlite3
import time
import uuid
from pathlib import Path

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.code import Code
from skillc.diagnostics.files import FileProblem, JSONProblem, create_private, loads
from skillc.runtime.jsonvalue import Env, Object, Value
from skillc.runtime.record import RecordError, Step

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY,
  machine_path TEXT NOT NULL,
  machine_hash TEXT NOT NULL,
  inputs TEXT NOT NULL,
  executor TEXT NOT NULL,
  trace_path TEXT,
  status TEXT NOT NULL,
  outcome TEXT,
  created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS steps (
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  step INTEGER NOT NULL,
  state TEXT NOT NULL,
  next_state TEXT NOT NULL,
  env TEXT NOT NULL,
  record TEXT NOT NULL,
  PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS waits (
  run_id TEXT NOT NULL REFERENCES runs(run_id),
  step INTEGER NOT NULL,
  state TEXT NOT NULL,
  question TEXT NOT NULL,
  options TEXT,
  answer TEXT,
  created REAL NOT NULL,
  answered REAL,
  PRIMARY KEY (run_id, step)
);
CREATE TABLE IF NOT EXISTS places (
  run_id TEXT PRIMARY KEY REFERENCES runs(run_id),
  workdir TEXT NOT NULL,
  skill_dir TEXT
);
"""
_COLUMNS = {
    "runs": ["run_id", "machine_path", "machine_hash", "inputs", "executor", "trace_path", "status", "outcome",
             "created"],
    "steps": ["run_id", "step", "state", "next_state", "env", "record"],
    "waits": ["run_id", "step", "state", "question", "options", "answer", "created", "answered"],
    "places": ["run_id", "workdir", "skill_dir"],
}
#: Tables a journal written by an older skillc lacks; they are added when it is opened (its runs have no places).
_ADDED = frozenset({"waits", "places"})
APPLICATION_ID = 0x536B4D4A  # "SkMJ": marks the SQLite file as a skillc journal
_RUN_ID = re.compile(r"^[0-9a-f]{12}$")


class JournalError(Exception):
    """The journal cannot be opened, or a run to resume is unknown or inconsistent."""

    code: Code = diagnostics_codes.JOURNAL_ERROR


class LeaseError(JournalError):
    """Another live process holds the run."""

    code = diagnostics_codes.RUN_LEASED


@attrs.frozen
class RunInfo:
    run_id: str
    machine_path: str
    machine_hash: str
    inputs: Object
    executor: str
    trace_path: str | None
    status: str
    outcome: str | None
    #: The folders the run last ran in (absolute): a `--resume` that names none continues there. None: a run an
    #: older skillc journaled, which kept no places.
    workdir: str | None = None
    skill_dir: str | None = None


@attrs.frozen
class Checkpoint:
    """Where a run stands after its last committed step."""

    step: int
    state: str
    env: Env


@attrs.frozen
class Wait:
    """A question a run waits on: at `step` (the step that asks), in tool state `state`; `answer` once given."""

    run_id: str
    step: int
    state: str
    question: str
    options: tuple[str, ...] | None = None
    answer: str | None = None


class Lease:
    """Exclusive hold of one run (or of a refine's archive) by this process; released on `release()` or when the
    process dies."""

    def __init__(self, path: Path, run_id: str, busy: str | None = None) -> None:
        self.path = path
        self.run_id = run_id
        self.busy = busy  # the refusal, `{holder}` standing for the process that holds it (default: a run's)
        self._fd: int | None = None

    def acquire(self) -> Lease:
        try:
            self.path.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        except OSError as exc:
            raise JournalError(f"cannot lease run `{self.run_id}`: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
            os.close(fd)
            raise LeaseError(self.busy.format(holder=holder) if self.busy else
                             f"run `{self.run_id}` is being run by {holder}; a run is resumed by one process "
                             "at a time (wait for it to end, or stop it)") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} since {time.strftime('%H:%M:%S')}".encode(), 0)
        self._fd = fd
        return self

    def release(self, remove: bool = False) -> None:
        """Drop the lease; `remove` deletes the lock file too (only for a finished run: anyone who still
        opens the old file and wins its lock then finds the run done and refuses it)."""
        if self._fd is not None:
            if remove:
                try:
                    os.unlink(self.path)
                except OSError:
                    pass
            os.close(self._fd)  # closing drops the flock
            self._fd = None


class Journal:
    """One SQLite file holding many runs."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.started: str | None = None  # the run this object registered last (an interrupt names it for --resume)
        try:
            create_private(self.path)  # the WAL and shared-memory files inherit this mode
            self.db = sqlite3.connect(str(self.path), timeout=10, isolation_level=None)
            self._prepare()
        except (OSError, FileProblem, sqlite3.Error) as exc:
            raise JournalError(f"cannot open the run journal {path}: {_reason(exc)}") from None

    def _prepare(self) -> None:
        tables = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        app = self.db.execute("PRAGMA application_id").fetchone()[0]
        if tables and app not in (0, APPLICATION_ID):
            raise sqlite3.DatabaseError("it is an SQLite file of another application")
        if tables:
            for table, columns in _COLUMNS.items():
                found = [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]
                if not found and table in _ADDED:
                    continue  # an older journal: the table is created below
                if found != columns:
                    raise sqlite3.DatabaseError(f"it is not a skillc journal (table `{table}` "
                                                f"{'is missing' if not found else 'has other columns'})")
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        if app != APPLICATION_ID:
            self.db.execute(f"PRAGMA application_id = {APPLICATION_ID}")

    def _sql(self, what: str, sql: str, args: tuple = ()) -> sqlite3.Cursor:
        try:
            return self.db.execute(sql, args)
        except sqlite3.Error as exc:
            raise JournalError(f"the run journal {self.path} failed while {what}: {_reason(exc)}") from None

    def lease(self, run_id: str) -> Lease:
        """Take the exclusive lease of a run (LeaseError when a live process holds it)."""
        name = run_id if _RUN_ID.match(run_id) else hashlib.sha256(run_id.encode("utf-8", "replace")).hexdigest()
        return Lease(self.path.with_name(self.path.name + ".leases") / f"{name}.lock", run_id).acquire()

    def start(self, machine_path: str, machine_hash: str, inputs: Object, executor: str,
              trace_path: str | None, workdir: str | None = None, skill_dir: str | None = None) -> str:
        """Register a new run, with the places it runs in (`workdir`, `skill_dir`: absolute); returns its id."""
        run_id = uuid.uuid4().hex[:12]
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, 'running', NULL, ?)",
                                (run_id, machine_path, machine_hash, json.dumps(inputs), executor, trace_path,
                                 time.time()))
                if workdir is not None:
                    self.db.execute("INSERT INTO places VALUES (?, ?, ?)", _places(run_id, workdir, skill_dir))
        except sqlite3.Error as exc:
            raise JournalError(f"the run journal {self.path} failed while registering the run: "
                               f"{_reason(exc)}") from None
        self.started = run_id
        return run_id

    def move(self, run_id: str, workdir: str, skill_dir: str | None) -> None:
        """Keep the folders a resumed run now runs in (absolute), so its next resume continues there."""
        self._sql("keeping the run's folders", "INSERT OR REPLACE INTO places VALUES (?, ?, ?)",
                  _places(run_id, workdir, skill_dir))

    def commit_step(self, run_id: str, step: int, state: str, next_state: str, env: Env, record: Object) -> None:
        """Persist one finished step atomically; `record`: its `Step`'s JSON (`Step.to_json`), secrets redacted."""
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("INSERT OR REPLACE INTO steps VALUES (?, ?, ?, ?, ?, ?)",
                                (run_id, step, state, next_state, json.dumps(env), json.dumps(record)))
        except sqlite3.Error as exc:
            raise JournalError(f"the run journal {self.path} failed while committing step {step}: "
                               f"{_reason(exc)}") from None

    def finish(self, run_id: str, outcome: str) -> None:
        self._sql("finishing the run", "UPDATE runs SET status = 'done', outcome = ? WHERE run_id = ?",
                  (outcome, run_id))

    def wait(self, run_id: str, step: int, state: str, question: str, options: tuple[str, ...] | None) -> None:
        """Mark a run waiting for the user's answer to `question`, asked by `state` at `step`."""
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                self.db.execute("INSERT OR REPLACE INTO waits VALUES (?, ?, ?, ?, ?, NULL, ?, NULL)",
                                (run_id, step, state, question, None if options is None else json.dumps(options),
                                 time.time()))
                self.db.execute("UPDATE runs SET status = 'waiting' WHERE run_id = ?", (run_id,))
        except sqlite3.Error as exc:
            raise JournalError(f"the run journal {self.path} failed while saving the question of step {step}: "
                               f"{_reason(exc)}") from None

    def waiting(self, run_id: str) -> Wait | None:
        """The question a run waits on (None: it waits on none)."""
        info = self.info(run_id)
        if info.status != "waiting":
            return None
        row = self._sql("reading the question", "SELECT step, state, question, options, answer FROM waits WHERE "
                        "run_id = ? AND answer IS NULL ORDER BY step DESC LIMIT 1", (run_id,)).fetchone()
        if row is None:
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (it waits, but on no question)")
        return self._wait(run_id, row)

    def answer(self, run_id: str, answer: str) -> Wait:
        """Give a waiting run its answer, once (the caller holds the run's lease); JournalError if it is not waiting.

        The run becomes `running`; the answer stays with the question until the step that asked commits.
        """
        try:
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")
                row = self.db.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
                wait = self.db.execute("SELECT step, state, question, options, answer FROM waits WHERE run_id = ? "
                                       "AND answer IS NULL ORDER BY step DESC LIMIT 1", (run_id,)).fetchone()
                if row is None or row[0] != "waiting" or wait is None:
                    raise _NotWaiting()
                self.db.execute("UPDATE waits SET answer = ?, answered = ? WHERE run_id = ? AND step = ?",
                                (answer, time.time(), run_id, wait[0]))
                self.db.execute("UPDATE runs SET status = 'running' WHERE run_id = ?", (run_id,))
        except _NotWaiting:
            raise JournalError(f"run `{run_id}` is not waiting for an answer") from None
        except sqlite3.Error as exc:
            raise JournalError(f"the run journal {self.path} failed while saving the answer: {_reason(exc)}") from None
        return attrs.evolve(self._wait(run_id, wait), answer=answer)

    def answered(self, run_id: str, step: int) -> Wait | None:
        """The question asked at `step`, if it has been answered (the answer the resumed step takes)."""
        row = self._sql("reading the answer", "SELECT step, state, question, options, answer FROM waits WHERE "
                        "run_id = ? AND step = ? AND answer IS NOT NULL", (run_id, step)).fetchone()
        return None if row is None else self._wait(run_id, row)

    def _wait(self, run_id: str, row: tuple) -> Wait:
        options = None if row[3] is None else self._decode(run_id, "question's options", row[3])
        if not isinstance(row[0], int) or not isinstance(row[1], str) or not isinstance(row[2], str) or not (
                options is None or (isinstance(options, list) and all(isinstance(o, str) for o in options))) or not (
                row[4] is None or isinstance(row[4], str)):
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (its question has wrong-typed fields)")
        return Wait(run_id, row[0], row[1], row[2], None if options is None else tuple(options), row[4])

    def interrupt(self, run_id: str) -> None:
        """Mark a run stopped by an error skillc did not expect; it stays resumable."""
        try:
            self.db.execute("UPDATE runs SET status = 'interrupted' WHERE run_id = ? AND status = 'running'",
                            (run_id,))
        except sqlite3.Error:
            pass  # the run stays `running`, which resumes the same way

    def info(self, run_id: str) -> RunInfo:
        row = self._sql("reading the run", "SELECT runs.run_id, machine_path, machine_hash, inputs, executor, "
                        "trace_path, status, outcome, places.workdir, places.skill_dir FROM runs LEFT JOIN places "
                        "ON places.run_id = runs.run_id WHERE runs.run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise JournalError(f"no run `{run_id}` in {self.path}")
        texts = (row[1], row[2], row[3], row[4], row[6])
        if not all(isinstance(v, str) for v in texts) or not all(isinstance(v, (str, type(None)))
                                                                 for v in (row[5], row[8], row[9])):
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (a field has the wrong type)")
        inputs = self._decode(run_id, "inputs", row[3])
        if not isinstance(inputs, dict):
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (its inputs are not an object)")
        workdir, skill_dir = (None if v is None else self._decode(run_id, "folders", v) for v in (row[8], row[9]))
        if not (workdir is None or isinstance(workdir, str)) or not (skill_dir is None or isinstance(skill_dir, str)):
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (its folders are not paths)")
        return RunInfo(row[0], row[1], row[2], inputs, row[4], row[5], row[6], row[7], workdir, skill_dir)

    def checkpoint(self, run_id: str) -> Checkpoint | None:
        """The last committed step of a run, or None when none was committed."""
        row = self._sql("reading the last step", "SELECT step, next_state, env FROM steps WHERE run_id = ? "
                        "ORDER BY step DESC LIMIT 1", (run_id,)).fetchone()
        if row is None:
            return None
        env = self._decode(run_id, "state", row[2])
        if not isinstance(row[0], int) or not isinstance(row[1], str) or not isinstance(env, dict):
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (its last step has wrong-typed fields)")
        return Checkpoint(row[0], row[1], env)

    def steps(self, run_id: str) -> list[Step]:
        """The run's committed steps as typed records, in order (their values as stored: secrets as placeholders).

        A record that is JSON but not a step is left out, as the trace it would refill could not hold it either.
        """
        rows = self._sql("reading the steps", "SELECT record FROM steps WHERE run_id = ? ORDER BY step", (run_id,))
        steps = []
        for row in rows:
            record = self._decode(run_id, "step record", row[0])
            try:
                if isinstance(record, dict):
                    steps.append(Step.from_json(record))
            except RecordError:
                continue
        return steps

    def _decode(self, run_id: str, what: str, text: object) -> Value:
        if not isinstance(text, (str, bytes)):
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (its {what} is not JSON text)")
        try:
            return loads(text)
        except JSONProblem as exc:
            raise JournalError(f"run `{run_id}` in {self.path} is damaged (its {what}: {exc})") from None

    def close(self) -> None:
        self.db.close()


class _NotWaiting(Exception):
    """Inside `answer`'s transaction: the run waits on no question (rolled back, then reported)."""


def _places(run_id: str, workdir: str, skill_dir: str | None) -> tuple[str, str, str | None]:
    """A `places` row: each folder as a JSON string, so a name that is not UTF-8 (kept by Python as surrogate
    escapes, which SQLite's text refuses) round-trips exactly."""
    return run_id, json.dumps(workdir), None if skill_dir is None else json.dumps(skill_dir)


def _reason(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and "file is not a database" in text:
        return "it is not an SQLite database (a damaged or foreign file)"
    return text
