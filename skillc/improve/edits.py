"""The one machine-edit language of improvement: a `Patch` of typed `Edit`s, applied purely to the parsed `.skm`
syntax tree (skillc.syntax) and printed with the project printer, so comments and layout survive.

Evolve's roles (scripted or model) write patches; refine's proposer writes the edits it makes as one too.
The operations: states and terminals — `add_state` (a state, terminal or fallback block, after the state
`state` or after the last state), `remove_state`, `set_prompt`, `set_outcome` and `set_requires` (a
terminal's). Edges (the edge at `index` of `state`): `add_edge` (guard `text`, "" for the default edge, to
`target` with `assigns` such as `tries += 1`, at `index` or before the default edge), `remove_edge`,
`retarget`, `set_guard`, `set_assigns`, `add_assigns`. A state's lines: `add_read`/`remove_read`,
`add_write`/`remove_write` (`name`, bound to the tool result `text`), `set_call` (a tool state's call) and
`set_arg` (one argument). Machine-level: `set_counter` (`name` with `max`, added when absent), `set_type` (a
variable's type, e.g. a judge's verdict enum), `add_statement` (a statement such as a `var` or a `rule`, before
the first block; `add_state` and `add_statement` at the machine-level position `index` when one is given, as
refine's proposer places its declarations, states and terminals), `remove_statement` and `replace_statement` \
(the one statement whose source is `find`, e.g. a
rule), `start`.

A `Patch` holds machine edits, or `SkillEdit`s of a SKILL.md (find/replace, applied and built by evolve:
skillc.improve.evolve.patch), never both. `apply_edits(module, edits)` is the pure tree rewrite;
`edit_text(text, edits)` parses, applies and prints; both raise PatchError naming the edit that does not apply.
`EDIT_OPS` and `EDIT_FIELDS` are the edit's public shape (role scripts, the model schema); `patch_json` writes a
patch in the role-script form and `patch_lines` as one short line per edit (the report).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import Literal, TypeVar, cast

import attrs

from skillc.syntax import nodes as n
from skillc.syntax.parser import parse
from skillc.syntax.printer import print_module

EditOp = Literal["add_state", "remove_state", "set_prompt", "add_edge", "remove_edge", "retarget", "set_guard",
                 "set_assigns", "add_assigns", "add_read", "remove_read", "add_write", "remove_write", "set_call",
                 "set_arg", "set_outcome", "set_requires", "set_counter", "set_type", "add_statement",
                 "remove_statement", "replace_statement", "start"]
EDIT_OPS: tuple[EditOp, ...] = ("add_state", "remove_state", "set_prompt", "add_edge", "remove_edge", "retarget",
                                "set_guard", "set_assigns", "add_assigns", "add_read", "remove_read", "add_write",
                                "remove_write", "set_call", "set_arg", "set_outcome", "set_requires", "set_counter",
                                "set_type", "add_statement", "remove_statement", "replace_statement", "start")
#: Every `Edit` field but `op` (a string, one of EDIT_OPS) with its JSON type: the role-script and model schema shape.
EDIT_FIELDS: tuple[tuple[str, str], ...] = (("state", "string"), ("text", "string"), ("target", "string"),
                                            ("index", "integer"), ("name", "string"), ("max", "integer"),
                                            ("assigns", "string"), ("find", "string"))


class PatchError(ValueError):
    """A patch that does not apply to its parent's version; the message names the edit."""


@attrs.frozen
class Edit:
    """One typed machine edit; which fields matter depends on `op` (see the module docstring)."""

    op: EditOp
    state: str = ""
    text: str = ""  # a prompt, a guard expression, or the source of a block or statement
    target: str = ""
    index: int | None = None
    name: str = ""
    max: int | None = None
    assigns: str = ""  # an edge's assignments, e.g. "tries += 1" (a cycle must pay a counter)
    find: str = ""  # the source of the machine-level statement to remove or replace (e.g. a rule)


@attrs.frozen
class SkillEdit:
    """Replace the one occurrence of `find` in SKILL.md by `replace`."""

    find: str
    replace: str


@attrs.frozen
class Patch:
    """A revision relative to the parent: machine edits, or SKILL.md edits followed by a build (not both)."""

    machine: tuple[Edit, ...] = ()
    skill: tuple[SkillEdit, ...] = ()


