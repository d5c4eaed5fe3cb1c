"""Diagnostic codes of MCP: `skillc serve --mcp` and MCP tools inside machines (SKM890–SKM899), in `skillc.registry`.

A served call that cannot run is answered with an MCP tool error naming its code (the server keeps serving); a
machine's MCP tool that cannot be checked, started or called is a diagnostic of `skillc check` or a failed tool
step (the run goes to the fallback, its trace and journal intact). The examples are command lines or
configuration; `tests/mcp/` produces each code from real input (a server command that does not exist, one that
exits mid-call, one that never answers, a schema that does not match, a forged resume token).
"""

from __future__ import annotations

from typing import Final

from skillc.diagnostics.codes import Code, E, W

_SERVE: Final = "skillc serve --mcp answer.skm --executor scripted:a.json"
_CONFIG: Final = ('[tool.skillc.mcp.docs]\ncommand = ["python", "docs_server.py"]   # a server that starts and '
                  'answers `initialize`')

MCP_UNAVAILABLE: Final = Code(
    "SKM890", "mcp-unavailable", E, "the MCP SDK is not installed",
    "`skillc serve --mcp` and machines that call tools of an MCP server use the official MCP Python SDK (the "
    "`mcp` extra: `pip install 'skillc[mcp]'`). Without it nothing is served and no MCP tool is called; "
    "`skillc serve` exits 2 and a run that needs one fails before its first step.",
    "skillc serve --mcp answer.skm --executor scripted:a.json   # without the mcp extra", _SERVE,
    "pip install 'skillc[mcp]'", runnable=False, lang="text")
MCP_TOOL_NAME_CLASH: Final = Code(
    "SKM891", "mcp-tool-name-clash", E, "two served machines would be the same MCP tool",
    "Each machine given to `skillc serve --mcp` becomes the MCP tool named after the machine, so two machines "
    "with one name (two versions of a skill) cannot be served together, and no machine may take the name of "
    "the server's own tool, `skillc_resume`. Nothing is served.",
    "skillc serve --mcp v1/triage.skm v2/triage.skm --executor scripted:a.json",
    "skillc serve --mcp v2/triage.skm --executor scripted:a.json",
    "serve one of them, or rename a machine", runnable=False, lang="text")
SAMPLING_UNAVAILABLE: Final = Code(
    "SKM892", "sampling-unavailable", E, "the server answers models through sampling, and the client offers none",
    "With `--executor sampling` every model and judge state is answered by the client's own model through MCP "
    "sampling (`sampling/createMessage`). A client that did not declare the sampling capability cannot answer "
    "them, so the call is refused before the run starts (a tool error naming this code); the server keeps "
    "serving other calls.",
    "skillc serve --mcp answer.skm --executor sampling   # called by a client without sampling",
    "skillc serve --mcp answer.skm --executor openai:gpt-4o-mini",
    "use a client with sampling, or give the server an executor of its own", runnable=False, lang="text")
BAD_RESUME_TOKEN: Final = Code(
    "SKM893", "bad-resume-token", E, "the resume token does not name a run that waits for this answer",
    "A call whose run asks the user and gets no answer returns status `waiting` and a resume token; "
    "`skillc_resume(token, answer)` continues that run once. A token this server did not sign (a different "
    "server key, a changed or truncated token), one whose run has finished or was answered already, and an "
    "answer that is not on the question's menu are refused with this code; the run is left as it was.",
    'skillc_resume(token="forged.token", answer="prod")',
    'skillc_resume(token=<the token of the waiting call>, answer="prod")',
    "resume with the token the waiting call returned, once, with an answer from its options",
    runnable=False, lang="text")
MCP_SERVER_NOT_STARTED: Final = Code(
    "SKM894", "mcp-server-not-started", W, "the MCP server could not be started",
    "A machine's `tool NAME(…) from mcp \"SERVER\"` is served by the command `[tool.skillc.mcp.SERVER]` names. "
    "A command that does not exist, exits before the MCP handshake, or does not complete the handshake within "
    "the start timeout is stopped (its whole process group) and reported: at `skillc check` as a warning (the "
    "lock file's schema is used instead, when there is one), in a run as a failed tool step that goes to the "
    "fallback.",
    '[tool.skillc.mcp.docs]\ncommand = ["no-such-program"]', _CONFIG,
    "check the command: run it by hand, it must speak MCP over stdin and stdout", runnable=False, lang="toml")
