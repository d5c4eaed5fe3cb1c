"""Task suites as files: a TOML suite naming a skill and/or machine, its tasks, verifiers and RFC requirements.

`load_suite(path)` gives a typed `Suite` or coded diagnostics (SKM700–SKM714) with
file:line:col — TOML syntax errors at the parser's position, every other finding at
the key it is about (located in the text, since `tomllib` keeps no positions), a JSONL
task at its line. Unknown keys get a "did you mean". Paths are relative to the suite
file's folder and must exist. The format is documented key by key in docs/bench.md.
`check_inputs(suite, machine)` checks the tasks' inputs against a loaded machine
(SKM715–SKM716), which `load_suite` does not load.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import tomllib
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import attrs

from skillc.bench import codes
from skillc.bench.effects import (
    CallPattern,
    FileRequirement,
    NoFileRequirement,
    NoToolRequirement,
    OrderRequirement,
    Requirement,
    ToolRequirement,
)
from skillc.bench.verify import DEFAULT_TIMEOUT, FileVerifier, PythonVerifier, ShellVerifier, Verifier
from skillc.diagnostics import Diagnostic, SourceFile, Span, has_errors, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.code import Code
from skillc.diagnostics.files import MAX_JSON_DEPTH, FileProblem, JSONProblem, depth_exceeds, loads, read_text
from skillc.diagnostics.flags import MAX_SECONDS
from skillc.ir import types as T
from skillc.runtime.values import check_value

if TYPE_CHECKING:
    from skillc.ir.machine import Machine, Variable

Key = tuple[str | int, ...]


@attrs.frozen
class Task:
    """One task: its inputs, an optional fixture folder copied into each cell's workdir, a horizon, a verifier,
    and the answers the user gives when the skill asks (`answers`, in order; none: a run that asks fails as
    "needs a user")."""

    id: str
    inputs: Mapping[str, object]
    verifier: Verifier
    workdir: Path | None = None
    horizon: int | None = None
    answers: tuple[str, ...] = ()
    #: The task's own RFC requirements (`[[task.require]]`), judged beside the suite's.
    requirements: tuple[Requirement, ...] = ()
    #: Where the task is written (its `id`), for diagnostics about it found later; not part of its value.
    span: Span | None = attrs.field(default=None, eq=False, repr=False)

    def inputs_for(self, workdir: Path, inputs: Mapping[str, object] | None = None) -> dict[str, object]:
        """The inputs of one cell (`inputs`: the task's bound for a machine, else its own): `${workdir}` in every
        string replaced by the cell's absolute workdir."""
        given = self.inputs if inputs is None else inputs
        return {name: _with_workdir(value, str(workdir.resolve())) for name, value in given.items()}


#: Written in an input string, the cell's absolute workdir (for a tool that needs an absolute path; the bench runs
#: tools in the workdir, so relative paths work too).
WORKDIR_PLACEHOLDER = "${workdir}"


def _with_workdir(value: object, workdir: str) -> object:
    """`value` with the workdir placeholder replaced in every string inside it."""
    if isinstance(value, str):
        return value.replace(WORKDIR_PLACEHOLDER, workdir)
    if isinstance(value, dict):
        return {k: _with_workdir(v, workdir) for k, v in value.items()}
    if isinstance(value, list):
        return [_with_workdir(v, workdir) for v in value]
    return value


@attrs.frozen
class Suite:
    """A loaded suite; every path in it is absolute."""

    path: Path
    name: str
    skill: Path | None
    machine: Path | None
    tasks: tuple[Task, ...]
    requirements: tuple[Requirement, ...] = ()
    failed_runs_comply: bool = False
    #: Python files whose public functions implement the machine's tools (as `skillc run --tools`).
    tools: tuple[Path, ...] = ()
    #: The step budget of every run, in every mode (None: the runtime's default).
    max_steps: int | None = None
    #: The suite's default inputs, already merged under each task's own (a task's value wins).
    inputs: Mapping[str, object] = attrs.field(factory=dict)
    #: `[inputs]`: a machine input's name → a template of task fields (`"{request}"`), bound per machine.
    bindings: Mapping[str, str] = attrs.field(factory=dict)
    #: Shell commands run in each cell's fresh work folder before the run and after it is scored.
    setup: str | None = None
    teardown: str | None = None
    #: Seconds `setup` and `teardown` may each take.
    setup_timeout: float = DEFAULT_TIMEOUT

    @property
    def folder(self) -> Path:
        """The folder the suite's relative paths are resolved against."""
        return self.path.parent


#: Files that mark a project's root folder: a suite inside a project may use the project's code and fixtures.
ROOT_MARKERS = ("pyproject.toml", "skillc.toml", ".git")


def suite_root(folder: Path) -> Path:
    """The folder a suite's code and fixtures must lie in: the nearest one at or above `folder` holding a
    project marker, else `folder` itself (resolved)."""
    folder = folder.resolve()
    for candidate in (folder, *folder.parents):
        if any((candidate / marker).exists() for marker in ROOT_MARKERS):
            return candidate
    return folder


@attrs.frozen
class SuiteResult:
    """A suite, or None when the file has errors; the diagnostics either way."""

    suite: Suite | None
    diagnostics: tuple[Diagnostic, ...]

    @property
    def ok(self) -> bool:
        """True when the suite loaded without errors."""
        return self.suite is not None


# ------------------------------------------------------------------ locating keys in the text


class Locator(Protocol):
    """Where a key path such as ("task", 2, "verify", "shell") is written."""

    def span(self, key: Key) -> Span:
        """The span of the key, or of the nearest enclosing thing that can be found."""
        ...


_HEADER = re.compile(r"^[ \t]*(\[\[?)[ \t]*([^\]\n]+?)[ \t]*\]\]?[ \t]*(?:#.*)?$", re.M)


def _key_regex(name: str) -> re.Pattern[str]:
    """A TOML key `name` followed by `=`, bare or quoted."""
    return re.compile(rf"(?<![\w-])([\"']?){re.escape(name)}\1[ \t]*=")


@attrs.frozen
class _Header:
    """A table header: its key path (array indices included) and where it and its section are."""

    key: Key
    start: int  # where the header's name begins
    end: int  # where its section begins (after the header line)
    name_len: int


class TomlLocator:
    """Finds keys in TOML text by its table headers and `key =` lines."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.headers = self._headers(source.text)
        #: header key → its index in `headers` (the last with that key), so `span` looks a key up in O(depth).
        self.index = {h.key: i for i, h in enumerate(self.headers)}

    @staticmethod
    def _headers(text: str) -> list[_Header]:
        """Every table header with its key path; arrays of tables get their running index."""
        counts: dict[str, int] = {}
        headers = []
        for m in _HEADER.finditer(text):
            names = [n.strip().strip("\"'") for n in m.group(2).split(".")]
            dotted = ".".join(names)
            if m.group(1) == "[[":
                counts[dotted] = counts.get(dotted, -1) + 1
            key: list[str | int] = []
            for i, name in enumerate(names):
                key.append(name)
                prefix = ".".join(names[: i + 1])
                if prefix in counts:  # an array of tables: `[task.verify]` belongs to the latest `[[task]]`
                    key.append(counts[prefix])
            newline = text.find("\n", m.end())
            headers.append(_Header(tuple(key), m.start(2), len(text) if newline < 0 else newline + 1,
                                   len(m.group(2))))
        return headers

    def span(self, key: Key) -> Span:
        """The key's span: its table's header, then each remaining key searched in order in that section."""
        text = self.source.text
        best, lo, hi = None, 0, len(text)
        for depth in range(len(key), 0, -1):  # the longest header key that is a prefix of `key`
            i = self.index.get(key[:depth])
            if i is not None:
                best, lo = self.headers[i], self.headers[i].end
                hi = self.headers[i + 1].start if i + 1 < len(self.headers) else len(text)
                break
        if best is None:
            hi = self.headers[0].start if self.headers else len(text)
        found = Span(self.source, best.start, best.start + best.name_len) if best else Span(self.source, 0, 0)
        for part in key[len(best.key) if best else 0:]:
            if isinstance(part, int):
                continue
            m = _key_regex(part).search(text, lo, hi)
            if m is None:
                break
            found = Span(self.source, m.start() + len(m.group(1)), m.start() + len(m.group(1)) + len(part))
            lo = m.end()
        return found


class JsonlLocator:
    """Finds a task's keys on its line of a JSONL file; `lines[i]` is the 1-based line of task i."""

    def __init__(self, source: SourceFile, lines: Sequence[int]) -> None:
        self.source = source
        self.lines = list(lines)

    def span(self, key: Key) -> Span:
        """The quoted key on the task's line, or the whole line."""
        index = key[1] if len(key) > 1 and isinstance(key[1], int) else 0
        line = self.lines[index] if index < len(self.lines) else 1
        start = self.source.line_starts[min(line, len(self.source.line_starts)) - 1]
        text = self.source.line_text(line)
        found = Span(self.source, start, start + len(text))
        pos = 0
        for part in key[2:]:
            if isinstance(part, int):
                continue
            at = text.find(f'"{part}"', pos)
            if at < 0:
                break
            found, pos = Span(self.source, start + at, start + at + len(part) + 2), at + 1
        return found


# ------------------------------------------------------------------ the key tables

_Type = type | tuple[type, ...]
_NUMBER: _Type = (int, float)
_STRINGS: _Type = (list,)  # an array of strings (a tuple, so it is a key of its own in _TYPE_NAMES)
_TOP: dict[str, _Type] = {"suite": dict, "verify": dict, "task": list, "require": list, "inputs": dict}

def _compile_problem(path: Path) -> str | None:
    """Why a tools module cannot be loaded, found by compiling it (its code is not run here); None when it compiles."""
    try:
        compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    except SyntaxError as exc:  # a ValueError (NUL bytes) or UnicodeDecodeError is a SyntaxError's sibling
        place = f" at line {exc.lineno}, column {exc.offset}" if exc.lineno else ""
        return f"does not compile: {exc.msg}{place}"
    except (ValueError, OSError) as exc:
        return f"cannot be read as Python: {exc}"
    return None


_SUITE: dict[str, _Type] = {"name": str, "skill": str, "machine": str, "tasks": str, "timeout": _NUMBER,
                            "failed_runs_comply": bool, "tools": _STRINGS, "max_steps": int, "inputs": dict,
                            "setup": str, "teardown": str, "setup_timeout": _NUMBER}
_TASK: dict[str, _Type] = {"id": str, "inputs": dict, "workdir": str, "horizon": int, "verify": dict,
                           "answers": _STRINGS, "require": list}
_TASK_FILE: dict[str, _Type] = {"task": list}
_VERIFY: dict[str, _Type] = {"python": str, "shell": str, "file": str, "equals": str, "matches": str,
                             "timeout": _NUMBER}
_REQUIRE: dict[str, _Type] = {"kind": str, "id": str, "quote": str, "path": str, "matches": str, "tool": str,
                              "argument": str, "first": dict, "then": dict, "inside": bool}
_PATTERN: dict[str, _Type] = {"tool": str, "argument": str, "matches": str}
#: Per requirement kind: (required keys, optional keys) besides `kind`, `id` and `quote`.
_KINDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "file": (frozenset({"path"}), frozenset({"matches"})),
    "no-file": (frozenset({"path"}), frozenset()),
    "tool": (frozenset({"tool"}), frozenset({"argument", "matches", "inside"})),
    "no-tool": (frozenset({"tool"}), frozenset({"argument", "matches", "inside"})),
    "order": (frozenset({"first", "then"}), frozenset()),
    "before": (frozenset({"first", "then"}), frozenset()),
}
_TYPE_NAMES: dict[_Type, str] = {str: "a string", dict: "a table", list: "an array of tables", int: "an integer",
                                 bool: "a Boolean", _NUMBER: "a number", _STRINGS: "an array of strings"}


