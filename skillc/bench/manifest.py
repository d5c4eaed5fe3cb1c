"""`bench.json`: what the rows in a bench's output folder were made with, so a resumed bench never mixes others in.

A resumed bench runs only the cells without a row, so every row it keeps must have been
made and scored the way the new ones will be. `bench.json` records the machine's hash,
the skill document's hash, the limits, and a fingerprint of everything else scoring
depends on: suite-wide (the requirements, the tools modules' content, `failed_runs_comply`)
and per task (its inputs, its verifier with the content of a Python verifier's module and
of the files a shell verifier names by absolute path, its fixture folder's content, its
horizon, its prepared answers). (A requirement's `quote` is left out: it is the report's words, not what is judged.)
`keep_manifest` refuses a bench whose machine, document or limits differ (SKM737)
or whose suite-wide part, or a task that already has rows, changed (SKM738, naming each task
and what changed, at the task's line); a task without rows may change freely (it has nothing
to mix). A `bench.json` written before fingerprints existed is a warning (SKM739): its rows
cannot be compared with the suite, and the current fingerprints are recorded from then on.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import shlex
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

import attrs

from skillc.bench import codes
from skillc.bench.effects import Requirement
from skillc.bench.suite import Suite, Task
from skillc.bench.verify import PythonVerifier, ShellVerifier
from skillc.diagnostics import Diagnostic, Label, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.files import FileProblem, JSONProblem, loads, read_text, write_output

#: The file in OUT that says what the rows there were made with.
MANIFEST = "bench.json"
#: 1: machine, document, limits; 2: and the suite's and each task's fingerprint.
VERSION = 2
#: The keys compared as a whole (SKM737), in the order a message names them.
_CORE = ("machine_hash", "skill_hash", "limits")
#: How a fingerprint's parts are named in messages.
_SHOWN = {"workdir": "fixture folder", "failed_runs_comply": "failed_runs_comply", "imports": "verifier's imports"}
#: Task parts that bench.json files written before them lack: absent from a record, they are not compared (the
#: rows were made before the part was recorded; a change to the verifier's own file is still caught).
_RECORDED_LATER = frozenset({"imports"})


@attrs.frozen
class Manifest:
    """What a bench's rows depend on beyond their cell; `suite` and `tasks` map each part to its digest."""

    machine_hash: str
    skill_hash: str | None
    limits: Mapping[str, object]
    suite: Mapping[str, str]
    tasks: Mapping[str, Mapping[str, str]]

    def to_json(self) -> dict[str, object]:
        """The manifest as bench.json's object."""
        return {"v": VERSION, "machine_hash": self.machine_hash, "skill_hash": self.skill_hash,
                "limits": dict(self.limits), "suite": dict(self.suite),
                "tasks": {k: dict(v) for k, v in self.tasks.items()}}


def manifest_of(suite: Suite, machine_hash: str, skill_hash: str | None, limits: Mapping[str, object]) -> Manifest:
    """The manifest of a bench of `suite` on the checked machine with these limits."""
    return Manifest(machine_hash, skill_hash, dict(limits), suite_fingerprint(suite),
                    {t.id: task_fingerprint(t) for t in suite.tasks})


# ---------------------------------------------------------------- fingerprints

def suite_fingerprint(suite: Suite) -> dict[str, str]:
    """The digests of what scores every task alike: the requirements, the tools' content, failed_runs_comply."""
    tools = {_relative(p, suite.folder): _file_digest(p) for p in suite.tools}
    parts = {"requirements": _digest([_judged(r) for r in suite.requirements]), "tools": _digest(tools),
             "failed_runs_comply": _digest(suite.failed_runs_comply)}
    # Only when given: a suite without them keeps the fingerprint it had before they existed.
    if suite.bindings:
        parts["bindings"] = _digest(dict(suite.bindings))
    if suite.setup is not None or suite.teardown is not None:
        parts["setup"] = _digest([suite.setup, suite.teardown, suite.setup_timeout])
    return parts


def _judged(requirement: Requirement) -> object:
    """A requirement as plain data without its quote (the skill's words for the report, not what is judged)."""
    plain = _plain(requirement)
    # `inside` only when set: a requirement without it keeps the fingerprint it had before it existed
    return {k: v for k, v in plain.items() if k != "quote" and not (k == "inside" and v is False)} \
        if isinstance(plain, dict) else plain