MCP_SERVER_DIED: Final = Code(
    "SKM895", "mcp-server-died", E, "the MCP server stopped during a call",
    "The server's process exited, or closed its end of the connection, while a tool call waited for its "
    "answer. The step fails (kind `tool`), the run goes to the fallback with this message, and what is left of "
    "the server's process group is killed.",
    "tool search from mcp \"docs\"   # the server exits while answering `search`",
    "tool search from mcp \"docs\"   # the server answers every call",
    "look at the server's stderr (kept in the trace's error message)", runnable=False, lang="text")
MCP_TOOL_MISMATCH: Final = Code(
    "SKM896", "mcp-tool-mismatch", E, "the machine's use of an MCP tool does not fit the tool's input schema",
    "`skillc check` compares every call of an MCP tool with the `inputSchema` the server lists (or the lock "
    "file recorded): an argument the schema does not have (when it allows no others), a required property "
    "left out, an argument whose type cannot be the property's JSON type. The same comparison runs when a run "
    "starts the server, so a server that changed since the lock was written fails the step instead of calling "
    "the tool with arguments it does not take.",
    'call search(text: "x")   # the server\'s schema says {"query": string} is required',
    'call search(query: "x")', "use the argument names and types of the server's schema", runnable=False,
    lang="text")
MCP_CALL_TIMEOUT: Final = Code(
    "SKM897", "mcp-call-timeout", E, "the MCP server did not answer in time",
    "Every exchange with a machine's MCP server is bounded: the start and handshake, the tool listing and each "
    "call (`--tool-timeout`, 60 s by default). A server that does not answer in time is stopped (stdin closed, "
    "then its process group terminated and killed) and the step fails; nothing waits forever on it.",
    "tool search from mcp \"docs\"   # the server reads the request and never answers",
    "tool search from mcp \"docs\"   # the server answers within the tool timeout",
    "make the server answer sooner, or raise --tool-timeout", runnable=False, lang="text")
MCP_TOOL_UNKNOWN: Final = Code(
    "SKM898", "mcp-tool-unknown", E, "the MCP server, or the tool it should offer, is not there",
    "A machine's `tool NAME(…) from mcp \"SERVER\"` needs `[tool.skillc.mcp.SERVER]` in pyproject.toml or "
    "skillc.toml, and a server that lists a tool named NAME (or the name the declaration maps it to). An "
    "unknown server name, or a server (or its lock entry) without the tool, is an error.",
    'tool search(query: str) -> (text: str) from mcp "dcos"   # no [tool.skillc.mcp.dcos]',
    'tool search(query: str) -> (text: str) from mcp "docs"',
    "name a configured server and one of the tools it lists", runnable=False, lang="text")
MCP_LOCK_PROBLEM: Final = Code(
    "SKM899", "mcp-lock-problem", W, "the MCP lock file cannot be used for this tool",
    "When a machine's MCP server cannot be reached at `skillc check` time, the tool's schema comes from "
    "`skillc.mcp.lock` (JSON, written beside the configuration when the server was last reached). A lock file "
    "that cannot be read, or that has no entry for the tool, leaves the calls unchecked against the server: this "
    "warning says so, and the run checks them when it starts the server.",
    "skillc check m.skm   # the server is down and skillc.mcp.lock has no entry for it",
    "skillc check m.skm   # the server is up: its schema is checked and the lock written",
    "run `skillc check` once where the server can be started, and commit skillc.mcp.lock", runnable=False,
    lang="text")

ALL: Final[tuple[Code, ...]] = (MCP_UNAVAILABLE, MCP_TOOL_NAME_CLASH, SAMPLING_UNAVAILABLE, BAD_RESUME_TOKEN,
                                MCP_SERVER_NOT_STARTED, MCP_SERVER_DIED, MCP_TOOL_MISMATCH, MCP_CALL_TIMEOUT,
                                MCP_TOOL_UNKNOWN, MCP_LOCK_PROBLEM)
