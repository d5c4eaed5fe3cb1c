"""Load a `.skm` file with its imports: read, parse, resolve `import`, lower.

`import "stdlib/NAME.skm"` resolves to the bundled library; any other path is
relative to the importing file and must stay inside the project root (the
nearest folder above the entry file holding `skillc.toml`, `pyproject.toml` or
`.git`, else the entry file's folder).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from skillc.diagnostics import Diagnostic, SourceFile, make
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.ir.lower import FragmentDef, Lowered, Scope, lower_module
from skillc.ir.machine import Machine
from skillc.syntax import nodes as n
from skillc.syntax.grammar import stdlib_path
from skillc.syntax.parser import parse_source, read_source

_MARKERS = ("skillc.toml", "pyproject.toml", ".git")


def project_root(entry: Path) -> Path:
    """The folder imports are confined to."""
    start = entry.resolve().parent
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


    def __iter__(self):
        yield self.machine
        yield self.diagnostics


class Loader:
    """Loads files and their imports, each file once, reporting cycles."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root
        self.diagnostics: list[Diagnostic] = []
        self._done: dict[Path, Lowered | None] = {}
        self._active: list[Path] = []

    def report(self, d: Diagnostic) -> None:
        self.diagnostics.append(d)

    def load_source(self, source: SourceFile, path: Path | None) -> LoadResult:
        """Parse and lower an entry source (its file may not exist, e.g. an editor buffer)."""
        if self.root is None:
            self.root = project_root(path) if path is not None else Path.cwd()
        module, diags = parse_source(source)
        self.diagnostics.extend(diags)
        if module is None:
            return LoadResult(None, None, self.diagnostics)
        if path is not None:
            self._active.append(path.resolve())
        lowered = self._lower(module, source, path)
        return LoadResult(lowered.machine, module, self.diagnostics, lowered.fragments)

    def load_path(self, path: Path) -> LoadResult:
        source, diags = read_source(path)
        if source is None:
            self.diagnostics.extend(diags)
            return LoadResult(None, None, self.diagnostics)
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
                self.report(make("SKM125", f"`{raw}` leaves the standard library", imp.span,
                                 label="escapes stdlib/"))
                return None
            return target
        base = importer.resolve().parent if importer is not None else Path.cwd()
        target = (base / raw).resolve()
        root = (self.root or base).resolve()
        if not target.is_relative_to(root):
            self.report(make("SKM125", f"`{raw}` is outside the project root {root}", imp.span,
                             label="escapes the project"))
            return None
        return target

    def _import(self, imp: n.Import, importer: Path | None) -> Lowered | None:
        target = self._resolve(imp, importer)
        if target is None:
            return None
        if target in self._active:
            chain = self._active[self._active.index(target):] + [target]
            self.report(make("SKM126", "import cycle: " + " -> ".join(p.name for p in chain), imp.span,
                             label="closes the cycle"))
            return None
        if target in self._done:
            return self._done[target]
        if not target.is_file():
            self.report(make("SKM124", f"cannot find `{imp.path}`", imp.span, label="no such file",
                             notes=[f"looked for {target}"]))
            return None
        source, diags = read_source(target)
        self.diagnostics.extend(diags)
        if source is None:
            return None
        module, diags = parse_source(source)
        self.diagnostics.extend(diags)
        if module is None:
            self._done[target] = None
            return None
        self._active.append(target)
        try:
            lowered = self._lower(module, source, target)
        finally:
            self._active.pop()
        self._done[target] = lowered
        return lowered


def load(path: str | Path, root: str | Path | None = None) -> LoadResult:
    """Load a machine file and everything it imports."""
    return Loader(Path(root) if root else None).load_path(Path(path))


def load_text(text: str, path: str = "<string>", root: str | Path | None = None) -> LoadResult:
    """Load a machine from text; relative imports resolve against `path`'s folder."""
    p = Path(path) if path != "<string>" else None
    source = SourceFile(path, text.replace("\r\n", "\n"))
    return Loader(Path(root) if root else None).load_source(source, p)


__all__ = ["LoadResult", "Loader", "load", "load_text", "project_root"]
