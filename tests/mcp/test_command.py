"""`skillc serve` refusing to serve: nothing is served unless every machine checks, names do not clash, the
executor and the SDK are there (no server is started by these tests)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from skillc import api
from skillc.cli import main
from tests.conftest import BROKEN, ROOT
from tests.mcp.conftest import ANSWER, SCRIPT, server_env


def test_two_machines_of_one_name_are_not_served(tmp_path: Path) -> None:
    twin = tmp_path / "twin.skm"
    twin.write_text(Path(ANSWER).read_text(encoding="utf-8"), encoding="utf-8")
    result = api.serve(api.ServeConfig(machines=(ANSWER, str(twin)), executor=SCRIPT))
    assert [str(d.code) for d in result.diagnostics] == ["SKM891"] and "served already" in result.diagnostics[0].message
    named = tmp_path / "resume.skm"
    named.write_text(Path(ANSWER).read_text(encoding="utf-8").replace("machine answer_file", "machine skillc_resume"),
                     encoding="utf-8")
    assert [str(d.code) for d in api.serve(api.ServeConfig(machines=(str(named),), executor=SCRIPT)).diagnostics] == [
        "SKM891"]


def test_a_machine_that_does_not_check_is_not_served(tmp_path: Path) -> None:
    broken = tmp_path / "broken.skm"
    broken.write_text(BROKEN, encoding="utf-8")
    result = CliRunner().invoke(main, ["serve", "--mcp", str(broken), "--executor", SCRIPT])
    assert result.exit_code == 1 and "SKM103" in result.output


def test_usage_errors(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(main, ["serve", ANSWER, "--executor", SCRIPT]).exit_code == 2  # no --mcp
    assert runner.invoke(main, ["serve", "--mcp", ANSWER]).exit_code == 2  # no executor
    bad = runner.invoke(main, ["serve", "--mcp", ANSWER, "--executor", "nonsense:x"])
    assert bad.exit_code == 2 and "unknown executor" in bad.output
    missing = runner.invoke(main, ["serve", "--mcp", ANSWER, "--executor", f"scripted:{tmp_path / 'none.json'}"])
    assert missing.exit_code == 2


def test_without_the_sdk_it_says_which_extra(tmp_path: Path) -> None:
    probe = ("import sys; sys.modules['mcp'] = None\n"
             "from skillc.cli import main\n"
             f"main(['serve', '--mcp', {ANSWER!r}, '--executor', {SCRIPT!r}])\n")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=server_env(), cwd=ROOT,
                       timeout=120, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "SKM890" in r.stderr and "skillc[mcp]" in r.stderr and r.stdout == ""