def task_fingerprint(task: Task) -> dict[str, str]:
    """The digests of what one task's cells are run and scored with."""
    parts = {"inputs": _digest(_plain(task.inputs)), "verifier": _digest(_verifier_plain(task)),
             "horizon": _digest(task.horizon)}
    if task.answers:  # only when given: a task without answers keeps the fingerprint it had before they existed
        parts["answers"] = _digest(list(task.answers))
    if task.requirements:  # likewise
        parts["requirements"] = _digest([_judged(r) for r in task.requirements])
    if task.workdir is not None:
        parts["workdir"] = _tree_digest(task.workdir)
    if isinstance(task.verifier, PythonVerifier) and (imports := _local_imports(task.verifier)):
        parts["imports"] = _digest(imports)
    return parts


def _verifier_plain(task: Task) -> object:
    """The verifier as plain data, with the content of the code it runs (not where the suite folder is)."""
    verifier = task.verifier
    if isinstance(verifier, PythonVerifier):
        return {"python": verifier.target, "timeout": verifier.timeout,
                "module": _file_digest(_verifier_file(verifier))}
    plain = _plain(verifier)
    if isinstance(verifier, ShellVerifier):
        return {"shell": plain, "files": {w: _file_digest(Path(w)) for w in _named_files(verifier.command)}}
    return plain


