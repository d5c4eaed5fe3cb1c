"""Verifiers of each kind; a verifier that raises, exits, hangs or misbehaves fails with a reason, never crashes."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from skillc.bench.verify import FileVerifier, PythonVerifier, ShellVerifier, Verification, verify

VERIFIERS = '''\
import sys
import time
from helper import LETTER

def letter(workdir, outputs, trace):
    return (workdir / "answer.txt").read_text() == LETTER

def explained(workdir, outputs, trace):
    return outputs.get("choice") == "B", f"the choice was {outputs.get('choice')!r}"

def reads_trace(workdir, outputs, trace):
    return trace.read_text().startswith("{")

def raises(workdir, outputs, trace):
    raise KeyError("answer")

def exits(workdir, outputs, trace):
    sys.exit(4)

def hangs(workdir, outputs, trace):
    while True:
        time.sleep(0.01)

def swallows(workdir, outputs, trace):
    while True:
        try:
            time.sleep(0.01)
        except Exception:
            pass

def returns_text(workdir, outputs, trace):
    return "yes"

not_callable = 3
'''


@pytest.fixture
def cell(tmp_path: Path) -> tuple[Path, Path, Path]:
    """(suite folder with verifiers.py and its helper, workdir with answer.txt, trace)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "verifiers.py").write_text(VERIFIERS, encoding="utf-8")
    (suite / "helper.py").write_text('LETTER = "B\\n"\n', encoding="utf-8")
    workdir = tmp_path / "work"
    workdir.mkdir()
    (workdir / "answer.txt").write_text("B\n", encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    trace.write_text('{"kind": "header"}\n', encoding="utf-8")
    return suite, workdir, trace


def _python(cell: tuple[Path, Path, Path], name: str, outputs: dict[str, object] | None = None,
            timeout: float = 5.0) -> Verification:
    suite, workdir, trace = cell
    return verify(PythonVerifier(f"verifiers:{name}", suite, timeout), workdir=workdir, outputs=outputs or {},
                  trace=trace)


def test_python_verifier_results(cell) -> None:
    assert _python(cell, "letter") == Verification(True)
    assert _python(cell, "reads_trace") == Verification(True)
    assert _python(cell, "explained", {"choice": "B"}) == Verification(True, "the choice was 'B'")
    assert _python(cell, "explained", {"choice": "C"}) == Verification(False, "the choice was 'C'")
    (cell[1] / "answer.txt").write_text("C\n", encoding="utf-8")
    assert _python(cell, "letter") == Verification(False, "the verifier returned False")


def test_python_verifier_failures_are_reasons(cell) -> None:
    assert _python(cell, "raises") == Verification(False, "the verifier verifiers:raises raised KeyError: 'answer'")
    assert _python(cell, "exits") == Verification(False, "the verifier verifiers:exits called sys.exit(4)")
    assert _python(cell, "returns_text") == Verification(
        False, "the verifier returned 'yes', not a bool or (bool, reason)")
    missing = _python(cell, "absent")
    assert not missing.passed and "has no function 'absent'" in missing.reason
    assert not _python(cell, "not_callable").passed


def test_python_verifier_import_error_is_a_reason(cell) -> None:
    (cell[0] / "verifiers.py").write_text("import no_such_module_here\n", encoding="utf-8")
    result = _python(cell, "letter")
    assert not result.passed and "ModuleNotFoundError" in result.reason


@pytest.mark.parametrize("name", ["hangs", "swallows"])
def test_python_verifier_timeout_on_the_main_thread(cell, name: str) -> None:
    start = time.perf_counter()
    result = _python(cell, name, timeout=0.2)
    assert result == Verification(False, f"the verifier verifiers:{name} did not return within 0.2 s")
    assert time.perf_counter() - start < 2


def test_python_verifier_that_hangs_while_importing(cell) -> None:
    (cell[0] / "slow.py").write_text("import time\nwhile True:\n    time.sleep(0.01)\n", encoding="utf-8")
    suite, workdir, trace = cell
    result = verify(PythonVerifier("slow:check", suite, 0.2), workdir=workdir, outputs={}, trace=trace)
    assert result == Verification(False, "the verifier slow:check did not return within 0.2 s")


def test_python_verifier_timeout_off_the_main_thread(cell) -> None:
    box: list[Verification] = []
    thread = threading.Thread(target=lambda: box.append(_python(cell, "hangs", timeout=0.2)))
    thread.start()
    thread.join(5)
    assert box == [Verification(False, "the verifier verifiers:hangs did not return within 0.2 s")]


def _shell(cell: tuple[Path, Path, Path], command: str, timeout: float = 5.0,
           outputs: dict[str, object] | None = None) -> Verification:
    _, workdir, trace = cell
    return verify(ShellVerifier(command, timeout), workdir=workdir, outputs=outputs or {}, trace=trace)


def test_shell_verifier_exit_status(cell) -> None:
    assert _shell(cell, "grep -qx B answer.txt") == Verification(True)  # runs in the workdir
    assert _shell(cell, "echo wrong letter; exit 3") == Verification(False, "the verifier command exited 3: "
                                                                            "wrong letter")


def test_shell_verifier_environment(cell) -> None:
    _suite, workdir, _trace = cell
    command = ('test "$SKILLC_BENCH_WORKDIR" = "$PWD" && test -f "$SKILLC_BENCH_TRACE" && '
               'grep -q \'"choice": "B"\' "$SKILLC_BENCH_OUTPUTS"')
    assert _shell(cell, command, outputs={"choice": "B"}) == Verification(True)
    said = _shell(cell, 'echo "$SKILLC_BENCH_OUTPUTS"; exit 1', outputs={"choice": "B"}).reason
    outputs_file = Path(said.rpartition(": ")[2])
    assert outputs_file.name.endswith(".json")
    assert not outputs_file.exists() and workdir not in outputs_file.parents  # outside the workdir, removed after


def _alive(pid: int) -> bool:
    """True while the process exists and is not a zombie waiting to be reaped."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0] != "Z"
    except (OSError, IndexError):
        return False


def test_shell_verifier_timeout_kills_the_whole_group(cell, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "landlock,namespaces")  # so it can say where its child is
    start = time.perf_counter()
    result = _shell(cell, f"sleep 30 & echo $! > {cell[0]}/child; wait", timeout=0.3)
    assert result == Verification(False, "the verifier command did not finish within 0.3 s")
    assert time.perf_counter() - start < 5
    time.sleep(0.05)
    assert not _alive(int((cell[0] / "child").read_text()))


def test_shell_verifier_background_children_do_not_outlive_it(cell, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that exits at once but leaves a child holding its output is judged at once; the child dies."""
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "landlock,namespaces")  # so it can say where its child is
    start = time.perf_counter()
    assert _shell(cell, f"sleep 30 & echo $! > {cell[0]}/child; exit 0", timeout=10) == Verification(True)
    assert time.perf_counter() - start < 5
    time.sleep(0.05)
    assert not _alive(int((cell[0] / "child").read_text()))


