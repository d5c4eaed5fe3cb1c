"""`skillc dot`: DOT, SVG and PNG through Graphviz, Mermaid, and trace overlays."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import skillc
from skillc.render import overlay_from_trace, to_dot, to_mermaid
from tests.conftest import EXAMPLES, MACHINE_EXAMPLES, ROOT
from tests.runtime.test_prompts_traces import LIVEMATH_SCRIPT

LIVEMATH = EXAMPLES / "livemath" / "livemath.skm"


def _skillc(*args, cwd=ROOT, env=None):
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_dot_draws_kinds_edges_counters_rules_and_fragments() -> None:
    m = skillc.check(LIVEMATH).machine
    dot = to_dot(m)
    assert dot.startswith('digraph "livemath" {')
    assert '__start -> "analyze"' in dot
    assert 'shape="diamond"' in dot and 'shape="component"' in dot and 'shape="doubleoctagon"' in dot
    assert "counters: repairs ≤ 2" in dot
    assert "1: completeness == incomplete and repairs" in dot and 'style="dashed"' in dot
    assert "⚑ required, order" in dot
    sheet = skillc.check(EXAMPLES / "spreadsheet" / "spreadsheet.skm").machine
    assert 'subgraph "cluster_save_script"' in to_dot(sheet)


def test_every_example_has_its_rendered_svg_in_the_docs() -> None:
    for folder in MACHINE_EXAMPLES:
        svg = ROOT / "docs" / "machines" / f"{folder.name}.svg"
        assert svg.is_file(), svg
        assert svg.read_text().lstrip().startswith(("<?xml", "<svg", "<!DOCTYPE"))


def test_svg_and_png_come_from_graphviz(tmp_path: Path) -> None:
    if not shutil.which("dot") and not os.environ.get("SKILLC_REQUIRE_GRAPHVIZ"):
        pytest.skip("Graphviz's `dot` is not on PATH: `make test` installs it as root, else "
                    "`sudo apt-get install graphviz` (CI sets SKILLC_REQUIRE_GRAPHVIZ=1 and fails here)")
    assert shutil.which("dot"), "Graphviz must be installed (CI installs it)"
    r = _skillc("dot", str(LIVEMATH), "-o", str(tmp_path / "m.svg"))
    assert r.returncode == 0
    assert "<svg" in (tmp_path / "m.svg").read_text()
    r = _skillc("dot", str(LIVEMATH), "-o", str(tmp_path / "m.png"))
    assert r.returncode == 0 and (tmp_path / "m.png").read_bytes().startswith(b"\x89PNG")
    r = _skillc("dot", str(LIVEMATH), "--format", "png")
    assert r.returncode == 2


def test_missing_graphviz_names_the_package(tmp_path: Path) -> None:
    r = _skillc("dot", str(LIVEMATH), "-o", str(tmp_path / "m.svg"), env={"PATH": str(tmp_path)})
    assert r.returncode == 2 and b"install the graphviz package" in r.stderr
    assert not (tmp_path / "m.svg").exists()


def test_mermaid_state_diagram() -> None:
    m = skillc.check(LIVEMATH).machine
    text = to_mermaid(m)
    assert text.startswith("stateDiagram-v2\n")
    assert "    [*] --> s_analyze" in text and "    s_verified --> [*]" in text
    assert 'state "judge_complete (judge)" as s_judge_complete' in text
    assert "s_read_back --> s_unverified: 3#58; else" in text  # labels are escaped, ids are not
    assert "s_read_back --> s_unverified#58;" not in text
    assert "class s_judge_complete judge" in text and "class s_write,s_read_back tool" in text
    r = _skillc("dot", str(LIVEMATH), "--format", "mermaid")
    assert r.returncode == 0 and r.stdout.decode() == text


def test_trace_overlay_counts_visits_and_marks_the_final_path(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps(LIVEMATH_SCRIPT))
    trace = tmp_path / "t.jsonl"
    r = _skillc("run", str(LIVEMATH), "--input", "question=q", "--input", 'options=["3","4","5","6","7"]',
                "--executor", f"scripted:{script}", "--trace", str(trace), "--workdir", str(tmp_path),
                "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 0, r.stderr
    m = skillc.check(LIVEMATH).machine
    ov = overlay_from_trace(m, trace)
    assert ov.visits["analyze"] == 1 and ov.visits["verified"] == 1 and "repair" not in ov.visits
    assert ("read_back", 1) in ov.final_path
    dot = to_dot(m, ov)
    assert "×1" in dot and 'color="#d93025"' in dot and 'color="#dadce0"' in dot
    r = _skillc("dot", str(LIVEMATH), "--trace", str(trace), "--format", "mermaid")
    assert r.returncode == 0 and b"(\xc3\x971)" in r.stdout
