"""The Python API: every `skillc` command as a function that returns a typed result carrying its diagnostics.

A `str` argument is `.skm` *text*; a `pathlib.Path` (or any `os.PathLike`) is a file to read. User errors come
back as diagnostics (or, for the runtime, as the result's `error`), never as exceptions. The command line is
these functions plus rendering (`skillc.console`). Heavy stages (the checker, Z3, the runtime, the front ends)
are imported by the function that needs them, so that importing this module stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Iterator, Literal

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, Severity, make
from skillc.lazy import exports

if TYPE_CHECKING:
    from skillc.bench.runner import BenchConfig, BenchOutcome
    from skillc.bench.runner import Progress as BenchProgress
    from skillc.check.config import Config
    from skillc.check.source import CheckResult
    from skillc.diagnostics.code import Code
    from skillc.diagnostics.source import SourceFile
    from skillc.frontends.distill.library import Built
    from skillc.frontends.markdown import BuildResult
    from skillc.improve.refine.refine import RefineResult
    from skillc.improve.evolve.command import EvolveConfig, EvolveResult
    from skillc.improve.evolve.options import EvolveOptions
    from skillc.ir.loader import ImportCache, LoadResult
    from skillc.ir.machine import Machine
    from skillc.runtime import ReplayReport, RunResult
    from skillc.runtime.journal import Wait
    from skillc.bench.score import TraceScore
    from skillc.conform.conform import ConformReport
    from skillc.runtime.record import RunTrace
    from skillc.syntax import nodes
    from skillc.testing.explore import TestReport
    from skillc.serve.command import ServeConfig, ServeResult

_LAZY = {"ImportCache": "skillc.ir.loader", "LoadResult": "skillc.ir.loader", "Loader": "skillc.ir.loader",
         "Machine": "skillc.ir.machine", "Config": "skillc.check.config", "SourceFile": "skillc.diagnostics.source",
         "CheckResult": "skillc.check.source", "BenchConfig": "skillc.bench.runner",
         "RefineResult": "skillc.improve.refine.refine", "EvolveConfig": "skillc.improve.evolve.command",
         "EvolveResult": "skillc.improve.evolve.command", "EvolveOptions": "skillc.improve.evolve.options",
         "ServeConfig": "skillc.serve.command", "ServeResult": "skillc.serve.command"}
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache"}
_ASL_SUFFIXES = (".asl.json", ".asl.yaml", ".asl.yml")


__getattr__ = exports(__name__, _LAZY)  # `api.ImportCache`, `api.Machine`, ... imported on first use


def internal_error(exc: BaseException, what: str) -> Diagnostic:
    """SKM900 for an exception skillc did not expect (a bug): the note says what it was doing."""
    notes = [f"while {what}: {type(exc).__name__}: {exc}"]
    if os.environ.get("SKILLC_DEBUG"):
        import traceback

        notes.append("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    return make(diagnostics_codes.INTERNAL_ERROR, "internal error in skillc (this is a bug, not a problem with your input)", notes=notes)


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


def format(text: str, *, path: str = "<string>") -> FormatResult:  # noqa: A001 - the command's name
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
    from skillc.check.config import find_config
    from skillc.check.source import CheckResult, config_place
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
    from skillc.check.config import Selection, parse_selection, read_config
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
    from skillc.diagnostics.docs import markdown_reference

    return markdown_reference()


def grammar(fmt: str) -> str:
    """The grammar as `lark` or `gbnf`, the machine IR's `json-schema`, or the configuration's `config-schema`."""
    import json

    if fmt == "json-schema":
        from skillc.frontends.markdown.schema import MACHINE_SCHEMA

        return json.dumps(MACHINE_SCHEMA, indent=2) + "\n"
    if fmt == "config-schema":
        from skillc.check.config import config_schema

        return json.dumps(config_schema(), indent=2, ensure_ascii=False) + "\n"
    from skillc.syntax.export import export

    return export(fmt)


ImportResult = TextResult  # the `.skm` text of an imported graph (None when it could not be translated)


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


# ---------------------------------------------------------------- running machines

@attrs.define
class Usage:
    """A usage error the command line reports the way click reports a bad flag (exit 2)."""

    message: str
    param: str | None = None


@attrs.define
class RunConfig:
    """Everything `skillc run` takes: the machine, its inputs, the executor and the runtime's limits.

    `skill_dir`: the skill's folder (the place `skill_dir`, read-only to the tools); default: the folder of the
    machine's `source` document when it exists. `allow_hosts`: hosts `fetch` may reach. Answers to `ask_user`:
    `answer` a callback (called with the question, a `str` whose `options` is the menu, and returning the answer)
    or, with `resume`, the text that answers the question the run waits on (`--answer`); `answers` answers given
    in advance, in order. With none of them and no terminal, a journaled run waits (`RunReport.waiting`) and
    resumes once with `RunConfig(resume=RUN_ID, answer=TEXT)`; without a journal (`journal=None`) the call fails
    as "needs a user".
    """

    machine: str | None = None
    executor: str | None = None  # scripted:FILE, replay:TRACE, openai:MODEL, anthropic:MODEL, local[:PATH]
    inputs: tuple[str, ...] = ()  # NAME=VALUE (JSON unless the variable is a string or an enum)
    input_file: str | None = None  # a JSON object of inputs
    base_url: str | None = None
    strategy: str = "auto"
    trace: str | None = None
    max_steps: int = 1000
    retries: int = 2
    journal: str | None = ".skillc/runs.sqlite"  # None: no journal (a run that asks and has nobody to ask fails)
    resume: str | None = None  # a run id
    tools: tuple[str, ...] = ()  # Python files whose functions implement tools
    workdir: str | None = None
    tool_timeout_s: float = 60.0
    model_timeout_s: float = 120.0
    step_deadline_s: float = 600.0
    mode: Literal["machine", "native", "prompt-only"] = "machine"
    skill_dir: str | None = None
    allow_hosts: tuple[str, ...] = ()
    answer: str | Callable[[str], str] | None = None
    answers: tuple[str, ...] | list[str] = ()


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


@attrs.define
class RunReport(HasDiagnostics):
    """`skillc run`: the run's result, or why there was none (the machine's check, a usage error, or a
    runtime error: `error` is its one-line message, with its SKM5xx code when it has one)."""

    result: RunResult | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False
    usage: Usage | None = None
    error: str | None = None
    machine_path: str | None = None
    interrupted: bool = False  # Ctrl-C or SIGTERM stopped the run; its committed steps are in the journal
    run_id: str | None = None  # with `interrupted`: the run `--resume` continues (None: no run had started)
    journal: str | None = None  # the journal the run is kept in (for the command that resumes it)
    workdir: str | None = None  # the run's work folder and skill folder (absolute): a resume must name them again
    skill_dir: str | None = None

    @property
    def waiting(self) -> Wait | None:
        """The question a run waits on (its `question`, `options`, `run_id`), or None."""
        return self.result.waiting if self.result is not None else None


def _input_value(machine: Machine, raw: str) -> tuple[str, Any]:
    """`name=value` from --input: strings as written, anything else as JSON."""
    import json

    from skillc.ir import types as T

    name, sep, value = raw.partition("=")
    if not sep:
        raise _UsageError(f"expected NAME=VALUE, got {raw!r}", "--input")
    var = machine.variables.get(name)
    if var is not None and isinstance(T.strip_optional(var.type), (T.StrT, T.EnumT)):
        return name, value
    try:
        return name, json.loads(value)
    except ValueError:
        raise _UsageError(f"the value of `{name}` is not JSON: {value!r}", "--input") from None


class _UsageError(Exception):
    """A usage problem found deep in `run`; becomes `RunReport.usage`."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.usage = Usage(message, param)


