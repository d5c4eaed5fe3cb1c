"""The command line's renderers (`skillc/console.py`) say the same thing as each other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillc import api, console
from tests.conftest import ROOT


def test_show_of_a_clean_machine_prints_only_its_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """`skillc show --format sarif` of a clean machine is the summary, not an empty SARIF log glued to it."""
    for fmt in ("full", "json", "sarif"):
        assert console.show(api.describe(str(ROOT / "examples" / "livemath" / "livemath.skm")), fmt) == 0
        out = capsys.readouterr().out
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
