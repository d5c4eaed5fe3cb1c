"""MCP tools: a machine's `tool NAME(…) -> (…) from mcp "SERVER"` against the schemas its server lists.

For each such tool: the server must be configured (`[tool.skillc.mcp.SERVER]`, SKM898); its tools are listed
live when the check may start servers (`skillc check`: started, listed and stopped within the server's
`start-timeout`; what it lists is written to `skillc.mcp.lock`), else — or when the server cannot be started
(SKM894, a warning) — read from the lock file; without either the calls stay unchecked against the server
(SKM899, a warning). A listed tool of that name must exist (SKM898) and the declaration must fit its input and
output schemas (SKM896, one finding per tool naming every misfit). The comparison is `skillc.serve.schemas`'s,
the one the runtime makes again when it starts the server.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import TYPE_CHECKING

from skillc.check.context import CheckContext
from skillc.diagnostics import Diagnostic, make
from skillc.ir.machine import Machine, Tool

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object


def check_mcp_tools(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Every MCP tool of `m` is served by a configured server, which lists it with schemas its declaration fits."""
    tools = [t for t in m.tools.values() if t.mcp is not None]
    if not tools:
        return
    from skillc.serve import codes  # skillc.serve loads only for machines with MCP tools (start-up)
    from skillc.serve.mcpconfig import lock_path, read_lock, write_lock

    context = context or CheckContext()
    servers = context.mcp_servers
    lock = lock_path(context.mcp_config) if context.mcp_config is not None else None
    locked, lock_problem = read_lock(lock) if lock is not None else ({}, None)
    listings: dict[str, dict[str, Object] | None] = {}
    warned: set[str] = set()
    for tool in tools:
        assert tool.mcp is not None
        server = servers.get(tool.mcp)
        if server is None:
            known = ", ".join(f"`{s}`" for s in sorted(servers)) or "none is configured"
            yield make(codes.MCP_TOOL_UNKNOWN, f"`{tool.name}` is served by the MCP server `{tool.mcp}`, which the "
                       f"configuration does not name (servers: {known})", tool.span, label="unknown MCP server",
                       hint=f"add [tool.skillc.mcp.{tool.mcp}] command = [...] to pyproject.toml (or [mcp.{tool.mcp}] "
                            "to skillc.toml)")
            continue
        if tool.mcp not in listings:
            listing: dict[str, Object] | None = None
            if context.mcp_live:
                from skillc.serve.client import McpToolError, list_tools  # only when servers start

                try:
                    listing = list_tools(server)
                except McpToolError as exc:
                    yield make(codes.MCP_SERVER_NOT_STARTED, str(exc).removeprefix(f"error[{exc.code}]: "), tool.span,
                               label="server not started", hint="the lock file's schemas are used instead, if any")
                else:
                    if lock is not None:
                        write_lock(lock, server, listing)
            if listing is None:
                listing = locked.get(tool.mcp)
            listings[tool.mcp] = listing
        listing = listings[tool.mcp]
        if listing is None:
            if tool.mcp not in warned:
                warned.add(tool.mcp)
                why = lock_problem or (f"{lock} has no entry for it" if lock is not None else "there is no lock file")
                yield make(codes.MCP_LOCK_PROBLEM, f"the calls of the MCP server `{tool.mcp}`'s tools are not checked "
                           f"against its schemas: it was not started here and {why}", tool.span,
                           label="schema unknown")
            continue
        yield from _fits(tool, listing, codes)


def _fits(tool: Tool, listing: dict[str, Object], codes: ModuleType) -> Iterator[Diagnostic]:
    from skillc.serve.schemas import input_problems, output_problems  # start-up: see check_mcp_tools

    record = listing.get(tool.mcp_name)
    if record is None:
        listed = ", ".join(f"`{t}`" for t in sorted(listing)) or "none"
        yield make(codes.MCP_TOOL_UNKNOWN, f"the MCP server `{tool.mcp}` lists no tool `{tool.mcp_name}` (it lists "
                   f"{listed})", tool.span, label="not listed by the server",
                   hint='name one of its tools, or map this one with `as "NAME"`')
        return
    problems = input_problems(tool, record.get("inputSchema", {})) + output_problems(tool, record.get("outputSchema"))
    if problems:
        yield make(codes.MCP_TOOL_MISMATCH, f"`{tool.name}` does not fit the tool `{tool.mcp_name}` of the MCP server "
                   f"`{tool.mcp}`: " + "; ".join(problems), tool.span, label="does not fit the server's schema")
