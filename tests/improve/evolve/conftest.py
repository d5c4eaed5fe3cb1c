"""Fixtures shared by the tests of skillc.improve.evolve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.improve.evolve.state import Output


@pytest.fixture
def output(tmp_path: Path) -> Output:
    """A cached output of a failed run: answer.txt holding 42, a one-line trace, one declared output."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "answer.txt").write_text("42\n", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"kind": "footer", "outcome": "failed"}\n', encoding="utf-8")
    return Output(work, trace, 0, (("answer", json.dumps({"value": 42})),))
