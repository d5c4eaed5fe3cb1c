"""The LLM compiler over real HTTP (the `openai` SDK against a local OpenAI-compatible server) and the local model.

The recorded replies exercise the redraft loop: a first draft the checker
rejects is fixed from its diagnostics; a rule with an invented quotation is
dropped; a model that never converges ends in SKM310 with nothing written.
"""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import skillc
from skillc.cli import main
from skillc.frontends.markdown import build
from skillc.frontends.markdown.schema import MACHINE_SCHEMA, to_json, to_skm
from tests.conftest import codes
from tests.runtime.fake_openai import FakeOpenAI

SKILL = """# Answer a question

1. Read the question and write a short answer.
2. Write the answer to answer.txt.

Always write the answer to answer.txt.
"""


@pytest.fixture()
def skill(tmp_path: Path) -> Path:
    p = tmp_path / "SKILL.md"
    p.write_text(SKILL, encoding="utf-8")
    return p


def structural_json(skill: Path) -> dict:
    result = build(skill, output=skill.with_name("answer.skm"))
    assert result.ok, codes(result.diagnostics)
    return to_json(skillc.parse(result.text).module)


def rules_reply(*extra: dict) -> dict:
    return {"content": json.dumps({"rules": [
        {"kind": "required", "ops": ["write_answer_answer"], "quote": "Always write the answer to answer.txt."},
        *extra]})}


def broken(draft: dict) -> dict:
    """The first state reads what only the second one writes: SKM210."""
    bad = copy.deepcopy(draft)
    second = bad["states"][1]["writes"][0]["var"]
    bad["states"][0]["reads"] = bad["states"][0].get("reads", []) + [second]
    return bad


def reply(draft: dict) -> dict:
    return {"content": json.dumps(draft)}


def test_an_invalid_first_draft_is_fixed_from_the_diagnostics(skill: Path) -> None:
    good = structural_json(skill)
    hallucinated = {"kind": "forbid", "ops": ["read_question_write"], "quote": "Never answer in French."}
    with FakeOpenAI([rules_reply(hallucinated), reply(broken(good)), reply(good)]) as server:
        result = build(skill, output=skill.with_name("answer.skm"), model="openai:fake", base_url=server.url)
        requests = server.requests
    assert result.ok, codes(result.diagnostics)
    assert [r.ok for r in result.rounds] == [False, True]
    assert any("SKM210" in e for e in result.rounds[0].errors)
    # the second draft request carried the checker's diagnostics of the first draft
    second = requests[2]["messages"][-1]["content"]
    assert "SKM210" in second and "rejected the previous draft" in second
    # the draft was requested with the published schema (llama.cpp-style json_object for a local base URL)
    assert requests[1]["response_format"]["schema"] == MACHINE_SCHEMA
    # the invented quotation was dropped, the real one kept
    assert "SKM312" in codes(result.diagnostics)
    assert [r.quote for r in result.machine.rules] == ["Always write the answer to answer.txt."]


def test_a_rule_outside_the_interface_is_dropped(skill: Path) -> None:
    good = structural_json(skill)
    outside = {"kind": "required", "ops": ["send_email"], "quote": "Write the answer to answer.txt."}
    with FakeOpenAI([rules_reply(outside), reply(good)]) as server:
        result = build(skill, output=skill.with_name("answer.skm"), model="openai:fake", base_url=server.url)
    assert result.ok
    assert "SKM313" in codes(result.diagnostics)
    assert all("send_email" not in r.ops for r in result.machine.rules)


def test_a_model_that_never_converges_fails_and_writes_nothing(skill: Path) -> None:
    bad = broken(structural_json(skill))
    out = skill.with_name("answer.skm")
    with FakeOpenAI([rules_reply()] + [reply(bad)] * 2) as server:
        r = CliRunner().invoke(main, ["build", str(skill), "-o", str(out), "--model", "openai:fake",
                                      "--base-url", server.url, "--rounds", "2"])
    assert r.exit_code == 1, r.output
    assert "SKM310" in r.output and "no draft checked clean in 2 rounds" in r.output
    assert not out.exists()


