"""Alignment: reuse by tool, command and written values; new and ignored events; the judge; rules not bypassed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from skillc.check.source import check_source
from skillc.improve.events import DevTrace, Event
from skillc.improve.refine.align import align, implied_edges, model_judge
from skillc.ir.machine import Machine
from skillc.runtime.executors.scripted import ScriptedExecutor

ROOT = Path(__file__).resolve().parents[3]
PARTIAL = ROOT / "examples" / "refine" / "livemath-partial.skm"


def native(commands: Sequence[tuple[str, dict[str, object]]], outcome: str = "success",
           inputs: dict[str, object] | None = None) -> DevTrace:
    """A native-mode trace as trace import makes it: per turn the chosen action, then its tool call."""
    events: list[Event] = []
    for command, result in commands:
        action = {"action": "bash", "args": {"command": command}}
        events += [Event("model", text=str(action), output=action),
                   Event("tool", tool="bash", args={"command": command}, result=result)]
    events.append(Event("model", output={"action": "finish", "outcome": outcome, "evidence": {}}))
    return DevTrace(tuple(events), outcome, "skillc", mode="native",  # type: ignore[arg-type]
                    inputs=inputs or {"question": "q", "options": ["1", "2", "3", "4", "5"]})


def machine(text: str) -> Machine:
    """A checked machine from text (the test fails when it does not check)."""
    result = check_source(text, path=str(ROOT / "m.skm"))
    assert result.machine is not None and not [d for d in result.diagnostics if d.is_error], result.diagnostics
    return result.machine


def partial() -> Machine:
    """The livemath machine without its read-back (the demonstration's start)."""
    result = check_source(PARTIAL)
    assert result.machine is not None
    return result.machine


OK = {"stdout": "", "exit_code": 0}
WRITE = "printf %s B > answer.txt"
#: The full procedure in native mode: write the letter, read it back, finish.
GOOD = native([(WRITE, OK), ("cat answer.txt", {"stdout": "B", "exit_code": 0})])


def test_native_turns_are_ignored_and_the_write_is_reused() -> None:
    got = align(partial(), GOOD)
    assert got.ok
    assert [d.action for d in got.decisions] == ["ignore", "reuse", "ignore", "new", "ignore"]
    assert got.alignment.states == (None, "write", None, "bash_cat", None)
    assert got.new == {"bash_cat": (3,)}
    assert "same command `printf`" in got.decisions[1].reason


def test_the_same_new_command_twice_is_one_new_state() -> None:
    got = align(partial(), native([("printf %s B > answer.txt", OK), ("cat answer.txt", OK), ("cat answer.txt", OK)]))
    assert got.new == {"bash_cat": (3, 5)}


def test_a_model_event_is_reused_by_the_values_it_wrote() -> None:
    m = partial()
    pick = Event("model", text="Pick one letter", output={"choice": "B", "doubt": "", "sanity_check": "ok"})
    trace = DevTrace((pick,), "unfinished", "chat")
    got = align(m, trace)
    assert got.alignment.states == ("pick",)
    silent = DevTrace((Event("model", text="hello there"),), "unfinished", "chat")
    assert align(m, silent).decisions[0].action == "ignore"


def test_a_state_named_by_the_trace_is_taken() -> None:
    trace = DevTrace((Event("tool", tool="bash", args={"command": "ls"}, state="write"),), "unfinished", "skillc")
    assert align(partial(), trace).alignment.states == ("write",)


TWO = """machine two {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var a: str
  var b: str
  start first
  tool first {
    call bash(command: "cat notes")
    writes a = stdout
    -> second
  }
  tool second {
    call bash(command: "cat notes")
    writes b = stdout
    -> done
  }
  terminal done: success
  fallback
}"""


def test_the_judge_decides_between_close_candidates() -> None:
    m = machine(TWO)
    cat = Event("tool", tool="bash", args={"command": "cat notes"}, result={"stdout": "x", "exit_code": 0})
    trace = DevTrace((cat,), "unfinished", "chat")
    assert align(m, trace).alignment.states == ("first",)  # deterministic: the first of equals
    judge = model_judge(ScriptedExecutor({"outputs": {"align": [{"state": "second"}]}}))
    got = align(m, trace, judge=judge)
    assert got.alignment.states == ("second",) and got.decisions[0].judged
    # An unusable reply keeps the deterministic choice.
    bad = model_judge(ScriptedExecutor({"outputs": {"align": ["not json"]}}))
    assert align(m, trace, judge=bad).alignment.states == ("first",)


RULED = """machine ruled {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var s: int
  start build
  tool build {
    call bash(command: "make")
    writes s = exit_code
    -> test
  }
  tool test {
    call bash(command: "pytest")
    writes s = exit_code
    -> ship
  }
  tool ship {
    call bash(command: "deploy now")
    writes s = exit_code
    -> done
  }
  terminal done: success
  fallback
  rule order test before ship "Test before you ship."
}"""


def test_an_alignment_that_bypasses_an_order_rule_is_rejected() -> None:
    m = machine(RULED)
    skip = DevTrace((Event("tool", tool="bash", args={"command": "make"}, result=OK),
                     Event("tool", tool="bash", args={"command": "deploy now"}, result=OK)), "success", "chat")
    got = align(m, skip)
    assert implied_edges(m, got.alignment) == [("build", "ship")]
    assert not got.ok and str(got.diagnostics[0].code) == "SKM820"
    assert "`ship` can run before `test`" in got.diagnostics[0].message
    full = DevTrace((*skip.events[:1], Event("tool", tool="bash", args={"command": "pytest"}, result=OK),
                     skip.events[1]), "success", "chat")
    assert align(m, full).ok and implied_edges(m, align(m, full).alignment) == []


def test_realignment_only_reuses_reachable_states() -> None:
    m = machine(RULED)
    back = DevTrace((Event("tool", tool="bash", args={"command": "pytest"}, result=OK),
                     Event("tool", tool="bash", args={"command": "make"}, result=OK)), "unfinished", "chat")
    assert align(m, back).alignment.states == ("test", "build")
    again = align(m, back, only_reachable=True)
    assert again.alignment.states[0] == "test" and again.alignment.states[1] != "build"
    assert again.decisions[1].action == "new"


def test_tool_names_match_whatever_their_case() -> None:
    trace = DevTrace((Event("tool", tool="Bash", args={"command": "printf %s B > answer.txt"}),), "unfinished",
                     "claude-code")
    assert align(partial(), trace).alignment.states == ("write",)  # Claude Code's `Bash` is the machine's `bash`


def test_a_call_with_no_fixed_text_is_reused_for_any_command() -> None:
    m = machine(RULED.replace('call bash(command: "deploy now")', "reads s\n    call bash(command: str(s))"))
    trace = DevTrace((Event("tool", tool="bash", args={"command": "kubectl apply"}, result=OK),), "unfinished", "chat")
    got = align(m, trace)
    assert got.alignment.states == ("ship",) and got.decisions[0].score >= 0.5
