"""Stage 3: the static checker. One module per family of checks, run in the order of CHECKS.

Each check is a function `check_x(machine, context=None) -> Iterator[Diagnostic]`;
it never raises on user error. Checks run only on machines that lowered without
errors (the IR is then fully resolved and typed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillc.lazy import exports

# The passes load on first use, so that importing `skillc.check.codes` (read by `skillc.registry`)
# loads no check, no solver and no parser.
_NAMES = ("CHECKS", "Check", "CheckContext", "check_machine", "fragment_machine")
__getattr__ = exports(__name__, dict.fromkeys(_NAMES, "skillc.check.passes"))

if TYPE_CHECKING:
    from skillc.check.passes import CHECKS, CheckContext, check_machine, fragment_machine
    from skillc.check.passes import Check as Check

__all__ = ["CHECKS", "CheckContext", "check_machine", "fragment_machine"]
