"""skillc: compile agent skills into checked, executable state machines.

    >>> import skillc
    >>> machine, diagnostics = skillc.load(pathlib.Path("examples/livemath/livemath.skm"))

The public names are imported on first use (PEP 562), so that `import skillc` and `skillc --version` stay fast.
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

from skillc.lazy import exports
from skillc.version import __version__

if TYPE_CHECKING:
    from skillc.api import CheckResult, ParseResult, check, format_text, load, parse
    from skillc.diagnostics import Diagnostic, Severity
    from skillc.ir.loader import LoadResult
    from skillc.ir.machine import Machine

_HOMES = {
    "CheckResult": "skillc.api", "ParseResult": "skillc.api", "format_text": "skillc.api",
    "load": "skillc.api", "parse": "skillc.api", "Diagnostic": "skillc.diagnostics", "Severity": "skillc.diagnostics",
    "LoadResult": "skillc.ir.loader", "Machine": "skillc.ir.machine",
}

__all__ = [
    "CheckResult",
    "Diagnostic",
    "LoadResult",
    "Machine",
    "ParseResult",
    "Severity",
    "__version__",
    "check",
    "format_text",
    "load",
    "parse",
]


__getattr__ = exports(__name__, _HOMES)


def __dir__() -> list[str]:
    """The public names, imported or not."""
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """`skillc.check` is the API function, although importing the subpackage `skillc.check` binds that name."""

    @property
    def check(self) -> Any:
        """`skillc.api.check` (or what a test put in its place)."""
        if "_check" not in self.__dict__:
            from skillc.api import check as api_check

            self.__dict__["_check"] = api_check
        return self.__dict__["_check"]

    @check.setter
    def check(self, value: Any) -> None:
        if not isinstance(value, types.ModuleType):  # the import system's binding of the subpackage is ignored
            self.__dict__["_check"] = value


sys.modules[__name__].__class__ = _Package
