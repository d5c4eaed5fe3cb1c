"""The command-line conventions of ruff and mypy: `-` for stdin, `-q`, `--config`, `--select/--ignore`,
`--exit-zero`, `--output-format`, one notes policy for every format, and config errors with positions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillc.registry import lookup
from tests.conftest import ROOT, STDLIB

SHADOWED = lookup("SKM241").bad  # one warning (SKM241) with a secondary label
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
}
"""
TYPO = UNREACHABLE.replace("writes answer\n    prompt \"Answer.\"", "writes answr\n    prompt \"Answer.\"")


def run(*args: str, stdin: str | None = None, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          input=stdin, env={**os.environ, "NO_COLOR": "1"}, timeout=120)


def test_check_reads_stdin_and_names_it(tmp_path: Path) -> None:
    r = run("check", "-", stdin=UNREACHABLE)
    assert r.returncode == 0 and "<stdin>:11:3" in r.stdout and "warning[SKM200]" in r.stdout
    r = run("check", "--output-format", "concise", "--stdin-filename", "machines/m.skm", "-", stdin=TYPO)
    assert r.returncode == 1 and r.stdout.startswith("machines/m.skm:") and "error[" in r.stdout
    # Imports resolve beside --stdin-filename, as if the text were that file.
    use = (STDLIB / "retry.skm").read_text()
    r = run("check", "-q", "--stdin-filename", str(STDLIB / "retry.skm"), "-", stdin=use)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == ""


def test_stdin_that_is_not_text_is_a_diagnostic() -> None:
    r = subprocess.run([sys.executable, "-m", "skillc", "check", "-"], input=b"\xff\xfe\x00machine",
                       capture_output=True, timeout=120)
    assert r.returncode == 1 and b"Traceback" not in r.stderr and b"SKM" in r.stdout


def test_quiet_prints_diagnostics_only() -> None:
    loud = run("check", "-", stdin=UNREACHABLE)
    quiet = run("check", "-q", "-", stdin=UNREACHABLE)
    assert "checked 1 file" in loud.stderr and quiet.stderr == ""
    assert quiet.stdout == loud.stdout and quiet.returncode == loud.returncode == 0


def test_output_format_is_an_alias_of_format() -> None:
    a = run("check", "--format", "json", "-", stdin=UNREACHABLE)
    b = run("check", "--output-format", "json", "-", stdin=UNREACHABLE)
    assert a.stdout == b.stdout and json.loads(a.stdout)["code"] == "SKM200"
    for command in ("show", "build", "distill"):
        assert "--output-format" in run(command, "--help").stdout, command


def test_exit_zero_keeps_usage_errors() -> None:
    assert run("check", "-", stdin=TYPO).returncode == 1
    assert run("check", "--exit-zero", "-", stdin=TYPO).returncode == 0
    assert run("check", "--exit-zero", "no/such/file.skm").returncode == 2


def test_select_and_ignore_choose_warnings_but_never_hide_errors() -> None:
    assert "SKM241" in run("check", "-", stdin=SHADOWED).stdout
    assert run("check", "--ignore", "SKM241", "-", stdin=SHADOWED).stdout == ""
    assert run("check", "--ignore", "shadowed-edge", "-", stdin=SHADOWED).stdout == ""
    assert run("check", "--select", "SKM2", "-", stdin=SHADOWED).stdout.count("SKM241") >= 1
    assert run("check", "--select", "SKM200", "-", stdin=SHADOWED).stdout == ""
    # --strict counts only the warnings that are reported.
    assert run("check", "--strict", "-", stdin=SHADOWED).returncode == 1
    assert run("check", "--strict", "--ignore", "SKM241", "-", stdin=SHADOWED).returncode == 0
    # An error is the checker's promise: selecting other codes keeps it, naming it is refused.
    typo = run("check", "--select", "SKM200", "-", stdin=TYPO)
    assert typo.returncode == 1 and "error[" in typo.stdout
    code = json.loads(run("check", "--format", "json", "-", stdin=TYPO).stdout.splitlines()[0])["code"]
    refused = run("check", "--ignore", code, "-", stdin=TYPO)
    assert refused.returncode == 2 and "cannot be ignored" in refused.stdout
    unknown = run("check", "--select", "nonsense", "-", stdin=UNREACHABLE)
    assert unknown.returncode == 2 and "not a diagnostic code" in unknown.stdout


def test_config_flag_replaces_the_nearest_configuration(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.skillc]\nstrict = true\n')
    machine = tmp_path / "m.skm"
    machine.write_text(UNREACHABLE)
    assert run("check", str(machine)).returncode == 1  # the project's strict = true
    other = tmp_path / "relaxed.toml"
    other.write_text('[severity]\nunreachable-state = "off"\n')
    r = run("check", "--config", str(other), str(machine))
    assert r.returncode == 0 and "SKM200" not in r.stdout
    assert run("check", "--config", str(tmp_path / "none.toml"), str(machine)).returncode == 2


