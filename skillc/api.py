"""The Python API: parse, load and format `.skm` without touching the CLI.

A `str` argument is `.skm` *text*; a `pathlib.Path` (or any `os.PathLike`) is a
file to read. User errors come back as diagnostics, never as exceptions.
"""

from __future__ import annotations

import os
from pathlib import Path

import attrs

from skillc.check.config import Config, find_config
from skillc.diagnostics import Diagnostic, Severity
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.ir.machine import Machine
from skillc.ir.loader import ImportCache, LoadResult, Loader
from skillc.diagnostics.source import SourceFile
from skillc.syntax import nodes
from skillc.syntax.parser import parse_source, read_source
from skillc.syntax.printer import print_module


@attrs.define
class ParseResult(HasDiagnostics):
    """A module (None after a syntax error) and the diagnostics found while parsing."""

    module: nodes.Module | None
    diagnostics: list[Diagnostic]


    def __iter__(self):
        yield self.module
        yield self.diagnostics


def register_all_codes() -> None:
    """Load every stage's code table, so the registry holds every code (explain, the docs, the config schema).

    The tables register themselves when imported; this is the one list of them.
    """
    import skillc.check  # noqa: F401  (SKM2xx)
    from skillc.frontends.distill import codes as _distill  # noqa: F401  (SKM4xx)
    from skillc.frontends.markdown import codes as _build  # noqa: F401  (SKM3xx)
    from skillc.importers import codes as _importers  # noqa: F401  (SKM6xx)


def parse(source: str | os.PathLike, *, path: str | None = None) -> ParseResult:
    """Parse `.skm` text (a `str`) or a file (a path) into an AST."""
    if isinstance(source, os.PathLike):
        src, diags = read_source(source)
        if src is None:
            return ParseResult(None, diags)
    else:
        src = SourceFile.from_text(path or "<string>", source)
    module, diags = parse_source(src)
    return ParseResult(module, diags)


def load(source: str | os.PathLike, *, path: str | None = None, root: str | os.PathLike | None = None,
         imports: ImportCache | None = None) -> LoadResult:
    """Parse, resolve imports and lower to a `Machine`; `result.machine` is None when that failed.

    Pass one `ImportCache` to several calls to read shared imports (the stdlib) once.
    """
    loader = Loader(Path(root) if root is not None else None, imports)
    if isinstance(source, os.PathLike):
        return loader.load_path(Path(source))
    return loader.load_source(SourceFile.from_text(path or "<string>", source), Path(path) if path else None)


def format_text(text: str, *, path: str = "<string>") -> tuple[str | None, list[Diagnostic]]:
    """The canonical form of `.skm` text, or None with diagnostics when it does not parse."""
    module, diags = parse(text, path=path)
    if module is None:
        return None, diags
    return print_module(module), diags


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

    def __iter__(self):
        yield self.machine
        yield self.diagnostics


def check(source: str | os.PathLike, *, path: str | None = None, skill: str | os.PathLike | None = None,
          root: str | os.PathLike | None = None, config: Config | None = None,
          smt_timeout_ms: int | None = None, imports: ImportCache | None = None) -> CheckResult:
    """Load and statically check a machine (or a library of fragments); `*.asl.json|yaml` files are imported."""
    from skillc.check import CheckContext, check_machine, fragment_machine
    from skillc.importers.asl import is_asl_path

    if is_asl_path(source if isinstance(source, os.PathLike) else path or ""):
        return check_asl(source, path=path, config=config, smt_timeout_ms=smt_timeout_ms)
    loaded = load(source, path=path, root=root, imports=imports)
    found = list(loaded.diagnostics)
    if config is None:
        where = Path(source) if isinstance(source, os.PathLike) else Path(path) if path else Path.cwd()
        config, problems = find_config(where)
        found += problems
    context = CheckContext(skill=Path(skill) if skill is not None else None,
                           smt_timeout_ms=smt_timeout_ms or config.smt_timeout_ms,
                           quote_min_words=config.quote_min_words)
    if loaded.ok:
        if loaded.machine is not None:
            found += check_machine(loaded.machine, context)
        origin = str(source) if isinstance(source, os.PathLike) else path
        for fdef in loaded.fragments.values():
            found += check_machine(fragment_machine(fdef, origin), CheckContext(smt_timeout_ms=context.smt_timeout_ms))
    return CheckResult(loaded.machine, config.apply(found), config.strict, loaded.module)


def check_asl(source: str | os.PathLike, *, path: str | None = None, config: Config | None = None,
              smt_timeout_ms: int | None = None) -> CheckResult:
    """Import an Amazon States Language definition (a file, or its text named by `path`) and check it."""
    from skillc.importers.asl import check_asl_file, check_asl_text

    where = Path(source) if isinstance(source, os.PathLike) else Path(path) if path else Path.cwd()
    config, problems = (config, []) if config is not None else find_config(where)
    timeout = smt_timeout_ms or config.smt_timeout_ms
    checked = (check_asl_file(source, smt_timeout_ms=timeout) if isinstance(source, os.PathLike)
               else check_asl_text(source, path or "<string>.asl.json", smt_timeout_ms=timeout))
    return CheckResult(checked.machine, config.apply(problems + checked.diagnostics), config.strict)


def import_graph(kind: str, spec: str) -> tuple[str | None, list[Diagnostic]]:
    """The `.skm` text of an ASL file (`kind` asl) or a LangGraph `module:attr` (`kind` langgraph), or None."""
    if kind == "asl":
        from skillc.importers.asl import to_skm

        return to_skm(spec)
    from skillc.importers.langgraph import to_skm as graph_to_skm

    return graph_to_skm(spec)
