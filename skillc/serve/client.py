"""MCP tools inside machines, at run time: start the server a tool names, call it, stop it — bounded, coded.

A run's tool box gets one `McpTool` per `tool … from mcp "SERVER"` declaration. The first call of a server's
tool starts the server (the SDK's stdio client: its own process group, stdin closed then the group terminated and
killed when it stops), finishes the handshake and lists its tools within the server's `start-timeout`, and
compares the declaration with the listed schema (`schemas.py`, SKM896) before anything is called. Each call is
bounded by the run's tool timeout. Every server a run started is stopped when the run ends (`Pool.close`, called
by `ToolBox.close`).

Failures are `McpToolError`s (a `ToolError`: the step fails with kind `tool`, the run goes to the fallback, its
trace and journal intact), their message begun with the code: SKM894 (did not start), SKM895 (died or broke the
connection mid-call), SKM896 (schema), SKM897 (did not answer in time), SKM898 (no such tool). The server's
stderr is kept in a temporary file and its last lines are quoted in the message.

The SDK is asynchronous and the runtime is not: each server is driven from the run's thread through a blocking
portal (an event loop in a thread of its own), which `close` ends.
"""

from __future__ import annotations

import atexit
import math
import os
import tempfile
import threading
import time
import weakref
from concurrent.futures import Future
from contextlib import AbstractContextManager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs
import jsonschema

from skillc.diagnostics.code import Code
from skillc.ir.machine import Machine, Tool
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.tools import KitTool, ToolError
from skillc.serve import codes
from skillc.serve.mcpconfig import McpServer, servers_near, tool_record
from skillc.serve.schemas import input_problems, output_problems, results

if TYPE_CHECKING:  # the MCP SDK (an extra) is imported when a server starts
    import anyio
    from anyio.abc import TaskStatus
    from anyio.from_thread import BlockingPortal
    from mcp_types import CallToolResult
    from mcp_types import Tool as ListedTool

#: Seconds `close` lets a server take to stop (the SDK's own bounds: stdin closed, then SIGTERM, then SIGKILL).
STOP_BOUND_S = 10.0


class McpToolError(ToolError):
    """An MCP tool could not be called; `code` is its SKM89x code (the message begins with it)."""

    def __init__(self, code: Code, message: str) -> None:
        super().__init__(f"error[{code}]: {message}")
        self.code = code


def _tail(log: IO[str], limit: int = 600) -> str:
    """The last characters the server wrote on stderr, as a quoted note (empty when it wrote nothing)."""
    try:
        log.flush()
        log.seek(0)
        text = log.read()
    except (OSError, ValueError):
        return ""
    text = text.strip()
    if not text:
        return ""
    return f"; its stderr ends: {text[-limit:]!r}"