def _verifier_file(verifier: PythonVerifier) -> Path:
    """The file a Python verifier's module is loaded from, as verify loads it."""
    base = verifier.folder.joinpath(*verifier.target.partition(":")[0].split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def _local_imports(verifier: PythonVerifier) -> dict[str, str]:
    """The digest of every module of the suite's folder the verifier imports, directly or through another one.

    Found by reading `import` statements (not by running anything): a module loaded another way (importlib, a
    path put on sys.path at run time) is not seen.
    """
    start = _verifier_file(verifier)
    found: dict[str, str] = {}
    todo = [start]
    while todo:
        current = todo.pop()
        for target in _imported_files(current, verifier.folder):
            key = _relative(target, verifier.folder)
            if target != start and key not in found:
                found[key] = _file_digest(target)
                todo.append(target)
    return found


def _imported_files(path: Path, folder: Path) -> Iterator[Path]:
    """The files of `folder` that the module at `path` imports (a relative import from its own folder)."""
    try:
        tree = ast.parse(path.read_bytes(), str(path))
    except (SyntaxError, ValueError, OSError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [(folder, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level > len(path.parents):
                continue  # above the file system's root: the import fails when it runs
            base = path.parents[node.level - 1] if node.level else folder
            module = [node.module] if node.module else []
            names = [(base, ".".join(module + [a.name])) for a in node.names] + [(base, m) for m in module]
        else:
            continue
        for base, dotted in names:
            yield from _module_files(base, dotted, folder)


def _module_files(base: Path, dotted: str, folder: Path) -> Iterator[Path]:
    """The files `import dotted` loads from `base`: each package's `__init__.py` on the way, then the module."""
    parts = dotted.split(".")
    for i in range(1, len(parts) + 1):
        stem = base.joinpath(*parts[:i])
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file() and candidate.resolve().is_relative_to(folder.resolve()):
                yield candidate
                break


def _named_files(command: str) -> list[str]:
    """The files a shell command names by absolute path (a relative one is in the workdir: the fixture's)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return sorted({w for w in words if os.path.isabs(w) and os.path.isfile(w)})


def _plain(value: object) -> object:
    """Records, mappings, sequences and paths as JSON data (a record with its type's name)."""
    kind = type(value)
    if attrs.has(kind):
        fields = {f.name: _plain(getattr(value, f.name)) for f in attrs.fields(kind)}
        return {"type": kind.__name__, **fields}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def _digest(value: object) -> str:
    """A content digest of JSON data."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _file_digest(path: Path) -> str:
    """A file's content digest ("missing" when it cannot be read: a change once it can)."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError:
        return "missing"


def _tree_digest(folder: Path) -> str:
    """A folder's content digest: every entry's relative path, a file's content digest, a symlink's target."""
    entries: list[list[str]] = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(root) / name
            relative = path.relative_to(folder).as_posix()
            if path.is_symlink():
                entries.append([relative, "link", os.readlink(path)])
            elif path.is_file():
                entries.append([relative, "file", _file_digest(path)])
            else:
                entries.append([relative, "folder"])
    return _digest(entries)


def _relative(path: Path, folder: Path) -> str:
    """A path as the suite names it (relative to its folder when inside it)."""
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return str(path)


# ---------------------------------------------------------------- resumption

def keep_manifest(out: Path, manifest: Manifest, suite: Suite, ran: Collection[str]) -> list[Diagnostic]:
    """Compare with OUT's bench.json when OUT has rows (`ran`: the tasks with rows); record the manifest.

    An error (SKM737, SKM738) refuses the bench and leaves bench.json as it was; a warning (SKM739) does not.
    """

    path = out / MANIFEST
    earlier = _read(path) if ran else None
    tasks: dict[str, Mapping[str, str]] = dict(manifest.tasks)
    notes: list[Diagnostic] = []
    if ran:
        refused = _core_change(out, manifest, earlier)
        if refused is not None:
            return [refused]
        recorded = (earlier or {}).get("tasks")
        recorded_suite = (earlier or {}).get("suite")
        if not isinstance(recorded, dict) or not isinstance(recorded_suite, dict):
            notes.append(_unrecorded(path))
        else:
            changed = [d for d in (_suite_change(out, manifest, recorded_suite),
                                   _task_change(out, suite, recorded, ran)) if d is not None]
            if changed:
                return changed
            tasks = {**recorded, **tasks}  # rows of tasks the suite dropped stay in the file: so do their digests
    try:
        write_output(path, json.dumps(attrs.evolve(manifest, tasks=tasks).to_json(), indent=2) + "\n")
    except (FileProblem, OSError) as exc:
        return [make(diagnostics_codes.IO_ERROR, f"cannot write {path}: {exc}")]
    return notes


def _read(path: Path) -> dict[str, object] | None:
    """bench.json's object, or None when it is missing or not a JSON object."""

    if not path.is_file():
        return None
    try:
        found = loads(read_text(path, what="bench manifest"))
    except (FileProblem, JSONProblem):
        return None
    return found if isinstance(found, dict) else None


def _core_change(out: Path, manifest: Manifest, earlier: dict[str, object] | None) -> Diagnostic | None:
    """SKM737 when the machine, the document or the limits differ from the rows' (or nothing says what they were)."""
    if earlier is None and not (out / MANIFEST).exists():
        return None  # rows from before bench.json existed: the suite part's warning covers them
    if earlier is None:
        return make(codes.CHANGED_BENCH, f"{out / MANIFEST} cannot be read (not a JSON object), so the rows in {out} "
                                         f"cannot be checked against this bench")
    now = manifest.to_json()
    changed = [k.removesuffix("_hash") for k in _CORE if earlier.get(k) != now[k]]
    if not changed:
        return None
    return make(codes.CHANGED_BENCH, f"{out} holds rows made with another {', '.join(changed)}; resuming "
                                     f"would mix them with these")


def _suite_change(out: Path, manifest: Manifest, recorded: Mapping[str, object]) -> Diagnostic | None:
    """SKM738 when something that scores every task changed since the rows were made."""
    changed = [_SHOWN.get(k, k) for k, v in manifest.suite.items() if recorded.get(k) != v]
    if not changed:
        return None
    return make(codes.CHANGED_SUITE, f"the suite's {', '.join(changed)} changed since the rows in {out} were "
                                     f"scored; resuming would mix rows scored the old way with new ones")


def _task_change(out: Path, suite: Suite, recorded: Mapping[str, object], ran: Collection[str]) -> Diagnostic | None:
    """SKM738 naming every task with rows whose fingerprint changed, and what changed, at the first one's line."""
    changes: list[tuple[Task, list[str]]] = []
    for task in suite.tasks:
        before = recorded.get(task.id)
        if task.id not in ran or not isinstance(before, dict):
            continue  # no rows to mix with (or none recorded: an older bench.json's gap)
        parts = task_fingerprint(task)
        changed = [_SHOWN.get(k, k) for k in sorted(parts.keys() | before.keys())
                   if parts.get(k) != before.get(k) and (k in before or k not in _RECORDED_LATER)]
        if changed:
            changes.append((task, changed))
    if not changes:
        return None
    named = "; ".join(f"{t.id} ({', '.join(c)})" for t, c in changes)
    spans = [(t, c) for t, c in changes if t.span is not None]
    first = spans[0][0].span if spans else None
    labels = [Label(t.span, f"{', '.join(c)} changed") for t, c in spans[1:] if t.span is not None]
    count = f"{len(changes)} task{'s' if len(changes) > 1 else ''}"
    return make(codes.CHANGED_SUITE, f"{out} holds rows of {count} that changed since they ran: {named}; "
                                     f"resuming would mix rows scored under the old tasks with new ones",
                first, label=f"{', '.join(spans[0][1])} changed" if spans else "", secondary=labels)


def _unrecorded(path: Path) -> Diagnostic:
    """SKM739: the rows' bench.json says nothing about the suite (an older skillc wrote it)."""
    return make(codes.UNRECORDED_SUITE, f"{path} does not record the suite's tasks, verifiers and requirements "
                                        f"(it is missing, or an older skillc wrote it): the rows already there cannot "
                                        f"be checked against them; they are recorded from now on")
