"""The LLM compiler's real exchanges on the corpus's test half, replayed: every recording still answers every
request of today's build (a changed request is SKM346), and the faithfulness the docs report is what they give.

The replies were written by a capable model played by a helper that saw only the request files (tools/standin.py,
tools/record_corpus.py; corpus/llm/README.md says how). Re-record a skill whose request changed on purpose.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "corpus"
TEST_IDS = tomllib.loads((CORPUS / "split.toml").read_text(encoding="utf-8"))["test"]


@pytest.fixture(scope="module")
def scored() -> dict[str, tuple[int, int, str]]:
    sys.path.insert(0, str(ROOT))
    from bench.faithfulness import measure_real
    from skillc.runtime.executors.recorded import RecordedExecutor

    out = {}
    for sid in TEST_IDS:
        executor = RecordedExecutor(CORPUS / "llm" / f"{sid}.exchange.jsonl")
        ok, total, why, _ = measure_real(CORPUS / "skills" / sid, CORPUS / "requirements" / f"{sid}.req", executor)
        out[sid] = (ok, total, why)
    return out


def test_every_test_half_skill_has_a_recorded_exchange() -> None:
    assert sorted(p.name.removesuffix(".exchange.jsonl") for p in (CORPUS / "llm").glob("*.exchange.jsonl")) \
        == sorted(TEST_IDS)


def test_every_recording_replays_to_a_checked_machine(scored: dict[str, tuple[int, int, str]]) -> None:
    assert {sid: why for sid, (_, _, why) in scored.items() if why} == {}


def test_the_docs_report_the_replayed_figure(scored: dict[str, tuple[int, int, str]]) -> None:
    correct = sum(ok for ok, _, _ in scored.values())
    total = sum(n for _, n, _ in scored.values())
    text = " ".join((ROOT / "docs" / "build.md").read_text(encoding="utf-8").split())
    shown = re.search(r"LLM compiler replaying the recorded exchanges: ([\d,]+)/([\d,]+)", text)
    assert shown is not None and [int(x.replace(",", "")) for x in shown.groups()] == [correct, total]
