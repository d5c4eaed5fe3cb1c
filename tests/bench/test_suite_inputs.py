"""`check_inputs`: every task's inputs against the checked machine, reported at the task's line."""

from __future__ import annotations

from pathlib import Path

import skillc
from skillc.bench.suite import Suite, check_inputs, load_suite
from tests.conftest import EXAMPLES

LIVEMATH = EXAMPLES / "livemath" / "livemath.skm"
OPTIONS = '["1", "2", "3", "4", "5"]'


def _suite(tmp_path: Path, tasks: str, head: str = "") -> Suite:
    """A suite over the livemath machine with the given JSONL task lines."""
    (tmp_path / "tasks.jsonl").write_text(tasks, encoding="utf-8")
    (tmp_path / "suite.toml").write_text(f'[suite]\nmachine = "{LIVEMATH}"\ntasks = "tasks.jsonl"\n{head}\n'
                                         '[verify]\nfile = "answer.txt"\n', encoding="utf-8")
    result = load_suite(tmp_path / "suite.toml")
    assert result.suite is not None, result.diagnostics
    return result.suite


def _found(suite: Suite) -> list[tuple[str, int, str]]:
    """(code, line, message) of each problem."""
    machine = skillc.check(LIVEMATH).machine
    assert machine is not None
    return [(str(d.code), d.span.start_pos[0] if d.span else 0, d.message) for d in check_inputs(suite, machine)]


def test_good_inputs_and_defaults_pass(tmp_path: Path) -> None:
    suite = _suite(tmp_path, f'{{"id": "a", "inputs": {{"question": "1 + 1?", "options": {OPTIONS}}}}}\n'
                             '{"id": "b", "inputs": {"question": "2 + 2?", "answer_path": "out.txt"}}\n',
                   head=f"inputs = {{ options = {OPTIONS} }}")
    assert _found(suite) == []


def test_unknown_missing_and_ill_typed_inputs_are_reported_at_the_tasks_line(tmp_path: Path) -> None:
    suite = _suite(tmp_path, f'{{"id": "a", "inputs": {{"questoin": "1 + 1?", "options": {OPTIONS}}}}}\n\n'
                             '{"id": "b", "inputs": {"question": "2 + 2?", "options": "A to E"}}\n'
                             f'{{"id": "c", "inputs": {{"question": 4, "options": {OPTIONS}}}}}\n')
    assert _found(suite) == [
        ("SKM715", 1, "task 'a': `questoin` is not an input of `livemath` (did you mean `question`?)"),
        ("SKM716", 1, "task 'a' gives no `question` (str), a required input of `livemath`"),
        ("SKM716", 3, "task 'b': input `options` must be a list"),
        ("SKM716", 4, "task 'c': input `question` must be a string"),
    ]

