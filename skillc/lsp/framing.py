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
  (-32602 invalid params) instead of only logging it;
- refuses a message nested deeper than `MAX_DEPTH` (an error for its id, or id null when it is too deep
  for the JSON decoder itself) instead of letting the decoder's `RecursionError` end the server;
- reads in linear time: the search for the next header resumes where the last one stopped, and a body
  is decoded only once all of it has come (a 30 MB `didOpen` in 64 KiB reads was quadratic).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from skillc.runtime.jsonvalue import Object, Value

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

MAX_BODY = 64 << 20  # bytes; far above any real document, far below what could exhaust memory
MAX_HEADER = 8 << 10
MAX_DEPTH = 100  # nesting of arrays and objects; LSP messages need about ten
_MARGIN = 256  # a resumed header search starts this far back: a header split across reads is still found
IDLE_S = 0.2  # seconds without new bytes after which a complete-looking body is taken as it is
_HEADER = re.compile(rb"(?i)content-length[ \t]*:")
_HEADER_END = b"\r\n\r\n"
_LENGTH = re.compile(rb"(?im)^content-length[ \t]*:[ \t]*(\d{1,20})[ \t]*\r?$")

logger = logging.getLogger(__name__)


class TooDeep(ValueError):
    """A JSON message nested deeper than MAX_DEPTH (`message`: the decoded object, when it could be decoded)."""

    def __init__(self, message: Value = None) -> None:
        super().__init__(f"message nested deeper than {MAX_DEPTH} levels")
        self.message = message


