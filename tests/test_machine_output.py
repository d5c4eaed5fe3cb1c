"""Machine-readable stdout is exactly the document(s) asked for: with warnings, errors, reports, progress and
prints of user code present, everything else goes to stderr (docs/cli.md, "stdout and stderr").

Each command runs for real (`python -m skillc`, stdin closed) and its stdout is parsed: JSON documents with
`json`, SARIF logs against the official SARIF 2.1.0 schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.ecosystem.test_cli_conventions import TYPO, UNREACHABLE
from tests.ecosystem.test_sarif_and_schemas import sarif_validator
from tests.frontends.distill.conftest import jsonl, trace
from tests.frontends.distill.kitchen import training
from tests.improve.evolve.test_cli import EXECUTOR, SUITE, _roles
from tests.improve.refine.test_refine import demo, fresh  # noqa: F401 - demo is a fixture

ROOT = Path(__file__).parents[1]
BEATS = ROOT / "tests" / "bench" / "fixtures" / "beats"
# SKM620, translates
ASL_WARNING = ROOT / "tests" / "frontends" / "importers" / "corpus" / "own" / "missing-default.asl.json"
DIAGNOSTIC_KEYS = {"file", "line", "column", "code", "severity", "message"}


def skillc(*args: str | Path, stdin: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """`skillc ARGS` in a child, outputs captured (bounded)."""
    return subprocess.run([sys.executable, "-m", "skillc", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=300)


def json_lines(text: str) -> list[dict]:
    """Every line of `text` as a JSON object (an empty text: none); fails on any other line."""
    found = [json.loads(line) for line in text.splitlines()]
    assert all(isinstance(x, dict) for x in found), text[:300]
    return found


def sarif(text: str) -> dict:
    """`text` as one SARIF log that validates against the schema."""
    log = json.loads(text)
    sarif_validator().validate(log)
    return log


def _machines(tmp_path: Path) -> tuple[Path, Path]:
    """A machine with a warning (SKM200) and one with an error."""
    warned, broken = tmp_path / "warned.skm", tmp_path / "broken.skm"
    warned.write_text(UNREACHABLE, encoding="utf-8")
    broken.write_text(TYPO, encoding="utf-8")
    return warned, broken


def test_show_json_is_one_document_with_the_summary_and_the_diagnostics(tmp_path: Path) -> None:
    warned, broken = _machines(tmp_path)
    r = skillc("show", warned, "--format", "json")
    shown = json.loads(r.stdout)
    assert r.returncode == 0 and shown["summary"].startswith("machine m") and r.stderr == ""
    assert shown["diagnostics"] == []  # `show` loads the machine: the checks' warnings are `check`'s
    r = skillc("show", broken, "--format", "json")
    shown = json.loads(r.stdout)
    assert r.returncode == 1 and shown["summary"] is None and shown["diagnostics"][0]["severity"] == "error"
    assert shown["diagnostics"][0].keys() >= DIAGNOSTIC_KEYS and r.stderr == ""


def test_show_sarif_is_the_log_alone_with_the_summary_on_stderr(tmp_path: Path) -> None:
    warned, broken = _machines(tmp_path)
    r = skillc("show", warned, "--format", "sarif")
    assert r.returncode == 0 and r.stderr.startswith("machine m") and sarif(r.stdout)["runs"][0]["results"] == []
    r = skillc("show", broken, "--format", "sarif")
    assert r.returncode == 1 and sarif(r.stdout)["runs"][0]["results"] and r.stderr == ""


def test_check_json_and_sarif_carry_warnings_and_errors_and_no_summary(tmp_path: Path) -> None:
    warned, broken = _machines(tmp_path)
    r = skillc("check", warned, broken, "--format", "json", "-v")
    assert r.returncode == 1 and {d["severity"] for d in json_lines(r.stdout)} >= {"warning", "error"}
    r = skillc("check", warned, broken, "--format", "sarif")
    assert r.returncode == 1 and len(sarif(r.stdout)["runs"][0]["results"]) >= 2 and "checked" not in r.stdout


def test_an_import_to_stdout_is_the_skm_and_its_findings_go_to_stderr(tmp_path: Path) -> None:
    r = skillc("import", "asl", ASL_WARNING, "--format", "json")
    assert r.returncode == 0 and r.stdout.startswith("machine ")
    assert [d["code"] for d in json_lines(r.stderr)] == ["SKM620"]
    assert skillc("check", "-", stdin=r.stdout).returncode == 0  # stdout is a whole machine and nothing else
    r = skillc("import", "asl", ASL_WARNING, "--format", "json", "-o", tmp_path / "m.skm")
    assert [d["code"] for d in json_lines(r.stdout)] == ["SKM620"] and (tmp_path / "m.skm").is_file()
    r = skillc("import", "asl", ASL_WARNING, "--format", "sarif", "-o", tmp_path / "m.skm")
    assert [x["ruleId"] for x in sarif(r.stdout)["runs"][0]["results"]] == ["SKM620"]


def test_build_keeps_stdout_for_the_machine_or_the_diagnostics(tmp_path: Path) -> None:
    skill = (ROOT / "examples" / "livemath" / "SKILL.md").read_text(encoding="utf-8")
    r = skillc("build", "-", "--format", "json", "--report", stdin=skill)
    assert r.returncode == 0 and r.stdout.startswith("machine livemath") and "clause" in r.stderr
    assert skillc("check", "-", "--stdin-filename", ROOT / "examples" / "livemath" / "x.skm",
                  stdin=r.stdout).returncode == 0
    out = tmp_path / "SKILL.md"
    out.write_text(skill, encoding="utf-8")
    r = skillc("build", out, "-o", tmp_path / "m.skm", "--format", "sarif", "--report")
    assert r.returncode == 0 and sarif(r.stdout)["runs"][0]["results"] == [] and "clause" in r.stderr


def test_distill_json_and_sarif_with_warnings_and_the_report(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    lost = trace(["take apple from counter", "eat apple"], ident="lost", success=False)
    odd = trace(["take apple from counter", "juggle apple"], ident="odd")
    path.write_text(jsonl(*training(), lost, odd), encoding="utf-8")
    r = skillc("distill", path, "--report", "--format", "json")
    found = json.loads(r.stdout)
    assert r.returncode == 0 and {d["code"] for d in found["diagnostics"]} >= {"SKM402", "SKM403"}, r.stdout[:300]
    r = skillc("distill", path, "--report", "--format", "sarif", "-o", tmp_path / "lib")
    codes = {x["ruleId"] for x in sarif(r.stdout)["runs"][0]["results"]}
    assert r.returncode == 0 and codes >= {"SKM402", "SKM403"} and "skill  " in r.stderr and "wrote" not in r.stdout


def _printing_tools(tmp_path: Path) -> Path:
    """The beats fixture's `mark` tool, printing to stdout as user code may."""
    tools = tmp_path / "loud.py"
    tools.write_text("def mark(note: str) -> dict:\n    print('a print from a tool', note)\n"
                     "    return {'ok': True}\n", encoding="utf-8")
    return tools


