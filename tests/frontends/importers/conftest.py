"""Helpers for the importer tests: check ASL text as a file of a given name."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillc.diagnostics import SourceFile
from skillc.frontends.importers.asl import check_asl

CORPUS = Path(__file__).parent / "corpus"


def check_text(text: str, name: str = "case.asl.json"):
    """Import and check ASL text; returns the `Checked` result."""
    return check_asl(SourceFile.from_text(name, text), as_json=name.endswith(".json"))[1]


def codes_of(checked) -> list[str]:
    return sorted(str(d.code) for d in checked.diagnostics)


@pytest.fixture
def corpus() -> Path:
    return CORPUS