def test_file_verifier(cell) -> None:
    _, workdir, trace = cell

    def check(v: FileVerifier) -> Verification:
        return verify(v, workdir=workdir, outputs={}, trace=trace)

    assert check(FileVerifier("answer.txt")) == Verification(True)
    assert check(FileVerifier("answer.txt", equals="B\n")) == Verification(True)
    assert check(FileVerifier("answer.txt", equals="B")) == Verification(False, "answer.txt holds 'B\\n', not 'B'")
    assert check(FileVerifier("answer.txt", matches=r"^[A-E]$")) == Verification(True)
    assert check(FileVerifier("answer.txt", matches=r"^[C-E]$")) == Verification(
        False, "answer.txt does not match /^[C-E]$/ (it holds 'B\\n')")
    assert check(FileVerifier("missing.txt")) == Verification(False, "missing.txt does not exist")
    (workdir.parent / "outside.txt").write_text("B\n", encoding="utf-8")
    assert check(FileVerifier("../outside.txt")) == Verification(False, "../outside.txt does not exist")
    (workdir / "link.txt").symlink_to(workdir.parent / "outside.txt")
    assert not check(FileVerifier("link.txt")).passed  # a symlink out of the workdir is not a delivered file


def test_outputs_json_handles_any_value(cell) -> None:
    assert _shell(cell, 'python3 -c "import json,os; json.load(open(os.environ[\'SKILLC_BENCH_OUTPUTS\']))"',
                  outputs={"when": object(), "n": [1, 2]}) == Verification(True)


