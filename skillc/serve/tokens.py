"""Resume tokens: a waiting run, named so that only the server that holds its journal can continue it.

A token is `PAYLOAD.SIGNATURE`: the payload (base64url JSON) names the machine and the run id in the server's
journal, the signature is an HMAC-SHA256 of the payload under the server's key. The key is 32 random bytes in
`ROOT/serve.key` (0600, made on first use), so tokens outlive a restart of the same server (same `--workdir`)
and a token of another server, or one changed in any byte, is refused (SKM893). The token says nothing secret:
it only names the run; "once" is the journal's (`Journal.answer` takes an answer once, under the run's lease).

The same signing names live calls in the 2026-07-28 protocol's `requestState` (`live`: a call parked while the
client's model answers a sampling request).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from pathlib import Path

import attrs

KEY_FILE = "serve.key"


class TokenError(ValueError):
    """A token this server did not sign, or that does not name a run."""


@attrs.frozen
class Token:
    """What a token names: the kind (`run`: a waiting run in the journal; `live`: a parked call), the machine
    and the run id (or the live call's id)."""

    kind: str
    machine: str
    ident: str


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def load_key(root: Path | None) -> bytes:
    """The server's signing key: `ROOT/serve.key`, made (0600) when missing; a fresh key for a server without a
    root of its own (a temporary one), whose tokens then die with it."""
    if root is None:
        return secrets.token_bytes(32)
    path = root / KEY_FILE
    try:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(32)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, key)
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        os.link(tmp, path)  # first writer wins: two servers starting on one root agree on one key
    except FileExistsError:
        pass
    finally:
        os.unlink(tmp)
    return path.read_bytes()


class Signer:
    """Makes and reads tokens under one key."""

    def __init__(self, key: bytes) -> None:
        self.key = key

    def _sign(self, payload: str) -> str:
        return _b64(hmac.new(self.key, payload.encode("ascii"), hashlib.sha256).digest()[:20])

    def make(self, kind: str, machine: str, ident: str) -> str:
        """A token naming `ident` (a run id, or a live call) of `machine`."""
        payload = _b64(json.dumps({"k": kind, "m": machine, "i": ident}, separators=(",", ":")).encode("utf-8"))
        return f"{payload}.{self._sign(payload)}"

    def read(self, token: str, kind: str | None = None) -> Token:
        """What a token names; TokenError for one this key did not sign (or of another kind than `kind`)."""
        if not isinstance(token, str) or token.count(".") != 1 or len(token) > 4096:
            raise TokenError("it is not a resume token of this server")
        payload, signature = token.split(".")
        if not hmac.compare_digest(self._sign(payload), signature):
            raise TokenError("it is not a resume token of this server (its signature does not match)")
        try:
            data = json.loads(_unb64(payload))
        except ValueError:
            raise TokenError("it is not a resume token of this server") from None
        if not isinstance(data, dict) or not all(isinstance(data.get(k), str) for k in ("k", "m", "i")):
            raise TokenError("it is not a resume token of this server")
        if kind is not None and data["k"] != kind:
            raise TokenError(f"it names a {data['k']} call, not a {kind} one")
        return Token(data["k"], data["m"], data["i"])
