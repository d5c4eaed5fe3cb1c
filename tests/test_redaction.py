"""Issue 34: every writer redacts the same way — bench rows and what distill reads and writes, as traces,
archives and reports already do (`skillc.runtime.trace.env_redactor`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.bench.results import Cell, Row, open_writer, read_results
from skillc.diagnostics import Diagnostic
from skillc.frontends.distill.trace import dumps, read_traces

SECRET = "sk-live-0123456789abcdef"


@pytest.fixture(autouse=True)
def _secret_in_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_TEST_API_KEY", SECRET)


def test_a_bench_row_is_written_redacted(tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    writer = open_writer(target)
    assert not isinstance(writer, Diagnostic), writer
    with writer:
        writer.append(Row(Cell("t1", "machine", "x", 0), None, None, error=f"the executor printed {SECRET}"))
    text = target.read_text()
    assert SECRET not in text and "[redacted]" in text
    assert read_results(target).rows[0].error == "the executor printed [redacted]"


def test_distill_reads_and_collect_writes_traces_redacted(tmp_path: Path) -> None:
    step = {"observation": f"a note reads {SECRET}", "action": "take note", "next_observation": "taken",
            "available_actions": ["take note"], "score": 0, "done": True}
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"id": "t1", "success": True, "steps": [step]}) + "\n")
    traces, problems = read_traces([path])
    assert problems == [] and len(traces) == 1
    assert traces[0].steps[0].observation == "a note reads [redacted]"  # nothing distilled from it holds the secret
    written = dumps(traces)
    assert SECRET not in written and "[redacted]" in written
