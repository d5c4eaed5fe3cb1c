"""Load a `.skm` file with its imports: read, parse, resolve `import`, lower.

`import "stdlib/NAME.skm"` resolves to the bundled library; any other path is
relative to the importing file and must stay inside the project root (the
nearest folder above the entry file holding `skillc.toml`, `pyproject.toml` or
`.git`, else the entry file's folder).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from skillc.diagnostics import Diagnostic, SourceFile, codes, make
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.ir.lower import FragmentDef, Lowered, Scope, lower_module
from skillc.ir.machine import Machine
from skillc.syntax import nodes as n
from skillc.syntax.grammar import stdlib_path
from skillc.syntax.parser import parse_source, read_source

_MARKERS = ("skillc.toml", "pyproject.toml", ".git")


def project_root(entry: Path) -> Path:
    """The folder imports are confined to."""
    try:
        start = entry.resolve().parent
    except (OSError, RuntimeError, ValueError):  # a symlink loop or a NUL byte: reading reports it
        start = Path(os.path.abspath(entry)).parent if "\x00" not in str(entry) else Path.cwd()
    for folder in (start, *start.parents):
        if any((folder / m).exists() for m in _MARKERS):
            return folder
    return start


@attrs.define
class LoadResult(HasDiagnostics):
    """What loading produced: the machine (None when it could not be built), module and diagnostics."""

    machine: Machine | None
    module: n.Module | None
    diagnostics: list[Diagnostic]
    fragments: dict[str, FragmentDef] = attrs.Factory(dict)


    def __iter__(self) -> Iterator[Any]:
        yield self.machine
        yield self.diagnostics


class ImportCache:
    """Lowered imports shared by several loads, so one `skillc check` run reads each library once."""

    def __init__(self) -> None:
        self.done: dict[Path, Lowered | None] = {}
        #: Texts to read instead of these files (an editor's unsaved buffers, for the language server).
        self.texts: dict[Path, str] = {}
        #: What parses the entry source instead of `parse_source` (the language server's incremental parser,
        #: `skillc.check.incremental.ItemParser.parse`, which returns the same tree).
        self.parse: Callable[[SourceFile], tuple[n.Module | None, list[Diagnostic]]] | None = None


#: How many files deep imports may nest (a chain, not the number of files imported).
MAX_IMPORT_DEPTH = 64


class Loader:
    """Loads entry files and their imports, each import once, reporting cycles."""

    def __init__(self, root: Path | None = None, imports: ImportCache | None = None) -> None:
        self.fixed_root = root
        self.root: Path | None = root
        self.imports = imports or ImportCache()
        self.diagnostics: list[Diagnostic] = []
        self._active: list[Path] = []

    def report(self, d: Diagnostic) -> None:
        self.diagnostics.append(d)

    def load_source(self, source: SourceFile, path: Path | None) -> LoadResult:
        """Parse and lower an entry source (its file may not exist, e.g. an editor buffer)."""
        self.root = self.fixed_root or (project_root(path) if path is not None else Path.cwd())
        self.diagnostics = []
        self._active = [path.resolve()] if path is not None else []
        module, diags = (self.imports.parse or parse_source)(source)
        self.diagnostics.extend(diags)
        if module is None:
            return LoadResult(None, None, self.diagnostics)
        lowered = self._lower(module, source, path)
        return LoadResult(lowered.machine, module, self.diagnostics, lowered.fragments)

    def load_path(self, path: Path) -> LoadResult:
        """Read and load an entry file."""
        source, diags = read_source(path)
        if source is None:
            return LoadResult(None, None, diags)
        return self.load_source(source, path)

    def _lower(self, module: n.Module, source: SourceFile, path: Path | None) -> Lowered:
        scope = Scope()
        for imp in module.imports:
            lowered = self._import(imp, path)
            if lowered is None:
                continue
            for name, t in lowered.types.items():
                scope.types.setdefault(name, t)
            for name, f in lowered.fragments.items():
                scope.fragments.setdefault(name, f)
        return lower_module(module, scope, str(path) if path is not None else source.path, self.report)

    def _resolve(self, imp: n.Import, importer: Path | None) -> Path | None:
        raw = imp.path
        if raw.startswith("stdlib/"):
            lib = stdlib_path().resolve()
            target = (lib / raw[len("stdlib/"):]).resolve()
            if not target.is_relative_to(lib):
                self.report(make(codes.IMPORT_ESCAPES_ROOT, f"`{raw}` leaves the standard library", imp.span,
                                 label="escapes stdlib/"))
                return None
            return target
        base = importer.resolve().parent if importer is not None else Path.cwd()
        target = (base / raw).resolve()
        root = (self.root or base).resolve()
        if not target.is_relative_to(root):
            self.report(make(codes.IMPORT_ESCAPES_ROOT, f"`{raw}` is outside the project root {root}", imp.span,
                             label="escapes the project"))
            return None
        return target

    def _import(self, imp: n.Import, importer: Path | None) -> Lowered | None:
        if len(self._active) >= MAX_IMPORT_DEPTH:  # each level recurses: a long chain would overflow the stack
            self.report(make(codes.IMPORT_NOT_FOUND,
                             f"cannot import `{imp.path}`: imports nest more than {MAX_IMPORT_DEPTH} "
                             "files deep", imp.span, label="too deep"))
            return None
        try:
            target = self._resolve(imp, importer)
            found = target is not None and (target in self.imports.texts or target.is_file())
        except (OSError, RuntimeError, ValueError) as exc:  # a NUL byte, a symlink loop
            why = "the path contains a NUL byte" if isinstance(exc, ValueError) else \
                "too many levels of symbolic links (a symlink loop)" if isinstance(exc, RuntimeError) else \
                (exc.strerror or str(exc))
            self.report(make(codes.IMPORT_NOT_FOUND, f"cannot find `{imp.path}`: {why}", imp.span,
                             label="no such file"))
            return None
        if target is None:
            return None
        if target in self._active:
            chain = self._active[self._active.index(target):] + [target]
            self.report(make(codes.IMPORT_CYCLE, "import cycle: " + " -> ".join(p.name for p in chain), imp.span,
                             label="closes the cycle"))
            return None
        if target in self.imports.done:
            return self.imports.done[target]
        if not found:
            self.report(make(codes.IMPORT_NOT_FOUND, f"cannot find `{imp.path}`", imp.span, label="no such file",
                             notes=[f"looked for {target}"]))
            return None
        text = self.imports.texts.get(target)
        source, diags = (SourceFile.from_text(str(target), text), []) if text is not None else read_source(target)
        self.diagnostics.extend(diags)
        if source is None:
            return None
        module, diags = parse_source(source)
        self.diagnostics.extend(diags)
        if module is None:
            self.imports.done[target] = None
            return None
        self._active.append(target)
        try:
            lowered = self._lower(module, source, target)
        finally:
            self._active.pop()
        self.imports.done[target] = lowered
        return lowered


def load(source: str | os.PathLike[str], *, path: str | None = None, root: str | os.PathLike[str] | None = None,
         imports: ImportCache | None = None) -> LoadResult:
    """Load `.skm` text (a `str`, named by `path`) or a file (a path) with its imports."""
    loader = Loader(Path(root) if root is not None else None, imports)
    if isinstance(source, os.PathLike):
        return loader.load_path(Path(source))
    return loader.load_source(SourceFile.from_text(path or "<string>", source), Path(path) if path else None)


__all__ = ["ImportCache", "LoadResult", "Loader", "load", "project_root"]
