"""`skillc serve --mcp` as a real subprocess, driven by the MCP SDK's own client (stdio or streamable HTTP)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

pytest.importorskip("mcp", reason="the mcp extra (pip install 'skillc[mcp]')")

from mcp.client.stdio import StdioServerParameters

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ANSWER, DEPLOY, SLOW = (str(FIXTURES / n) for n in ("answer.skm", "deploy.skm", "slow.skm"))
SCRIPT = f"scripted:{FIXTURES / 'answer.json'}"
#: Both protocol eras the SDK client speaks: the initialize handshake (2025-11-25) and 2026-07-28 (`auto` probes).
ERAS = ("legacy", "auto")


def server_env() -> dict[str, str]:
    """The environment of a served subprocess: skillc importable, no colour."""
    return {"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


def stdio(*machines: str, executor: str = SCRIPT, root: Path, extra: tuple[str, ...] = ()) -> StdioServerParameters:
    """How the SDK's client starts `python -m skillc serve --mcp MACHINES…` over stdio."""
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "skillc", "serve", "--mcp", *machines, "--executor", executor,
                                       "--workdir", str(root), *extra],
                                 env=server_env(), cwd=str(ROOT))


def alive(pid: int) -> bool:
    """Whether a process (not a zombie) with this id runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture
def serve_root(tmp_path: Path) -> Iterator[Path]:
    """The server's root; any process a test's run left behind (listed in pid files) is killed at the end."""
    root = tmp_path / "root"
    yield root
    for pid_file in root.glob("calls/*/work/*.txt"):
        text = pid_file.read_text(errors="replace").strip()
        if text.isdigit() and alive(int(text)):
            os.kill(int(text), signal.SIGKILL)


def structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content[0].text if result.content else result
    assert isinstance(result.structured_content, dict)
    return result.structured_content
