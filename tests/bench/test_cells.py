"""Cell folders: safe, distinct names; a fresh workdir per run with the fixture copied, leftovers removed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillc.bench.cells import cell_paths, fresh_workdir, safe_name
from skillc.bench.results import Cell


def test_names_are_safe_and_distinct(tmp_path: Path) -> None:
    assert safe_name("q1") == "q1" and safe_name("local") == "local"
    specs = ["local:/models/a.gguf", "local:/models/a_gguf", "openai:gpt-4o", "..", "", "a/b", "a_b"]
    names = [safe_name(s) for s in specs]
    assert len(set(names)) == len(names)
    assert all(n and "/" not in n and ":" not in n and n not in (".", "..") for n in names)
    paths = cell_paths(tmp_path, Cell("q/1", "machine", "local:/m.gguf", 2))
    assert paths.folder.parent.parent.parent.parent == tmp_path / "cells"
    assert (paths.folder.name, paths.workdir, paths.trace) == ("r2", paths.folder / "work",
                                                               paths.folder / "trace.jsonl")


def test_fresh_workdir_copies_the_fixture_and_removes_leftovers(tmp_path: Path) -> None:
    fixture = tmp_path / "fixture"
    (fixture / "data").mkdir(parents=True)
    (fixture / "data" / "sheet.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (fixture / "link").symlink_to("data/sheet.csv")
    out = tmp_path / "out"
    paths = cell_paths(out, Cell("t", "native", "scripted", 0))
    assert fresh_workdir(out, paths, fixture) is None
    assert (paths.workdir / "data" / "sheet.csv").read_text() == "a,b\n1,2\n"
    assert os.readlink(paths.workdir / "link") == "data/sheet.csv"  # copied as a link
    (paths.workdir / "answer.txt").write_text("half done", encoding="utf-8")  # a killed run's leftovers
    paths.trace.write_text("{}\n", encoding="utf-8")
    assert fresh_workdir(out, paths, fixture) is None
    assert sorted(p.name for p in paths.workdir.iterdir()) == ["data", "link"]
    assert not paths.trace.exists()
    (fixture / "data" / "sheet.csv").write_text("changed", encoding="utf-8")
    assert (paths.workdir / "data" / "sheet.csv").read_text() == "a,b\n1,2\n"  # a copy, not the fixture itself


def test_fresh_workdir_without_fixture_and_failures(tmp_path: Path) -> None:
    out = tmp_path / "out"
    paths = cell_paths(out, Cell("t", "machine", "scripted", 1))
    assert fresh_workdir(out, paths, None) is None
    assert paths.workdir.is_dir() and list(paths.workdir.iterdir()) == []
    problem = fresh_workdir(out, paths, tmp_path / "missing")
    assert problem is not None and str(problem.code) == "SKM901"
    with pytest.raises(ValueError):
        fresh_workdir(out, cell_paths(tmp_path / "elsewhere", Cell("t", "m", "e", 0)), None)
