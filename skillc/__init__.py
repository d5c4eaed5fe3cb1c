"""skillc: compile agent skills into checked, executable state machines.

    >>> import skillc
    >>> machine, diagnostics = skillc.load(pathlib.Path("examples/livemath/livemath.skm"))
"""

from skillc.api import CheckResult, ParseResult, check, format_text, load, parse
from skillc.diagnostics import Diagnostic, Severity
from skillc.ir.loader import LoadResult
from skillc.ir.machine import Machine

from skillc.version import __version__

__all__ = [
    "CheckResult", "Diagnostic", "__version__", "LoadResult", "Machine", "ParseResult", "Severity",
    "check", "format_text", "load", "parse",
]
