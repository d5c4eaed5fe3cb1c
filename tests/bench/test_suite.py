"""Suite files: every key parsed into the typed suite, and bad suites reported at file:line:col."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillc.bench.effects import (
    CallPattern,
    FileRequirement,
    NoFileRequirement,
    NoToolRequirement,
    OrderRequirement,
    ToolRequirement,
)
from skillc.bench.suite import SuiteResult, load_suite
from skillc.bench.verify import FileVerifier, PythonVerifier, ShellVerifier

FULL = """\
[suite]
name = "demo"
skill = "SKILL.md"
machine = "machine.skm"
tasks = "more.jsonl"
timeout = 5
failed_runs_comply = true

[verify]
shell = "test -s answer.txt"

[[task]]
id = "inline"
inputs = { question = "2 + 2?", options = ["3", "4"] }
workdir = "fixtures/one"
horizon = 25

[[task]]
id = "python"
[task.verify]
python = "verifiers:check"
timeout = 2

[[task]]
id = "exact"
verify = { file = "answer.txt", equals = "4\\n" }

[[require]]
id = "answer"
kind = "file"
path = "answer.txt"
matches = '^[A-E]\\n?$'
quote = "Write the letter to answer.txt."

[[require]]
kind = "no-file"
path = "*.tmp"

[[require]]
kind = "tool"
tool = "bash"
argument = "command"
matches = 'cat\\s+answer\\.txt'

[[require]]
kind = "no-tool"
tool = "bash"
matches = 'rm\\s+-rf'

