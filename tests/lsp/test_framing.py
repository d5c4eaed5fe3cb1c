"""The language server over raw bytes (issue 16): a huge `Content-Length` does not kill it, a short,
long or missing one does not stall it, and a request with invalid params gets an error reply for its id.
Also the framer on its own, byte by byte, and the scheduling of checks (issue 17)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time

import pytest

from skillc.lsp.framing import Framer
from tests.conftest import ROOT


def frame(obj: dict, length: int | None = None, header: str | None = None) -> bytes:
    body = json.dumps(obj).encode()
    head = header if header is not None else f"Content-Length: {len(body) if length is None else length}\r\n\r\n"
    return head.encode() + body


def request(msg_id: int, method: str = "shutdown", params=None) -> dict:
    msg = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


PING = ("textDocument/documentSymbol", {"textDocument": {"uri": "file:///nowhere.skm"}})
INITIALIZE = request(1, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})


class RawServer:
    """`skillc lsp` as a subprocess, spoken to in bytes; replies are parsed (trusting our own server's framing)."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "skillc", "lsp"], cwd=ROOT, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                if line in (b"\r\n", b"\n"):
                    break
            self.replies.put(json.loads(out.read(length)))

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self, msg_id, timeout: float = 60.0) -> dict:
        """The next reply with this id (notifications and other replies are skipped)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = self.replies.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                break
            if "method" not in msg and msg.get("id") == msg_id:
                return msg
        raise AssertionError(f"no reply for id {msg_id!r} within {timeout}s (the server stalled or died: "
                             f"exit {self.proc.poll()})")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


@pytest.fixture
def server():
    s = RawServer()
    s.send(frame(INITIALIZE))
    assert "capabilities" in s.reply(1)["result"]
    yield s
    s.close()


def test_a_huge_content_length_is_refused_without_dying(server: RawServer) -> None:
    server.send(frame(request(2, "textDocument/hover", {}), length=99_999_999_999))
    refused = server.reply(None)
    assert refused["error"]["code"] == -32600 and "99999999999" in refused["error"]["message"]
    server.send(frame(request(3, *PING)))
    assert "result" in server.reply(3)
    assert server.proc.poll() is None


def test_a_short_length_does_not_stall(server: RawServer) -> None:
    server.send(frame(request(4, *PING), length=10) +
                frame(request(5, *PING)))
    assert server.reply(4)["id"] == 4  # the next header shows where the message really ended
    assert server.reply(5)["id"] == 5


def test_a_long_length_does_not_stall(server: RawServer) -> None:
    server.send(frame(request(6, *PING), length=5000))
    assert server.reply(6, timeout=10)["id"] == 6  # taken as it is once the stream is quiet
    server.send(frame(request(7, *PING)))
    assert server.reply(7)["id"] == 7


def test_a_missing_length_does_not_stall(server: RawServer) -> None:
    server.send(frame(request(8, *PING), header="Content-Type: application/json\r\n\r\n"))
    server.send(frame(request(9, *PING)))
    assert server.reply(9)["id"] == 9
    garbage = b"Content-Length: 12\r\n\r\nnot json!!!!"
    server.send(garbage + frame(request(10, *PING)))
    assert server.reply(None)["error"]["code"] == -32700
    assert server.reply(10)["id"] == 10


def test_invalid_params_get_an_error_reply_for_that_id(server: RawServer) -> None:
    server.send(frame(request(11, "textDocument/hover", {"textDocument": 5, "position": "top"})))
    reply = server.reply(11)
    assert reply["error"]["code"] == -32602
    server.send(frame(request(12, *PING)))
    assert server.reply(12)["id"] == 12


def test_framer_byte_by_byte() -> None:
    """Every split of a stream of three messages yields the same three messages."""
    stream = frame(request(1)) + frame(request(2), length=3) + frame(request(3))
    for cut in range(1, len(stream)):
        got, errors = [], []
        f = Framer(lambda d: got.append(d["id"]),  # noqa: B023 - the framer is used only in this iteration
                   lambda i, c, m: errors.append(c))  # noqa: B023 - likewise
        f.feed(stream[:cut])
        f.feed(stream[cut:])
        f.feed(b"", idle=True)
        assert got == [1, 2, 3] and errors == [], cut


def test_framer_keeps_a_body_that_quotes_a_header() -> None:
    """A document may contain the text `Content-Length:`; a well-framed body is taken whole."""
    msg = request(1, "x", {"text": "Content-Length: 5\r\n\r\nhello"})
    got = []
    f = Framer(lambda d: got.append(d), lambda *a: pytest.fail(f"error {a}"))
    f.feed(frame(msg))
    assert got == [msg]


def test_a_deeply_nested_message_gets_an_error_and_the_server_keeps_running(server: RawServer) -> None:
    """Issue 34: a 3,000-deep message ended the server with SKM900 printed on the protocol's stdout."""
    deep = b'{"jsonrpc": "2.0", "id": 13, "method": "textDocument/hover", "params": ' + b"[" * 3000 + b"]" * 3000 + b"}"
    server.send(f"Content-Length: {len(deep)}\r\n\r\n".encode() + deep)
    refused = server.reply(None)  # too deep for the decoder: the id cannot be read
    assert refused["error"]["code"] == -32600 and "deeper than" in refused["error"]["message"]
    shallow = request(14, "textDocument/hover", {"y": "z"})
    for _ in range(150):
        shallow["params"] = {"p": shallow["params"]}
    server.send(frame(shallow))  # decodable, but past the bound: refused for its id
    assert server.reply(14)["error"]["code"] == -32600
    server.send(frame(request(15, *PING)))
    assert "result" in server.reply(15)  # still framed and answering: nothing but protocol on stdout
    assert server.proc.poll() is None


