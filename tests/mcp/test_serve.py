"""`skillc serve --mcp` driven by the MCP SDK's client over stdio (a real `python -m skillc serve` subprocess).

Both protocol eras are exercised where they differ: the 2025-11-25 handshake (elicitation and sampling sent
mid-call) and 2026-07-28 (`InputRequiredResult` and the client's retry).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from skillc.runtime.record import load_run
from tests.mcp.conftest import ANSWER, DEPLOY, ERAS, SLOW, alive, stdio, structured

pytestmark = pytest.mark.timeout(120)


def status(root: Path, run_id: str) -> str:
    db = sqlite3.connect(root / "runs.sqlite")
    try:
        return db.execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0]
    finally:
        db.close()


async def pids_of(root: Path, timeout: float = 30.0) -> tuple[Path, list[int]]:
    """The work folder of the one `slow` call under `root` and the processes its command recorded."""
    with anyio.fail_after(timeout):
        while True:
            for work in root.glob("calls/slow-*/work"):
                files = [work / "pid.txt", work / "child.txt"]
                texts = [f.read_text().strip() if f.exists() else "" for f in files]
                if all(t.isdigit() for t in texts):
                    return work, [int(t) for t in texts]
            await anyio.sleep(0.05)


# ---------------------------------------------------------------- listing and calling


@pytest.mark.parametrize("era", ERAS)
def test_every_machine_is_a_tool_with_the_schema_of_its_inputs(serve_root: Path, era: str) -> None:
    async def main() -> list[types.Tool]:
        async with Client(stdio(ANSWER, DEPLOY, root=serve_root), mode=era) as client:
            return (await client.list_tools()).tools

    tools = {t.name: t for t in anyio.run(main)}
    assert set(tools) == {"answer_file", "deploy", "skillc_resume"}
    answer = tools["answer_file"]
    assert answer.description == "Answer a question and deliver the answer in answer.txt."
    schema = answer.input_schema
    assert schema["required"] == ["question"] and schema["additionalProperties"] is False
    assert schema["properties"]["question"]["type"] == "string"
    assert schema["properties"]["style"] == {"type": "string", "enum": ["short", "long"], "default": "short",
                                             "description": "input `style`: enum { short, long }"}
    assert tools["deploy"].input_schema["properties"] == {}
    assert tools["skillc_resume"].input_schema["required"] == ["token", "answer"]
    assert answer.output_schema is not None and answer.output_schema["required"] == ["status", "machine", "workdir"]


def test_a_call_runs_its_machine_in_a_fresh_work_folder_and_reports_the_file_it_delivered(serve_root: Path) -> None:
    async def main() -> list[Any]:
        async with Client(stdio(ANSWER, root=serve_root), mode="legacy") as client:
            return [await client.call_tool("answer_file", {"question": "2+2?"}) for _ in range(2)]

    first, second = anyio.run(main)
    out = structured(first)
    assert out["status"] == "finished" and out["outcome"] == "success" and out["terminal"] == "done"
    assert out["evidence"] == {"answer": "4", "status": 0, 'exists("answer.txt")': True}
    work = Path(out["workdir"])
    assert work.is_relative_to(serve_root) and (work / "answer.txt").read_text() == "4"
    assert out["files"] == [{"path": "answer.txt", "bytes": 1, "sha256": hashlib.sha256(b"4").hexdigest()}]
    run = load_run(out["trace"])
    assert run.footer is not None and run.footer.outcome == "success" and [s.state for s in run.steps] == [
        "think", "write"]
    assert status(serve_root, out["run_id"]) == "done"
    assert "ended in `done` (success)" in first.content[0].text and "answer.txt" in first.content[0].text
    assert structured(second)["workdir"] != out["workdir"]  # every call its own folder


def test_bad_arguments_are_a_tool_error_and_the_server_keeps_serving(serve_root: Path) -> None:
    async def main() -> list[Any]:
        async with Client(stdio(ANSWER, root=serve_root), mode="legacy") as client:
            return [await client.call_tool("answer_file", {"question": 5}),
                    await client.call_tool("answer_file", {"question": "?", "extra": 1}),
                    await client.call_tool("no_such_machine", {}),
                    await client.call_tool("answer_file", {"question": "2+2?"})]

    wrong_type, unknown_input, unknown_tool, fine = anyio.run(main)
    assert wrong_type.is_error and "SKM501" in wrong_type.content[0].text and "question" in wrong_type.content[0].text
    assert unknown_input.is_error and "`extra` is not an input" in unknown_input.content[0].text
    assert unknown_tool.is_error and "no tool `no_such_machine`" in unknown_tool.content[0].text
    assert structured(fine)["outcome"] == "success"


# ---------------------------------------------------------------- cancellation and clients that leave


@pytest.mark.parametrize("era", ERAS)
def test_a_cancelled_call_stops_its_run_and_leaves_no_process(serve_root: Path, era: str) -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with Client(stdio(SLOW, root=serve_root), mode=era) as client:
            scope = anyio.CancelScope()

            async def call() -> None:
                with scope:
                    seen["result"] = await client.call_tool("slow", {"seconds": 120})

            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call)
                seen["work"], seen["pids"] = await pids_of(serve_root)
                started = time.monotonic()
                scope.cancel()
            # The server stops the run while the client stays connected: bounded, processes gone, journal marked.
            trace = seen["work"].parent / "trace.jsonl"
            run_id = load_run(trace).header.run_id
            with anyio.fail_after(15):
                while status(serve_root, run_id) != "interrupted" or any(alive(p) for p in seen["pids"]):
                    await anyio.sleep(0.05)
            seen["stopped_s"] = time.monotonic() - started
            seen["after"] = await client.call_tool("slow", {"seconds": 0})  # still serving

    anyio.run(main)
    assert "result" not in seen
    assert seen["stopped_s"] < 10
    run = load_run(seen["work"].parent / "trace.jsonl")  # the trace is whole: a header, no footer (never finished)
    assert run.footer is None and run.steps == ()
    assert structured(seen["after"])["outcome"] == "success"


def test_a_client_that_leaves_mid_call_stops_the_run_and_the_server(serve_root: Path) -> None:
    """A client killed without cancelling (its end of stdin closes): the server stops the run and exits."""
    import subprocess

    from tests.mcp.conftest import server_env

    params = stdio(SLOW, root=serve_root)
    proc = subprocess.Popen([params.command, *params.args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=params.env, cwd=params.cwd)
    assert proc.stdin is not None
    try:
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "t", "version": "0"}}},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "slow", "arguments": {"seconds": 120}}}):
            proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()
        work, pids = anyio.run(pids_of, serve_root)
        proc.stdin.close()
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(p) for p in pids)
    run = load_run(work.parent / "trace.jsonl")
    assert status(serve_root, run.header.run_id or "") == "interrupted"
    assert server_env()["PYTHONPATH"]


# ---------------------------------------------------------------- runs that wait: tokens, elicitation


def test_a_waiting_run_resumes_once_with_its_token(serve_root: Path) -> None:
    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with Client(stdio(DEPLOY, root=serve_root), mode="legacy") as client:  # no elicitation: it waits
            out["wait"] = await client.call_tool("deploy", {})
            token = structured(out["wait"])["resume_token"]
            out["forged"] = await client.call_tool("skillc_resume", {"token": token[:-2] + "xx", "answer": "prod"})
            out["off_menu"] = await client.call_tool("skillc_resume", {"token": token, "answer": "qa"})
            out["done"] = await client.call_tool("skillc_resume", {"token": token, "answer": "prod"})
            out["again"] = await client.call_tool("skillc_resume", {"token": token, "answer": "staging"})
        async with Client(stdio(DEPLOY, root=serve_root), mode="legacy") as client:  # another server, same root
            out["restarted"] = await client.call_tool("skillc_resume", {"token": token, "answer": "prod"})
        return out

    out = anyio.run(main)
    wait = structured(out["wait"])
    assert wait["status"] == "waiting" and wait["question"] == "Deploy where?"
    assert wait["options"] == ["staging", "prod"] and "skillc_resume" in out["wait"].content[0].text
    assert status(serve_root, wait["run_id"]) in ("done",)
    for refused in ("forged", "off_menu", "again", "restarted"):
        assert out[refused].is_error and "SKM893" in out[refused].content[0].text, refused
    assert "not one of the options" in out["off_menu"].content[0].text
    done = structured(out["done"])
    assert done["outcome"] == "success" and done["run_id"] == wait["run_id"] and done["workdir"] == wait["workdir"]
    assert (Path(done["workdir"]) / "target.txt").read_text() == "prod"
    assert done["files"][0]["path"] == "target.txt"
    run = load_run(done["trace"])
    assert [s.state for s in run.steps] == ["pick", "record"] and run.steps[0].answered_by == "user"
    assert len(run.headers) == 2 and run.headers[1].resumed_at_step == 0


def test_a_token_survives_a_restart_of_the_server(serve_root: Path) -> None:
    async def main() -> tuple[Any, Any]:
        async with Client(stdio(DEPLOY, root=serve_root), mode="legacy") as client:
            waiting = await client.call_tool("deploy", {})
        async with Client(stdio(DEPLOY, root=serve_root), mode="legacy") as client:
            return waiting, await client.call_tool("skillc_resume", {"token": structured(waiting)["resume_token"],
                                                                     "answer": "staging"})

    _waiting, done = anyio.run(main)
    assert structured(done)["evidence"]["target"] == "staging"


@pytest.mark.parametrize("era", ERAS)
def test_elicitation_answers_the_question_inside_the_call(serve_root: Path, era: str) -> None:
    asked: list[types.ElicitRequestParams] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"answer": "staging"})

    async def main() -> Any:
        async with Client(stdio(DEPLOY, root=serve_root), mode=era, elicitation_callback=elicit) as client:
            return await client.call_tool("deploy", {})

    out = structured(anyio.run(main))
    assert out["outcome"] == "success" and out["evidence"]["target"] == "staging"
    assert len(asked) == 1 and asked[0].message == "Deploy where?"
    assert asked[0].requested_schema["properties"]["answer"]["enum"] == ["staging", "prod"]  # the enum is the menu
    run = load_run(out["trace"])
    assert run.steps[0].answered_by == "user" and run.steps[0].tool_result == {"answer": "staging"}


@pytest.mark.parametrize("era", ERAS)
def test_a_declined_elicitation_leaves_the_run_waiting_for_its_token(serve_root: Path, era: str) -> None:
    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async def main() -> tuple[Any, Any]:
        async with Client(stdio(DEPLOY, root=serve_root), mode=era, elicitation_callback=decline) as client:
            waiting = await client.call_tool("deploy", {})
            token = structured(waiting)["resume_token"]
            return waiting, await client.call_tool("skillc_resume", {"token": token, "answer": "prod"})

    waiting, done = anyio.run(main)
    assert structured(waiting)["status"] == "waiting"
    assert structured(done)["evidence"]["target"] == "prod"


# ---------------------------------------------------------------- sampling: the client's model answers


@pytest.mark.parametrize("era", ERAS)
def test_sampling_answers_model_states_validated_and_retried(serve_root: Path, era: str) -> None:
    asked: list[types.CreateMessageRequestParams] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.append(params)
        text = "not json" if len(asked) == 1 else '{"answer": "four"}'
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text),
                                         model="client-model")

    async def main() -> Any:
        async with Client(stdio(ANSWER, executor="sampling", root=serve_root), mode=era,
                          sampling_callback=sample) as client:
            return await client.call_tool("answer_file", {"question": "2+2?"})

    out = structured(anyio.run(main))
    assert out["outcome"] == "success" and (Path(out["workdir"]) / "answer.txt").read_text() == "four"
    assert len(asked) == 2
    first = asked[0]
    assert (first.system_prompt is not None
            and '"answer"' in first.system_prompt and "JSON Schema" in first.system_prompt)
    assert "Answer the question in one short line." in first.messages[0].content.text  # the state's prompt
    assert '"question": "2+2?"' in first.messages[0].content.text  # and its reads, nothing else
    retry = asked[1].messages
    assert [m.role for m in retry] == ["user", "assistant", "user"] and "not valid" in retry[2].content.text
    step = load_run(out["trace"]).steps[0]
    assert step.model == "client-model" and step.retries == 1 and step.errors[0].kind == "invalid_output"


def test_sampling_needs_a_client_that_offers_it(serve_root: Path) -> None:
    async def main() -> Any:
        async with Client(stdio(ANSWER, executor="sampling", root=serve_root), mode="legacy") as client:
            return await client.call_tool("answer_file", {"question": "2+2?"})

    out = anyio.run(main)
    assert out.is_error and "SKM892" in out.content[0].text
    assert not list(serve_root.glob("calls/*"))  # nothing ran


def test_a_machine_that_names_workdir_may_continue_in_an_earlier_calls_folder(serve_root: Path,
                                                                               tmp_path: Path) -> None:
    from tests.mcp.conftest import FIXTURES

    journal = str(FIXTURES / "journal.skm")

    async def main() -> list[Any]:
        async with Client(stdio(journal, root=serve_root), mode="legacy") as client:
            schema = {t.name: t for t in (await client.list_tools()).tools}["journal"].input_schema
            assert "workdir" in schema["properties"] and schema["required"] == ["line"]
            first = await client.call_tool("journal", {"line": "one"})
            folder = structured(first)["workdir"]
            return [first, await client.call_tool("journal", {"line": "two", "workdir": folder}),
                    await client.call_tool("journal", {"line": "x", "workdir": str(tmp_path)})]

    first, second, outside = anyio.run(main)
    folder = Path(structured(first)["workdir"])
    assert structured(second)["workdir"] == str(folder) and (folder / "log.txt").read_text() == "one\ntwo\n"
    assert structured(second)["files"][0]["sha256"] == hashlib.sha256(b"one\ntwo\n").hexdigest()
    assert outside.is_error and "not a folder under the server's root" in outside.content[0].text