def run(config: RunConfig) -> RunReport:
    """Run a checked machine (or resume a crashed or waiting run) with the executor, tools and limits of `config`."""
    from skillc.diagnostics.files import FileProblem, JSONProblem, loads, read_text
    from skillc.runtime import ExecutorError, Journal, JournalError, RunError, RunOptions, ToolError, make_executor
    from skillc.runtime.interaction import AskUser, Question
    from skillc.runtime.executors.scripted import ScriptError
    from skillc.runtime.executors import spec_file
    from skillc.runtime.guard import refuse_resume_changes, refuse_trace_target
    from skillc.runtime.trace import TraceError

    class _Journal(Journal):
        """The journal, remembering the run it registered (an interrupt names it for `--resume`)."""

        started: str | None = None

        def start(self, *args: Any, **kwargs: Any) -> str:
            self.started = super().start(*args, **kwargs)
            return self.started

    c = config
    journal: _Journal | None = None
    try:
        if isinstance(c.answer, str) and not c.resume:
            return RunReport(None, usage=Usage("--answer answers the question a waiting run asked: give it with "
                                               "--resume RUN_ID", "--answer"))
        if c.resume and c.journal is None:
            return RunReport(None, usage=Usage("--resume continues a run from its journal; give the journal",
                                               "--resume"))
        journal = _Journal(c.journal) if c.journal is not None else None
        machine_path, executor_spec = c.machine, c.executor
        if c.resume and c.mode != "machine":  # a baseline keeps no journal: there is nothing to resume
            return RunReport(None, usage=Usage(f"--resume continues machine-mode runs; a {c.mode} run cannot be "
                                               "resumed", "--resume"))
        if c.resume:
            assert journal is not None
            info = journal.info(c.resume)
            refuse_resume_changes(info, executor_spec, bool(c.inputs or c.input_file), c.trace, machine_path)
            machine_path = machine_path or info.machine_path
            executor_spec = executor_spec or info.executor
        if not machine_path or not executor_spec:
            return RunReport(None, usage=Usage("give MACHINE and --executor (or --resume RUN_ID)"))
        if c.workdir is not None and not Path(c.workdir).is_dir():
            return RunReport(None, usage=Usage(f"no such folder: {c.workdir}", "--workdir"))
        if c.skill_dir is not None and not Path(c.skill_dir).is_dir():
            return RunReport(None, usage=Usage(f"no such folder: {c.skill_dir}", "--skill-dir"))
        refuse_trace_target(c.trace, [machine_path, c.journal, c.input_file, *c.tools, spec_file(executor_spec)])
        checked = load_checked(machine_path)
        if checked.machine is None:
            return RunReport(None, checked.diagnostics, checked.unchecked, machine_path=machine_path)
        machine = checked.machine
        given: dict[str, Any] = {}
        if c.input_file:
            given = loads(read_text(c.input_file, what="JSON file"))
            if not isinstance(given, dict):
                return RunReport(None, usage=Usage("the input file must hold a JSON object", "--input-file"))
        given.update(dict(_input_value(machine, raw) for raw in c.inputs))
        from skillc.runtime.session import default_skill_dir, run_mode, run_tools

        executor = make_executor(executor_spec, base_url=c.base_url, strategy=c.strategy, timeout_s=c.model_timeout_s)
        workdir = Path(c.workdir or ".").resolve()
        skill_dir = Path(c.skill_dir).resolve() if c.skill_dir is not None else default_skill_dir(machine)
        user = AskUser(answer=c.answer if callable(c.answer) else None, prepared=list(c.answers))
        answer = c.answer if isinstance(c.answer, str) else None
        if c.resume and answer is None and (callable(c.answer) or c.answers):
            assert journal is not None
            wait = journal.waiting(c.resume)  # a callback or prepared answer answers the question the run waits on
            if wait is not None:
                answer = (str(c.answer(Question(wait.question, wait.options))) if callable(c.answer)
                          else user.prepared.pop(0))
        tools = run_tools(machine, c.mode, workdir=workdir, skill_dir=skill_dir, modules=c.tools,
                          timeout_s=c.tool_timeout_s, allow_hosts=c.allow_hosts, ask_user=user)
        options = RunOptions(retries=c.retries, max_steps=c.max_steps, trace=Path(c.trace) if c.trace else None,
                             journal=journal, executor_spec=executor_spec, machine_path=str(machine_path),
                             step_deadline_s=c.step_deadline_s, workdir=str(workdir),
                             skill_dir=None if skill_dir is None else str(skill_dir), user=user)
        return RunReport(run_mode(machine, checked.text, c.mode, executor, tools, options, given, resume=c.resume,
                                  answer=answer), journal=c.journal, workdir=str(Path(workdir).resolve()),
                         skill_dir=None if skill_dir is None else str(Path(skill_dir).resolve()))
    except KeyboardInterrupt:  # the interpreter marked its run interrupted (resumable); a baseline keeps none
        return RunReport(None, interrupted=True, run_id=c.resume or (journal.started if journal else None))
    except _UsageError as exc:
        return RunReport(None, usage=exc.usage)
    except (RunError, ExecutorError, JournalError, ToolError, ScriptError, TraceError, FileProblem, JSONProblem,
            ValueError) as exc:
        code = getattr(exc, "code", None)  # the runtime's own errors carry their SKM5xx code
        return RunReport(None, error=f"{f'error[{code}]: ' if code else ''}{exc}")


