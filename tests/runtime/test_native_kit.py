"""The fair native harness: native and prompt-only runs get an agent harness's tool kit, through the same tool box."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import skillc
from skillc import api
from skillc.ir.toolkit import KIT
from skillc.runtime import RunOptions
from skillc.runtime.baselines import KIT_HELP, harness_machine, harness_tools, offered_tools, run_baseline
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.interaction import AskUser
from skillc.runtime.record import load_run
from skillc.runtime.session import run_tools

NO_TOOLS = """machine plain {
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

OWN_TOOL = """machine lookup {
  tool lookup(key: str) -> (value: str)
  input q: str
  var v: str
  start find
  tool find {
    reads q
    call lookup(key: q)
    writes v = value
    -> done
  }
  terminal done: success { requires v }
  fallback
}
"""

ALLOWED = """machine narrow {
  use tools std(read, bash)
  allow "Read", "Bash(git status:*)"
  input q: str
  var out: str
  start look
  tool look {
    call bash(command: "git status --short")
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""

SKILL = "---\nname: plain\n---\n# Plain\n\nWrite the answer to answer.txt.\n"


def _machine(text: str):
    result = skillc.check(text, path="m.skm")
    assert result.machine is not None and not result.failed, [d.message for d in result.diagnostics]
    return result.machine


def _native(tmp_path: Path, text: str, replies: list, *, mode: str = "native", user: AskUser | None = None,
            skill_dir: Path | None = None):
    m = _machine(text)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    tools = run_tools(m, mode, workdir=work, skill_dir=skill_dir, ask_user=user)
    options = RunOptions(trace=tmp_path / "t.jsonl", max_steps=10, workdir=str(work),
                         skill_dir=None if skill_dir is None else str(skill_dir), user=user)
    executor = ScriptedExecutor({"outputs": {mode: replies}})
    requests: list = []
    original = executor.complete
    executor.complete = lambda request: requests.append(request) or original(request)  # type: ignore[method-assign]
    result = run_baseline(m, mode, executor, tools, options, {"q": "2+2?"}, SKILL)
    return result, load_run(tmp_path / "t.jsonl"), requests


def test_the_harness_offers_the_whole_kit_and_the_machines_own_tools() -> None:
    assert list(harness_tools(_machine(NO_TOOLS))) == list(KIT)  # a machine without tools: the whole kit
    own = harness_tools(_machine(OWN_TOOL))
    assert list(own) == [*KIT, "lookup"] and own["bash"] == KIT["bash"]
    # A machine with an `allow` list: only the kit tools it names (its own tools stay).
    assert list(harness_tools(_machine(ALLOWED))) == ["read", "bash"]
    assert harness_machine(_machine(NO_TOOLS)).tools == harness_tools(_machine(NO_TOOLS))
    for mode in ("native", "prompt-only"):
        assert offered_tools(_machine(NO_TOOLS), mode, SKILL).tools == harness_tools(_machine(NO_TOOLS))


def test_the_system_text_describes_every_tool_and_the_places(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    skill.mkdir()
    finish = {"action": "finish", "outcome": "failed", "evidence": {}}
    _, _, requests = _native(tmp_path, NO_TOOLS, [finish], skill_dir=skill)
    system = requests[0].messages[0]["content"]
    for name, help_text in KIT_HELP.items():
        assert f"- {name}(" in system and help_text in system
    assert "- ask_user(question: str, options: list[str]?) -> answer: str" in system
    assert f"Work folder: {(tmp_path / 'work').resolve()}" in system
    assert f"Skill folder: {skill.resolve()} (read-only" in system


def test_native_calls_go_through_the_same_confined_tool_box(tmp_path: Path) -> None:
    write = {"action": "write", "args": {"path": "answer.txt", "content": "4"}}
    escape = {"action": "read", "args": {"path": "../outside.txt"}}
    (tmp_path / "outside.txt").write_text("secret")
    finish = {"action": "finish", "outcome": "success", "evidence": {"a": "4"}}
    result, run, requests = _native(tmp_path, NO_TOOLS, [write, escape, finish])
    assert result.outcome == "success" and (tmp_path / "work" / "answer.txt").read_text() == "4"
    observation = json.loads(requests[2].messages[-1]["content"].removeprefix("Observation:\n"))
    assert "outside the places this run allows" in observation["error"] and "secret" not in json.dumps(observation)
    assert [s.tool_call.tool for s in run.steps if s.tool_call] == ["write", "read"]
    assert run.steps[0].tool_result["bytes"] == 1


def test_the_allow_list_bounds_what_the_harness_offers_and_runs(tmp_path: Path) -> None:
    outside = {"action": "bash", "args": {"command": "rm -rf ."}}
    unoffered = {"action": "write", "args": {"path": "x", "content": "y"}}
    finish = {"action": "finish", "outcome": "failed", "evidence": {}}
    _result, run, _ = _native(tmp_path, ALLOWED, [unoffered, outside, finish])
    assert "no tool `write`" in run.steps[0].errors[0].message  # not offered: a protocol error, retried
    refused = next(s for s in run.steps if s.tool_call and s.tool_call.tool == "bash")
    assert "outside" in refused.tool_result["error"] and "allowed" in refused.tool_result["error"]


def test_a_native_question_without_an_answer_ends_the_run_as_needs_a_user(tmp_path: Path) -> None:
    ask = {"action": "ask_user", "args": {"question": "Which file?"}}
    finish = {"action": "finish", "outcome": "success", "evidence": {"a": "x"}}
    result, _run, _ = _native(tmp_path, NO_TOOLS, [ask, finish], user=AskUser.nobody())
    assert (result.outcome, result.reason.kind, result.steps) == ("failed", "needs_user", 1)
    assert result.error.startswith("needs a user: the skill asks 'Which file?'")


def test_a_native_question_gets_the_prepared_answer(tmp_path: Path) -> None:
    ask = {"action": "ask_user", "args": {"question": "Which file?", "options": ["a.txt", "b.txt"]}}
    finish = {"action": "finish", "outcome": "success", "evidence": {"a": "b.txt"}}
    result, run, requests = _native(tmp_path, NO_TOOLS, [ask, finish], user=AskUser.scripted(["b.txt"]))
    assert result.outcome == "success" and run.steps[0].answered_by == "prepared"
    assert requests[1].messages[-1]["content"] == 'Observation:\n{"answer": "b.txt"}'


@pytest.mark.parametrize("mode", ["native", "prompt-only"])
def test_skillc_run_gives_both_baselines_the_kit(tmp_path: Path, monkeypatch, mode: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "plain.skm").write_text(NO_TOOLS.replace("machine plain {", 'machine plain {\n  source "SKILL.md"'))
    (tmp_path / "SKILL.md").write_text(SKILL)
    replies = [{"action": "glob", "args": {"pattern": "*.md"}}, {"action": "finish", "outcome": "success",
                                                                  "evidence": {"a": "4"}}]
    (tmp_path / "script.json").write_text(json.dumps({"outputs": {mode: replies}}))
    report = api.run(api.RunConfig(machine="plain.skm", executor="scripted:script.json", mode=mode,
                                   inputs=("q=2+2?",), trace="t.jsonl"))
    assert report.result is not None and report.result.outcome == "success", report.error
    assert load_run(tmp_path / "t.jsonl").steps[0].tool_result["files"] == ["SKILL.md"]
