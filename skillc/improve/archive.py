"""The archive of accepted traces: content-addressed on disk beside the machine, committed with it atomically.

Layout of an archive folder (by default `MACHINE.archive/` beside `MACHINE.skm`):

    manifest.json                 {"version": 1, "machine": "m.skm", "machine_hash": H, "entries": {ID: E},
                                   "previous_machine_hash": P}  (P: the machine this commit replaced)
    objects/traces/ID.json        each accepted DevTrace, once, under its content address (DevTrace.id)
    objects/entries/E.json        its alignment and last replay path (E: SHA-256 of this file's bytes)
    objects/machines/H.skm        every machine text a manifest has named (H: runtime.interpreter.machine_hash)
    lock                          held (flock) while the archive is opened or committed

`commit(machine_path, new_text, archive, added, dropped)` writes, in order:
(1) every new object (each by temp file + rename: an object is whole or absent),
(2) the new manifest, naming the new machine's hash (temp file + rename: the
switch), (3) the machine file (temp file + rename). A crash before (2) leaves
the old manifest and the old machine, in step; the objects written are unused.
A crash after (2) and before (3) leaves the manifest ahead of the machine:
`open_archive` sees the machine still hold the text the manifest says it
replaced (`previous_machine_hash`), finds the manifest's machine among the
objects and writes it (SKM809) — the commit is completed. So machine and
archive are never seen out of step. (Both texts are kept under `objects/`, so
completing a commit loses nothing, even for a machine restored by hand to
exactly its previous text.) Any other machine text was edited by hand: the
archive is read but marked `stale` (SKM808), and every archived trace must be
replayed before the next commit. Leftover temp files are removed on opening.
Objects no manifest names any more are kept (they are small; nothing reads them).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Final

import attrs

from skillc.diagnostics.codes import PATH_OUTSIDE_FOLDER
from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.diagnostics.files import FileProblem, JSONProblem, loads, open_input
from skillc.improve import codes
from skillc.improve.events import Alignment, DevTrace
from skillc.improve.replay import ReplayPath
from skillc.runtime.interpreter import machine_hash
from skillc.runtime.jsonvalue import Value

VERSION: Final = 1
_TMP: Final = ".tmp"


class ArchiveError(Exception):
    """The archive cannot be read or written; `diagnostic` is the coded finding."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


@attrs.frozen
class ArchivedTrace:
    """An accepted trace with its alignment and the path its last replay took."""

    trace: DevTrace
    alignment: Alignment
    path: ReplayPath

    @property
    def id(self) -> str:
        """The trace's content address."""
        return self.trace.id


@attrs.frozen
class Archive:
    """An opened archive: its folder, the machine hash its manifest names (None before the first commit), entries."""

    folder: Path
    machine_hash: str | None
    entries: Mapping[str, ArchivedTrace] = attrs.field(factory=dict)  # by trace id
    stale: bool = False  # the machine is not the one the entries replayed on: replay them all before committing
    refs: Mapping[str, str] = attrs.field(factory=dict)  # trace id -> entry object hash (the manifest's)


def default_folder(machine_path: str | Path) -> Path:
    """Where a machine's archive lives unless told: `m.skm` → `m.archive/` beside it."""
    path = Path(machine_path)
    return path.with_name(path.stem + ".archive")


# ---------------------------------------------------------------- file primitives (tests replace them to crash)


def _write_file(path: Path, data: bytes) -> None:
    """Write and flush one file to disk."""
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _replace(source: Path, target: Path) -> None:
    """Rename `source` over `target` (atomic on POSIX) and make the rename durable."""
    os.replace(source, target)
    _sync_dir(target.parent)


def _sync_dir(folder: Path) -> None:
    """fsync a folder, so a rename in it survives a power cut (where the platform allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` whole: a temp file beside it, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.{os.getpid()}{_TMP}")
    _write_file(temp, data)
    _replace(temp, path)


def _put(path: Path, data: bytes) -> None:
    """Store a content-addressed object unless it is already there (same name, same bytes)."""
    if not path.exists():
        _atomic_write(path, data)


def _file_hash(path: Path) -> str | None:
    """The machine hash of a file's text (bytes that are not UTF-8 read as U+FFFD), or None when it is absent."""
    data = _read(path)
    return None if data is None else machine_hash(data.decode("utf-8", errors="replace"))


def _read(path: Path) -> bytes | None:
    """A regular file's bytes (bounded: never a FIFO, a device or more than the input limit), None when absent."""
    if not os.path.lexists(path):
        return None
    try:
        return open_input(path)
    except FileProblem as exc:
        raise OSError(errno.EINVAL, exc.strerror, str(path)) from None


