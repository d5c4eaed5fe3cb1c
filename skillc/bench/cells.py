"""Where each cell of a bench lives: one folder per cell holding its isolated workdir and its trace.

`cell_paths(out, cell)` is `OUT/cells/TASK/MODE/EXECUTOR/rREPEAT/` with `work/` and
`trace.jsonl` inside; each part is made safe as a file name (an executor spec such as
`local:/models/m.gguf` included) and, when it had to be changed, suffixed with a
short hash of the original so two cells never share a folder. `fresh_workdir` empties
the cell's folder — a cell that was running when the bench was killed left one
behind, and it runs again from nothing — and copies the task's fixture folder in
(symlinks copied as links, never followed).
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import attrs

from skillc.bench.results import Cell
from skillc.diagnostics import Diagnostic, codes, make

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@attrs.frozen
class CellPaths:
    """A cell's folder, its workdir and its trace file."""

    folder: Path
    workdir: Path
    trace: Path


def safe_name(text: str) -> str:
    """`text` as one file-name part: unchanged when already safe, else cleaned and suffixed with a short hash."""
    cleaned = _UNSAFE.sub("_", text).strip("._") or "_"
    if cleaned == text:
        return text
    return f"{cleaned[:60]}-{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()[:8]}"


def cell_paths(out: Path, cell: Cell) -> CellPaths:
    """The paths of a cell under the bench's output folder."""
    folder = out / "cells" / safe_name(cell.task) / safe_name(cell.mode) / safe_name(cell.executor) / \
        f"r{cell.repeat}"
    return CellPaths(folder, folder / "work", folder / "trace.jsonl")


def fresh_workdir(out: Path, paths: CellPaths, fixture: Path | None) -> Diagnostic | None:
    """Empty the cell's folder and create its workdir, with the fixture's files when there is one; SKM901 if not."""
    root = (out / "cells").resolve()
    folder = paths.folder.resolve()
    if root not in folder.parents:  # never remove anything outside the bench's own cells
        raise ValueError(f"{paths.folder} is not a cell folder under {out}")
    try:
        if folder.exists() or folder.is_symlink():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        if fixture is None:
            paths.workdir.mkdir()
        else:
            shutil.copytree(fixture, paths.workdir, symlinks=True)
    except (OSError, shutil.Error) as exc:
        return make(codes.IO_ERROR, f"cannot prepare the workdir of {paths.folder}: {exc}")
    return None
