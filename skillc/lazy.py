"""Names a package exports but imports on first use (PEP 562), so that importing it stays cheap."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def exports(module: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` for `module` that imports each name of `homes` from its home module when asked for."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[module], name, value)  # asked once: later lookups find the name itself
        return value

    return __getattr__
