"""The spreadsheet machine's `python` tool, for `skillc run --tools` and the bench suite's `tools`.

The code runs in a fresh interpreter in the current folder (the bench runs a cell's tools in its workdir),
with no input and a time limit; its stdout, stderr and exit status are the tool's results.
"""

from __future__ import annotations

import subprocess
import sys

#: Seconds one script may run.
TIMEOUT_S = 60


def python(code: str) -> dict[str, object]:
    """Run `code` with this Python; a script that runs past the limit exits 124, like `timeout`."""
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return {"stdout": "", "stderr": f"timed out after {TIMEOUT_S} s", "exit_code": 124}
    return {"stdout": done.stdout, "stderr": done.stderr, "exit_code": done.returncode}
