"""Issue #34: `--tools` modules in a box (by default; `load_module_tools(confined=True)`): the module
is imported and each function called in a confined child; results, failures and timeouts keep the tool box's
contract (a failed operation, never a crash)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skillc.ir.toolkit import KIT
from skillc.runtime.tools import ConfinedTool, ToolBox, ToolError, load_module_tools
from skillc.sandbox import _box

MODULE = '''\
import os, subprocess, time

def add(a, b):
    print("adding", a, b)
    return {"sum": a + b}

def secret():
    return {"value": os.environ.get("OPENAI_API_KEY", "none")}

def drop(path):
    try:
        open(path, "w").write("x")
    except OSError as exc:
        return {"value": type(exc).__name__}
    return {"value": "written"}

def boom():
    raise ValueError("no")

def leave():
    raise SystemExit(2)

def hang(marker):
    subprocess.Popen(["setsid", "sh", "-c", f"sleep 1; touch {marker}"])
    time.sleep(60)
'''


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    module = tmp_path / "mytools.py"
    module.write_text(MODULE, encoding="utf-8")
    return module


def test_confined_tools_are_found_and_called_in_a_box(tools: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_CONFINE_TOOLS", "1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-secret")
    work = tmp_path / "work"
    work.mkdir()
    box = ToolBox.for_run(None, workdir=work, modules=[str(tools)], timeout_s=20)
    assert isinstance(box.functions["add"], ConfinedTool) and set(KIT) <= set(box.functions)
    assert box.functions["add"](a=1, b=2) == {"sum": 3}
    assert box.functions["secret"]() == {"value": "none"}


def test_failures_are_tool_errors(tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    found = load_module_tools(tools, confined=True, timeout_s=20)
    with pytest.raises(ToolError, match="ValueError: no"):
        found["boom"]()
    with pytest.raises(ToolError, match=r"sys.exit\(2\)"):
        found["leave"]()


@pytest.mark.skipif(_box.landlock_abi() < 1, reason="writes outside the box are refused by Landlock only")
def test_a_confined_tool_writes_only_in_the_work_folder(tools: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    found = load_module_tools(tools, confined=True, timeout_s=20)
    assert found["drop"](path=str(work / "mine.txt")) == {"value": "written"}
    assert found["drop"](path=str(tmp_path / "outside.txt")) == {"value": "PermissionError"}
    assert not (tmp_path / "outside.txt").exists()


def test_a_confined_tool_that_hangs_is_killed_with_what_it_started(tools: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "landlock")  # so the daemon's mark could be written
    monkeypatch.chdir(tmp_path)
    found = load_module_tools(tools, confined=True, timeout_s=0.5)
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 0.5 s"):
        found["hang"](marker=str(tmp_path / "alive"))
    assert time.monotonic() - started < 15
    time.sleep(1.2)  # past the daemon's second
    assert not (tmp_path / "alive").exists()


def test_a_module_that_fails_to_import_is_a_tool_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("raise ImportError('nope')\n", encoding="utf-8")
    with pytest.raises(ToolError, match=r"importing .* failed: ImportError: nope"):
        load_module_tools(broken, confined=True)


def test_module_tools_are_boxed_by_default_and_trusted_only_when_asked(tools: Path, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """No setting: a `--tools` module's functions are boxed; `SKILLC_CONFINE_TOOLS=0` runs them in this process."""
    monkeypatch.delenv("SKILLC_CONFINE_TOOLS", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-secret")
    work = tmp_path / "work"
    work.mkdir()
    boxed = ToolBox.for_run(None, workdir=work, modules=[str(tools)], timeout_s=20)
    assert isinstance(boxed.functions["add"], ConfinedTool)
    assert boxed.functions["secret"]() == {"value": "none"}  # the box's environment holds no secrets
    monkeypatch.setenv("SKILLC_CONFINE_TOOLS", "0")
    trusted = ToolBox.for_run(None, workdir=work, modules=[str(tools)], timeout_s=20)
    assert not isinstance(trusted.functions["add"], ConfinedTool)
    assert trusted.functions["secret"]() == {"value": "sk-live-secret"}
