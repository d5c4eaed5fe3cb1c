"""Reading LSP messages from a byte stream without trusting the `Content-Length` header.

pygls reads exactly `Content-Length` bytes: a huge value (`99999999999`) asks for that much
memory and kills the server, and a wrong or missing one desynchronises the stream so that
every later message is lost (the server stalls). This reader instead:

- refuses bodies over `MAX_BODY` bytes without allocating them (an error reply, id null);
- treats the next `Content-Length:` in the stream as the end of a message whose header
  promised more bytes than came, and a body that is valid JSON on its own after a short
  idle time (`IDLE_S`) as complete;
- when a body of the promised length is not JSON, retries up to the next header (a length
  that was too short), else answers a JSON-RPC parse error (-32700, id null) and resyncs at
  the next header;
- answers a request whose params do not fit the method's type with an error for its id
  (-32602 invalid params) instead of only logging it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from typing import Any

MAX_BODY = 64 << 20  # bytes; far above any real document, far below what could exhaust memory
MAX_HEADER = 8 << 10
IDLE_S = 0.2  # seconds without new bytes after which a complete-looking body is taken as it is
_HEADER = re.compile(rb"(?i)content-length[ \t]*:")
_HEADER_END = b"\r\n\r\n"
_LENGTH = re.compile(rb"(?im)^content-length[ \t]*:[ \t]*(\d{1,20})[ \t]*\r?$")

logger = logging.getLogger(__name__)


class Framer:
    """Split a byte stream into JSON messages; errors go to `reply_error(id, code, message)`."""

    def __init__(self, handle: Callable[[Any], None], reply_error: Callable[[Any, int, str], None]) -> None:
        self.handle = handle
        self.reply_error = reply_error
        self.buffer = bytearray()

    def feed(self, data: bytes, idle: bool = False) -> None:
        """Add bytes (none, with `idle`, after a quiet period) and dispatch every message now complete."""
        self.buffer += data
        while self._step(idle):
            pass

    def _step(self, idle: bool) -> bool:
        """Consume one message or one piece of junk from the buffer; False when more bytes are needed."""
        buf = self.buffer
        start = _HEADER.search(buf)
        if start is None:
            if idle and buf.strip():
                self._loose(bytes(buf))  # a message with no header at all
                buf.clear()
            elif len(buf) > MAX_BODY:
                self.reply_error(None, -32600, f"dropped {len(buf)} bytes without a Content-Length header")
                buf.clear()
            return False
        if start.start() > 0:
            junk = bytes(buf[: start.start()])
            del buf[: start.start()]
            if junk.strip():
                self._loose(junk)  # bytes between messages: a message whose header had no length
            return True
        end = buf.find(_HEADER_END)
        if end < 0:
            if len(buf) > MAX_HEADER:
                self.reply_error(None, -32600, "header too long")
                del buf[: len(_HEADER.pattern)]
                return True
            return False
        header, body_start = bytes(buf[:end]), end + len(_HEADER_END)
        length = _LENGTH.search(header)
        if length is None or int(length.group(1)) > MAX_BODY:
            size = "no valid Content-Length" if length is None else f"Content-Length {int(length.group(1))} is over {MAX_BODY}"
            self.reply_error(None, -32600, f"message refused: {size}")
            del buf[:body_start]  # the body (if any) is read as loose bytes up to the next header
            return True
        n = int(length.group(1))
        following = _HEADER.search(buf, body_start)
        if len(buf) >= body_start + n:
            body = bytes(buf[body_start: body_start + n])
            if self._parses(body):
                del buf[: body_start + n]
                self._dispatch(body)
                return True
            # Not JSON at the promised length: the length was too short if the text up to the next header is.
            if following is None and not idle:
                return False
            stop = following.start() if following is not None else len(buf)
            self._loose(bytes(buf[body_start:stop]))
            del buf[:stop]
            return True
        # Fewer bytes than promised: the next header (or a quiet stream) ends this message when what came is JSON;
        # otherwise wait (a document may quote "Content-Length:"), and give up on it once the stream is quiet.
        stop = following.start() if following is not None else len(buf)
        body = bytes(buf[body_start:stop])
        if self._parses(body) and (following is not None or idle):
            del buf[:stop]
            self._dispatch(body)
            return True
        if not idle or following is None:
            return False
        del buf[:stop]
        self._loose(body)
        return True

    @staticmethod
    def _parses(body: bytes) -> bool:
        try:
            json.loads(body)
        except ValueError:
            return False
        return True

    def _loose(self, body: bytes) -> None:
        """Bytes outside a well-framed message: dispatched when they are a JSON message, else a parse error."""
        candidate = body.strip()
        if not self._parses(candidate) and _HEADER_END in candidate:
            candidate = candidate.split(_HEADER_END, 1)[1].strip()  # headers without a length, then a body
        if self._parses(candidate):
            self._dispatch(candidate)
        else:
            self.reply_error(None, -32700, f"parse error: {len(body)} bytes that are not a JSON message")

    def _dispatch(self, body: bytes) -> None:
        try:
            data = json.loads(body)
        except ValueError:
            self.reply_error(None, -32700, "parse error")
            return
        if not isinstance(data, dict):
            self.reply_error(None, -32600, "invalid request: a message is a JSON object")
            return
        self.handle(data)


async def serve(server: Any, stdin_fd: int, stop: threading.Event | asyncio.Event) -> None:
    """The message loop of `skillc lsp` over a file descriptor, with pygls's protocol doing the rest."""
    from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

    protocol = server.protocol
    loop = asyncio.get_running_loop()

    def reply_error(msg_id: Any, code: int, message: str) -> None:
        logger.warning("LSP input: %s", message)
        protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def handle(data: dict[str, Any]) -> None:
        try:
            message = protocol.structure_message(data)
        except JsonRpcException as exc:
            if "id" in data and "method" in data:
                code = exc.code if isinstance(exc, JsonRpcInvalidParams) else -32602
                reply_error(data["id"], code, f"invalid params for {data.get('method')}")
            else:
                logger.warning("LSP input: unusable notification %r", data.get("method"))
            return
        try:
            protocol.handle_message(message)
        except Exception:  # noqa: BLE001 - one bad message must not end the session
            logger.exception("Unable to handle message")
            if "id" in data and "method" in data:
                reply_error(data["id"], -32603, "internal error")

    framer = Framer(handle, reply_error)
    chunks: asyncio.Queue[bytes] = asyncio.Queue()

    def read() -> None:
        # A daemon thread: a blocked read of stdin never holds the process open at exit.
        while True:
            try:
                data = os.read(stdin_fd, 1 << 16)
            except OSError:
                data = b""
            loop.call_soon_threadsafe(chunks.put_nowait, data)
            if not data:
                return

    threading.Thread(target=read, name="lsp-stdin", daemon=True).start()
    while not stop.is_set():
        try:
            data = await asyncio.wait_for(chunks.get(), timeout=IDLE_S)
        except TimeoutError:
            framer.feed(b"", idle=True)
            continue
        if not data:
            framer.feed(b"", idle=True)
            break
        framer.feed(data)
