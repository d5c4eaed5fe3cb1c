"""Policy checks over a well-formed machine (SKM131), moved here from lowering."""

from __future__ import annotations

from pathlib import Path

import skillc
from skillc.check.policy import check_call_reads
from tests.conftest import ROOT, codes, load_text

TOOL_STATE = """machine m {
  tool bash(command: str) -> (stdout: str)
  input cmd: str
  var answer: str
  start think
  tool think {
    READS
    call bash(command: cmd ++ "!")
    writes answer = stdout
    -> done
  }
  terminal done: success
  fallback
}
"""

FRAGMENT = """fragment run(command: str, output: str) -> (ok) {
  tool bash(command: str) -> (stdout: str)
  start go
  tool go {
    call bash(command: command)
    writes output = stdout
    -> ok
  }
}
"""

USER = """machine m {
  tool bash(command: str) -> (stdout: str)
  input cmd: str
  var a: str
  var b: str
  start one
  use run as one(command: cmd, output: a) -> (ok: two)
  use run as two(command: cmd, output: b) -> (ok: done)
  terminal done: success
  fallback
}
"""


def test_an_argument_outside_reads_is_reported_by_the_checker_not_by_lowering() -> None:
    text = TOOL_STATE.replace("READS", "doc \"no reads\"")
    assert load_text(text).diagnostics == []  # the machine is well formed
    found = [d for d in skillc.check(text, path=str(ROOT / "case.skm")).diagnostics if str(d.code) == "SKM131"]
    assert len(found) == 1
    d = found[0]
    assert d.message == "argument `command` reads `cmd`, which the state does not declare in `reads`"
    assert d.label == "reads `cmd`" and d.hint == "add the variable to the state's `reads`"
    assert d.span is not None and d.span.text() == 'cmd ++ "!"'


def test_an_argument_inside_reads_is_clean() -> None:
    machine = load_text(TOOL_STATE.replace("READS", "reads cmd")).machine
    assert machine is not None and list(check_call_reads(machine)) == []


def test_a_fragment_of_the_same_file_is_reported_once_at_the_fragment() -> None:
    result = skillc.check(FRAGMENT + USER, path=str(ROOT / "case.skm"))
    found = [d for d in result.diagnostics if str(d.code) == "SKM131"]
    assert len(found) == 1  # by the fragment's own check, not again for instances `one` and `two`
    assert found[0].message.startswith("argument `command` reads `command`")


def test_an_imported_fragment_is_reported_once_however_many_instances_copy_it(tmp_path: Path) -> None:
    (tmp_path / "skillc.toml").write_text("")
    (tmp_path / "lib.skm").write_text(FRAGMENT)
    main = tmp_path / "main.skm"
    main.write_text('import "lib.skm"\n' + USER)
    result = skillc.check(main)
    found = [d for d in result.diagnostics if str(d.code) == "SKM131"]
    assert len(found) == 1 and found[0].span is not None and found[0].span.path == str(tmp_path / "lib.skm")
    assert "SKM131" not in codes(skillc.load(main).diagnostics)
