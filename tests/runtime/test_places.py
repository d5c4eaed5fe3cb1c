"""The places a run allows (runtime/places.py): containment after symlinks, read-only skill folder, extras."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillc.runtime.places import Places
from skillc.runtime.tools import ToolError


@pytest.fixture
def world(tmp_path: Path) -> Path:
    """tmp/work (the work folder), tmp/skill (the skill folder), tmp/outside (a sibling nothing may reach)."""
    for d in ("work/sub", "skill/references", "outside"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "outside" / "secret.txt").write_text("secret")
    (tmp_path / "skill" / "references" / "guide.md").write_text("guide")
    return tmp_path


def test_relative_paths_resolve_in_the_work_folder_or_the_calls_cwd(world: Path) -> None:
    places = Places(world / "work", world / "skill")
    assert places.resolve("a.txt", write=True) == world / "work" / "a.txt"
    assert places.resolve("a.txt", write=True, cwd="sub") == world / "work" / "sub" / "a.txt"
    assert places.resolve("sub/../b.txt", write=False) == world / "work" / "b.txt"
    assert places.resolve(str(world / "skill" / "references" / "guide.md"), write=False).read_text() == "guide"
    assert places.show(world / "work" / "sub" / "x") == "sub/x" and places.show(world / "work") == "."
    assert places.show(world / "skill" / "x") == str(world / "skill" / "x")


def test_a_path_outside_the_places_is_refused_with_the_places_named(world: Path) -> None:
    places = Places(world / "work", world / "skill")
    for path in ("../outside/secret.txt", str(world / "outside" / "secret.txt"), "/etc/passwd", "..",
                 "sub/../../outside"):
        with pytest.raises(ToolError) as err:
            places.resolve(path, write=False)
        message = str(err.value)
        assert f"`{path}` is outside the places this run allows" in message
        assert f"work folder {world / 'work'}" in message and f"skill folder {world / 'skill'} (read-only)" in message
    with pytest.raises(ToolError, match="outside the places"):
        places.resolve("x", write=False, cwd="../outside")


def test_symlinks_are_resolved_before_the_containment_test(world: Path) -> None:
    work = world / "work"
    (work / "to-outside").symlink_to(world / "outside")
    (work / "secret-link").symlink_to(world / "outside" / "secret.txt")
    (work / "dangling").symlink_to(world / "outside" / "not-yet.txt")
    (work / "inside-link").symlink_to(work / "sub")
    places = Places(work)
    for path in ("to-outside/secret.txt", "secret-link", "to-outside/new.txt"):
        with pytest.raises(ToolError, match="outside the places"):
            places.resolve(path, write=False)
    with pytest.raises(ToolError, match="outside the places"):
        places.resolve("dangling", write=True)  # a write through a dangling link would create a file outside
    assert places.resolve("inside-link/f", write=True) == work / "sub" / "f"


def test_a_work_folder_given_through_a_symlink_is_its_real_folder(world: Path) -> None:
    (world / "alias").symlink_to(world / "work")
    places = Places(world / "alias")
    assert places.workdir == world / "work"
    assert places.resolve(str(world / "alias" / "a"), write=True) == world / "work" / "a"


def test_the_skill_folder_is_read_only_and_the_innermost_place_decides(world: Path) -> None:
    places = Places(world / "work", world / "skill")
    with pytest.raises(ToolError, match="in the skill folder, which this run may only read"):
        places.resolve(str(world / "skill" / "references" / "guide.md"), write=True)
    inner = world / "work" / "skill"
    inner.mkdir()
    nested = Places(world / "work", inner)  # a skill folder inside the work folder stays read-only
    assert nested.resolve("skill/x", write=False) == inner / "x"
    with pytest.raises(ToolError, match="only read"):
        nested.resolve("skill/x", write=True)
    assert nested.resolve("other", write=True) == world / "work" / "other"
    (world / "skill" / "run").mkdir()
    under = Places(world / "skill" / "run", world / "skill")  # a work folder inside the skill folder is writable
    assert under.resolve("out.md", write=True) == world / "skill" / "run" / "out.md"
    with pytest.raises(ToolError, match="only read"):
        under.resolve("../SKILL.md", write=True)


def test_extras_widen_reading_and_writing(world: Path) -> None:
    (world / "data").mkdir()
    (world / "out").mkdir()
    places = Places(world / "work", read_extra=[world / "data"], write_extra=[world / "out"])
    assert places.resolve(str(world / "data" / "x"), write=False) == world / "data" / "x"
    with pytest.raises(ToolError, match="may only read"):
        places.resolve(str(world / "data" / "x"), write=True)
    assert places.resolve(str(world / "out" / "y"), write=True) == world / "out" / "y"
    with pytest.raises(ToolError, match="outside"):
        places.resolve(str(world / "outside" / "secret.txt"), write=False)


def test_bad_paths_are_tool_errors(world: Path) -> None:
    places = Places(world / "work")
    with pytest.raises(ToolError, match="NUL byte"):
        places.resolve("a\x00b", write=False)
    with pytest.raises(ToolError, match="empty"):
        places.resolve("  ", write=False)
    with pytest.raises(ToolError, match="must be text"):
        places.resolve(3, write=False)  # type: ignore[arg-type]
    with pytest.raises(ToolError, match="not a folder"):
        (world / "work" / "f").write_text("x")
        places.folder("f")
    with pytest.raises(ToolError, match="does not exist"):
        places.folder("nope")


def test_a_symlink_loop_does_not_escape_or_hang(world: Path) -> None:
    work = world / "work"
    os.symlink(work / "loop-b", work / "loop-a")
    os.symlink(work / "loop-a", work / "loop-b")
    places = Places(work)
    try:
        real = places.resolve("loop-a", write=False)
    except ToolError:
        return
    assert str(real).startswith(str(work))


def test_commands_get_the_places_in_their_environment(world: Path) -> None:
    assert Places(world / "work", world / "skill").env() == {"WORKDIR": str(world / "work"),
                                                            "SKILL_DIR": str(world / "skill")}
    assert Places(world / "work").env() == {"WORKDIR": str(world / "work")}
