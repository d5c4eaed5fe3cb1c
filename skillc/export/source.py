"""A machine's module made to stand alone: its imports inlined, so that one text loads into the same machine.

An exported graph carries the machine it runs as `.skm` text, and that text must not depend on files beside the
machine: every `import` of a project file is replaced by the types and fragments of the imported module (and of
its own imports, each file once), in import order, ahead of the module's own declarations. Imports of the standard
library (`import "stdlib/…"`) stay: skillc ships it, so they resolve wherever the text is loaded. The result is
printed by the canonical printer (comments kept), so it loads — fragments expanded, rules with their quotations —
into a machine equal to the original one (`compare.differences` checks that).

One difference remains for an inlined project fragment: its rules now stand in the machine's own file, so
`skillc check` compares their quotations with the machine's skill document (SKM223 when the fragment quotes
another text), as it does for every fragment written beside a machine.
"""

from __future__ import annotations

from pathlib import Path

from skillc.diagnostics import Diagnostic, codes, make
from skillc.syntax import nodes as n
from skillc.syntax.grammar import stdlib_path
from skillc.syntax.parser import parse_source, read_source
from skillc.syntax.printer import print_module

#: How deep imports may nest (as the loader's limit).
MAX_DEPTH = 64
_DECLARED = (n.Fragment, n.RecordDecl, n.EnumDecl)


def _resolve(raw: str, importer: Path) -> Path:
    if raw.startswith("stdlib/"):
        return (stdlib_path() / raw[len("stdlib/"):]).resolve()
    return (importer.resolve().parent / raw).resolve()


def _declared_name(item: n.Stmt) -> str | None:
    return item.name if isinstance(item, _DECLARED) else None


def standalone(path: str | Path) -> tuple[str | None, list[Diagnostic]]:
    """The module of `path` with its imports inlined, as canonical `.skm` text (None when a file cannot be read or
    parsed: the diagnostics say why; a machine that loads has none of those)."""
    source, problems = read_source(Path(path))
    if source is None:
        return None, problems
    module, found = parse_source(source)
    if module is None:
        return None, problems + found
    own = {name for item in module.items if (name := _declared_name(item)) is not None}
    inlined: list[n.Stmt] = []
    library = {i.path: i for i in module.imports if i.path.startswith("stdlib/")}
    problems += _inline(module, Path(path), own, inlined, library, set(), 0)
    if any(d.is_error for d in problems):
        return None, problems
    body = [*library.values(), *inlined, *(i for i in module.items if not isinstance(i, n.Import))]
    return print_module(n.Module(tuple(body), end_comments=module.end_comments)), problems


def _inline(module: n.Module, path: Path, taken: set[str], out: list[n.Stmt], library: dict[str, n.Import],
            seen: set[Path], depth: int) -> list[Diagnostic]:
    """Append the types and fragments of `module`'s project imports (depth first, each file once) to `out`, and
    the standard-library imports they make to `library`."""
    problems: list[Diagnostic] = []
    for imp in module.imports:
        if imp.path.startswith("stdlib/"):
            continue
        target = _resolve(imp.path, path)
        if target in seen:
            continue
        seen.add(target)
        if depth >= MAX_DEPTH:
            return [make(codes.IMPORT_NOT_FOUND, f"cannot inline `{imp.path}`: imports nest more than {MAX_DEPTH} "
                         "files deep", imp.span)]
        source, found = read_source(target)
        if source is None:
            problems += found
            continue
        imported, found = parse_source(source)
        if imported is None:
            problems += found
            continue
        problems += _inline(imported, target, taken, out, library, seen, depth + 1)
        library.update((i.path, i) for i in imported.imports if i.path.startswith("stdlib/"))
        for item in imported.items:
            name = _declared_name(item)
            if name is not None and name not in taken:
                taken.add(name)
                out.append(item)
    return problems