def depth(value: Value) -> int:
    """How deeply arrays and objects nest in a decoded JSON value (iteratively: no recursion to run out of)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, level)
        if level <= MAX_DEPTH:  # deeper is refused anyway: no need to walk it
            stack.extend((x, level + 1) for x in item if isinstance(x, (dict, list)))
    return deepest


def loads(body: bytes) -> Value:
    """Decode one JSON message; ValueError when it is not JSON, TooDeep when it nests past MAX_DEPTH."""
    try:
        value = json.loads(body)
    except RecursionError:
        raise TooDeep() from None
    if depth(value) > MAX_DEPTH:
        raise TooDeep(value)
    return value


class Framer:
    """Split a byte stream into JSON messages; errors go to `reply_error(id, code, message)`."""

    def __init__(self, handle: Callable[[Object], None], reply_error: Callable[[Value, int, str], None]) -> None:
        self.handle = handle
        self.reply_error = reply_error
        self.buffer = bytearray()
        self._searched: dict[int, int] = {}  # from -> to: no header in buffer[from:to]
        self._failed: tuple[int, int] | None = None  # buffer[from:to] was tried as a body and is not JSON

    def _next_header(self, start: int) -> re.Match[bytes] | None:
        """The first header at or after `start`, resuming an earlier search from the same start (linear)."""
        resume = max(start, self._searched.get(start, start) - _MARGIN)
        found = _HEADER.search(self.buffer, resume)
        if found is None:
            self._searched[start] = len(self.buffer)
        return found

    def _consume(self, upto: int) -> None:
        """Drop the first `upto` bytes of the buffer (the remembered search is then out of date)."""
        del self.buffer[:upto]
        self._searched = {}
        self._failed = None

    def feed(self, data: bytes, idle: bool = False) -> None:
        """Add bytes (none, with `idle`, after a quiet period) and dispatch every message now complete."""
        self.buffer += data
        while self._step(idle):
            pass

    def _step(self, idle: bool) -> bool:
        """Consume one message or one piece of junk from the buffer; False when more bytes are needed."""
        buf = self.buffer
        start = self._next_header(0)
        if start is None:
            if idle and buf.strip():
                self._loose(bytes(buf))  # a message with no header at all
                self._consume(len(buf))
            elif len(buf) > MAX_BODY:
                self.reply_error(None, -32600, f"dropped {len(buf)} bytes without a Content-Length header")
                self._consume(len(buf))
            return False
        if start.start() > 0:
            junk = bytes(buf[: start.start()])
            self._consume(start.start())
            if junk.strip():
                self._loose(junk)  # bytes between messages: a message whose header had no length
            return True
        end = buf.find(_HEADER_END)
        if end < 0:
            if len(buf) > MAX_HEADER:
                self.reply_error(None, -32600, "header too long")
                self._consume(len(_HEADER.pattern))
                return True
            return False
        header, body_start = bytes(buf[:end]), end + len(_HEADER_END)
        length = _LENGTH.search(header)
        if length is None or int(length.group(1)) > MAX_BODY:
            size = "no valid Content-Length" if length is None else \
                f"Content-Length {int(length.group(1))} is over the limit of {MAX_BODY} bytes ({MAX_BODY >> 20} MiB)"
            self.reply_error(None, -32600, f"message refused: {size}")
            self._consume(body_start)  # the body (if any) is read as loose bytes up to the next header
            return True
        n = int(length.group(1))
        if len(buf) >= body_start + n:
            body = bytes(buf[body_start: body_start + n])
            if self._parses(body):
                self._consume(body_start + n)
                self._dispatch(body)
                return True
            # Not JSON at the promised length: the length was too short if the text up to the next header is.
            following = self._next_header(body_start)
            if following is None and not idle:
                return False
            stop = following.start() if following is not None else len(buf)
            self._loose(bytes(buf[body_start:stop]))
            self._consume(stop)
            return True
        # Fewer bytes than promised: the next header (or a quiet stream) ends this message when what came is JSON;
        # otherwise wait (a document may quote "Content-Length:"), and give up on it once the stream is quiet.
        following = self._next_header(body_start)
        if following is None and not idle:
            return False  # more bytes are promised: nothing is decoded before they come (linear reading)
        stop = following.start() if following is not None else len(buf)
        if self._failed == (body_start, stop) and not idle:
            return False  # the same bytes did not decode before: wait for more without decoding them again
        body = bytes(buf[body_start:stop])
        if self._parses(body):
            self._consume(stop)
            self._dispatch(body)
            return True
        self._failed = (body_start, stop)
        if following is None or not idle:
            return False
        self._consume(stop)
        self._loose(body)
        return True

    @staticmethod
    def _parses(body: bytes) -> bool:
        """Whether the bytes are one JSON value (one nested too deeply counts: it is answered, not re-framed)."""
        try:
            loads(body)
        except TooDeep:
            return True
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
            data = loads(body)
        except TooDeep as exc:
            msg_id = exc.message.get("id") if isinstance(exc.message, dict) else None
            self.reply_error(msg_id if isinstance(msg_id, (int, str)) else None, -32600,
                             f"invalid request: {exc}")
            return
        except ValueError:
            self.reply_error(None, -32700, "parse error")
            return
        if not isinstance(data, dict):
            self.reply_error(None, -32600, "invalid request: a message is a JSON object")
            return
        self.handle(data)


async def serve(server: LanguageServer, stdin_fd: int, stop: threading.Event | asyncio.Event) -> None:
    """The message loop of `skillc lsp` over a file descriptor, with pygls's protocol doing the rest."""
    from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams  # optional extra (pygls)

    protocol = server.protocol
    loop = asyncio.get_running_loop()

    def reply_error(msg_id: Value, code: int, message: str) -> None:
        logger.warning("LSP input: %s", message)
        protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def handle(data: Object) -> None:
        try:
            message = protocol.structure_message(data)
        except (JsonRpcException, RecursionError, TypeError, ValueError) as exc:
            if "id" in data and "method" in data:
                code = exc.code if isinstance(exc, JsonRpcInvalidParams) else -32602
                reply_error(data["id"], code, f"invalid params for {data.get('method')}")
            else:
                logger.warning("LSP input: unusable notification %r", data.get("method"))
            return
        try:
            protocol.handle_message(message)
        except Exception:
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
