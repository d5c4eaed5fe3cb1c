"""The interpreter's public seams: `run_from`, `step`, `ask`/`call_tool` overridden (`StepFailed`), `wait_to_retry`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import skillc
from skillc.ir.machine import State
from skillc.runtime import Interpreter, RunError, RunOptions, ToolBox
from skillc.runtime.executors.base import ExecutorError
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.interpreter import Answer, Operation, StepFailed, wait_to_retry
from skillc.runtime.journal import Journal
from skillc.runtime.record import Step, StepError
from tests.runtime.helpers import ECHO, checked
from tests.runtime.test_interpreter import LOOP

# A guard that reads an input: left without a value, it cannot be evaluated and the default edge fires.
GATE = """machine gate {
  input level: int
  var note: str
  start decide
  model decide {
    writes note
    prompt "Note."
    when level > 3 -> high
    -> low
  }
  terminal high: success { requires note }
  terminal low: partial { requires note }
  fallback
}
"""


def _interp(text: str, script: dict, **options: Any) -> Interpreter:
    return Interpreter(checked(text), ScriptedExecutor(script), ToolBox.default(), RunOptions(**options), text)


def test_run_from_starts_at_the_given_state_and_step_with_the_given_variables() -> None:
    steps: list[Step] = []
    interp = _interp(LOOP, {"outputs": {"judge_it": [{"verdict": "bad"}, {"verdict": "good"}],
                                        "think": [{"answer": "a2"}]}})
    interp.on_step = lambda step, _env: steps.append(step)
    r = interp.run_from({"question": "q", "answer": "a1", "tries": 1}, "judge_it", 5)
    # tries is 1 of 2, so a bad verdict loops back once (tries += 1) and the second answer is judged good.
    assert (r.terminal, r.outcome, r.steps, r.run_id, r.trace) == ("done", "success", 8, None, None)
    assert r.visited == ("judge_it", "think", "judge_it") and r.evidence == {"answer": "a2"}
    assert [s.index for s in steps] == [5, 6, 7] and steps[0].assignments == {"tries": 2}


def test_run_from_leaves_a_missing_input_unknown_where_run_refuses_it() -> None:
    with pytest.raises(RunError, match="input `level`"):
        _interp(GATE, {"outputs": {"decide": [{"note": "n"}]}}).run({})
    steps: list[Step] = []
    interp = _interp(GATE, {"outputs": {"decide": [{"note": "n"}]}})
    interp.on_step = lambda step, _env: steps.append(step)
    r = interp.run_from({})
    assert (r.terminal, r.outcome) == ("low", "partial")
    assert steps[0].edge == 1 and "guard of edge 1" in steps[0].warnings[0]
    high = _interp(GATE, {"outputs": {"decide": [{"note": "n"}]}}).run_from({"level": 5})
    assert high.terminal == "high"


def test_a_model_state_reading_a_value_run_from_left_out_falls_back_with_its_name() -> None:
    r = _interp(ECHO, {"outputs": {"think": [{"answer": "a"}]}}).run_from({})
    assert r.terminal == "fallback" and r.reason is not None and r.reason.kind == "arguments"
    assert r.error == "`think` reads `q`, which has no value"


@pytest.mark.parametrize(("env", "state", "step", "message"), [
    ({"question": "q"}, "nowhere", 0, "`nowhere` is not a state of `loop`"),
    ({"question": "q"}, None, -1, "cannot start at step -1"),
    ({"question": "q", "stray": 1}, None, 0, "`stray` is not a variable of `loop`"),
    ({"question": 3}, None, 0, "`question` must be a string"),
    ({"tries": "one"}, None, 0, "`tries` must be an integer"),
])
def test_run_from_refuses_a_state_step_or_variables_that_do_not_fit(env: dict, state: str | None, step: int,
                                                                     message: str) -> None:
    with pytest.raises(RunError, match=message):
        _interp(LOOP, {}).run_from(env, state, step)


def test_run_from_refuses_a_trace_or_journal_it_would_not_write(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="no trace and no journal"):
        _interp(LOOP, {}, trace=tmp_path / "t.jsonl").run_from({"question": "q"})
    journal = Journal(tmp_path / "runs.sqlite")
    with pytest.raises(RunError, match="no trace and no journal"):
        _interp(LOOP, {}, journal=journal).run_from({"question": "q"})
    assert not (tmp_path / "t.jsonl").exists()


def test_step_runs_one_state_from_the_given_variables_and_records_it_as_the_loop_would() -> None:
    interp = _interp(LOOP, {"outputs": {"judge_it": [{"verdict": "bad"}, {"verdict": "maybe"}]}}, retries=0)
    env = {"question": "q", "answer": "a", "tries": 0}
    moved = interp.step("judge_it", env, 4)
    assert (moved.target, moved.edge, moved.failure, moved.env["tries"], moved.env["verdict"]) == (
        "think", 0, None, 1, "bad")
    assert env == {"question": "q", "answer": "a", "tries": 0}  # the caller's variables are not changed
    record = moved.record()
    assert (record.index, record.state, record.kind, record.operation, record.label, record.assignments,
            record.target) == (4, "judge_it", "judge", "chat", "bad", {"tries": 1}, "think")
    failed = interp.step("judge_it", env, 5)  # "maybe" is no verdict: no retry left, the fallback
    assert (failed.target, failed.env, failed.edge) == ("fallback", env, None)
    assert failed.failure is not None and failed.failure.kind == "invalid_output"
    assert [e.kind for e in failed.errors] == ["invalid_output", "invalid_output"]  # the attempt's, then the step's


@pytest.mark.parametrize(("state", "env", "message"), [
    ("done", {}, "`done` is not a state of `loop` with an operation"),
    ("nowhere", {}, "`nowhere` is not a state of `loop`"),
    ("think", {"stray": 1}, "`stray` is not a variable of `loop`"),
    ("think", {"question": 3}, "`question` must be a string"),
])
def test_step_refuses_a_state_without_an_operation_or_variables_that_do_not_fit(state: str, env: dict,
                                                                                message: str) -> None:
    with pytest.raises(RunError, match=message):
        _interp(LOOP, {}).step(state, env)


# Two counters assigned on one edge: the second can pass its maximum after the first was assigned.
TWICE = """machine twice {
  var note: str
  counter a max 3
  counter c max 1
  start s
  model s {
    writes note
    prompt "Note."
    -> done { a += 1, c += 1 }
  }
  terminal done: success
  fallback
}
"""


class _Unchanged(Interpreter):
    """An operation that changes no variable and hands back the very mapping it was given."""

    def ask(self, st: State, env: dict[str, Any]) -> Answer:
        return Answer(env)


def test_an_override_answering_with_the_given_variables_does_not_see_a_failed_assignment_in_them() -> None:
    machine = skillc.check(TWICE).machine  # warned about (SKM251: a counter can pass its maximum), as the test wants
    assert machine is not None
    interp = _Unchanged(machine, ScriptedExecutor({}), ToolBox(), RunOptions(), TWICE)
    failed = interp.step("s", {"note": "n", "a": 0, "c": 1})
    assert failed.failure is not None and failed.failure.kind == "counter"
    assert failed.env == {"note": "n", "a": 0, "c": 1}  # not `a` assigned before `c` failed
    assert interp.step("s", {"note": "n", "a": 0, "c": 0}).env == {"note": "n", "a": 1, "c": 1}


class _Refusing(Interpreter):
    """Answers model and judge states itself; a second question is refused with a step failure."""

    def ask(self, st: State, env: dict[str, Any]) -> Answer:
        if st.name == "judge_it":
            raise StepFailed(StepError("divergence", "the judge is not asked here"), Operation("chat", raw_output="?"))
        return Answer({**env, "answer": "mine"}, Operation("chat", model="mine", output={"answer": "mine"}))


def test_a_subclass_operation_raising_step_failed_sends_the_run_to_the_fallback_with_its_reason() -> None:
    steps: list[Step] = []
    interp = _Refusing(checked(LOOP), ScriptedExecutor({}), ToolBox(), RunOptions(), LOOP,
                       on_step=lambda step, _env: steps.append(step))
    r = interp.run({"question": "q"})
    assert (r.terminal, r.visited, r.error) == ("fallback", ("think", "judge_it"), "the judge is not asked here")
    assert r.reason is not None and (r.reason.kind, r.reason.state, r.reason.step) == ("divergence", "judge_it", 1)
    assert steps[1].errors == (StepError("divergence", "the judge is not asked here"),)
    assert steps[1].target == "fallback"
    # What each operation said it did is what its step records, a failed one's included.
    assert (steps[0].operation, steps[0].model, steps[0].output, steps[0].edge) == (
        "chat", "mine", {"answer": "mine"}, 0)
    assert (steps[1].operation, steps[1].raw_output, steps[1].model) == ("chat", "?", None)


class _Clock:
    """A fake monotonic clock that `sleep` advances."""

    def __init__(self) -> None:
        self.t = 100.0
        self.slept: list[float] = []

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.t += seconds


@pytest.mark.parametrize(("retry_after", "deadline", "expected", "slept"), [
    (None, None, True, []),          # no Retry-After, no deadline: try again at once
    (None, 101.0, True, []),         # ... before the deadline
    (None, 100.0, False, []),        # ... the deadline has come
    (2.0, None, True, [2.0]),        # the wait is honoured
    (2.0, 103.0, True, [2.0]),       # ... when it ends before the deadline
    (3.0, 103.0, False, []),         # ... and not when it would reach it
    (61.0, None, False, []),         # a wait past max_wait_s is not waited for
])
def test_wait_to_retry_honours_retry_after_within_the_deadline_and_the_cap(
        retry_after: float | None, deadline: float | None, expected: bool, slept: list[float]) -> None:
    clock = _Clock()
    exc = ExecutorError("busy", retry_after=retry_after)
    assert wait_to_retry(exc, deadline, 60.0, now=clock.now, sleep=clock.sleep) is expected
    assert clock.slept == slept
