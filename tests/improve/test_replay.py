"""replay_trace: the real interpreter driven by a trace's aligned events; ok, divergence, unknown and unobserved."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillc
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.replay import ReplayPath, replay_trace

ROOT = Path(__file__).resolve().parents[2]

# A model step, a judge that splits on its label, a tool step whose exit status is guarded, and a bounded retry.
FIX = """machine fix {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input target: str
  var plan: str
  var verdict: enum { good, bad }
  var status: int
  counter tries max 1
  start plan_it
  model plan_it {
    reads target
    writes plan
    prompt "Plan."
    -> review
  }
  judge review {
    reads plan
    writes verdict
    prompt "Good plan?"
    when verdict == bad and tries < 1 -> plan_it { tries += 1 }
    when verdict == bad -> fallback
    -> apply
  }
  tool apply {
    reads plan
    call bash(command: plan)
    writes status = exit_code
    when status != 0 -> failed_run
    -> done
  }
  terminal done: success { requires status }
  terminal failed_run: failed
  fallback
}
"""


def machine(text: str = FIX):
    """The checked machine of `text`."""
    result = skillc.check(text, path=str(ROOT / "case.skm"))
    assert result.machine is not None and not [d for d in result.diagnostics if d.is_error], result.diagnostics
    return result.machine


def plan(value: str) -> Event:
    return Event("model", text="planning", output={"plan": value})


def review(label: str) -> Event:
    return Event("model", text="reviewing", output={"verdict": label})


def apply(status: int, command: str = "make") -> Event:
    return Event("tool", tool="bash", args={"command": command}, result={"stdout": "", "exit_code": status})


def trace(events: list[Event], outcome: str = "success", inputs: dict | None = None) -> DevTrace:
    return DevTrace(tuple(events), outcome, "skillc", inputs=inputs or {"target": "t"})  # type: ignore[arg-type]


def aligned(t: DevTrace, *states: str | None) -> Alignment:
    return Alignment(t.id, tuple(states))


def test_a_trace_the_machine_reproduces_is_ok_with_its_path() -> None:
    t = trace([plan("make"), review("good"), apply(0)])
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "apply"))
    assert verdict.ok, verdict.reason
    assert verdict.path == ReplayPath(("plan_it", "review", "apply", "done"),
                                      (("plan_it", 0), ("review", 2), ("apply", 1)))
    assert (verdict.terminal, verdict.outcome, verdict.diverged_at) == ("done", "success", None)


def test_guards_are_the_runtimes_a_bad_review_loops_back_once_through_the_counter() -> None:
    t = trace([plan("x"), review("bad"), plan("make"), review("good"), apply(0)])
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "plan_it", "review", "apply"))
    assert verdict.ok, verdict.reason
    assert verdict.transitions[1] == ("review", 0)
    # A second bad review passes the counter's bound: the machine takes its fallback edge, the trace did not stop.
    t2 = trace([plan("x"), review("bad"), plan("y"), review("bad"), plan("make"), review("good"), apply(0)])
    v2 = replay_trace(machine(), t2, aligned(t2, *["plan_it", "review"] * 3, "apply"))
    assert not v2.ok and v2.terminal == "fallback" and v2.diverged_at == 3
    assert v2.reason is not None and v2.reason.startswith("edge")


def test_a_different_terminal_category_is_not_ok() -> None:
    t = trace([plan("make"), review("good"), apply(2)], outcome="success")
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "apply"))
    assert not verdict.ok and verdict.terminal == "failed_run"
    assert "failed" in (verdict.reason or "") and verdict.diverged_at == 3
    assert replay_trace(machine(), trace(list(t.events), "failed"), aligned(t, "plan_it", "review", "apply")).ok


def test_a_tool_state_the_trace_does_not_show_is_a_divergence_at_the_next_aligned_event() -> None:
    t = trace([plan("make"), review("good"), review("good")])
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "review"))
    assert not verdict.ok and verdict.diverged_at == 2
    assert "divergence" in (verdict.reason or "") and "apply" in (verdict.reason or "")
    assert verdict.states[-2:] == ("apply", "fallback")


def test_an_aligned_event_left_over_after_the_terminal_is_not_ok() -> None:
    t = trace([plan("make"), review("good"), apply(0), apply(0)])
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "apply", "apply"))
    assert not verdict.ok and verdict.diverged_at == 3 and verdict.terminal == "done"


def test_unaligned_events_are_skipped_and_unobserved_model_turns_pass_with_unknown_values() -> None:
    # A native run: only the tool call is an event the machine realises; plan_it and review leave none.
    t = trace([Event("model", text='{"action": "bash"}'), apply(0)])
    verdict = replay_trace(machine(), t, aligned(t, None, "apply"))
    assert verdict.ok, verdict.reason
    assert verdict.unobserved == ("plan_it", "review") and set(verdict.unknown) == {"plan_it", "review"}
    # review's guards read the unknown verdict: the runtime warns and its default edge fires.
    assert verdict.transitions[1] == ("review", 2) and any("verdict" in w for w in verdict.warnings)
    strict = replay_trace(machine(), t, aligned(t, None, "apply"), strict=True)
    assert not strict.ok and strict.diverged_at == 1


def test_a_value_of_the_wrong_type_is_refused_by_the_states_contract() -> None:
    t = trace([plan("make"), review("maybe"), apply(0)])
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "apply"))
    assert not verdict.ok and verdict.reason is not None and verdict.reason.startswith("invalid_output")
    assert verdict.diverged_at == 1


def test_a_tool_result_that_is_not_an_object_leaves_its_bindings_unknown() -> None:
    t = trace([plan("make"), review("good"), Event("tool", tool="bash", args={"command": "make"}, result="ok")])
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "apply"))
    # `status` is unknown: `status != 0` cannot be evaluated, so the default edge reaches done.
    assert verdict.ok and "apply" in verdict.unknown


def test_a_tool_result_missing_a_declared_result_goes_to_the_fallback() -> None:
    bad = Event("tool", tool="bash", args={"command": "make"}, result={"stdout": ""})
    t = trace([plan("make"), review("good"), bad])
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review", "apply"))
    assert not verdict.ok and verdict.reason is not None and "exit_code" in verdict.reason


def test_an_unfinished_trace_is_ok_once_its_aligned_events_are_consumed() -> None:
    t = trace([plan("make"), review("good")], outcome="unfinished")
    verdict = replay_trace(machine(), t, aligned(t, "plan_it", "review"))
    assert verdict.ok, verdict.reason
    assert verdict.states == ("plan_it", "review") and verdict.terminal is None


def test_an_alignment_of_the_wrong_length_is_a_verdict_not_a_crash() -> None:
    t = trace([plan("make")])
    verdict = replay_trace(machine(), t, Alignment(t.id, ()))
    assert not verdict.ok and verdict.diverged_at == 0


def test_missing_inputs_stay_unknown_and_the_trace_still_replays() -> None:
    t = trace([plan("make"), review("good"), apply(0)], inputs={})
    assert replay_trace(machine(), DevTrace(t.events, "success", "chat"), aligned(t, "plan_it", "review",
                                                                                   "apply")).ok


def test_path_round_trips_through_json() -> None:
    path = ReplayPath(("a", "b", "done"), (("a", 0), ("b", None)))
    assert ReplayPath.from_json(path.to_json()) == path
    with pytest.raises(ValueError):
        ReplayPath.from_json({"states": ["a"], "transitions": [["a", "x"]]})


def test_a_cycle_of_unobserved_turns_stops_at_the_step_limit_instead_of_hanging() -> None:
    spin = """machine spin {
  var x: str
  start a
  model a {
    writes x
    prompt "Say."
    when x == "go" -> done
    -> a
  }
  terminal done: success { requires x }
  fallback
}
"""
    loaded = skillc.load(spin, path=str(ROOT / "spin.skm"))  # unbounded on purpose: loaded, not checked
    assert loaded.machine is not None
    t = trace([], inputs={})
    verdict = replay_trace(loaded.machine, t, aligned(t))
    assert not verdict.ok and verdict.reason is not None and verdict.reason.startswith("step_limit")



def test_an_unchecked_machine_whose_input_default_has_the_wrong_type_is_a_verdict_not_a_crash() -> None:
    bad = FIX.replace("input target: str", 'input target: str\n  input level: int = "high"')
    loaded = skillc.load(bad, path=str(ROOT / "bad.skm"))  # SKM110 on purpose: loaded, not checked
    assert loaded.machine is not None
    t = trace([plan("make"), review("good"), apply(0)])
    assert replay_trace(machine(), t, aligned(t, "plan_it", "review", "apply")).ok  # the checked machine replays it
    verdict = replay_trace(loaded.machine, t, aligned(t, "plan_it", "review", "apply"))
    assert not verdict.ok and verdict.path == ReplayPath() and verdict.diverged_at == 0
    assert verdict.reason == "the machine cannot be run: `level` must be an integer"


def test_the_committed_skillc_examples_replay_on_livemath() -> None:
    from skillc.improve.refine.traces import load_traces

    livemath = skillc.check(ROOT / "examples" / "livemath" / "livemath.skm").machine
    examples = ROOT / "examples" / "refine" / "traces"
    (run,), _ = load_traces(examples / "skillc-machine.jsonl")
    verdict = replay_trace(livemath, run, Alignment(run.id, tuple(e.state for e in run.events)))
    assert verdict.ok and verdict.terminal == "verified" and verdict.unknown == ()
    # The native run: only its two tool calls are aligned; the model states are unobserved, and `choice` (read by
    # the read-back's guard) comes from the evidence its `finish` reported.
    (native,), _ = load_traces(examples / "skillc-native.jsonl")
    alignment = Alignment(native.id, (None, "write", None, "read_back", None))
    verdict = replay_trace(livemath, native, alignment)
    assert verdict.ok and verdict.terminal == "verified" and "pick" in verdict.unobserved
    no_evidence = DevTrace(native.events, native.outcome, native.format, inputs=native.inputs)
    blind = replay_trace(livemath, no_evidence, Alignment(no_evidence.id, alignment.states))
    assert not blind.ok and blind.terminal == "unverified"  # without `choice` the guard cannot hold
