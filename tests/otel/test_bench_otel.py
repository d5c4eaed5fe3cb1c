"""`skillc bench --otel`: every cell's run arrives as its own span tree; a refusing collector changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skillc.cli import main
from tests.bench.test_answers import _suite
from tests.otel.conftest import Receiver


def _bench(tmp_path: Path, *extra: str):
    return CliRunner().invoke(main, ["bench", str(_suite(tmp_path)), "--modes", "machine", "--executor",
                                     f"scripted:{tmp_path / 'script.json'}", "-o", str(tmp_path / "out"), "-q",
                                     *extra])


def test_every_cell_is_sent_as_one_run_span(receiver: Receiver, tmp_path: Path) -> None:
    r = _bench(tmp_path, "--otel", receiver.url)
    assert r.exit_code == 0, r.output
    roots = [s for s in receiver.spans if not s.parent_span_id]
    assert sorted(s.name for s in roots) == ["invoke_agent deploy"] * 2  # two tasks, one cell each
    assert len({s.trace_id for s in roots}) == 2
    rows = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().splitlines() if x.strip()]
    assert len(rows) == 2


def test_a_refusing_collector_is_a_warning_and_the_rows_stay(receiver: Receiver, tmp_path: Path) -> None:
    receiver.status = 500
    r = _bench(tmp_path, "--otel", receiver.url)
    assert r.exit_code == 0 and "SKM880" in r.output
    assert len((tmp_path / "out" / "results.jsonl").read_text().splitlines()) >= 2
