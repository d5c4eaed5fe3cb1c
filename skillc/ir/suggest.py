"""'Did you mean …?' suggestions by edit distance."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(name: str, candidates: Iterable[str]) -> str | None:
    """A help line naming the closest candidate, or None when nothing is close."""
    pool = sorted(set(candidates))
    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in pool}
        if name.lower() in lowered:
            close = [lowered[name.lower()]]
    return f"did you mean `{close[0]}`?" if close else None
