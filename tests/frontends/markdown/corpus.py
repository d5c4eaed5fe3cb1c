"""The real corpus as the corpus tests read it: the split, each skill scored, and the figures docs/build.md gives."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "corpus"
SPLIT = tomllib.loads((CORPUS / "split.toml").read_text(encoding="utf-8"))


#: One skill scored in a process of its own, as `skillc build` builds it: Z3 keeps caches per process (its context),
#: so a capability question near its budget can be decided otherwise after other builds' questions in the same
#: process, and a replay would then send other findings than the recording got (SKM346).
ONE = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from bench.faithfulness import measure_real
from skillc.runtime.executors.recorded import RecordedExecutor
corpus, sid, recorded = Path(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
executor = RecordedExecutor(corpus / "llm" / f"{sid}.exchange.jsonl") if recorded else None
ok, total, why, _ = measure_real(corpus / "skills" / sid, corpus / "requirements" / f"{sid}.req", executor)
print(json.dumps([ok, total, why]))
"""


def scores(ids: list[str], *, recorded: bool) -> dict[str, tuple[int, int, str]]:
    """(correct, total, why it failed) per skill: built offline, or by the LLM compiler replaying its recording
    (each skill in a fresh process: `ONE`)."""
    out = {}
    if not recorded:  # the offline build asks no model: nothing to replay, so no process of its own is needed
        sys.path.insert(0, str(ROOT))
        from bench.faithfulness import measure_real

        for sid in ids:
            ok, total, why, _ = measure_real(CORPUS / "skills" / sid, CORPUS / "requirements" / f"{sid}.req", None)
            out[sid] = (ok, total, why)
        return out
    for sid in ids:
        done = subprocess.run([sys.executable, "-c", ONE, str(ROOT), str(CORPUS), sid, "1"],
                              capture_output=True, text=True, timeout=900, check=False)
        assert done.returncode == 0, f"{sid}: {done.stderr[-2000:]}"
        ok, total, why = json.loads(done.stdout.strip().splitlines()[-1])
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
