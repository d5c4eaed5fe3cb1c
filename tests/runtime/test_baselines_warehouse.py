"""A real native agent run on the warehouse (the oracle bench/tokens.py measures): run_baseline with real tools."""

from __future__ import annotations

import itertools
from pathlib import Path

import skillc
from bench.warehouse_oracle import NativeWarehouseOracle
from skillc.runtime import RunOptions, ToolBox
from skillc.runtime.baselines import run_baseline, skill_document
from skillc.runtime.record import load_run
from tests.conftest import EXAMPLES

WAREHOUSE = EXAMPLES / "warehouse"


def test_the_native_oracle_processes_every_event_through_the_transcript(tmp_path: Path) -> None:
    from env import Warehouse, accuracy

    wh = Warehouse(shelves=30, events=6, seed=3)
    records, log = wh.write(tmp_path)
    m = skillc.check(WAREHOUSE / "warehouse.skm").machine
    seen: list = []

    class Recording(NativeWarehouseOracle):
        def complete(self, request):
            seen.append(request)
            return super().complete(request)

    trace = tmp_path / "native.jsonl"
    result = run_baseline(m, "native", Recording(), ToolBox.default([str(WAREHOUSE / "env.py")], cwd=str(tmp_path)),
                          RunOptions(trace=trace, max_steps=200),
                          {"events_path": str(log), "records_path": str(records),
                           "state_path": str(tmp_path / "state.json")}, skill_document(m))
    assert result.outcome == "success" and result.evidence["report"].startswith("Totals:\nunits ")
    assert accuracy(tmp_path / "state.json", wh.expected) == {"shelf_accuracy": 1.0, "discrepancy_recall": 1.0,
                                                              "discrepancy_precision": 1.0}
    # init, then read + look-up + apply per event, the read that finds the end, totals, finish
    assert result.steps == 1 + 3 * 6 + 1 + 1 + 1 == len(seen)
    tools = [s.tool_call.tool for s in load_run(trace).steps if s.tool_call]
    assert tools == ["python"] + ["bash", "python", "python"] * 6 + ["bash", "python"]
    assert all(len(b.messages) == len(a.messages) + 2 for a, b in itertools.pairwise(seen))
