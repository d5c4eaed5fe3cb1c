"""Reading input files: a folder or an unreadable path becomes a diagnostic, never an exception."""

from __future__ import annotations

from pathlib import Path

from skillc.diagnostics.diagnostic import Diagnostic, make


def read_bytes(path: str | Path, *, folder: str, code: str = "SKM901") -> tuple[bytes | None, Diagnostic | None]:
    """The bytes of `path`, or None and a `code` diagnostic; `folder` completes "PATH is …" for a folder."""
    try:
        return Path(path).read_bytes(), None
    except IsADirectoryError:
        return None, make(code, f"{path} is {folder}")
    except OSError as exc:
        return None, make(code, f"cannot read {path}: {exc.strerror or exc}")
