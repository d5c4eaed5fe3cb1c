"""The commands of the `.skm` language itself, and the check gate every command that runs a machine passes.

parse, load, format, check (with `check_files`, what `skillc check` does), describe (`skillc show`) and
`load_checked` (only a machine that passes `skillc check` runs, replays, scores, serves or is exported). Each
package's command module (`skillc.runtime.command`, `skillc.render.command`, ...) imports these from here, below
`skillc.api`, which re-exports them with every other command. Like `skillc.api` this module is part of the
start-up boundary: the stages it drives (the parser, the checker, the ASL importer) are imported on first use, so
importing it loads no stage.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs

from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.diagnostic import Diagnostic, HasDiagnostics, Severity, internal_error, make, unique

if TYPE_CHECKING:
    from collections.abc import Iterable

    from skillc.check.config import Config
    from skillc.check.context import Kept
    from skillc.check.source import CheckResult
    from skillc.diagnostics.source import SourceFile
    from skillc.ir.loader import ImportCache, LoadResult
    from skillc.ir.machine import Machine
    from skillc.syntax import nodes

_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache"}
_ASL_SUFFIXES = (".asl.json", ".asl.yaml", ".asl.yml")


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
          smt_timeout_ms: int | None = None, imports: ImportCache | None = None, mcp_live: bool = False,
          kept: Kept | None = None) -> CheckResult:
    """Load and statically check a machine (or a library of fragments); `*.asl.json|yaml` files are imported.

    `mcp_live`: start the MCP servers the machine's tools name to list their schemas (and write the lock file), as
    `skillc check` does; otherwise they are compared with `skillc.mcp.lock` only. `kept`: per-state results kept
    across checks (`skillc.check.context.Kept`: the language server holds one), reused where a state is unchanged."""
    named = str(source) if isinstance(source, os.PathLike) else path or ""
    if named.lower().endswith(_ASL_SUFFIXES):
        return check_asl(source, path=path, config=config, smt_timeout_ms=smt_timeout_ms)
    from skillc.check.source import check_source

    return check_source(source, path=path, skill=skill, root=root, config=config, smt_timeout_ms=smt_timeout_ms,
                        imports=imports, mcp_live=mcp_live, kept=kept)


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


def fragment_machines(loaded: LoadResult, path: str) -> dict[str, Machine]:
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
                                          + summary(m) for name, m in fragment_machines(result, path).items()),
                              result.diagnostics)
    if result.machine is None or not result.ok:
        return DescribeResult(None, result.diagnostics)
    return DescribeResult(summary(result.machine), result.diagnostics)


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
