"""The spreadsheet bench's verifier: the sheet must hold exactly the requested edits and nothing else.

The task is the one whose request the run was given (the trace header's inputs); the expected sheet is
its pristine fixture with the request's edits applied (make_sheets.py). Success needs the same header,
the same rows in the same order, every planned cell at its new value and every other cell unchanged.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path

from make_sheets import SHEET, SHEETS, TASKS, Rows, edited

from skillc.runtime.record import load_run


def _expected(trace: Path) -> tuple[str, Rows] | None:
    """The task id and expected rows of the run's request, or None for a request no task has."""
    header = load_run(trace).header
    request = (header.inputs or {}).get("request")
    for task, sheet, text, edits in TASKS:
        if text == request:
            return task, edited(SHEETS[sheet], edits)
    return None


def _first_difference(want: Rows, got: Rows) -> str:
    """Where two sheets first differ, in words."""
    if got[:1] != want[:1]:
        return f"the header is {got[:1]}, not {want[:1]}"
    if len(got) != len(want):
        return f"the sheet has {len(got) - 1} data rows, not {len(want) - 1}"
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            cells = [f"{want[0][j] if j < len(want[0]) else j}={g[j] if j < len(g) else None!r} (want {c!r})"
                     for j, c in enumerate(w) if j >= len(g) or g[j] != c]
            return f"data row {i} ({w[0]}): " + ", ".join(cells or [f"{len(g)} cells, not {len(w)}"])
    return "the sheets differ"


def sheet_edited(workdir: Path, outputs: Mapping[str, object], trace: Path) -> tuple[bool, str]:
    """Success when sheet.csv equals the pristine sheet with exactly the requested edits."""
    found = _expected(trace)
    if found is None:
        return False, "the run's request is not one of the suite's tasks"
    task, want = found
    try:
        with (workdir / SHEET).open(newline="", encoding="utf-8") as f:
            got = [row for row in csv.reader(f)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        return False, f"{SHEET} cannot be read as CSV: {exc}"
    if got == want:
        return True, f"{task}: every requested cell changed, nothing else"
    return False, f"{task}: {_first_difference(want, got)}"
