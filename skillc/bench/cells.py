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
import os
import re
import shutil
import signal
import subprocess
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
    if (out / "cells").is_symlink():  # never follow a link planted in the output folder out of it
        return make(codes.UNSAFE_OUTPUT, f"cannot prepare {paths.folder}: {out / 'cells'} is a symlink; cells are "
                    "never written through a link", hint="remove the link, or write to another output folder (-o)")
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


@attrs.frozen
class HookResult:
    """How a cell's setup or teardown command ended: None `error` when it exited 0; its process group's id."""

    error: str | None
    group: int | None = None


def run_hook(what: str, command: str, workdir: Path, log: Path, timeout_s: float,
             env: dict[str, str]) -> HookResult:
    """Run a setup or teardown command with `/bin/sh -c` in the workdir, in its own process group, its output
    appended to `log`; killed (the whole group) after `timeout_s`."""

    try:
        with log.open("ab") as out:
            out.write(f"$ {command}   # {what}\n".encode("utf-8", "surrogateescape"))
            out.flush()
            proc = subprocess.Popen(["/bin/sh", "-c", command], cwd=workdir, stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT, env={**os.environ, **env}, start_new_session=True)
    except OSError as exc:
        return HookResult(f"{what} could not start: {exc.strerror or exc}")
    try:
        status = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_group(proc.pid, signal.SIGKILL)
        proc.wait()
        return HookResult(f"{what} timed out after {timeout_s:g} s (see {log.name})", proc.pid)
    if status != 0:
        return HookResult(f"{what} failed: `{command}` exited {status} (see {log.name})", proc.pid)
    return HookResult(None, proc.pid)


def kill_group(group: int, sig: int = 9) -> None:
    """Send `sig` to a process group, if any of it is left."""

    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        pass
