"""A tiny OpenAI- (and Anthropic-) compatible HTTP server on localhost, for fault injection in executor tests.

Each POST to /v1/chat/completions takes the next scripted behaviour:
`{"content": "..."}` (a normal reply), `{"status": 429}` (an HTTP error),
`{"delay": 2.0, ...}` (answer late), `{"body": "..."}` (a raw, possibly broken,
HTTP body), `{"message": {...}}` (the whole assistant message, e.g. a number as
content), `{"usage": {...}}` (other usage figures), `{"headers": {...}}` (extra
response headers, e.g. Retry-After), `{"close": true}` (hang up without answering). Requests are kept for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    def __init__(self, behaviours: list[dict]) -> None:
        self.behaviours = list(behaviours)
        self.requests: list[dict] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output quiet
                return

            def do_POST(self):  # http.server naming
                length = int(self.headers.get("Content-Length", 0))
                fake.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                b = fake.behaviours.pop(0) if fake.behaviours else {"status": 500}
                if self.path.endswith("/messages") and "content" in b:  # the Anthropic Messages API
                    b = {"body": json.dumps({
                        "id": "msg_1", "type": "message", "role": "assistant", "model": "fake-claude",
                        "content": [{"type": "tool_use", "id": "tu_1", "name": "answer",
                                     "input": json.loads(b["content"])}],
                        "stop_reason": b.get("stop_reason", "tool_use"), "stop_sequence": None,
                        "usage": {"input_tokens": 21, "output_tokens": 7}})}
                if "delay" in b:
                    time.sleep(b["delay"])
                if b.get("close"):  # hang up without an answer (a reset connection)
                    self.close_connection = True
                    return
                if "status" in b:
                    body = json.dumps({"error": {"message": "injected", "type": "server_error"}}).encode()
                    self.send_response(b["status"])
                else:
                    body = b["body"].encode() if "body" in b else json.dumps({
                        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "fake-model",
                        "choices": [{"index": 0, "finish_reason": b.get("finish_reason", "stop"),
                                     "message": b.get("message") or {"role": "assistant", "content": b["content"]}}],
                        "usage": b.get("usage") or {"prompt_tokens": 17, "completion_tokens": 5, "total_tokens": 22},
                    }).encode()
                    self.send_response(200)
                for name, value in b.get("headers", {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except OSError:
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
