"""Every file skillc reads or writes goes through here.

Reading: a folder, a FIFO, a device, a symlink loop or a path with a NUL byte
becomes a diagnostic (or `FileProblem`), never an exception or a hang, and no
more than a size limit is ever read. JSON input is decoded with a depth limit.

Writing (`write_output`): a regular file is replaced atomically (a reader sees
the old or the new content, never half of it) and keeps its mode; a new file
gets the ordinary mode (0666 less the umask); a symlink is written through to
its target (the link stays a link) when that target is in the link's own
folder, and refused when it points out of it; a device or a FIFO is written
into, never replaced by a regular file (`regular=True` refuses them: outputs
that are read back, like a refined machine). Text is encoded surrogate-safely.

Outputs that name an input are refused (`refuse_inputs`), and paths read from
files (a trace header, an archive's manifest) are confined to the folders the
user named (`confined`), before anything is written.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from skillc.diagnostics import codes
from skillc.diagnostics.code import Code
from skillc.diagnostics.diagnostic import Diagnostic, make

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Value

#: What any input file may hold at most unless the caller says otherwise (a .skm, a trace, a script).
MAX_INPUT_BYTES = 128 << 20
#: How deeply JSON input may nest (machine values nest far less; Python's own decoder would overflow).
MAX_JSON_DEPTH = 200
#: How many values a YAML text may hold once its aliases are expanded (a front matter holds a few dozen; an alias
#: bomb of 1 kB holds hundreds of millions, and printing it never ends).
MAX_YAML_VALUES = 100_000
_SURROGATE = re.compile("[\ud800-\udfff]")


class FileProblem(OSError):
    """An input or output path cannot be used; the message is the whole explanation, `strerror` the reason,
    `code` the diagnostic it becomes (SKM901 unless the problem has a code of its own)."""

    def __init__(self, message: str, reason: str | None = None, code: Code = codes.IO_ERROR) -> None:
        super().__init__(message)
        self.strerror = reason or message
        self.code = code

    def diagnostic(self) -> Diagnostic:
        """The coded diagnostic of this problem."""
        return make(self.code, str(self))


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.errno == errno.ELOOP:
        return "too many levels of symbolic links (a symlink loop)"
    if isinstance(exc, RuntimeError):  # Path.resolve() reports loops this way before Python 3.13
        return "too many levels of symbolic links (a symlink loop)"
    if isinstance(exc, ValueError):
        return "the path contains a NUL byte"
    return getattr(exc, "strerror", None) or str(exc)


def describe_error(exc: BaseException) -> str:
    """Why a path could not be used, in words: a symlink loop and a NUL byte are named, not "no such file"."""
    return _why(exc)


def open_input(path: str | Path, *, folder: str = "a folder", limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; FileProblem explains anything else."""
    try:
        st = os.stat(path)
    except (OSError, ValueError) as exc:
        raise FileProblem(f"cannot read {path}: {_why(exc)}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileProblem(f"{path} is {folder}")
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or \
            stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise FileProblem(f"cannot read {path}: it is {kind}, not a regular file")
    if st.st_size > limit:
        raise FileProblem(f"{path} is {st.st_size:,} bytes; the limit is {limit:,}")
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since the stat, opening must not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError) as exc:
        raise FileProblem(f"cannot read {path}: {_why(exc)}") from None
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(limit + 1)  # a file that grew since the stat is still cut at the limit
        except OSError as exc:
            raise FileProblem(f"cannot read {path}: {_why(exc)}") from None
    if len(data) > limit:
        raise FileProblem(f"{path} is larger than the limit of {limit:,} bytes")
    return data


def read_bytes(path: str | Path, *, folder: str, code: Code = codes.IO_ERROR,
               limit: int = MAX_INPUT_BYTES) -> tuple[bytes | None, Diagnostic | None]:
    """The bytes of `path`, or None and a `code` diagnostic; `folder` completes "PATH is …" for a folder."""
    try:
        return open_input(path, folder=folder, limit=limit), None
    except FileProblem as exc:
        return None, make(code, str(exc))


