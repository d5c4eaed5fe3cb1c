"""Interpreter semantics: first true guard, counters, retries, fallback, atomic writes, merge patches."""

from __future__ import annotations

import json

from skillc.runtime.executors.base import ExecutorError, Response
from tests.runtime.helpers import Recorder, run

LOOP = """machine loop {
  input question: str
  var answer: str
  var verdict: enum { good, bad }
  counter tries max 2

  start think

  model think {
    reads question
    writes answer
    prompt "Answer."
    -> judge_it
  }

  judge judge_it {
    reads answer
    writes verdict
    prompt "Good?"
    when verdict == bad and tries < 2 -> think { tries += 1 }
    when verdict == bad -> gave_up
    -> done
  }

  terminal done: success { requires answer }
  terminal gave_up: partial { requires answer }
  fallback
}
"""


def test_first_true_guard_and_counters() -> None:
    script = {"outputs": {"think": [{"answer": "a1"}, {"answer": "a2"}, {"answer": "a3"}],
                          "judge_it": [{"verdict": "bad"}, {"verdict": "bad"}, {"verdict": "bad"}]}}
    r = run(LOOP, script, {"question": "q"})
    assert (r.outcome, r.terminal) == ("partial", "gave_up")
    assert r.visited == ("think", "judge_it") * 3
    assert r.evidence == {"answer": "a3"}


def test_success_path() -> None:
    script = {"outputs": {"think": [{"answer": "ok"}], "judge_it": [{"verdict": "good"}]}}
    r = run(LOOP, script, {"question": "q"})
    assert (r.outcome, r.terminal, r.steps) == ("success", "done", 2)


def test_invalid_output_is_retried_with_the_error_then_falls_back() -> None:
    replies = iter(["not json", json.dumps({"answer": 3}), json.dumps({"answer": "fine"})])
    rec = Recorder(lambda req: next(replies) if req.state == "think" else json.dumps({"verdict": "good"}))
    r = run(LOOP, {}, {"question": "q"}, executor=rec)
    assert r.outcome == "success"
    think = [q for q in rec.requests if q.state == "think"]
    assert len(think) == 3
    assert "not JSON" in think[1].messages[-1]["content"]
    assert "answer must be a string" in think[2].messages[-1]["content"]
    rec = Recorder(lambda req: json.dumps({"answer": 1}))
    r = run(LOOP, {}, {"question": "q"}, executor=rec, retries=1)
    assert (r.terminal, r.outcome) == ("fallback", "failed")
    assert len(rec.requests) == 2 and "no valid output after 2 attempts" in r.error


def test_labels_outside_the_enum_are_invalid() -> None:
    rec = Recorder(lambda req: json.dumps({"answer": "x"}) if req.state == "think" else json.dumps({"verdict": "meh"}))
    r = run(LOOP, {}, {"question": "q"}, executor=rec, retries=0)
    assert r.terminal == "fallback" and "must be one of good, bad" in r.error


def test_executor_failures_are_retried_then_fall_back() -> None:
    calls = []

    def answer(req):
        calls.append(req.state)
        return ExecutorError("HTTP 500") if len(calls) < 2 else json.dumps({"answer": "x"} if req.state == "think"
                                                                              else {"verdict": "good"})
    r = run(LOOP, {}, {"question": "q"}, executor=Recorder(answer))
    assert r.outcome == "success" and calls[:2] == ["think", "think"]
    r = run(LOOP, {}, {"question": "q"}, executor=Recorder(lambda req: ExecutorError("HTTP 429")), retries=2)
    assert r.terminal == "fallback" and "HTTP 429" in r.error


def test_writes_are_atomic() -> None:
    text = LOOP.replace("writes answer\n    prompt \"Answer.\"", "writes answer, verdict\n    prompt \"Answer.\"")
    rec = Recorder(lambda req: json.dumps({"answer": "half", "verdict": "nonsense"}))
    r = run(text, {}, {"question": "q"}, executor=rec, retries=0)
    assert r.terminal == "fallback"
    assert r.evidence == {}


STRUCT = """machine inventory {
  record Shelf {
    sku: str
    quantity: int
    note: str?
  }

  var shelves: map[str, Shelf] = {}
  var last: Shelf?
  counter events max 3

  start apply

  model apply {
    reads shelves
    writes shelves
    prompt "Apply the next event."
    when events < 3 -> apply { events += 1 }
    -> done
  }

  terminal done: success { requires shelves }
  fallback
}
"""


def test_map_writes_are_merge_patches_with_null_deletion() -> None:
    patches = [
        {"shelves": {"A1": {"sku": "x", "quantity": 3}, "A2": {"sku": "y", "quantity": 1}}},
        {"shelves": {"A1": {"quantity": 5}}},
        {"shelves": {"A2": None}},
        {"shelves": {"A1": {"note": "recounted"}}},
    ]
    r = run(STRUCT, {"outputs": {"apply": patches}})
    assert r.outcome == "success"
    assert r.evidence["shelves"] == {"A1": {"sku": "x", "quantity": 5, "note": "recounted"}}