def test_run_and_score_json_stay_json_when_a_tool_prints(tmp_path: Path) -> None:
    tools, traced = _printing_tools(tmp_path), tmp_path / "run.jsonl"
    r = skillc("run", BEATS / "beats.skm", "--executor", f"scripted:{BEATS / 'script.json'}", "--tools", tools,
               "--input", "question=q", "--workdir", tmp_path, "--journal", tmp_path / "j.sqlite", "--trace", traced,
               "--json")
    result = json.loads(r.stdout)
    assert r.returncode == 0 and result["outcome"] == "success" and "a print from a tool 42" in r.stderr
    r = skillc("score", BEATS / "beats.skm", traced, "--suite", BEATS / "suite.toml", "--task", "t1", "--workdir",
               tmp_path, "--json")
    lines = json_lines(r.stdout)
    assert r.returncode == 0 and len(lines) == 2 and lines[-1]["traces"] == 1, r.stdout
    broken = tmp_path / "broken.skm"
    broken.write_text(TYPO, encoding="utf-8")
    r = skillc("run", broken, "--executor", f"scripted:{BEATS / 'script.json'}", "--json")
    assert r.returncode == 1 and r.stdout == "" and "error[" in r.stderr


def test_bench_json_is_one_document(tmp_path: Path) -> None:
    r = skillc("bench", BEATS / "suite.toml", "--modes", "machine,native", "--executor",
               f"scripted:{BEATS / 'script.json'}", "-o", tmp_path / "out", "--json")
    found = json.loads(r.stdout)
    assert r.returncode == 0 and found["cells"] == 8 and len(found["groups"]) == 2, r.stderr


def test_evolve_json_is_one_document_when_a_test_case_prints(tmp_path: Path) -> None:
    machine, roles = tmp_path / "root.skm", tmp_path / "roles.json"
    machine.write_text((BEATS / "beats.skm").read_text(encoding="utf-8").replace("printf '%s", "printf 'answer: %s"),
                       encoding="utf-8")
    script = _roles()
    case = script["verify"]["h1"][0][0]
    case["source"] = case["source"].replace("    path =", "    print('a print from a case')\n    path =")
    roles.write_text(json.dumps(script), encoding="utf-8")
    r = skillc("evolve", machine, "--suite", SUITE, "--task", "t1", "--executor", EXECUTOR, "--reflect-model",
               f"scripted:{roles}", "-o", tmp_path / "out", "--json")
    found = json.loads(r.stdout)
    assert r.returncode == 0 and found["best"]["name"] == "B", r.stderr


def test_refine_json_is_one_object_per_trace_and_a_summary(
        demo: tuple[Path, list[str]]) -> None:  # noqa: F811 - demo is the imported fixture
    root, traces = demo
    target = fresh(root, "machine-output")
    r = skillc("refine", target, *traces, "--dry-run", "--json")
    lines = json_lines(r.stdout)
    assert r.returncode == 4 and len(lines) == len(traces) + 1, r.stderr
    assert lines[-1]["traces"] == len(traces) and lines[-1]["dropped"] == 1 and lines[-1]["dry_run"] is True
