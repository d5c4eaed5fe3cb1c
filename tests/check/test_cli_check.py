"""`skillc check` end to end: configuration, strictness, SARIF, quotations against the skill."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import skillc
from skillc.check.context import undecided
from skillc.config import parse_config
from skillc.diagnostics import Severity, has_errors
from tests.check.test_loops import LOOP
from tests.conftest import ROOT

UNREACHABLE = """machine m {
  var answer: str
  start think

  model think {
    writes answer
    prompt "Answer."
    -> done
  }

  model orphan {
    writes answer
    prompt "Never entered."
    -> done
  }

  terminal done: success { requires answer }
  fallback
  rule required think "Always think before answering."
}
"""


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120)


def _project(tmp_path: Path, config: str | None = None, name: str = "pyproject.toml") -> Path:
    if config is not None:
        (tmp_path / name).write_text(config)
    f = tmp_path / "m.skm"
    f.write_text(UNREACHABLE)
    return f


def test_warnings_pass_unless_strict(tmp_path: Path) -> None:
    f = _project(tmp_path)
    r = run("check", str(f))
    assert r.returncode == 0 and "warning[SKM200]" in r.stdout
    assert run("check", "--strict", str(f)).returncode == 1


def test_pyproject_can_raise_lower_and_silence_warnings(tmp_path: Path) -> None:
    f = _project(tmp_path, '[tool.skillc.severity]\nunreachable-state = "error"\n')
    r = run("check", str(f))
    assert r.returncode == 1 and "error[SKM200]" in r.stdout
    f = _project(tmp_path, '[tool.skillc.severity]\nSKM200 = "off"\n')
    r = run("check", str(f))
    assert r.returncode == 0 and "SKM200" not in r.stdout
    f = _project(tmp_path, "[tool.skillc]\nstrict = true\n")
    assert run("check", str(f)).returncode == 1


def test_skillc_toml_takes_top_level_keys(tmp_path: Path) -> None:
    f = _project(tmp_path, '[severity]\nSKM200 = "note"\n', name="skillc.toml")
    r = run("check", "--format", "json", "-v", str(f))  # notes only with -v, in every format (issue 17)
    assert r.returncode == 0
    assert json.loads(r.stdout.splitlines()[0])["severity"] == "note"
    assert run("check", "--format", "json", str(f)).stdout == ""


def test_invalid_configuration_is_reported_not_ignored(tmp_path: Path) -> None:
    f = _project(tmp_path, '[tool.skillc]\nstrict = "yes"\ncolour = 1\n[tool.skillc.severity]\n'
                           'SKM210 = "warning"\nSKM999 = "off"\nSKM200 = "loud"\n')
    r = run("check", "--format", "concise", str(f))
    assert r.returncode == 1
    for needle in ("`strict` must be true or false", "unknown setting `colour`",
                   "SKM210 (read-before-assignment) is an error and cannot be lowered",
                   "unknown diagnostic code `SKM999`", "must be error, warning, note or off"):
        assert needle in r.stdout, needle
    assert r.stdout.count("SKM290") == 5


def test_config_api() -> None:
    config, problems = parse_config({"severity": {"shadowed-edge": "error"}, "smt-timeout-ms": 50})
    assert problems == [] and config.severity == {"SKM241": Severity.ERROR} and config.smt_timeout_ms == 50


def test_sarif_log(tmp_path: Path) -> None:
    f = _project(tmp_path)
    r = run("check", "--format", "sarif", str(f))
    log = json.loads(r.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run_,) = log["runs"]
    assert run_["tool"]["driver"]["name"] == "skillc"
    rules = run_["tool"]["driver"]["rules"]
    assert [rule["id"] for rule in rules] == ["SKM200"] and rules[0]["name"] == "unreachable-state"
    (result,) = run_["results"]
    assert result["ruleId"] == "SKM200" and result["level"] == "warning" and result["ruleIndex"] == 0
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (11, 3)
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("m.skm")
    clean = run("check", "--format", "sarif", str(ROOT / "stdlib"))
    assert json.loads(clean.stdout)["runs"][0]["results"] == []


def test_quotations_are_checked_against_the_skill(tmp_path: Path) -> None:
    f = _project(tmp_path)
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Answering\n\n1. **Always** think before\n   answering.\n2. Reply.\n")
    assert "SKM223" not in run("check", "--skill", str(skill), str(f)).stdout
    skill.write_text("# Answering\n\n1. Always think hard before you answer.\n")
    r = run("check", "--skill", str(skill), str(f))
    assert r.returncode == 1 and "error[SKM223]" in r.stdout
    assert "nearest passage (SKILL.md:3" in r.stdout and "Always think hard before you answer." in r.stdout
    assert run("check", "--skill", str(tmp_path / "nope.md"), str(f)).returncode == 2


def test_declared_source_is_used_and_missing_source_warns(tmp_path: Path) -> None:
    f = tmp_path / "m.skm"
    f.write_text(UNREACHABLE.replace("  var answer", '  source "SKILL.md"\n  var answer'))
    r = skillc.check(f)
    assert "SKM224" in [str(d.code) for d in r.diagnostics]
    (tmp_path / "SKILL.md").write_text("Always think before answering.\n")
    assert [str(d.code) for d in skillc.check(f).diagnostics] == ["SKM200"]


def test_examples_check_clean_with_their_skills() -> None:
    r = run("check", "--strict", str(ROOT / "examples"), str(ROOT / "stdlib"))
    assert r.returncode == 0, r.stdout
    assert "checked 16 files: 0 errors, 0 warnings" in r.stderr


def test_fragments_are_checked_standalone(tmp_path: Path) -> None:
    f = tmp_path / "lib.skm"
    f.write_text("fragment spin(x: str) -> (out) {\n  start a\n\n  model a {\n    reads x\n    writes x\n"
                 '    prompt "Again."\n    -> a\n  }\n}\n')
    r = run("check", "--format", "concise", str(f))
    assert r.returncode == 1 and "SKM201" in r.stdout and "SKM250" in r.stdout


def test_solver_timeouts_become_warnings_not_hangs() -> None:
    text = """machine m {
  var x: int
  var y: int
  var z: int
  start s

  model s {
    writes x, y, z
    prompt "Pick three numbers."
    when x > 0 and y > 0 and z > 0 and x * x * x + y * y * y == z * z * z -> done
    -> done
  }

  terminal done: success
  fallback
}
"""
    import time

    start = time.perf_counter()
    result = skillc.check(text, smt_timeout_ms=1)
    assert time.perf_counter() - start < 20
    assert "SKM243" in [str(d.code) for d in result.diagnostics]
    assert all(d.severity is Severity.WARNING for d in result.diagnostics if str(d.code) == "SKM243")
    assert all(undecided(d) for d in result.diagnostics if str(d.code) == "SKM243")


def test_bad_config_values_are_diagnostics(tmp_path: Path) -> None:
    f = tmp_path / "m.skm"
    f.write_text(LOOP.replace("ASSIGN", ""))
    for config in ("tool = 1\n", '[tool.skillc.severity]\nSKM241 = ["error"]\n', "[tool.skillc]\nseverity = 3\n"):
        (tmp_path / "pyproject.toml").write_text(config)
        r = skillc.check(f)
        assert "SKM290" in [str(d.code) for d in r.diagnostics], config
        assert "SKM900" not in [str(d.code) for d in r.diagnostics]


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
                              text=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, timeout=120)

    assert run(strict / "m.skm", lax / "m.skm").returncode == 0  # the warning is in the lax project
    (strict / "m.skm").write_text(unreachable)
    assert run(strict / "m.skm", lax / "m.skm").returncode == 1


def test_checking_several_files_reads_shared_imports_once() -> None:
    cache = skillc.api.ImportCache()
    for example in ("spreadsheet", "data-analysis"):
        result = skillc.check(ROOT / "examples" / example / f"{example}.skm", imports=cache)
        assert not has_errors(result.diagnostics)
    assert {p.name for p in cache.done} >= {"write_verify.skm", "retry.skm"}
