"""The real corpus as the corpus tests read it: the split, each skill scored, and the figures docs/build.md gives."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "corpus"
SPLIT = tomllib.loads((CORPUS / "split.toml").read_text(encoding="utf-8"))


def scores(ids: list[str], *, recorded: bool) -> dict[str, tuple[int, int, str]]:
    """(correct, total, why it failed) per skill: built offline, or by the LLM compiler replaying its recording.

    All in this process: each Z3 question asks in a context of its own (`smt.Solver`), so a replay gets the
    findings its recording got whatever the process built before (with Z3's shared default context a question near
    its budget was once decided otherwise after other builds, and the replay went stale: SKM346)."""
    sys.path.insert(0, str(ROOT))
    from bench.faithfulness import measure_real
    from skillc.runtime.executors.recorded import RecordedExecutor

    out = {}
    for sid in ids:
        executor = RecordedExecutor(CORPUS / "llm" / f"{sid}.exchange.jsonl") if recorded else None
        ok, total, why, _ = measure_real(CORPUS / "skills" / sid, CORPUS / "requirements" / f"{sid}.req", executor)
        out[sid] = (ok, total, why)
    return out


def totals(scored: dict[str, tuple[int, int, str]]) -> list[int]:
    """[correct, total] over the skills."""
    return [sum(ok for ok, _, _ in scored.values()), sum(n for _, n, _ in scored.values())]


def documented(pattern: str) -> list[int]:
    """The [correct, total] docs/build.md gives where `pattern` (two number groups) matches its text."""
    text = " ".join((ROOT / "docs" / "build.md").read_text(encoding="utf-8").split())
    shown = re.search(pattern, text)
    assert shown is not None, f"docs/build.md has no figure matching {pattern}"
    return [int(x.replace(",", "")) for x in shown.groups()]