@attrs.define
class ReplayResult(HasDiagnostics):
    """`skillc replay`: the verdict, or why there is none (the machine's check, or an unreadable trace)."""

    report: ReplayReport | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False
    error: str | None = None


def replay(machine_path: str, trace: str, *, other_machine: bool = False) -> ReplayResult:
    """Replay a trace through a checked machine without calling models or tools."""
    from skillc import runtime
    from skillc.runtime.trace import TraceError

    checked = load_checked(machine_path)
    if checked.machine is None:
        return ReplayResult(None, checked.diagnostics, checked.unchecked)
    try:
        return ReplayResult(runtime.replay_file(checked.machine, checked.text, trace, other_machine=other_machine))
    except TraceError as exc:
        return ReplayResult(None, _found(exc), error=str(exc))


@attrs.define
class ScoreResult(HasDiagnostics):
    """`skillc score`: one score per trace, or why there are none (the machine's check, the suite's diagnostics,
    an unreadable trace, a usage error)."""

    scores: list[TraceScore]
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False
    error: str | None = None
    usage: Usage | None = None

    @property
    def compliance(self) -> float | None:
        """Request-level full compliance: the share of compliant traces among those judged (None: none judged)."""
        from skillc.bench.score import tally

        return tally([sc.score.rfc for sc in self.scores]).rate

    @property
    def success(self) -> float | None:
        """Task success: the share of traces their verifier passed among those verified (None: none verified)."""
        from skillc.bench.score import tally

        return tally([sc.score.success for sc in self.scores]).rate


