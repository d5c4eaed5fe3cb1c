"""The places a run allows: where the tool kit may read and write.

A run has a *work folder* (read-write: where `bash` runs and relative paths
land) and may have a *skill folder* (read-only: the folder the skill came from,
its `scripts/`, `references/`, `assets/`). A caller may widen either list
(`read_extra`, `write_extra`); nothing else is reachable through the kit.

`Places.resolve(path, write=...)` is the one gate: a relative path is taken
from the work folder (or from the call's `cwd`, itself inside the places),
every symlink is resolved *before* the containment test (so a link inside the
work folder that points out of it is outside), and the resolved path must lie
in a place that allows the access. Where places nest, the innermost decides: a
skill folder inside the work folder stays read-only, a work folder inside the
skill folder is writable. Anything else is a `ToolError` naming the places:

    `../x` is outside the places this run allows: work folder /w, skill folder /s (read-only)

Not guaranteed: a path swapped for a symlink between the check and the
access (another process racing the run) is not detected; `bash` is confined
only in its starting folder (a shell command can reach whatever the user can).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from skillc.runtime.tools import ToolError


def _real(path: str | Path) -> str:
    """The absolute path with every existing symlink resolved (missing tail components kept as written)."""
    return os.path.realpath(os.path.abspath(path))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep)


class Places:
    """The folders one run may read (`workdir`, `skill_dir`, `read_extra`) and write (`workdir`, `write_extra`)."""

    __slots__ = ("_roots", "read_extra", "skill_dir", "workdir", "write_extra")

    def __init__(self, workdir: str | Path, skill_dir: str | Path | None = None,
                 read_extra: Iterable[str | Path] = (), write_extra: Iterable[str | Path] = ()) -> None:
        self.workdir = Path(_real(workdir))
        self.skill_dir = None if skill_dir is None else Path(_real(skill_dir))
        self.read_extra = tuple(Path(_real(p)) for p in read_extra)
        self.write_extra = tuple(Path(_real(p)) for p in write_extra)
        # (root, writable, what): the places, innermost first once sorted by length (the innermost decides).
        roots: list[tuple[str, bool, str]] = [(str(self.workdir), True, "work folder")]
        if self.skill_dir is not None:
            roots.append((str(self.skill_dir), False, "skill folder"))
        roots += [(str(p), False, "readable folder") for p in self.read_extra]
        roots += [(str(p), True, "writable folder") for p in self.write_extra]
        self._roots = sorted(roots, key=lambda r: len(r[0]), reverse=True)

    def __repr__(self) -> str:
        return f"Places({self.describe()})"

    def describe(self, *, write: bool = False) -> str:
        """The places as a message names them: `work folder /w, skill folder /s (read-only)`."""
        parts = [f"work folder {self.workdir}"]
        if self.skill_dir is not None:
            parts.append(f"skill folder {self.skill_dir} (read-only)")
        parts += [f"{p} (read-only)" for p in self.read_extra]
        parts += [str(p) for p in self.write_extra]
        return ", ".join(parts)

    def place_of(self, real: str) -> tuple[str, bool, str] | None:
        """The innermost place holding an already-resolved path: (root, writable, what), or None."""
        for root in self._roots:
            if _inside(real, root[0]):
                return root
        return None

    def resolve(self, path: str, *, write: bool, cwd: str | None = None) -> Path:
        """The real path `path` names, checked to lie in a place that allows reading (or writing)."""
        if not isinstance(path, str):
            raise ToolError(f"a path must be text, not {type(path).__name__}")
        if "\x00" in path:
            raise ToolError(f"the path {path!r} contains a NUL byte")
        if not path.strip():
            raise ToolError("the path is empty")
        base = str(self.workdir) if cwd is None else str(self.resolve(cwd, write=False))
        try:
            real = _real(os.path.join(base, path))
        except (OSError, ValueError, RuntimeError) as exc:  # a symlink loop on some Pythons
            raise ToolError(f"cannot resolve `{path}`: {exc}") from None
        place = self.place_of(real)
        if place is None:
            raise ToolError(f"`{path}` is outside the places this run allows: {self.describe()}")
        if write and not place[1]:
            where = "the skill folder" if place[2] == "skill folder" else place[0]
            raise ToolError(f"`{path}` is in {where}, which this run may only read; writable: work folder "
                            f"{self.workdir}" + "".join(f", {p}" for p in self.write_extra))
        return Path(real)

    def folder(self, path: str | None, *, cwd: str | None = None) -> Path:
        """A readable existing folder (`None`, `""`: the work folder)."""
        p = self.workdir if path is None or path == "" else self.resolve(path, write=False, cwd=cwd)
        if not p.is_dir():
            raise ToolError(f"`{path}` is not a folder" if p.exists() else f"the folder `{path or p}` does not exist")
        return p

    def show(self, real: str | Path) -> str:
        """How a result names a resolved path: relative to the work folder when inside it, else absolute."""
        text = str(real)
        root = str(self.workdir)
        if text == root:
            return "."
        if _inside(text, root):
            return text[len(root):].lstrip(os.sep)
        return text

    def readable(self, real: str) -> bool:
        """True when an already-resolved path lies in some place."""
        return self.place_of(real) is not None

    def env(self) -> dict[str, str]:
        """The variables a command run by the kit gets: `WORKDIR`, and `SKILL_DIR` when there is a skill folder."""
        out = {"WORKDIR": str(self.workdir)}
        if self.skill_dir is not None:
            out["SKILL_DIR"] = str(self.skill_dir)
        return out


__all__ = ["Places"]
