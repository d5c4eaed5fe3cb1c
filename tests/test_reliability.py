"""Every fault ends in a diagnostic or a clean fallback; nothing is lost, overwritten or leaked (issue 16).

Each test is a case a user hit: it fails on the code before the fix.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import skillc
from skillc.cli import main
from skillc.runtime import trace as trace_mod
from skillc.runtime.trace import TraceWriter, read_trace
from tests.conftest import ROOT
from tests.runtime.fake_openai import FakeOpenAI
from tests.runtime.helpers import ECHO
from tests.runtime.test_resume import MACHINE, TOOLS, wait_for_calls

LOOP = MACHINE

ONE_TOOL = """machine one {{
  tool {name}({params}) -> (out: str)
  var out: str
  start go
  tool go {{
    call {name}({args})
    writes out = out
    -> done
  }}
  terminal done: success {{ requires out }}
  fallback
}}
"""


def skillc_cli(*args, cwd: Path = ROOT, env: dict | None = None, timeout: float = 120,
               **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1", **(env or {})}, timeout=timeout, **kw)


def clean(r: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in r.stdout + r.stderr, r.stderr


def _machine(tmp_path: Path, text: str, name: str = "m.skm") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _script(tmp_path: Path, outputs: dict, name: str = "s.json") -> Path:
    p = tmp_path / name
    p.write_text(json.dumps({"outputs": outputs}))
    return p


def _killed_run(tmp_path: Path, pause: float = 0.4, after: int = 2):
    """A journaled run of LOOP killed by SIGKILL in its tool call number `after` (steps before it committed):
    (base command, run id, log, machine). Calls from then on run once the test creates `tmp_path / "go"`."""
    machine = _machine(tmp_path, LOOP, "slow.skm")
    log = tmp_path / "calls.log"
    tools = tmp_path / "slowtools.py"
    tools.write_text(TOOLS.format(log=str(log), gate=str(tmp_path / "go"), hold=after - 1, pause=pause))
    script = tmp_path / "none.json"
    script.write_text("{}")
    journal = tmp_path / "runs.sqlite"
    # the tool logs into tmp_path: the run's work folder, the one folder a confined `--tools` function may write
    base = [sys.executable, "-m", "skillc", "run", "--journal", str(journal), "--tools", str(tools),
            "--workdir", str(tmp_path)]
    proc = subprocess.Popen([*base, str(machine), "--executor", f"scripted:{script}", "--trace",
                             str(tmp_path / "t.jsonl")], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_for_calls(log, after, proc)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=30)
    db = sqlite3.connect(journal)
    (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
    assert db.execute("SELECT count(*) FROM steps").fetchone() == (after - 1,)
    db.close()
    (tmp_path / "go").touch()
    return base, run_id, log, machine


# ---------------------------------------------------------------- 1. one lease per run; secrets


def test_two_concurrent_resumes_one_is_refused_and_no_tool_step_runs_twice(tmp_path: Path) -> None:
    base, run_id, log, machine = _killed_run(tmp_path)
    before = len(log.read_text().split())
    procs = [subprocess.Popen([*base, "--resume", run_id], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outs
    refused = next(err for p, (_, err) in zip(procs, outs) if p.returncode == 2)
    assert "SKM502" in refused or "already finished" in refused, refused
    calls = [int(x) for x in log.read_text().split()]
    assert sorted(set(calls)) == list(range(7))
    assert len(calls) - len(set(calls)) <= 1 and len(calls) <= before + 7  # only the step in flight may repeat
    _header, steps, footer = read_trace(tmp_path / "t.jsonl")
    assert [s["step"] for s in steps] == list(range(7))  # no duplicate steps, none missing
    assert (tmp_path / "t.jsonl").read_text().count('"type": "footer"') == 1
    assert footer["skillc.outcome"] == "success"
    r = skillc_cli("replay", str(machine), str(tmp_path / "t.jsonl"))
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_live_run_cannot_be_resumed_by_another_process(tmp_path: Path) -> None:
    from skillc.runtime.journal import Journal, LeaseError

    journal = Journal(tmp_path / "j.sqlite")
    run_id = journal.start("m.skm", "h", {}, "scripted:x", None)
    lease = journal.lease(run_id)
    with pytest.raises(LeaseError, match="being run by process"):
        Journal(tmp_path / "j.sqlite").lease(run_id)
    lease.release()
    Journal(tmp_path / "j.sqlite").lease(run_id).release()  # free again once released


def test_journal_is_private_and_holds_no_secret(tmp_path: Path) -> None:
    machine = _machine(tmp_path, ECHO)
    script = _script(tmp_path, {"think": [{"answer": "the pin is 4711 and key sk-LONGSECRET-123"}]})
    journal = tmp_path / "state" / "runs.sqlite"
    env = {"MY_PIN_TOKEN": "4711", "OPENAI_API_KEY": "sk-LONGSECRET-123"}
    r = skillc_cli("run", str(machine), "--input", "q=use 4711", "--executor", f"scripted:{script}",
                   "--journal", str(journal), "--trace", str(tmp_path / "t.jsonl"), "--workdir", str(tmp_path), env=env)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    for f in [journal, *journal.parent.glob("runs.sqlite-*"), tmp_path / "t.jsonl"]:
        data = f.read_bytes()
        assert b"sk-LONGSECRET-123" not in data and b"4711" not in data, f
    assert b"[redacted:$MY_PIN_TOKEN]" in journal.read_bytes() + b"".join(
        p.read_bytes() for p in journal.parent.glob("runs.sqlite-*"))
    assert stat.S_IMODE((tmp_path / "t.jsonl").stat().st_mode) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_short_secrets_and_secret_keys_are_redacted_in_traces() -> None:
    red = trace_mod.Redactor({"PIN": "4711", "KEY": "sk-abcdefgh"})
    # both keys redact to the same key, so the later value wins
    assert red({"4711": "x", "sk-abcdefgh": "pin 4711, id 947110"}) == {"[redacted]": "pin [redacted], id 947110"}
    os.environ["SKILLC_TEST_TOKEN"] = "abc"
    try:
        assert "abc" in trace_mod.secrets_from_env()
    finally:
        del os.environ["SKILLC_TEST_TOKEN"]


def test_resume_puts_secrets_back_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    from skillc.runtime.interpreter import RunError, restore_secrets

    monkeypatch.setenv("X_TOKEN", "s3cret")
    assert restore_secrets({"a": "use [redacted:$X_TOKEN]"}, "r") == {"a": "use s3cret"}
    monkeypatch.delenv("X_TOKEN")
    with pytest.raises(RunError, match=r"needs the secret \$X_TOKEN"):
        restore_secrets(["[redacted:$X_TOKEN]"], "r")


# ---------------------------------------------------------------- 2. shell injection


INJECT = """machine demo {{
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input path: str
  var reply: str
  var pick: enum {{ a, b }}
  var out: str
  start ask
  model ask {{
    writes reply, pick
    prompt "Name a file."
    -> show
  }}
  tool show {{
    reads reply, pick, path
    call bash(command: {command})
    writes out = stdout
    -> done
  }}
  terminal done: success {{ requires out }}
  fallback
}}
"""


@pytest.mark.parametrize("command, flagged", [
    ('"printf %s " ++ reply', True),
    ('"cat " ++ quote(path) ++ "; echo " ++ reply ++ " done"', True),
    ('"printf %s " ++ quote(reply)', False),
    ('"printf %s " ++ trusted(reply)', False),  # the explicit opt-out
    ('"printf %s " ++ pick ++ " " ++ path', False),  # an enum label and an input
    ("reply", False),  # a whole command a model wrote is deliberate
])
def test_unquoted_model_text_in_a_bash_command_is_an_error(command: str, flagged: bool) -> None:
    result = skillc.check(INJECT.format(command=command), path="demo.skm")
    found = [d for d in result.diagnostics if str(d.code) == "SKM510"]
    assert bool(found) == flagged, [d.message for d in result.diagnostics]
    if flagged:
        assert found[0].is_error and "`reply`" in found[0].message and found[0].span is not None


def test_tool_results_and_values_assigned_from_them_are_untrusted() -> None:
    text = INJECT.format(command='"echo " ++ quote(reply)').replace(
        "    writes out = stdout\n    -> done", "    writes out = stdout\n    -> again { note = \"x\" ++ out }"
    ).replace("  var out: str\n", "  var out: str\n  var note: str\n  var out2: str\n").replace(
        "  terminal done:", "  tool again {\n    reads note\n    call bash(command: \"echo \" ++ note)\n"
        "    writes out2 = stdout\n    -> done\n  }\n  terminal done:")
    result = skillc.check(text, path="demo.skm")
    assert [d.message.split("`")[1] for d in result.diagnostics if str(d.code) == "SKM510"] == ["note"]


# ---------------------------------------------------------------- 3. hangs and orphans


def _one_tool_run(tmp_path: Path, body: str, *extra: str, name: str = "slow") -> subprocess.CompletedProcess:
    machine = _machine(tmp_path, ONE_TOOL.format(name=name, params="", args=""))
    tools = tmp_path / "t_tools.py"
    tools.write_text(body)
    script = _script(tmp_path, {})
    return skillc_cli("run", str(machine), "--executor", f"scripted:{script}", "--tools", str(tools),
                      "--journal", str(tmp_path / "j.sqlite"), *extra)


def test_a_python_tool_honours_the_tool_timeout(tmp_path: Path) -> None:
    started = time.monotonic()
    r = _one_tool_run(tmp_path, "import time\ndef slow():\n    try:\n        time.sleep(3600)\n"
                                "    except Exception:\n        pass\n    return 'late'\n", "--tool-timeout", "1")
    assert time.monotonic() - started < 60  # the 1 s timeout, not the tool's hour
    clean(r)
    assert r.returncode == 5 and "timed out after 1 s" in r.stdout


def test_a_tool_calling_sys_exit_is_a_tool_error(tmp_path: Path) -> None:
    r = _one_tool_run(tmp_path, "import sys\ndef slow():\n    sys.exit(7)\n")
    clean(r)
    assert r.returncode == 5 and "sys.exit(7)" in r.stdout
    db = sqlite3.connect(tmp_path / "j.sqlite")
    assert db.execute("SELECT status FROM runs").fetchone()[0] == "done"


def _alive(marker: str) -> bool:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, timeout=120).stdout
    return any(line.startswith("sleep " + marker) for line in out.splitlines())


def _gone(marker: str, within: float = 10.0) -> bool:
    """Whether no `sleep <marker>` runs any more, waiting up to `within` s (a killed process takes a moment to go)."""
    deadline = time.monotonic() + within
    while _alive(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_bash_timeout_kills_the_whole_process_group() -> None:
    from skillc.runtime.tools import BashTool, ToolError

    with pytest.raises(ToolError, match="timed out"):
        BashTool(timeout_s=0.5)(command="sleep 37.1234; echo done")
    assert _gone("37.1234")


def test_background_children_do_not_turn_a_finished_command_into_a_timeout() -> None:
    from skillc.runtime.tools import BashTool

    started = time.monotonic()
    result = BashTool(timeout_s=30)(command="(sleep 38.1234 &); echo started")
    assert time.monotonic() - started < 20  # not waiting for the background sleep (that would time out at 30 s)
    assert result["stdout"] == "started\n" and result["exit_code"] == 0
    assert _gone("38.1234")  # what the command left behind was killed with its group


def test_check_on_a_fifo_or_a_device_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "f.skm"
    os.mkfifo(fifo)
    for target in (fifo, Path("/dev/zero")):
        r = skillc_cli("check", str(target), timeout=20)
        clean(r)
        assert r.returncode == 2 and "not a regular file" in r.stdout


def test_build_refuses_a_device_before_reading_it(tmp_path: Path) -> None:
    r = skillc_cli("build", "/dev/zero", "-o", str(tmp_path / "z.skm"), timeout=20)
    clean(r)
    assert r.returncode == 2 and "not a regular file" in r.stdout


# ---------------------------------------------------------------- 4. tracebacks become diagnostics


def test_symlink_loops_are_diagnostics_everywhere(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    loop = str(tmp_path / "a")
    for args in (["dot", loop], ["run", loop, "--executor", "scripted:x"], ["test", loop], ["build", loop],
                 ["replay", loop, loop], ["score", loop, loop]):
        r = skillc_cli(*args)
        clean(r)
        assert r.returncode == 2, (args, r.stdout, r.stderr)


def test_trace_onto_a_full_device_is_a_clean_error(tmp_path: Path) -> None:
    machine = _machine(tmp_path, ECHO)
    script = _script(tmp_path, {"think": [{"answer": "a"}]})
    r = skillc_cli("run", str(machine), "--input", "q=x", "--executor", f"scripted:{script}", "--trace", "/dev/full",
                   "--journal", str(tmp_path / "j.sqlite"))
    clean(r)
    assert r.returncode == 2 and "SKM503" in r.stderr and "No space left" in r.stderr


def test_a_failed_write_leaves_no_half_line(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t.jsonl"
    writer = TraceWriter(path, [])
    writer.write({"type": "header", "inputs": {}})
    real = os.write

    def half(fd, data):
        real(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(trace_mod.os, "write", half)
    with pytest.raises(trace_mod.TraceWriteError, match="No space left"):
        writer.write({"type": "step", "step": 0, "state": "s"})
    monkeypatch.setattr(trace_mod.os, "write", real)
    writer.close()
    assert path.read_text().endswith("}\n") and path.read_text().count("\n") == 1


def test_resume_after_a_torn_line_starts_on_a_new_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"type": "header", "inputs": {}}\n{"type": "step", "step": 0, "st')
    assert read_trace(path)[1] == []  # a torn last line is ignored by readers
    writer = TraceWriter(path, [], append=True)
    writer.write({"type": "header", "inputs": {}, "skillc.resumed_at_step": 0})
    writer.close()
    lines = path.read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(x)["type"] == "header" for x in lines)


def test_lone_surrogates_in_answers_tool_results_and_inputs(tmp_path: Path) -> None:
    machine = _machine(tmp_path, ECHO)
    script = tmp_path / "s.json"
    script.write_text('{"outputs": {"think": [{"answer": "bad \\ud800 text"}]}}')
    trace = tmp_path / "t.jsonl"
    r = subprocess.run([sys.executable, "-m", "skillc", "run", str(machine), b"--input", b"q=\xff\xfe",
                        "--executor", f"scripted:{script}", "--trace", str(trace), "--journal",
                        str(tmp_path / "j.sqlite"), "--workdir", str(tmp_path)], capture_output=True, cwd=ROOT,
                       timeout=120)
    assert b"Traceback" not in r.stderr and r.returncode == 0, r.stderr
    _header, steps, footer = read_trace(trace)
    assert footer["skillc.outcome"] == "success" and "\ufffd" in steps[0]["output"]["answer"]
    r = skillc_cli("replay", str(machine), str(trace))
    assert r.returncode == 0, r.stdout


def test_openai_replies_with_a_number_as_content_or_string_usage_are_retried(tmp_path: Path) -> None:
    from skillc.runtime.executors.openai_exec import OpenAIExecutor
    from tests.runtime.helpers import run
    from tests.runtime.test_openai_executor import JUDGE

    good = json.dumps({"verdict": "accept"})
    with FakeOpenAI([{"message": {"role": "assistant", "content": 42}, "content": ""},
                     {"content": good, "usage": {"prompt_tokens": "17", "completion_tokens": "x"}}]) as server:
        executor = OpenAIExecutor("fake-model", base_url=server.url, strategy="json_object", timeout_s=10)
        result = run(JUDGE, {}, {"draft": "hello"}, executor=executor)
        executor.close()
    assert result.outcome == "success"


def test_a_failing_model_server_leaves_no_run_marked_running(tmp_path: Path) -> None:
    machine = _machine(tmp_path, ECHO)
    with FakeOpenAI([{"message": {"role": "assistant", "content": [1, 2]}, "content": ""}] * 3) as server:
        r = skillc_cli("run", str(machine), "--input", "q=x", "--executor", "openai:fake", "--base-url", server.url,
                       "--journal", str(tmp_path / "j.sqlite"))
    clean(r)
    assert r.returncode == 5 and "content is list" in r.stdout
    db = sqlite3.connect(tmp_path / "j.sqlite")
    assert db.execute("SELECT status FROM runs").fetchone()[0] == "done"


@pytest.mark.parametrize("content", [b"\x00garbage, not sqlite" * 100, "foreign", "typed"])
def test_corrupted_or_foreign_journals_are_refused_with_a_code(tmp_path: Path, content) -> None:
    journal = tmp_path / "j.sqlite"
    machine = _machine(tmp_path, ECHO)
    script = _script(tmp_path, {"think": [{"answer": "a"}]})
    run_id = "0123456789ab"
    if isinstance(content, bytes):
        journal.write_bytes(content)
    elif content == "foreign":
        db = sqlite3.connect(journal)
        db.execute("CREATE TABLE runs (id INTEGER, name TEXT)")
        db.commit()
        db.close()
    else:
        from skillc.runtime.interpreter import machine_hash
        from skillc.runtime.journal import Journal

        j = Journal(journal)
        run_id = j.start(str(machine), machine_hash(ECHO), {"q": "x"}, f"scripted:{script}", None)
        j.commit_step(run_id, 0, "think", "show", {"q": "x", "answer": 17}, {"type": "step"})
        j.close()
    r = skillc_cli("run", "--resume", run_id, "--journal", str(journal))
    clean(r)
    assert r.returncode == 2 and "SKM500" in r.stderr, r.stderr


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def test_deep_json_in_inputs_and_traces_is_refused(tmp_path: Path) -> None:
    machine = _machine(tmp_path, ECHO)
    deep = tmp_path / "deep.json"
    deep.write_text('{"q": ' + _deep(100_000) + "}")
    r = skillc_cli("run", str(machine), "--input-file", str(deep), "--executor", "scripted:x",
                   "--journal", str(tmp_path / "j.sqlite"))
    clean(r)
    assert r.returncode == 2 and "nested more than" in r.stderr
    trace = tmp_path / "deep.jsonl"
    trace.write_text('{"type": "header", "inputs": ' + _deep(100_000) + "}\n")
    for args in (["replay", str(machine), str(trace)], ["score", str(machine), str(trace)],
                 ["dot", str(machine), "--trace", str(trace)]):
        r = skillc_cli(*args)
        clean(r)
        assert r.returncode == 2 and "nested more than" in r.stderr, (args, r.stderr)
    from skillc.diagnostics.files import JSONProblem, loads

    with pytest.raises(JSONProblem):
        loads(_deep(300))


def _recorded(tmp_path: Path) -> tuple[Path, Path]:
    machine = _machine(tmp_path, ECHO)
    script = _script(tmp_path, {"think": [{"answer": "a"}]})
    trace = tmp_path / "t.jsonl"
    r = skillc_cli("run", str(machine), "--input", "q=x", "--executor", f"scripted:{script}", "--trace", str(trace),
                   "--journal", str(tmp_path / "j.sqlite"), "--workdir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    return machine, trace


def test_replay_checks_the_machine_hash_and_the_footer(tmp_path: Path) -> None:
    machine, trace = _recorded(tmp_path)
    other = _machine(tmp_path, ECHO.replace("machine echo", "machine other").replace("input q: str",
                                                                                      "input q: str\n  input z: int"),
                     "other.skm")
    r = skillc_cli("replay", str(other), str(trace))
    clean(r)
    assert r.returncode == 1 and "another machine" in r.stdout
    r = skillc_cli("replay", str(other), str(trace), "--other-machine")
    clean(r)
    assert r.returncode == 1 and "inputs do not fit" in r.stdout
    lines = trace.read_text().splitlines()
    trace.write_text("\n".join(lines[:-1]) + "\n")
    r = skillc_cli("replay", str(machine), str(trace))
    assert r.returncode == 1 and "no footer" in r.stdout


def test_nul_in_an_import_path_and_a_long_import_chain(tmp_path: Path) -> None:
    (tmp_path / "skillc.toml").write_text("")
    nul = _machine(tmp_path, 'import "a\\u0000b.skm"\n' + ECHO, "nul.skm")
    result = skillc.check(nul)
    assert "SKM900" not in [str(d.code) for d in result.diagnostics]
    frag = "fragment f{i}(x: str) -> (out) {{\n  start s\n  model s {{\n    prompt \"p\"\n    -> out\n  }}\n}}\n"
    for i in range(500):
        head = f'import "c{i + 1}.skm"\n' if i < 499 else ""
        (tmp_path / f"c{i}.skm").write_text(head + frag.format(i=i))
    r = skillc_cli("check", str(tmp_path / "c0.skm"))
    clean(r)
    assert "SKM900" not in r.stdout and "nest more than" in r.stdout


def test_uncaught_errors_exit_3_not_1(monkeypatch) -> None:
    import skillc.runtime as runtime

    def boom(*a, **k):
        raise KeyError("boom")

    monkeypatch.setattr(runtime, "replay_file", boom)
    machine = str(ROOT / "examples" / "livemath" / "livemath.skm")
    result = CliRunner().invoke(main, ["replay", machine, machine])
    assert result.exit_code == 3 and "SKM900" in result.output


# ---------------------------------------------------------------- 5. data loss and silent acceptance


def test_run_refuses_a_trace_onto_the_machine_or_a_foreign_file(tmp_path: Path) -> None:
    machine = _machine(tmp_path, ECHO)
    script = _script(tmp_path, {"think": [{"answer": "a"}]})
    notes = tmp_path / "notes.txt"
    notes.write_text("precious\n")
    for target in (machine, notes):
        before = target.read_bytes()
        r = skillc_cli("run", str(machine), "--input", "q=x", "--executor", f"scripted:{script}",
                       "--trace", str(target), "--journal", str(tmp_path / "j.sqlite"))
        clean(r)
        assert r.returncode == 2 and target.read_bytes() == before, r.stderr


def test_outputs_write_through_symlinks_and_into_devices(tmp_path: Path) -> None:
    from skillc.diagnostics.files import write_output

    real = tmp_path / "real.dot"
    real.write_text("old")
    link = tmp_path / "link.dot"
    link.symlink_to(real)
    write_output(link, "new")
    assert link.is_symlink() and real.read_text() == "new"
    write_output("/dev/null", "x")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="no reader"):
        write_output(fifo, "x")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    fresh = tmp_path / "fresh.skm"
    write_output(fresh, "x")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~_umask()
    with pytest.raises(OSError, match="No space left"):
        write_output("/dev/full", "x")
    r = skillc_cli("dot", str(ROOT / "examples" / "livemath" / "livemath.skm"), "-o", str(link))
    assert r.returncode == 0 and link.is_symlink() and real.read_text().startswith("digraph")


def test_resume_refuses_another_executor_or_new_inputs(tmp_path: Path) -> None:
    base, run_id, _, _ = _killed_run(tmp_path, pause=0.3, after=1)
    r = subprocess.run([*base, "--resume", run_id, "--executor", "scripted:/elsewhere.json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "same executor" in r.stderr
    r = subprocess.run([*base, "--resume", run_id, "--input", "i=3"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 2 and "drop --input" in r.stderr


# ---------------------------------------------------------------- 6. smaller


def test_a_missing_workdir_is_named(tmp_path: Path) -> None:
    machine, _ = _recorded(tmp_path)
    script = _script(tmp_path, {"think": [{"answer": "a"}]})
    r = skillc_cli("run", str(machine), "--input", "q=x", "--executor", f"scripted:{script}",
                   "--workdir", str(tmp_path / "nowhere"), "--journal", str(tmp_path / "j.sqlite"))
    assert r.returncode == 2 and "no such folder" in r.stderr and "/bin/sh" not in r.stderr


def test_retry_after_is_honoured_and_the_step_deadline_holds() -> None:
    from skillc.runtime import Interpreter, RunOptions, ToolBox
    from skillc.runtime.executors.openai_exec import OpenAIExecutor
    from tests.runtime.helpers import checked
    from tests.runtime.test_openai_executor import JUDGE

    good = json.dumps({"verdict": "accept"})
    machine = checked(JUDGE)
    with FakeOpenAI([{"status": 429, "headers": {"Retry-After": "1"}}, {"content": good}]) as server:
        executor = OpenAIExecutor("fake-model", base_url=server.url, strategy="json_object", timeout_s=10)
        started = time.monotonic()
        result = Interpreter(machine, executor, ToolBox(), RunOptions(), JUDGE).run({"draft": "d"})
        assert result.outcome == "success" and time.monotonic() - started >= 1.0
    # Replies 10 s late, each: a run that ends in well under 10 s was cut by its 1 s step deadline.
    with FakeOpenAI([{"delay": 10, "content": good}] * 3) as server:
        executor = OpenAIExecutor("fake-model", base_url=server.url, strategy="json_object", timeout_s=30)
        started = time.monotonic()
        result = Interpreter(machine, executor, ToolBox(), RunOptions(step_deadline_s=1.0), JUDGE).run({"draft": "d"})
        assert result.terminal == "fallback" and time.monotonic() - started < 8


def test_fmt_keeps_a_bom_and_crlf(tmp_path: Path) -> None:
    f = tmp_path / "m.skm"
    text = ECHO.replace("  start think", "  start   think")
    f.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    r = skillc_cli("fmt", str(f))
    assert r.returncode == 0, r.stdout + r.stderr
    data = f.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"start think\r\n" in data and data.count(b"\n") == data.count(b"\r\n")


def test_json_escapes_that_spell_a_lone_surrogate_are_scrubbed() -> None:
    from skillc.runtime.interpreter import json_answer
    from tests.runtime.helpers import run

    assert json_answer('{"answer": "x\\ud800"}') == {"answer": "x\ufffd"}
    result = run(ECHO, {"outputs": {"think": ['{"answer": "x\\ud800y"}']}}, {"q": "q"})
    assert result.outcome == "success" and result.evidence == {"out": "x\ufffdy"}


def test_a_run_killed_between_its_footer_and_its_end_in_the_journal_resumes_to_that_end(tmp_path: Path) -> None:
    """A run SIGKILLed after its trace's footer was written and before the journal recorded its end (found by
    bench/sweep_runs.py) resumes to the end the footer records: the journal says done, the trace keeps one footer
    and replays; it once appended a second header and a second footer."""
    machine, trace = _recorded(tmp_path)
    journal = tmp_path / "j.sqlite"
    with sqlite3.connect(journal) as db:  # the journal as the kill left it: every step committed, still running
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
        db.execute("UPDATE runs SET status = 'running', outcome = NULL")
    db.close()
    before = trace.read_text()
    r = skillc_cli("run", "--resume", run_id, "--journal", str(journal), "--workdir", str(tmp_path), "--json")
    clean(r)
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert (report["outcome"], report["terminal"], report["evidence"]) == ("success", "done", {"out": "a"})
    assert trace.read_text() == before  # one header, one footer: nothing appended
    with sqlite3.connect(journal) as db:
        assert db.execute("SELECT status, outcome FROM runs").fetchone() == ("done", "success")
    db.close()
    assert skillc_cli("replay", str(machine), str(trace)).returncode == 0
    r = skillc_cli("run", "--resume", run_id, "--journal", str(journal), "--workdir", str(tmp_path))
    assert r.returncode == 2 and "already finished (success)" in r.stdout + r.stderr


ASKS_TWICE = """machine deploy {
  use tools std
  var target: str
  var sure: str
  var out: str
  start first
  tool first {
    call bash(command: "true")
    writes out = stdout
    -> pick
  }
  tool pick {
    call ask_user(question: "Where?", options: ["staging", "prod"])
    writes target = answer
    -> confirm
  }
  tool confirm {
    call ask_user(question: "Sure?", options: ["yes", "no"])
    writes sure = answer
    -> done
  }
  terminal done: success { requires out, sure }
  fallback
}
"""

TWO_STEPS = """machine other {
  use tools std
  var out: str
  start one
  tool one {
    call bash(command: "true")
    writes out = stdout
    -> two
  }
  tool two {
    call bash(command: "true")
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""


def test_a_footer_another_run_wrote_into_a_shared_trace_does_not_end_a_resumed_run(tmp_path: Path) -> None:
    """Only a footer that is the trace's last record, after this run's header, ends a resumed run: a run that
    waits, a second run writing the same trace to its footer, then two answers — the first run asks both questions
    and ends after three steps (the review of the fix above found it ended after two, its second question unasked)."""
    asks, other = _machine(tmp_path, ASKS_TWICE, "a.skm"), _machine(tmp_path, TWO_STEPS, "b.skm")
    script = _script(tmp_path, {})
    common = ["--executor", f"scripted:{script}", "--journal", str(tmp_path / "j.sqlite"), "--workdir", str(tmp_path)]
    r = skillc_cli("run", str(asks), "--trace", str(tmp_path / "t.jsonl"), *common, "--json")
    assert r.returncode == 6, r.stdout + r.stderr
    run_id = json.loads(r.stdout)["run_id"]
    assert skillc_cli("run", str(other), "--trace", str(tmp_path / "t.jsonl"), *common).returncode == 0
    resume = ["run", "--resume", run_id, "--journal", str(tmp_path / "j.sqlite"), "--workdir", str(tmp_path),
              "--json"]
    r = skillc_cli(*resume, "--answer", "prod")
    assert r.returncode == 6 and json.loads(r.stdout)["waiting"]["question"] == "Sure?", r.stdout + r.stderr
    r = skillc_cli(*resume, "--answer", "yes")
    clean(r)
    report = json.loads(r.stdout)
    assert (r.returncode, report["steps"], report["evidence"]) == (0, 3, {"out": "", "sure": "yes"}), r.stdout


@pytest.mark.parametrize("named", [True, False])
def test_a_footer_another_run_appended_at_once_does_not_end_a_resumed_run(tmp_path: Path, named: bool) -> None:
    """Two resumes append to one trace at once, so another run's footer can follow this run's last header: a run
    killed after its first step, its trace ending in such a footer (with the other run's id, or none as older
    footers), resumes and runs its second step (the second review's repro ended it after one step, `two` unrun)."""
    machine, script = _machine(tmp_path, TWO_STEPS), _script(tmp_path, {})
    journal, trace = tmp_path / "j.sqlite", tmp_path / "t.jsonl"
    r = skillc_cli("run", str(machine), "--executor", f"scripted:{script}", "--journal", str(journal), "--trace",
                   str(trace), "--workdir", str(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    with sqlite3.connect(journal) as db:  # as killed in `two`: step 0 committed, still running
        (run_id,) = db.execute("SELECT run_id FROM runs").fetchone()
        db.execute("DELETE FROM steps WHERE step > 0")
        db.execute("UPDATE runs SET status = 'running', outcome = NULL")
    db.close()
    header, first = trace.read_text().splitlines()[:2]
    foreign = {"type": "footer", "skillc.terminal": "done", "skillc.outcome": "success", "skillc.evidence": {},
               "skillc.steps": 1, "skillc.error": None, **({"skillc.run_id": "0therrun0000"} if named else {})}
    trace.write_text("\n".join([header, first, json.dumps(foreign)]) + "\n")
    r = skillc_cli("run", "--resume", run_id, "--journal", str(journal), "--workdir", str(tmp_path), "--json")
    clean(r)
    assert (r.returncode, json.loads(r.stdout)["steps"]) == (0, 2), r.stdout + r.stderr
    records = [json.loads(x) for x in trace.read_text().splitlines()]
    assert [x.get("state") for x in records if x["type"] == "step"] == ["one", "two"]
    assert records[-1]["type"] == "footer" and records[-1]["skillc.run_id"] == run_id


def test_a_run_ended_before_its_first_step_resumes_to_its_end_with_its_places(tmp_path: Path) -> None:
    """A run whose start is its terminal commits no step: resumed after its footer, its evidence still holds the
    place `workdir` (the second review found it null, and `missing_evidence` naming it)."""
    machine = _machine(tmp_path, "machine t0 {\n  input q: str\n  start done\n"
                                 "  terminal done: success { requires q, workdir }\n  fallback\n}\n")
    journal, trace = tmp_path / "j.sqlite", tmp_path / "t.jsonl"
    r = skillc_cli("run", str(machine), "--input", "q=x", "--executor", f"scripted:{_script(tmp_path, {})}",
                   "--journal", str(journal), "--trace", str(trace), "--workdir", str(tmp_path), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    ended = json.loads(r.stdout)
    with sqlite3.connect(journal) as db:
        db.execute("UPDATE runs SET status = 'running', outcome = NULL")
    db.close()
    r = skillc_cli("run", "--resume", ended["run_id"], "--journal", str(journal), "--workdir", str(tmp_path), "--json")
    clean(r)
    resumed = json.loads(r.stdout)
    assert r.returncode == 0 and resumed["evidence"] == ended["evidence"] == {"q": "x", "workdir": str(tmp_path)}
    assert resumed["missing_evidence"] == []
