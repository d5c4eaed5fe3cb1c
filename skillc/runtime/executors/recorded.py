"""`recorded:DIR` — replay model replies recorded with `tools/standin.py`.

`tools/standin.py DIR` records an exchange: every request the client sent (the chat-completions body) with
the reply written for it, one JSON object per line of `DIR/exchange.jsonl` (`{"n", "request", "reply"}`).
This executor answers each request with its recorded reply. A request matches a recording when the hash of
its **messages** is the same (`message_hash`: roles and contents, canonical JSON; the model name, sampling
parameters, token budgets and the response format are left out, so a recording made with one model or
budget replays under another). System messages are left out of the hash too: the LLM compiler's system
message is the language card, the same for every skill and generated from the grammar and the language
reference, so an edit to the reference would otherwise orphan every recording. A request whose system
message differs from the recording's is still answered and counted in `card_drift` (the reply was given
to the older card: say so when reporting figures from it). Matches are taken in order: the next unused recording \
with that hash, so
the same request asked twice gets the two replies it was given.

A request with no recording raises `NoRecording`, naming the first message that differs from the recording
expected next (its index, role and the first differing characters), so a changed request is visible:
`skillc build` reports it as SKM346. `DIR` may also name the `exchange.jsonl` file itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from pathlib import Path

from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response
from skillc.runtime.jsonvalue import Object
from skillc.runtime.prompts import Request

EXCHANGE = "exchange.jsonl"


class NoRecording(ExecutorError):
    """A request the recorded exchange does not hold (or an exchange that cannot be read)."""


def canonical(messages: Iterable[object]) -> list[Object]:
    """Messages as the hash sees them: role and content only (text parts of a content list joined)."""
    out = []
    for m in messages:
        if not isinstance(m, dict):
            out.append({"role": "?", "content": json.dumps(m, sort_keys=True, ensure_ascii=False)})
            continue
        content = m.get("content")
        if isinstance(content, list):  # [{"type": "text", "text": …}, …]
            content = "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
        out.append({"role": str(m.get("role", "")), "content": "" if content is None else str(content)})
    return out


def message_hash(messages: Iterable[object]) -> str:
    """A stable hash of a request's messages other than system messages (sha256 of their canonical JSON)."""
    kept = [m for m in canonical(messages) if m["role"] != "system"]
    text = json.dumps(kept, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def first_difference(now: Sequence[Object], recorded: Sequence[Object]) -> str:
    """Where a request's messages first differ from a recorded request's, in one line."""
    for i in range(max(len(now), len(recorded))):
        if i >= len(now):
            return f"the recording has a message {i} ({recorded[i]['role']}) that the request does not"
        if i >= len(recorded):
            return f"message {i} ({now[i]['role']}) is not in the recording"
        a, b = now[i], recorded[i]
        if a["role"] == b["role"] == "system":  # not part of the match (see message_hash)
            continue
        if a["role"] != b["role"]:
            return f"message {i} is from {a['role']}, the recording's from {b['role']}"
        if a["content"] != b["content"]:
            x, y = a["content"], b["content"]
            at = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            line = x.count("\n", 0, at) + 1
            return (f"message {i} ({a['role']}) differs at character {at} (line {line}): now "
                    f"{json.dumps(x[at:at + 60], ensure_ascii=False)}, "
                    f"recorded {json.dumps(y[at:at + 60], ensure_ascii=False)}")
    return "the messages are the same"


def load_exchange(path: str | Path) -> list[tuple[list[Object], str, bool]]:
    """The recorded (messages, reply, cut at the reply budget) triples in order; NoRecording when the file cannot be
    used. A record served cut says `"finish_reason": "length"` (tools/standin.py)."""
    p = Path(path)
    if p.is_dir():
        p = p / EXCHANGE
    try:
        lines = p.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise NoRecording(f"cannot read the recorded exchange {p}: {exc}") from None
    out = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise NoRecording(f"{p}:{number} is not JSON ({exc.msg})") from None
        request = record.get("request") if isinstance(record, dict) else None
        reply = record.get("reply") if isinstance(record, dict) else None
        if not isinstance(request, dict) or not isinstance(request.get("messages"), list) or not isinstance(reply, str):
            raise NoRecording(f"{p}:{number} is not a recorded exchange (expected {{\"request\": {{\"messages\": "
                              "[…]}, \"reply\": \"…\"}})")
        out.append((canonical(request["messages"]), reply, record.get("finish_reason") == "length"))
    return out


class RecordedExecutor(BaseExecutor):
    """Answers each request with the reply recorded for the same messages, in recording order."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.records = load_exchange(self.path)
        self.hashes = [message_hash(m) for m, *_ in self.records]
        self.used = [False] * len(self.records)
        self.name = f"recorded:{path}"
        #: Requests answered although their system message (the language card) differs from the recording's.
        self.card_drift = 0

    def take(self, messages: Iterable[object]) -> int | None:
        """The next unused recording whose messages hash like these, now marked used; None when there is none."""
        key = message_hash(messages)
        i = next((i for i, h in enumerate(self.hashes) if h == key and not self.used[i]), None)
        if i is not None:
            self.used[i] = True
        return i

    def complete(self, request: Request) -> Response:
        i = self.take(request.messages)
        if i is not None:
            system = [m for m in canonical(request.messages) if m["role"] == "system"]
            if system != [m for m in self.records[i][0] if m["role"] == "system"]:
                self.card_drift += 1
            return Response(self.records[i][1], model="recorded", cut=self.records[i][2])
        nxt = next((i for i, used in enumerate(self.used) if not used), None)
        where = f"request for `{request.state}` has no recorded reply in {self.path}"
        if nxt is None:
            raise NoRecording(f"{where}: all {len(self.records)} recorded replies are used")
        raise NoRecording(f"{where}; against recording {nxt + 1}: "
                          f"{first_difference(canonical(request.messages), self.records[nxt][0])}")


__all__ = ["NoRecording", "RecordedExecutor", "first_difference", "load_exchange", "message_hash"]