def test_a_patch_that_breaks_the_schema_is_rolled_back_and_retried() -> None:
    patches = [{"shelves": {"A1": {"sku": "x", "quantity": 3}}},
               {"shelves": {"A1": {"quantity": "lots"}}},   # invalid: rolled back, retried
               {"shelves": {"A1": {"quantity": 4}}},
               {"shelves": {}}, {"shelves": {}}]
    rec_states = []

    def answer(req):
        rec_states.append(req.messages[-1]["content"])
        return json.dumps(patches[len(rec_states) - 1])
    r = run(STRUCT, {}, executor=Recorder(answer))
    assert r.outcome == "success"
    assert r.evidence["shelves"]["A1"]["quantity"] == 4
    assert "shelves['A1'].quantity must be an integer" in rec_states[2]


def test_step_limit_routes_to_fallback() -> None:
    r = run(STRUCT, {"outputs": {"apply": [{"shelves": {}}]}}, max_steps=2)
    assert r.terminal == "fallback" and "step limit" in r.error


TOOLS = """machine tooling {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  tool add(a: int, b: int) -> (sum: int)
  input word: str
  var out: str
  var status: int
  var total: int

  start echo

  tool echo {
    reads word
    call bash(command: "printf %s " ++ quote(word))
    writes out = stdout, status = exit_code
    when status != 0 -> fallback
    -> plus
  }

  tool plus {
    reads status
    call add(a: status, b: 2)
    writes total = sum
    -> done
  }

  terminal done: success { requires out, total }
  fallback
}
"""


def test_tools_run_with_quoting_and_python_callables(tmp_path) -> None:
    from skillc.runtime.tools import ToolBox

    mod = tmp_path / "mytools.py"
    mod.write_text("def add(a, b):\n    return {'sum': a + b}\n")
    box = ToolBox.default([str(mod)])
    r = run(TOOLS, {}, {"word": "it's; rm -rf / $(x)"}, tools=box)
    assert r.outcome == "success"
    assert r.evidence == {"out": "it's; rm -rf / $(x)", "total": 2}


def test_a_failing_tool_goes_to_the_fallback(tmp_path) -> None:
    from skillc.runtime.tools import ToolBox

    mod = tmp_path / "bad.py"
    mod.write_text("def add(a, b):\n    raise RuntimeError('disk on fire')\n")
    r = run(TOOLS, {}, {"word": "x"}, tools=ToolBox.default([str(mod)]))
    assert r.terminal == "fallback" and "disk on fire" in r.error
    mod.write_text("def add(a, b):\n    return {'sum': 'two'}\n")
    r = run(TOOLS, {}, {"word": "x"}, tools=ToolBox.default([str(mod)]))
    assert r.terminal == "fallback" and "result `sum` must be an integer" in r.error


def test_a_failed_step_still_records_what_was_asked_or_called(tmp_path) -> None:
    from skillc.runtime.record import ToolCall, load_run
    from skillc.runtime.tools import ToolBox

    invalid = Recorder(lambda req: Response(json.dumps({"answer": 1}), model="m", input_tokens=3, output_tokens=2))
    run(LOOP, {}, {"question": "q"}, executor=invalid, retries=1, trace=tmp_path / "model.jsonl")
    (step,) = load_run(tmp_path / "model.jsonl").steps
    assert (step.operation, step.model, step.raw_output, step.retries, step.output, step.target) == (
        "chat", "m", '{"answer": 1}', 1, None, "fallback")
    assert (step.input_tokens, step.output_tokens) == (6, 4)  # both attempts' usage
    assert [e.kind for e in step.errors] == ["invalid_output"] * 3  # each attempt's, then the step's
    replies = iter([Response(json.dumps({"answer": 1}), model="m"), ExecutorError("HTTP 500")])
    run(LOOP, {}, {"question": "q"}, executor=Recorder(lambda req: next(replies)), retries=1,
        trace=tmp_path / "broken.jsonl")
    (step,) = load_run(tmp_path / "broken.jsonl").steps
    assert (step.model, step.raw_output, step.retries) == ("m", '{"answer": 1}', 1)  # the last answer, kept
    assert [e.kind for e in step.errors] == ["invalid_output", "executor", "executor"]
    mod = tmp_path / "bad.py"
    mod.write_text("def add(a, b):\n    raise RuntimeError('disk on fire')\n")
    run(TOOLS, {}, {"word": "x"}, tools=ToolBox.default([str(mod)]), trace=tmp_path / "tool.jsonl")
    step = load_run(tmp_path / "tool.jsonl").steps[1]
    assert (step.operation, step.tool_name, step.tool_call, step.tool_result, step.target) == (
        "execute_tool", "add", ToolCall("add", {"a": 0, "b": 2}), None, "fallback")


