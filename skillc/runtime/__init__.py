"""Stage 4: the runtime. Runs checked machines; replays and resumes runs.

Entry points: `Interpreter` (what `skillc run` drives), `replay_file` (`skillc replay`), and the typed run
record in `skillc.runtime.record`. Names are imported on first use, so `import skillc.runtime` is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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
    # `X as X`: re-exported for type checkers; at run time `__getattr__` imports each on first use
    from skillc.runtime.executors import Executor as Executor
    from skillc.runtime.executors import ExecutorError as ExecutorError
    from skillc.runtime.executors import make_executor as make_executor
    from skillc.runtime.interpreter import Interpreter as Interpreter
    from skillc.runtime.interpreter import RunError as RunError
    from skillc.runtime.interpreter import RunOptions as RunOptions
    from skillc.runtime.interpreter import RunResult as RunResult
    from skillc.runtime.interpreter import machine_hash as machine_hash
    from skillc.runtime.journal import Journal as Journal
    from skillc.runtime.journal import JournalError as JournalError
    from skillc.runtime.replay import ReplayReport as ReplayReport
    from skillc.runtime.replay import replay_file as replay_file
    from skillc.runtime.tools import ToolBox as ToolBox
    from skillc.runtime.tools import ToolError as ToolError
    from skillc.runtime.toolsource import ToolSource as ToolSource


def __getattr__(name: str) -> object:
    """Import an exported name on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillc.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
