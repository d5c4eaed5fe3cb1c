"""The MCP servers a project names, and the lock file of their tools' schemas. A leaf: no MCP SDK, no checker.

    [tool.skillc.mcp.docs]                   # in pyproject.toml; `[mcp.docs]` in skillc.toml
    command = ["python", "docs_server.py"]   # the server, speaking MCP over stdin/stdout (required)
    cwd = "tools"                            # its folder, relative to the configuration's (default: that folder)
    env = { DOCS_ROOT = "docs" }             # extra environment variables
    pass-env = ["DOCS_TOKEN"]                # variables passed on from skillc's environment (secrets stay out of
                                             # the file); the rest is the MCP SDK's safe default (PATH, HOME, …)
    start-timeout = 30                       # seconds to start, finish the handshake and list the tools

`skillc.mcp.lock` (JSON, beside the configuration) keeps what `skillc check` last listed from each server: every
tool's input and output schema, so a check without the server (CI, offline) still compares the machine's calls
with them. It is written only when what a server lists changed, sorted, without timestamps.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

import attrs

from skillc.ir.loader import project_root
from skillc.runtime.jsonvalue import Object, Value

if TYPE_CHECKING:  # a leaf: the MCP SDK is not imported here
    from mcp_types import Tool

LOCK_NAME: Final = "skillc.mcp.lock"
LOCK_VERSION: Final = 1
DEFAULT_START_TIMEOUT_S: Final = 30.0
_KEYS: Final = ("command", "cwd", "env", "pass-env", "start-timeout")


@attrs.frozen
class McpServer:
    """One configured server: how to start it."""

    name: str
    command: tuple[str, ...]
    cwd: str | None = None  # absolute
    env: tuple[tuple[str, str], ...] = ()
    pass_env: tuple[str, ...] = ()
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S

    def environment(self) -> dict[str, str]:
        """The extra variables the server gets: `env`, then `pass-env` from skillc's own environment."""
        out = dict(self.env)
        out.update((k, os.environ[k]) for k in self.pass_env if k in os.environ)
        return out


def parse_servers(table: Value, base: Path) -> tuple[dict[str, McpServer], list[tuple[tuple[str, ...], str]]]:
    """The servers of an `mcp` table (paths relative to `base`), and each problem as (keys, message)."""
    servers: dict[str, McpServer] = {}
    problems: list[tuple[tuple[str, ...], str]] = []
    if not isinstance(table, dict):
        return servers, [((), "`mcp` must be a table of servers: [tool.skillc.mcp.NAME] command = [\"prog\", …]")]
    for name, entry in table.items():
        keys = (name,)
        if not isinstance(entry, dict):
            problems.append((keys, f"`mcp.{name}` must be a table with a `command`"))
            continue
        unknown = [k for k in entry if k not in _KEYS]
        for k in unknown:
            problems.append(((name, k), f"unknown setting `mcp.{name}.{k}` (known: {', '.join(_KEYS)})"))
        command = entry.get("command")
        if not (isinstance(command, list) and command and all(isinstance(a, str) and a for a in command)):
            problems.append(((name, "command") if "command" in entry else keys,
                             f"`mcp.{name}.command` must be a non-empty list of strings (the program and its "
                             "arguments)"))
            continue
        cwd = entry.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            problems.append(((name, "cwd"), f"`mcp.{name}.cwd` must be a folder (a string)"))
            continue
        env = entry.get("env", {})
        if not (isinstance(env, dict) and all(isinstance(v, str) for v in env.values())):
            problems.append(((name, "env"), f"`mcp.{name}.env` must be a table of strings"))
            continue
        pass_env = entry.get("pass-env", [])
        if not (isinstance(pass_env, list) and all(isinstance(v, str) for v in pass_env)):
            problems.append(((name, "pass-env"), f"`mcp.{name}.pass-env` must be a list of variable names"))
            continue
        timeout = entry.get("start-timeout", DEFAULT_START_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
            problems.append(((name, "start-timeout"), f"`mcp.{name}.start-timeout` must be seconds in (0, 3600]"))
            continue
        folder = (base / cwd) if cwd is not None else base
        servers[name] = McpServer(name, tuple(command), str(folder.resolve()),
                                  tuple(sorted((str(k), v) for k, v in env.items())), tuple(pass_env),
                                  float(timeout))
    return servers, problems


def config_file(start: Path) -> tuple[Path | None, Value]:
    """The configuration governing `start` (the project root's skillc.toml, else pyproject.toml) and its `mcp`
    table (None when it has none or cannot be read: `skillc check` reports a bad file)."""


    root = project_root(start if not start.is_dir() else start / "_")
    for name in ("skillc.toml", "pyproject.toml"):
        path = root / name
        if path.is_file():
            try:
                data = tomllib.loads(path.read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
                return path, None
            if name == "pyproject.toml":
                tool = data.get("tool", {})
                data = tool.get("skillc", {}) if isinstance(tool, dict) else {}
            return path, data.get("mcp") if isinstance(data, dict) else None
    return None, None


def servers_near(start: Path) -> tuple[dict[str, McpServer], Path | None]:
    """The servers configured for a machine at `start`, and the configuration file (None: there is none)."""
    path, table = config_file(start)
    if path is None or table is None:
        return {}, path
    servers, _ = parse_servers(table, path.parent)
    return servers, path


# ---------------------------------------------------------------- the lock file

def lock_path(config: Path) -> Path:
    return config.parent / LOCK_NAME


def read_lock(path: Path) -> tuple[dict[str, Object], str | None]:
    """The tools each server listed when the lock was written: server → tool → {inputSchema, outputSchema,
    description}; and why the file cannot be used (None: it can, or there is none)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return {}, f"{path} cannot be read: {exc}"
    if not isinstance(data, dict) or data.get("version") != LOCK_VERSION or not isinstance(data.get("servers"), dict):
        return {}, f"{path} is not a skillc MCP lock file of version {LOCK_VERSION}"
    servers: dict[str, Object] = {}
    for name, entry in data["servers"].items():
        tools = entry.get("tools") if isinstance(entry, dict) else None
        if isinstance(tools, dict):
            servers[name] = {t: v for t, v in tools.items() if isinstance(v, dict)}
    return servers, None


def tool_record(tool: Tool | Mapping[str, Value]) -> Object:
    """What the lock keeps of one listed tool (an `mcp_types.Tool`, or its JSON)."""
    record = tool if isinstance(tool, Mapping) else tool.model_dump(by_alias=True, mode="json", exclude_none=True)
    out = {"inputSchema": record.get("inputSchema", {})}
    if record.get("outputSchema") is not None:
        out["outputSchema"] = record["outputSchema"]
    if record.get("description"):
        out["description"] = record["description"]
    return out


def write_lock(path: Path, server: McpServer, tools: Mapping[str, Mapping[str, Value]]) -> bool:
    """Record what `server` lists now; True when the file changed (it is rewritten atomically, sorted)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("version") != LOCK_VERSION or not isinstance(data.get("servers"),
                                                                                               dict):
            data = {}
    except (OSError, UnicodeDecodeError, ValueError):
        data = {}
    data = {"version": LOCK_VERSION, "servers": dict(data.get("servers", {}))}
    entry = {"command": list(server.command), "tools": {name: dict(t) for name, t in sorted(tools.items())}}
    if data["servers"].get(server.name) == entry:
        return False
    data["servers"][server.name] = entry
    text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
    return True
