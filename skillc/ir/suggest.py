"""'Did you mean …?' suggestions by edit distance."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from skillc.diagnostics.diagnostic import Suggestion


def did_you_mean(name: str, candidates: Iterable[str]) -> Suggestion | None:
    """The closest candidate as a hint (`str()` of it is the help line), or None when nothing is close."""
    pool = sorted(set(candidates))
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
    return Suggestion(name, close[0]) if close else None