def test_missing_tool_implementation_is_reported_before_running() -> None:
    import pytest

    from skillc.runtime import RunError

    with pytest.raises(RunError, match="no implementation for tool `add`"):
        run(TOOLS, {}, {"word": "x"})


def test_usage_counts_are_summed_over_retries() -> None:
    replies = iter([Response("nope", "m", 10, 2), Response(json.dumps({"answer": "x"}), "m", 11, 3)])
    rec = Recorder(lambda req: next(replies) if req.state == "think" else Response(json.dumps({"verdict": "good"}),
                                                                                     "m", 5, 1))
    r = run(LOOP, {}, {"question": "q"}, executor=rec)
    assert r.outcome == "success"


def test_bash_argument_vectors_timeouts_and_output_caps(tmp_path) -> None:
    import pytest

    from skillc.runtime.tools import BashTool, ToolError

    assert BashTool(cwd=str(tmp_path))(command="pwd")["stdout"].strip() == str(tmp_path)
    bash = BashTool(timeout_s=0.5, max_output=10, cwd=str(tmp_path))
    assert bash(argv=["printf", "%s", "a b; c"])["stdout"] == "a b; c"
    capped = bash(command="printf 0123456789abcdef")["stdout"]
    assert capped.startswith("0123456789") and capped.endswith("[output truncated]")
    with pytest.raises(ToolError, match="timed out"):
        bash(command="sleep 5")
    with pytest.raises(ToolError, match="exactly one"):
        bash()
    assert bash(command="exit 3")["exit_code"] == 3


# ---------------------------------------------------------------- typed steps, on_step, why a run fell back


def test_on_step_sees_each_committed_step_with_the_variables_after_it(tmp_path) -> None:
    from skillc.runtime import Interpreter, RunOptions, ToolBox
    from skillc.runtime.executors.scripted import ScriptedExecutor
    from skillc.runtime.record import Step
    from tests.runtime.helpers import checked

    seen: list[tuple[Step, dict]] = []
    script = {"outputs": {"think": [{"answer": "a1"}, {"answer": "a2"}], "judge_it": [{"verdict": "bad"},
                                                                                      {"verdict": "good"}]}}
    trace = tmp_path / "t.jsonl"
    r = Interpreter(checked(LOOP), ScriptedExecutor(script), ToolBox(), RunOptions(trace=trace), LOOP,
                    on_step=lambda step, env: seen.append((step, dict(env)))).run({"question": "q"})
    assert r.outcome == "success"
    assert [(s.index, s.state, s.target) for s, _ in seen] == [
        (0, "think", "judge_it"), (1, "judge_it", "think"), (2, "think", "judge_it"), (3, "judge_it", "done")]
    assert seen[1][0].label == "bad" and seen[1][0].assignments == {"tries": 1} and seen[1][1]["tries"] == 1
    assert seen[2][1]["answer"] == "a2"

    class Stop(Exception):
        pass

    def stop(step, env):
        raise Stop

    try:
        Interpreter(checked(LOOP), ScriptedExecutor(script), ToolBox(), RunOptions(trace=trace), LOOP,
                    on_step=stop).run({"question": "q"})
    except Stop:
        pass
    lines = [json.loads(x) for x in trace.read_text().splitlines()]
    assert [x["type"] for x in lines] == ["header", "step"]  # committed and written before the callback ran


def test_the_footer_says_why_a_run_fell_back(tmp_path) -> None:
    from skillc.runtime.record import load_run

    cases = [
        ({"outputs": {"think": [{"answer": 1}]}}, {}, "invalid_output", "think"),
        ({"outputs": {}}, {}, "executor", "think"),
        ({"outputs": {"apply": [{"shelves": {}}]}}, {"max_steps": 2}, "step_limit", "apply"),
    ]
    for i, (script, extra, kind, state) in enumerate(cases):
        trace = tmp_path / f"t{i}.jsonl"
        text = STRUCT if state == "apply" else LOOP
        r = run(text, script, {} if state == "apply" else {"question": "q"}, trace=trace, retries=0, **extra)
        assert r.terminal == "fallback" and r.reason is not None and (r.reason.kind, r.reason.state) == (kind, state)
        footer = load_run(trace).footer
        assert footer is not None and footer.reason == r.reason and footer.error == r.error == r.reason.message
    import skillc
    from skillc.runtime import Interpreter, RunOptions, ToolBox
    from tests.runtime.test_replay import GATE, SPIN

    for text, answer, kind in ((GATE, "stop", "no_edge"), (SPIN, "again", "counter")):
        machine = skillc.check(text).machine  # both fail the checker on purpose (SKM202, SKM251): still runnable
        r = Interpreter(machine, Recorder(lambda q, a=answer: json.dumps({"x": a})), ToolBox(), RunOptions(),
                        text).run({})
        assert r.terminal == "fallback" and r.reason is not None and r.reason.kind == kind
        assert r.error == r.reason.message
