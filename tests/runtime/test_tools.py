"""Tool states at run time (runtime/tools.py and the interpreter's tool step)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m skillc ARGS` from the repository root."""
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


def test_an_optional_tool_result_left_out_is_none(tmp_path: Path) -> None:
    f = tmp_path / "opt.skm"
    f.write_text("""machine m {
  tool fetch(url: str) -> (body: str, note: str?)
  input url: str
  var body: str
  var note: str?
  start get
  tool get {
    reads url
    call fetch(url: url)
    writes body, note
    -> done
  }
  terminal done: success { requires body }
  fallback
}
""")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"tools": {"get": [{"body": "hi"}]}}))
    r = _cli("run", str(f), "--input", "url=x", "--executor", f"scripted:{script}",
             "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stdout + r.stderr


def test_python_tools_run_in_the_workdir_like_bash(tmp_path: Path) -> None:
    """`--workdir W`: a Python tool's relative paths land in W, and the process's folder is put back."""
    import os

    from skillc.ir.machine import Tool
    from skillc.ir.types import STR
    from skillc.runtime.tools import ToolBox

    module = tmp_path / "mytools.py"
    module.write_text("import os\ndef note(text):\n    open('note.txt', 'w').write(text)\n"
                      "    return {'where': os.getcwd()}\n", encoding="utf-8")
    work = tmp_path / "work"
    work.mkdir()
    before = os.getcwd()
    box = ToolBox.default([str(module)], cwd=str(work))
    result = box.call(Tool("note", (("text", STR),), (("where", STR),)), {"text": "hi"})
    assert result == {"where": str(work)} and (work / "note.txt").read_text() == "hi"
    assert os.getcwd() == before and not (Path(before) / "note.txt").exists()
    shell = box.call(Tool("bash", (("command", STR),), (("stdout", STR),)), {"command": "pwd"})
    assert shell["stdout"].strip() == str(work)


def test_a_relative_workdir_is_the_folder_it_names_when_the_run_starts(tmp_path: Path, monkeypatch) -> None:
    """`--workdir .skillc/run` (as `make demo` gives it): bash runs there, and is not sent looking for
    `.skillc/run/.skillc/run` because the toolbox entered the folder before calling it."""
    from skillc.ir.machine import Tool
    from skillc.ir.types import STR
    from skillc.runtime.tools import ToolBox

    (tmp_path / "run").mkdir()
    monkeypatch.chdir(tmp_path)
    box = ToolBox.default(cwd="run")
    monkeypatch.chdir(ROOT)  # a later change of the process's folder does not move the run's
    shell = box.call(Tool("bash", (("command", STR),), (("stdout", STR),)), {"command": "pwd"})
    assert shell["stdout"].strip() == str(tmp_path / "run")


def test_a_process_that_escapes_the_group_and_holds_the_output_does_not_hold_the_step(tmp_path: Path) -> None:
    """`setsid` takes a process out of the command's group, so it outlives the command; if it keeps stdout
    open, bash returns what the command wrote DRAIN_GRACE_S after it ended (it used to wait for the process)."""
    import os
    import signal
    import time

    from skillc.runtime.tools import DRAIN_GRACE_S, BashTool

    pid = tmp_path / "pid"
    # The command ends once the escaped process has left its group (else the group's kill could still reach it).
    command = (f"setsid sh -c 'echo $$ > {pid}.new && mv {pid}.new {pid}; exec sleep 300' & "
               f"while [ ! -s {pid} ]; do sleep 0.01; done; echo done")
    started = time.monotonic()
    try:
        result = BashTool(timeout_s=60)(command=command)
        elapsed = time.monotonic() - started
    finally:
        if pid.exists():
            os.kill(int(pid.read_text()), signal.SIGKILL)  # the escaped process: ended here, by its id
    assert result["stdout"] == "done\n" and result["exit_code"] == 0
    assert "holds it open" in result["stderr"]
    assert DRAIN_GRACE_S <= elapsed < 30  # the grace, not the escaped process's 300 s (nor the 60 s timeout)


def test_bash_reads_all_a_command_wrote_before_it_ended() -> None:
    """The grace cuts only what a held pipe would bring later: output beyond a pipe's buffer is read whole."""
    from skillc.runtime.tools import BashTool

    result = BashTool(timeout_s=60)(command="head -c 300000 /dev/zero | tr '\\0' x; echo; echo err >&2")
    assert result["stdout"] == "x" * 300000 + "\n" and result["stderr"] == "err\n" and result["exit_code"] == 0
