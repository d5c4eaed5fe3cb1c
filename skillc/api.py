"""The Python API: every `skillc` command as a function that returns a typed result carrying its diagnostics.

A `str` argument is `.skm` *text*; a `pathlib.Path` (or any `os.PathLike`) is a file to read. User errors come
back as diagnostics, never as exceptions. The command line is these functions plus rendering (`skillc.console`).

This module is a table: the commands of the language itself (parse, load, format, check, show, explain, grammar,
import) and the helpers every command shares (`internal_error`, `unique`, `load_checked`) are here; every other
command's config, driver and typed result live in its own package's `command` module (`skillc.runtime.command`
for run, replay, score and test, `skillc.render.command` for dot, ...) and are re-exported here by name, imported
on first use: heavy stages (the checker, Z3, the runtime, the front ends) load only when a command needs them, so
that importing this module (and `skillc --version`) stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, Severity, make
from skillc.diagnostics.flags import MAX_SECONDS, seconds_problem
from skillc.lazy import exports

if TYPE_CHECKING:
    from skillc.bench.runner import BenchConfig, BenchOutcome
    from skillc.bench.runner import Progress as BenchProgress
    from skillc.bench.score import TraceScore  # noqa: F401 - named in console's annotations
    from skillc.check.config import Config
    from skillc.check.source import CheckResult
    from skillc.conform.command import ConformResult, conform
    from skillc.diagnostics.code import Code
    from skillc.diagnostics.source import SourceFile
    from skillc.export.command import export_graph
    from skillc.frontends.distill.command import CollectResult, DistillOutcome, Progress, collect, distill
    from skillc.frontends.markdown import BuildResult  # noqa: F401 - named in console's annotations
    from skillc.frontends.markdown.command import BuildOutcome, build
    from skillc.improve.evolve.command import EvolveConfig, EvolveResult
    from skillc.improve.evolve.options import EvolveOptions  # noqa: F401 - the cli's defaults
    from skillc.improve.refine.refine import RefineResult
    from skillc.ir.loader import ImportCache, LoadResult
    from skillc.ir.machine import Machine
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
    from skillc.syntax import nodes

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
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache"}
_ASL_SUFFIXES = (".asl.json", ".asl.yaml", ".asl.yml")


__getattr__ = exports(__name__, _LAZY)  # `api.ImportCache`, `api.Machine`, ... imported on first use


# ---------------------------------------------------------------- flags every command shares, validated here once

# `MAX_SECONDS` and `seconds_problem` live in `skillc.diagnostics.flags`, below every command that asks them.


def internal_error(exc: BaseException, what: str) -> Diagnostic:
    """SKM900 for an exception skillc did not expect (a bug): the note says what it was doing."""
    notes = [f"while {what}: {type(exc).__name__}: {exc}"]
    if os.environ.get("SKILLC_DEBUG"):
        import traceback

        notes.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return make(diagnostics_codes.INTERNAL_ERROR,
                "internal error in skillc (this is a bug, not a problem with your input)", notes=notes)


def unique(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Drop repeats (an imported file checked on its own and through an import reports once)."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for d in diagnostics:
        key = (d.code, d.message, d.span.path if d.span else None, d.span.start if d.span else None)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def skm_files(paths: Iterable[str]) -> tuple[list[Path], list[Diagnostic]]:
    """Expand folders into their `.skm` files; missing paths become I/O diagnostics (SKM901)."""
    files: list[Path] = []
    problems: list[Diagnostic] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*.skm")
                                if not any(part in _SKIP_DIRS for part in f.relative_to(p).parts[:-1])))
        elif p.exists():
            files.append(p)
        else:
            problems.append(make(diagnostics_codes.IO_ERROR, f"no such file or folder: {raw}"))
    return files, problems


def read_stream(stream: IO[bytes], name: str) -> tuple[SourceFile | None, list[Diagnostic]]:
    """A byte stream (standard input) decoded like a file: BOM, UTF-8, line ends, the input size limit."""
    from skillc.diagnostics.files import MAX_INPUT_BYTES
    from skillc.syntax.parser import decode_source

    data = stream.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        return None, [make(diagnostics_codes.IO_ERROR, f"standard input is over {MAX_INPUT_BYTES:,} bytes")]
    return decode_source(name, data)


# ---------------------------------------------------------------- parse, load, format, check

@attrs.define
class ParseResult(HasDiagnostics):
    """A module (None after a syntax error) and the diagnostics found while parsing."""

    module: nodes.Module | None
    diagnostics: list[Diagnostic]

    def __iter__(self) -> Iterator[Any]:
        yield self.module
        yield self.diagnostics


def parse(source: str | os.PathLike[str], *, path: str | None = None) -> ParseResult:
    """Parse `.skm` text (a `str`) or a file (a path) into an AST."""
    from skillc.diagnostics.source import SourceFile
    from skillc.syntax.parser import parse_source, read_source

    if isinstance(source, os.PathLike):
        src, diags = read_source(Path(source))
        if src is None:
            return ParseResult(None, diags)
    else:
        src = SourceFile.from_text(path or "<string>", source)
    module, diags = parse_source(src)
    return ParseResult(module, diags)


def load(source: str | os.PathLike[str], *, path: str | None = None, root: str | os.PathLike[str] | None = None,
         imports: ImportCache | None = None) -> LoadResult:
    """Parse, resolve imports and lower to a `Machine`; `result.machine` is None when that failed.

    Pass one `ImportCache` to several calls to read shared imports (the stdlib) once.
    """
    from skillc.ir.loader import load as load_source

    return load_source(source, path=path, root=root, imports=imports)


@attrs.define
class TextResult(HasDiagnostics):
    """A text a command produced (None when it could not) and the diagnostics; unpacks as a pair."""

    text: str | None
    diagnostics: list[Diagnostic]

    def __iter__(self) -> Iterator[Any]:
        yield self.text
        yield self.diagnostics


FormatResult = TextResult  # the canonical text (None when it does not parse, or would not parse back the same)


def format(text: str, *, path: str = "<string>") -> FormatResult:
    """Format `.skm` text, refusing (as an internal error) any output that would not parse back identically."""
    from skillc.syntax.format import format_source

    return FormatResult(*format_source(text, path))


def format_text(text: str, *, path: str = "<string>") -> tuple[str | None, list[Diagnostic]]:
    """`format` as a pair: the canonical form of `.skm` text, or None with diagnostics."""
    result = format(text, path=path)
    return result.text, result.diagnostics


@attrs.frozen
class Formatted:
    """One formatted input: its text before and after (`after` keeps a BOM and CRLF line ends)."""

    path: str
    before: str
    after: str

    @property
    def changed(self) -> bool:
        """Whether formatting changes the text."""
        return self.before != self.after


@attrs.define
class FormatFilesResult(HasDiagnostics):
    """`skillc fmt`: every input that formatted (changed or not) and the diagnostics of those that did not."""

    files: list[Formatted]
    diagnostics: list[Diagnostic]


def format_files(paths: Sequence[str], *, stdin_text: str | None = None) -> FormatFilesResult:
    """Format `.skm` files (folders searched) or, given `stdin_text`, that text as `<stdin>`; writes nothing."""
    if stdin_text is not None:
        try:
            result = format(stdin_text, path="<stdin>")
        except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
            result = FormatResult(None, [internal_error(exc, "formatting <stdin>")])
        done = [] if result.text is None else [Formatted("<stdin>", stdin_text, result.text)]
        return FormatFilesResult(done, result.diagnostics)
    from skillc.diagnostics.files import keep_conventions, read_bytes
    from skillc.syntax.parser import decode_source

    files, diagnostics = skm_files(paths)
    formatted = []
    for f in files:
        data, problem = read_bytes(f, folder="a directory, not a .skm file")
        if data is None:
            diagnostics.extend([problem] if problem is not None else [])
            continue
        source, diags = decode_source(str(f), data)
        if source is None:
            diagnostics.extend(diags)
            continue
        try:
            result = format(source.text, path=str(f))
        except Exception as exc:  # noqa: BLE001
            result = FormatResult(None, [internal_error(exc, f"formatting {f}")])
        diagnostics.extend(result.diagnostics)
        if result.text is not None:  # a BOM and CRLF line ends stay
            formatted.append(Formatted(str(f), data.decode("utf-8", errors="replace"),
                                       keep_conventions(data, result.text)))
    return FormatFilesResult(formatted, diagnostics)


def check(source: str | os.PathLike[str], *, path: str | None = None, skill: str | os.PathLike[str] | None = None,
          root: str | os.PathLike[str] | None = None, config: Config | None = None,
          smt_timeout_ms: int | None = None, imports: ImportCache | None = None, mcp_live: bool = False) -> CheckResult:
    """Load and statically check a machine (or a library of fragments); `*.asl.json|yaml` files are imported.

    `mcp_live`: start the MCP servers the machine's tools name to list their schemas (and write the lock file), as
    `skillc check` does; otherwise they are compared with `skillc.mcp.lock` only."""
    named = str(source) if isinstance(source, os.PathLike) else path or ""
    if named.lower().endswith(_ASL_SUFFIXES):
        return check_asl(source, path=path, config=config, smt_timeout_ms=smt_timeout_ms)
    from skillc.check.source import check_source

    return check_source(source, path=path, skill=skill, root=root, config=config, smt_timeout_ms=smt_timeout_ms,
                        imports=imports, mcp_live=mcp_live)


def check_asl(source: str | os.PathLike[str], *, path: str | None = None, config: Config | None = None,
              smt_timeout_ms: int | None = None) -> CheckResult:
    """Import an Amazon States Language definition (a file, or its text named by `path`) and check it."""
    from skillc.check.source import CheckResult, config_place
    from skillc.config import find_config
    from skillc.frontends.importers.asl import check_asl_file, check_asl_text

    config, problems = (config, []) if config is not None else find_config(config_place(source, path))
    timeout = smt_timeout_ms or config.smt_timeout_ms
    checked = (check_asl_file(source, smt_timeout_ms=timeout) if isinstance(source, os.PathLike)
               else check_asl_text(source, path or "<string>.asl.json", smt_timeout_ms=timeout))
    return CheckResult(checked.machine, config.apply(problems + checked.diagnostics), config.strict)


@attrs.define
class CheckFilesResult(HasDiagnostics):
    """`skillc check`: the findings of every file (selected, notes only when verbose), how many were checked,
    whether warnings fail the run (`--strict` or a file's configuration), and `usage` for a bad selection."""

    diagnostics: list[Diagnostic]
    files: int = 0
    failed: bool = False
    usage: bool = False


def check_files(paths: Sequence[str], *, strict: bool = False, skill: str | None = None,
                smt_timeout_ms: int | None = None, config_path: str | None = None, select: str | None = None,
                ignore: str | None = None, verbose: bool = False, stdin: IO[bytes] | None = None,
                stdin_filename: str | None = None, mcp_live: bool = True) -> CheckFilesResult:
    """Check `.skm` files (folders searched); `-` among the paths checks the text read from `stdin`.

    `mcp_live`: start the MCP servers machines' tools name to list their schemas (and write `skillc.mcp.lock`);
    False (`--mcp-offline`): compare with the lock file only."""
    from skillc.check.config import Selection
    from skillc.config import parse_selection, read_config
    from skillc.ir.loader import ImportCache

    files, diagnostics = skm_files(p for p in paths if p != "-")
    if skill is not None and not Path(skill).is_file():
        diagnostics.append(make(diagnostics_codes.IO_ERROR, f"no such skill document: {skill}"))
    # No --select/--ignore: no code to look up, so the registry (every stage's table) is not loaded.
    selection, problems = parse_selection(select, ignore) if select or ignore else (Selection((), ()), [])
    if problems:
        return CheckFilesResult([make(diagnostics_codes.IO_ERROR, p) for p in problems], usage=True)
    config = None
    if config_path is not None:
        if not Path(config_path).is_file():
            diagnostics.append(make(diagnostics_codes.IO_ERROR, f"no such configuration file: {config_path}"))
        else:
            config, config_problems = read_config(Path(config_path))
            diagnostics += config_problems
    failed = False
    cache = ImportCache()
    sources: list[Path | str] = [*files, *(["-"] if "-" in paths else [])]
    for f in sources:
        try:
            if isinstance(f, Path):
                result = check(f, skill=skill, smt_timeout_ms=smt_timeout_ms, imports=cache, config=config,
                               mcp_live=mcp_live)
            else:
                result = _check_stream(stdin, stdin_filename, skill, smt_timeout_ms, config, cache, mcp_live)
        except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
            diagnostics.append(internal_error(exc, f"checking {f}"))
            continue
        diagnostics.extend(result.diagnostics)
        # Strictness is per file: each project's configuration governs its own files.
        failed |= any(d.severity is Severity.WARNING and selection.keeps(d) for d in result.diagnostics) and (
            strict or result.strict)
    diagnostics = selection.apply(unique(diagnostics))
    if not verbose:  # the same policy in every format: notes only with -v
        diagnostics = [d for d in diagnostics if d.severity is not Severity.NOTE]
    return CheckFilesResult(diagnostics, len(sources), failed)


def _check_stream(stream: IO[bytes] | None, stdin_filename: str | None, skill: str | None,
                  smt_timeout_ms: int | None, config: Config | None, imports: ImportCache,
                  mcp_live: bool = True) -> CheckResult:
    """`check -`: the text of a stream, checked as if it were at `stdin_filename`."""
    from skillc.check.source import CheckResult

    name = stdin_filename or "<stdin>"
    if stream is None:
        return CheckResult(None, [make(diagnostics_codes.IO_ERROR, "no standard input to read for `-`")])
    source, problems = read_stream(stream, name)
    if source is None:
        return CheckResult(None, problems, False, None)
    return check(source.text, path=str(Path(name).absolute()) if stdin_filename else name, skill=skill,
                 smt_timeout_ms=smt_timeout_ms, imports=imports, config=config, mcp_live=mcp_live)


def _fragment_machines(loaded: LoadResult, path: str) -> dict[str, Machine]:
    """The fragments of a library file, each as the machine `skillc check` checks it as."""
    from skillc.check import fragment_machine

    return {name: fragment_machine(f, path) for name, f in loaded.fragments.items()}


@attrs.define
class DescribeResult(HasDiagnostics):
    """`skillc show`: the summary of a machine (or of each fragment of a library); None when it did not load."""

    text: str | None
    diagnostics: list[Diagnostic]


def describe(path: str) -> DescribeResult:
    """Summarise a machine: states, transitions, variables, tools and rules."""
    if not Path(path).exists():
        return DescribeResult(None, [make(diagnostics_codes.IO_ERROR, f"no such file: {path}")])
    try:
        result = load(Path(path))
    except Exception as exc:  # noqa: BLE001
        return DescribeResult(None, [internal_error(exc, f"loading {path}")])
    from skillc.ir.describe import describe as summary

    if result.machine is None and result.ok and result.fragments:
        # A library of fragments: each one is described as the machine it checks as.
        return DescribeResult("\n\n".join(f"fragment {name} (a library defines no machine; `use` it from one)\n"
                                          + summary(m) for name, m in _fragment_machines(result, path).items()),
                              result.diagnostics)
    if result.machine is None or not result.ok:
        return DescribeResult(None, result.diagnostics)
    return DescribeResult(summary(result.machine), result.diagnostics)


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


# ---------------------------------------------------------------- the check gate of the commands that run machines

@attrs.define
class Checked(HasDiagnostics):
    """A machine that passed `skillc check` with its source text, or the diagnostics why it did not
    (`unchecked` when the check found errors, else an I/O problem)."""

    machine: Machine | None
    text: str
    diagnostics: list[Diagnostic]
    unchecked: bool = False


def load_checked(path: str) -> Checked:
    """Load and check a machine; only a machine that passes runs, replays, scores or is explored."""
    from skillc.diagnostics.files import FileProblem, read_text

    result = check(Path(path))
    problems = [d for d in result.diagnostics if d.severity is not Severity.NOTE]
    if result.machine is None or result.failed:
        return Checked(None, "", problems, unchecked=True)
    try:
        return Checked(result.machine, read_text(path, what=".skm file"), [])
    except FileProblem as exc:  # the file changed since it was checked
        return Checked(None, "", [make(diagnostics_codes.IO_ERROR, str(exc))])


# ---------------------------------------------------------------- improvement

def refine(machine: str, traces: Sequence[str], *, output: str | None = None, archive: str | None = None,
           model: str | None = None, base_url: str | None = None, dry_run: bool = False) -> RefineResult:
    """`skillc refine`: grow a machine from development traces, each edit checked and replayed before it lands."""
    from skillc.improve.refine.refine import RefineOptions
    from skillc.improve.refine.refine import refine as run_refine

    return run_refine(RefineOptions(machine, tuple(traces), output, archive, model, base_url, dry_run))


# ---------------------------------------------------------------- benchmarks

@attrs.define
class BenchResult(HasDiagnostics):
    """`skillc bench`: what the bench did (its rows, report and output folder) and its diagnostics."""

    outcome: BenchOutcome | None
    diagnostics: list[Diagnostic]


def bench(config: BenchConfig, *, progress: BenchProgress | None = None) -> BenchResult:
    """Run the cells of a suite's matrix that have no row yet and write the report (`report_only`: only the report).

    `progress(total, done)` is a context manager that yields a callback told of every row written.
    """
    from skillc.bench.runner import run_bench

    try:
        outcome = run_bench(config, progress=progress)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return BenchResult(None, [internal_error(exc, "running the bench")])
    return BenchResult(outcome, list(outcome.diagnostics))


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