def _has_type(value: object, expected: _Type) -> bool:
    """isinstance, except that a Boolean is not a number."""
    if expected is bool:
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    return isinstance(value, expected)


def _toml_type(value: object) -> str:
    """The TOML (or JSON) name of a value's type."""
    for kind, name in ((bool, "a Boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
                       (list, "an array"), (dict, "a table")):
        if isinstance(value, kind):
            return name
    return "a date or time"


def _non_json(value: object, key: Key) -> Key | None:
    """The key path of the first value inside `value` that JSON cannot hold (a TOML date or time), or None."""
    if isinstance(value, dict):
        return next((k for name, item in value.items() if (k := _non_json(item, key + (name,))) is not None), None)
    if isinstance(value, list):
        return next((k for i, item in enumerate(value) if (k := _non_json(item, key + (i,))) is not None), None)
    return None if isinstance(value, (str, int, float, bool)) or value is None else key


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    """" (did you mean `x`?)" for the closest choice, or nothing."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _what(key: Key) -> str:
    """A key path as the user wrote it: task[2].verify.shell (1-based indices)."""
    out = ""
    for part in key:
        out += f"[{part + 1}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


# ------------------------------------------------------------------ reading


class _Reader:
    """Validates the parsed TOML (or JSONL) of one suite, collecting diagnostics."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.diagnostics: list[Diagnostic] = []
        self.default_inputs: Mapping[str, object] = {}  # the suite's `inputs`, merged under every task's

    @functools.cached_property
    def root(self) -> Path:
        """The folder the suite's code and fixtures must lie in (looked up once: every task's fixture asks)."""
        return suite_root(self.folder)

    def report(self, code: Code, message: str, where: Locator, key: Key, hint: str | None = None) -> None:
        """Add a diagnostic at `key`."""
        self.diagnostics.append(make(code, message, where.span(key), hint=hint))

    def table(self, value: Mapping[str, object], spec: Mapping[str, _Type], where: Locator,
              key: Key) -> dict[str, object]:
        """The keys of `value` that the spec has and that have the right type; the others are reported."""
        kept: dict[str, object] = {}
        for name, item in value.items():
            if name not in spec:
                self.report(codes.UNKNOWN_SUITE_KEY, f"`{_what(key + (name,))}` is not a suite key"
                            f"{_did_you_mean(name, list(spec))}", where, key + (name,))
            elif not _has_type(item, spec[name]):
                self.report(codes.WRONG_KEY_TYPE, f"`{_what(key + (name,))}` must be {_TYPE_NAMES[spec[name]]}, "
                            f"not {_toml_type(item)}", where, key + (name,))
            else:
                kept[name] = item
        return kept

    def path(self, raw: str, where: Locator, key: Key, *, folder: bool = False, inside: bool = False) -> Path | None:
        """`raw` resolved against the suite folder; a missing file (or folder), or a symlink loop, is reported;
        with `inside`, so is a path outside the suite's root (code it runs, fixtures it copies)."""
        path = _resolved(self.folder / raw)
        if isinstance(path, Diagnostic):
            self.report(codes.MISSING_SUITE_PATH, f"`{_what(key)}`: {raw} is a symlink loop", where, key)
            return None
        if inside and not path.is_relative_to(self.root):
            self.report(codes.PATH_OUTSIDE_SUITE, f"`{_what(key)}`: {raw} resolves to {path}, outside the suite's "
                        f"root {self.root}", where, key)
            return None
        if path.is_dir() if folder else path.is_file():
            return path
        kind = "folder" if folder else "file"
        why = f"is not a {kind}" if path.exists() else "does not exist"
        self.report(codes.MISSING_SUITE_PATH, f"`{_what(key)}`: {raw} {why} (relative to {self.folder})", where, key)
        return None

    def pattern(self, raw: object, where: Locator, key: Key) -> str | None:
        """A regex that compiles, or None (reported)."""
        if raw is None:
            return None
        assert isinstance(raw, str)
        try:
            re.compile(raw)
        except re.error as exc:
            self.report(codes.INVALID_PATTERN, f"`{_what(key)}` is not a regular expression: {exc}", where, key)
            return None
        return raw

    def positive(self, raw: object, where: Locator, key: Key, *, integer: bool) -> float | None:
        """A number above 0 (an integer of at least 1 when `integer`), or None (reported)."""
        if raw is None:
            return None
        assert isinstance(raw, (int, float))
        # NaN compares false with everything, and a timer cannot be set past MAX_SECONDS (time_t overflows).
        if raw < 1 if integer else not 0 < raw <= MAX_SECONDS:
            need = "an integer of at least 1" if integer else \
                f"a number of seconds greater than 0, at most {MAX_SECONDS:g}"
            self.report(codes.VALUE_OUT_OF_RANGE, f"`{_what(key)}` is {raw}; it must be {need}", where, key)
            return None
        return raw

    # -- verifiers

    def verifier(self, raw: Mapping[str, object], where: Locator, key: Key, default_timeout: float) -> Verifier | None:
        """The one verifier a `verify` table describes."""
        table = self.table(raw, _VERIFY, where, key)
        kinds = [k for k in ("python", "shell", "file") if k in table]
        if len(kinds) != 1:
            found = ", ".join(f"`{k}`" for k in kinds) or "none"
            self.report(codes.INVALID_VERIFIER, f"`{_what(key)}` needs exactly one of `python`, `shell` and `file` "
                        f"(found {found})", where, key + (kinds[1],) if len(kinds) > 1 else key)
            return None
        kind = kinds[0]
        misplaced = [k for k in table if k not in {kind, *_VERIFIER_EXTRAS[kind]}]
        if misplaced:
            self.report(codes.INVALID_VERIFIER, f"`{misplaced[0]}` does not apply to a {kind} verifier", where,
                        key + (misplaced[0],))
            return None
        timeout = self.positive(table.get("timeout"), where, key + ("timeout",), integer=False)
        if kind == "python":
            return self.python_verifier(str(table["python"]), where, key + ("python",), timeout or default_timeout)
        if kind == "shell":
            return ShellVerifier(str(table["shell"]), timeout or default_timeout)
        return self.file_verifier(table, where, key)

    def python_verifier(self, target: str, where: Locator, key: Key, timeout: float) -> Verifier | None:
        """`module:function`, whose module is a file in the suite's folder."""
        module, _, function = target.partition(":")
        if not re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", module) or not function.isidentifier():
            self.report(codes.INVALID_VERIFIER, f"`{_what(key)}` is {target!r}; a Python verifier is "
                        "`module:function`", where, key, hint="write e.g. `verifiers:check_answer`")
            return None
        base = self.folder.joinpath(*module.split("."))
        if not (base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()):
            self.report(codes.MISSING_SUITE_PATH, f"`{_what(key)}`: the module {module} is not in {self.folder}",
                        where, key)
            return None
        return PythonVerifier(target, self.folder, timeout)

    def file_verifier(self, table: Mapping[str, object], where: Locator, key: Key) -> Verifier | None:
        """An expected file, exact or by pattern."""
        if "equals" in table and "matches" in table:
            self.report(codes.INVALID_VERIFIER, "a file verifier takes `equals` or `matches`, not both", where,
                        key + ("matches",))
            return None
        if not self.relative(str(table["file"]), where, key + ("file",)):
            return None
        matches = self.pattern(table.get("matches"), where, key + ("matches",))
        if "matches" in table and matches is None:
            return None
        equals = table.get("equals")
        return FileVerifier(str(table["file"]), equals if isinstance(equals, str) else None, matches)

    def relative(self, raw: str, where: Locator, key: Key) -> bool:
        """A path inside the workdir: relative and without `..`."""
        if Path(raw).is_absolute() or ".." in Path(raw).parts:
            self.report(codes.WRONG_KEY_TYPE, f"`{_what(key)}` is {raw!r}; paths in a cell's workdir are "
                        "relative and stay inside it (no `..`)", where, key)
            return False
        return True

    # -- requirements

    def requirement(self, raw: Mapping[str, object], where: Locator, key: Key) -> Requirement | None:
        """One `[[require]]` table."""
        table = self.table(raw, _REQUIRE, where, key)
        kind = table.get("kind")
        if not isinstance(kind, str):
            if "kind" not in raw:
                self.report(codes.MISSING_SUITE_KEY, f"`{_what(key)}` has no `kind`", where, key,
                            hint="kind is one of " + ", ".join(_KINDS))
            return None
        if kind not in _KINDS:
            self.report(codes.INVALID_REQUIREMENT, f"`{_what(key + ('kind',))}` is {kind!r}, not a requirement kind"
                        f"{_did_you_mean(kind, list(_KINDS))}", where, key + ("kind",),
                        hint="kind is one of " + ", ".join(_KINDS))
            return None
        required, optional = _KINDS[kind]
        extra = [k for k in table if k not in required | optional | {"kind", "id", "quote"}]
        for name in extra:
            self.report(codes.INVALID_REQUIREMENT, f"`{name}` does not apply to a `{kind}` requirement", where,
                        key + (name,))
        for name in sorted(required - set(raw)):
            self.report(codes.MISSING_SUITE_KEY, f"a `{kind}` requirement needs `{name}`", where, key)
        if extra or not required <= set(table):
            return None
        prefix = "task-require" if key[0] == "task" else "require"  # a task's never collide with the suite's
        rid = str(table.get("id", f"{prefix}-{key[-1] + 1 if isinstance(key[-1], int) else 1}"))
        return self.build_requirement(kind, rid, str(table.get("quote", "")), table, where, key)

    def build_requirement(self, kind: str, rid: str, quote: str, table: Mapping[str, object], where: Locator,
                          key: Key) -> Requirement | None:
        """The typed requirement of a validated table."""
        if kind in ("file", "no-file"):
            if not self.relative(str(table["path"]), where, key + ("path",)):
                return None
            if kind == "no-file":
                return NoFileRequirement(rid, str(table["path"]), quote)
            matches = self.pattern(table.get("matches"), where, key + ("matches",))
            if "matches" in table and matches is None:
                return None
            return FileRequirement(rid, str(table["path"]), matches, quote)
        if kind in ("order", "before"):  # `before`: conditional — met when no `then` call happens at all
            first = self.call_pattern(_as_table(table["first"]), where, key + ("first",))
            then = self.call_pattern(_as_table(table["then"]), where, key + ("then",))
            return OrderRequirement(rid, first, then, quote, then_required=kind == "order") \
                if first and then else None
        call = self.call_pattern(table, where, key, validate=False)
        if call is None:
            return None
        inside = table.get("inside") is True  # also the commands scripts run inside the calls (bench.inside)
        return ToolRequirement(rid, call, quote, inside) if kind == "tool" else \
            NoToolRequirement(rid, call, quote, inside)

    def call_pattern(self, raw: Mapping[str, object], where: Locator, key: Key,
                     validate: bool = True) -> CallPattern | None:
        """tool (+ argument, matches)."""
        table = self.table(raw, _PATTERN, where, key) if validate else dict(raw)
        if not isinstance(table.get("tool"), str):
            if validate and "tool" not in raw:
                self.report(codes.MISSING_SUITE_KEY, f"`{_what(key)}` needs `tool`", where, key)
            return None
        matches = self.pattern(table.get("matches"), where, key + ("matches",))
        if "matches" in table and matches is None:
            return None
        argument = table.get("argument")
        return CallPattern(str(table["tool"]), matches, argument if isinstance(argument, str) else None)

    # -- tasks

    def task(self, raw: Mapping[str, object], where: Locator, key: Key, default: Verifier | None,
             default_timeout: float) -> Task | None:
        """One task."""
        table = self.table(raw, _TASK, where, key)
        if "id" not in raw:
            self.report(codes.MISSING_SUITE_KEY, f"`{_what(key)}` has no `id`", where, key)
        verifier = default
        if "verify" in table:
            verifier = self.verifier(_as_table(table["verify"]), where, key + ("verify",), default_timeout)
        elif "verify" not in raw and default is None:
            self.report(codes.MISSING_SUITE_KEY, f"`{_what(key)}` has no verifier", where, key,
                        hint="add a `verify` table to the task, or a default `[verify]` to the suite")
        workdir = self.path(str(table["workdir"]), where, key + ("workdir",), folder=True, inside=True) \
            if "workdir" in table else None
        horizon = self.positive(table.get("horizon"), where, key + ("horizon",), integer=True)
        if not isinstance(table.get("id"), str) or verifier is None or ("workdir" in table and workdir is None) \
                or ("horizon" in table and horizon is None):
            return None
        inputs = table.get("inputs", {})
        assert isinstance(inputs, dict)
        if not self.json_inputs(inputs, where, key + ("inputs",)):
            return None
        answers = self.answers(table.get("answers", []), where, key + ("answers",))
        requirements = _requirements(_as_list(table.get("require")), self, where, key + ("require",))
        if answers is None or (len(requirements) != len(_as_list(table.get("require")))):
            return None
        return Task(str(table["id"]), {**self.default_inputs, **inputs}, verifier, workdir,
                    int(horizon) if horizon is not None else None, answers, tuple(requirements),
                    where.span(key + ("id",)))

    def answers(self, raw: object, where: Locator, key: Key) -> tuple[str, ...] | None:
        """A task's prepared answers: an array of strings, or None (reported)."""
        items = _as_list(raw)
        bad = next((i for i, item in enumerate(items) if not isinstance(item, str)), None)
        if bad is not None:
            self.report(codes.WRONG_KEY_TYPE, f"`{_what(key + (bad,))}` must be a string, not "
                        f"{_toml_type(items[bad])} (an answer is the text the user replies)", where, key)
            return None
        return tuple(str(item) for item in items)

    def json_inputs(self, inputs: Mapping[str, object], where: Locator, key: Key) -> bool:
        """True when every input value is a JSON value; a TOML date or time is reported."""
        bad = _non_json(inputs, key)
        if bad is not None:
            self.report(codes.WRONG_KEY_TYPE, f"`{_what(bad)}` is a date or time; inputs are JSON values (write it as "
                        "a string)", where, bad)
        return bad is None

    def tool_modules(self, raw: object, where: Locator) -> tuple[Path, ...]:
        """The `tools` files: strings naming existing `.py` files."""
        key: Key = ("suite", "tools")
        paths: list[Path] = []
        for i, item in enumerate(_as_list(raw)):
            if not isinstance(item, str):
                self.report(codes.WRONG_KEY_TYPE, f"`{_what(key + (i,))}` must be a string, not {_toml_type(item)}",
                            where, key)
                continue
            path = self.path(item, where, key + (i,), inside=True)
            if path is not None and path.suffix != ".py":
                self.report(codes.NOT_A_TOOL_MODULE, f"`{_what(key + (i,))}`: {item} is not a Python file", where,
                            key, hint="tools come from a Python file's public functions, e.g. `tools = [\"env.py\"]`")
            elif path is not None and (problem := _compile_problem(path)) is not None:
                self.report(codes.NOT_A_TOOL_MODULE, f"`{_what(key + (i,))}`: {item} {problem}", where, key,
                            hint="fix the module: every cell would fail to load its tools")
            elif path is not None:
                paths.append(path)
        return tuple(paths)

    def tasks(self, raws: Sequence[object], where: Locator, default: Verifier | None, default_timeout: float,
              seen: dict[str, str]) -> list[Task]:
        """Every task of a list whose id is not in `seen` (id → where it was first given), which grows."""
        tasks: list[Task] = []
        for i, raw in enumerate(raws):
            if not isinstance(raw, dict):
                self.report(codes.WRONG_KEY_TYPE, f"`{_what(('task', i))}` must be a table", where, ("task", i))
                continue
            task = self.task(raw, where, ("task", i), default, default_timeout)
            if task is None:
                continue
            if task.id in seen:
                self.report(codes.DUPLICATE_TASK_ID, f"task id {task.id!r} is also the id of {seen[task.id]}",
                            where, ("task", i, "id"))
                continue
            seen[task.id] = f"task {i + 1} of {Path(where.span(()).path).name}"
            tasks.append(task)
        return tasks


_VERIFIER_EXTRAS = {"python": ("timeout",), "shell": ("timeout",), "file": ("equals", "matches")}


def _parse_toml(source: SourceFile) -> dict[str, object] | Diagnostic:
    """The TOML document, or an SKM700 at the parser's position (or, nested too deeply, at its start)."""

    deep = make(codes.INVALID_SUITE_SYNTAX, f"arrays or tables nested more than {MAX_JSON_DEPTH} levels deep",
                Span(source, 0, 0), hint="a suite's values are shallow: inputs, verifiers, requirements")
    try:
        doc: dict[str, object] = tomllib.loads(source.text)
    except RecursionError:
        return deep
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
    else:
        return deep if depth_exceeds(doc, MAX_JSON_DEPTH) else doc
    m = re.search(r"\(at line (\d+), column (\d+)\)", message)
    if m:
        line, col = int(m.group(1)), int(m.group(2))
        offset = source.line_starts[min(line, len(source.line_starts)) - 1] + col - 1
    else:  # "(at end of document)"
        offset = len(source.text)
    text = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
    return make(codes.INVALID_SUITE_SYNTAX, f"invalid TOML: {text}", Span(source, offset, offset))


def _read_source(path: Path) -> SourceFile | Diagnostic:
    """The file's text as a source, or an SKM901."""
    try:
        return SourceFile.from_text(str(path), read_text(path, what="suite file"))
    except FileProblem as exc:
        return make(diagnostics_codes.IO_ERROR, str(exc))


def _jsonl_tasks(source: SourceFile, reader: _Reader) -> tuple[list[object], JsonlLocator]:
    """The task objects of a JSONL file (bad lines reported with their line) and a locator for them."""
    raws: list[object] = []
    lines: list[int] = []
    for number, line in enumerate(source.text.split("\n"), start=1):
        if not line.strip():
            continue
        where = JsonlLocator(source, [number])
        try:
            value = loads(line)
        except JSONProblem as exc:
            reader.report(codes.INVALID_TASK_LINE, f"line {number} is {exc}", where, ("task", 0))
            continue
        if not isinstance(value, dict):
            reader.report(codes.INVALID_TASK_LINE, f"line {number} is a JSON {type(value).__name__}, not an "
                          "object", where, ("task", 0))
            continue
        if (bad := _surrogate(value)) is not None:
            reader.report(codes.INVALID_TASK_LINE, f"line {number} holds {bad}, a lone surrogate escape: JSON "
                          "text that is not Unicode text", where, ("task", 0),
                          hint="write the character itself, or a surrogate pair for one outside the BMP")
            continue
        raws.append(value)
        lines.append(number)
    return raws, JsonlLocator(source, lines)


def _surrogate(value: object) -> str | None:
    """The first lone surrogate in any string (key or value) inside a JSON value, escaped; None when there is none."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, list):
            stack += item
        elif isinstance(item, str) and (m := re.search("[\ud800-\udfff]", item)) is not None:
            return m.group(0).encode("utf-8", "backslashreplace").decode("ascii")
    return None


def _task_file(path: Path, reader: _Reader) -> tuple[list[object], Locator | None]:
    """The raw tasks of a `tasks = "…"` file (JSONL, or TOML with `[[task]]` tables)."""
    source = _read_source(path)
    if isinstance(source, Diagnostic):
        reader.diagnostics.append(source)
        return [], None
    if path.suffix == ".jsonl":
        return _jsonl_tasks(source, reader)
    doc = _parse_toml(source)
    if isinstance(doc, Diagnostic):
        reader.diagnostics.append(doc)
        return [], None
    where = TomlLocator(source)
    return _as_list(reader.table(doc, _TASK_FILE, where, ()).get("task")), where


def _resolved(path: Path) -> Path | Diagnostic:
    """The path with its symlinks followed, or an SKM901 saying it is a symlink loop."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as exc:  # Python 3.11 raises RuntimeError for a loop
        return make(diagnostics_codes.IO_ERROR, f"cannot read {path}: it is a symlink loop"
                    if "loop" in str(exc).lower() else f"cannot read {path}: {exc}")


def load_suite(path: str | Path) -> SuiteResult:
    """Read and check a suite file; paths in it are resolved against its folder."""
    suite_path = _resolved(Path(path))
    if isinstance(suite_path, Diagnostic):
        return SuiteResult(None, (suite_path,))
    source = _read_source(suite_path)
    if isinstance(source, Diagnostic):
        return SuiteResult(None, (source,))
    doc = _parse_toml(source)
    if isinstance(doc, Diagnostic):
        return SuiteResult(None, (doc,))
    reader = _Reader(suite_path.parent)
    suite = _build(suite_path, doc, reader, TomlLocator(source))
    diagnostics = tuple(sorted(reader.diagnostics, key=Diagnostic.sort_key))
    return SuiteResult(None if has_errors(diagnostics) else suite, diagnostics)


def _as_table(value: object) -> Mapping[str, object]:
    """`value` if it is a table, else an empty one (its type was reported already)."""
    return value if isinstance(value, dict) else {}


def _as_list(value: object) -> list[object]:
    """`value` if it is an array, else an empty one (its type was reported already)."""
    return value if isinstance(value, list) else []


def _build(suite_path: Path, doc: Mapping[str, object], reader: _Reader, where: TomlLocator) -> Suite:
    """The suite of a parsed document (only used when no error was reported)."""
    top = reader.table(doc, _TOP, where, ())
    raw_head = _as_table(top.get("suite"))
    head = reader.table(raw_head, _SUITE, where, ("suite",))
    skill = reader.path(str(head["skill"]), where, ("suite", "skill")) if "skill" in head else None
    machine = reader.path(str(head["machine"]), where, ("suite", "machine")) if "machine" in head else None
    if "skill" not in raw_head and "machine" not in raw_head:
        reader.report(codes.NO_SUITE_SUBJECT, "the suite names neither `skill` nor `machine`", where, ("suite",))
    timeout = reader.positive(head.get("timeout"), where, ("suite", "timeout"), integer=False) or DEFAULT_TIMEOUT
    tools = reader.tool_modules(head.get("tools"), where)
    max_steps = reader.positive(head.get("max_steps"), where, ("suite", "max_steps"), integer=True)
    defaults = _as_table(head.get("inputs"))
    if reader.json_inputs(defaults, where, ("suite", "inputs")):
        reader.default_inputs = defaults
    default = reader.verifier(_as_table(top["verify"]), where, ("verify",), timeout) if "verify" in top else None
    tasks = _all_tasks(top, head, reader, where, default, timeout)
    requirements = _requirements(_as_list(top.get("require")), reader, where)
    _shared_requirement_ids(tasks, requirements, reader)
    if not tasks and not has_errors(reader.diagnostics):
        reader.report(codes.NO_TASKS, "the suite has no tasks", where, ("suite",))
    setup_timeout = reader.positive(head.get("setup_timeout"), where, ("suite", "setup_timeout"), integer=False)
    return Suite(suite_path, str(head.get("name", suite_path.stem)), skill, machine, tuple(tasks),
                 tuple(requirements), bool(head.get("failed_runs_comply", False)), tools,
                 int(max_steps) if max_steps is not None else None, reader.default_inputs,
                 _bindings(_as_table(top.get("inputs")), reader, where),
                 _command(head.get("setup")), _command(head.get("teardown")), setup_timeout or DEFAULT_TIMEOUT)


def _command(value: object) -> str | None:
    """A setup or teardown command; None for none (or only blanks)."""
    return value if isinstance(value, str) and value.strip() else None


_FIELD = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")


def template_fields(template: str) -> list[str]:
    """The task fields a binding's template names (`{request}` → request); `{{` and `}}` are literal braces."""
    return [m.group(1) for m in _FIELD.finditer(template) if m.group(1) is not None]


def _bindings(raw: Mapping[str, object], reader: _Reader, where: TomlLocator) -> dict[str, str]:
    """`[inputs]`: machine input → template of task fields (strings whose fields are plain names)."""
    out: dict[str, str] = {}
    for name, value in raw.items():
        key: Key = ("inputs", name)
        if not isinstance(value, str):
            reader.report(codes.WRONG_KEY_TYPE, f"`{_what(key)}` must be a string (a template such as "
                          f"\"{{request}}\"), not {_toml_type(value)}", where, key)
        elif bad := [f for f in template_fields(value) if not f.isidentifier()]:
            reader.report(codes.INVALID_BINDING, f"`{_what(key)}`: {{{bad[0]}}} is not a task field name", where,
                          key, hint="a field is a task input's name, or `id`; write {{ and }} for literal braces")
        else:
            out[name] = value
    return out


def _shared_requirement_ids(tasks: Sequence[Task], suite: Sequence[Requirement], reader: _Reader) -> None:
    """A task requirement whose id is also a suite requirement's is reported (verdicts are named by id)."""
    ids = {r.id for r in suite}
    for task in tasks:
        for requirement in task.requirements:
            if requirement.id in ids and task.span is not None:
                reader.diagnostics.append(make(codes.DUPLICATE_REQUIREMENT_ID, f"task {task.id!r}: requirement id "
                                               f"{requirement.id!r} is also a suite requirement's", task.span))


def _requirements(raws: Sequence[object], reader: _Reader, where: Locator,
                  key: Key = ("require",)) -> list[Requirement]:
    """The `[[require]]` tables (a suite's, or a task's at `key`), with ids unique."""
    out: list[Requirement] = []
    ids: set[str] = set()
    for i, raw in enumerate(raws):
        if not isinstance(raw, dict):
            reader.report(codes.WRONG_KEY_TYPE, f"`{_what(key + (i,))}` must be a table", where, key + (i,))
            continue
        requirement = reader.requirement(raw, where, key + (i,))
        if requirement is None:
            continue
        if requirement.id in ids:
            reader.report(codes.DUPLICATE_REQUIREMENT_ID, f"requirement id {requirement.id!r} is used twice", where,
                          key + (i, "id"))
            continue
        ids.add(requirement.id)
        out.append(requirement)
    return out


def _all_tasks(top: Mapping[str, object], head: Mapping[str, object], reader: _Reader, where: TomlLocator,
               default: Verifier | None, timeout: float) -> list[Task]:
    """The inline `[[task]]` tables, then those of the `tasks` file."""
    seen: dict[str, str] = {}
    tasks = reader.tasks(_as_list(top.get("task")), where, default, timeout, seen)
    file = reader.path(str(head["tasks"]), where, ("suite", "tasks")) if "tasks" in head else None
    if file is not None:
        raws, file_where = _task_file(file, reader)
        if file_where is not None:
            tasks += reader.tasks(raws, file_where, default, timeout, seen)
    return tasks


# ------------------------------------------------------------------ tasks against the machine


class BindingProblem(ValueError):
    """A binding's template names a field the task does not have."""


def _field(task: Task, name: str) -> object:
    """A task field a template names: one of its inputs, else its id."""
    if name in task.inputs:
        return task.inputs[name]
    if name == "id":
        return task.id
    raise BindingProblem(f"task {task.id!r} has no field `{name}`")


def _render(template: str, task: Task) -> object:
    """A template filled from the task: only `{field}`: the field's value as it is; else text with each filled."""
    fields = template_fields(template)
    if len(fields) == 1 and template == "{" + fields[0] + "}":
        return _field(task, fields[0])

    def fill(m: re.Match[str]) -> str:
        if m.group(1) is None:
            return m.group(0)[0]
        value = _field(task, m.group(1))
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)

    return _FIELD.sub(fill, template)


