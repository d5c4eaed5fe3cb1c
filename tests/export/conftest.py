"""Writing exported modules where `skillc import langgraph MODULE:builder` finds them."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillc import api

_NAMES = itertools.count()


@pytest.fixture
def exported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """`exported(machine_path) -> (module name, module)`: the module written into tmp_path, imported."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    made: list[str] = []

    def write(machine: str | Path) -> tuple[str, Any]:
        result = api.export_graph("langgraph", str(machine))
        assert result.text is not None, [(str(d.code), d.message) for d in result.diagnostics]
        name = f"exported_{next(_NAMES)}"
        (tmp_path / f"{name}.py").write_text(result.text, encoding="utf-8")
        made.append(name)
        __import__(name)
        return name, sys.modules[name]

    yield write
    for name in made:
        sys.modules.pop(name, None)