def score(machine_path: str, traces: Sequence[str], *, suite: str | None = None, task: str | None = None,
          workdir: str | None = None) -> ScoreResult:
    """Score traces against a checked machine: task success from the suite task's verifier, RFC from effects."""
    from skillc.bench.score import score_trace_file
    from skillc.bench.suite import load_suite
    from skillc.runtime.trace import TraceError

    if task is not None and suite is None:
        return ScoreResult([], usage=Usage("--task needs --suite", "--task"))
    checked = load_checked(machine_path)
    if checked.machine is None:
        return ScoreResult([], checked.diagnostics, checked.unchecked)
    loaded = load_suite(suite) if suite is not None else None
    if loaded is not None and loaded.suite is None:
        return ScoreResult([], list(loaded.diagnostics), error=f"{suite}: the suite has errors")
    the_suite = loaded.suite if loaded is not None else None
    if the_suite is not None and task is not None and task not in {t.id for t in the_suite.tasks}:
        from skillc.ir.suggest import did_you_mean

        hint = did_you_mean(task, [t.id for t in the_suite.tasks]) or ""
        return ScoreResult([], usage=Usage(f"the suite has no task `{task}`. {hint}".strip(), "--task"))
    try:
        return ScoreResult([score_trace_file(Path(t), checked.machine, suite=the_suite, task_id=task,
                                             workdir=Path(workdir) if workdir else None) for t in traces])
    except TraceError as exc:
        return ScoreResult([], _found(exc), error=str(exc))


def _found(exc: Exception) -> list[Diagnostic]:
    """The coded finding a trace reader raised with, when it has one."""
    diagnostic = getattr(exc, "diagnostic", None)
    return [diagnostic] if isinstance(diagnostic, Diagnostic) else []


@attrs.define
class ExploreResult(HasDiagnostics):
    """`skillc test`: the exploration's report and the machine explored, or the diagnostics why it was not."""

    report: TestReport | None
    machine: Machine | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    unchecked: bool = False


def explore(machine_path: str, *, coverage: str = "transitions", examples: int = 200, seed: int = 0,
            traces: str | None = None) -> ExploreResult:
    """Explore a checked machine with generated outputs; traces are kept in `traces` (else only failing ones)."""
    import shutil
    import tempfile

    from skillc.testing.explore import explore as run_explore

    checked = load_checked(machine_path)
    if checked.machine is None:
        return ExploreResult(None, None, checked.diagnostics, checked.unchecked)
    keep = Path(traces) if traces else Path(tempfile.mkdtemp(prefix="skillc-test-"))
    try:
        keep.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file or a device (`/dev/full`) where the folder goes, no permission, a full disk
        return ExploreResult(None, None, [make(diagnostics_codes.IO_ERROR, f"--traces {traces}: cannot keep traces "
                                               f"there ({'not a folder' if isinstance(exc, FileExistsError) else exc.strerror or exc})")])
    report = run_explore(checked.machine, checked.text, examples=examples, seed=seed, coverage=coverage, traces=keep)
    if not traces and not report.failures:
        shutil.rmtree(keep, ignore_errors=True)
    return ExploreResult(report, checked.machine)


# ---------------------------------------------------------------- drawing

@attrs.define
class DrawResult(HasDiagnostics):
    """`skillc dot`: the drawing's bytes, or the diagnostics (or, for a render or trace problem, the `error`)."""

    data: bytes | None
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    error: str | None = None


def _foreign_trace(trace: str, reason: str) -> Diagnostic:
    """SKM525: the trace drawn over a machine that did not record it."""
    from skillc.render.codes import TRACE_OF_ANOTHER_MACHINE

    return make(TRACE_OF_ANOTHER_MACHINE, f"{trace}: {reason}, so the drawing does not show its run",
                hint="overlay the trace on the machine that recorded it (its header's `skillc.machine`)")


def _drawable_fragment(loaded: LoadResult, path: str, name: str | None) -> tuple[Machine | None, str | None]:
    """The fragment of a library to draw (the only one, or `name`), or why there is none."""
    machines = _fragment_machines(loaded, path)
    if not machines:
        return None, f"{path} defines neither a machine nor a fragment: nothing to draw"
    if name is not None:
        if name not in machines:
            return None, f"{path} has no fragment `{name}` (it has {', '.join(machines)})"
        return machines[name], None
    if len(machines) > 1:
        return None, f"{path} is a library of {len(machines)} fragments ({', '.join(machines)}): pick one with --fragment"
    return next(iter(machines.values())), None


