"""The command line's renderers (`skillc/console.py`) say the same thing as each other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillc import api, console
from tests.conftest import ROOT


def test_show_of_a_clean_machine_prints_only_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """`skillc show` of a clean machine is the summary alone; with `--format json` one JSON object holding it and
    no diagnostics; with `--format sarif` an empty SARIF log alone on stdout, the summary beside it on stderr."""
    import json

    for fmt in ("full", "concise", "json", "sarif"):
        assert console.show(api.describe(str(ROOT / "examples" / "livemath" / "livemath.skm")), fmt) == 0
        out, err = capsys.readouterr()
        if fmt == "json":
            found = json.loads(out)
            assert found["summary"].startswith("machine livemath") and found["diagnostics"] == [], out[:200]
        elif fmt == "sarif":
            assert json.loads(out)["runs"][0]["results"] == [] and err.startswith("machine livemath"), out[:200]
        else:
            assert out.startswith("machine livemath") and "$schema" not in out, (fmt, out[:200])


def test_build_counts_states_as_show_does(tmp_path: Path) -> None:
    """`skillc build`'s summary line and `skillc show` of the machine it wrote give the same number of states."""
    out = tmp_path / "livemath.skm"
    outcome = api.build(str(ROOT / "examples" / "livemath" / "SKILL.md"), output=str(out))
    assert outcome.result is not None and outcome.text is not None
    out.write_text(outcome.text, encoding="utf-8")
    line = console.build_summary(outcome.result, out)
    shown = api.describe(str(out)).text
    assert shown is not None
    total = re.search(r"(\d+) states \(", shown)
    built = re.search(r": (\d+) states \((\d+) model, judge or tool\)", line)
    assert total and built, (shown, line)
    assert built.group(1) == total.group(1)
    machine = outcome.result.machine
    assert machine is not None
    ends = sum(s.kind in ("terminal", "fallback") for s in machine.states.values())
    assert int(built.group(1)) == int(built.group(2)) + ends and ends > 0


def test_lsp_with_standard_input_closed_is_a_usage_error() -> None:
    """`skillc lsp` started with fd 0 closed (a service manager, a CI step) says so and exits 2, no traceback."""
    import subprocess
    import sys

    pytest.importorskip("pygls")
    r = subprocess.run([sys.executable, "-m", "skillc", "lsp"], stdin=None, capture_output=True, text=True,
                       timeout=60, preexec_fn=lambda: __import__("os").close(0))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "its standard input is closed" in r.stderr