def bound_inputs(task: Task, bindings: Mapping[str, str], declared: Collection[str]) -> dict[str, object]:
    """The task's inputs for a machine declaring `declared`: each binding of a declared input the task does not
    give itself filled in, and the task fields some binding names that the machine does not declare left out
    (BindingProblem when a binding names a field the task lacks)."""
    bound = {name: _render(t, task) for name, t in bindings.items() if name in declared and name not in task.inputs}
    consumed = {f for t in bindings.values() for f in template_fields(t)}  # fields meant for binding
    kept = {k: v for k, v in task.inputs.items() if k in declared or k not in consumed}
    return {**kept, **bound}


def check_inputs(suite: Suite, machine: Machine) -> tuple[Diagnostic, ...]:
    """Every task's inputs (bound by the suite's `[inputs]`) against the machine's: unknown names (SKM715),
    missing or ill-typed values (SKM716), a binding naming a field a task lacks (SKM740), required inputs no task
    gives (SKM741, once for the machine).

    `load_suite` does not load the machine; whoever does (the bench runner) calls this before any cell runs,
    so a task that could never start is reported once, at its line, instead of failing in every cell.
    """

    declared = {v.name: v for v in machine.variables.values() if v.is_input}
    found: list[Diagnostic] = []
    bound: list[tuple[Task, dict[str, object]]] = []
    for task in suite.tasks:
        try:
            bound.append((task, bound_inputs(task, suite.bindings, declared)))
        except BindingProblem as exc:
            found.append(make(codes.INVALID_BINDING, f"{exc}, which the suite's `[inputs]` names", task.span,
                              hint="give the field in every task, or bind the input differently"))
    required = [n for n, v in declared.items() if v.init is None and not isinstance(v.type, T.OptionalT)]
    unbound = [n for n in required if not any(n in given for _, given in bound)]
    if unbound and bound:
        found.append(make(codes.UNBOUND_MACHINE_INPUT, f"`{machine.name}` ({machine.path}) needs "
                          f"{', '.join(f'`{n}`' for n in unbound)}, which no task gives and no `[inputs]` binding "
                          "fills", bound[0][0].span, hint="bind each in the suite's `[inputs]`, e.g. "
                          f"`{unbound[0]} = \"{{request}}\"`"))
    for task, given in bound:
        found += _input_problems(attrs.evolve(task, inputs=given), declared, machine.name, skip=set(unbound))
    return tuple(found)


def _input_problems(task: Task, declared: Mapping[str, Variable], machine: str,
                    skip: Collection[str] = ()) -> list[Diagnostic]:
    """One task's inputs against the declared ones."""

    found = [make(codes.UNKNOWN_TASK_INPUT, f"task {task.id!r}: `{name}` is not an input of `{machine}`"
                  f"{_did_you_mean(name, list(declared))}", task.span,
                  hint="the machine's inputs are " + (", ".join(declared) or "none"))
             for name in task.inputs if name not in declared]
    for name, var in declared.items():
        if name in task.inputs:
            found += [make(codes.INVALID_TASK_INPUT, f"task {task.id!r}: {problem}", task.span)
                      for problem in check_value(task.inputs[name], var.type, f"input `{name}`")]
        elif var.init is None and not isinstance(var.type, T.OptionalT) and name not in skip:
            found.append(make(codes.INVALID_TASK_INPUT, f"task {task.id!r} gives no `{name}` ({T.show(var.type)}), "
                              f"a required input of `{machine}`", task.span))
    return found
