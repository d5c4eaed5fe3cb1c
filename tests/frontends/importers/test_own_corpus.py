"""skillc's own ASL corpus: each definition yields exactly its listed findings, at its own file's positions."""

from __future__ import annotations

import pytest
import yaml

import skillc
from skillc.diagnostics import Severity
from tests.frontends.importers.conftest import CORPUS

EXPECTED = yaml.safe_load((CORPUS / "own.yaml").read_text(encoding="utf-8"))


def test_every_file_is_listed() -> None:
    assert sorted(p.name for p in (CORPUS / "own").iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_findings(name: str) -> None:
    path = CORPUS / "own" / name
    result = skillc.check(path)
    found = [d for d in result.diagnostics if d.severity is not Severity.NOTE]
    assert sorted(str(d.code) for d in found) == EXPECTED[name]["skillc"]
    for d in found:
        assert d.span is not None and d.span.path == str(path)
        line, _ = d.span.start_pos
        assert 1 <= line <= len(path.read_text(encoding="utf-8").splitlines())
