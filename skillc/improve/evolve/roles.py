"""The roles of the search as Protocols, and scripted implementations that replay recorded JSON replies.

The version runner (`VersionRunner`) runs a version on the task and returns its cached output with the binary \
reward (the
only thing the search learns from the hidden verifier); reflection reads a failed version and the
evidence and answers with hypothesis operations and ranked children; the self-verifier (Protocol in
cases.py) turns a hypothesis into test cases. The scripted roles read one JSON file:

    {"reflect": {NODE NAME: [ROUND REPLY, …]},            round reply: {"operations": […], "children": […]}
     "verify":  {HYPOTHESIS ID: [[CASE, …], …]},          one list of cases per generation/repair round
     "execute": {NODE NAME: {"reward": 0|1, "files": {PATH: TEXT}}}}

A child is {"name", "rank", "machine"} (or "machine_file", relative to the script's folder, and
optionally "skill"), or {"name", "rank", "patch": {"machine": [EDIT, …]} | {"skill": [{"find", "replace"}, …]}}
on its parent's version (an edit {"op", "state", "text", "target", "index", "name", "max", "assigns", "find"}:
patch.py's EDIT_OPS and EDIT_FIELDS); an operation {"op": "add"|"refine"|"refute", "id", "description",
"prediction", "new_id"};
a case {"id", "kind": "python"|"shell", "source", "strength": "hard"|"semantic"}.
A node or hypothesis the script has no (more) replies for gets an empty reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.files import FileProblem, JSONProblem, loads, read_text
from skillc.improve.edits import EDIT_FIELDS, EDIT_OPS, Edit, Patch, SkillEdit
from skillc.improve.evolve import codes
from skillc.improve.evolve.cases import Draft, Proposal, VerifyRequest
from skillc.improve.evolve.state import Child, Knowledge, Node, Operation, Output, PatchTree


@attrs.frozen
class ReflectRequest:
    """What reflection sees: the node to improve (it has run), the tree, the knowledge, and which round it is."""

    node: Node
    tree: PatchTree
    knowledge: Knowledge
    round: int
    must_emit_patch: bool


@attrs.frozen
class Reflection:
    """Reflection's answer: operations on the hypothesis store and ranked children (possibly none)."""

    operations: tuple[Operation, ...] = ()
    children: tuple[Child, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()  # e.g. SKM845: a model's reply could not be used


class Reflector(Protocol):
    """The role that diagnoses a failed version and proposes patched versions."""

    def reflect(self, request: ReflectRequest) -> Reflection:
        """Hypothesis operations and ranked children for the request's node."""
        ...


class VersionRunner(Protocol):
    """The role that runs one version on the task in a fresh sandbox (not a model executor of skillc.runtime)."""

    def execute(self, node: Node) -> Output:
        """The node's cached output and binary reward; RoleError when it cannot run at all."""
        ...


class RoleError(Exception):
    """A role could not answer (a script without the entry, a runner that failed); the search stops on it."""


# ---------------------------------------------------------------- the script file


class ShapeError(ValueError):
    """A script field or a model reply of the wrong shape; the message names the field."""


@attrs.frozen
class Script:
    """A scripted role file, checked: replies per node name and per hypothesis id, executions per node name."""

    reflect: Mapping[str, tuple[Reflection, ...]]
    verify: Mapping[str, tuple[tuple[Draft, ...], ...]]
    execute: Mapping[str, tuple[int, tuple[tuple[str, str], ...]]]


def load_script(path: Path) -> Script | Diagnostic:
    """The script at `path`, or SKM841 saying what is wrong with it (nothing is half-read)."""
    try:
        data = loads(read_text(path, what="role script"))
        return _script(data, path.parent)
    except (FileProblem, JSONProblem, ShapeError) as exc:
        return make(codes.INVALID_ROLE_SCRIPT, f"{path}: {exc}")


def _script(data: object, folder: Path) -> Script:
    """A script from its decoded JSON."""
    top = _obj(data, "the script")
    unknown = sorted(set(top) - {"reflect", "verify", "execute"})
    if unknown:
        raise ShapeError(f"unknown key `{unknown[0]}` (the keys are reflect, verify, execute)")
    reflect = {name: tuple(_reflection(r, folder, f"reflect.{name}[{i}]")
                           for i, r in enumerate(_list(v, f"reflect.{name}")))
               for name, v in _obj(top.get("reflect", {}), "reflect").items()}
    verify = {h: tuple(tuple(_draft(c, f"verify.{h}[{i}]") for c in _list(r, f"verify.{h}[{i}]"))
                       for i, r in enumerate(_list(v, f"verify.{h}")))
              for h, v in _obj(top.get("verify", {}), "verify").items()}
    execute = {name: _execution(v, f"execute.{name}") for name, v in _obj(top.get("execute", {}), "execute").items()}
    return Script(reflect, verify, execute)


def _obj(value: object, where: str) -> dict[str, object]:
    """`value` as a JSON object."""
    if not isinstance(value, dict):
        raise ShapeError(f"{where} must be an object, not {type(value).__name__}")
    return value


def _list(value: object, where: str) -> list[object]:
    """`value` as a JSON array."""
    if not isinstance(value, list):
        raise ShapeError(f"{where} must be a list, not {type(value).__name__}")
    return value


def _text(obj: Mapping[str, object], key: str, where: str, default: str | None = None) -> str:
    """A string field (required unless it has a default)."""
    value = obj.get(key, default)
    if not isinstance(value, str):
        raise ShapeError(f"{where}.{key} must be a string")
    return value


def reflection_from_json(value: object, where: str = "the reply") -> Reflection:
    """A model's reflection reply (no `machine_file`: a model names no files to read); ShapeError otherwise."""
    return _reflection(value, None, where)


def drafts_from_json(value: object, where: str = "the reply") -> tuple[Draft, ...]:
    """A model's self-verifier reply, an object with `cases`; ShapeError otherwise."""
    cases = _list(_obj(value, where).get("cases"), f"{where}.cases")
    return tuple(_draft(c, f"{where}.cases[{i}]") for i, c in enumerate(cases))


def _reflection(value: object, folder: Path | None, where: str) -> Reflection:
    """One round reply."""
    obj = _obj(value, where)
    ops = tuple(_operation(o, f"{where}.operations[{i}]") for i, o in enumerate(_list(obj.get("operations", []),
                                                                                     f"{where}.operations")))
    children = tuple(_child(c, folder, f"{where}.children[{i}]")
                     for i, c in enumerate(_list(obj.get("children", []), f"{where}.children")))
    return Reflection(ops, children)


def _operation(value: object, where: str) -> Operation:
    """One hypothesis operation."""
    obj = _obj(value, where)
    op = _text(obj, "op", where)
    if op not in ("add", "refine", "refute"):
        raise ShapeError(f"{where}.op must be add, refine or refute, not {op!r}")
    new_id = obj.get("new_id")
    if new_id is not None and not isinstance(new_id, str):
        raise ShapeError(f"{where}.new_id must be a string")
    return Operation(op, _text(obj, "id", where), _text(obj, "description", where, ""),  # type: ignore[arg-type]
                     _text(obj, "prediction", where, ""), new_id)


def _child(value: object, folder: Path | None, where: str) -> Child:
    """One proposed child; `machine_file` is read relative to the script's folder (never from a model's reply)."""
    obj = _obj(value, where)
    rank = obj.get("rank", 1)
    if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
        raise ShapeError(f"{where}.rank must be an integer of at least 1")
    if "machine_file" in obj and folder is None:
        raise ShapeError(f"{where}: give the machine text as `machine`")
    skill = obj.get("skill")
    if skill is not None and not isinstance(skill, str):
        raise ShapeError(f"{where}.skill must be a string")
    if "patch" in obj:
        if "machine" in obj or "machine_file" in obj or skill is not None:
            raise ShapeError(f"{where}: a child is a `patch` or a whole `machine`, not both")
        return Child("", rank, _text(obj, "name", where, ""), None, _patch(obj["patch"], f"{where}.patch"))
    if "machine_file" in obj and folder is not None:
        try:
            machine = read_text(folder / _text(obj, "machine_file", where), what="machine")
        except FileProblem as exc:
            raise ShapeError(f"{where}.machine_file: {exc}") from None
    else:
        machine = _text(obj, "machine", where)
    return Child(machine, rank, _text(obj, "name", where, ""), skill)


def _patch(value: object, where: str) -> Patch:
    """A child's patch: `machine` edits or `skill` (SKILL.md find/replace) edits."""
    obj = _obj(value, where)
    unknown = sorted(set(obj) - {"machine", "skill"})
    if unknown or not obj:
        extra = f", not `{unknown[0]}`" if unknown else ""
        raise ShapeError(f"{where} holds `machine` edits or `skill` edits{extra}")
    edits = tuple(_edit(e, f"{where}.machine[{i}]") for i, e in enumerate(_list(obj.get("machine", []),
                                                                                f"{where}.machine")))
    skill = tuple(_skill_edit(_obj(e, f"{where}.skill[{i}]"), f"{where}.skill[{i}]")
                  for i, e in enumerate(_list(obj.get("skill", []), f"{where}.skill")))
    return Patch(edits, skill)


def _skill_edit(obj: Mapping[str, object], where: str) -> SkillEdit:
    """One SKILL.md edit: `find` and `replace`."""
    return SkillEdit(_text(obj, "find", where), _text(obj, "replace", where))


def _edit(value: object, where: str) -> Edit:
    """One machine edit: `op` and the fields of EDIT_FIELDS, each of its JSON type."""
    obj = _obj(value, where)
    op = _text(obj, "op", where)
    if op not in EDIT_OPS:
        raise ShapeError(f"{where}.op must be one of {', '.join(EDIT_OPS)}, not {op!r}")
    kinds = dict(EDIT_FIELDS)
    unknown = sorted(set(obj) - {"op"} - set(kinds))
    if unknown:
        raise ShapeError(f"{where}: unknown key `{unknown[0]}`")
    numbers: dict[str, Any] = {k: obj.get(k) for k, kind in EDIT_FIELDS if kind == "integer"}
    if any(v is not None and (not isinstance(v, int) or isinstance(v, bool)) for v in numbers.values()):
        raise ShapeError(f"{where}: {' and '.join(numbers)} are integers")
    fields: dict[str, Any] = {k: _text(obj, k, where, "") for k, kind in EDIT_FIELDS if kind == "string"}
    return attrs.evolve(Edit(op), **fields, **numbers)


def _draft(value: object, where: str) -> Draft:
    """One case draft."""
    obj = _obj(value, where)
    kind, strength = _text(obj, "kind", where), _text(obj, "strength", where)
    if kind not in ("python", "shell") or strength not in ("hard", "semantic"):
        raise ShapeError(f"{where}: kind is python or shell and strength is hard or semantic")
    return Draft(_text(obj, "id", where), kind, _text(obj, "source", where), strength,  # type: ignore[arg-type]
                 _text(obj, "description", where, ""))


def _execution(value: object, where: str) -> tuple[int, tuple[tuple[str, str], ...]]:
    """One recorded execution: the reward and the files it leaves in the workdir."""
    obj = _obj(value, where)
    reward = obj.get("reward")
    if reward not in (0, 1) or isinstance(reward, bool) or not isinstance(reward, (int, float)):
        raise ShapeError(f"{where}.reward must be 0 or 1")
    found = _obj(obj.get("files", {}), f"{where}.files")
    files = {p: v for p, v in found.items() if isinstance(v, str)}
    if len(files) != len(found):
        raise ShapeError(f"{where}.files maps paths to text")
    escaping = [p for p in files if Path(p).is_absolute() or ".." in Path(p).parts]
    if escaping:
        raise ShapeError(f"{where}.files: {escaping[0]!r} is not a path inside the work folder")
    return int(reward), tuple(sorted(files.items()))


# ---------------------------------------------------------------- the scripted roles


@attrs.define
class ScriptedReflector:
    """Reflection replaying the script: the reply for the node's name in this round (empty when there is none)."""

    script: Script

    def reflect(self, request: ReflectRequest) -> Reflection:
        """The recorded reply."""
        replies = self.script.reflect.get(request.node.name, ())
        return replies[request.round - 1] if request.round <= len(replies) else Reflection()


@attrs.define
class ScriptedVerifier:
    """A self-verifier replaying the script: the cases for the hypothesis in this round (none when there are none)."""

    script: Script

    def propose(self, request: VerifyRequest) -> Proposal:
        """The recorded cases."""
        rounds = self.script.verify.get(request.hypothesis.id, ())
        return Proposal(rounds[request.round - 1] if request.round <= len(rounds) else ())


@attrs.define
class ScriptedRunner:
    """A version runner replaying the script: the node's files written to a fresh work folder under `out`."""

    script: Script
    out: Path

    def execute(self, node: Node) -> Output:
        """The recorded reward, with the recorded files as the cached output; RoleError for an unknown node."""
        if node.name not in self.script.execute:
            raise RoleError(f"the script records no execution of {node.name!r}")
        reward, files = self.script.execute[node.name]
        folder = self.out / "nodes" / str(node.id)
        workdir = folder / "work"
        workdir.mkdir(parents=True, exist_ok=False)
        for relative, text in files:
            target = workdir / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        trace = folder / "trace.jsonl"
        trace.write_text("", encoding="utf-8")
        return Output(workdir, trace, reward)
