"""The agent tool kit, implemented: read, write, edit, glob, grep, fetch (bash is `tools.BashTool`, ask_user
`interaction.AskUser`), confined to the run's places, and the capability set enforced at run time.

Each tool is a `KitTool`: `invoke(**args)` returns its results (exactly the result names of
`skillc.ir.toolkit.KIT`) and its *effect*, the JSON object the step's `ToolCall` records (`{"op": "write",
"path": "out/r.md", "bytes": 12, "sha256": "..."}`); a failure is a `ToolError` with a message that says what
to do about it. Every path goes through `Places.resolve` (symlinks resolved before the containment test), and
every limit is a constant below:

- `read`: UTF-8 text only (a NUL byte or bytes that are not UTF-8: "binary file"); `offset`/`limit` are a
  1-based line range; at most `MAX_READ_BYTES`, then a marker line saying where to read on.
- `write`: parent folders created inside the places; atomic (a temporary file in the same folder, fsync,
  `os.replace`); a replaced file keeps its mode; a symlink inside the places is written through.
- `edit`: exact text replacement, `old` must occur once (or `all: true`), atomic like `write`.
- `glob`: `**` patterns (`{a,b}` alternatives too) under a folder of the places, never out of it; sorted paths,
  at most `MAX_GLOB_FILES`.
- `grep`: a Python regular expression over the text files under a folder (binary files skipped), at most
  `MAX_GREP_MATCHES` lines / `MAX_GREP_OUTPUT` bytes, within `GREP_TIMEOUT_S` (the `regex` module's timeout
  when it is installed, else a child process that is killed): a pattern that backtracks for ever is an error,
  not a hang.
- `fetch`: HTTP(S) GET to allowed hosts only (the run's `allow_hosts`; a machine's `WebFetch(domain:...)`
  entries, for public addresses), redirects checked again, `max_bytes` read at most, `FETCH_TIMEOUT_S`.

Paths in results are relative to the work folder when inside it, else absolute.
"""

from __future__ import annotations

import codecs
import hashlib
import http.client
import importlib
import inspect
import ipaddress
import json
import os
import re
import shlex
import socket
import stat
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from types import ModuleType
from typing import IO, Any, BinaryIO, Final

from skillc.ir.toolkit import Capability, command_allowed, refused_control
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.places import Places
from skillc.runtime.tools import Effect, KitTool, ToolError
from skillc.version import __version__

#: `read`: bytes returned at most (the rest is cut, with a marker saying where to read on).
MAX_READ_BYTES: Final = 2 << 20
#: `write`: bytes of content at most.
MAX_WRITE_BYTES: Final = 64 << 20
#: `edit`: the largest file it edits.
MAX_EDIT_BYTES: Final = 16 << 20
#: `glob`: files listed at most.
MAX_GLOB_FILES: Final = 1000
#: `glob`, `grep`: folder entries looked at at most before the call gives up (narrow `path`).
MAX_WALK_ENTRIES: Final = 200_000
#: `grep`: matching lines (or files) at most, their bytes at most, a line shown at most this many characters.
MAX_GREP_MATCHES: Final = 500
MAX_GREP_OUTPUT: Final = 1 << 20
MAX_GREP_LINE: Final = 2000
#: `grep`: a file larger than this is skipped; all files together are searched up to this many bytes.
MAX_GREP_FILE: Final = 16 << 20
MAX_GREP_SCAN: Final = 256 << 20
#: `grep`: seconds the whole search may take (a regular expression that backtracks catastrophically fails).
GREP_TIMEOUT_S: Final = 10.0
#: `fetch`: bytes read by default and at most; seconds for the whole request; redirects followed.
FETCH_DEFAULT_BYTES: Final = 1 << 20
FETCH_MAX_BYTES: Final = 16 << 20
FETCH_TIMEOUT_S: Final = 30.0
MAX_REDIRECTS: Final = 5
#: Bytes looked at for a NUL byte when telling a binary file from text.
SNIFF_BYTES: Final = 8192
#: Folders `glob` and `grep` do not enter.
SKIPPED_FOLDERS: Final = frozenset({".git"})

_MAGIC = re.compile(r"[*?\[{]")


# ---------------------------------------------------------------- arguments


