"""The real-skill suites (bench/suites/real) load, and — opt-in, `SKILLC_BENCH_REAL=1`, about a minute — run to the
table docs/bench.md quotes ("Real-skill suites"): the builds and the scripted answers still fit each other."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillc.bench.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
SUITES = sorted((ROOT / "bench" / "suites" / "real").glob("*/suite.toml"))


def test_five_suites_of_ten_tasks_load() -> None:
    loaded = [load_suite(p) for p in SUITES]
    assert len(SUITES) == 5 and all(r.ok for r in loaded), [d for r in loaded for d in r.diagnostics]
    assert sum(len(r.suite.tasks) for r in loaded if r.suite) == 10


@pytest.mark.skipif(os.environ.get("SKILLC_BENCH_REAL") != "1", reason="about a minute: SKILLC_BENCH_REAL=1")
def test_the_documented_table_is_measured() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "real_skills.py")], capture_output=True, text=True,
                          timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    page = (ROOT / "docs" / "bench.md").read_text(encoding="utf-8")
    for line in done.stdout.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        counts = "| " + " | ".join(cells[:4]) + " |"
        assert counts in page, f"docs/bench.md lacks the measured row {counts}"
