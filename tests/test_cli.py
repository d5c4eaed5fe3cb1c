"""The command line: formats, exit codes, colour, explain, show."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import BROKEN, ROOT


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})})


def _broken(tmp_path: Path) -> Path:
    f = tmp_path / "broken.skm"
    f.write_text(BROKEN)
    return f


def test_full_format_is_rustc_style(tmp_path: Path) -> None:
    r = run("check", str(_broken(tmp_path)), env={"NO_COLOR": "1"})
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "error[SKM103]: undefined variable `answr` in `writes`"
    assert lines[1].endswith("broken.skm:6:12")
    assert lines[1].lstrip().startswith("-->")
    assert "6 |     writes answr" in r.stdout
    assert "^^^^^ not declared" in r.stdout
    assert "= help: did you mean `answer`?" in r.stdout
    assert "\x1b[" not in r.stdout
    assert "1 error, 0 warnings" in r.stderr


def test_colour_only_when_forced_and_never_with_no_color(tmp_path: Path) -> None:
    f = _broken(tmp_path)
    assert "\x1b[" in run("check", str(f), env={"FORCE_COLOR": "1", "NO_COLOR": ""}).stdout
    assert "\x1b[" not in run("check", str(f), env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).stdout


def test_json_format(tmp_path: Path) -> None:
    r = run("check", str(_broken(tmp_path)), "--format", "json")
    assert r.returncode == 1
    objs = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(objs) == 1
    o = objs[0]
    assert o["code"] == "SKM103" and o["severity"] == "error"
    assert (o["line"], o["column"], o["end_line"], o["end_column"]) == (6, 12, 6, 17)
    assert o["file"].endswith("broken.skm") and o["hint"] == "did you mean `answer`?"
    assert set(o) >= {"file", "line", "column", "end_line", "end_column", "code", "severity", "message", "hint"}


def test_concise_and_github_formats(tmp_path: Path) -> None:
    f = _broken(tmp_path)
    r = run("check", str(f), "--format", "concise")
    assert r.stdout.strip().endswith("broken.skm:6:12: error[SKM103]: undefined variable `answr` in `writes`")
    r = run("check", str(f), "--format", "github")
    assert r.stdout.startswith("::error file=") and ",line=6,col=12,endLine=6,endColumn=17,title=SKM103::" in r.stdout


def test_exit_codes(tmp_path: Path) -> None:
    assert run("check", str(ROOT / "stdlib")).returncode == 0
    assert run("check", str(_broken(tmp_path))).returncode == 1
    assert run("check", str(tmp_path / "missing.skm")).returncode == 2
    assert run("check", "--format", "xml", str(ROOT / "stdlib")).returncode == 2
    assert run("check").returncode == 2


def test_folders_are_searched(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    _broken(tmp_path / "a")
    (tmp_path / "a" / "notes.txt").write_text("not skm")
    r = run("check", str(tmp_path), "--format", "concise")
    assert r.returncode == 1 and r.stdout.count("SKM103") == 1


def test_explain() -> None:
    r = run("explain", "SKM104")
    assert r.returncode == 0 and r.stdout.startswith("SKM104 (undefined-tool, error)")
    assert run("explain", "undefined-tool").stdout == r.stdout
    assert run("explain", "SKM999").returncode == 2
    listing = run("explain").stdout
    assert "SKM001" in listing and "SKM136" in listing


def test_show_prints_a_summary() -> None:
    r = run("show", str(ROOT / "stdlib" / "retry.skm"))
    # A fragment library has no machine: each fragment is shown as the machine it checks as (issue 17:
    # it used to exit 1 and print nothing while `check` called it clean).
    assert r.returncode == 0 and r.stdout.startswith("fragment retry") and "tool     run" in r.stdout
    r = run("show", str(ROOT / "examples" / "livemath" / "livemath.skm"))
    assert r.returncode == 0
    assert r.stdout.startswith("machine livemath")
    assert "states" in r.stdout and "transitions" in r.stdout


def test_version_and_module_entry_point() -> None:
    r = run("--version")
    assert r.returncode == 0 and "skillc, version" in r.stdout


def test_long_lines_are_shown_as_a_window(tmp_path: Path) -> None:
    f = tmp_path / "long.skm"
    f.write_text("machine m { " + "var x: str " * 300 + " model s { when -> x } }\n")
    r = run("check", str(f), env={"NO_COLOR": "1"})
    excerpt = [line for line in r.stdout.splitlines() if line.startswith("1 |")][0]
    assert len(excerpt) < 200 and "when -> x" in excerpt
    marker = [line for line in r.stdout.splitlines() if "^^" in line][0]
    assert excerpt[marker.index("^^") : marker.index("^^") + 2] == "->"


def test_internal_errors_are_reported_as_bugs(monkeypatch, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc import api, cli

    def boom(*args, **kwargs):
        raise RuntimeError("simulated defect")

    monkeypatch.setattr(api, "load", boom)
    f = _broken(tmp_path)
    result = CliRunner().invoke(cli.main, ["check", str(f), "--format", "concise"])
    assert result.exit_code == 3
    assert "error[SKM900]: internal error in skillc (this is a bug" in result.output
    assert "Traceback" not in result.output
