"""Run journals in SQLite: every committed step, so a crashed run resumes where it stopped.

A step is committed (one transaction) after its operation ran and its writes
and assignments were applied, together with the whole variable state. Resuming
continues from the last committed step, so a committed tool step never runs
twice.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from pathlib import Path
from typing import Any

import attrs

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
"""


class JournalError(Exception):
    """The journal cannot be opened, or a run to resume is unknown or inconsistent."""


@attrs.frozen
class RunInfo:
    run_id: str
    machine_path: str
    machine_hash: str
    inputs: dict
    executor: str
    trace_path: str | None
    status: str
    outcome: str | None


@attrs.frozen
class Checkpoint:
    """Where a run stands after its last committed step."""

    step: int
    state: str
    env: dict


class Journal:
    """One SQLite file holding many runs."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(str(self.path), timeout=10, isolation_level=None)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise JournalError(f"cannot open the run journal {path}: {exc}") from None

    def start(self, machine_path: str, machine_hash: str, inputs: dict, executor: str,
              trace_path: str | None) -> str:
        """Register a new run; returns its id."""
        run_id = uuid.uuid4().hex[:12]
        self.db.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, 'running', NULL, ?)",
                        (run_id, machine_path, machine_hash, json.dumps(inputs), executor, trace_path, time.time()))
        return run_id

    def commit_step(self, run_id: str, step: int, state: str, next_state: str, env: dict[str, Any],
                    record: dict) -> None:
        """Persist one finished step atomically."""
        with self.db:
            self.db.execute("BEGIN")
            self.db.execute("INSERT OR REPLACE INTO steps VALUES (?, ?, ?, ?, ?, ?)",
                            (run_id, step, state, next_state, json.dumps(env), json.dumps(record)))

    def finish(self, run_id: str, outcome: str) -> None:
        self.db.execute("UPDATE runs SET status = 'done', outcome = ? WHERE run_id = ?", (outcome, run_id))

    def info(self, run_id: str) -> RunInfo:
        row = self.db.execute("SELECT run_id, machine_path, machine_hash, inputs, executor, trace_path, status, "
                              "outcome FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        if row is None:
            raise JournalError(f"no run `{run_id}` in {self.path}")
        return RunInfo(row[0], row[1], row[2], json.loads(row[3]), row[4], row[5], row[6], row[7])

    def checkpoint(self, run_id: str) -> Checkpoint | None:
        """The last committed step of a run, or None when none was committed."""
        row = self.db.execute("SELECT step, next_state, env FROM steps WHERE run_id = ? ORDER BY step DESC LIMIT 1",
                              (run_id,)).fetchone()
        return None if row is None else Checkpoint(row[0], row[1], json.loads(row[2]))

    def steps(self, run_id: str) -> list[dict]:
        return [json.loads(r[0]) for r in self.db.execute(
            "SELECT record FROM steps WHERE run_id = ? ORDER BY step", (run_id,))]

    def close(self) -> None:
        self.db.close()
