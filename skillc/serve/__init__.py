"""Checked machines as MCP tools (`skillc serve --mcp`); the MCP SDK is imported only when serving."""