# ------------------------------------------------------------------ the verifier cannot change the run's outputs

TAMPERS = '''\
from pathlib import Path

def tampers(workdir, outputs, trace):
    ok = (workdir / "answer.txt").read_text() == "B\\n"
    (workdir / "expected.txt").write_text("B\\n")
    (workdir / "answer.txt").write_text("tampered")
    trace.write_text("")
    return ok, "judged"

def writes_the_original(workdir, outputs, trace):
    Path(outputs["where"], "verdict.txt").write_text("pass")
    return True
'''


def _tree(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("kind", ["python", "shell"])
def test_a_verifier_that_writes_files_and_rewrites_the_answer_changes_nothing_of_the_run(cell, kind: str) -> None:
    suite, workdir, trace = cell
    (suite / "tampering.py").write_text(TAMPERS, encoding="utf-8")
    before, trace_before = _tree(workdir), trace.read_bytes()
    verifier = (PythonVerifier("tampering:tampers", suite) if kind == "python" else ShellVerifier(
        'grep -qx B answer.txt; ok=$?; echo B > expected.txt; printf tampered > answer.txt; '
        ': > "$SKILLC_BENCH_TRACE"; exit $ok'))
    verdict = verify(verifier, workdir=workdir, outputs={}, trace=trace)
    assert verdict.passed  # the verifier's own verdict, on what the run left
    assert _tree(workdir) == before and trace.read_bytes() == trace_before  # byte-identical, nothing added


def test_a_verifier_that_changes_the_original_folder_through_an_absolute_path_fails(
        cell, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where no Landlock refuses the write (turned off here; tests/bench/test_verify_confined.py has it on), the
    fingerprint of the original folder still catches it."""
    monkeypatch.setenv("SKILLC_SANDBOX_OFF", "landlock")
    suite, workdir, trace = cell
    (suite / "tampering.py").write_text(TAMPERS, encoding="utf-8")
    verdict = verify(PythonVerifier("tampering:writes_the_original", suite), workdir=workdir,
                     outputs={"where": str(workdir)}, trace=trace)
    assert verdict == Verification(False, "the verifier changed the run's work folder (it must write only in the "
                                          "copy it is given)")
    shell = verify(ShellVerifier(f"rm {workdir}/answer.txt"), workdir=workdir, outputs={}, trace=trace)
    assert not shell.passed and "changed the run's work folder" in shell.reason


def test_the_verifier_sees_the_runs_files_links_and_folders_and_a_pipe_does_not_block_it(cell) -> None:
    _, workdir, trace = cell
    (workdir / "sub").mkdir()
    (workdir / "sub" / "deep.txt").write_text("x", encoding="utf-8")
    (workdir / "link.txt").symlink_to("answer.txt")
    os.mkfifo(workdir / "pipe")
    command = 'test "$(cat sub/deep.txt)" = x && test -L link.txt && grep -qx B link.txt && test ! -e pipe'
    assert verify(ShellVerifier(command, 5), workdir=workdir, outputs={}, trace=trace) == Verification(True)
    assert (workdir / "pipe").exists() and (workdir / "link.txt").is_symlink()


def test_the_copy_keeps_the_cells_layout_and_a_missing_trace_stays_missing(cell, tmp_path: Path) -> None:
    _suite, workdir, _ = cell
    layout = ('test "$(basename "$PWD")" = work && test "$(dirname "$SKILLC_BENCH_TRACE")" = "$(dirname "$PWD")" '
              '&& test ! -e "$SKILLC_BENCH_TRACE"')
    assert verify(ShellVerifier(layout, 5), workdir=workdir, outputs={}, trace=tmp_path / "nothing.jsonl") == \
        Verification(True)
