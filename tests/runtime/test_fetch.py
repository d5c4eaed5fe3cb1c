"""`fetch` (runtime/toolkit.py) against a local HTTP server on 127.0.0.1 in a thread — never the internet."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from skillc.ir.toolkit import KIT, parse_allowed
from skillc.runtime.places import Places
from skillc.runtime.toolkit import Capabilities, Fetch
from skillc.runtime.tools import ToolBox, ToolError

BIG = 3 << 20


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def send(self, status: int, body: bytes, ctype: str | None = "text/plain; charset=utf-8",
             headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if ctype is not None:
            self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:  # the client gave up (a time limit under test)
            pass

    def redirect(self, to: str) -> None:
        self.send(302, b"", headers={"Location": to})

    def do_GET(self) -> None:  # the http.server name
        port = self.server.server_address[1]
        route = self.path
        if route == "/text":
            self.send(200, "café crème".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif route == "/json":
            self.send(200, b'{"ok": true}', "application/json")
        elif route == "/untyped":
            self.send(200, b"plain words", None)
        elif route == "/big":
            self.send(200, b"x" * BIG)
        elif route == "/png":
            self.send(200, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe", "image/png")
        elif route == "/missing":
            self.send(404, b"no such page")
        elif route == "/to-text":
            self.redirect("/text")
        elif route == "/to-localhost":
            self.redirect(f"http://localhost:{port}/text")
        elif route == "/to-ftp":
            self.redirect("ftp://127.0.0.1/x")
        elif route == "/loop":
            self.redirect("/loop")
        elif route == "/slow":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            try:
                for _ in range(20):
                    self.wfile.write(b"drip\n")
                    self.wfile.flush()
                    time.sleep(0.2)
            except OSError:
                pass
        elif route == "/stall":
            time.sleep(3)
            self.send(200, b"late")
        else:
            self.send(500, b"unknown route")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


def local(**kw: object) -> Fetch:
    return Fetch(("127.0.0.1",), **kw)  # type: ignore[arg-type]


def test_no_host_is_allowed_by_default(server: str) -> None:
    with pytest.raises(ToolError, match=r"host not allowed: `127.0.0.1` \(allowed hosts: none"):
        Fetch().invoke(url=server + "/text")


def test_a_listed_host_is_fetched_and_decoded_per_its_charset(server: str) -> None:
    result, effect = local().invoke(url=server + "/text")
    assert result == {"status": 200, "content": "café crème", "content_type": "text/plain"}
    assert effect["op"] == "fetch" and effect["url"] == server + "/text" and effect["status"] == 200
    assert effect["bytes"] == len("café crème".encode("latin-1"))
    assert local().invoke(url=server + "/json")[0]["content"] == '{"ok": true}'
    assert local().invoke(url=server + "/untyped")[0] == {"status": 200, "content": "plain words",
                                                          "content_type": ""}


def test_an_error_status_is_a_result(server: str) -> None:
    assert local().invoke(url=server + "/missing")[0] == {"status": 404, "content": "no such page",
                                                          "content_type": "text/plain"}


def test_a_huge_response_is_cut_at_max_bytes(server: str) -> None:
    result, effect = local().invoke(url=server + "/big", max_bytes=1000)
    assert result["content"] == "x" * 1000 + "\n[skillc: truncated after 1,000 bytes]"
    assert effect["bytes"] == 1000 and effect["truncated"] is True
    result, effect = local().invoke(url=server + "/big")  # the default limit, 1 MiB
    assert effect["bytes"] == 1 << 20 and effect["truncated"] is True and len(result["content"]) < BIG
    with pytest.raises(ToolError, match="at least 1"):
        local().invoke(url=server + "/big", max_bytes=0)


def test_binary_content_is_refused(server: str) -> None:
    with pytest.raises(ToolError, match=r"returned image/png .*text only"):
        local().invoke(url=server + "/png")


def test_redirects_are_checked_against_the_allow_list_again(server: str) -> None:
    result, effect = local().invoke(url=server + "/to-text")
    assert result["content"] == "café crème" and effect["final_url"] == server + "/text"
    with pytest.raises(ToolError, match=r"redirect to http://localhost:\d+/text was refused: host not allowed"):
        local().invoke(url=server + "/to-localhost")
    with pytest.raises(ToolError, match=r"redirect to ftp://127.0.0.1/x was refused: .*http and https"):
        local().invoke(url=server + "/to-ftp")
    with pytest.raises(ToolError, match="redirected too often"):
        local().invoke(url=server + "/loop")
    both = Fetch(("127.0.0.1", "localhost"))
    assert both.invoke(url=server + "/to-localhost")[0]["content"] == "café crème"


def test_local_addresses_only_through_the_runs_own_list(server: str) -> None:
    with pytest.raises(ToolError, match="is a local address"):
        Fetch(("*",)).invoke(url=server + "/text")  # every public host is not a local one
    caps, _ = parse_allowed(["WebFetch(domain:127.0.0.1)"])
    guard = Capabilities(caps, Places("."))
    with pytest.raises(ToolError, match="is a local address"):
        Fetch(guard=guard).invoke(url=server + "/text")  # a machine cannot grant itself the local network
    assert Fetch(("127.0.0.1",), guard=guard).invoke(url=server + "/text")[0]["status"] == 200


def test_only_http_and_https(server: str) -> None:
    for url in ("file:///etc/passwd", "ftp://127.0.0.1/x", "gopher://127.0.0.1/"):
        with pytest.raises(ToolError, match="http and https URLs only"):
            local().invoke(url=url)
    with pytest.raises(ToolError, match="names no host"):
        local().invoke(url="http:///path")


def test_time_limits(server: str) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"took longer than 0.5 s|timed out after 0.5 s"):
        local(timeout_s=0.5).invoke(url=server + "/slow")
    with pytest.raises(ToolError, match=r"timed out after 0.5 s"):
        local(timeout_s=0.5).invoke(url=server + "/stall")
    assert time.monotonic() - started < 10


def test_the_tool_box_enforces_webfetch_domains(server: str, tmp_path: Path) -> None:
    import attrs

    import skillc

    machine = skillc.check("machine m {\n  var x: str\n  start done\n  terminal done: success { requires x }\n"
                           "  fallback\n}\n").machine
    assert machine is not None
    caps, _ = parse_allowed(["WebFetch(domain:localhost)"])
    box = ToolBox.for_run(attrs.evolve(machine, allowed=caps), workdir=tmp_path,
                          allow_hosts=("127.0.0.1", "localhost"))
    with pytest.raises(ToolError, match=r"outside allowed-tools: `127.0.0.1` is in none of "
                                        r"`WebFetch\(domain:localhost\)`"):
        box.call(KIT["fetch"], {"url": server + "/text"})
    port = server.rsplit(":", 1)[1]
    result, effects = box.call_with_effects(KIT["fetch"], {"url": f"http://localhost:{port}/text"})
    assert result["content"] == "café crème" and effects is not None and effects[0]["status"] == 200
    plain = ToolBox.for_run(None, workdir=tmp_path)
    with pytest.raises(ToolError, match="host not allowed"):
        plain.call(KIT["fetch"], {"url": server + "/text"})
