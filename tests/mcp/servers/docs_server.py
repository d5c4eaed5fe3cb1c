"""A small MCP server over stdio, written with the SDK's low-level server: `python docs_server.py [MODE]`.

Tools: `search(query: str, limit: int = 3) -> text` and `lookup(key: str) -> {title: str, words: int}`
(structured, with an output schema). MODE: `ok` (default), `nostart` (exits before the handshake), `slowstart`
(never answers the handshake), `die` (exits in the middle of `search`), `hang` (never answers `search`),
`badschema` (`lookup` answers with structured content that does not fit its own output schema), `changed`
(`search` takes `text` instead of `query`), `error` (`search` answers with `isError`). Each call is appended to
`calls.log` in the current folder; the process id to `server.pid`.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

MODE = sys.argv[1] if len(sys.argv) > 1 else "ok"
with open("server.pid", "a", encoding="ascii") as pid_file:
    pid_file.write(f"{os.getpid()}\n")
if MODE == "nostart":
    print("docs server: refusing to start (nostart)", file=sys.stderr, flush=True)
    sys.exit(3)
if MODE == "slowstart":
    time.sleep(3600)

import anyio  # noqa: E402
import mcp_types as types  # noqa: E402
from mcp.server.lowlevel.server import Server  # noqa: E402
from mcp.server.stdio import stdio_server  # noqa: E402

PAGES = {"install": "pip install skillc", "check": "skillc check PATHS"}
QUERY = "text" if MODE == "changed" else "query"
TOOLS = [
    types.Tool(name="search", description="Search the docs: the lines that mention the query.",
               input_schema={"type": "object", "properties": {QUERY: {"type": "string"},
                                                              "limit": {"type": "integer", "default": 3}},
                             "required": [QUERY]}),
    types.Tool(name="lookup", description="One page by key, as structured content.",
               input_schema={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
               output_schema={"type": "object", "properties": {"title": {"type": "string"},
                                                               "words": {"type": "integer"}},
                              "required": ["title", "words"]}),
]


def log(line: str) -> None:
    with open("calls.log", "a", encoding="utf-8") as f:
        f.write(line + "\n")


def text(value: str) -> list[types.TextContent]:
    return [types.TextContent(type="text", text=value)]


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    log(f"{params.name} {sorted(args.items())}")
    if params.name == "search":
        if MODE == "die":
            os._exit(7)
        if MODE == "hang":
            await anyio.sleep(3600)
        if MODE == "error":
            return types.CallToolResult(content=text("the index is being rebuilt"), is_error=True)
        query, limit = str(args.get(QUERY, "")), int(args.get("limit", 3))
        hits = [f"{k}: {v}" for k, v in PAGES.items() if query in k or query in v]
        return types.CallToolResult(content=text("\n".join(hits[:limit]) or "no match"))
    if params.name == "lookup":
        key = str(args.get("key", ""))
        page = {"title": key, "words": len(PAGES.get(key, "").split())}
        if MODE == "badschema":
            page = {"title": 5, "words": "many"}
        return types.CallToolResult(content=text(str(page)), structured_content=page)
    return types.CallToolResult(content=text(f"no tool {params.name}"), is_error=True)


async def main() -> None:
    server = Server("docs", version="1", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
