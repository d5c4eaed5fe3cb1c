"""Machines the checker never sees because loading rejects them: each one is a diagnostic from the
command line and the API, never an internal error (SKM900) or a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from skillc.diagnostics import has_errors
from tests.check.helpers import check_text as _check
from tests.check.helpers import codes as _codes
from tests.check.test_loops import LOOP, _counter_machine
from tests.check.test_provenance import SOURCED
from tests.conftest import ROOT


def _cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120)


def test_huge_float_literal_is_a_diagnostic() -> None:
    text = LOOP.replace("ASSIGN", "").replace('answer == ""', "len(answer) < 1e999")
    assert _codes(text) == ["SKM017"]


def test_deeply_nested_types_are_a_diagnostic() -> None:
    deep = "list[" * 300 + "str" + "]" * 300
    assert _codes(f"machine m {{\n  var x: {deep}\n  fallback\n}}\n") == ["SKM007"]
    opt = "map[str, " * 150 + "int" + "]" * 150
    assert _codes(f"machine m {{\n  var x: {opt}\n  fallback\n}}\n") == ["SKM007"]


def test_maps_compare_with_the_empty_map_and_membership_rules_agree() -> None:
    base = "machine m {{\n  var mp: map[str, int] = {{}}\n  var o: str?\n  var s: str = \"x\"\n  start t\n\n" \
           "  model t {{\n    reads mp, s\n    writes o\n    prompt \"p\"\n" \
           "    when {guard} -> done\n    -> done\n  }}\n\n" \
           "  terminal done: success\n  fallback\n}}\n"
    assert _codes(base.format(guard="mp == {}")) == []
    assert _codes(base.format(guard="o in s")) == ["SKM109"]
    assert _codes(base.format(guard="contains(s, o)")) == ["SKM130"]


def test_forbid_fallback_is_an_error() -> None:
    text = SOURCED.replace('  source "SKILL.md"\n', "").replace("USE", "").replace(
        "RULE", 'rule forbid fallback "Never fail."')
    assert _codes(text) == ["SKM146"]


SOLO = """fragment solo() -> (out) {
  start out
}
machine m {
  start a
  USES
  terminal done: success
  fallback
}
"""


def test_a_self_routing_pass_through_instance_is_a_diagnostic(tmp_path: Path) -> None:
    text = SOLO.replace("USES", "use solo as a() -> (out: a)")
    assert _codes(text) == ["SKM145"]
    f = tmp_path / "solo.skm"
    f.write_text(text)
    for command in ("check", "dot"):
        r = _cli(command, str(f))
        assert r.returncode == 1 and "SKM145" in r.stdout + r.stderr and "SKM900" not in r.stdout + r.stderr, r


def test_a_chain_of_pass_through_instances_lands_on_a_state() -> None:
    result = _check(SOLO.replace("USES", "use solo as a() -> (out: b)\n  use solo as b() -> (out: done)"))
    assert not has_errors(result.diagnostics), [str(d.code) for d in result.diagnostics]
    assert result.machine.start == "done"


def test_an_absurd_integer_literal_is_a_diagnostic(tmp_path: Path) -> None:
    f = tmp_path / "big.skm"
    f.write_text(_counter_machine("-> done").replace("var answer: str", "var answer: str\n  var n: int = "
                                                                         + "9" * 4301))
    for args in (("check",), ("dot",), ("test", "--examples", "1")):
        r = _cli(*args, str(f))
        out = r.stdout + r.stderr
        assert "SKM147" in out and "Traceback" not in out and "SKM900" not in out, (args, out[-500:])
        assert r.returncode in (1, 2), (args, r.returncode)
    assert "SKM147" not in _codes(_counter_machine("-> done").replace("var answer: str", "var answer: str\n"
                                                                        "  var n: int = " + "9" * 4300))


