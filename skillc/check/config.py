"""The checker's configuration values: `Config` (severity overrides and options) and `Selection` (`--select`/`--ignore`).

Plain records the checker receives; reading them from `[tool.skillc]` (pyproject.toml or skillc.toml) and from
the command line needs every stage's codes, so it is `skillc.config`'s, beside `skillc.registry`.
"""  # noqa: E501 - module docstring kept verbatim

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.check.context import DEFAULT_QUOTE_MIN_WORDS, DEFAULT_SMT_TIMEOUT_MS
from skillc.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from skillc.serve.mcpconfig import McpServer

LEVELS: dict[str, Severity | None] = {
    "error": Severity.ERROR, "warning": Severity.WARNING, "note": Severity.NOTE, "off": None,
}


@attrs.define
class Config:
    """Severity overrides and options for one project."""

    severity: dict[str, Severity | None] = attrs.Factory(dict)
    strict: bool = False
    smt_timeout_ms: int = DEFAULT_SMT_TIMEOUT_MS
    quote_min_words: int = DEFAULT_QUOTE_MIN_WORDS
    model: str | None = None  # `skillc build`'s model spec (the LLM compiler); None: offline unless --model/env
    path: Path | None = None
    #: `[tool.skillc.mcp.NAME]`: the MCP servers machines' `tool … from mcp "NAME"` name (`skillc.serve.mcpconfig`).
    mcp: dict[str, McpServer] = attrs.Factory(dict)

    def apply(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Diagnostics with the configured severities; silenced ones dropped."""
        out = []
        for d in diagnostics:
            if d.code.code in self.severity:
                level = self.severity[d.code.code]
                if level is None:
                    continue
                d = d.with_severity(level)
            out.append(d)
        return out


@attrs.frozen
class Selection:
    """`--select` / `--ignore`: which warnings and notes to report (errors are always reported)."""

    select: tuple[str, ...] = ()  # code prefixes; empty selects everything
    ignore: tuple[str, ...] = ()

    def keeps(self, d: Diagnostic) -> bool:
        """Whether a diagnostic is reported: errors and skillc's own (SKM9xx) always are."""
        code = d.code.code
        if d.severity is Severity.ERROR or code.startswith("SKM9"):
            return True
        if self.select and not any(code.startswith(p) for p in self.select):
            return False
        return not any(code.startswith(p) for p in self.ignore)

    def apply(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """The diagnostics this selection keeps."""
        return [d for d in diagnostics if self.keeps(d)]
