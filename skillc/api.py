"""The Python API: every `skillc` command as a function that returns a typed result carrying its diagnostics.

A `str` argument is `.skm` *text*; a `pathlib.Path` (or any `os.PathLike`) is a file to read. User errors come
back as diagnostics, never as exceptions. The command line is these functions plus rendering (`skillc.console`).

This module is a table. The commands of the language itself (parse, load, format, check, show) and the check gate
of the commands that run machines (`load_checked`) live in `skillc.language`; the helpers every command shares
(`internal_error`, `unique`) in `skillc.diagnostics`; every other command's config, driver and typed result in its
own package's `command` module (`skillc.runtime.command` for run, replay, score and test, `skillc.render.command`
for dot, ...). All are re-exported here by name; a command module imports only downwards (from
`skillc.language`, `skillc.diagnostics`), never from here. The commands defined here are short wrappers (explain,
grammar, import, dot --diff, refine, bench, evolve, serve). Packages are imported on first use: heavy stages (the
checker, Z3, the runtime, the front ends) load only when a command needs them, so that importing this module (and
`skillc --version`) stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import internal_error, make, unique
from skillc.diagnostics.flags import MAX_SECONDS, seconds_problem
from skillc.language import (
    Checked,
    CheckFilesResult,
    DescribeResult,
    FormatFilesResult,
    FormatResult,
    Formatted,
    ParseResult,
    TextResult,
    check,
    check_asl,
    check_files,
    describe,
    format,
    format_files,
    format_text,
    load,
    load_checked,
    parse,
    read_stream,
    skm_files,
)
from skillc.lazy import exports

if TYPE_CHECKING:
    from skillc.bench.command import BenchResult, bench
    from skillc.bench.score import TraceScore  # noqa: F401 - named in console's annotations
    from skillc.check.config import Config  # noqa: F401 - re-exported (`api.Config`) for type checkers
    from skillc.check.source import CheckResult  # noqa: F401 - re-exported for type checkers
    from skillc.conform.command import ConformResult, conform
    from skillc.diagnostics.code import Code
    from skillc.diagnostics.source import SourceFile  # noqa: F401 - re-exported for type checkers
    from skillc.export.command import export_graph
    from skillc.frontends.distill.command import CollectResult, DistillOutcome, Progress, collect, distill
    from skillc.frontends.markdown import BuildResult  # noqa: F401 - named in console's annotations
    from skillc.frontends.markdown.command import BuildOutcome, build
    from skillc.improve.evolve.command import EvolveConfig, EvolveResult
    from skillc.improve.evolve.options import EvolveOptions  # noqa: F401 - the cli's defaults
    from skillc.improve.refine.refine import RefineResult
    from skillc.ir.loader import ImportCache, LoadResult  # noqa: F401 - re-exported for type checkers
    from skillc.ir.machine import Machine  # noqa: F401 - re-exported for type checkers
    from skillc.otel.command import OtelResult, bench_otel, export_otel, run_with_otel
    from skillc.render.command import DrawResult, draw
    from skillc.runtime.command import (
        ExploreResult,
        ReplayResult,
        RunConfig,
        RunReport,
        ScoreResult,
        Usage,
        explore,
        replay,
        run,
        score,
    )
    from skillc.serve.command import ServeConfig, ServeResult

#: Each command's home: `skillc.api.NAME` is imported from there when first asked for.
_COMMANDS = {
    "skillc.runtime.command": ("Usage", "RunConfig", "RunReport", "run", "ReplayResult", "replay", "ScoreResult",
                               "score", "ExploreResult", "explore"),
    "skillc.frontends.markdown.command": ("BuildOutcome", "build"),
    "skillc.frontends.distill.command": ("Progress", "DistillOutcome", "distill", "CollectResult", "collect"),
    "skillc.render.command": ("DrawResult", "draw"),
    "skillc.conform.command": ("ConformResult", "conform"),
    "skillc.export.command": ("export_graph",),
    "skillc.otel.command": ("OtelResult", "export_otel", "run_with_otel", "bench_otel"),
    "skillc.serve.command": ("ServeConfig", "ServeResult"),
    "skillc.improve.evolve.command": ("EvolveConfig", "EvolveResult"),
    "skillc.bench.command": ("BenchResult", "bench"),
}
#: What the API page documents (a literal list, for the docs' static reader): this module's commands and helpers,
#: then each package's command, re-exported.
__all__ = [
    "MAX_SECONDS",
    "BenchResult",
    "BuildOutcome",
    "CheckFilesResult",
    "Checked",
    "CollectResult",
    "ConformResult",
    "DescribeResult",
    "DistillOutcome",
    "DrawResult",
    "EvolveConfig",
    "EvolveResult",
    "ExplainResult",
    "ExploreResult",
    "ExportResult",
    "FormatFilesResult",
    "FormatResult",
    "Formatted",
    "ImportResult",
    "OtelResult",
    "ParseResult",
    "Progress",
    "ReplayResult",
    "RunConfig",
    "RunReport",
    "ScoreResult",
    "ServeConfig",
    "ServeResult",
    "TextResult",
    "Usage",
    "bench",
    "bench_otel",
    "build",
    "check",
    "check_asl",
    "check_files",
    "collect",
    "conform",
    "describe",
    "distill",
    "draw",
    "draw_diff",
    "evolve",
    "explain",
    "explore",
    "export_graph",
    "export_otel",
    "format",
    "format_files",
    "format_text",
    "grammar",
    "import_graph",
    "internal_error",
    "load",
    "load_checked",
    "parse",
    "read_stream",
    "reference",
    "refine",
    "replay",
    "run",
    "run_with_otel",
    "score",
    "seconds_problem",
    "serve",
    "skm_files",
    "unique",
]
_LAZY = {"ImportCache": "skillc.ir.loader", "LoadResult": "skillc.ir.loader", "Loader": "skillc.ir.loader",
         "Machine": "skillc.ir.machine", "Config": "skillc.check.config", "SourceFile": "skillc.diagnostics.source",
         "CheckResult": "skillc.check.source", "BenchConfig": "skillc.bench.runner",
         "RefineResult": "skillc.improve.refine.refine", "EvolveOptions": "skillc.improve.evolve.options",
         "TraceScore": "skillc.bench.score", "BuildResult": "skillc.frontends.markdown",
         **{name: home for home, names in _COMMANDS.items() for name in names}}


__getattr__ = exports(__name__, _LAZY)  # `api.ImportCache`, `api.Machine`, ... imported on first use


@attrs.define
class ExplainResult:
    """`skillc explain`: the codes asked for (every code when none was), or the first unknown one."""

    codes: list[Code]
    unknown: str | None = None


def explain(codes: Sequence[str] = ()) -> ExplainResult:
    """Look up diagnostic codes (SKM104 or a slug such as undefined-tool); all of them when none is given."""
    from skillc import registry

    if not codes:
        return ExplainResult(list(registry.ALL))
    found: list[Code] = []
    for raw in codes:
        entry = registry.resolve(raw)
        if entry is None:
            return ExplainResult(found, raw)
        found.append(entry)
    return ExplainResult(found)


def reference() -> str:
    """The Markdown reference of every diagnostic code (docs/diagnostics.md)."""
    from skillc import registry
    from skillc.diagnostics.docs import markdown_reference

    return markdown_reference(registry.ALL)


def grammar(fmt: str) -> str:
    """The grammar as `lark` or `gbnf`, the machine IR's `json-schema`, or the configuration's `config-schema`."""
    import json

    if fmt == "json-schema":
        from skillc.frontends.markdown.schema import MACHINE_SCHEMA

        return json.dumps(MACHINE_SCHEMA, indent=2) + "\n"
    if fmt == "config-schema":
        from skillc.config import config_schema

        return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"
    from skillc.syntax.export import export

    return export(fmt)


ImportResult = TextResult  # the `.skm` text of an imported graph (None when it could not be translated)
ExportResult = TextResult  # the Python module of an exported graph (None when the machine cannot be exported)


def import_graph(kind: str, spec: str) -> ImportResult:
    """The `.skm` text of an ASL file (`kind` asl) or a LangGraph `module:attr` (`kind` langgraph), or None."""
    if kind == "asl" and not os.path.lexists(spec):  # anything else (a FIFO, a device, a loop) is said by the reader
        return ImportResult(None, [make(diagnostics_codes.IO_ERROR, f"no such file: {spec}")])
    try:
        if kind == "asl":
            from skillc.frontends.importers.asl import to_skm

            return ImportResult(*to_skm(spec))
        from skillc.frontends.importers.langgraph import to_skm_confined

        # the user's module runs in a box (skillc.sandbox); an exported graph comes back as the machine it carries
        return ImportResult(*to_skm_confined(spec))
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return ImportResult(None, [internal_error(exc, f"importing {spec}")])


def draw_diff(old_path: str, new_path: str, fmt: str = "dot") -> DrawResult:
    """`skillc dot --diff OLD NEW`: NEW with what changed since OLD coloured (dot, svg or png); both must check."""
    from skillc.improve.diff import diff_machines
    from skillc.render.command import draw_diff as draw_changes

    return draw_changes(old_path, new_path, fmt, diff=diff_machines)


# ---------------------------------------------------------------- improvement

def refine(machine: str, traces: Sequence[str], *, output: str | None = None, archive: str | None = None,
           model: str | None = None, base_url: str | None = None, dry_run: bool = False) -> RefineResult:
    """`skillc refine`: grow a machine from development traces, each edit checked and replayed before it lands."""
    from skillc.improve.refine.refine import RefineOptions
    from skillc.improve.refine.refine import refine as run_refine

    return run_refine(RefineOptions(machine, tuple(traces), output, archive, model, base_url, dry_run))


# ---------------------------------------------------------------- evolution

def evolve(config: EvolveConfig) -> EvolveResult:
    """`skillc evolve`: improve a machine on one suite task under an execution budget (skillc.improve.evolve's tree search)."""  # noqa: E501 - docstring kept verbatim (rendered by mkdocstrings)
    from skillc.improve.evolve.command import EvolveResult, run_evolve

    try:
        return run_evolve(config)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return EvolveResult(None, None, {}, [internal_error(exc, "evolving the machine")])


# ---------------------------------------------------------------- serving machines over MCP

def serve(config: ServeConfig) -> ServeResult:
    """`skillc serve --mcp`: serve checked machines as MCP tools (stdio, or streamable HTTP on 127.0.0.1) until the
    client leaves or the server is stopped; see `skillc.serve`. Nothing is served when a machine fails its check."""
    from skillc.serve.command import ServeResult
    from skillc.serve.command import serve as serve_mcp

    for flag, seconds in (("--tool-timeout", config.tool_timeout_s), ("--model-timeout", config.model_timeout_s),
                          ("--step-deadline", config.step_deadline_s), ("--input-timeout", config.input_timeout_s)):
        if (problem := seconds_problem(flag, seconds)) is not None:
            return ServeResult(usage=problem)

    try:
        return serve_mcp(config)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return ServeResult([internal_error(exc, "serving the machines over MCP")])
