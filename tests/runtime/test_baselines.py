"""The native and prompt-only baselines: what each prompt holds, the protocol, retries, budget, tokens, exit codes."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

import skillc
from skillc.ir.toolkit import KIT
from skillc.runtime import RunOptions, ToolBox
from skillc.runtime.baselines import PROTOCOL, offered_tools, render_prose, run_baseline, skill_tools
from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.record import load_run
from tests.conftest import EXAMPLES

MACHINE = EXAMPLES / "livemath" / "livemath.skm"
SKILL = (EXAMPLES / "livemath" / "SKILL.md").read_text()
INPUTS = {"question": "What is 2+2?", "options": ["3", "4", "5", "6", "7"]}
WRITE = {"action": "bash", "args": {"command": "printf %s B > answer.txt"}}
READ = {"action": "bash", "args": {"command": "cat answer.txt"}}
FINISH = {"action": "finish", "outcome": "success", "evidence": {"choice": "B", "readback": "B"}}


class Recording(BaseExecutor):
    """Replies in order (strings verbatim) and keeps every request; tokens: characters of the prompt and reply."""

    name = "recording"

    def __init__(self, replies: list) -> None:
        self.replies = list(replies)
        self.requests: list = []

    def complete(self, request) -> Response:
        self.requests.append(request)
        if not self.replies:
            raise ExecutorError("no reply left")
        reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        text = reply if isinstance(reply, str) else json.dumps(reply)
        return Response(text, model="rec", input_tokens=sum(len(m["content"]) for m in request.messages),
                        output_tokens=len(text))


def _machine():
    return skillc.check(MACHINE).machine


def _run(tmp_path: Path, replies: list, mode: str = "native", **options):
    executor = Recording(replies)
    trace = tmp_path / f"{mode}.jsonl"
    result = run_baseline(_machine(), mode, executor, ToolBox.default(cwd=str(tmp_path)),
                          RunOptions(trace=trace, **{"max_steps": 20, **options}), INPUTS, SKILL)
    return result, load_run(trace), executor.requests


def test_native_sends_the_skill_tools_protocol_and_the_whole_growing_transcript(tmp_path: Path) -> None:
    result, run, requests = _run(tmp_path, [WRITE, READ, FINISH])
    assert (result.outcome, result.steps, (tmp_path / "answer.txt").read_text()) == ("success", 3, "B")
    system = requests[0].messages[0]
    assert system["role"] == "system" and system["content"].startswith(SKILL.rstrip())
    # The harness's kit, not the machine's table: the kit's bash (with stderr) and the other kit tools.
    assert "- bash(command: str?, argv: list[str]?, cwd: str?, timeout: int?) -> stdout: str, stderr: str, " \
           "exit_code: int — run a shell" in system["content"]
    assert "- read(path: str, offset: int?, limit: int?) -> content: str, lines: int" in system["content"]
    assert PROTOCOL in system["content"] and "success: choice, readback" in system["content"]
    assert json.loads(requests[0].messages[1]["content"].removeprefix("Inputs:\n"))["options"][1] == "4"
    for before, after in itertools.pairwise(requests):  # every prompt holds the previous one whole
        assert (after.messages[:len(before.messages)] == before.messages
                and len(after.messages) == len(before.messages) + 2)
    assert requests[2].messages[-1]["content"] == 'Observation:\n{"stdout": "B", "stderr": "", "exit_code": 0}'
    assert [s.tool_call.args["command"] for s in run.steps if s.tool_call] == ["printf %s B > answer.txt",
                                                                               "cat answer.txt"]
    assert [s.output["action"] for s in run.steps] == ["bash", "bash", "finish"]
    assert run.header.mode == "native" and run.footer.outcome == "success" and run.footer.reason is None


def test_prompt_only_sends_the_prose_machine_not_the_skill(tmp_path: Path) -> None:
    _, run, requests = _run(tmp_path, [WRITE, READ, FINISH], mode="prompt-only")
    system = requests[0].messages[0]["content"]
    assert system.startswith(render_prose(_machine())) and "## Procedure" not in system and PROTOCOL in system
    assert run.header.mode == "prompt-only" and {s.state for s in run.steps} == {"prompt-only"}


def test_a_malformed_reply_is_retried_within_its_step_with_the_reason(tmp_path: Path) -> None:
    result, run, requests = _run(tmp_path, ["not json", {"action": "rm"}, WRITE, READ, FINISH])
    assert (result.outcome, result.steps) == ("success", 3)
    first = run.steps[0]
    assert first.retries == 2 and [e.kind for e in first.errors] == ["invalid_output", "invalid_output"]
    assert "no tool `rm`" in first.errors[1].message
    assert requests[1].messages[-1]["content"].startswith("Your reply was not valid: the reply is not JSON")
    # the step's tokens are all three calls', and the footer's the sum of every call
    assert first.input_tokens == sum(sum(len(m["content"]) for m in r.messages) for r in requests[:3])
    assert run.footer.input_tokens == sum(sum(len(m["content"]) for m in r.messages) for r in requests)
    assert run.footer.output_tokens == sum(s.output_tokens or 0 for s in run.steps)


def test_replies_that_never_follow_the_protocol_fail_the_run(tmp_path: Path) -> None:
    result, run, _ = _run(tmp_path, ["not json", {"action": "bash", "args": {"cmd": "x"}}, {"action": "finish"}])
    assert (result.outcome, result.steps) == ("failed", 1)
    assert run.footer.reason.kind == "invalid_output" and "unknown argument `cmd`" in run.steps[0].errors[1].message
    assert "`outcome` must be one of" in run.footer.reason.message


def test_a_finish_without_any_tool_call_is_not_believed(tmp_path: Path) -> None:
    result, run, _ = _run(tmp_path, [FINISH])
    assert result.outcome == "failed" and run.footer.extra["skillc.declared_outcome"] == "success"
    assert run.footer.reason.kind == "invalid_output" and "without any tool call that returned results" in result.error
    slow = {"action": "bash", "args": {"command": "sleep 5"}}  # every call fails (times out): still no evidence
    result = run_baseline(_machine(), "native", Recording([slow, FINISH]), ToolBox.default(timeout_s=0.1),
                          RunOptions(), INPUTS, SKILL)
    assert result.outcome == "failed" and result.reason.kind == "invalid_output"
    result, run, _ = _run(tmp_path, [WRITE, {**FINISH, "outcome": "partial"}])
    assert result.outcome == "partial" and run.footer.reason is None


def test_the_step_budget_is_the_machines_max_steps(tmp_path: Path) -> None:
    result, run, requests = _run(tmp_path, [READ], max_steps=4)
    assert (result.outcome, result.steps, len(requests)) == ("failed", 4, 4)
    assert (run.footer.reason.kind, run.footer.reason.step) == ("step_limit", 4)


def test_a_failing_tool_is_an_observation_and_the_loop_goes_on(tmp_path: Path) -> None:
    class Broken(ToolBox):
        def call(self, tool, args):
            return {"stdout": 3} if "cat" in args["command"] else super().call(tool, args)

    executor = Recording([WRITE, READ, FINISH])
    trace = tmp_path / "t.jsonl"
    result = run_baseline(_machine(), "native", executor, Broken.default(cwd=str(tmp_path)),
                          RunOptions(trace=trace), INPUTS, SKILL)
    step = load_run(trace).steps[1]
    assert result.outcome == "success" and step.errors[0].kind == "tool"
    assert "result `stdout` must be a string" in step.tool_result["error"]


def test_scripted_tool_results_answer_the_baselines_calls(tmp_path: Path) -> None:
    from skillc.runtime.executors.scripted import ScriptedExecutor

    # The harness's bash is the kit's: its results include stderr.
    script = {"outputs": {"native": [WRITE, FINISH]}, "tools": {"native": [{"stdout": "", "stderr": "",
                                                                             "exit_code": 0}]}}
    trace = tmp_path / "t.jsonl"
    result = run_baseline(_machine(), "native", ScriptedExecutor(script), ToolBox.default(cwd=str(tmp_path)),
                          RunOptions(trace=trace), INPUTS, SKILL)
    assert result.outcome == "success" and not (tmp_path / "answer.txt").exists()


NO_TOOLS = """machine m {
  input q: str
  var a: str
  start think
  model think {
    reads q
    writes a
    prompt "Answer."
    -> done
  }
  terminal done: success { requires a }
  fallback
}
"""


def test_tools_the_skill_allows_but_the_machine_lacks() -> None:
    assert skill_tools(SKILL) == ("bash",)
    skill = SKILL.replace("  - bash\n", "  - Bash\n  - Read\n  - mcp__jira\n")
    m = skillc.check(NO_TOOLS).machine
    offer = offered_tools(m, "native", skill)
    # A machine without tools still gets the whole kit in both baselines; what the kit lacks is named.
    assert list(offer.tools) == list(KIT) and offer.tools["bash"].result("stderr") is not None
    assert offer.lacking == ("mcp__jira",)
    assert offered_tools(m, "prompt-only", skill).tools == offer.tools
    assert skill_tools("---\nallowed-tools: Bash, Read\n---\n# x") == ("bash", "read")
    assert skill_tools("---\nallowed-tools: Bash(git diff:*) WebFetch(domain:x.org) Shell\n---\n") == ("bash", "fetch")
    assert skill_tools("---\n: [\n---\n") == () and skill_tools("# no front matter") == ()


@pytest.mark.parametrize(("replies", "code"), [([WRITE, READ, FINISH], 0), ([FINISH], 5),
                                               ([WRITE, {**FINISH, "outcome": "partial"}], 4), (["x"], 5)])
def test_exit_status_of_a_baseline_run(tmp_path: Path, replies: list, code: int) -> None:
    from click.testing import CliRunner

    from skillc import cli

    script = tmp_path / "s.json"
    script.write_text(json.dumps({"outputs": {"native": replies}}))
    result = CliRunner().invoke(cli.main, [
        "run", str(MACHINE), "--mode", "native", "--executor", f"scripted:{script}", "--input", "question=q",
        "--input", 'options=["3","4","5","6","7"]', "--workdir", str(tmp_path), "--journal", str(tmp_path / "j")])
    assert result.exit_code == code, result.output
    assert ("error:" in result.output) == (code == 5)


def test_a_baseline_trace_replays_turn_by_turn_without_running_tools(tmp_path: Path) -> None:
    from skillc.runtime.executors.replay import ReplayExecutor

    slow = {"action": "bash", "args": {"command": "sleep 5"}}  # times out: a tool failure, replayed as one
    result = run_baseline(_machine(), "native", Recording(["x", WRITE, slow, READ, FINISH]),
                          ToolBox.default(cwd=str(tmp_path), timeout_s=0.2),
                          RunOptions(trace=tmp_path / "native.jsonl"), INPUTS, SKILL)
    recorded = load_run(tmp_path / "native.jsonl")
    assert recorded.steps[1].errors[0].kind == "tool" and "timed out" in recorded.steps[1].tool_result["error"]
    (tmp_path / "answer.txt").unlink()
    trace = tmp_path / "again.jsonl"
    again = run_baseline(_machine(), "native", ReplayExecutor(tmp_path / "native.jsonl"),
                         ToolBox.default(cwd=str(tmp_path)), RunOptions(trace=trace), INPUTS, SKILL)
    assert (again.outcome, again.steps) == (result.outcome, result.steps) == ("success", 4)
    assert not (tmp_path / "answer.txt").exists()  # the recorded results answered; no tool ran
    replayed = load_run(trace)
    assert [(s.tool_call, s.tool_result) for s in replayed.steps] == [(s.tool_call, s.tool_result)
                                                                      for s in recorded.steps]


def test_a_baseline_cannot_be_resumed(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc import cli

    result = CliRunner().invoke(cli.main, ["run", "--mode", "prompt-only", "--resume", "r1", "--journal",
                                           str(tmp_path / "j")])
    assert result.exit_code == 2 and "a prompt-only run cannot be resumed" in result.output


class FakeClock:
    """A monotonic clock that a sleep advances at once (on time.monotonic's scale, as the loop's clock must be)."""

    def __init__(self) -> None:
        import time

        self.start = time.monotonic()
        self.slept: list[float] = []

    def now(self) -> float:
        return self.start + sum(self.slept)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


class Throttled(Recording):
    """Fails with the given Retry-After values (None: no header) before it replies like Recording."""

    def __init__(self, waits: list, replies: list) -> None:
        super().__init__(replies)
        self.waits = list(waits)

    def complete(self, request) -> Response:
        if self.waits:
            self.requests.append(request)
            raise ExecutorError("429 too many requests", retry_after=self.waits.pop(0))
        return super().complete(request)


def _throttled(tmp_path: Path, waits: list, **options):
    """A native run against a throttled executor on a fake clock: the result, the trace, the calls, the sleeps."""
    from skillc.runtime.baselines import Clock

    executor, clock = Throttled(waits, [WRITE, READ, FINISH]), FakeClock()
    trace = tmp_path / "native.jsonl"
    result = run_baseline(_machine(), "native", executor, ToolBox.default(cwd=str(tmp_path)),
                          RunOptions(trace=trace, **{"max_steps": 20, **options}), INPUTS, SKILL,
                          clock=Clock(clock.now, clock.sleep))
    return result, load_run(trace), len(executor.requests), clock.slept


def test_a_retry_after_is_waited_for_before_the_next_attempt(tmp_path: Path) -> None:
    result, run, calls, slept = _throttled(tmp_path, [2.5, 1.0])
    assert result.outcome == "success" and slept == [2.5, 1.0] and calls == 5  # 2 refused + 3 turns
    first = run.steps[0]
    assert first.retries == 2 and [e.kind for e in first.errors] == ["executor", "executor"]


def test_no_retry_after_retries_at_once(tmp_path: Path) -> None:
    result, _, calls, slept = _throttled(tmp_path, [None])
    assert result.outcome == "success" and slept == [] and calls == 4


def test_a_retry_after_above_the_cap_ends_the_step(tmp_path: Path) -> None:
    result, run, calls, slept = _throttled(tmp_path, [120.0], max_retry_wait_s=60.0)
    assert (result.outcome, calls, slept) == ("failed", 1, [])
    assert run.footer.reason is not None and run.footer.reason.kind == "executor"
    assert "429 too many requests" in run.footer.reason.message


def test_a_retry_after_past_the_step_deadline_ends_the_step(tmp_path: Path) -> None:
    result, _, calls, slept = _throttled(tmp_path, [6.0, 6.0], step_deadline_s=10.0)
    assert (result.outcome, calls, slept) == ("failed", 2, [6.0])  # 6 fits in 10 s; 6 + 6 does not