def read_text(path: str | Path, *, what: str = "file", limit: int = MAX_INPUT_BYTES) -> str:
    """A UTF-8 text file (BOM dropped); FileProblem explains an unreadable or undecodable one."""
    data = open_input(path, folder=f"a folder, not a {what}", limit=limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileProblem(f"{path} is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at offset "
                          f"{exc.start})") from None


class JSONProblem(ValueError):
    """JSON text that does not decode, or that nests deeper than the limit."""


def loads(text: str | bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Value:
    """`json.loads` that never overflows the stack: deeper than `max_depth` is a JSONProblem."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise JSONProblem(f"nested more than {max_depth} levels deep") from None
    except json.JSONDecodeError as exc:
        raise JSONProblem(f"not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    except (UnicodeDecodeError, TypeError, ValueError) as exc:
        raise JSONProblem(f"not JSON ({exc})") from None
    if depth_exceeds(value, max_depth):
        raise JSONProblem(f"nested more than {max_depth} levels deep")
    return value


def load_yaml(text: str, *, max_values: int = MAX_YAML_VALUES, max_depth: int = MAX_JSON_DEPTH) -> object:
    """`yaml.safe_load` within bounds: more than `max_values` values once aliases are expanded, nesting deeper than
    `max_depth` or an alias inside the value it names is a `yaml.YAMLError` saying so, like a syntax error (the
    value is never built: `str()` of an alias bomb does not end)."""
    import yaml  # the YAML readers only (front matter): not on every command's start

    root = yaml.compose(text, Loader=yaml.SafeLoader)  # safe_load's own parser: the same errors at the same marks
    if root is None:
        return None
    _yaml_bounds(root, max_values, max_depth)
    return yaml.SafeLoader("").construct_document(root)


#: A top-level `key: value` line of a front matter whose value is a plain scalar (no quote, flow or block opener).
_PLAIN_LINE = re.compile(r"(?P<key>[A-Za-z_][\w-]*):[ \t]+(?P<value>[^\s\"'\[{|>&*!%@`#].*)$")
#: Where a plain scalar's comment starts: ` #`.
_COMMENT = re.compile(r"[ \t]#")


def load_front_matter(text: str) -> tuple[object, tuple[tuple[int, str], ...]]:
    """`load_yaml` of a skill's front matter, which YAML refuses where a top-level plain value holds `: ` (prose such
    as `description: Review a PR: read the diff`: a mapping inside a plain scalar). Each value YAML stops at for that
    reason (and only those) is read as its whole line: double-quoted, its continuation lines folded in as YAML folds
    them, a ` # comment` kept a comment. The value read, and the (0-based line, key) of each value quoted; the first
    `yaml.YAMLError` when another problem remains."""
    import yaml

    lines = text.split("\n")
    fixed: list[tuple[int, str]] = []
    first: yaml.YAMLError | None = None
    while True:
        try:
            return load_yaml("\n".join(lines)), tuple(fixed)
        except yaml.YAMLError as exc:
            first = first or exc
            mark = getattr(exc, "problem_mark", None)
            if type(exc) is yaml.YAMLError or mark is None or getattr(exc, "problem", None) != (
                    "mapping values are not allowed here"):
                raise first from None
            quoted = _quoted_value(lines, mark.line)
            if quoted is None or any(i == quoted[0] for i, _ in fixed):
                raise first from None
            i, end, key, line = quoted
            lines[i:end] = [line] + [""] * (end - i - 1)  # blank lines keep every line where it was
            fixed.append((i, key))


def _quoted_value(lines: list[str], at: int) -> tuple[int, int, str, str] | None:
    """The top-level plain value holding line `at` (its key's line, the end of its continuation lines, the key) and
    the line that says it double-quoted; None when `at` is in no such value or the value holds no `: `."""
    i = at
    while i > 0 and lines[i][:1] in (" ", "\t") and lines[i].strip():
        i -= 1  # a continuation line: its value starts on the key's line above
    m = _PLAIN_LINE.match(lines[i]) if i < len(lines) else None
    if m is None:
        return None
    end = i + 1
    while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip() \
            and not lines[end].lstrip().startswith("#"):
        end += 1
    parts, comment = [], ""
    for part in [m.group("value"), *lines[i + 1:end]]:
        cut = _COMMENT.search(part)
        if cut is not None:
            comment = comment or part[cut.start():].strip()
            part = part[:cut.start()]
        parts.append(part.strip())
    value = " ".join(p for p in parts if p)
    if ": " not in value and not value.endswith(":"):
        return None
    return i, end, m.group("key"), f"{m.group('key')}: {json.dumps(value, ensure_ascii=False)}" + (
        f"  {comment}" if comment else "")


def _yaml_bounds(root: object, max_values: int, max_depth: int) -> None:
    """Raise `yaml.YAMLError` when the node graph under `root` expands past the bounds (iterative; each node once)."""
    import yaml

    def children(node: object) -> list[object]:
        if isinstance(node, yaml.MappingNode):
            return [x for pair in node.value for x in pair]
        return list(node.value) if isinstance(node, yaml.SequenceNode) else []

    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    path: set[int] = set()  # the nodes being measured: an alias to one of them is a value inside itself
    stack: list[tuple[object, bool]] = [(root, False)]
    while stack:
        node, measured = stack.pop()
        key = id(node)
        kids = children(node)
        if measured:
            path.discard(key)
            size[key] = 1 + sum(size[id(k)] for k in kids)
            depth[key] = 1 + max((depth[id(k)] for k in kids), default=0)
            if size[key] > max_values:
                raise yaml.YAMLError(f"more than {max_values:,} values once its aliases are expanded")
            if depth[key] > max_depth:
                raise yaml.YAMLError(f"nested more than {max_depth} levels deep")
            continue
        if key in size:
            continue
        path.add(key)
        stack.append((node, True))
        for k in kids:
            if id(k) in path:
                raise yaml.YAMLError("an alias names a value that contains it")
            if id(k) not in size:
                stack.append((k, False))


def depth_exceeds(value: object, max_depth: int) -> bool:
    """True when lists/objects nest deeper than `max_depth` (iterative: safe on any depth)."""
    stack = [(value, 1)]
    while stack:
        v, d = stack.pop()
        children: Iterable[object]
        if isinstance(v, dict):
            children = v.values()
        elif isinstance(v, list):
            children = v
        else:
            continue
        if d > max_depth:
            return True
        stack.extend((c, d + 1) for c in children if isinstance(c, (dict, list)))
    return False


def scrub(value: Value) -> Value:
    """A copy of a JSON value with lone surrogates (not valid Unicode) replaced by U+FFFD, keys included."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    return value


def printable(text: str) -> str:
    """Text that any UTF-8 stream accepts: lone surrogates shown as `\\udXXX` escapes."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def encode_text(text: str) -> bytes:
    """UTF-8 bytes of text that may hold lone surrogates (escaped, never an exception)."""
    return text.encode("utf-8", "backslashreplace")


def kept_path(path: str) -> str:
    """A path as a record that outlives the command keeps it (a run's journal), so a command typed in another folder
    finds it: absolute, unless the absolute form is not UTF-8 text (a folder name that is not: kept as given)."""
    absolute = os.path.abspath(path)
    try:
        absolute.encode("utf-8")
    except UnicodeEncodeError:
        return path
    return absolute


def same_file(a: str | Path, b: str | Path) -> bool:
    """True when two paths name one existing file (through links, `..` and hard links)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _kind(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    return "a FIFO" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) \
        else "a socket" if stat.S_ISSOCK(mode) else "a folder" if stat.S_ISDIR(mode) else "not a regular file"


def output_target(path: str | Path, *, regular: bool = False) -> tuple[Path, os.stat_result | None]:
    """Where writing `path` lands and what is there now (None: nothing); FileProblem when it must not be written.

    A folder is refused; a symlink lands on its target only when that target is in the link's own folder (or
    below it) or is not a regular file (`/dev/stdout`); with `regular`, a FIFO, device or socket is refused.
    """
    target = Path(path)
    try:
        if os.path.islink(target):
            real = Path(os.path.realpath(target))
            st = os.stat(real) if os.path.lexists(real) else None
            home = Path(os.path.realpath(target.parent if str(target.parent) else "."))
            system = home.is_relative_to("/dev") or home.is_relative_to("/proc")  # /dev/stdout onto a file
            if (st is None or stat.S_ISREG(st.st_mode)) and not real.is_relative_to(home) and not system:
                raise FileProblem(f"cannot write {path}: it is a symlink to {real}, outside its folder {home} "
                                  "(outputs never follow a link out of their folder)", "a symlink out of its folder",
                                  codes.UNSAFE_OUTPUT)
            target = real  # write through the link: the link stays
        st = os.stat(target) if os.path.lexists(target) else None
    except (OSError, ValueError, RuntimeError) as exc:
        if isinstance(exc, FileProblem):
            raise
        raise FileProblem(f"cannot write {path}: {_why(exc)}", _why(exc)) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise FileProblem(f"cannot write {path}: it is a folder", "it is a folder")
    if regular and st is not None and not stat.S_ISREG(st.st_mode):
        raise FileProblem(f"cannot write {path}: it is {_kind(st.st_mode)}, not a regular file (this output is read "
                          "back, so it must be one)", f"it is {_kind(st.st_mode)}", codes.UNSAFE_OUTPUT)
    return target, st


def refuse_inputs(output: str | Path, inputs: Iterable[str | Path], *, flag: str = "-o") -> None:
    """FileProblem (SKM541) when `output` is one of `inputs`: an output never replaces what the command reads."""
    for source in inputs:
        if same_file(output, source):
            shown = f"{flag} {output}" if flag else str(output)
            raise FileProblem(f"{shown} is the input {source}; an output never replaces an input (nothing was "
                              "written)", "it is an input of the command", codes.OUTPUT_IS_INPUT)


def confined(text: str, folders: Iterable[str | Path], *, what: str = "path") -> Path:
    """The path `text` (read from a file; relative to the first folder) when it stays inside one of `folders`
    after resolving `..` and symlinks; FileProblem (SKM543) when it leads out."""
    roots = [Path(os.path.realpath(f)) for f in folders]
    if "\0" in text:
        raise FileProblem(f"the {what} {text!r} contains a NUL byte", "a NUL byte", codes.PATH_OUTSIDE_FOLDER)
    try:
        path = Path(os.path.realpath(roots[0] / text))
    except (OSError, ValueError, RuntimeError) as exc:
        raise FileProblem(f"the {what} {text!r} cannot be used: {_why(exc)}", _why(exc),
                          codes.PATH_OUTSIDE_FOLDER) from None
    if not any(path == r or path.is_relative_to(r) for r in roots):
        raise FileProblem(f"the {what} {text!r} leads to {path}, outside {', '.join(map(str, roots))}; paths read "
                          "from files stay in the folders given", "outside the folders given",
                          codes.PATH_OUTSIDE_FOLDER)
    return path


def module_files(name: str, search: Iterable[str | Path]) -> list[Path]:
    """The files a dotted module name (or a `.py` path) can be read from in `search`, without importing it."""
    if name.endswith(".py") or "/" in name:
        return [Path(name)]
    parts = name.split(".")
    found = []
    for folder in search:
        base = Path(folder, *parts)
        found += [p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()]
    return found


def write_output(path: str | Path, data: bytes | str, *, regular: bool = False) -> None:
    """Write a whole output file safely (see the module doc); FileProblem explains a failure."""
    if isinstance(data, str):
        data = encode_text(data)
    target, st = output_target(path, regular=regular)
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_into(path, target, st, data)
        return
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise FileProblem(f"cannot write {path}: {_why(exc)}", _why(exc)) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        # mkstemp makes 0600; an output keeps the mode of the file it replaces, or gets the ordinary one.
        os.chmod(tmp, (st.st_mode & 0o7777) if st is not None else 0o666 & ~_umask())
        os.replace(tmp, target)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise FileProblem(f"cannot write {path}: {_why(exc)}", _why(exc)) from None
    except BaseException:
        _unlink_quietly(tmp)
        raise


def _write_into(shown: str | Path, target: Path, st: os.stat_result, data: bytes) -> None:
    """Write into a device or FIFO (it is never replaced); a FIFO without a reader is an error, not a hang."""
    flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)
    if stat.S_ISFIFO(st.st_mode):
        flags |= os.O_NONBLOCK
    try:
        fd = os.open(target, flags)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise FileProblem(f"cannot write {shown}: it is a FIFO with no reader",
                              "it is a FIFO with no reader") from None
        raise FileProblem(f"cannot write {shown}: {_why(exc)}", _why(exc)) from None
    try:
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError as exc:
        raise FileProblem(f"cannot write {shown}: {_why(exc)}", _why(exc)) from None
    finally:
        os.close(fd)


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def create_private(path: str | Path) -> None:
    """Make `path` (created with its folder if missing) a file only its owner can read."""
    p = Path(path)
    if not p.parent.exists():
        p.parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    fd = os.open(p, os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o077 and st.st_uid == os.getuid():
            os.fchmod(fd, 0o600)  # a file made before journals were private becomes private too
    finally:
        os.close(fd)


def keep_conventions(original: bytes, text: str) -> str:
    """`text` (LF, no BOM) given the byte-order mark and CRLF line ends of the file it replaces."""
    if b"\r\n" in original and original.count(b"\r\n") * 2 >= original.count(b"\n"):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return ("\ufeff" + text) if original.startswith(b"\xef\xbb\xbf") else text
