"""Runs one test case over a cached output in its own process; standard library only (run as a script, `-I`).

    python -I _harness.py RESULT KIND CASE

KIND is `python` (CASE defines `check(workdir, outputs, trace)` returning a bool or (bool, reason)) or
`shell` (CASE holds a command: exit 0 holds, exit 1 does not, anything else is a broken case). The
workdir, trace and outputs come from the environment (SKILLC_BENCH_WORKDIR, _TRACE, _OUTPUTS) that
`skillc.improve.evolve.cases.run_case` sets; it runs inside the box of `skillc.sandbox` (so does the case's
shell command, and everything the case starts).
The verdict is written to RESULT as JSON ({"holds", "reason"} or {"error"}), by rename, so a case killed
at its timeout leaves no verdict at all.
"""

import json
import os
import runpy
import subprocess
import sys
import traceback
from pathlib import Path


def _python(case: str, workdir: str, outputs: object, trace: str) -> dict[str, object]:
    """Load the case file and call its `check`."""
    namespace = runpy.run_path(case, run_name="skillc_evolve_case")
    check = namespace.get("check")
    if not callable(check):
        return {"error": "the case defines no function check(workdir, outputs, trace)"}
    value = check(Path(workdir), outputs, Path(trace))
    if isinstance(value, bool):
        return {"holds": value, "reason": ""}
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], bool) and isinstance(value[1], str):
        return {"holds": value[0], "reason": value[1]}
    return {"error": f"check returned {value!r:.80}, not a bool or (bool, reason)"}


def _shell(case: str, workdir: str) -> dict[str, object]:
    """Run the command in the workdir; 0 holds, 1 does not, other statuses are a broken case."""
    with open(case, encoding="utf-8") as f:
        command = f.read()
    code = subprocess.run(["/bin/sh", "-c", command], cwd=workdir, stdin=subprocess.DEVNULL).returncode
    if code in (0, 1):
        return {"holds": code == 0, "reason": "" if code == 0 else "the command exited 1"}
    return {"error": f"the command exited {code} (a case exits 0 when it holds and 1 when it does not)"}


def main() -> None:
    """Judge the case and write the verdict."""
    result, kind, case = sys.argv[1:4]
    workdir = os.environ["SKILLC_BENCH_WORKDIR"]
    trace = os.environ["SKILLC_BENCH_TRACE"]
    with open(os.environ["SKILLC_BENCH_OUTPUTS"], encoding="utf-8") as f:
        outputs = json.load(f)
    try:
        verdict = _python(case, workdir, outputs, trace) if kind == "python" else _shell(case, workdir)
    except BaseException as exc:  # noqa: BLE001 - the case is generated code: whatever it raises is its failure
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        verdict = {"error": f"the case raised {last}"}
    partial = result + ".part"
    with open(partial, "w", encoding="utf-8") as f:
        json.dump(verdict, f)
    os.replace(partial, result)


if __name__ == "__main__":
    main()