[[require]]
id = "readback"
kind = "order"
first = { tool = "write_file" }
then = { tool = "bash", matches = "cat" }
"""


def _folder(tmp_path: Path) -> Path:
    """A suite folder with every file FULL names."""
    (tmp_path / "fixtures" / "one").mkdir(parents=True)
    (tmp_path / "SKILL.md").write_text("# demo\n", encoding="utf-8")
    (tmp_path / "machine.skm").write_text("", encoding="utf-8")
    (tmp_path / "verifiers.py").write_text("def check(workdir, outputs, trace):\n    return True\n", encoding="utf-8")
    (tmp_path / "more.jsonl").write_text(
        '{"id": "j1", "inputs": {"n": 1}}\n\n{"id": "j2", "horizon": 50, "verify": {"file": "out.txt"}}\n',
        encoding="utf-8")
    return tmp_path


def _load(tmp_path: Path, text: str) -> SuiteResult:
    (tmp_path / "suite.toml").write_text(text, encoding="utf-8")
    return load_suite(tmp_path / "suite.toml")


def _found(result: SuiteResult) -> list[tuple[str, int, int, str]]:
    """(code, line, column, message) of each diagnostic."""
    return [(str(d.code), *(d.span.start_pos if d.span else (0, 0)), d.message) for d in result.diagnostics]


def test_every_key_is_read(tmp_path: Path) -> None:
    result = _load(_folder(tmp_path), FULL)
    assert result.diagnostics == ()
    suite = result.suite
    assert suite is not None
    assert (suite.name, suite.skill, suite.machine, suite.failed_runs_comply) == (
        "demo", tmp_path / "SKILL.md", tmp_path / "machine.skm", True)
    assert [t.id for t in suite.tasks] == ["inline", "python", "exact", "j1", "j2"]
    inline, python, exact, j1, j2 = suite.tasks
    assert inline.inputs == {"question": "2 + 2?", "options": ["3", "4"]}
    assert (inline.workdir, inline.horizon) == (tmp_path / "fixtures" / "one", 25)
    assert inline.verifier == ShellVerifier("test -s answer.txt", 5)  # the suite's default, with its timeout
    assert python.verifier == PythonVerifier("verifiers:check", tmp_path, 2)
    assert exact.verifier == FileVerifier("answer.txt", equals="4\n")
    assert (j1.inputs, j1.verifier, j2.horizon, j2.verifier) == (
        {"n": 1}, ShellVerifier("test -s answer.txt", 5), 50, FileVerifier("answer.txt".replace("answer", "out")))
    assert suite.requirements == (
        FileRequirement("answer", "answer.txt", "^[A-E]\\n?$", "Write the letter to answer.txt."),
        NoFileRequirement("require-2", "*.tmp"),
        ToolRequirement("require-3", CallPattern("bash", "cat\\s+answer\\.txt", "command")),
        NoToolRequirement("require-4", CallPattern("bash", "rm\\s+-rf")),
        OrderRequirement("readback", CallPattern("write_file"), CallPattern("bash", "cat")),
    )


def test_paths_are_relative_to_the_suite_not_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    _folder(tmp_path / "s")
    (tmp_path / "s" / "suite.toml").write_text(FULL, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    result = load_suite("s/suite.toml")
    assert result.ok and result.suite is not None and result.suite.skill == tmp_path / "s" / "SKILL.md"


def test_toml_task_file(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("", encoding="utf-8")
    (tmp_path / "tasks.toml").write_text('[[task]]\nid = "a"\n\n[[task]]\nid = "b"\nhorizon = "long"\n',
                                         encoding="utf-8")
    result = _load(tmp_path, '[suite]\nskill = "SKILL.md"\ntasks = "tasks.toml"\n[verify]\nshell = "true"\n')
    assert _found(result) == [("SKM702", 6, 1, "`task[2].horizon` must be an integer, not a string")]
    assert result.diagnostics[0].span is not None and result.diagnostics[0].span.path.endswith("tasks.toml")


def test_positions_and_did_you_mean(tmp_path: Path) -> None:
    _folder(tmp_path)
    text = FULL.replace("horizon = 25", "horizn = 25").replace('tool = "bash"\nargument', 'tool = "bash"\nargumnt')
    assert _found(_load(tmp_path, text)) == [
        ("SKM701", 16, 1, "`task[1].horizn` is not a suite key (did you mean `horizon`?)"),
        ("SKM701", 42, 1, "`require[3].argumnt` is not a suite key (did you mean `argument`?)"),
    ]


def test_inline_table_keys_are_located(tmp_path: Path) -> None:
    _folder(tmp_path)
    text = FULL.replace('verify = { file = "answer.txt", equals', 'verify = { file = "../answer.txt", equals')
    found = _found(_load(tmp_path, text))
    assert [(c, line, col) for c, line, col, _ in found] == [("SKM702", 26, 12)]
    assert "stay inside it" in found[0][3]


def test_jsonl_errors_carry_their_line(tmp_path: Path) -> None:
    _folder(tmp_path)
    (tmp_path / "more.jsonl").write_text('{"id": "j1"}\n[1, 2]\n{"id": "j3", "horizon": true}\n{"id": "j1"}\n'
                                         '{"id": "j4"\n', encoding="utf-8")
    found = _found(_load(tmp_path, FULL))
    assert [(c, line, col) for c, line, col, _ in found] == [
        ("SKM705", 2, 1), ("SKM702", 3, 14), ("SKM706", 4, 2), ("SKM705", 5, 1)]
    assert found[0][3] == "line 2 is a JSON list, not an object"
    assert found[2][3] == "task id 'j1' is also the id of task 1 of more.jsonl"


def test_missing_paths_and_modules(tmp_path: Path) -> None:
    _folder(tmp_path)
    (tmp_path / "verifiers.py").unlink()
    text = FULL.replace('"fixtures/one"', '"fixtures/two"').replace('"machine.skm"', '"nope.skm"')
    found = _found(_load(tmp_path, text))
    assert [(c, line) for c, line, _, _ in found] == [("SKM704", 4), ("SKM704", 15), ("SKM704", 21)]
    assert "the module verifiers is not in" in found[2][3]


def test_verifier_and_requirement_shapes(tmp_path: Path) -> None:
    _folder(tmp_path)
    text = (FULL.replace('python = "verifiers:check"', 'python = "verifiers.check"')
            .replace('equals = "4\\n"', 'equals = "4", matches = "4"')
            .replace('kind = "no-file"\npath', 'kind = "no-file"\nmatches = "x"\npath')
            .replace('first = { tool = "write_file" }', 'first = { tol = "write_file" }'))
    found = _found(_load(tmp_path, text))
    assert [c for c, *_ in found] == ["SKM708", "SKM708", "SKM709", "SKM703", "SKM701"]
    assert found[1][3] == "a file verifier takes `equals` or `matches`, not both"
    assert found[2][3] == "`matches` does not apply to a `no-file` requirement"


def test_toml_syntax_error_position(tmp_path: Path) -> None:
    found = _found(_load(tmp_path, '[suite]\nskill = "SKILL.md"\n[[task]\n'))
    assert [(c, line, col) for c, line, col, _ in found] == [("SKM700", 3, 7)]


def test_unreadable_suite_is_a_diagnostic(tmp_path: Path) -> None:
    assert [str(d.code) for d in load_suite(tmp_path / "absent.toml").diagnostics] == ["SKM901"]
    assert [str(d.code) for d in load_suite(tmp_path).diagnostics] == ["SKM901"]


def test_inputs_are_json_values(tmp_path: Path) -> None:
    _folder(tmp_path)
    text = FULL.replace('options = ["3", "4"]', 'options = ["3", 1979-05-27]')
    found = _found(_load(tmp_path, text))
    assert [(c, line, m) for c, line, _, m in found] == [
        ("SKM702", 14, "`task[1].inputs.options[2]` is a date or time; inputs are JSON values (write it as a string)")]


def test_value_ranges(tmp_path: Path) -> None:
    _folder(tmp_path)
    text = FULL.replace("timeout = 5", "timeout = 0").replace("timeout = 2", "timeout = -1")
    assert [(c, line) for c, line, _, _ in _found(_load(tmp_path, text))] == [("SKM712", 6), ("SKM712", 22)]



@pytest.mark.parametrize("value", ["nan", "inf", "1e300"])
def test_a_timeout_must_be_finite_and_settable(tmp_path: Path, value: str) -> None:
    """NaN passes a plain `<= 0` test and inf or 1e300 overflow the verifier's timer: all are SKM712."""
    _folder(tmp_path)
    found = _found(_load(tmp_path, FULL.replace("timeout = 5", f"timeout = {value}")))
    assert [(c, line) for c, line, _, _ in found] == [("SKM712", 6)]


def test_the_documented_example_loads(tmp_path: Path) -> None:
    """docs/bench.md's suite example is a valid suite (given the files it names)."""
    docs = (Path(__file__).resolve().parents[2] / "docs" / "bench.md").read_text(encoding="utf-8")
    example = docs.split("```toml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "SKILL.md").write_text("", encoding="utf-8")
    (tmp_path / "livemath.skm").write_text("", encoding="utf-8")
    (tmp_path / "env.py").write_text("", encoding="utf-8")
    (tmp_path / "fixtures" / "q1").mkdir(parents=True)
    (tmp_path / "tasks.jsonl").write_text('{"id": "q2", "inputs": {"question": "3 + 4?"}, "horizon": 50}\n',
                                          encoding="utf-8")
    result = _load(tmp_path, example)
    assert result.diagnostics == () and result.suite is not None
    assert [t.id for t in result.suite.tasks] == ["q1", "q2"]
    assert result.suite.tasks[1].verifier == FileVerifier("answer.txt", matches=r"^[A-E]\n?$")
    assert (result.suite.tools, result.suite.max_steps) == ((tmp_path / "env.py",), 30)
    assert result.suite.tasks[1].inputs == {"question": "3 + 4?", "answer_path": "answer.txt"}
