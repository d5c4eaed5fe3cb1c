"""Shared fixtures: repository paths and helpers that load `.skm` text."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillc

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
# Every folder of examples/ holds a machine beside its skill, except traces/ (recorded runs for `skillc distill`)
# refine/ (the `skillc refine` demonstration: a livemath machine missing steps, and native-run scripts) and evolve/
# (the `skillc evolve` evaluation tasks: one small machine per task, with its hidden verifier and role scripts).
MACHINE_EXAMPLES = sorted(p for p in EXAMPLES.iterdir()
                          if p.is_dir() and p.name not in ("traces", "refine", "evolve"))
STDLIB = ROOT / "stdlib"
# A machine with a typo (`answr`) for the command line and the language server to report.
BROKEN = """machine m {
  var answer: str
  start think

  model think {
    writes answr
    prompt "p"
    -> done
  }

  terminal done: success { requires answer }
  fallback
}
"""


def codes(diagnostics) -> list[str]:
    """Sorted codes of a diagnostic list."""
    return sorted(str(d.code) for d in diagnostics)


def load_text(text: str, name: str = "case.skm"):
    """Load text as if it were a file at the repository root (so stdlib and relative imports work)."""
    return skillc.load(text, path=str(ROOT / name))


@pytest.fixture
def root() -> Path:
    return ROOT
