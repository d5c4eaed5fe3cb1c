"""What checks may need beyond the machine: options, the skill document, shared analyses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs


@attrs.define
class CheckContext:
    """Options for one run of the checker and a cache of analyses shared between checks."""

    skill: Path | None = None
    smt_timeout_ms: int = 2000
    cache: dict[str, Any] = attrs.Factory(dict)

    def memo(self, key: str, compute):
        """Compute an analysis once per run (checks of one machine share a context)."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]
