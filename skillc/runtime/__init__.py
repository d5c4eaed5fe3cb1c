"""Stage 4: the runtime. Runs checked machines; replays and resumes runs.

Entry points: `Interpreter` (what `skillc run` drives), `replay_file` (`skillc replay`), and the typed run
record in `skillc.runtime.record`. Names are imported on first use, so `import skillc.runtime` is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "Executor": "skillc.runtime.executors", "ExecutorError": "skillc.runtime.executors",
    "make_executor": "skillc.runtime.executors",
    "Interpreter": "skillc.runtime.interpreter", "RunError": "skillc.runtime.interpreter",
    "RunOptions": "skillc.runtime.interpreter", "RunResult": "skillc.runtime.interpreter",
    "machine_hash": "skillc.runtime.interpreter",
    "Journal": "skillc.runtime.journal", "JournalError": "skillc.runtime.journal",
    "ToolBox": "skillc.runtime.tools", "ToolError": "skillc.runtime.tools",
    "ToolSource": "skillc.runtime.toolsource",
    "ReplayReport": "skillc.runtime.replay", "replay_file": "skillc.runtime.replay",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from skillc.runtime.executors import Executor, ExecutorError, make_executor
    from skillc.runtime.interpreter import Interpreter, RunError, RunOptions, RunResult, machine_hash
    from skillc.runtime.journal import Journal, JournalError
    from skillc.runtime.replay import ReplayReport, replay_file
    from skillc.runtime.tools import ToolBox, ToolError
    from skillc.runtime.toolsource import ToolSource


def __getattr__(name: str) -> Any:
    """Import an exported name on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillc.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
