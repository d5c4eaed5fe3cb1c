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

A reply longer than the request's `max_tokens` is cut there and served with `finish_reason: "length"`, as a
real endpoint does, and the log holds what was served. Tokens are counted with the bundled local model's
tokenizer (a 262k vocabulary, like today's capable models'; the `local` extra) when it is installed, else as
four characters a token.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class Tokens:
    """Counts and cuts reply text in tokens: the bundled local model's tokenizer, else four characters a token."""

    def __init__(self, local: bool = True) -> None:
        self.vocab = None
        if not local:
            return
        try:
            from skillc.runtime.executors.local import vocabulary

            self.vocab = vocabulary()
        except Exception:  # noqa: BLE001 - no local extra (or no model): the estimate
            self.vocab = None

    def _ids(self, text: str) -> list[int]:
        assert self.vocab is not None
        return self.vocab.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def count(self, text: str) -> int:
        """How many tokens `text` is."""
        return len(self._ids(text)) if self.vocab is not None else (len(text) + 3) // 4

    def cut(self, text: str, budget: int) -> str:
        """The first `budget` tokens of `text`."""
        if self.vocab is None:
            return text[:budget * 4]
        return self.vocab.detokenize(self._ids(text)[:budget]).decode("utf-8", errors="ignore")


class StandIn:
    """Requests to files, reply files to responses (cut at the request's `max_tokens`); one exchange log."""

    def __init__(self, folder: Path, wait_s: float, tokens: Tokens | None = None) -> None:
        self.folder, self.wait_s = folder, wait_s
        self.tokens = tokens or Tokens()
        (folder / "requests").mkdir(parents=True, exist_ok=True)
        (folder / "replies").mkdir(parents=True, exist_ok=True)
        self.lock = threading.Lock()
        self.count = len(list((folder / "requests").glob("*.json")))

    def exchange(self, request: dict) -> str | None:
        """Write the request, wait for its reply (cut at its `max_tokens`); None when nobody answered in time."""
        answered = self.answer(request)
        return answered[0] if answered else None

    def answer(self, request: dict) -> tuple[str, str] | None:
        """`exchange`, with the finish reason served (`stop`, or `length` for a reply cut at its budget)."""
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
        budget = request.get("max_tokens")
        record: dict = {"n": number, "request": request, "reply": text}
        if isinstance(budget, int) and budget > 0 and (used := self.tokens.count(text)) > budget:
            text = self.tokens.cut(text, budget)
            record.update(reply=text, finish_reason="length", reply_tokens=used)
            print(f"reply {name}: {used} tokens, cut at max_tokens {budget}", file=sys.stderr, flush=True)
        with self.lock, (self.folder / "exchange.jsonl").open("a", encoding="utf-8") as log:
            log.write(json.dumps(record, ensure_ascii=False) + "\n")
        return text, record.get("finish_reason", "stop")


def serve(folder: Path, port: int, wait_s: float) -> None:
    """Serve until interrupted."""
    standin = StandIn(folder, wait_s)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            return

        def do_POST(self) -> None:  # http.server naming
            length = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(length) or b"{}")
            answered = standin.answer(request)
            if answered is None:
                body = json.dumps({"error": {"message": "no reply was written in time", "type": "timeout"}})
                self.send_response(504)
            else:
                text, finish = answered
                body = json.dumps({
                    "id": "chatcmpl-standin", "object": "chat.completion", "created": int(time.time()),
                    "model": request.get("model", "standin"),
                    "choices": [{"index": 0, "finish_reason": finish,
                                 "message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": len(json.dumps(request)) // 4,
                              "completion_tokens": standin.tokens.count(text),
                              "total_tokens": len(json.dumps(request)) // 4 + standin.tokens.count(text)},
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
