"""`skillc serve --mcp --http`: streamable HTTP on 127.0.0.1 only, driven by the SDK's client over the network."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client

from tests.conftest import ROOT
from tests.mcp.conftest import ANSWER, DEPLOY, SCRIPT, server_env, structured

pytestmark = pytest.mark.timeout(120)


def start_http(root: Path, *extra: str) -> tuple[subprocess.Popen[str], str, list[str]]:
    """Start the server on a free port; its URL from the line it prints on stderr (and the lines so far)."""
    proc = subprocess.Popen([sys.executable, "-m", "skillc", "serve", "--mcp", ANSWER, DEPLOY, "--executor", SCRIPT,
                             "--workdir", str(root), "--http", "--port", "0", *extra],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=server_env(), cwd=str(ROOT))
    lines: queue.Queue[str] = queue.Queue()
    assert proc.stderr is not None
    stream = proc.stderr
    threading.Thread(target=lambda: [lines.put(line) for line in stream], daemon=True).start()
    seen: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            assert proc.poll() is None, "".join(seen)
            continue
        seen.append(line)
        if " at http://" in line:
            return proc, line.split(" at ", 1)[1].split()[0], seen
    proc.kill()
    raise AssertionError("no URL announced: " + "".join(seen))


def test_streamable_http_serves_on_loopback_and_stops_on_sigterm(tmp_path: Path) -> None:
    proc, url, _ = start_http(tmp_path / "root")
    try:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

        async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"answer": "prod"})

        async def main() -> tuple[Any, Any, Any, Any]:
            async with Client(url, mode="legacy", elicitation_callback=elicit) as client:
                names = sorted(t.name for t in (await client.list_tools()).tools)
                done = await client.call_tool("answer_file", {"question": "2+2?"})
                asked = await client.call_tool("deploy", {})  # elicitation on the POST's event stream
            async with Client(url) as modern:  # 2026-07-28 over HTTP: each request a POST of its own
                waiting = await modern.call_tool("deploy", {})
            return names, done, asked, waiting

        names, done, asked, waiting = anyio.run(main)
        assert structured(asked)["evidence"]["target"] == "prod"
        assert names == ["answer_file", "deploy", "skillc_resume"]
        out = structured(done)
        assert out["outcome"] == "success" and (Path(out["workdir"]) / "answer.txt").read_text() == "4"
        assert structured(waiting)["status"] == "waiting"

        import httpx2 as httpx

        foreign = httpx.post(url, headers={"Host": "evil.example:80", "Content-Type": "application/json",
                                           "Accept": "application/json, text/event-stream"},
                             content=b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}', timeout=10)
        assert foreign.status_code in (400, 403, 421)  # DNS rebinding: only loopback hosts are served

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


def test_a_taken_port_is_reported(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "skillc", "serve", "--mcp", ANSWER, "--executor", SCRIPT, "--http",
                            "--port", str(port), "--workdir", str(tmp_path / "root")],
                           capture_output=True, text=True, env=server_env(), cwd=str(ROOT), timeout=60)
    assert r.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in r.stderr and r.stdout == ""
