"""MCP tools inside machines: `tool … from mcp "docs"` checked against a real server (or the lock file) and
called by the runtime, with a small stdio MCP server written with the SDK (`servers/docs_server.py`).

Bad input: a server that fails to start, dies mid-call, answers outside its own schema, hangs, or lists a schema
the machine does not fit — each a coded failure, bounded in time, the run's trace intact, no process left.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from skillc import api
from skillc.runtime.record import load_run
from tests.mcp.conftest import alive

pytestmark = pytest.mark.timeout(180)

SERVER = Path(__file__).resolve().parent / "servers" / "docs_server.py"
MACHINE = """machine lookup_docs {
  doc "Search the docs server, read one page's facts, keep the hits in hits.txt."
  use tools std
  tool search(query: str, limit: int?) -> (text: str) from mcp "docs"
  tool page(key: str) -> (title: str, words: int) from mcp "docs" as "lookup"

  input query: str
  var hits: str
  var title: str
  var words: int
  var status: int

  start find

  tool find {
    reads query
    call search(query: query)
    writes hits = text
    -> open
  }

  tool open {
    call page(key: "install")
    writes title = title, words = words
    -> keep
  }

  tool keep {
    reads hits
    call bash(command: "printf %s " ++ quote(hits) ++ " > hits.txt")
    writes status = exit_code
    when status != 0 -> fallback
    -> done
  }

  terminal done: success { requires hits, title, words, exists("hits.txt") }
  fallback
}
"""
EMPTY_SCRIPT = '{"outputs": {}}'


def project(tmp_path: Path, mode: str = "ok", machine: str = MACHINE, *, command: list[str] | None = None,
            timeout: float = 30) -> Path:
    """A project folder: pyproject.toml naming the docs server (run in `server/`), the machine, a script."""
    (tmp_path / "server").mkdir(exist_ok=True)
    command = command or [sys.executable, str(SERVER), mode]
    (tmp_path / "pyproject.toml").write_text(
        "[tool.skillc.mcp.docs]\n"
        f"command = {json.dumps(command)}\n"
        'cwd = "server"\n'
        f"start-timeout = {timeout}\n", encoding="utf-8")
    (tmp_path / "m.skm").write_text(machine, encoding="utf-8")
    (tmp_path / "script.json").write_text(EMPTY_SCRIPT, encoding="utf-8")
    return tmp_path / "m.skm"


def servers_left(tmp_path: Path) -> list[int]:
    pids = tmp_path / "server" / "server.pid"
    found = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    deadline = time.monotonic() + 5
    while any(alive(p) for p in found) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [p for p in found if alive(p)]


def codes_of(diagnostics) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


def run(machine: Path, tmp_path: Path, *extra: str, tool_timeout: float = 60.0) -> api.RunReport:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return api.run(api.RunConfig(machine=str(machine), executor=f"scripted:{tmp_path / 'script.json'}",
                                 inputs=("query=skillc",), workdir=str(work), trace=str(tmp_path / "run.jsonl"),
                                 journal=str(tmp_path / "runs.sqlite"), tool_timeout_s=tool_timeout))


# ---------------------------------------------------------------- the language


def test_the_declaration_parses_formats_and_lowers() -> None:
    text, problems = api.format_text(MACHINE)
    assert problems == [] and text is not None
    assert 'tool search(query: str, limit: int?) -> (text: str) from mcp "docs"' in text
    assert 'tool page(key: str) -> (title: str, words: int) from mcp "docs" as "lookup"' in text
    loaded = api.load(MACHINE)
    assert loaded.machine is not None
    page = loaded.machine.tools["page"]
    assert (page.mcp, page.remote, page.mcp_name) == ("docs", "lookup", "lookup")
    assert loaded.machine.tools["search"].mcp_name == "search" and loaded.machine.tools["bash"].mcp is None


# ---------------------------------------------------------------- skillc check


def test_check_lists_the_servers_tools_and_writes_the_lock(tmp_path: Path) -> None:
    machine = project(tmp_path)
    result = api.check_files([str(machine)])
    assert codes_of(result.diagnostics) == []
    lock = json.loads((tmp_path / "skillc.mcp.lock").read_text())
    tools = lock["servers"]["docs"]["tools"]
    assert set(tools) == {"search", "lookup"} and tools["search"]["inputSchema"]["required"] == ["query"]
    assert tools["lookup"]["outputSchema"]["properties"]["words"] == {"type": "integer"}
    assert servers_left(tmp_path) == []
    before = (tmp_path / "skillc.mcp.lock").stat().st_mtime_ns
    api.check_files([str(machine)])  # the same listing: the lock is not rewritten
    assert (tmp_path / "skillc.mcp.lock").stat().st_mtime_ns == before


def test_offline_the_lock_file_is_used(tmp_path: Path) -> None:
    machine = project(tmp_path)
    api.check_files([str(machine)])
    project(tmp_path, command=["no-such-mcp-server-program"])  # the server is gone; the lock stays
    live = api.check_files([str(machine)])
    assert codes_of(live.diagnostics) == ["SKM894"] and "no program" in live.diagnostics[0].message
    assert codes_of(api.check(machine).diagnostics) == []  # a run's own check never starts servers
    wrong = MACHINE.replace("tool search(query: str, limit: int?)", "tool search(query: str, limit: str?)")
    machine.write_text(wrong, encoding="utf-8")
    mismatch = api.check(machine).diagnostics
    assert codes_of(mismatch) == ["SKM896"] and "parameter `limit`: str? is not integer" in mismatch[0].message


def test_without_server_or_lock_the_calls_are_unchecked(tmp_path: Path) -> None:
    machine = project(tmp_path, command=["no-such-mcp-server-program"])
    assert codes_of(api.check(machine).diagnostics) == ["SKM899"]
    assert codes_of(api.check_files([str(machine)]).diagnostics) == ["SKM894", "SKM899"]


def test_a_declaration_that_does_not_fit_the_server_is_an_error(tmp_path: Path) -> None:
    machine = project(tmp_path, "changed")  # `search` takes `text`, not `query`
    result = api.check_files([str(machine)])
    assert codes_of(result.diagnostics) == ["SKM896"]
    message = result.diagnostics[0].message
    assert "parameter `query` is not in the server's input schema" in message
    assert "the server requires `text`" in message
    assert result.diagnostics[0].span is not None and result.diagnostics[0].span.start_pos[0] == 4


def test_unknown_servers_and_tools_are_errors(tmp_path: Path) -> None:
    machine = project(tmp_path, machine=MACHINE.replace('from mcp "docs" as "lookup"', 'from mcp "dcos"'))
    assert codes_of(api.check_files([str(machine)]).diagnostics) == ["SKM898"]
    machine.write_text(MACHINE.replace('as "lookup"', 'as "look-up"'), encoding="utf-8")
    found = api.check_files([str(machine)]).diagnostics
    assert codes_of(found) == ["SKM898"] and "lists no tool `look-up`" in found[0].message


def test_a_bad_mcp_table_is_a_configuration_error(tmp_path: Path) -> None:
    machine = project(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.skillc.mcp.docs]\ncommand = "python server.py"\n',
                                             encoding="utf-8")
    found = api.check_files([str(machine)]).diagnostics
    assert "SKM290" in codes_of(found) and any("mcp.docs.command" in d.message for d in found)


# ---------------------------------------------------------------- skillc run


def test_a_run_starts_the_server_calls_its_tools_and_stops_it(tmp_path: Path) -> None:
    machine = project(tmp_path)
    report = run(machine, tmp_path)
    assert report.result is not None, report.error
    assert report.result.outcome == "success", report.result
    assert report.result.evidence["title"] == "install" and report.result.evidence["words"] == 3
    assert (tmp_path / "work" / "hits.txt").read_text() == "install: pip install skillc\ncheck: skillc check PATHS"
    steps = load_run(tmp_path / "run.jsonl").steps
    find, opened = steps[0], steps[1]
    assert find.tool_call is not None and find.tool_call.tool == "search" and find.tool_call.args == {"query": "skillc"}
    effect = find.tool_call.effects[0]
    assert effect["op"] == "mcp" and effect["server"] == "docs" and effect["tool"] == "search"
    assert opened.tool_call is not None and opened.tool_call.effects[0]["tool"] == "lookup"
    assert opened.tool_result == {"title": "install", "words": 3}
    calls = (tmp_path / "server" / "calls.log").read_text().splitlines()
    assert calls == ["search [('query', 'skillc')]", "lookup [('key', 'install')]"]  # `limit` left out: not sent
    assert len((tmp_path / "server" / "server.pid").read_text().split()) == 1  # one server for the whole run
    assert servers_left(tmp_path) == []


@pytest.mark.parametrize(("mode", "code", "words"), [
    ("nostart", "SKM894", "stopped before it answered the MCP handshake"),
    ("die", "SKM895", "stopped during the call of `search`"),
    ("badschema", "SKM896", "do not fit its own output schema"),
    ("changed", "SKM896", "does not fit the tool `search`"),
    ("error", None, "answered with an error: the index is being rebuilt"),
])
def test_a_server_that_fails_sends_the_run_to_the_fallback(tmp_path: Path, mode: str, code: str | None,
                                                            words: str) -> None:
    machine = project(tmp_path, mode)
    report = run(machine, tmp_path)
    assert report.result is not None, report.error
    assert report.result.outcome == "failed" and report.result.terminal == "fallback"
    reason = report.result.reason
    assert reason is not None and reason.kind == "tool" and words in reason.message
    if code is not None:
        assert f"error[{code}]" in reason.message
    trace = load_run(tmp_path / "run.jsonl")  # whole: the failed step and the footer are there
    assert trace.footer is not None and trace.footer.reason is not None and trace.footer.reason.kind == "tool"
    assert servers_left(tmp_path) == []


def test_a_server_that_hangs_is_stopped_after_the_tool_timeout(tmp_path: Path) -> None:
    machine = project(tmp_path, "hang")
    started = time.monotonic()
    report = run(machine, tmp_path, tool_timeout=2.0)
    took = time.monotonic() - started
    assert report.result is not None and report.result.terminal == "fallback"
    assert report.result.reason is not None and "error[SKM897]" in report.result.reason.message
    assert took < 30, took
    assert servers_left(tmp_path) == []


def test_a_server_that_never_answers_the_handshake_is_bounded(tmp_path: Path) -> None:
    machine = project(tmp_path, "slowstart", timeout=2)
    started = time.monotonic()
    report = run(machine, tmp_path)
    assert report.result is not None and report.result.reason is not None
    assert "error[SKM894]" in report.result.reason.message and "within 2 s" in report.result.reason.message
    assert time.monotonic() - started < 30
    assert servers_left(tmp_path) == []


def test_mcp_offline_starts_no_server(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from skillc.cli import main

    machine = project(tmp_path)
    assert codes_of(api.check_files([str(machine)], mcp_live=False).diagnostics) == ["SKM899"]
    result = CliRunner().invoke(main, ["check", "--mcp-offline", "--format", "concise", str(machine)])
    assert result.exit_code == 0 and "SKM899" in result.output
    assert not (tmp_path / "server" / "server.pid").exists() and not (tmp_path / "skillc.mcp.lock").exists()


def test_a_served_machine_calls_its_own_mcp_server(tmp_path: Path) -> None:
    """MCP on both sides: a client calls the machine, whose tools another MCP server serves."""
    import anyio
    from mcp import Client

    from tests.mcp.conftest import stdio, structured

    machine = project(tmp_path)

    async def main():
        params = stdio(str(machine), executor=f"scripted:{tmp_path / 'script.json'}", root=tmp_path / "root")
        async with Client(params, mode="legacy") as client:
            return await client.call_tool("lookup_docs", {"query": "check"})

    out = structured(anyio.run(main))
    assert out["outcome"] == "success" and out["evidence"]["hits"] == "check: skillc check PATHS"
    assert [f["path"] for f in out["files"]] == ["hits.txt"]
    assert servers_left(tmp_path) == []