def patch_json(patch: Patch) -> dict[str, object]:
    """The patch in the role-script form (roles.py): `{"machine": [EDIT, …]}` or `{"skill": [{"find", "replace"}]}`."""
    if patch.skill:
        return {"skill": [{"find": e.find, "replace": e.replace} for e in patch.skill]}
    return {"machine": [edit_json(e) for e in patch.machine]}


def edit_json(edit: Edit) -> dict[str, object]:
    """One machine edit as a role-script object: `op` and every field that differs from its default."""
    fields = attrs.fields_dict(Edit)
    return {"op": edit.op, **{name: getattr(edit, name) for name, _ in EDIT_FIELDS
                              if getattr(edit, name) != fields[name].default}}


def patch_lines(patch: Patch, width: int = 60) -> tuple[str, ...]:
    """One short line per edit (`set_prompt state="a" text="…"`), each value cut to `width` characters."""
    def short(value: object) -> str:
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= width else text[:width - 2] + "…\""
    if patch.skill:
        return tuple(f"skill find={short(e.find)} replace={short(e.replace)}" for e in patch.skill)
    return tuple(" ".join([e.op] + [f"{k}={short(v)}" for k, v in edit_json(e).items() if k != "op"])
                 for e in patch.machine)


def edit_text(text: str, edits: Sequence[Edit], what: str = "the parent machine") -> str:
    """The machine text with the edits applied in order and printed; PatchError when one does not apply."""
    refuse_nul("edit", [attrs.asdict(e) for e in edits])
    return print_module(apply_edits(_parse(text, what), edits))


def apply_edits(module: n.Module, edits: Sequence[Edit], machine: str | None = None) -> n.Module:
    """The module with the edits applied in order (a pure rewrite of the syntax tree) to its machine, or to the
    machine named `machine` of a module that holds several."""
    for i, edit in enumerate(edits):
        module = _apply(module, edit, i, machine)
    return module


def refuse_nul(kind: str, edits: Sequence[dict[str, object]]) -> None:
    """PatchError for a NUL byte anywhere in the edits' fields: no machine, SKILL.md, path or command may hold one."""
    for i, fields in enumerate(edits):
        for name, value in fields.items():
            if isinstance(value, str) and "\0" in value:
                raise PatchError(f"{kind} {i}: `{name}` holds a NUL byte (U+0000), which no machine, "
                                 "SKILL.md, file name or command may hold")


# ---------------------------------------------------------------- the syntax tree edits


def _parse(text: str, what: str) -> n.Module:
    """A parsed module; PatchError when it does not parse."""
    module, problems = parse(text, f"<{what}>")
    if module is None:
        first = problems[0].message if problems else "it does not parse"
        raise PatchError(f"{what} does not parse ({first})")
    return module


def _snippet(source: str, what: str) -> tuple[n.Stmt, ...]:
    """The statements of a machine-level snippet (a block or statement), parsed inside a scratch machine."""
    module = _parse(f"machine _patch {{\n{source}\n}}\n", what)
    machine = module.items[-1]
    if not isinstance(machine, n.Machine) or not machine.items:
        raise PatchError(f"{what} holds no statement")
    return machine.items


def _guard(text: str, where: str) -> n.Expr | None:
    """A guard expression ("" is the default edge's None)."""
    return _edge_source(text, "_patch", "", where).guard


def _edge_source(guard: str, target: str, assigns: str, where: str) -> n.Edge:
    """An edge parsed from its parts: guard ("" for a default edge), target and assignments."""
    head = f"when {guard} " if guard.strip() else ""
    tail = f" {{ {assigns} }}" if assigns.strip() else ""
    source = f"{head}-> {target}{tail}"
    state = _snippet(f"model _patch {{\n  {source}\n}}", f"{where}: the edge `{source}`")[0]
    edge = state.items[0] if isinstance(state, n.State) and state.items else None
    if not isinstance(edge, n.Edge):
        raise PatchError(f"{where}: `{source}` is not an edge")
    return edge


def machine_of(module: n.Module, name: str | None = None) -> tuple[int, n.Machine]:
    """The module's machine (the one named `name`, when given) and its position."""
    found = [(i, item) for i, item in enumerate(module.items)
             if isinstance(item, n.Machine) and (name is None or item.name == name)]
    if len(found) != 1:
        raise PatchError("the parent module must hold exactly one machine" if name is None
                         else f"the module holds no machine `{name}`")
    return found[0]


