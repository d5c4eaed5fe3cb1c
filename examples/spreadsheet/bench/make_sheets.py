"""The spreadsheet bench's sheets and edit requests, and the generator of its fixtures and task list.

    python examples/spreadsheet/bench/make_sheets.py

writes `fixtures/<task>/sheet.csv` (the sheet the task edits) and `tasks.jsonl`. Every sheet is called
`sheet.csv`, so the suite's backup requirement names one file (`sheet.bak.csv`). The edits each request
asks for are kept here, not in any fixture: `verifiers.py` applies them to the pristine sheet to get the
expected one. A row is named by its first column (its key).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHEET = "sheet.csv"

Rows = list[list[str]]

SHEETS: dict[str, Rows] = {
    "prices": [["sku", "name", "price", "stock"],
               ["SKU-101", "stapler", "4.99", "12"], ["SKU-102", "tape", "1.25", "40"],
               ["SKU-103", "scissors", "6.50", "7"], ["SKU-104", "glue stick", "0.99", "55"],
               ["SKU-105", "ruler", "2.10", "18"], ["SKU-106", "marker", "1.75", "0"]],
    "grades": [["student", "homework", "exam", "final"],
               ["Ana", "92", "85", "A-"], ["Ben", "78", "81", "B"], ["Cam", "88", "90", "A-"],
               ["Dana", "67", "72", "C+"], ["Eli", "95", "97", "A"]],
    "inventory": [["id", "item", "location", "qty"],
                  ["1", "pallet jack", "A1", "2"], ["2", "shrink wrap", "B4", "30"], ["3", "box cutter", "B4", "9"],
                  ["4", "label printer", "C2", "1"], ["5", "tape gun", "A3", "6"], ["6", "gloves", "C1", "48"],
                  ["7", "ladder", "A1", "3"]],
}

#: (task id, sheet, request, [(row key, column, new value), …])
TASKS: tuple[tuple[str, str, str, tuple[tuple[str, str, str], ...]], ...] = (
    ("sh-1", "prices", "Set the price of SKU-104 to 1.09.", (("SKU-104", "price", "1.09"),)),
    ("sh-2", "prices", "Set the stock of SKU-101 to 0 and the stock of SKU-106 to 35.",
     (("SKU-101", "stock", "0"), ("SKU-106", "stock", "35"))),
    ("sh-3", "grades", "Change Dana's exam score to 88.", (("Dana", "exam", "88"),)),
    ("sh-4", "grades", "Set Ben's final grade to B+ and Eli's homework to 100.",
     (("Ben", "final", "B+"), ("Eli", "homework", "100"))),
    ("sh-5", "inventory", "The ladder (id 7) now lives in location C3.", (("7", "location", "C3"),)),
    ("sh-6", "inventory", "Set the quantity of id 3 to 12 and rename item 5 to heavy tape gun.",
     (("3", "qty", "12"), ("5", "item", "heavy tape gun"))),
)


def sheet_text(rows: Rows) -> str:
    """A sheet as CSV text with "\\n" line ends."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def edited(rows: Rows, edits: tuple[tuple[str, str, str], ...]) -> Rows:
    """The rows with each edit applied (row by its key in the first column, column by its header name)."""
    out = [list(r) for r in rows]
    for key, column, value in edits:
        row = next(r for r in out[1:] if r[0] == key)
        row[out[0].index(column)] = value
    return out


def task_line(task: str, request: str) -> str:
    """The task's JSONL line: the request, its sheet and its fixture folder."""
    return json.dumps({"id": task, "inputs": {"request": request, "sheet_path": SHEET},
                       "workdir": f"fixtures/{task}"}) + "\n"


def expected_files() -> dict[str, str]:
    """Every generated file, by path relative to this folder."""
    files = {"tasks.jsonl": "".join(task_line(t, request) for t, _, request, _ in TASKS)}
    for task, sheet, _, _ in TASKS:
        files[f"fixtures/{task}/{SHEET}"] = sheet_text(SHEETS[sheet])
    return files


def main(argv: list[str] | None = None) -> int:
    """Write the fixtures and tasks.jsonl next to this file (or into --out)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="the folder to write into (default: this one)")
    args = parser.parse_args(argv)
    for rel, text in expected_files().items():
        path = args.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    print(f"wrote {len(TASKS)} fixtures and tasks.jsonl into {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
