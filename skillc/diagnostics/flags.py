"""Values every command's flags are held to the same way, so that each is checked once, below every command."""

from __future__ import annotations

from typing import Final

#: The most seconds any timeout or deadline flag takes (a larger value is a mistake, not "no limit").
MAX_SECONDS: Final = 1e9


def seconds_problem(flag: str, seconds: float | None) -> str | None:
    """Why a number of seconds (`--model-timeout`, `--tool-timeout`, `--step-deadline`, …) cannot be used: it must
    be finite, above 0 and at most `MAX_SECONDS` (NaN and infinity are refused); None when it can (or is unset).
    The command line parses such flags as plain numbers and the command's driver asks this."""
    if seconds is None or 0 < seconds <= MAX_SECONDS:  # NaN fails the comparison
        return None
    return f"{flag} takes a number of seconds greater than 0 and at most {MAX_SECONDS:g}, not {seconds:g}"
