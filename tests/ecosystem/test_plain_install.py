"""A plain `pip install skillc` (core dependencies only): every command works or fails with an install hint
(exit 2), never a traceback; the bundled pytest plugin loads without Hypothesis."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, ROOT, STDLIB
from tests.runtime.test_prompts_traces import LIVEMATH_SCRIPT

LIVEMATH = EXAMPLES / "livemath"


def bare(*args: str, cwd: Path = ROOT, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Run `skillc ARGS` (or `pytest ARGS` when the first is "pytest") with the optional extras hidden."""
    head = [] if args and args[0] == "pytest" else ["skillc"]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "tests.ecosystem.hide_extras", *head, *args], capture_output=True,
                          text=True, cwd=cwd, env=env, input=stdin, timeout=300)


def test_the_extras_really_are_hidden() -> None:
    r = subprocess.run([sys.executable, "-c", "import tests.ecosystem.hide_extras as h, sys; "
                        "sys.meta_path.insert(0, h.HideExtras()); import hypothesis"], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 1 and "hidden: not a core dependency" in r.stderr


def test_core_commands_work(tmp_path: Path) -> None:
    machine = LIVEMATH / "livemath.skm"
    assert bare("check", str(EXAMPLES), str(STDLIB)).returncode == 0
    assert bare("show", str(machine)).returncode == 0
    assert bare("dot", str(machine), "-o", str(tmp_path / "m.dot")).returncode == 0
    assert bare("fmt", "--check", str(STDLIB)).returncode == 0
    assert bare("explain", "SKM200").returncode == 0
    assert bare("grammar", "--format", "gbnf").returncode == 0
    assert bare("build", str(LIVEMATH / "SKILL.md"), "-o", str(tmp_path / "built.skm")).returncode == 0
    script = tmp_path / "s.json"
    script.write_text(json.dumps(LIVEMATH_SCRIPT))
    trace = tmp_path / "t.jsonl"
    r = bare("run", str(machine), "--input", "question=What is 2+2?", "--input", 'options=["3","4","5","6","7"]',
             "--executor", f"scripted:{script}", "--trace", str(trace), "--workdir", str(tmp_path),
             "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 0, r.stderr
    assert bare("replay", str(machine), str(trace)).returncode == 0
    assert bare("score", str(machine), str(trace)).returncode == 0


def test_skillc_test_runs_without_hypothesis() -> None:
    r = bare("test", str(LIVEMATH / "livemath.skm"), "--examples", "5")
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
    assert "runs:" in r.stdout


@pytest.mark.parametrize(("args", "hint"), [
    (("lsp",), "pip install 'skillc[lsp]'"),
    (("run", str(LIVEMATH / "livemath.skm"), "--executor", "openai:gpt-4o-mini", "--input", "question=q",
      "--input", 'options=["1","2","3","4","5"]'), "pip install 'skillc[openai]'"),
    (("run", str(LIVEMATH / "livemath.skm"), "--executor", "anthropic:claude", "--input", "question=q",
      "--input", 'options=["1","2","3","4","5"]'), "pip install 'skillc[anthropic]'"),
    (("run", str(LIVEMATH / "livemath.skm"), "--executor", "local", "--input", "question=q",
      "--input", 'options=["1","2","3","4","5"]'), "pip install 'skillc[local]'"),
    (("collect", "-o", "traces.jsonl", "--count", "1"), "textworld"),
])
def test_commands_that_need_an_extra_name_it(tmp_path: Path, args: tuple[str, ...], hint: str) -> None:
    r = bare(*args, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert hint in r.stdout + r.stderr and "Traceback" not in r.stderr


def test_build_with_a_model_needs_its_extra(tmp_path: Path) -> None:
    r = bare("build", str(LIVEMATH / "SKILL.md"), "-o", str(tmp_path / "x.skm"), "--model", "openai:gpt-4o-mini")
    assert r.returncode in (1, 2) and "skillc[openai]" in r.stdout + r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "x.skm").exists()


def test_pytest_plugin_loads_without_hypothesis(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    (tmp_path / "machines").mkdir()
    (tmp_path / "machines" / "livemath.skm").write_text((LIVEMATH / "livemath.skm").read_text())
    (tmp_path / "machines" / "SKILL.md").write_text((LIVEMATH / "SKILL.md").read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\nskillc_machines = machines\nskillc_examples = 3\n")
    # Only skillc's plugin, as in a plain install (the dev environment's other plugins need the hidden extras).
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        r = bare("pytest", "-q", "-p", "no:cacheprovider", "-p", "skillc.testing.pytest_plugin", str(tmp_path),
                 cwd=tmp_path)
    finally:
        del os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed" in r.stdout
    r = subprocess.run([sys.executable, "-c", "import tests.ecosystem.hide_extras as h, sys; "
                        "sys.meta_path.insert(0, h.HideExtras()); import skillc.testing as t; t.machines"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "pip install 'skillc[test]'" in r.stderr