def test_config_errors_point_at_the_key(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.skillc]\nstrict = "yes"\n\n[tool.skillc.severity]\n'
        'SKM210 = "off"\nunreachable-state = "loud"\n')
    machine = tmp_path / "m.skm"
    machine.write_text(UNREACHABLE)
    r = run("check", "--output-format", "concise", str(machine), cwd=tmp_path)
    lines = [line for line in r.stdout.splitlines() if "SKM290" in line]
    assert [line.split(": ")[0] for line in lines] == ["pyproject.toml:5:1", "pyproject.toml:8:1", "pyproject.toml:9:1"]
    inline = tmp_path / "inline.toml"
    inline.write_text('strict = true\nseverity = { SKM210 = "off" }\n')
    r = run("check", "--config", str(inline), "--output-format", "json", str(machine), cwd=tmp_path)
    bad = json.loads(r.stdout.splitlines()[0])
    assert (bad["code"], bad["file"], bad["line"], bad["column"]) == ("SKM290", "inline.toml", 2, 14)
    broken = tmp_path / "broken.toml"
    broken.write_text("strict = \n")
    r = run("check", "--config", str(broken), "--output-format", "concise", str(machine), cwd=tmp_path)
    assert r.stdout.startswith("broken.toml:1:10: error[SKM290]")


@pytest.mark.parametrize("fmt", ["full", "concise", "json", "github", "sarif"])
def test_notes_follow_one_policy_in_every_format(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "skillc.toml").write_text('[severity]\nunreachable-state = "note"\n')
    machine = tmp_path / "m.skm"
    machine.write_text(UNREACHABLE)
    hidden = run("check", "--output-format", fmt, str(machine))
    shown = run("check", "--output-format", fmt, "-v", str(machine))
    assert "SKM200" not in hidden.stdout and "SKM200" in shown.stdout
    assert hidden.returncode == shown.returncode == 0


def test_json_keeps_labels_and_secondary_spans() -> None:
    (d,) = [json.loads(line) for line in run("check", "--format", "json", "-", stdin=SHADOWED).stdout.splitlines()]
    assert d["code"] == "SKM241"
    (related,) = d["related"]
    assert related["message"] == "this earlier guard already covers it"
    assert related["file"] == "<stdin>" and related["line"] < d["line"] and related["column"] >= 1
    assert {"end_line", "end_column"} <= related.keys()


def test_dot_and_build_read_stdin(tmp_path: Path) -> None:
    r = run("dot", "-", stdin=(ROOT / "examples" / "livemath" / "livemath.skm").read_text())
    assert r.returncode == 0 and r.stdout.startswith('digraph "livemath"')
    skill = ROOT / "examples" / "livemath" / "SKILL.md"
    r = run("build", "-", "--stdin-filename", "examples/livemath/SKILL.md", stdin=skill.read_text())
    assert r.returncode == 0 and 'source "examples/livemath/SKILL.md"' in r.stdout
    assert "skillc-stdin-" not in r.stdout + r.stderr
    from_file = run("build", str(skill), "-o", "-")
    assert r.stdout == from_file.stdout


def test_a_fragment_library_is_shown_and_drawn_not_silently_refused() -> None:
    retry = str(STDLIB / "retry.skm")
    r = run("dot", retry)
    assert r.returncode == 0 and r.stdout.startswith("digraph") and "run" in r.stdout
    r = run("dot", retry, "--fragment", "nope")
    assert r.returncode == 2 and "has no fragment `nope`" in r.stderr + r.stdout


def test_endless_stdin_is_refused_not_read_into_memory() -> None:
    with open("/dev/zero", "rb") as zero:
        r = subprocess.run([sys.executable, "-m", "skillc", "check", "-"], stdin=zero, capture_output=True,
                           text=True, timeout=120)
    assert r.returncode == 2 and "standard input is over" in r.stdout


def test_quiet_fmt_and_build(tmp_path: Path) -> None:
    messy = tmp_path / "m.skm"
    messy.write_text((STDLIB / "retry.skm").read_text() + "\n\n\n")
    loud, quiet = run("fmt", "--check", str(messy)), run("fmt", "--check", "-q", str(messy))
    assert loud.returncode == quiet.returncode == 1 and "would reformat" in loud.stderr and quiet.stderr == ""
    skill = ROOT / "examples" / "livemath" / "SKILL.md"
    loud = run("build", str(skill), "-o", str(tmp_path / "a.skm"))
    quiet = run("build", str(skill), "-o", str(tmp_path / "b.skm"), "-q")
    assert "built " in loud.stderr and "built " not in quiet.stderr and quiet.returncode == loud.returncode == 0
