"""The suite keys a run needs: tool modules, the step budget, default inputs and the `${workdir}` placeholder."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillc.bench.suite import SuiteResult, load_suite

HEAD = """\
[suite]
skill = "SKILL.md"
tools = ["env.py", "more/tools.py"]
max_steps = 40
inputs = { state_path = "${workdir}/state.json", options = ["a", "b"] }

[verify]
file = "state.json"

[[task]]
id = "defaults"

[[task]]
id = "own"
inputs = { options = ["c"], n = 3 }
"""


def _load(tmp_path: Path, text: str) -> SuiteResult:
    """A suite folder with SKILL.md, env.py and more/tools.py, and `text` as its suite file."""
    (tmp_path / "more").mkdir(exist_ok=True)
    for name in ("SKILL.md", "env.py", "more/tools.py", "notes.txt"):
        (tmp_path / name).write_text("", encoding="utf-8")
    (tmp_path / "suite.toml").write_text(text, encoding="utf-8")
    return load_suite(tmp_path / "suite.toml")


def test_tools_steps_and_default_inputs_are_read(tmp_path: Path) -> None:
    result = _load(tmp_path, HEAD)
    assert result.diagnostics == ()
    suite = result.suite
    assert suite is not None
    assert suite.tools == (tmp_path / "env.py", tmp_path / "more" / "tools.py")
    assert suite.max_steps == 40
    assert suite.inputs == {"state_path": "${workdir}/state.json", "options": ["a", "b"]}
    defaults, own = suite.tasks
    assert defaults.inputs == {"state_path": "${workdir}/state.json", "options": ["a", "b"]}
    assert own.inputs == {"state_path": "${workdir}/state.json", "options": ["c"], "n": 3}  # the task's value wins


def test_absent_keys_keep_the_defaults(tmp_path: Path) -> None:
    result = _load(tmp_path, '[suite]\nskill = "SKILL.md"\n\n[[task]]\nid = "t"\nverify = { file = "x" }\n')
    assert result.suite is not None
    assert (result.suite.tools, result.suite.max_steps, dict(result.suite.inputs)) == ((), None, {})


def test_the_workdir_placeholder_is_replaced_in_every_string(tmp_path: Path) -> None:
    result = _load(tmp_path, HEAD.replace('options = ["a", "b"]', 'nested = { paths = ["${workdir}/a", 1] }'))
    assert result.suite is not None
    cell = tmp_path / "cells" / "t" / "work"
    cell.mkdir(parents=True)
    inputs = result.suite.tasks[0].inputs_for(cell)
    assert inputs == {"state_path": f"{cell}/state.json", "nested": {"paths": [f"{cell}/a", 1]}}
    assert result.suite.tasks[0].inputs["state_path"] == "${workdir}/state.json"  # the task itself is unchanged


def test_bad_tools_steps_and_inputs_are_reported_at_their_key(tmp_path: Path) -> None:
    text = HEAD.replace('["env.py", "more/tools.py"]', '["env.py", "notes.txt", "gone.py", 3]') \
        .replace("max_steps = 40", "max_steps = 0") \
        .replace('inputs = { state_path', 'inputs = { when = 2026-01-01, state_path')
    assert [(str(d.code), *d.span.start_pos, d.message) for d in _load(tmp_path, text).diagnostics if d.span] == [
        ("SKM702", 3, 1, "`suite.tools[4]` must be a string, not an integer"),
        ("SKM704", 3, 1, f"`suite.tools[3]`: gone.py does not exist (relative to {tmp_path})"),
        ("SKM714", 3, 1, "`suite.tools[2]`: notes.txt is not a Python file"),
        ("SKM712", 4, 1, "`suite.max_steps` is 0; it must be an integer of at least 1"),
        ("SKM702", 5, 12, "`suite.inputs.when` is a date or time; inputs are JSON values (write it as a string)"),
    ]


def test_wrong_types(tmp_path: Path) -> None:
    text = HEAD.replace('["env.py", "more/tools.py"]', '"env.py"').replace("max_steps = 40", "max_steps = 2.5") \
        .replace('inputs = { state_path = "${workdir}/state.json", options = ["a", "b"] }', 'inputs = "x"')
    result = _load(tmp_path, text)
    assert [(str(d.code), d.message) for d in result.diagnostics] == [
        ("SKM702", "`suite.tools` must be an array of strings, not a string"),
        ("SKM702", "`suite.max_steps` must be an integer, not a float"),
        ("SKM702", "`suite.inputs` must be a table, not a string"),
    ]


@pytest.mark.parametrize(("source", "problem"), [
    (b"def f(:\n    pass\n", "does not compile: invalid syntax at line 1, column 7"),
    (b"x = '\xff'\n", "does not compile: (unicode error)"),
    (b"a\x00b\n", "does not compile: source code string cannot contain null bytes"),
])
def test_a_tools_module_that_does_not_compile_is_refused_once(tmp_path: Path, source: bytes, problem: str) -> None:
    """A syntax error in a tools module is found when the suite loads (compiled, never run), not in every cell."""
    assert _load(tmp_path, HEAD).suite is not None
    (tmp_path / "env.py").write_bytes(source + b"raise SystemExit('never run')\n")
    found = [(str(d.code), d.message) for d in load_suite(tmp_path / "suite.toml").diagnostics]
    assert len(found) == 1 and found[0][0] == "SKM714" and f"env.py {problem}" in found[0][1], found