class Connection:
    """One running MCP server, driven from synchronous code."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.tools: dict[str, Object] = {}
        self.broken: McpToolError | None = None
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = None
        self._portal: Any = None  # the BlockingPortal while the server runs (a call after `close` fails as died)
        self._client: Any = None  # the SDK's `Client` once the handshake is done
        self._closing: anyio.Event | None = None
        self._held: Future[None] | None = None
        # the server's stderr for the whole session, closed in `close` (no `with`: it outlives this method)
        self._log = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")  # noqa: SIM115
        self._lock = threading.Lock()

    # ------------------------------------------------------------ start

    def open(self) -> dict[str, Object]:
        """Start the server, finish the handshake and list its tools (their lock records), within the server's
        start timeout; McpToolError SKM894 otherwise (what was started is stopped)."""
        import anyio.from_thread  # the MCP extra: imported when a server starts

        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self._portal = portal = self._portal_cm.__enter__()
        started = time.monotonic()
        try:
            self._held, listed = portal.start_task(self._hold)
        except BaseException as exc:  # noqa: BLE001 - whatever kept it from starting is the diagnostic
            self._end_portal()
            self.broken = McpToolError(codes.MCP_SERVER_NOT_STARTED, self._why_not_started(exc, started))
            raise self.broken from None
        self.tools = {t.name: tool_record(t) for t in listed}
        _remember(self)
        return self.tools

    def _why_not_started(self, exc: BaseException, started: float) -> str:
        command = " ".join(self.server.command)
        head = f"the MCP server `{self.server.name}` ({command}) "
        if isinstance(exc, TimeoutError):
            why = f"did not finish the MCP handshake and list its tools within {self.server.start_timeout_s:g} s"
        elif isinstance(exc, FileNotFoundError):
            why = f"could not be started: no program {self.server.command[0]!r}"
        elif isinstance(exc, PermissionError):
            why = f"could not be started: {self.server.command[0]!r} is not executable"
        elif isinstance(exc, OSError):
            why = f"could not be started: {exc.strerror or exc}"
        else:
            leaf = _leaf(exc)
            why = f"stopped before it answered the MCP handshake ({type(leaf).__name__}: {leaf})"
        return head + why + _tail(self._log)

    async def _hold(self, *, task_status: TaskStatus[list[ListedTool]]) -> None:
        import anyio  # the MCP extra, as the SDK below
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        self._closing = closing = anyio.Event()
        params = StdioServerParameters(command=self.server.command[0], args=list(self.server.command[1:]),
                                       env=self.server.environment() or None, cwd=self.server.cwd)
        with anyio.CancelScope(deadline=anyio.current_time() + self.server.start_timeout_s) as scope:
            async with Client(stdio_client(params, errlog=self._log), mode="legacy") as client:
                listed: list[ListedTool] = []
                cursor = None
                for _ in range(100):  # a paginator that never ends cannot hang the start
                    page = await client.list_tools(cursor=cursor)
                    listed += page.tools
                    cursor = page.next_cursor
                    if cursor is None:
                        break
                scope.deadline = math.inf
                self._client = client
                task_status.started(listed)
                await closing.wait()
        if scope.cancelled_caught:
            raise TimeoutError()

    # ------------------------------------------------------------ calls

    def check(self, remote: str, declared: Tool) -> None:
        """SKM898 when the server lists no `remote` tool, SKM896 when the declaration does not fit its schema."""
        record = self.tools.get(remote)
        if record is None:
            listed = ", ".join(f"`{t}`" for t in sorted(self.tools)) or "none"
            raise McpToolError(codes.MCP_TOOL_UNKNOWN, f"the MCP server `{self.server.name}` lists no tool "
                                                            f"`{remote}` (it lists {listed})")
        problems = input_problems(declared, record.get("inputSchema", {}))
        problems += output_problems(declared, record.get("outputSchema"))
        if problems:
            raise McpToolError(codes.MCP_TOOL_MISMATCH, f"`{declared.name}` does not fit the tool `{remote}` of "
                                                             f"the MCP server `{self.server.name}`: "
                                                             + "; ".join(problems))

    def call(self, remote: str, args: Object, timeout_s: float) -> CallToolResult:
        """Call a tool; its `CallToolResult`. McpToolError SKM897 after `timeout_s`, SKM895 when the server died or
        broke the connection (the server is then stopped; later calls fail the same way)."""
        with self._lock:
            if self.broken is not None:
                raise self.broken
            try:
                return self._portal.call(self._call, remote, args, timeout_s)
            except TimeoutError:
                self.broken = McpToolError(codes.MCP_CALL_TIMEOUT,
                                           f"the MCP server `{self.server.name}` did not answer `{remote}` within "
                                           f"{timeout_s:g} s; it was stopped" + _tail(self._log))
            except BaseException as exc:  # noqa: BLE001 - a broken connection, a dead process, a bad answer
                leaf = _leaf(exc)
                if _answered(leaf):  # the server answered, with an error or results that fail their schema
                    raise McpToolError(codes.MCP_TOOL_MISMATCH,
                                       f"the MCP server `{self.server.name}` answered `{remote}` with results that do "
                                       f"not fit its own output schema: {leaf}") from None
                self.broken = McpToolError(codes.MCP_SERVER_DIED,
                                           f"the MCP server `{self.server.name}` stopped during the call of `{remote}` "
                                           f"({type(leaf).__name__}: {leaf})" + _tail(self._log))
        self.close()
        raise self.broken

    async def _call(self, remote: str, args: Object, timeout_s: float) -> CallToolResult:
        import anyio  # the MCP extra: imported when a server starts

        with anyio.fail_after(timeout_s):
            return await self._client.call_tool(remote, args)

    # ------------------------------------------------------------ stop

    def close(self) -> None:
        """Stop the server (bounded) and the portal; idempotent."""
        if self._portal is not None and self._closing is not None:
            try:
                self._portal.call(self._closing.set)
            except BaseException:  # noqa: BLE001 - the loop may have ended with the server
                pass
            if self._held is not None:
                try:
                    self._held.result(timeout=STOP_BOUND_S)
                except BaseException:  # noqa: BLE001 - stopped is stopped
                    pass
        self._end_portal()

    def _end_portal(self) -> None:
        _OPEN.discard(self)
        cm, self._portal_cm, self._portal = self._portal_cm, None, None
        if cm is not None:
            try:
                cm.__exit__(None, None, None)
            except BaseException:  # noqa: BLE001 - the loop's tasks ended with errors already reported
                pass


#: Servers started and not stopped yet: stopped at exit when their run never closed its tool box (a program that
#: drives a tool box itself), so no server outlives the process.
_OPEN: weakref.WeakSet[Connection] = weakref.WeakSet()


def _remember(conn: Connection) -> None:
    if not _OPEN and not _EXIT_HOOK:
        atexit.register(_close_open)
        _EXIT_HOOK.append(True)
    _OPEN.add(conn)


_EXIT_HOOK: list[bool] = []


def _close_open() -> None:
    for conn in list(_OPEN):
        conn.close()


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside `exc`."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _answered(exc: BaseException) -> bool:
    """An error raised after the server answered (its results failed their output schema)."""
    try:
        from pydantic import ValidationError  # the MCP SDK's dependency (an extra)
    except ImportError:  # pragma: no cover - the SDK needs pydantic
        return False

    return isinstance(exc, (ValidationError, jsonschema.ValidationError)) or (
        isinstance(exc, RuntimeError) and any(w in str(exc).lower() for w in ("output schema", "structured content")))


@attrs.define
class Pool:
    """The servers one run started, each once (on its first call), all stopped by `close`."""

    servers: dict[str, McpServer]
    connections: dict[str, Connection] = attrs.Factory(dict)
    failures: dict[str, McpToolError] = attrs.Factory(dict)

    def connection(self, name: str) -> Connection:
        if name in self.failures:
            raise self.failures[name]
        found = self.connections.get(name)
        if found is not None:
            return found
        server = self.servers.get(name)
        if server is None:
            raise McpToolError(codes.MCP_TOOL_UNKNOWN,
                               f"no MCP server `{name}` is configured "
                               f"([tool.skillc.mcp.{name}] in pyproject.toml or [mcp.{name}] "
                               "in skillc.toml)")
        conn = Connection(server)
        try:
            conn.open()
        except McpToolError as exc:
            self.failures[name] = exc
            raise
        self.connections[name] = conn
        return conn

    def close(self) -> None:
        for conn in self.connections.values():
            conn.close()
        self.connections.clear()


class McpTool(KitTool):
    """A machine's tool served by an MCP server: `invoke` returns its declared results and the call's effect
    (`op: mcp`, the server, the server's tool name, whether it answered with an error, how long it took)."""

    bounded = True  # the tool box adds no timeout of its own: every wait here is bounded

    def __init__(self, pool: Pool, server: str, remote: str, declared: Tool, timeout_s: float = 60.0) -> None:
        self.pool = pool
        self.server = server
        self.remote = remote
        self.declared = declared
        self.timeout_s = timeout_s
        self._checked = False

    def invoke(self, **args: Value) -> tuple[Object, Object]:
        started = time.monotonic()
        conn = self.pool.connection(self.server)
        if not self._checked:
            conn.check(self.remote, self.declared)
            self._checked = True
        sent = {k: v for k, v in args.items() if v is not None}  # an optional parameter left out is not sent
        result = conn.call(self.remote, sent, self.timeout_s)
        texts = [getattr(b, "text", "") for b in (result.content or []) if getattr(b, "type", None) == "text"]
        effect: Object = {"op": "mcp", "server": self.server, "tool": self.remote,
                                  "duration_ms": round((time.monotonic() - started) * 1000, 1)}
        if result.is_error:
            effect["is_error"] = True
            raise ToolError(f"the MCP tool `{self.remote}` of `{self.server}` answered with an error: "
                            + ("\n".join(texts)[:2000] or "(no text)"), effects=(effect,))
        if result.structured_content is not None:
            effect["structured"] = True
        return results(self.declared, result.structured_content, texts), effect

    def close(self) -> None:
        self.pool.close()


_LISTED: dict[McpServer, dict[str, Object] | McpToolError] = {}


def list_tools(server: McpServer) -> dict[str, Object]:
    """Start a server, list its tools (their lock records) and stop it, all bounded; McpToolError (SKM894) when it
    cannot be started. Asked once per server and process (`skillc check` of many files starts each server once)."""
    found = _LISTED.get(server)
    if found is None:
        conn = Connection(server)
        try:
            found = conn.open()
        except McpToolError as exc:
            found = exc
        finally:
            conn.close()
        _LISTED[server] = found
    if isinstance(found, McpToolError):
        raise found
    return found


def mcp_tools(machine: Machine, *, workdir: str | os.PathLike[str] | None = None,
              timeout_s: float = 60.0) -> dict[str, McpTool]:
    """The `McpTool`s of a machine's `from mcp` declarations, sharing one `Pool` (servers from the configuration
    governing the machine's file, else the work folder)."""


    where = Path(machine.path) if machine.path else Path(workdir or ".")
    servers, _ = servers_near(where.resolve())
    pool = Pool(servers)
    return {t.name: McpTool(pool, t.mcp, t.mcp_name, t, timeout_s) for t in machine.tools.values() if t.mcp}