def draw_diff(old_path: str, new_path: str, fmt: str = "dot") -> DrawResult:
    """`skillc dot --diff OLD NEW`: NEW with what changed since OLD coloured (dot, svg or png); both must check."""
    from skillc.render import RenderError, render_image
    from skillc.render.diff import to_dot_diff

    if fmt == "mermaid":
        return DrawResult(None, error="--diff draws dot, svg or png, not mermaid")
    machines, found = [], []
    for path in (old_path, new_path):
        result = check(Path(path))
        found += [d for d in result.diagnostics if d.is_error]
        machines.append(result.machine)
    if found or machines[0] is None or machines[1] is None:
        return DrawResult(None, found)
    text = to_dot_diff(machines[0], machines[1])
    try:
        return DrawResult(text.encode("utf-8") if fmt == "dot" else render_image(text, fmt))
    except RenderError as exc:
        return DrawResult(None, error=str(exc))


def draw(machine_path: str, fmt: str = "dot", *, trace: str | None = None, fragment: str | None = None,
         stdin: IO[bytes] | None = None, stdin_filename: str | None = None) -> DrawResult:
    """Draw a checked machine (or a library's fragment) as `dot`, `svg`, `png` or `mermaid`; `-` reads `stdin`."""
    from skillc.check.source import CheckResult
    from skillc.render import RenderError, overlay_from_trace, render_image, to_dot, to_mermaid
    from skillc.runtime.trace import TraceError

    source = None
    if machine_path == "-":
        name = stdin_filename or "<stdin>"
        source, problems = read_stream(stdin, name) if stdin is not None else (None, [])
        origin = str(Path(name).absolute()) if stdin_filename else name
        result = check(source.text, path=origin) if source else CheckResult(None, problems)
    else:
        origin, result = machine_path, check(Path(machine_path))
    machine = result.machine
    if machine is None and result.ok:
        machine, problem = _drawable_fragment(load(source.text, path=origin) if source else load(Path(machine_path)),
                                              origin, fragment)
        if problem:
            return DrawResult(None, [make(diagnostics_codes.IO_ERROR, problem)])
    if machine is None or not result.ok:
        return DrawResult(None, [d for d in result.diagnostics if d.severity is not Severity.NOTE])
    try:
        overlay = overlay_from_trace(machine, trace) if trace else None
        # a trace of another machine would leave the drawing grey without a word: drawn, but said (SKM525)
        found = [_foreign_trace(trace, overlay.foreign)] if trace and overlay and overlay.foreign else []
        if fmt == "mermaid":
            return DrawResult(to_mermaid(machine, overlay).encode("utf-8"), found)
        text = to_dot(machine, overlay)
        return DrawResult(text.encode("utf-8") if fmt == "dot" else render_image(text, fmt), found)
    except (RenderError, TraceError) as exc:
        return DrawResult(None, error=str(exc))


# ---------------------------------------------------------------- front ends

Progress = Callable[[str, str], AbstractContextManager[Callable[[int], None] | None]]


def _no_progress(what: str, unit: str) -> AbstractContextManager[None]:
    """No progress display (the default of the API)."""
    return nullcontext(None)


@attrs.define
class BuildOutcome(HasDiagnostics):
    """`skillc build`: the front end's result, the machine's text as written (None when nothing may be
    written), where it goes (None: standard output), and `usage` when the output could not be used."""

    result: BuildResult | None
    text: str | None
    output: Path | None
    diagnostics: list[Diagnostic]
    usage: bool = False
    model: str | None = None  # the model the LLM compiler drafted with; None: the offline compiler
    model_origin: str = ""  # where the model was set: --model, SKILLC_MODEL or config ("" for none)


def build(skill: str, *, output: str | None = None, model: str | None = None, base_url: str | None = None,
          rounds: int = 3, tools: Iterable[str] = (), max_revisions: int = 2, max_repeats: int = 3,
          max_bytes: int = 1 << 20, verbose: bool = False, stdin: IO[bytes] | None = None,
          stdin_filename: str | None = None, strict: bool = False, max_tokens: int | None = None,
          section_tokens: int | None = None, model_timeout_s: float | None = None) -> BuildOutcome:
    """Compile a markdown skill (a file, a folder with SKILL.md, or `-` for `stdin`) into a checked machine.

    The LLM compiler runs whenever a model is configured: `model`, else `SKILLC_MODEL`, else `model` in the
    project's `[tool.skillc]` (`"offline"` forces the offline compiler); `max_tokens`, `section_tokens` and
    `model_timeout_s` (seconds one request may take) are its budgets (see
    `skillc.frontends.markdown.llm.LLMOptions`).
    """
    import tempfile

    from skillc.frontends.markdown import Options
    from skillc.frontends.markdown.frontdoor import resolve_model

    model, origin = resolve_model(model, Path(skill) if skill != "-" else None)
    budgets = {k: v for k, v in (("max_tokens", max_tokens), ("section_tokens", section_tokens),
                                 ("timeout_s", model_timeout_s)) if v is not None}

    options = Options(tools=frozenset(tools), max_revisions=max_revisions, max_repeats=max_repeats, strict=strict)
    if skill == "-":
        with tempfile.TemporaryDirectory(prefix="skillc-stdin-") as tmp:
            path = Path(tmp) / Path(stdin_filename or "SKILL.md").name
            path.write_bytes(stdin.read(max_bytes + 1) if stdin is not None else b"")
            return attrs.evolve(_build(path, output or "-", model, base_url, rounds, options, max_bytes, verbose,
                                       stdin_filename or "SKILL.md", budgets), model=model, model_origin=origin)
    path = Path(skill)
    if path.is_dir() and (path / "SKILL.md").is_file():
        path = path / "SKILL.md"
    return attrs.evolve(_build(path, output, model, base_url, rounds, options, max_bytes, verbose, None, budgets),
                        model=model, model_origin=origin)


