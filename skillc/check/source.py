"""Checking a `.skm` source end to end: load it, find its configuration, check the machine and its fragments.

This is what `skillc check` and `skillc.api.check` do for one file; the front ends call it too (they build
`.skm` text and must check it), so it lives in the checker's stage rather than above the front ends.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from skillc.check.context import Kept
from skillc.check.passes import CheckContext, check_machine, fragment_machine
from skillc.config import find_config
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, Severity
from skillc.ir.loader import ImportCache, load

if TYPE_CHECKING:
    from skillc.check.config import Config
    from skillc.ir.machine import Machine
    from skillc.syntax import nodes


@attrs.define
class CheckResult(HasDiagnostics):
    """The machine (None when it could not be built) and every finding, configured severities applied."""

    machine: Machine | None
    diagnostics: list[Diagnostic]
    strict: bool = False
    module: nodes.Module | None = None

    @property
    def failed(self) -> bool:
        """Errors, or warnings under `strict`."""
        return any(d.is_error or (self.strict and d.severity is Severity.WARNING) for d in self.diagnostics)

    def __iter__(self) -> Iterator[Any]:
        yield self.machine
        yield self.diagnostics


def config_place(source: str | os.PathLike[str], path: str | None) -> Path:
    """Where to look for the configuration of a source."""
    return Path(source) if isinstance(source, os.PathLike) else Path(path) if path else Path.cwd()


def check_source(source: str | os.PathLike[str], *, path: str | None = None,
                 skill: str | os.PathLike[str] | None = None, root: str | os.PathLike[str] | None = None,
                 config: Config | None = None, smt_timeout_ms: int | None = None,
                 imports: ImportCache | None = None, mcp_live: bool = False, kept: Kept | None = None) -> CheckResult:
    """Load and statically check `.skm` text (a `str`) or a file (a path), with its own fragments.

    `mcp_live`: start the MCP servers the machine's tools name to list their schemas (`skillc check`), else only
    the lock file is read. `kept`: per-state results kept from earlier checks, reused where a state's content is
    unchanged (the language server's)."""
    loaded = load(source, path=path, root=root, imports=imports)
    found = list(loaded.diagnostics)
    if config is None:
        config, problems = find_config(config_place(source, path))
        found += problems
    # An explicit root (the editor's workspace) also confines the `source` document; `skillc check` reads the
    # document a machine names wherever it is, as a skill folder outside the project is common.
    context = CheckContext(skill=Path(skill) if skill is not None else None,
                           root=Path(root) if root is not None else None,
                           smt_timeout_ms=smt_timeout_ms or config.smt_timeout_ms,
                           quote_min_words=config.quote_min_words, mcp_servers=dict(config.mcp),
                           mcp_config=config.path, mcp_live=mcp_live, kept=kept)
    if loaded.ok:
        if loaded.machine is not None:
            found += check_machine(loaded.machine, context)
        origin = str(source) if isinstance(source, os.PathLike) else path
        for fdef in loaded.fragments.values():
            found += check_machine(fragment_machine(fdef, origin), CheckContext(
                smt_timeout_ms=context.smt_timeout_ms, mcp_servers=context.mcp_servers, mcp_config=context.mcp_config,
                mcp_live=context.mcp_live, kept=kept))
    return CheckResult(loaded.machine, config.apply(found), config.strict, loaded.module)
