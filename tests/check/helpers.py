"""Helpers for checker tests: check a machine given as text, and the codes it gets."""

from __future__ import annotations

from typing import Any

import skillc
from tests.conftest import ROOT


def check_text(text: str, **kw: Any) -> skillc.api.CheckResult:
    """Check `text` as a file in the repository root (so `import "stdlib/…"` resolves)."""
    return skillc.check(text, path=str(ROOT / "case.skm"), **kw)


def codes(text: str, **kw: Any) -> list[str]:
    """The codes of the errors and warnings `text` gets, sorted."""
    return sorted(str(d.code) for d in check_text(text, **kw).diagnostics if d.severity.name != "NOTE")
