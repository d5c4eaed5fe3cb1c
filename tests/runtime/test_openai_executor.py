"""The `openai:` executor over real HTTP against a local fake server: request shapes and fault injection."""

from __future__ import annotations

import json

import pytest

from skillc.runtime.executors.openai_exec import OpenAIExecutor
from tests.runtime.fake_openai import FakeOpenAI
from tests.runtime.helpers import run

JUDGE = """machine judged {
  input draft: str
  var verdict: enum { accept, reject }

  start decide

  judge decide {
    reads draft
    writes verdict
    prompt "Accept or reject the draft."
    when verdict == reject -> rejected
    -> accepted
  }

  terminal accepted: success { requires verdict }
  terminal rejected: partial { requires verdict }
  fallback
}
"""


def _run(behaviours, strategy="json_object", retries=2, timeout_s=10.0):
    with FakeOpenAI(behaviours) as server:
        executor = OpenAIExecutor("fake-model", base_url=server.url, strategy=strategy, timeout_s=timeout_s)
        result = run(JUDGE, {}, {"draft": "hello"}, executor=executor, retries=retries)
        executor.close()
        return result, server.requests


def test_structured_output_request_shapes() -> None:
    ok = {"content": json.dumps({"verdict": "accept"})}
    result, reqs = _run([ok], strategy="json_object")
    assert result.outcome == "success"
    fmt = reqs[0]["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["properties"]["verdict"]["enum"] == ["accept", "reject"]
    _, reqs = _run([ok], strategy="json_schema")
    js = reqs[0]["response_format"]
    assert js["type"] == "json_schema" and js["json_schema"]["strict"] is True
    assert js["json_schema"]["name"] == "decide_output"
    _, reqs = _run([ok], strategy="vllm")
    assert reqs[0]["structured_outputs"]["json"]["required"] == ["verdict"] and "response_format" not in reqs[0]
    _, reqs = _run([ok], strategy="prompt")
    assert "response_format" not in reqs[0] and "structured_outputs" not in reqs[0]
    assert reqs[0]["model"] == "fake-model" and reqs[0]["messages"][0]["role"] == "system"


@pytest.mark.parametrize("bad", [
    {"content": "{not json"},                          # malformed JSON
    {"content": json.dumps({"verdict": 3})},           # wrong type
    {"content": json.dumps({"verdict": "maybe"})},     # label outside the set
    {"content": json.dumps({"verdict": "accept", "x": 1})},  # extra key
    {"status": 429},
    {"status": 500},
    {"body": "<html>bad gateway</html>"},              # a body that is not JSON
], ids=["malformed", "wrong-type", "bad-label", "extra-key", "429", "500", "broken-body"])
def test_faults_are_retried_and_then_go_to_the_fallback(bad) -> None:
    good = {"content": json.dumps({"verdict": "reject"})}
    result, reqs = _run([bad, good])
    assert (result.outcome, result.terminal) == ("partial", "rejected")
    assert len(reqs) == 2
    if "content" in bad:
        assert reqs[1]["messages"][-1]["content"].startswith("Your reply was not valid")
    result, reqs = _run([bad, bad, bad], retries=2)
    assert result.terminal == "fallback" and len(reqs) == 3
    assert result.evidence == {}


def test_timeouts_go_to_the_fallback() -> None:
    slow = {"delay": 1.5, "content": json.dumps({"verdict": "accept"})}
    result, _reqs = _run([slow, slow], retries=1, timeout_s=0.5)
    assert result.terminal == "fallback" and "timed out" in result.error


def test_usage_is_reported() -> None:
    from skillc.runtime.executors.base import Response  # noqa: F401
    with FakeOpenAI([{"content": json.dumps({"verdict": "accept"})}]) as server:
        ex = OpenAIExecutor("fake-model", base_url=server.url)
        from skillc.runtime.prompts import build_request
        from tests.runtime.helpers import checked

        m = checked(JUDGE)
        resp = ex.complete(build_request(m, m.states["decide"], {"draft": "x"}))
        assert (resp.model, resp.input_tokens, resp.output_tokens) == ("fake-model", 17, 5)
        assert ex.strategy == "json_object"


def test_a_reply_stopped_at_the_budget_is_marked_cut() -> None:
    from skillc.runtime.prompts import build_request
    from tests.runtime.helpers import checked

    m = checked(JUDGE)
    request = build_request(m, m.states["decide"], {"draft": "x"})
    with FakeOpenAI([{"content": '{"verdict": "acc', "finish_reason": "length"},
                     {"content": '{"verdict": "accept"}'}]) as server:
        ex = OpenAIExecutor("fake-model", base_url=server.url)
        assert ex.complete(request).cut and not ex.complete(request).cut
    pytest.importorskip("anthropic")
    from skillc.runtime.executors.anthropic_exec import AnthropicExecutor

    with FakeOpenAI([{"content": '{"verdict": "accept"}', "stop_reason": "max_tokens"},
                     {"content": '{"verdict": "accept"}'}]) as server:
        ex = AnthropicExecutor("fake-claude", base_url=server.root)
        assert ex.complete(request).cut and not ex.complete(request).cut


def test_a_run_tells_the_model_its_reply_was_cut_at_the_budget() -> None:
    with FakeOpenAI([{"content": '{"verdict": "acc', "finish_reason": "length"},
                     {"content": '{"verdict": "accept"}'}]) as server:
        result = run(JUDGE, {}, {"draft": "x"}, executor=OpenAIExecutor("fake-model", base_url=server.url), retries=1)
        assert result.terminal == "accepted"
        retry = server.requests[1]["messages"][-1]["content"]
        assert "cut off at the reply budget" in retry and "not JSON" in retry


def test_anthropic_executor_uses_a_forced_tool_call() -> None:
    pytest.importorskip("anthropic")
    from skillc.runtime.executors.anthropic_exec import AnthropicExecutor

    with FakeOpenAI([{"content": json.dumps({"verdict": "reject"})}, {"status": 529}]) as server:
        executor = AnthropicExecutor("fake-claude", base_url=server.root)
        result = run(JUDGE, {}, {"draft": "x"}, executor=executor, retries=0)
        assert (result.terminal, result.evidence) == ("rejected", {"verdict": "reject"})
        sent = server.requests[0]
        assert sent["tool_choice"] == {"type": "tool", "name": "answer"}
        assert sent["tools"][0]["input_schema"]["properties"]["verdict"]["enum"] == ["accept", "reject"]
        assert sent["system"].startswith("You carry out one step")
        failed = run(JUDGE, {}, {"draft": "x"}, executor=executor, retries=0)
        assert failed.terminal == "fallback" and "HTTP 529" in failed.error


REPORTER = """machine report {
  var text: str
  start write_it
  model write_it {
    writes text
    prompt "Write the report."
    -> done
  }
  terminal done: partial { requires text }
  fallback
}
"""


def test_a_run_gives_each_reply_room_for_a_report(tmp_path) -> None:
    """`skillc run` asks for 8,192 tokens a reply (a state that writes a whole report needs thousands; 1,024 cut
    real reports short), and `--max-tokens` sets it; a budget below one token is a usage error, not a request."""
    from skillc import api

    machine = tmp_path / "m.skm"
    machine.write_text(REPORTER, encoding="utf-8")
    for given, sent in ((None, 8192), (300, 300)):
        with FakeOpenAI([{"content": '{"text": "ok"}'}]) as fake:
            extra = {} if given is None else {"max_tokens": given}
            report = api.run(api.RunConfig(machine=str(machine), executor="openai:m", base_url=fake.url,
                                           journal=None, workdir=str(tmp_path), **extra))
        assert report.result is not None and report.result.outcome == "partial"
        assert fake.requests[0]["max_tokens"] == sent
    bad = api.run(api.RunConfig(machine=str(machine), executor="openai:m", base_url="http://127.0.0.1:9/v1",
                                journal=None, workdir=str(tmp_path), max_tokens=0))
    assert bad.result is None and bad.usage is not None and "--max-tokens" in str(bad.usage)