def test_replies_that_are_not_machines_cost_a_round(skill: Path) -> None:
    good = structural_json(skill)
    not_json = {"content": "Sure! Here is the machine: {"}
    no_states = {"content": json.dumps({"name": "m", "inputs": [], "vars": [], "start": "a", "terminals": [],
                                        "rules": []})}
    with FakeOpenAI([rules_reply(), not_json, no_states, reply(good)]) as server:
        result = build(skill, output=skill.with_name("answer.skm"), model="openai:fake", base_url=server.url)
    assert result.ok
    messages = [d.message for d in result.diagnostics if d.code == "SKM311"]
    assert any("not JSON" in m for m in messages) and any("has no `states`" in m for m in messages)


def test_a_failing_backend_is_a_diagnostic(skill: Path) -> None:
    with FakeOpenAI([{"status": 500}]) as server:
        result = build(skill, output=skill.with_name("answer.skm"), model="openai:fake", base_url=server.url)
    assert result.text is None
    assert "SKM314" in codes(result.diagnostics)


def test_unknown_model_spec_is_a_diagnostic(skill: Path) -> None:
    result = build(skill, model="gpt-4")
    assert result.text is None and "SKM314" in codes(result.diagnostics)


def test_the_build_executor_is_the_runtime_one_with_budgets_for_whole_machines() -> None:
    from skillc.frontends.markdown.llm import make_build_executor
    from skillc.runtime.executors import ExecutorError
    from skillc.runtime.executors.openai_exec import OpenAIExecutor

    executor = make_build_executor("openai:fake", base_url="http://127.0.0.1:9")
    try:
        assert isinstance(executor, OpenAIExecutor)
        assert executor.max_tokens == 8192 and executor.timeout_s == 600.0
    finally:
        executor.close()
    for spec in ("scripted:replies.json", "replay:trace.jsonl", "openai:", "gpt-4"):
        with pytest.raises(ExecutorError, match="unknown model"):
            make_build_executor(spec)


def test_schema_round_trip_of_every_golden() -> None:
    for golden in sorted((Path(__file__).parent / "skills").glob("*.skm")):
        module = skillc.parse(golden).module
        again = skillc.parse(to_skm(to_json(module), golden.with_suffix(".md").name)).module
        assert again is not None
        assert skillc.format_text(to_skm(to_json(again), golden.with_suffix(".md").name))[0] == \
            skillc.format_text(to_skm(to_json(module), golden.with_suffix(".md").name))[0]


def test_grammar_json_schema_export() -> None:
    r = CliRunner().invoke(main, ["grammar", "--format", "json-schema"])
    assert r.exit_code == 0
    assert json.loads(r.output) == MACHINE_SCHEMA


# ---------------------------------------------------------------- the real local model

_local = pytest.mark.skipif(
    not os.environ.get("SKILLC_REQUIRE_LOCAL") and not __import__("importlib").util.find_spec("llama_cpp"),
    reason="needs the `local` extra (CI sets SKILLC_REQUIRE_LOCAL=1)")


@_local
def test_local_model_drafts_a_simple_skill(skill: Path) -> None:
    """Plumbing only: the 270M model's replies go through schema, printer and checker; the result is either a
    checked machine or a clear failure, never a bad file."""
    from skillc.runtime.executors.local import LocalExecutor

    out = skill.with_name("answer.skm")
    # small budget: constrained decoding is slow on 2 cores; the timeout is the one `skillc build` gives its model
    executor = LocalExecutor(n_ctx=4096, max_tokens=160, timeout_s=600.0)
    try:
        result = build(skill, output=out, executor=executor, rounds=1)
    finally:
        executor.close()
    assert result.rounds, codes(result.diagnostics)  # the model was asked for a draft and the checker saw it
    if result.ok:
        assert skillc.check(result.text, path=str(out), skill=skill).machine is not None
    else:
        assert result.text is None
        assert {"SKM310", "SKM311"} & set(codes(result.diagnostics))
