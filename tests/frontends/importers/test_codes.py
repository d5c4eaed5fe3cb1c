"""Every SKM6xx code with an ASL example: the bad example yields it, the good one is clean."""

from __future__ import annotations

import pytest

from skillc.frontends.importers import codes as importer_codes
from skillc.registry import BY_CODE as REGISTRY
from tests.frontends.importers.conftest import check_text, codes_of

ASL = [c for c in importer_codes.ALL if c.lang == "json"]


def test_every_code_is_registered_in_the_importer_stage() -> None:
    for c in importer_codes.ALL:
        assert REGISTRY[c.code] is c
        assert c.stage == "importer"


@pytest.mark.parametrize("entry", ASL, ids=lambda c: c.code)
def test_bad_example_reports_its_code(entry) -> None:
    found = check_text(entry.bad)
    mine = [d for d in found.diagnostics if str(d.code) == entry.code]
    assert mine, codes_of(found)
    assert mine[0].severity == entry.severity
    assert mine[0].span is not None and mine[0].span.path == "case.asl.json"


@pytest.mark.parametrize("entry", ASL, ids=lambda c: c.code)
def test_good_example_is_clean(entry) -> None:
    assert check_text(entry.good).diagnostics == []


def test_slugs_are_unique_across_the_registry() -> None:
    from skillc.registry import lookup

    for c in importer_codes.ALL:
        assert lookup(c.slug) is c
