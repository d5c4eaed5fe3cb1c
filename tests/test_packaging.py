"""The wheel ships the grammar and the standard library, and the package finds them there."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.conftest import ROOT


def test_wheel_contains_grammar_and_stdlib(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    builder = WheelBuilder(str(ROOT))
    wheel = next(iter(builder.build(directory=str(tmp_path), versions=["standard"])))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "skillc/_data/grammar/skm.lark" in names
    assert {f"skillc/_data/stdlib/{p.name}" for p in (ROOT / "stdlib").glob("*.skm")} <= names
    assert "skillc/syntax/parser.py" in names
    grammar = zipfile.ZipFile(wheel).read("skillc/_data/grammar/skm.lark").decode()
    assert grammar == (ROOT / "grammar" / "skm.lark").read_text()