def _named(item: n.Stmt) -> str | None:
    """A block's state name (states, terminals), else None."""
    return item.name if isinstance(item, (n.State, n.Terminal)) else None


def _position(items: Sequence[n.Stmt], state: str, where: str) -> int:
    """The position of the state named `state`."""
    for i, item in enumerate(items):
        if _named(item) == state:
            return i
    raise PatchError(f"{where}: no state `{state}`")


def _edges_of(state: n.State, edit: Edit, where: str) -> tuple[list[int], int]:
    """The positions of the state's edges among its items, and the edit's edge position (checked)."""
    edges = [i for i, it in enumerate(state.items) if isinstance(it, n.Edge)]
    if edit.index is None or not 0 <= edit.index < len(edges):
        raise PatchError(f"{where}: `{state.name}` has no edge {edit.index} (it has {len(edges)})")
    return edges, edges[edit.index]


_B = TypeVar("_B", n.State, n.Terminal)


def _with_block(items: tuple[n.Stmt, ...], edit: Edit, where: str, cls: type[_B],
                change: Callable[[_B], _B]) -> tuple[n.Stmt, ...]:
    """The items with the block `edit.state` (a state or a terminal, as `cls` says) changed."""
    i = _position(items, edit.state, where)
    block = items[i]
    if not isinstance(block, cls):
        raise PatchError(f"{where}: `{edit.state}` is " + ("a terminal, not a state" if cls is n.State
                                                          else "a state, not a terminal"))
    return items[:i] + (change(block),) + items[i + 1:]


def _with_state(items: tuple[n.Stmt, ...], edit: Edit, where: str,
                change: Callable[[n.State], n.State]) -> tuple[n.Stmt, ...]:
    """The items with the state `edit.state` changed."""
    return _with_block(items, edit, where, n.State, change)


def _apply(module: n.Module, edit: Edit, index: int, name: str | None = None) -> n.Module:
    """The module with one edit applied (to the machine `name`, or to its one machine)."""
    where = f"edit {index} ({edit.op})"
    at, machine = machine_of(module, name)
    items = _EDITS[edit.op](machine.items, edit, where)
    return attrs.evolve(module, items=module.items[:at] + (attrs.evolve(machine, items=items),) + module.items[at + 1:])