def _build(path: Path, output: str | None, model: str | None, base_url: str | None, rounds: int, options: Any,
           max_bytes: int, verbose: bool, stdin_as: str | None, budgets: dict[str, float] | None = None) -> BuildOutcome:
    """`build` once the skill document is a file."""
    import json

    from skillc.diagnostics.files import same_file
    from skillc.frontends.markdown import build as build_skill
    from skillc.frontends.markdown import source_name

    out = None if output == "-" else Path(output) if output else path.with_suffix(".skm")
    if out is not None and same_file(out, path):
        return BuildOutcome(None, None, out, [make(diagnostics_codes.IO_ERROR, f"refusing to overwrite the skill document {path} "
                                                              "with the machine")], usage=True)
    if out is not None and not out.parent.is_dir():
        return BuildOutcome(None, None, out, [make(diagnostics_codes.IO_ERROR, f"no such folder for the output: {out.parent}")],
                            usage=True)
    try:
        llm = None
        if model is not None and budgets:
            from skillc.frontends.markdown.llm import LLMOptions

            llm = LLMOptions(**budgets)  # type: ignore[arg-type]  # token budgets (int) and the timeout (float)
        result = build_skill(path, output=out, options=options, model=model, base_url=base_url, rounds=rounds,
                             max_bytes=max_bytes, llm=llm)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return BuildOutcome(None, None, out, [internal_error(exc, f"building {path}")])
    diagnostics = unique(result.diagnostics)
    if stdin_as is not None:  # messages name the document stdin stood for, not its temporary copy
        for span in (s for d in diagnostics for s in (d.span, *(x.span for x in d.secondary)) if s is not None):
            if span.source.path == str(path):
                span.source.path = stdin_as
    if not verbose:  # the same policy in every format: the build's own notes (SKM3xx), others only with -v
        diagnostics = [d for d in diagnostics if d.severity is not Severity.NOTE or d.code.startswith("SKM3")]
    text = result.text if result.ok else None
    if text is not None and stdin_as is not None:  # the machine names the document stdin stood for
        text = text.replace(f'"{source_name(path, out)}"', json.dumps(stdin_as))
    return BuildOutcome(result, text, out, diagnostics)


@attrs.define
class DistillOutcome(HasDiagnostics):
    """`skillc distill`: the library built (None after a usage or internal error) and its diagnostics."""

    built: Built | None
    diagnostics: list[Diagnostic]
    usage: bool = False


def distill(traces: Sequence[str], *, output: str | None = None, min_reuse: float = 0.1, emit: str = "skm,python",
            heldout: Sequence[str] = (), games: str | None = None, report: bool = False,
            progress: Progress | None = None) -> DistillOutcome:
    """Distil reusable skills from successful JSONL traces; `output` is only checked here, not written.

    `progress(what, unit)` is a context manager that yields a callback told of every held-out game played.
    """
    from skillc.frontends.distill.library import build_library, target_problem

    kinds = tuple(k.strip() for k in emit.split(",") if k.strip())
    if not kinds or any(k not in ("skm", "python") for k in kinds):
        return DistillOutcome(None, [make(diagnostics_codes.IO_ERROR, f"expected a comma-separated subset of skm,python, not "
                                                    f"{emit!r}")], usage=True)
    if output is None and not report:
        return DistillOutcome(None, [make(diagnostics_codes.IO_ERROR, "say where to write the library (-o DIR), or ask only for "
                                                    "--report")], usage=True)
    problem = target_problem(output) if output else None
    if problem:
        return DistillOutcome(None, [make(diagnostics_codes.IO_ERROR, problem)], usage=True)
    try:
        with (progress or _no_progress)("held-out games played", "game") as tick:
            built = build_library(traces, heldout=heldout, min_reuse=min_reuse, emit=kinds, games=games,
                                  progress=tick)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return DistillOutcome(None, [internal_error(exc, "distilling traces")])
    return DistillOutcome(built, unique(built.diagnostics))



