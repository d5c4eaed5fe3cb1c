"""Rename states, variables, tools, fragment instances and fragments, across files where names cross them.

A name's occurrences are those with the same symbol key (`skillc.lsp.resolve`): a state and an enum label
that are both called `bad` stay apart. What a machine declares is renamed in its file. What a fragment
declares crosses files: the fragment's name (`use NAME as …` in every file that imports the fragment's
file), its parameters (`use f as i(PARAM: …)`), its exits (`-> (EXIT: …)`) and its states and variables
(`inst.STATE`, `inst.VAR` through its instances). The other files are the workspace's `.skm` files that
mention the name (open buffers read in place of their files), each parsed and resolved against its own
imports. Names defined in the standard library, `fallback` and the places are not renamed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from skillc.lsp.resolve import Key, Occurrence, Resolved, resolve
from skillc.syntax import nodes as n
from skillc.syntax.grammar import NAME, is_name, stdlib_path
from skillc.syntax.parser import parse

RENAMEABLE = frozenset({"state", "variable", "tool", "instance", "fragment"})
_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache", ".mypy_cache"}
MAX_FILES = 5000


class RenameError(Exception):
    """Why a name cannot be renamed (shown to the user)."""


def _in_stdlib(path: str) -> bool:
    try:
        return Path(path).resolve().is_relative_to(stdlib_path().resolve())
    except (OSError, ValueError):
        return False


def renameable(occ: Occurrence | None) -> Occurrence:
    """The occurrence if its symbol can be renamed, else RenameError saying why."""
    if occ is None or occ.key is None:
        raise RenameError("no name to rename here")
    if occ.kind not in RENAMEABLE:
        raise RenameError(f"a {occ.kind} cannot be renamed")
    if occ.name == "fallback":
        raise RenameError("`fallback` is a keyword")
    path = occ.key[1]
    if path == "?":
        raise RenameError(f"the fragment that defines `{occ.name}` was not found")
    if _in_stdlib(path):
        raise RenameError(f"`{occ.name}` is defined in the standard library")
    return occ


def check_new_name(new: str, kind: str) -> None:
    if not NAME.fullmatch(new):
        raise RenameError(f"`{new}` is not a name")
    if not is_name(new):
        raise RenameError(f"`{new}` is a keyword")


def crosses_files(key: Key) -> bool:
    """Whether occurrences of the symbol may be in other files: it belongs to a fragment, or is one."""
    return key[0] == "fragment" or (len(key) >= 4 and key[0] in ("state", "variable") and key[2] != "")


def resolve_file(path: str, text: str, read: Callable[[str], str | None]) -> Resolved | None:
    """A file parsed and resolved against its imports' fragments (read through `read`)."""
    module, _ = parse(text, path)
    if module is None:
        return None
    return resolve(module, text, path, imported_fragments(module, path, read))


def imported_fragments(module: n.Module, path: str, read: Callable[[str], str | None]) -> dict[str, str]:
    """Fragment -> file, for the fragments the module's own imports define."""
    out: dict[str, str] = {}
    for imp in module.imports:
        if imp.path.startswith("stdlib/"):
            target = stdlib_path() / imp.path[len("stdlib/"):]
        else:
            target = Path(path).parent / imp.path
        try:
            target_path = str(target.resolve())
        except (OSError, RuntimeError, ValueError):
            continue
        text = read(target_path)
        if text is None:
            continue
        imported, _ = parse(text, target_path)
        if imported is None:
            continue
        for frag in imported.fragments:
            out.setdefault(frag.name, target_path)
    return out


def workspace_files(roots: Iterable[str], name: str, read: Callable[[str], str | None]) -> list[str]:
    """The `.skm` files under the roots whose text mentions `name` as a word."""
    word = re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")
    found: list[str] = []
    seen = 0
    for root in roots:
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
            for f in files:
                if not f.endswith(".skm"):
                    continue
                seen += 1
                if seen > MAX_FILES:
                    return found
                p = str(Path(folder, f).resolve())
                text = read(p)
                if text is not None and word.search(text):
                    found.append(p)
    return found


def rename_edits(here: Resolved, offset: int, new: str, roots: Iterable[str],
                 read: Callable[[str], str | None]) -> dict[str, list[tuple[int, int, str]]]:
    """path -> [(start, end, new text)] renaming the symbol at `offset` of the resolved document `here`."""
    occ = renameable(here.at(offset))
    check_new_name(new, occ.kind)
    key = occ.key
    assert key is not None
    _no_clash(here, key, new)
    files: dict[str, Resolved] = {here.path: here}
    if crosses_files(key):
        candidates = set(workspace_files(roots, occ.name, read))
        candidates.add(key[1])
        for p in sorted(candidates):
            if p in files or _in_stdlib(p):
                continue
            text = read(p)
            if text is None:
                continue
            resolved = resolve_file(p, text, read)
            if resolved is not None:
                files[p] = resolved
    edits: dict[str, list[tuple[int, int, str]]] = {}
    for p, resolved in files.items():
        spots = sorted({(o.start, o.end) for o in resolved.occurrences if o.key == key})
        if spots:
            edits[p] = [(s, e, new) for s, e in spots]
    return edits


def _no_clash(here: Resolved, key: Key, new: str) -> None:
    """Refuse a name the same scope already declares for the same kind of thing."""
    clash = next((o for o in here.occurrences if o.definition and o.key is not None and o.key[0] == key[0]
                  and o.key[:-1] == key[:-1] and o.name == new), None)
    if clash is not None:
        raise RenameError(f"`{new}` is already declared here")
