"""Issue #34: suite verifiers are untrusted code. Python and shell verifiers run in the box of `skillc.sandbox`, the
hidden verifier is hashed when the suite loads and again before each verdict, and a file verifier's pattern has a
time limit."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from skillc.bench.verify import FileVerifier, PythonVerifier, ShellVerifier, Verification, verify
from skillc.sandbox import _box

LANDLOCK = _box.landlock_abi() >= 1


@pytest.fixture
def cell(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(suite folder, workdir with answer.txt, trace)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "hidden.py").write_text("def verify(workdir, outputs, trace):\n"
                                     "    return (workdir / 'answer.txt').read_text() == '42\\n'\n", encoding="utf-8")
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "answer.txt").write_text("41\n", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"kind": "header"}\n', encoding="utf-8")
    return suite, workdir, trace


def test_a_verifier_rewritten_after_the_suite_loaded_is_skm943_never_a_pass(cell) -> None:
    suite, workdir, trace = cell
    verifier = PythonVerifier("hidden:verify", suite)  # made when the suite is loaded: its files are hashed now
    assert verify(verifier, workdir=workdir, outputs={}, trace=trace).passed is False
    (suite / "hidden.py").write_text("def verify(*args):\n    return True\n", encoding="utf-8")
    verdict = verify(verifier, workdir=workdir, outputs={}, trace=trace)
    assert (verdict.passed is False and str(verdict.code) == "SKM943"
            and "changed after the suite was loaded" in verdict.reason)
    (suite / "helper.py").write_text("X = 1\n", encoding="utf-8")  # a neighbour it could import counts too
    fresh = PythonVerifier("hidden:verify", suite)
    (suite / "helper.py").write_text("X = 2\n", encoding="utf-8")
    assert str(verify(fresh, workdir=workdir, outputs={}, trace=trace).code) == "SKM943"


def test_a_backtracking_pattern_fails_within_its_time_limit(cell, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.bench import verify as module

    monkeypatch.setattr(module, "REGEX_TIMEOUT_S", 0.5)
    _, workdir, trace = cell
    (workdir / "answer.txt").write_text("a" * 5000 + "b", encoding="utf-8")
    box: list[Verification] = []
    worker = threading.Thread(target=lambda: box.append(verify(FileVerifier("answer.txt", matches=r"^(a|aa)+$"),
                                                               workdir=workdir, outputs={}, trace=trace)),
                              daemon=True)
    started = time.monotonic()
    worker.start()
    worker.join(60)
    assert box, "the pattern ran past a minute"
    assert not box[0].passed and "took longer than" in box[0].reason
    assert time.monotonic() - started < 30


def test_a_bad_pattern_is_a_reason_not_a_crash(cell) -> None:
    _, workdir, trace = cell
    verdict = verify(FileVerifier("answer.txt", matches="(unclosed"), workdir=workdir, outputs={}, trace=trace)
    assert not verdict.passed and "not a valid pattern" in verdict.reason


@pytest.mark.parametrize("kind", ["python", "shell"])
def test_verifiers_read_the_task_from_the_environment_and_no_secret(cell, kind: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    suite, workdir, trace = cell
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-secret")
    (suite / "env.py").write_text(
        "import json, os\n"
        "def verify(workdir, outputs, trace):\n"
        "    e = os.environ\n"
        "    ok = (e['SKILLC_TASK_ID'] == 't1' and json.loads(e['SKILLC_TASK_INPUTS']) == {'q': 'six?'}\n"
        "          and open(e['SKILLC_TRACE']).read().startswith('{') and 'OPENAI_API_KEY' not in e)\n"
        "    return ok, 'env ok' if ok else str(sorted(e))\n", encoding="utf-8")
    verifier = PythonVerifier("env:verify", suite) if kind == "python" else ShellVerifier(
        'test "$SKILLC_TASK_ID" = t1 && test -z "$OPENAI_API_KEY" && test -f "$SKILLC_TRACE" && '
        'echo "$SKILLC_TASK_INPUTS" | grep -q six')
    verdict = verify(verifier, workdir=workdir, outputs={}, trace=trace, task_id="t1", inputs={"q": "six?"})
    assert verdict.passed, verdict.reason


@pytest.mark.skipif(not LANDLOCK, reason="writes outside the box are refused by Landlock only")
@pytest.mark.parametrize("kind", ["python", "shell"])
def test_a_verifier_cannot_write_the_suite_or_the_runs_folder(cell, kind: str) -> None:
    suite, workdir, trace = cell
    (suite / "writer.py").write_text(
        "def verify(workdir, outputs, trace):\n"
        f"    for p in ({str(suite / 'hidden.py')!r}, {str(workdir / 'answer.txt')!r}):\n"
        "        try:\n            open(p, 'w').write('x')\n        except OSError:\n            pass\n"
        "    return True\n", encoding="utf-8")
    verifier = PythonVerifier("writer:verify", suite) if kind == "python" else ShellVerifier(
        f"echo x > {suite / 'hidden.py'}; echo x > {workdir / 'answer.txt'}; exit 0")
    before = (suite / "hidden.py").read_text(encoding="utf-8")
    assert verify(verifier, workdir=workdir, outputs={}, trace=trace).passed
    assert (suite / "hidden.py").read_text(encoding="utf-8") == before
    assert (workdir / "answer.txt").read_text(encoding="utf-8") == "41\n"


def test_a_python_verifier_that_leaves_a_thread_running_returns_at_once(cell) -> None:
    suite, workdir, trace = cell
    (suite / "threads.py").write_text("import threading, time\n"
                                      "def verify(workdir, outputs, trace):\n"
                                      "    threading.Thread(target=time.sleep, args=(3600,)).start()\n"
                                      "    return True\n", encoding="utf-8")
    started = time.monotonic()
    assert verify(PythonVerifier("threads:verify", suite, 30), workdir=workdir, outputs={}, trace=trace).passed
    assert time.monotonic() - started < 20


@pytest.mark.skipif(not LANDLOCK, reason="writes outside the box are refused by Landlock only")
def test_verify_here_never_lets_a_verifier_write_a_top_level_folder(tmp_path: Path) -> None:
    from skillc.bench.verify import verify_here

    workdir = tmp_path / "work"
    workdir.mkdir()
    trace = Path("/tmp") / f"skillc-test-trace-{tmp_path.name}.jsonl"  # workdir and trace meet only at /tmp or /
    trace.write_text("{}\n", encoding="utf-8")
    try:
        shell = ShellVerifier(f"test -f \"$SKILLC_BENCH_TRACE\" && echo x > {trace}.dropped; test -f answer.txt || :")
        assert verify_here(shell, workdir=workdir, outputs={}, trace=trace).passed
        assert not Path(f"{trace}.dropped").exists()
    finally:
        trace.unlink()
        Path(f"{trace}.dropped").unlink(missing_ok=True)


def test_a_verifier_rewritten_while_it_runs_is_no_pass(cell, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nothing refuses the write (Landlock off), files changed during the call are caught after it."""
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "landlock")
    suite, workdir, trace = cell
    (suite / "selfish.py").write_text(
        "from pathlib import Path\n"
        "def verify(workdir, outputs, trace):\n"
        "    Path(__file__).write_text('def verify(*a):\\n    return True\\n')\n"
        "    return True\n", encoding="utf-8")
    verdict = verify(PythonVerifier("selfish:verify", suite), workdir=workdir, outputs={}, trace=trace)
    assert not verdict.passed and str(verdict.code) == "SKM943"
