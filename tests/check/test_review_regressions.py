"""Regressions for defects found in review: each machine here was once accepted, mis-reported or crashed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import skillc
from skillc.diagnostics import has_errors
from tests.conftest import ROOT


def _codes(text: str, **kw) -> list[str]:
    return sorted(d.code for d in skillc.check(text, path=str(ROOT / "case.skm"), **kw).diagnostics
                  if d.severity.name != "NOTE")


LOOP = """machine m {
  var answer: str
  counter tries max 2
  start think

  model think {
    writes answer
    prompt "p"
    when answer == "" and tries < 2 -> reset { tries += 1 }
    -> done
  }

  model reset {
    writes answer
    prompt "p"
    -> think ASSIGN
  }

  terminal done: success
  fallback
}
"""


def test_counters_only_step_up_or_reset_to_a_constant_in_range() -> None:
    assert _codes(LOOP.replace("ASSIGN", "")) == []
    assert _codes(LOOP.replace("ASSIGN", "{ tries = 5 }")) == ["SKM139"]
    assert _codes(LOOP.replace("ASSIGN", "{ tries -= 1 }")) == ["SKM139"]
    assert "SKM139" in _codes(LOOP.replace("ASSIGN", "{ tries += tries }"))


def test_a_fragment_state_cannot_write_a_counter_it_is_bound_to() -> None:
    text = """fragment bump(n: int) -> (out) {
  start s

  model s {
    writes n
    prompt "Pick a number."
    -> out
  }
}

machine m {
  var answer: str
  counter tries max 2
  start think

  model think {
    writes answer
    prompt "p"
    when answer == "" and tries < 2 -> w { tries += 1 }
    -> done
  }

  use bump as w(n: tries) -> (out: think)
  terminal done: success
  fallback
}
"""
    assert "SKM137" in _codes(text)


def test_modulo_follows_python_semantics_in_the_solver() -> None:
    text = LOOP.replace("ASSIGN", "").replace('when answer == "" and tries < 2 -> reset { tries += 1 }',
                                                 "when tries % -3 == -1 -> reset { tries += 1 }")
    codes = _codes(text)
    assert "SKM251" in codes and "SKM240" not in codes  # tries = 2 satisfies the guard, then overflows


def test_string_constants_are_taken_literally_by_the_solver() -> None:
    # `len` forces real Z3 strings; the literal is six characters (backslash, u, {, 4, 1, }), not "A".
    text = LOOP.replace("ASSIGN", "").replace('when answer == "" and tries < 2',
                                              'when answer == "\\\\u{41}" and len(answer) == 1 and tries < 2')
    assert "SKM240" in _codes(text)
    assert "SKM240" not in _codes(text.replace("len(answer) == 1", "len(answer) == 6"))


def test_huge_float_literal_is_a_diagnostic() -> None:
    text = LOOP.replace("ASSIGN", "").replace('answer == ""', "len(answer) < 1e999")
    assert _codes(text) == ["SKM017"]


def test_deeply_nested_types_are_a_diagnostic() -> None:
    deep = "list[" * 300 + "str" + "]" * 300
    assert _codes(f"machine m {{\n  var x: {deep}\n  fallback\n}}\n") == ["SKM007"]
    opt = "map[str, " * 150 + "int" + "]" * 150
    assert _codes(f"machine m {{\n  var x: {opt}\n  fallback\n}}\n") == ["SKM007"]


def test_every_requires_line_reports_at_its_own_name() -> None:
    text = """machine m {
  var a: str
  var b: str
  start s

  model s {
    writes a
    prompt "p"
    -> done
  }

  terminal done: success {
    requires a
    requires b, c
  }

  fallback
}
"""
    result = skillc.check(text)
    spans = {d.code: d.span.start_pos for d in result.diagnostics}
    assert spans == {"SKM103": (14, 17)}
    result = skillc.check(text.replace("requires b, c", "requires b"))
    assert [(d.code, d.span.start_pos) for d in result.diagnostics] == [("SKM213", (14, 14))]


def test_maps_compare_with_the_empty_map_and_membership_rules_agree() -> None:
    base = "machine m {{\n  var mp: map[str, int] = {{}}\n  var o: str?\n  var s: str = \"x\"\n  start t\n\n" \
           "  model t {{\n    reads mp, s\n    writes o\n    prompt \"p\"\n    when {guard} -> done\n    -> done\n  }}\n\n" \
           "  terminal done: success\n  fallback\n}}\n"
    assert _codes(base.format(guard="mp == {}")) == []
    assert _codes(base.format(guard="o in s")) == ["SKM109"]
    assert _codes(base.format(guard="contains(s, o)")) == ["SKM130"]


def test_loops_among_unreachable_states_are_only_unreachable() -> None:
    text = """machine m {
  var x: str
  start a

  model a {
    writes x
    prompt "p"
    -> done
  }

  model b {
    writes x
    prompt "p"
    -> c
  }

  model c {
    writes x
    prompt "p"
    -> b
  }

  terminal done: success
  fallback
}
"""
    assert _codes(text) == ["SKM200", "SKM200"]


def test_bad_config_values_are_diagnostics(tmp_path: Path) -> None:
    f = tmp_path / "m.skm"
    f.write_text(LOOP.replace("ASSIGN", ""))
    for config in ("tool = 1\n", '[tool.skillc.severity]\nSKM241 = ["error"]\n', "[tool.skillc]\nseverity = 3\n"):
        (tmp_path / "pyproject.toml").write_text(config)
        r = skillc.check(f)
        assert "SKM290" in [d.code for d in r.diagnostics], config
        assert "SKM900" not in [d.code for d in r.diagnostics]


def test_strictness_is_decided_per_project(tmp_path: Path) -> None:
    strict, lax = tmp_path / "strict", tmp_path / "lax"
    for folder in (strict, lax):
        folder.mkdir()
        (folder / "m.skm").write_text(LOOP.replace("ASSIGN", ""))
    (strict / "pyproject.toml").write_text("[tool.skillc]\nstrict = true\n")
    (lax / "pyproject.toml").write_text("")
    unreachable = LOOP.replace("ASSIGN", "").replace("  terminal done", "  model spare {\n    writes answer\n"
                                                      '    prompt "p"\n    -> done\n  }\n\n  terminal done')
    (lax / "m.skm").write_text(unreachable)

    def run(*paths):
        return subprocess.run([sys.executable, "-m", "skillc", "check", *map(str, paths)], capture_output=True,
                              text=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"})

    assert run(strict / "m.skm", lax / "m.skm").returncode == 0  # the warning is in the lax project
    (strict / "m.skm").write_text(unreachable)
    assert run(strict / "m.skm", lax / "m.skm").returncode == 1


def test_checking_several_files_reads_shared_imports_once() -> None:
    cache = skillc.api.ImportCache()
    for example in ("spreadsheet", "data-analysis"):
        result = skillc.check(ROOT / "examples" / example / f"{example}.skm", imports=cache)
        assert not has_errors(result.diagnostics)
    assert {p.name for p in cache.done} >= {"write_verify.skm", "retry.skm"}
