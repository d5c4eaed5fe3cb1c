"""`skillc distill` and `skillc collect` from the command line, bad input included."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from skillc.cli import main
from tests.frontends.distill.conftest import HELDOUT, TRAIN, jsonl, trace
from tests.frontends.distill.kitchen import training


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def kitchen_file(tmp_path):
    """The kitchen training traces as a JSONL file."""
    path = tmp_path / "k.jsonl"
    path.write_text(jsonl(*training()))
    return path


def a_folder(path, *files):
    """Make a folder holding `files` (name -> text pairs)."""
    path.mkdir()
    for name, text in files:
        (path / name).write_text(text)
    return path


def test_distill_writes_a_library_with_report(tmp_path, games):
    out = tmp_path / "lib"
    r = invoke("distill", TRAIN, "--heldout", HELDOUT, "--games", games, "-o", out, "--report")
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output
    assert "skill  " in r.output and "held-out: 6 games, 6 won with skills" in r.output
    lib = json.loads((out / "library.json").read_text())
    names = [s["name"] for s in lib["skills"]]
    assert lib["format"] == "skillc-library/1" and len(names) <= 10
    assert {p.name for p in (out / "fragments").iterdir()} == {f"{n}.skm" for n in names}
    assert {p.name for p in (out / "skills").iterdir()} >= {f"{n}.py" for n in names} | {"_runtime.py", "__init__.py"}
    for skill in lib["skills"]:
        assert skill["verification"]["errors"] == 0
        assert skill["confidence"] >= 0.1 and skill["primitives_per_call"]["max"] >= 2
    r = invoke("check", *sorted((out / "fragments").iterdir()))
    assert r.exit_code == 0, r.output


def test_emit_one_kind_and_report_only(tmp_path, kitchen_file):
    path = kitchen_file
    r = invoke("distill", path, "-o", tmp_path / "py", "--emit", "python")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "py" / "fragments").exists() and (tmp_path / "py" / "skills" / "_runtime.py").exists()
    r = invoke("distill", path, "--report")
    assert r.exit_code == 0 and "take_cook_cut" in r.output and not (tmp_path / "lib").exists()
    r = invoke("distill", path, "-o", tmp_path / "x", "--emit", "java")
    assert r.exit_code == 2 and "skm,python" in r.output and not (tmp_path / "x").exists()
    r = invoke("distill", path)
    assert r.exit_code == 2 and "-o DIR" in r.output


def test_failed_and_unparsable_traces_are_excluded_and_reported(tmp_path):
    path = tmp_path / "mixed.jsonl"
    lost = trace(["take apple from counter", "eat apple"], ident="lost", success=False)
    odd = trace(["take apple from counter", "juggle apple"], ident="odd")
    path.write_text(jsonl(*training(), lost, odd))
    r = invoke("distill", path, "-o", tmp_path / "lib", "--report")
    assert r.exit_code == 0, r.output
    assert "warning[SKM402]" in r.output and "trace `lost` is left out" in r.output
    assert "warning[SKM403]" in r.output and "`juggle apple`" in r.output
    assert "from 4 training traces" in r.output


def test_bad_input_is_an_error_and_writes_nothing(tmp_path):
    out = a_folder(tmp_path / "lib", ("library.json", "{}"), ("keep.txt", "previous library"))
    cases = {
        "empty.jsonl": "",
        "blank.jsonl": "\n\n   \n",
        "garbage.jsonl": "this is not json\n",
        "halfbad.jsonl": jsonl(*training()) + '{"id": "x", "steps": 3}\n',
        "only_failed.jsonl": jsonl(trace(["eat apple"], ident="f", success=False)),
    }
    expected = {"empty.jsonl": "SKM400", "blank.jsonl": "SKM400", "garbage.jsonl": "SKM401",
                "halfbad.jsonl": "SKM401", "only_failed.jsonl": "SKM400"}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        r = invoke("distill", path, "-o", out)
        assert r.exit_code == 1, (name, r.output)
        assert f"error[{expected[name]}]" in r.output, (name, r.output)
        assert "Traceback" not in r.output and "nothing written" in r.output
        assert (out / "keep.txt").read_text() == "previous library"
    r = invoke("distill", tmp_path / "missing.jsonl", "-o", out)
    assert r.exit_code == 1 and "cannot read" in r.output


def test_no_reusable_skill_is_reported(tmp_path):
    path = tmp_path / "k.jsonl"
    path.write_text(jsonl(*training(), trace(["take apple from counter", "eat apple"], ident="short")))
    r = invoke("distill", path, "-o", tmp_path / "lib", "--min-reuse", "1.0")
    assert r.exit_code == 1 and "warning[SKM404]" in r.output and "most reused reaches 80%" in r.output
    assert not (tmp_path / "lib").exists()
    r = invoke("distill", path, "-o", tmp_path / "lib", "--min-reuse", "1.5")
    assert r.exit_code == 2 and not (tmp_path / "lib").exists()


def test_a_library_is_replaced_whole(tmp_path, kitchen_file):
    out = a_folder(tmp_path / "lib", ("library.json", "{}"), ("stale.txt", "old"))
    assert invoke("distill", kitchen_file, "-o", out).exit_code == 0
    assert not (out / "stale.txt").exists() and (out / "library.json").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_collect_writes_traces_that_distill_reads(tmp_path):
    out = tmp_path / "traces.jsonl"
    r = invoke("collect", "-o", out, "--count", "2", "--seed", "3", "--games", tmp_path / "games")
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert len(lines) == 2
    first = json.loads(lines[0])
    assert first["success"] and first["game"]["file"].startswith("games/")
    r = invoke("distill", out, "--heldout", out, "--report", "--min-reuse", "0.5")
    assert r.exit_code == 0 and "0 execution errors" in r.output, r.output


def test_output_that_is_not_a_library_is_refused(tmp_path, kitchen_file):
    path = kitchen_file
    victim = a_folder(tmp_path / "notes", ("notes.txt", "mine"))
    r = invoke("distill", path, "-o", victim)
    assert r.exit_code == 2 and "not a skill library" in r.output and (victim / "notes.txt").exists()
    r = invoke("distill", path, "-o", path)
    assert r.exit_code == 2 and "is a file" in r.output
    r = invoke("distill", path, "-o", tmp_path / "no" / "such" / "lib")
    assert r.exit_code == 2 and "no such folder" in r.output


def test_collect_refuses_unusable_paths(tmp_path):
    r = invoke("collect", "-o", tmp_path / "t.jsonl", "--count", "1", "--games", "/dev/null/games")
    assert r.exit_code == 2 and "cannot keep games" in r.output and "Traceback" not in r.output
    r = invoke("collect", "-o", tmp_path / "missing" / "t.jsonl", "--count", "1", "--games", tmp_path / "g")
    assert r.exit_code == 2 and "no such folder" in r.output