def test_a_30_mb_did_open_is_framed_in_linear_time() -> None:
    """Issue 34: a 30 MB `didOpen`, read in 64 KiB pieces as from a pipe, took ~40 s (each read re-searched and
    re-decoded the whole body so far); it takes well under a second."""
    msg = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///big.skm", "languageId": "skm", "version": 1, "text": "# " + "x" * 30_000_000}}}
    data = frame(msg) + frame(request(2))
    got, errors = [], []
    f = Framer(lambda d: got.append(d.get("id", d.get("method"))), lambda *a: errors.append(a))
    started = time.perf_counter()
    for at in range(0, len(data), 1 << 16):
        f.feed(data[at:at + (1 << 16)])
    took = time.perf_counter() - started
    assert got == ["textDocument/didOpen", 2] and errors == []
    assert took < 8, f"framing 30 MB took {took:.1f} s"


def test_framer_depth_bound_in_process() -> None:
    """At the bound a message passes; one level more is refused with its id."""
    from skillc.lsp.framing import MAX_DEPTH

    def nested(levels: int) -> dict:
        params: object = []
        for _ in range(levels - 2):  # the message object and params' list are two levels
            params = [params]
        return request(7, "x", params)

    got, errors = [], []
    f = Framer(lambda d: got.append(d["id"]), lambda i, c, m: errors.append((i, c)))
    f.feed(frame(nested(MAX_DEPTH)) + frame(nested(MAX_DEPTH + 1)))
    assert got == [7] and errors == [(7, -32600)]


def test_a_document_too_large_to_check_is_said_so_and_the_server_answers(server: RawServer) -> None:
    """Issue 34: a 30 MB `didOpen` is framed in linear time, then not checked (a check would hold the checking
    thread for minutes): the editor gets a warning and empty diagnostics, and the next request its answer."""
    from skillc.lsp.server import MAX_CHECKED_CHARS

    text = "# " + "x" * (MAX_CHECKED_CHARS + 10) + "\nmachine m {\n}\n"
    server.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///tmp/huge.skm", "languageId": "skm", "version": 1, "text": text}}}))
    server.send(frame(request(16, *PING)))
    seen: list[dict] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not (any(m.get("method") == "window/showMessage" for m in seen)
                                               and any(m.get("id") == 16 for m in seen)):
        try:
            seen.append(server.replies.get(timeout=1))
        except queue.Empty:
            continue
    assert any(m.get("id") == 16 and "result" in m for m in seen), seen
    shown = [m for m in seen if m.get("method") == "window/showMessage"]
    assert shown and "not checked" in shown[0]["params"]["message"], seen
    published = [m for m in seen if m.get("method") == "textDocument/publishDiagnostics"]
    assert all(m["params"]["diagnostics"] == [] for m in published)
