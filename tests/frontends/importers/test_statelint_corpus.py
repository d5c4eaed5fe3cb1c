"""The statelint-equivalent corpus: skillc reports an error wherever statelint's own specs expect a problem,
and exactly the codes each case lists (the extra findings are where skillc sees more)."""

from __future__ import annotations

import json

import pytest
import yaml

from skillc.diagnostics import Severity
from tests.frontends.importers.conftest import CORPUS, check_text

CASES = yaml.safe_load((CORPUS / "statelint.yaml").read_text(encoding="utf-8"))


def findings(case) -> list[str]:
    """Errors and warnings skillc reports for a case, sorted by code."""
    checked = check_text(json.dumps(case["definition"], indent=2), f"{case['name']}.asl.json")
    return sorted(str(d.code) for d in checked.diagnostics if d.severity is not Severity.NOTE)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["name"])
def test_case_reports_its_codes(case) -> None:
    assert findings(case) == case["skillc"]


@pytest.mark.parametrize("case", [c for c in CASES if c["statelint"] > 0], ids=lambda c: c["name"])
def test_skillc_rejects_what_statelint_rejects(case) -> None:
    checked = check_text(json.dumps(case["definition"]), "x.asl.json")
    # statelint's "no transition to" finding is a warning here (SKM200): unreachable states are dead code.
    assert any(d.severity is Severity.ERROR or str(d.code) == "SKM200" for d in checked.diagnostics)


def test_corpus_covers_the_statelint_specs() -> None:
    assert len(CASES) >= 70
    assert len({c["name"] for c in CASES}) == len(CASES)
