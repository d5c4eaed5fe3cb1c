"""A stand-in OpenAI-compatible endpoint for recording what a capable model answers, offline.

There is no network model here. To record a real exchange, run the build against this server:
each POST to `/v1/chat/completions` is written to `DIR/requests/NNN.json` and the server waits
until `DIR/replies/NNN.txt` exists (written by whoever plays the model — a person, or a helper
that sees only the request), then serves that text as the assistant's message. When the
client is done, `DIR/exchange.jsonl` holds every request with its reply, in order: the fixture
a recorded-model executor replays.

    python tools/standin.py DIR [--port 0] [--wait 3600]

It prints `listening on http://127.0.0.1:PORT/v1` once ready and serves until killed. Only
the loopback interface is bound.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class StandIn:
    """Requests to files, reply files to responses; one exchange log."""

    def __init__(self, folder: Path, wait_s: float) -> None:
        self.folder, self.wait_s = folder, wait_s
        (folder / "requests").mkdir(parents=True, exist_ok=True)
        (folder / "replies").mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.count = len(list((folder / "requests").glob("*.json")))

    def exchange(self, request: dict) -> str | None:
        """Write the request, wait for its reply; None when nobody answered in time."""
        with self.lock:
            self.count += 1
            number = self.count
        name = f"{number:03d}"
        (self.folder / "requests" / f"{name}.json").write_text(json.dumps(request, indent=1, ensure_ascii=False),
                                                               encoding="utf-8")
        reply = self.folder / "replies" / f"{name}.txt"
        until = time.monotonic() + self.wait_s
        while not reply.exists():
            if time.monotonic() > until:
                return None
            time.sleep(0.5)
        time.sleep(0.2)  # let the writer finish
        text = reply.read_text(encoding="utf-8")
        with self.lock, (self.folder / "exchange.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps({"n": number, "request": request, "reply": text}, ensure_ascii=False) + "\n")
        return text


def serve(folder: Path, port: int, wait_s: float) -> None:
    """Serve until interrupted."""
    standin = StandIn(folder, wait_s)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_POST(self) -> None:  # http.server naming
            length = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(length) or b"{}")
            text = standin.exchange(request)
            if text is None:
                body = json.dumps({"error": {"message": "no reply was written in time", "type": "timeout"}})
                self.send_response(504)
            else:
                body = json.dumps({
                    "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
                    "model": request.get("model", "standin"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": len(json.dumps(request)) // 4, "completion_tokens": len(text) // 4,
                              "total_tokens": (len(json.dumps(request)) + len(text)) // 4},
                })
                self.send_response(200)
            data = body.encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"listening on http://127.0.0.1:{server.server_address[1]}/v1", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record model exchanges offline through reply files.")
    parser.add_argument("folder", type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--wait", type=float, default=3600.0, help="seconds to wait for each reply file")
    args = parser.parse_args(argv)
    serve(args.folder, args.port, args.wait)
    return 0


if __name__ == "__main__":
    sys.exit(main())