def _canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold the archive's lock (one writer at a time; a second waits)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "lock", "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


# ---------------------------------------------------------------- reading


def _damaged(folder: Path, why: str) -> ArchiveError:
    return ArchiveError(make(codes.DAMAGED_ARCHIVE, f"archive {folder}: {why}"))


def _read_json(path: Path, folder: Path) -> Value:
    try:
        data = _inside(folder, path)
        if data is None:
            raise _damaged(folder, f"{path.relative_to(folder)} is missing")
        return loads(data.decode("utf-8"))
    except (OSError, UnicodeDecodeError, JSONProblem) as exc:
        raise _damaged(folder, f"{path.relative_to(folder)} cannot be read ({exc})") from None


def _inside(folder: Path, path: Path) -> bytes | None:
    """The bytes of an archive file, which must be in the archive folder (a link out of it is damage)."""
    if os.path.lexists(path) and not Path(os.path.realpath(path)).is_relative_to(os.path.realpath(folder)):
        raise _damaged(folder, f"{path.relative_to(folder)} is a link out of the archive folder")
    return _read(path)


_ADDRESS: Final = re.compile(r"[0-9a-f]{64}|[0-9a-f]{16}")


def _address(folder: Path, name: object) -> str:
    """A content address read from the manifest: hex only, so it names a file inside `objects/`, never `../x`."""
    if not isinstance(name, str) or not _ADDRESS.fullmatch(name):
        raise ArchiveError(make(PATH_OUTSIDE_FOLDER, f"archive {folder}: manifest.json names the object {name!r}, "
                                "which is not a content address (64 hex digits); nothing outside objects/ is read"))
    return name


def _manifest(folder: Path) -> tuple[str, str | None, dict[str, str]] | None:
    """The machine hash, the hash of the machine it replaced, and the entry references; None before a commit."""
    if not (folder / "manifest.json").exists():
        return None
    obj = _read_json(folder / "manifest.json", folder)
    if not isinstance(obj, dict) or obj.get("version") != VERSION or not isinstance(obj.get("machine_hash"), str) \
            or not isinstance(obj.get("entries"), dict) \
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in obj["entries"].items()):
        raise _damaged(folder, f"manifest.json is not a version-{VERSION} manifest (machine_hash, entries)")
    previous = obj.get("previous_machine_hash")
    entries = {_address(folder, k): _address(folder, v) for k, v in obj["entries"].items()}
    return (_address(folder, obj["machine_hash"]), _address(folder, previous) if isinstance(previous, str) else None,
            entries)


def _entry(folder: Path, trace_id: str, ref: str) -> ArchivedTrace:
    """One entry, every object checked against its address."""
    entry_path = folder / "objects" / "entries" / f"{ref}.json"
    try:
        raw = _inside(folder, entry_path)
    except OSError:
        raw = None
    if raw is None:
        raise _damaged(folder, f"the entry of trace {trace_id[:12]} (objects/entries/{ref}.json) is missing")
    if hashlib.sha256(raw).hexdigest() != ref:
        raise _damaged(folder, f"objects/entries/{ref}.json does not match its hash")
    try:
        obj = loads(raw.decode("utf-8"))
        trace = DevTrace.from_json(_read_json(folder / "objects" / "traces" / f"{trace_id}.json", folder))
        alignment, path = Alignment.from_json(obj["alignment"]), ReplayPath.from_json(obj["path"])
    except (ValueError, KeyError, TypeError) as exc:
        raise _damaged(folder, f"the entry of trace {trace_id[:12]} cannot be read ({exc})") from None
    if trace.id != trace_id or alignment.trace != trace_id:
        raise _damaged(folder, f"objects/traces/{trace_id}.json does not hold the trace of that address")
    return ArchivedTrace(trace, alignment, path)


def _clean(folder: Path, machine_path: Path) -> None:
    """Remove the temp files an interrupted write left (the archive's and the machine's)."""
    for temp in [*folder.rglob(f".*{_TMP}"), *machine_path.parent.glob(f".{machine_path.name}.*{_TMP}")]:
        try:
            temp.unlink()
        except OSError:
            pass


def open_archive(machine_path: str | Path, folder: str | Path | None = None) -> tuple[Archive | None,
                                                                                      list[Diagnostic]]:
    """The archive of a machine (empty when there is none yet), an interrupted commit completed; None if damaged."""
    machine = Path(machine_path)
    where = Path(folder) if folder is not None else default_folder(machine)
    try:
        with _locked(where):
            return _open(machine, where)
    except ArchiveError as exc:
        return None, [exc.diagnostic]
    except OSError as exc:
        return None, [make(codes.DAMAGED_ARCHIVE, f"archive {where}: {_os_reason(exc)}")]


