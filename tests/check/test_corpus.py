"""The checker's corpus: broken machines with the exact findings they must produce, and passing twins.

Each `cases/NAME.skm` states its expectations in header comments:

    # expect: SKM210 12:5          one line per expected error or warning (code, line:col of the span)
    # witness: think -> done       a substring that must occur in some diagnostic's witness lines
    # note: nearest passage        a substring that must occur in some diagnostic's notes
    # skill: SKILL.md              check quotations against this file (relative to the case)

and `cases/NAME.ok.skm` is its twin: the same machine repaired, which must
check with no error and no warning. Notes (SKM242) are ignored unless expected.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import skillc
from skillc.diagnostics import Severity

CASES = Path(__file__).parent / "cases"
BROKEN = sorted(p for p in CASES.rglob("*.skm") if not p.name.endswith(".ok.skm"))


def _header(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {"expect": [], "witness": [], "note": [], "skill": []}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"#\s*(expect|witness|note|skill):\s*(.*\S)", line)
        if m:
            found[m.group(1)].append(m.group(2))
        elif line.strip() and not line.startswith("#"):
            break
    return found


def _check(path: Path, header: dict[str, list[str]]):
    skill = path.parent / header["skill"][0] if header["skill"] else None
    return skillc.check(path, skill=skill)


def test_corpus_is_large_enough() -> None:
    assert len(BROKEN) >= 40
    codes = {e.split()[0] for p in BROKEN for e in _header(p)["expect"]}
    assert len(codes) >= 18, sorted(codes)


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: str(p.relative_to(CASES)))
def test_broken_case(path: Path) -> None:
    header = _header(path)
    assert header["expect"], f"{path.name} states no expectation"
    result = _check(path, header)
    expected = set(header["expect"])
    got = {
        f"{d.code!s} {d.span.start_pos[0]}:{d.span.start_pos[1]}" if d.span else str(d.code)
        for d in result.diagnostics
        if d.severity is not Severity.NOTE or any(e.startswith(str(d.code)) for e in expected)
    }
    assert got == expected
    witnesses = [w for d in result.diagnostics for w in d.witness]
    for want in header["witness"]:
        assert any(want in w for w in witnesses), (want, witnesses)
    notes = [n for d in result.diagnostics for n in d.notes]
    for want in header["note"]:
        assert any(want in n for n in notes), (want, notes)


@pytest.mark.parametrize("path", BROKEN, ids=lambda p: str(p.relative_to(CASES)))
def test_passing_twin(path: Path) -> None:
    twin = path.with_name(path.name[: -len(".skm")] + ".ok.skm")
    assert twin.is_file(), f"{path.name} has no passing twin"
    result = _check(twin, _header(path))
    problems = [f"{d.code!s} {d.message}" for d in result.diagnostics if d.severity is not Severity.NOTE]
    assert problems == []