def _add_state(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    new = _snippet(edit.text, f"{where}: the block")
    if not all(isinstance(s, (n.State, n.Terminal, n.Fallback)) for s in new):
        raise PatchError(f"{where}: the source must be state, terminal or fallback blocks")
    taken = {_named(s) for s in items} - {None}
    clash = next((name for name in map(_named, new) if name in taken), None)
    if clash is not None:
        raise PatchError(f"{where}: a state `{clash}` exists already")
    states = [i for i, it in enumerate(items) if isinstance(it, n.State)]
    at = _position(items, edit.state, where) + 1 if edit.state else _at(items, edit, where) if edit.index is not None \
        else (states[-1] + 1 if states else len(items))
    return items[:at] + new + items[at:]


def _at(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> int:
    """The machine-level position `edit.index` (0: before the first statement), checked."""
    if edit.index is None or not 0 <= edit.index <= len(items):
        raise PatchError(f"{where}: the machine has {len(items)} statements; no position {edit.index}")
    return edit.index


def _remove_state(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    i = _position(items, edit.state, where)
    return items[:i] + items[i + 1:]


def _set_prompt(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    def change(state: n.State) -> n.State:
        prompts = [i for i, it in enumerate(state.items) if isinstance(it, n.Prompt)]
        if not prompts:
            raise PatchError(f"{where}: `{state.name}` has no prompt")
        i = prompts[0]
        return attrs.evolve(state, items=state.items[:i] + (n.Prompt(edit.text),) + state.items[i + 1:])
    return _with_state(items, edit, where, change)


def _add_edge(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.target:
        raise PatchError(f"{where}: an edge needs a `target`")
    new = _edge_source(edit.text, edit.target, edit.assigns, where)

    def change(state: n.State) -> n.State:
        edges = [i for i, it in enumerate(state.items) if isinstance(it, n.Edge)]
        default = next((i for i in edges if cast(n.Edge, state.items[i]).guard is None), None)
        if edit.index is not None:
            if not 0 <= edit.index <= len(edges):
                raise PatchError(f"{where}: `{state.name}` has {len(edges)} edges; no position {edit.index}")
            at = edges[edit.index] if edit.index < len(edges) else (edges[-1] + 1 if edges else len(state.items))
        else:
            at = default if default is not None else len(state.items)
        return attrs.evolve(state, items=state.items[:at] + (new,) + state.items[at:])
    return _with_state(items, edit, where, change)


def _edge_edit(items: tuple[n.Stmt, ...], edit: Edit, where: str,
               change_edge: Callable[[n.Edge], n.Edge | None]) -> tuple[n.Stmt, ...]:
    """The items with the edge `edit.index` of `edit.state` replaced (or removed, for None)."""
    def change(state: n.State) -> n.State:
        _, i = _edges_of(state, edit, where)
        new = change_edge(cast(n.Edge, state.items[i]))
        return attrs.evolve(state, items=state.items[:i] + ((new,) if new is not None else ()) + state.items[i + 1:])
    return _with_state(items, edit, where, change)


def _remove_edge(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    return _edge_edit(items, edit, where, lambda e: None)


def _retarget(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.target:
        raise PatchError(f"{where}: give the new `target`")
    return _edge_edit(items, edit, where, lambda e: attrs.evolve(e, target=edit.target))


def _set_guard(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    guard = _guard(edit.text, where)
    return _edge_edit(items, edit, where, lambda e: attrs.evolve(e, guard=guard))


def _first_block(items: tuple[n.Stmt, ...]) -> int:
    """Where machine-level statements go: before the first block (or at the end)."""
    return next((i for i, it in enumerate(items) if isinstance(it, n.Block)), len(items))


def _set_counter(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.name or edit.max is None or edit.max < 1:
        raise PatchError(f"{where}: a counter needs a `name` and a `max` of at least 1")
    for i, item in enumerate(items):
        if isinstance(item, n.CounterDecl) and item.name == edit.name:
            return items[:i] + (attrs.evolve(item, max=edit.max),) + items[i + 1:]
    at = _first_block(items)
    return items[:at] + (n.CounterDecl(edit.name, edit.max),) + items[at:]


def _add_statement(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    new = _snippet(edit.text, f"{where}: the statement")
    if any(isinstance(s, n.Block) for s in new):
        raise PatchError(f"{where}: use add_state for blocks")
    at = _at(items, edit, where) if edit.index is not None else _first_block(items)
    return items[:at] + new + items[at:]


def _start(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.target:
        raise PatchError(f"{where}: give the new start `target`")
    for i, item in enumerate(items):
        if isinstance(item, n.Start):
            return items[:i] + (attrs.evolve(item, target=edit.target),) + items[i + 1:]
    raise PatchError(f"{where}: the machine has no `start`")


# ---------------------------------------------------------------- edges' assignments, state items, terminals


def _assigns(text: str, where: str) -> tuple[n.Assign, ...]:
    """Edge assignments parsed from their source ("tries += 1, done = true")."""
    return _edge_source("", "_patch", text, where).assigns


def _set_assigns(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    assigns = _assigns(edit.assigns, where)
    return _edge_edit(items, edit, where, lambda e: attrs.evolve(e, assigns=assigns))


def _add_assigns(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.assigns.strip():
        raise PatchError(f"{where}: give the `assigns` to add, e.g. `tries += 1`")
    assigns = _assigns(edit.assigns, where)
    return _edge_edit(items, edit, where, lambda e: attrs.evolve(e, assigns=e.assigns + assigns))


_I = TypeVar("_I", bound=n.Stmt)
_S = TypeVar("_S", bound=n.Stmt)


def _item(source: str, kind: str, cls: type[_I], where: str) -> _I:
    """One state or terminal item parsed inside a scratch block of that kind."""
    block = "terminal _patch: success {" if kind == "terminal" else f"{kind} _patch {{"
    parsed = _snippet(f"{block}\n  {source}\n}}", f"{where}: `{source}`")
    body = parsed[0].body if len(parsed) == 1 and isinstance(parsed[0], n.Block) else ()
    if len(body) != 1 or not isinstance(body[0], cls):
        raise PatchError(f"{where}: `{source}` is not one {cls.__name__.lower()} line")
    return body[0]


_ORDER: tuple[type[n.Stmt], ...] = (n.Doc, n.Reads, n.Prompt, n.Call, n.Writes, n.Requires, n.From)
"""The canonical order of a block's lines: a new one goes after the last line that comes before it."""


def _put(body: tuple[_S, ...], cls: type[n.Stmt], new: _S | None) -> tuple[_S, ...]:
    """The block body with its `cls` line replaced by `new` (added in canonical order when absent; None drops it)."""
    at = next((i for i, it in enumerate(body) if isinstance(it, cls)), None)
    if at is not None:
        old = body[at]
        kept = () if new is None else (attrs.evolve(new, leading=old.leading, trailing=old.trailing),)
        return body[:at] + kept + body[at + 1:]
    if new is None:
        return body
    rank = _ORDER.index(cls)
    before = [i for i, it in enumerate(body) if type(it) in _ORDER[:rank]]
    at = before[-1] + 1 if before else 0
    return body[:at] + (new,) + body[at:]


def _line(state: n.State | n.Terminal, cls: type[_I]) -> _I | None:
    """The block's `cls` line, if any."""
    return next((it for it in state.items if isinstance(it, cls)), None)


def _var_of(entry: str | n.WriteItem) -> str:
    """The variable of a `reads` name or a `writes` item."""
    return entry if isinstance(entry, str) else entry.var


def _with_line(items: tuple[n.Stmt, ...], edit: Edit, where: str, *, add: bool, writes: bool) -> tuple[n.Stmt, ...]:
    """The state `edit.state` with `edit.name` added to (bound to the tool result `text` in a `writes`) or removed
    from its `reads` or `writes` line; the line is added when absent and dropped with its last name."""
    if not edit.name:
        raise PatchError(f"{where}: give the variable's `name`")
    verb = "writes" if writes else "reads"
    cls: type[n.Reads] | type[n.Writes] = n.Writes if writes else n.Reads

    def change(state: n.State) -> n.State:
        line = _line(state, cls)
        current: tuple[str | n.WriteItem, ...] = () if line is None else (
            line.items if isinstance(line, n.Writes) else line.names)
        if add == any(_var_of(e) == edit.name for e in current):
            raise PatchError(f"{where}: `{state.name}` " + (f"{verb} `{edit.name}` already" if add
                                                           else f"does not {verb[:-1]} `{edit.name}`"))
        if add:
            source = edit.name + (f" = {edit.text}" if writes and edit.text.strip() else "")
            parsed = _item(f"{verb} {source}", "tool", cls, where)
            added = parsed.items if isinstance(parsed, n.Writes) else parsed.names
            if [_var_of(e) for e in added] != [edit.name]:
                raise PatchError(f"{where}: `{source}` is not one variable" + (" (and its result)" if writes else ""))
            rest = current + added
        else:
            rest = tuple(e for e in current if _var_of(e) != edit.name)
        new = None if not rest else (n.Writes(tuple(e for e in rest if isinstance(e, n.WriteItem))) if writes
                                     else n.Reads(tuple(e for e in rest if isinstance(e, str))))
        return attrs.evolve(state, items=_put(state.items, cls, new))
    return _with_state(items, edit, where, change)


def _with_tool_state(items: tuple[n.Stmt, ...], edit: Edit, where: str,
                     change: Callable[[n.State, n.Call | None], n.Call]) -> tuple[n.Stmt, ...]:
    """The tool state `edit.state` with its call replaced by `change(state, current call)`."""
    def outer(state: n.State) -> n.State:
        if state.kind != "tool":
            raise PatchError(f"{where}: `{state.name}` is a {state.kind} state; only a tool state has a call")
        return attrs.evolve(state, items=_put(state.items, n.Call, change(state, _line(state, n.Call))))
    return _with_state(items, edit, where, outer)


def _set_call(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    source = re.sub(r"^call\s+", "", edit.text.strip())  # with or without the keyword (a tool may be `caller`)
    if not source:
        raise PatchError(f'{where}: give the call as `text`, e.g. `bash(command: "make")`')
    call = _item(f"call {source}", "tool", n.Call, where)
    return _with_tool_state(items, edit, where, lambda state, old: call)


def _set_arg(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.name or not edit.text.strip():
        raise PatchError(f"{where}: give the argument's `name` and its expression as `text`")
    args = _item(f"call _patch({edit.name}: {edit.text})", "tool", n.Call, where).args
    if len(args) != 1:
        raise PatchError(f"{where}: `{edit.text}` is not one expression")
    arg = args[0]

    def change(state: n.State, old: n.Call | None) -> n.Call:
        if old is None:
            raise PatchError(f"{where}: `{state.name}` has no call (set_call gives it one)")
        at = next((i for i, a in enumerate(old.args) if a.name == edit.name), len(old.args))
        return attrs.evolve(old, args=old.args[:at] + (arg,) + old.args[at + 1:])
    return _with_tool_state(items, edit, where, change)


def _set_outcome(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    outcome = edit.text.strip()
    if not outcome.isidentifier():
        raise PatchError(f"{where}: the outcome `text` must be one word such as success or failed, not {outcome!r}")
    return _with_block(items, edit, where, n.Terminal, lambda t: attrs.evolve(t, outcome=outcome))


def _set_requires(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    new = _item(f"requires {edit.text}", "terminal", n.Requires, where) if edit.text.strip() else None
    return _with_block(items, edit, where, n.Terminal, lambda t: attrs.evolve(t, items=_put(t.items, n.Requires, new)))


# ---------------------------------------------------------------- machine-level statements


def _set_type(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.name or not edit.text.strip():
        raise PatchError(f"{where}: give the variable's `name` and its type as `text`")
    decl = _snippet(f"var _patch: {edit.text}", f"{where}: the type `{edit.text}`")
    if len(decl) != 1 or not isinstance(decl[0], n.VarDecl) or decl[0].init is not None:
        raise PatchError(f"{where}: `{edit.text}` is not one type")
    for i, item in enumerate(items):
        if isinstance(item, n.VarDecl) and item.name == edit.name:
            return items[:i] + (attrs.evolve(item, type=decl[0].type),) + items[i + 1:]
    raise PatchError(f"{where}: no `var` or `input` named `{edit.name}`")


def _bare(stmt: n.Stmt, keep_where: bool) -> n.Stmt:
    """A statement without its comments (and a rule without its `from`, unless kept), for matching."""
    bare = attrs.evolve(stmt, leading=(), trailing=None)
    return bare if keep_where or not isinstance(bare, n.Rule) else attrs.evolve(bare, where=None)


def _found(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> int:
    """The position of the one machine-level statement whose source is `edit.find`."""
    wanted = _snippet(edit.find, f"{where}: the statement `{edit.find}`") if edit.find.strip() else ()
    if len(wanted) != 1 or isinstance(wanted[0], n.Block):
        raise PatchError(f"{where}: `find` must be one machine-level statement such as a rule (blocks: remove_state)")
    keep = not isinstance(wanted[0], n.Rule) or wanted[0].where is not None
    key = _bare(wanted[0], keep)
    hits = [i for i, it in enumerate(items) if not isinstance(it, n.Block) and _bare(it, keep) == key]
    if len(hits) != 1:
        raise PatchError(f"{where}: the statement `{edit.find}` occurs {len(hits)} times (it must occur once)")
    return hits[0]


def _remove_statement(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    i = _found(items, edit, where)
    return items[:i] + items[i + 1:]


def _replace_statement(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    i = _found(items, edit, where)
    new = _snippet(edit.text, f"{where}: the statement") if edit.text.strip() else ()
    if not new or any(isinstance(s, n.Block) for s in new):
        raise PatchError(f"{where}: the new `text` must be machine-level statements, not blocks")
    old = items[i]
    if not new[0].leading:
        new = (attrs.evolve(new[0], leading=old.leading),) + new[1:]
    return items[:i] + new + items[i + 1:]


_EDITS: dict[EditOp, Callable[[tuple[n.Stmt, ...], Edit, str], tuple[n.Stmt, ...]]] = {
    "add_state": _add_state, "remove_state": _remove_state, "set_prompt": _set_prompt, "add_edge": _add_edge,
    "remove_edge": _remove_edge, "retarget": _retarget, "set_guard": _set_guard, "set_assigns": _set_assigns,
    "add_assigns": _add_assigns,
    "add_read": partial(_with_line, add=True, writes=False),
    "remove_read": partial(_with_line, add=False, writes=False),
    "add_write": partial(_with_line, add=True, writes=True),
    "remove_write": partial(_with_line, add=False, writes=True),
    "set_call": _set_call, "set_arg": _set_arg, "set_outcome": _set_outcome, "set_requires": _set_requires,
    "set_counter": _set_counter, "set_type": _set_type,
    "add_statement": _add_statement, "remove_statement": _remove_statement,
    "replace_statement": _replace_statement, "start": _start,
}