def refine(machine: str, traces: Sequence[str], *, output: str | None = None, archive: str | None = None,
           model: str | None = None, base_url: str | None = None, dry_run: bool = False) -> RefineResult:
    """`skillc refine`: grow a machine from development traces, each edit checked and replayed before it lands."""
    from skillc.improve.refine.refine import RefineOptions
    from skillc.improve.refine.refine import refine as run_refine

    return run_refine(RefineOptions(machine, tuple(traces), output, archive, model, base_url, dry_run))


# ---------------------------------------------------------------- one machine in every harness: conform, export, OTel

@attrs.define
class ConformResult(HasDiagnostics):
    """`skillc conform`: every transcript's report (None when the machine does not check), and the diagnostics:
    the machine's problems (`unchecked`), the transcripts' import problems, each violation (SKM860–SKM865)."""

    report: ConformReport | None
    diagnostics: list[Diagnostic]
    unchecked: bool = False


def conform(machine_path: str, transcripts: Sequence[str], *, trace_format: str | None = None) -> ConformResult:
    """Align native transcripts (skillc run traces of any mode, chat transcripts, Claude Code logs) to a checked
    machine without replaying any model, and report the rules and success evidence each one broke, and where."""
    from skillc.conform.conform import conform_files

    checked = load_checked(machine_path)
    if checked.machine is None:
        return ConformResult(None, checked.diagnostics, checked.unchecked)
    try:
        report = conform_files(checked.machine, transcripts, fmt=trace_format)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return ConformResult(None, [internal_error(exc, "conforming transcripts")])
    return ConformResult(report, list(report.diagnostics))


ExportResult = TextResult  # the Python module of an exported graph (None when the machine cannot be exported)


def export_graph(kind: str, machine_path: str) -> ExportResult:
    """`skillc export langgraph MACHINE`: a Python module building the checked machine as a LangGraph `StateGraph`
    whose nodes run skillc's own steps (`kind` is `langgraph`, the one system written so far)."""
    checked = load_checked(machine_path)
    if checked.machine is None:
        return ExportResult(None, checked.diagnostics)
    try:
        from skillc.export.langgraph import export

        return ExportResult(*export(checked.machine, machine_path))
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return ExportResult(None, [internal_error(exc, f"exporting {machine_path}")])


@attrs.define
class OtelResult(HasDiagnostics):
    """`export_otel`: the spans made, whether the collector (or exporter) took them, and the warnings."""

    spans: int
    sent: bool
    diagnostics: list[Diagnostic]


def export_otel(trace: RunTrace | str | os.PathLike[str], endpoint: str | None = None, *, exporter: Any = None,
                timeout_s: float = 5.0) -> OtelResult:
    """Send a finished run (a `RunTrace`, or a trace file) as OpenTelemetry spans: `invoke_agent {machine}` with one
    `chat {model}` / `execute_tool {tool}` span per step, by OTLP/HTTP to `endpoint` (or to an SDK `exporter`).
    A collector that refuses or cannot be reached is the warning SKM880, never an exception."""
    from skillc.otel import codes as otel_codes
    from skillc.otel.send import endpoint_problem, send
    from skillc.runtime.record import RunTrace as Run
    from skillc.runtime.record import read_run

    problem = endpoint_problem(endpoint) if endpoint is not None else None
    if problem is not None:
        return OtelResult(0, False, [make(diagnostics_codes.IO_ERROR, problem)])
    if isinstance(trace, Run):
        run_trace: Run | None = trace
    else:
        run_trace, problems = read_run(os.fspath(trace))
        if run_trace is None:
            why = "; ".join(d.message for d in problems[:1]) or "it holds no run"
            return OtelResult(0, False, [make(otel_codes.TRACE_NOT_READ_FOR_SPANS, f"no spans were sent: the trace {trace} "
                                              f"cannot be read ({why})")])
    try:
        assert run_trace is not None
        sent = send(run_trace, endpoint, exporter=exporter, timeout_s=timeout_s)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return OtelResult(0, False, [internal_error(exc, "sending the run's spans")])
    return OtelResult(sent.spans, sent.exported, list(sent.diagnostics))


def run_with_otel(config: RunConfig, endpoint: str, *, timeout_s: float = 5.0) -> RunReport:
    """`skillc run --otel ENDPOINT`: `run`, then its spans sent once the run has ended (built from its trace; a run
    without `--trace` writes one to a temporary folder for the purpose). A failure to send is a warning in the
    report's diagnostics: the run's result, its trace and its exit status do not change."""
    import tempfile

    from skillc.otel.send import endpoint_problem

    problem = endpoint_problem(endpoint)
    if problem is not None:
        return RunReport(None, usage=Usage(problem, "--otel"))
    with tempfile.TemporaryDirectory(prefix="skillc-otel-") as scratch:
        own = config.trace is None and config.resume is None
        report = run(attrs.evolve(config, trace=str(Path(scratch) / "run.jsonl")) if own else config)
        if report.result is not None and report.result.trace:
            report.diagnostics.extend(export_otel(report.result.trace, endpoint, timeout_s=timeout_s).diagnostics)
            if own:
                report.result = attrs.evolve(report.result, trace=None)
    return report

