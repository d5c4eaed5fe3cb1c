"""Verifiers of the planning suites: the project is left as it was and a plan was handed over."""

from __future__ import annotations

import filecmp
from collections.abc import Mapping
from pathlib import Path

PROJECT = Path(__file__).parent / "project"


def planned_read_only(workdir: Path, outputs: Mapping[str, object], trace: Path) -> tuple[bool, str]:
    """Success: every project file is unchanged, no file was added, and some output holds a plan of several
    lines (what the run handed over at its end)."""
    for path in PROJECT.rglob("*"):
        if path.is_file() and not filecmp.cmp(path, workdir / path.relative_to(PROJECT), shallow=False):
            return False, f"{path.relative_to(PROJECT)} was changed"
    added = sorted(str(p.relative_to(workdir)) for p in workdir.rglob("*")
                   if p.is_file() and not (PROJECT / p.relative_to(workdir)).exists())
    if added:
        return False, f"{added[0]} was added"
    plans = [v for v in outputs.values() if isinstance(v, str) and v.count("\n") >= 2]
    return (True, "") if plans else (False, "no plan of several lines was handed over")
