"""The archive: content-addressed objects, the manifest naming the machine, and commits a crash cannot split."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillc.improve import archive as A
from skillc.improve.archive import Archive, ArchivedTrace, commit, default_folder, open_archive
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.replay import ReplayPath
from skillc.runtime.interpreter import machine_hash

V1 = "machine m {\n  start a\n}\n"
V2 = "machine m {\n  start b\n}\n"


def entry(command: str, outcome: str = "success") -> ArchivedTrace:
    trace = DevTrace((Event("tool", tool="bash", args={"command": command}, result={"exit_code": 0}),),
                     outcome, "chat")  # type: ignore[arg-type]
    return ArchivedTrace(trace, Alignment(trace.id, ("run",)), ReplayPath(("run", "done"), (("run", 0),)))


def codes(diagnostics) -> list[str]:
    return [str(d.code) for d in diagnostics]


def opened(machine: Path) -> Archive:
    archive, problems = open_archive(machine)
    assert archive is not None, problems
    return archive


@pytest.fixture
def machine(tmp_path: Path) -> Path:
    path = tmp_path / "m.skm"
    path.write_text(V1, encoding="utf-8")
    return path


def test_a_machine_without_an_archive_opens_empty_and_the_first_commit_creates_it(machine: Path) -> None:
    archive = opened(machine)
    assert archive.machine_hash is None and archive.entries == {} and archive.folder == machine.with_name("m.archive")
    one = entry("make")
    after = commit(machine, V2, archive, [one])
    assert machine.read_text(encoding="utf-8") == V2 and after.machine_hash == machine_hash(V2)
    again = opened(machine)
    assert again.machine_hash == machine_hash(V2) and again.entries == {one.id: one} and not again.stale
    manifest = json.loads((default_folder(machine) / "manifest.json").read_text())
    assert manifest["machine_hash"] == machine_hash(V2) and list(manifest["entries"]) == [one.id]
    assert (default_folder(machine) / "objects" / "traces" / f"{one.id}.json").is_file()


def test_each_trace_is_stored_once_by_its_id_and_dropped_ones_leave_the_manifest(machine: Path) -> None:
    a, b = entry("make"), entry("make test")
    archive = commit(machine, V1, opened(machine), [a, b, a])
    assert len(list((archive.folder / "objects" / "traces").iterdir())) == 2
    moved = ArchivedTrace(a.trace, a.alignment, ReplayPath(("run", "other", "done"), (("run", 1), ("other", 0))))
    archive = commit(machine, V2, archive, [moved], dropped=[b.id])
    assert opened(machine).entries == {a.id: moved}


def test_an_archive_in_another_folder(machine: Path, tmp_path: Path) -> None:
    folder = tmp_path / "elsewhere"
    archive, _ = open_archive(machine, folder)
    assert archive is not None
    commit(machine, V2, archive, [entry("x")])
    assert (folder / "manifest.json").is_file() and not default_folder(machine).exists()


class Crash(Exception):
    """The process died here."""


def crashing(monkeypatch: pytest.MonkeyPatch, at: int) -> list[str]:
    """Make the `at`-th file operation of the archive crash (a write crashes half-way); returns the log of ops."""
    ops: list[str] = []
    write, replace = A._write_file, A._replace

    def tick(what: str) -> bool:
        ops.append(what)
        return len(ops) - 1 == at

    def bad_write(path: Path, data: bytes) -> None:
        if tick(f"write {path.name}"):
            path.write_bytes(data[: len(data) // 2])
            raise Crash(path.name)
        write(path, data)

    def bad_replace(source: Path, target: Path) -> None:
        if tick(f"rename {target.name}"):
            raise Crash(target.name)
        replace(source, target)

    monkeypatch.setattr(A, "_write_file", bad_write)
    monkeypatch.setattr(A, "_replace", bad_replace)
    return ops


def test_a_crash_between_any_two_writes_never_leaves_machine_and_archive_out_of_step(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = entry("make"), entry("make test")
    total = None
    at = 0
    seen = set()
    while total is None or at < total:
        machine = tmp_path / f"case{at}" / "m.skm"
        machine.parent.mkdir()
        machine.write_text(V1, encoding="utf-8")
        before = commit(machine, V1, opened(machine), [old])
        ops = crashing(monkeypatch, at)
        try:
            commit(machine, V2, before, [new], dropped=[old.id])
        except Crash:
            pass
        else:
            total = len(ops)  # no crash: every operation has been tried
            monkeypatch.undo()
            break
        monkeypatch.undo()
        archive, problems = open_archive(machine)
        assert archive is not None, problems
        assert machine_hash(machine.read_text(encoding="utf-8")) == archive.machine_hash, ops
        state = (machine.read_text(encoding="utf-8"), tuple(sorted(archive.entries)))
        assert state in {(V1, (old.id,)), (V2, (new.id,))}, (at, ops)
        assert not archive.stale and set(codes(problems)) <= {"SKM809"}
        assert not [p for p in machine.parent.rglob("*.tmp")], "temp files are cleaned on opening"
        seen.add(state[0])
        at += 1
    assert total is not None and total >= 8 and seen == {V1, V2}  # both sides of the switch were hit


def test_a_machine_edited_by_hand_marks_the_archive_stale(machine: Path) -> None:
    commit(machine, V2, opened(machine), [entry("make")])
    machine.write_text(V2 + "// edited\n", encoding="utf-8")
    archive, problems = open_archive(machine)
    assert archive is not None and archive.stale and codes(problems) == ["SKM808"]
    assert len(archive.entries) == 1
    after = commit(machine, machine.read_text(encoding="utf-8"), archive)
    assert not after.stale and open_archive(machine)[1] == []


@pytest.mark.parametrize("damage", ["manifest", "entry", "trace", "shape"])
def test_a_damaged_archive_is_refused_with_a_code_never_a_traceback(machine: Path, damage: str) -> None:
    one = entry("make")
    archive = commit(machine, V1, opened(machine), [one])
    objects = archive.folder / "objects"
    if damage == "manifest":
        (archive.folder / "manifest.json").write_text("{not json", encoding="utf-8")
    elif damage == "shape":
        (archive.folder / "manifest.json").write_text('{"version": 1, "machine_hash": 7}', encoding="utf-8")
    elif damage == "entry":
        next((objects / "entries").iterdir()).write_text("{}", encoding="utf-8")
    else:
        (objects / "traces" / f"{one.id}.json").write_text(json.dumps(entry("rm -rf").trace.to_json()))
    result, problems = open_archive(machine)
    assert result is None and codes(problems) == ["SKM807"]


@pytest.mark.parametrize(("damage", "said"), [
    ("lock", "lock: Is a directory"),
    ("folder", "is not a folder"),
    ("objects", "is missing"),
    ("binary", "manifest.json cannot be read"),
    ("entries", "not a version-1 manifest"),
])
def test_each_damage_is_named_and_nothing_is_written(machine: Path, damage: str, said: str) -> None:
    """The file system's own failures (a folder where the lock goes, a file where the archive goes) name the file;
    a refused archive is left exactly as it was."""
    archive = commit(machine, V1, opened(machine), [entry("make")])
    folder = archive.folder
    if damage == "lock":
        (folder / "lock").unlink()
        (folder / "lock").mkdir()
    elif damage == "folder":
        shutil.rmtree(folder)
        folder.write_text("", encoding="utf-8")
    elif damage == "objects":
        shutil.rmtree(folder / "objects")
    elif damage == "binary":
        (folder / "manifest.json").write_bytes(b"\xff\xfe")
    else:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        (folder / "manifest.json").write_text(json.dumps({**manifest, "entries": "x"}), encoding="utf-8")
    before = _snapshot(folder)
    result, problems = open_archive(machine)
    assert result is None and codes(problems) == ["SKM807"] and said in problems[0].message, problems
    assert _snapshot(folder) == before


def _snapshot(path: Path) -> dict[str, bytes | None]:
    """Every file under `path` (or `path` itself) with its bytes; folders as None."""
    if path.is_file():
        return {".": path.read_bytes()}
    return {str(p.relative_to(path)): p.read_bytes() if p.is_file() else None for p in path.rglob("*")}


def test_a_machine_file_that_is_not_utf8_is_out_of_step_not_a_crash(machine: Path) -> None:
    commit(machine, V1, opened(machine), [entry("make")])
    machine.write_bytes(b"\xff\xfe machine")
    archive, problems = open_archive(machine)
    assert archive is not None and archive.stale and codes(problems) == ["SKM808"]
