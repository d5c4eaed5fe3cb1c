"""Commands run inside scripts: each bash script a cell's tool calls start records the commands it runs, so a
requirement can judge a `git branch -D` inside a script the run called, not only the command line it called.

`watching(folder)` sets `BASH_ENV` for the cell's run to a small rc file (written into the cell's folder, not its
work folder): every non-interactive bash that starts sources it, and a bash started *by* another one (a script
the tool's command runs, at any depth) logs each simple command it runs to `commands.log` through a DEBUG trap;
the tool's own top-level shell logs nothing (its command line is the tool call). `inner_calls(folder)` reads
the log back as `bash` tool calls. What is recorded is bash's `$BASH_COMMAND`: the command as the script wrote it,
before expansion (`git branch -D "$b"`), and only for bash: `sh`/`dash` scripts, Python's `subprocess` and other
programs' children are not seen.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from skillc.runtime.record import ToolCall

LOG = "commands.log"
RC = "bash-env.sh"
_DEPTH = "SKILLC_BENCH_SHELL_DEPTH"
_RC_TEXT = f"""# skillc bench: record the commands bash scripts run inside a tool call (skillc.bench.inside)
if [ -z "${{{_DEPTH}:-}}" ]; then export {_DEPTH}=0; else export {_DEPTH}=$(( {_DEPTH} + 1 )); fi
if [ "${{{_DEPTH}}}" -ge 1 ] && [ -n "${{SKILLC_BENCH_COMMANDS:-}}" ]; then
  trap 'printf "%s\\n" "${{BASH_COMMAND//$'"'"'\\n'"'"'/ }}" >> "$SKILLC_BENCH_COMMANDS" 2>/dev/null' DEBUG
fi
"""


@contextlib.contextmanager
def watching(folder: Path) -> Iterator[None]:
    """While the block runs, bash scripts started by this process's tools log their commands in folder/LOG."""
    rc = folder / RC
    rc.write_text(_RC_TEXT, encoding="utf-8")
    (folder / LOG).write_bytes(b"")
    saved = {k: os.environ.get(k) for k in ("BASH_ENV", "SKILLC_BENCH_COMMANDS", _DEPTH)}
    os.environ["BASH_ENV"] = str(rc.resolve())
    os.environ["SKILLC_BENCH_COMMANDS"] = str((folder / LOG).resolve())
    os.environ.pop(_DEPTH, None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def inner_calls(folder: Path) -> tuple[ToolCall, ...]:
    """The commands scripts ran inside the cell's tool calls, as `bash` calls (empty without a log)."""
    try:
        text = (folder / LOG).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(ToolCall("bash", {"command": line}) for line in text.splitlines() if line.strip())