def _text_arg(value: object, name: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ToolError(f"`{name}` must be text, not {type(value).__name__}")
    if not empty and value == "":
        raise ToolError(f"`{name}` is empty")
    if "\x00" in value and name in ("path", "pattern", "glob"):
        raise ToolError(f"`{name}` contains a NUL byte")
    return value


def _int_arg(value: object, name: str, *, least: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"`{name}` must be an integer, not {value!r}")
    if value < least:
        raise ToolError(f"`{name}` must be at least {least}, not {value}")
    return value


def _flag(value: object, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise ToolError(f"`{name}` must be true or false, not {value!r}")
    return value


# ---------------------------------------------------------------- patterns


def expand_braces(pattern: str, limit: int = 256) -> list[str]:
    """`*.{py,md}` as `*.py`, `*.md` (nested groups too); a group without a comma stays literal."""
    depth, start = 0, -1
    for i, ch in enumerate(pattern):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                parts, level, current = [], 0, ""
                for c in pattern[start + 1:i]:
                    level += c == "{"
                    level -= c == "}"
                    if c == "," and level == 0:
                        parts.append(current)
                        current = ""
                    else:
                        current += c
                parts.append(current)
                if len(parts) < 2:
                    continue
                out: list[str] = []
                for part in parts:
                    for alt in expand_braces(pattern[:start] + part + pattern[i + 1:], limit):
                        if alt not in out:
                            out.append(alt)
                        if len(out) > limit:
                            raise ToolError(f"the pattern `{pattern}` expands to more than {limit} alternatives")
                return out
    return [pattern]


def glob_regex(pattern: str) -> str:
    """A regular expression (for `fullmatch` on a `/`-separated relative path) of one glob without braces:
    `**` as a whole segment is any number of folders, `*` and `?` stay within a segment, `[...]` a class."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i) and (i == 0 or pattern[i - 1] == "/"):
                j = i + 2
                if j == n:
                    out.append(".*")
                    i = j
                    continue
                if pattern[j] == "/":
                    out.append("(?:.*/)?")
                    i = j + 1
                    continue
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
            continue
        if c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and pattern[j] in "!^":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            j = pattern.find("]", j)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                body = ("^" + body[1:] if body[:1] in "!^" else body).replace("\\", "\\\\")
                out.append(f"[{body}]")
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """One regular expression for a glob with its `{a,b}` alternatives."""
    return re.compile("|".join(f"(?:{glob_regex(p)})" for p in expand_braces(pattern)), re.S)


def _max_depth(pattern: str) -> int | None:
    """How many folders deep a glob can match (None: any depth, it has `**`)."""
    alts = expand_braces(pattern)
    if any("**" in a for a in alts):
        return None
    return max(a.count("/") + 1 for a in alts)


def _filter_glob(pattern: str) -> Callable[[str], bool]:
    """`grep`'s `glob`: without a `/` it matches the file's name at any depth (`*.py`), else the path below the
    searched folder (`src/**/*.py`)."""
    body = pattern[2:] if pattern.startswith("./") else pattern.lstrip("/")
    rx = compile_glob(body)
    if "/" not in body:
        return lambda rel: rx.fullmatch(rel.rsplit("/", 1)[-1]) is not None
    return lambda rel: rx.fullmatch(rel) is not None


# ---------------------------------------------------------------- files


def _stat(real: Path, shown: str) -> os.stat_result | None:
    try:
        return os.stat(real)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ToolError(f"cannot use `{shown}`: {_why(exc)}") from None


def _why(exc: OSError) -> str:
    if getattr(exc, "errno", None) == 40:  # ELOOP
        return "too many levels of symbolic links (a symlink loop)"
    return exc.strerror or str(exc)


def _kind(st: os.stat_result) -> str:
    m = st.st_mode
    return ("a FIFO" if stat.S_ISFIFO(m) else "a device" if stat.S_ISCHR(m) or stat.S_ISBLK(m)
            else "a socket" if stat.S_ISSOCK(m) else "not a regular file")


def _regular(real: Path, shown: str, *, missing: str = "does not exist") -> os.stat_result:
    """The stat of an existing regular file; ToolError for anything else."""
    st = _stat(real, shown)
    if st is None:
        raise ToolError(f"`{shown}` {missing}")
    if stat.S_ISDIR(st.st_mode):
        raise ToolError(f"`{shown}` is a folder, not a file (list it with glob)")
    if not stat.S_ISREG(st.st_mode):
        raise ToolError(f"`{shown}` is {_kind(st)}, not a regular file")
    return st


def _open(real: Path, shown: str) -> BinaryIO:
    try:
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise ToolError(f"cannot read `{shown}`: {_why(exc)}") from None
    return os.fdopen(fd, "rb")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _atomic_write(places: Places, real: Path, data: bytes, shown: str) -> bool:
    """Replace (or create) a regular file at `real` with `data` atomically; True when it was created."""
    st = _stat(real, shown)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise ToolError(f"`{shown}` is a folder; write and edit replace files only")
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise ToolError(f"`{shown}` is {_kind(st)}; write and edit replace regular files only")
    place = places.place_of(str(real))
    if place is None or not os.path.isdir(place[0]):
        raise ToolError(f"the {place[2] if place else 'folder'} {place[0] if place else real.parent} does not exist")
    try:
        os.makedirs(real.parent, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ToolError(f"cannot create the folder of `{shown}`: a file is in the way") from None
    except OSError as exc:
        raise ToolError(f"cannot create the folder of `{shown}`: {_why(exc)}") from None
    try:
        fd, tmp = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".skillc-tmp")
    except OSError as exc:
        raise ToolError(f"cannot write `{shown}`: {_why(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(tmp, (st.st_mode & 0o7777) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, real)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ToolError(f"cannot write `{shown}`: {_why(exc)}") from None
        raise
    return st is None


def _decode(data: bytes, shown: str, *, cut: bool = False) -> str:
    """UTF-8 text, or ToolError "binary file" (a NUL byte, or bytes that are not UTF-8). `cut`: the data was cut
    at a limit, so a character cut in two at the end is dropped."""
    if b"\x00" in data:
        raise ToolError(f"`{shown}` is a binary file (it holds NUL bytes); read takes text files only")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if cut and exc.start >= len(data) - 3:
            try:
                return data[:exc.start].decode("utf-8")
            except UnicodeDecodeError:
                pass
        raise ToolError(f"`{shown}` is a binary file (not UTF-8 text: invalid byte at offset {exc.start})") from None


def _count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _walk(base: str, max_depth: int | None, shown: str) -> Iterator[tuple[str, str]]:
    """(path below `base` with `/`, real path) of every file under `base`: folder symlinks are not followed, a
    file symlink yields its target, `.git` is not entered; ToolError past MAX_WALK_ENTRIES entries."""
    seen = 0
    stack: list[tuple[str, str, int]] = [("", base, 1)]
    while stack:
        rel, folder, depth = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError:
            continue
        for e in entries:
            seen += 1
            if seen > MAX_WALK_ENTRIES:
                raise ToolError(f"more than {MAX_WALK_ENTRIES:,} entries under `{shown}`: narrow the folder or "
                                "the pattern")
            r = f"{rel}/{e.name}" if rel else e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    if e.name not in SKIPPED_FOLDERS and (max_depth is None or depth < max_depth):
                        stack.append((r, e.path, depth + 1))
                elif e.is_file(follow_symlinks=False):
                    yield r, e.path
                elif e.is_symlink():
                    target = os.path.realpath(e.path)
                    if os.path.isfile(target):
                        yield r, target
            except OSError:
                continue


# ---------------------------------------------------------------- read, write, edit


class Read(KitTool):
    """`read(path, offset?, limit?) -> (content, lines)`."""

    def __init__(self, places: Places, max_bytes: int = MAX_READ_BYTES) -> None:
        self.places, self.max_bytes = places, max_bytes

    def invoke(self, path: str = "", offset: int | None = None, limit: int | None = None,
               **_: Value) -> tuple[Object, Effect]:
        path = _text_arg(path, "path")
        start = _int_arg(offset, "offset", least=0) or 1  # 0 reads from the start, as 1 does
        count = _int_arg(limit, "limit", least=1)
        real = self.places.resolve(path, write=False)
        _regular(real, path)
        with _open(real, path) as f:
            if b"\x00" in f.read(SNIFF_BYTES):
                raise ToolError(f"`{path}` is a binary file (it holds NUL bytes); read takes text files only")
            f.seek(0)
            data, cut_at = _read_lines(f, start, count, self.max_bytes)
        text = _decode(data, path, cut=cut_at is not None)
        lines = _count_lines(text)
        if cut_at is not None:
            text += (f"\n[skillc: truncated at {self.max_bytes:,} bytes; line {cut_at} is cut — read on with "
                     f"offset={cut_at}]")
        shown = self.places.show(real)
        effect: Effect = {"op": "read", "path": shown, "bytes": len(data)}
        if cut_at is not None:
            effect["truncated"] = True
        return {"content": text, "lines": lines}, effect


def _read_lines(f: BinaryIO, start: int, count: int | None, cap: int) -> tuple[bytes, int | None]:
    """Lines `start` .. `start + count - 1` (1-based) of a binary file, at most `cap` bytes; the line number where
    the cap cut them, or None."""
    if start == 1 and count is None:
        data = f.read(cap + 1)
        if len(data) > cap:
            data = data[:cap]
            return data, data.count(b"\n") + 1
        return data, None
    kept = bytearray()
    line = 1
    end = None if count is None else start + count
    for raw in iter(lambda: f.readline(cap + 1), b""):
        if line >= start:
            room = cap - len(kept)
            if len(raw) > room:
                kept += raw[:room]
                return bytes(kept), line
            kept += raw
        if raw.endswith(b"\n"):
            line += 1
            if end is not None and line >= end:
                break
    return bytes(kept), None


class Write(KitTool):
    """`write(path, content) -> (path, bytes, sha256)`."""

    def __init__(self, places: Places) -> None:
        self.places = places

    def invoke(self, path: str = "", content: str = "", **_: Value) -> tuple[Object, Effect]:
        path = _text_arg(path, "path")
        content = _text_arg(content, "content", empty=True)
        data = content.encode("utf-8", "backslashreplace")
        if len(data) > MAX_WRITE_BYTES:
            raise ToolError(f"the content is {len(data):,} bytes; write takes at most {MAX_WRITE_BYTES:,}")
        real = self.places.resolve(path, write=True)
        created = _atomic_write(self.places, real, data, path)
        shown, digest = self.places.show(real), _sha256(data)
        return ({"path": shown, "bytes": len(data), "sha256": digest},
                {"op": "write", "path": shown, "bytes": len(data), "sha256": digest, "created": created})


class Edit(KitTool):
    """`edit(path, old, new, all?) -> (replacements, sha256)`."""

    def __init__(self, places: Places) -> None:
        self.places = places

    def invoke(self, path: str = "", old: str = "", new: str = "", all: bool | None = None,
               **_: Value) -> tuple[Object, Effect]:
        path = _text_arg(path, "path")
        old, new = _text_arg(old, "old", empty=True), _text_arg(new, "new", empty=True)
        every = _flag(all, "all")
        if old == "":
            raise ToolError("`old` is empty: give the exact text to replace (write creates or replaces whole files)")
        if old == new:
            raise ToolError("`old` and `new` are the same: the edit would change nothing")
        real = self.places.resolve(path, write=True)
        st = _regular(real, path, missing="does not exist (edit changes existing files; write creates them)")
        if st.st_size > MAX_EDIT_BYTES:
            raise ToolError(f"`{path}` is {st.st_size:,} bytes; edit changes files of at most {MAX_EDIT_BYTES:,}")
        with _open(real, path) as f:
            text = _decode(f.read(MAX_EDIT_BYTES + 1), path)
        found = text.count(old)
        if found == 0:
            raise ToolError(f"`old` text not found in `{path}` (it must match exactly, whitespace included)")
        if found > 1 and not every:
            raise ToolError(f"`old` text occurs {found} times in `{path}`: give more surrounding text to make it "
                            "unique, or pass all=true to replace every one")
        data = (text.replace(old, new) if every else text.replace(old, new, 1)).encode("utf-8", "backslashreplace")
        _atomic_write(self.places, real, data, path)
        replaced = found if every else 1
        digest = _sha256(data)
        return ({"replacements": replaced, "sha256": digest},
                {"op": "edit", "path": self.places.show(real), "bytes": len(data), "sha256": digest,
                 "replacements": replaced})


# ---------------------------------------------------------------- glob, grep


class Glob(KitTool):
    """`glob(pattern, path?) -> (files, count)`: files only, sorted, at most MAX_GLOB_FILES (`count` is how many
    were listed)."""

    def __init__(self, places: Places, guard: Capabilities | None = None) -> None:
        self.places, self.guard = places, guard

    def invoke(self, pattern: str = "", path: str | None = None, **_: Value) -> tuple[Object, Effect]:
        pattern = _text_arg(pattern, "pattern").strip()
        if path is not None:
            path = _text_arg(path, "path", empty=True)
        base = self.places.folder(path)
        segments = pattern.split("/")
        literal = 0
        while literal < len(segments) - 1 and not _MAGIC.search(segments[literal]):
            literal += 1
        prefix, rest = "/".join(segments[:literal]), "/".join(segments[literal:])
        if pattern.startswith("/") and not prefix:
            prefix = "/"
        if prefix:
            try:
                base = self.places.folder(prefix, cwd=str(base))
            except ToolError as exc:
                if "does not exist" not in str(exc):
                    raise
                return self._done(str(base), [], False)
        if any(seg == ".." for seg in rest.split("/")):
            raise ToolError("`..` may only stand at the start of a glob pattern (or give the folder as `path`)")
        rest = rest[2:] if rest.startswith("./") else rest
        rx = compile_glob(rest)
        found: list[tuple[str, str]] = []
        for rel, real in _walk(str(base), _max_depth(rest), path or "."):
            if rx.fullmatch(rel) is None or not self.places.readable(real):
                continue
            if self.guard is not None and not self.guard.visible("glob", real):
                continue
            found.append((rel, real))
        found.sort()
        truncated = len(found) > MAX_GLOB_FILES
        files = [self.places.show(os.path.join(base, rel)) for rel, _ in found[:MAX_GLOB_FILES]]
        return self._done(str(base), files, truncated)

    def _done(self, base: str, files: list[str], truncated: bool) -> tuple[Object, Effect]:
        effect: Effect = {"op": "glob", "path": self.places.show(base), "count": len(files)}
        if truncated:
            effect["truncated"] = True
        return {"files": files, "count": len(files)}, effect


class Grep(KitTool):
    """`grep(pattern, path?, glob?, files_only?, ignore_case?) -> (matches, count)`: `file:line:text` per
    matching line (or each matching file once, `files_only`), in path order; `count` is how many were listed."""

    def __init__(self, places: Places, guard: Capabilities | None = None,
                 timeout_s: float = GREP_TIMEOUT_S) -> None:
        self.places, self.guard, self.timeout_s = places, guard, timeout_s

    def invoke(self, pattern: str = "", path: str | None = None, glob: str | None = None,
               files_only: bool | None = None, ignore_case: bool | None = None,
               **_: Value) -> tuple[Object, Effect]:
        pattern = _text_arg(pattern, "pattern")
        only, fold = _flag(files_only, "files_only"), _flag(ignore_case, "ignore_case")
        where = "." if path is None or path == "" else _text_arg(path, "path")
        target = self.places.resolve(where, write=False)
        st = _stat(target, where)
        if st is None:
            raise ToolError(f"`{where}` does not exist")
        files: list[tuple[str, str]]
        if stat.S_ISDIR(st.st_mode):
            keep = _filter_glob(_text_arg(glob, "glob")) if glob else None
            files = sorted((self.places.show(os.path.join(target, rel)), real)
                           for rel, real in _walk(str(target), None, where)
                           if (keep is None or keep(rel)) and self.places.readable(real)
                           and (self.guard is None or self.guard.visible("grep", real)))
        else:
            _regular(target, where)
            if self.guard is not None and not self.guard.visible("grep", str(target)):
                raise ToolError(f"outside allowed-tools: `{where}` matches none of {self.guard.spellings('grep')}")
            files = [(self.places.show(target), str(target))]
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"invalid regular expression `{pattern}`: {exc}") from None
        started = time.monotonic()
        found = _grep_regex(pattern, fold, only, files, self.timeout_s)
        if found is None:
            found = _grep_child(pattern, fold, only, files, self.timeout_s)
        matches, stats = found
        effect: Effect = {"op": "grep", "path": self.places.show(target), "files": stats["files"],
                          "bytes": stats["bytes"], "count": len(matches),
                          "duration_ms": round((time.monotonic() - started) * 1000, 1)}
        for key in ("truncated", "skipped_binary", "skipped_large"):
            if stats.get(key):
                effect[key] = stats[key]
        return {"matches": matches, "count": len(matches)}, effect


def _limits() -> dict[str, int]:
    return {"file": MAX_GREP_FILE, "sniff": SNIFF_BYTES, "scan": MAX_GREP_SCAN, "line": MAX_GREP_LINE,
            "matches": MAX_GREP_MATCHES, "output": MAX_GREP_OUTPUT}


def _scan(files: Iterable[tuple[str, str]], search: Callable[[str], bool], only: bool,
          limits: dict[str, int]) -> tuple[list[str], Object]:
    """Search text files line by line: the matches and what was searched. Builtins only: its source is also what
    the child process of `_grep_child` runs."""
    matches: list[str] = []
    stats: Object = {"files": 0, "bytes": 0, "skipped_binary": 0, "skipped_large": 0, "truncated": False}
    size = 0
    for shown, real in files:
        try:
            with open(real, "rb") as f:
                data = f.read(limits["file"] + 1)
        except OSError:
            continue
        if len(data) > limits["file"]:
            stats["skipped_large"] += 1
            continue
        if b"\x00" in data[:limits["sniff"]]:
            stats["skipped_binary"] += 1
            continue
        if stats["bytes"] + len(data) > limits["scan"]:
            stats["truncated"] = True
            break
        stats["files"] += 1
        stats["bytes"] += len(data)
        lines = data.decode("utf-8", "replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, 1):
            line = line[:-1] if line.endswith("\r") else line
            if not search(line):
                continue
            entry = shown if only else f"{shown}:{number}:" + (
                line if len(line) <= limits["line"] else line[:limits["line"]] + "…")
            size += len(entry.encode("utf-8", "replace")) + 1
            if len(matches) >= limits["matches"] or size > limits["output"]:
                stats["truncated"] = True
                return matches, stats
            matches.append(entry)
            if only:
                break
    return matches, stats


def _timed_out(pattern: str, timeout_s: float) -> ToolError:
    return ToolError(f"the search for `{pattern}` took longer than {timeout_s:g} s (a pattern that backtracks "
                     "catastrophically, or too much to search): narrow the pattern, `path` or `glob`")


def _grep_regex(pattern: str, fold: bool, only: bool, files: list[tuple[str, str]],
                timeout_s: float) -> tuple[list[str], Object] | None:
    """The search with the `regex` module's timeout, in this process; None when `regex` is not installed."""
    if _REGEX_DISABLED:
        return None
    try:
        regex: ModuleType = importlib.import_module("regex")  # optional, untyped: matching with a time limit
    except ImportError:
        return None
    try:
        rx = regex.compile(pattern, regex.IGNORECASE if fold else 0)
    except regex.error as exc:
        raise ToolError(f"invalid regular expression `{pattern}`: {exc}") from None
    deadline = time.monotonic() + timeout_s

    def search(line: str) -> bool:
        left = deadline - time.monotonic()
        if left <= 0:
            raise _timed_out(pattern, timeout_s)
        return rx.search(line, timeout=left) is not None

    try:
        return _scan(files, search, only, _limits())
    except TimeoutError:
        raise _timed_out(pattern, timeout_s) from None


#: Tests set this to exercise the child-process search that runs where `regex` is not installed.
_REGEX_DISABLED = False
#: Seconds the child process of `_grep_child` gets to start, on top of the search's own time.
CHILD_START_S: Final = 1.0
_CHILD_MAIN = """
import json, re, sys
req = json.load(sys.stdin)
rx = re.compile(req["pattern"], re.IGNORECASE if req["fold"] else 0)
found = _scan([(str(a), str(b)) for a, b in req["files"]], lambda line: rx.search(line) is not None, req["only"],
              req["limits"])
json.dump({"matches": found[0], "stats": found[1]}, sys.stdout)
"""


def _child_source() -> list[str]:
    """The child's command line: `_scan`'s own source and a main (Python started bare: no site, no skillc)."""

    try:
        source = "from __future__ import annotations\n" + inspect.getsource(_scan) + _CHILD_MAIN
        return [sys.executable, "-I", "-S", "-c", source]
    except (OSError, TypeError):  # no source (a frozen install): import skillc in the child instead
        root = str(Path(__file__).resolve().parents[2])
        return [sys.executable, "-I", "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                "from skillc.runtime.toolkit import grep_child_main; grep_child_main()", root]


def _grep_child(pattern: str, fold: bool, only: bool, files: list[tuple[str, str]],
                timeout_s: float) -> tuple[list[str], Object]:
    """The search with `re` in a child process, killed when `timeout_s` (and CHILD_START_S) pass: `re` cannot be
    interrupted inside a match."""
    request = json.dumps({"pattern": pattern, "fold": fold, "only": only, "files": files, "limits": _limits()})
    try:
        done = subprocess.run(_child_source(), input=request, capture_output=True, text=True,
                              timeout=timeout_s + CHILD_START_S)
    except subprocess.TimeoutExpired:
        raise _timed_out(pattern, timeout_s) from None
    except OSError as exc:
        raise ToolError(f"cannot start the search: {exc}") from None
    try:
        reply = json.loads(done.stdout)
        return list(reply["matches"]), dict(reply["stats"])
    except (ValueError, KeyError, TypeError):
        raise ToolError(f"the search failed: {done.stderr.strip()[-500:] or 'no output'}") from None


def grep_child_main() -> None:
    """The child process of `_grep_child` where `_scan`'s source cannot be read: a request on stdin, the matches
    as JSON on stdout."""
    req = json.load(sys.stdin)
    rx = re.compile(req["pattern"], re.IGNORECASE if req["fold"] else 0)
    files = [(str(shown), str(real)) for shown, real in req["files"]]
    matches, stats = _scan(files, lambda line: rx.search(line) is not None, req["only"], req["limits"])
    json.dump({"matches": matches, "stats": stats}, sys.stdout)


# ---------------------------------------------------------------- fetch


def _host_matches(host: str, entry: str) -> bool:
    """`example.com` (and `*.example.com`) covers the host and its subdomains; an address only itself."""
    entry = entry.strip().lower().rstrip(".")
    if entry.startswith("*."):
        return host.endswith(entry[1:])
    if _address(entry) is not None:
        return host == entry
    return host == entry or host.endswith("." + entry)


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def _local_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (ip.is_loopback or ip.is_private or ip.is_link_local or ip.is_unspecified or ip.is_reserved
            or ip.is_multicast)


def is_local(host: str) -> bool:
    """`localhost`, a loopback, private, link-local or otherwise non-public address (as written, not resolved)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    ip = _address(host)
    return ip is not None and _local_address(ip)


class _Redirects(urllib.request.HTTPRedirectHandler):
    max_redirections = MAX_REDIRECTS

    def __init__(self, check: Callable[[str], str | None]) -> None:
        self.check = check
        self.seen: list[str] = []

    def redirect_request(self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str,
                         headers: http.client.HTTPMessage, newurl: str) -> urllib.request.Request | None:
        newurl = urllib.parse.urljoin(req.full_url, newurl)
        problem = self.check(newurl)
        if problem is not None:
            fp.close()
            raise ToolError(f"the redirect to {newurl} was refused: {problem}")
        self.seen.append(newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


#: Content types read as text (with `text/*` and `+json`/`+xml` suffixes).
_TEXT_TYPES: Final = frozenset({"application/json", "application/xml", "application/javascript",
                                "application/x-javascript", "application/ecmascript", "application/x-ndjson",
                                "application/yaml", "application/x-yaml", "application/toml", "application/sql",
                                "application/x-www-form-urlencoded", "application/xhtml+xml", "image/svg+xml",
                                "application/x-sh", "application/graphql"})


class Fetch(KitTool):
    """`fetch(url, max_bytes?) -> (status, content, content_type)`: HTTP(S) GET of text from an allowed host.

    A host is allowed when `allow_hosts` (the run's list) names it or a domain above it (`*` names every
    public host), or when the machine's `WebFetch(domain:...)` entries do and it is a public host: `localhost`
    and loopback, private and link-local addresses only ever through the run's own list (a name granted by the
    machine is resolved, and refused if any of its addresses is such). An HTTP error status is a result, not a
    failure; a binary body is a failure.
    """

    def __init__(self, allow_hosts: Iterable[str] = (), *, guard: Capabilities | None = None,
                 timeout_s: float = FETCH_TIMEOUT_S) -> None:
        self.allow_hosts = tuple(h.strip().lower() for h in allow_hosts if h.strip())
        self.guard, self.timeout_s = guard, timeout_s
        self.domains = guard.domains() if guard is not None else ()

    def host_problem(self, url: str) -> str | None:
        """Why `url` may not be fetched, or None."""
        try:
            parts = urllib.parse.urlsplit(url)
            host = (parts.hostname or "").lower().rstrip(".")
            parts.port  # noqa: B018 - a bad port raises here
        except ValueError as exc:
            return f"`{url}` is not a valid URL ({exc})"
        if parts.scheme not in ("http", "https"):
            return f"`{url}`: fetch takes http and https URLs only"
        if not host:
            return f"`{url}` names no host"
        if any(e != "*" and _host_matches(host, e) for e in self.allow_hosts):
            return self._capability(host)
        granted = "*" in self.allow_hosts or any(_host_matches(host, d) for d in self.domains)
        if not granted:
            listed = ", ".join(self.allow_hosts + tuple(self.domains)) or "none"
            return f"host not allowed: `{host}` (allowed hosts: {listed}; a run allows more with allow_hosts)"
        if is_local(host):
            return f"host not allowed: `{host}` is a local address; only the run's own allow_hosts can allow it"
        try:
            infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80),
                                       proto=socket.IPPROTO_TCP)
        except OSError as exc:
            return f"cannot resolve `{host}`: {exc.strerror or exc}"
        for info in infos:
            ip = _address(str(info[4][0]).split("%", 1)[0])
            if ip is not None and _local_address(ip):
                return f"host not allowed: `{host}` resolves to the local address {ip}"
        return self._capability(host)

    def _capability(self, host: str) -> str | None:
        if self.guard is not None and not self.guard.host_allowed(host):
            return f"outside allowed-tools: `{host}` is in none of {self.guard.spellings('fetch')}"
        return None

    def invoke(self, url: str = "", max_bytes: int | None = None, **_: Value) -> tuple[Object, Effect]:
        url = _text_arg(url, "url").strip()
        limit = min(_int_arg(max_bytes, "max_bytes", least=1) or FETCH_DEFAULT_BYTES, FETCH_MAX_BYTES)
        problem = self.host_problem(url)
        if problem is not None:
            raise ToolError(problem)
        host = (urllib.parse.urlsplit(url).hostname or "").lower()
        redirects = _Redirects(self.host_problem)
        proxies = urllib.request.ProxyHandler({}) if is_local(host) else urllib.request.ProxyHandler()
        opener = urllib.request.build_opener(proxies, redirects)

        request = urllib.request.Request(url, method="GET", headers={
            "User-Agent": f"skillc/{__version__}", "Accept-Encoding": "identity",
            "Accept": "text/*, application/json, application/xml;q=0.9, */*;q=0.5"})
        started = time.monotonic()
        deadline = started + self.timeout_s
        try:
            response: Any = opener.open(request, timeout=self.timeout_s)
        except urllib.error.HTTPError as exc:
            if 300 <= exc.code < 400 and exc.headers is not None and exc.headers.get("Location"):
                # urllib gives up on a redirect loop or after MAX_REDIRECTS
                exc.close()
                raise ToolError(f"fetching {url} was redirected too often (more than {MAX_REDIRECTS} times, or in "
                                "a loop)") from None
            response = exc  # an error status is a result
        except urllib.error.URLError as exc:
            reason = exc.reason
            if isinstance(reason, (TimeoutError, socket.timeout)):
                raise ToolError(f"fetching {url} timed out after {self.timeout_s:g} s") from None
            raise ToolError(f"cannot fetch {url}: {getattr(reason, 'strerror', None) or reason}") from None
        except TimeoutError:
            raise ToolError(f"fetching {url} timed out after {self.timeout_s:g} s") from None
        except (OSError, ValueError) as exc:  # http.client.HTTPException is neither; caught below
            raise ToolError(f"cannot fetch {url}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a malformed response (http.client.HTTPException)
            raise ToolError(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from None
        try:
            status = int(getattr(response, "status", None) or response.getcode())
            final = response.geturl()
            headers = response.headers
            chunks: list[bytes] = []
            size = 0
            # read1: what has arrived (read(n) would wait for n bytes, and a slow drip would pass the deadline)
            read = getattr(response, "read1", response.read)
            while size <= limit:
                if time.monotonic() > deadline:
                    raise ToolError(f"fetching {url} took longer than {self.timeout_s:g} s")
                chunk = read(min(65536, limit + 1 - size)) if response.fp is not None else b""
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        except TimeoutError:
            raise ToolError(f"fetching {url} timed out after {self.timeout_s:g} s") from None
        except ToolError:
            raise
        except Exception as exc:  # noqa: BLE001 - a connection reset mid-body, a malformed chunk
            raise ToolError(f"cannot fetch {url}: {type(exc).__name__}: {exc}") from None
        finally:
            response.close()
        body = b"".join(chunks)
        truncated = len(body) > limit
        body = body[:limit]
        content_type = headers.get_content_type() if headers is not None and headers.get("Content-Type") else ""
        text = _body_text(body, content_type, headers.get_content_charset() if headers is not None else None,
                          url, truncated)
        if truncated:
            text += f"\n[skillc: truncated after {limit:,} bytes]"
        effect: Effect = {"op": "fetch", "url": url, "status": status, "bytes": len(body),
                          "duration_ms": round((time.monotonic() - started) * 1000, 1)}
        if final and final != url:
            effect["final_url"] = final
        if truncated:
            effect["truncated"] = True
        return {"status": status, "content": text, "content_type": content_type}, effect


def _body_text(body: bytes, content_type: str, charset: str | None, url: str, truncated: bool) -> str:
    """The body as text per its charset (UTF-8 by default); ToolError for a binary body: a NUL byte in its first
    bytes, or a type that is not text (`image/png`, `application/octet-stream`) whose bytes are not UTF-8."""
    textual = (content_type.startswith("text/") or content_type in _TEXT_TYPES
               or content_type.endswith(("+json", "+xml")))
    binary = b"\x00" in body[:SNIFF_BYTES]
    if not binary and not textual and content_type:
        try:
            body.decode("utf-8")
        except UnicodeDecodeError as exc:
            binary = not (truncated and exc.start >= len(body) - 3)
    if binary:
        raise ToolError(f"{url} returned {content_type or 'binary data'} ({len(body):,} bytes"
                        f"{' or more' if truncated else ''}); fetch returns text only")
    encoding = "utf-8"
    if charset:
        try:
            encoding = codecs.lookup(charset).name
        except LookupError:
            pass
    return body.decode(encoding, "replace")


# ---------------------------------------------------------------- capabilities

#: The entries that bound each kit tool: `Read(...)` bounds glob and grep too, `Edit(...)` and `Write(...)`
#: bound each other (as Claude Code's rules do).
GROUPS: Final[dict[str, tuple[str, ...]]] = {
    "read": ("read",), "glob": ("glob", "read"), "grep": ("grep", "read"),
    "write": ("write", "edit"), "edit": ("edit", "write"), "bash": ("bash",), "fetch": ("fetch",)}
#: Tools every capability set allows: a question to the user acts on nothing.
ALWAYS: Final = frozenset({"ask_user"})


def _path_matcher(pattern: str) -> Callable[[str, Places], bool]:
    """How a `Read(...)`/`Edit(...)` pattern matches a resolved path: `//abs/**` absolute, `~/x` in the home
    folder, `/x` and `x/**` from the work folder (or the skill folder, for a path inside it); a pattern without
    a `/` matches a name at any depth (`*.md`), a trailing `/` a folder and all below it."""
    if pattern.startswith("//") or pattern.startswith("~/"):
        absolute = pattern[1:] if pattern.startswith("//") else os.path.expanduser(pattern)
        if absolute.endswith("/"):
            absolute += "**"
        rx = compile_glob(absolute)
        return lambda real, places: rx.fullmatch(real) is not None
    body = pattern[1:] if pattern.startswith("/") else pattern
    body = body[2:] if body.startswith("./") else body
    if body.endswith("/"):
        body += "**"
    if "/" not in body:
        body = "**/" + body
    rx = compile_glob(body)

    def match(real: str, places: Places) -> bool:
        for root in (places.workdir, places.skill_dir):
            if root is None:
                continue
            r = str(root)
            if real.startswith(r + os.sep) and rx.fullmatch(real[len(r) + 1:].replace(os.sep, "/")) is not None:
                return True
        return False

    return match


class Capabilities:
    """A machine's capability set enforced at run time (`allow "Read(docs/**)", "Bash(git diff:*)"`).

    `check(tool, args)` raises ToolError "outside allowed-tools: ..." for a call the set does not allow:
    a tool no entry names (`ask_user` is always allowed); a bash command that is not an exact `Bash(cmd)`,
    does not start with a `Bash(prefix:*)` as a whole word, or adds shell control after the prefix
    (`shell_control`); an `argv` whose first words are not the prefix's; a read/write/edit path that no
    `Read(...)`/`Edit(...)`/`Write(...)` pattern matches; a fetch to a host outside every `WebFetch(domain:...)`.
    `glob` and `grep` list only the files the `Read(...)` patterns allow (`visible`).
    """

    def __init__(self, caps: Iterable[Capability], places: Places) -> None:
        self.caps = tuple(caps)
        self.places = places
        self._paths = {id(c): _path_matcher(c.paths) for c in self.caps if c.paths is not None}
        self._open: dict[str, bool] = {}

    def entries(self, tool: str) -> list[Capability]:
        """The entries that bound `tool`."""
        group = GROUPS.get(tool, (tool,))
        return [c for c in self.caps if c.tool in group]

    def spellings(self, tool: str) -> str:
        """The entries of `tool` as written (for messages)."""
        return ", ".join(f"`{c.spelling}`" for c in self.entries(tool)) or "the allowed tools"

    def domains(self) -> tuple[str, ...]:
        """The hosts the `WebFetch(domain:...)` entries name."""
        return tuple(c.domain for c in self.caps if c.tool == "fetch" and c.domain)

    def unrestricted(self, tool: str) -> bool:
        """True when some entry allows every call of `tool`."""
        if tool not in self._open:
            self._open[tool] = tool in ALWAYS or any(c.unrestricted for c in self.entries(tool))
        return self._open[tool]

    def check(self, tool: str, args: Object) -> None:
        """Refuse a call the set does not allow (ToolError "outside allowed-tools: ...")."""
        if tool in ALWAYS:
            return
        entries = self.entries(tool)
        if not entries:
            listed = ", ".join(c.spelling for c in self.caps)
            raise ToolError(f"outside allowed-tools: `{tool}` is not in the machine's allowed tools ({listed})")
        if self.unrestricted(tool):
            return
        if tool == "bash":
            self._bash(entries, args)
        elif tool in ("read", "write", "edit"):
            path = args.get("path")
            if isinstance(path, str):
                real = str(self.places.resolve(path, write=tool != "read"))
                if not self.path_allowed(entries, real):
                    raise ToolError(f"outside allowed-tools: `{path}` matches none of {self.spellings(tool)}")
        elif tool == "fetch":
            url = args.get("url")
            host = urllib.parse.urlsplit(url).hostname if isinstance(url, str) else None
            if host is not None and not self.host_allowed(host.lower()):
                raise ToolError(f"outside allowed-tools: `{host}` is in none of {self.spellings('fetch')}")

    def path_allowed(self, entries: Iterable[Capability], real: str) -> bool:
        return any(c.unrestricted or (c.paths is not None and self._paths[id(c)](real, self.places))
                   for c in entries)

    def visible(self, tool: str, real: str) -> bool:
        """True when `glob`/`grep` may show a file (a `Read(...)` or own pattern matches it)."""
        return self.unrestricted(tool) or self.path_allowed(self.entries(tool), real)

    def host_allowed(self, host: str) -> bool:
        entries = self.entries("fetch")
        return any(c.unrestricted or (c.domain is not None and _host_matches(host, c.domain)) for c in entries)

    def _bash(self, entries: list[Capability], args: Object) -> None:
        command, argv = args.get("command"), args.get("argv")
        if isinstance(argv, list) and command is None:
            words = [str(a) for a in argv]
            for c in entries:
                try:
                    if c.command is not None and _split(c.command) == words:
                        return
                    if c.prefix is not None and words[:len(_split(c.prefix))] == _split(c.prefix):
                        return
                    if c.pattern is not None and command_allowed((c,), " ".join(words)):
                        return
                except ValueError:
                    continue
            raise ToolError(f"outside allowed-tools: the command {words!r} is in none of {self.spellings('bash')}")
        if not isinstance(command, str):
            return  # BashTool reports a call without a command
        operator = refused_control(entries, command)
        if operator is not None:
            raise ToolError(f"outside allowed-tools: `{command}` adds shell control ({operator[0]}) to what "
                            f"`{operator[1]}` allows; run one command per step, or allow it exactly")
        if command_allowed(entries, command):
            return
        raise ToolError(f"outside allowed-tools: the command `{command}` is in none of {self.spellings('bash')}")


def _split(command: str) -> list[str]:

    return shlex.split(command)


def kit_tools(places: Places, *, timeout_s: float = 60.0, allow_hosts: Iterable[str] = (),
              guard: Capabilities | None = None) -> dict[str, KitTool]:
    """The kit's file and web tools for one run (bash and ask_user are added by `ToolBox.for_run`)."""
    return {"read": Read(places), "write": Write(places), "edit": Edit(places), "glob": Glob(places, guard),
            "grep": Grep(places, guard, timeout_s=min(GREP_TIMEOUT_S, timeout_s)),
            "fetch": Fetch(allow_hosts, guard=guard, timeout_s=min(FETCH_TIMEOUT_S, timeout_s))}


__all__ = [
    "ALWAYS", "FETCH_DEFAULT_BYTES", "FETCH_MAX_BYTES", "FETCH_TIMEOUT_S", "GREP_TIMEOUT_S", "GROUPS",
    "MAX_EDIT_BYTES", "MAX_GLOB_FILES", "MAX_GREP_MATCHES", "MAX_GREP_OUTPUT", "MAX_READ_BYTES", "MAX_WALK_ENTRIES",
    "MAX_WRITE_BYTES", "Capabilities", "Edit", "Fetch", "Glob", "Grep", "Read", "Write", "compile_glob",
    "expand_braces", "glob_regex", "grep_child_main", "is_local", "kit_tools",
]
