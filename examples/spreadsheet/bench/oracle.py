"""A scripted executor that runs one spreadsheet task correctly: the answers the machine's model states need.

    python examples/spreadsheet/bench/oracle.py sh-1 > /tmp/oracle.json
    skillc run examples/spreadsheet/spreadsheet.skm --executor scripted:/tmp/oracle.json \\
        --tools examples/spreadsheet/bench/tools.py …   (in a copy of fixtures/sh-1, as the current folder)

The plan is the task's edits, the scripts edit and read back `sheet.csv` with `csv`, and the judges agree;
the tool states run for real. `--wrong` plans the first edit one row too low, a run the verifier must
fail. The suite's tests use it to show every task can be completed and verified end to end.
"""

from __future__ import annotations

import argparse
import json
import sys

from make_sheets import SHEET, SHEETS, TASKS

INSPECT = ("import csv\nrows = list(csv.reader(open({sheet!r}, newline='')))\n"
           "print('header', rows[0])\nprint('data rows', len(rows) - 1)\nfor row in rows[1:6]:\n    print(row)\n")
APPLY = ("import csv\nedits = {edits!r}\nrows = list(csv.reader(open({sheet!r}, newline='')))\n"
         "for key, column, value in edits:\n"
         "    row = next(r for r in rows[1:] if r[0] == key)\n    row[rows[0].index(column)] = value\n"
         "with open({sheet!r}, 'w', newline='') as f:\n    csv.writer(f, lineterminator='\\n').writerows(rows)\n")
READBACK = ("import csv\nrows = list(csv.reader(open({sheet!r}, newline='')))\n"
            "for key, column in {cells!r}:\n"
            "    row = next(r for r in rows[1:] if r[0] == key)\n    print(key, column, row[rows[0].index(column)])\n"
            "print('header', rows[0])\nprint('data rows', len(rows) - 1)\n")


def script(task: str, *, wrong: bool = False) -> dict[str, object]:
    """The scripted-executor file of a task (an id such as sh-1)."""
    _, sheet, _, edits = next(t for t in TASKS if t[0] == task)
    rows = SHEETS[sheet]
    planned = [list(e) for e in edits]
    if wrong:  # the row below the intended one
        keys = [r[0] for r in rows[1:]]
        planned[0][0] = keys[(keys.index(planned[0][0]) + 1) % len(keys)]
    plan = [{"row": key, "column": column, "new_value": value,
             "old_value": next(r for r in rows[1:] if r[0] == key)[rows[0].index(column)]}
            for key, column, value in planned]
    cells = [(key, column) for key, column, _ in planned]
    return {"outputs": {
        "write_inspect_code": [{"inspect_code": INSPECT.format(sheet=SHEET)}],
        "plan_edits": [{"plan": plan, "dropped": []}],
        "write_scripts": [{"script": APPLY.format(edits=[tuple(e) for e in planned], sheet=SHEET),
                           "readback_code": READBACK.format(sheet=SHEET, cells=cells)}],
        "save_script.compare": [{"save_script.verdict": "consistent"}],
        "verify": [{"match": "matches"}],
        "report": [{"summary": "; ".join(f"{p['row']} {p['column']}: {p['old_value']} -> {p['new_value']}"
                                         for p in plan) + f"; backup in sheet.bak.csv"}]}}


def main(argv: list[str] | None = None) -> int:
    """Print the script of one task."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("task", help="a task id, e.g. sh-1")
    parser.add_argument("--wrong", action="store_true", help="plan the first edit one row too low")
    args = parser.parse_args(argv)
    if args.task not in {t[0] for t in TASKS}:
        parser.error(f"no task {args.task}; the tasks are " + ", ".join(t[0] for t in TASKS))
    json.dump(script(args.task, wrong=args.wrong), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
