"""A suite task's prepared answers: the user's replies when the skill asks; without them a run that asks fails."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skillc.bench.manifest import task_fingerprint
from skillc.bench.results import read_results
from skillc.bench.suite import load_suite
from skillc.cli import main

MACHINE = """machine deploy {
  use tools std
  input service: str
  var target: str
  var out: str
  start pick
  tool pick {
    call ask_user(question: "Deploy where?", options: ["staging", "prod"])
    writes target = answer
    -> go
  }
  tool go {
    reads target
    call write(path: "deployed.txt", content: target)
    writes out = path
    -> done
  }
  terminal done: success { requires out, exists("deployed.txt") }
  fallback
}
"""

SUITE = """[suite]
machine = "deploy.skm"
inputs = { service = "web" }

[verify]
file = "deployed.txt"
equals = "prod"

[[task]]
id = "answered"
answers = ["prod"]

[[task]]
id = "unanswered"
"""


def _suite(tmp_path: Path, text: str = SUITE) -> Path:
    (tmp_path / "deploy.skm").write_text(MACHINE)
    (tmp_path / "suite.toml").write_text(text)
    (tmp_path / "script.json").write_text(json.dumps({"outputs": {}}))
    return tmp_path / "suite.toml"


def test_answers_are_read_in_order_and_validated(tmp_path: Path) -> None:
    result = load_suite(_suite(tmp_path, SUITE.replace('answers = ["prod"]', 'answers = ["prod", "yes"]')))
    assert result.diagnostics == () and result.suite is not None
    answered, unanswered = result.suite.tasks
    assert (answered.answers, unanswered.answers) == (("prod", "yes"), ())
    assert "answers" in task_fingerprint(answered) and "answers" not in task_fingerprint(unanswered)
    bad = load_suite(_suite(tmp_path, SUITE.replace('answers = ["prod"]', 'answers = ["prod", 3]')))
    assert [(str(d.code), d.message) for d in bad.diagnostics] == [
        ("SKM702", "`task[1].answers[2]` must be a string, not an integer (an answer is the text the user replies)")]
    wrong = load_suite(_suite(tmp_path, SUITE.replace('answers = ["prod"]', 'answers = "prod"')))
    assert [str(d.code) for d in wrong.diagnostics] == ["SKM702"] and wrong.suite is None
    (tmp_path / "tasks.jsonl").write_text('{"id": "j", "answers": ["staging"]}\n')
    head = SUITE.split("[[task]]")[0].replace("[suite]\n", '[suite]\ntasks = "tasks.jsonl"\n')
    moved = load_suite(_suite(tmp_path, head))
    assert moved.suite is not None and moved.suite.tasks[0].answers == ("staging",)


def test_a_task_answers_the_question_and_a_task_without_answers_fails_as_needs_a_user(tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = CliRunner().invoke(main, ["bench", str(_suite(tmp_path)), "--modes", "machine", "--executor",
                                    f"scripted:{tmp_path / 'script.json'}", "-o", str(out), "--quiet"])
    assert run.exit_code == 0, run.output
    rows = {r.cell.task: r for r in read_results(out / "results.jsonl").rows}
    answered, unanswered = rows["answered"], rows["unanswered"]
    assert (answered.success, answered.outcome, answered.error) == (True, "success", None)
    assert (unanswered.success, unanswered.outcome) == (False, "failed")
    assert unanswered.error is not None and unanswered.error.startswith("needs a user: the skill asks 'Deploy where?'")
    from skillc.runtime.record import load_run

    trace = load_run(out / answered.trace)
    assert trace.steps[0].answered_by == "prepared" and trace.steps[0].tool_result == {"answer": "prod"}