def _os_reason(exc: OSError) -> str:
    """What went wrong with which file: `lock: Is a directory`, not a bare `Is a directory`."""
    reason = exc.strerror or str(exc)
    if isinstance(exc, FileExistsError) and exc.filename is not None:
        return f"{exc.filename} is not a folder"  # mkdir of the archive found a file there
    return f"{exc.filename}: {reason}" if exc.filename is not None else reason


def _open(machine: Path, folder: Path) -> tuple[Archive, list[Diagnostic]]:
    """Open under the lock: read the manifest, check the machine against it, recover or mark stale."""
    _clean(folder, machine)
    found = _manifest(folder)
    if found is None:
        return Archive(folder, None), []
    expected, previous, refs = found
    entries = {trace_id: _entry(folder, trace_id, ref) for trace_id, ref in refs.items()}
    archive = Archive(folder, expected, entries, False, refs)
    current = _file_hash(machine)
    if current == expected:
        return archive, []
    stored = folder / "objects" / "machines" / f"{expected}.skm"
    # Only the machine the commit replaced (or none) means a commit was cut short; any other text is a hand edit.
    text = _inside(folder, stored)
    if current in (previous, None) and text is not None and machine_hash(text.decode("utf-8", "replace")) == expected:
        _atomic_write(machine, text)
        return archive, [make(codes.ARCHIVE_RECOVERED, f"{machine}: completed an interrupted commit (the "
                              f"manifest named machine {expected}; the file held {current or 'nothing'})")]
    return attrs.evolve(archive, stale=True), [make(
        codes.ARCHIVE_OUT_OF_STEP, f"{machine} has hash {current}, but archive {folder} was accepted against "
        f"{expected}; its {len(entries)} traces must be replayed again")]


# ---------------------------------------------------------------- committing


def commit(machine_path: str | Path, new_text: str, archive: Archive, added: Iterable[ArchivedTrace] = (),
           dropped: Iterable[str] = ()) -> Archive:
    """Write the new machine text and the archive with `added` (stored or replaced) and without `dropped`, as one.

    `added` holds newly accepted traces and archived ones whose replay path changed; `dropped` trace ids. Raises
    ArchiveError (SKM807) when the files cannot be written — machine and archive are then still in step.
    """
    machine = Path(machine_path)
    try:
        with _locked(archive.folder):
            return _commit(machine, new_text, archive, list(added), set(dropped))
    except OSError as exc:
        raise ArchiveError(make(codes.DAMAGED_ARCHIVE, f"archive {archive.folder}: cannot commit "
                                f"({_os_reason(exc)}); the machine and the archive are as they were")) from None


def _commit(machine: Path, new_text: str, archive: Archive, added: list[ArchivedTrace],
            dropped: set[str]) -> Archive:
    """The three steps, in the order that makes a crash harmless (see the module doc)."""
    objects = archive.folder / "objects"
    for inner in (objects, *(objects / kind for kind in ("machines", "traces", "entries")),
                  archive.folder / "manifest.json"):
        if os.path.lexists(inner) and not Path(os.path.realpath(inner)).is_relative_to(
                os.path.realpath(archive.folder)):
            raise _damaged(archive.folder, f"{inner.relative_to(archive.folder)} is a link out of the archive folder; "
                           "nothing was written")
    new_hash = machine_hash(new_text)
    previous = _read(machine)
    previous_hash = None if previous is None else machine_hash(previous.decode("utf-8", errors="replace"))
    if previous is not None:  # kept too, so that completing this commit on opening can never lose a text
        _put(objects / "machines" / f"{previous_hash}.skm", previous)
    _put(objects / "machines" / f"{new_hash}.skm", new_text.encode("utf-8"))
    entries = {k: v for k, v in archive.entries.items() if k not in dropped}
    refs = {k: v for k, v in archive.refs.items() if k not in dropped}
    for item in added:
        entry = _canonical({"trace": item.id, "alignment": item.alignment.to_json(), "path": item.path.to_json()})
        ref = hashlib.sha256(entry).hexdigest()
        _put(objects / "traces" / f"{item.id}.json", _canonical(item.trace.to_json()))
        _put(objects / "entries" / f"{ref}.json", entry)
        entries[item.id], refs[item.id] = item, ref
    manifest = {"version": VERSION, "machine": machine.name, "machine_hash": new_hash, "entries": refs,
                "previous_machine_hash": previous_hash}
    _atomic_write(archive.folder / "manifest.json", _canonical(manifest))
    _atomic_write(machine, new_text.encode("utf-8"))
    return Archive(archive.folder, new_hash, entries, False, refs)