@attrs.define
class CollectResult(HasDiagnostics):
    """`skillc collect`: the JSONL of the recorded traces and the line to report, or the diagnostics."""

    text: str | None
    summary: str
    diagnostics: list[Diagnostic]


def collect(output: str, *, count: int = 20, seed: int = 0, games: str = ".skillc/games", workers: int = 1,
            env: str = "textworld", domain: str = "blocks", split: str = "train",
            progress: Progress | None = None) -> CollectResult:
    """Record runs as traces: TextWorld cooking walkthroughs, or PDDL plans solved by pyperplan (not written).

    `progress(what, unit)` is a context manager that yields a callback told of every game or problem done.
    """
    from skillc.frontends.distill import textworld as tw
    from skillc.frontends.distill.trace import dumps

    bar = progress or _no_progress
    if env == "pddl":
        from skillc.frontends.distill import pddl

        try:
            chosen = pddl.problems(domain, split)[:count]
            if not Path(output).resolve().parent.is_dir():
                raise tw.Unavailable(f"no such folder for the output: {Path(output).parent}")
            with bar(f"{domain} problems solved", "problem") as tick:
                traces = pddl.collect(domain, split, chosen, progress=tick)
        except tw.Unavailable as exc:
            return CollectResult(None, "", [make(diagnostics_codes.IO_ERROR, str(exc))])
        return CollectResult(dumps(traces), f"{len(traces)} traces of {len(chosen)} {domain} problems ({split})", [])
    problem = None
    try:
        tw.import_textworld()
        Path(games).mkdir(parents=True, exist_ok=True)
    except tw.Unavailable as exc:
        problem = str(exc)
    except OSError as exc:
        problem = f"cannot keep games in {games}: {exc.strerror or exc}"
    if problem is None and not Path(output).resolve().parent.is_dir():
        problem = f"no such folder for the output: {Path(output).parent}"
    if problem:
        return CollectResult(None, "", [make(diagnostics_codes.IO_ERROR, problem)])
    dropped: list[str] = []
    with bar("games generated and played", "game") as tick:
        played = tw.collect(tw.specs(count, seed), games, workers=workers, progress=tick, dropped=dropped)
    from skillc.frontends.distill import codes as distill_codes

    left_out = [make(distill_codes.GAME_UNAVAILABLE, f"left out {why}") for why in dropped]
    if not played:  # an empty trace file is not a result: say so, write nothing
        return CollectResult(None, "", [*left_out, make(distill_codes.NO_TRACES, f"none of the {count} games could "
                                                        "be made; nothing written")])
    recorded = tw.relative_to(played, Path(output).parent)
    won = sum(t.success for t in recorded)
    return CollectResult(dumps(recorded), f"{len(recorded)} traces ({won} won) of {count} games; games in {games}",
                         left_out)


# ---------------------------------------------------------------- benchmarks

@attrs.define
class BenchResult(HasDiagnostics):
    """`skillc bench`: what the bench did (its rows, report and output folder) and its diagnostics."""

    outcome: BenchOutcome | None
    diagnostics: list[Diagnostic]


def bench_otel(result: BenchResult, endpoint: str, *, timeout_s: float = 5.0) -> list[Diagnostic]:
    """Send every cell of a finished bench (each row's trace) as OpenTelemetry spans, one `invoke_agent` trace per
    cell, to `endpoint` (OTLP/HTTP). A collector that refuses is one warning (SKM880) per cell, never an exception;
    the bench's rows, report and exit status do not change."""
    outcome = result.outcome
    if outcome is None or outcome.out is None:
        return []
    found: list[Diagnostic] = []
    for row in outcome.rows:
        if row.trace is None:
            continue
        path = Path(row.trace) if os.path.isabs(row.trace) else outcome.out / row.trace
        sent = export_otel(path, endpoint, timeout_s=timeout_s).diagnostics
        found.extend(sent)
        if any(d.severity.name == "ERROR" for d in sent):
            break  # a bad endpoint: said once
    return found


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
    """`skillc evolve`: improve a machine on one suite task under an execution budget (skillc.improve.evolve's tree search)."""
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

    try:
        return serve_mcp(config)
    except Exception as exc:  # noqa: BLE001 - an internal error is reported, not raised
        return ServeResult([internal_error(exc, "serving the machines over MCP")])
