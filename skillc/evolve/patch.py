"""Revisions as patches: typed edits of a machine's syntax tree, or find/replace edits of its SKILL.md then a build.

A child of the patch tree is a whole machine text, or a `Patch` on its parent's version:

- machine edits (`Edit`), applied in order to the parent's parsed `.skm` syntax tree (skillc.syntax) and
  printed with the project printer, so comments and layout survive: `add_state` (a state, terminal or
  fallback block, after the state `state` or after the last state), `remove_state`, `set_prompt`, `add_edge`
  (guard `text`, "" for the default edge, to `target` with `assigns` such as `tries += 1`, at `index` or
  before the default edge), `remove_edge`, `retarget`, `set_guard` (the edge at `index` of `state`),
  `set_counter` (`name` with `max`, added when absent), `add_statement` (a machine-level statement such as a
  `var` or a `rule`, before the first block), `start`;
- SKILL.md edits (`SkillEdit`: `find` must occur exactly once), then the offline structural `skillc build`
  (skillc.frontends.markdown) of the patched document gives the machine; the patched SKILL.md is kept.

`apply_patch` answers the new (machine, SKILL.md) or raises PatchError naming the edit that does not apply; the
loop then refuses the child like the gate does (it never costs an execution).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, cast

import attrs

from skillc.syntax import nodes as n

EditOp = Literal["add_state", "remove_state", "set_prompt", "add_edge", "remove_edge", "retarget", "set_guard",
                 "set_counter", "add_statement", "start"]
EDIT_OPS: tuple[EditOp, ...] = ("add_state", "remove_state", "set_prompt", "add_edge", "remove_edge", "retarget",
                                "set_guard", "set_counter", "add_statement", "start")


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
    assigns: str = ""  # an added edge's assignments, e.g. "tries += 1" (a cycle must pay a counter)


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


def apply_patch(machine: str, skill: str | None, patch: Patch) -> tuple[str, str | None]:
    """The patched version (machine text, SKILL.md); PatchError when an edit does not apply or the build fails."""
    if patch.machine and patch.skill:
        raise PatchError("a patch edits the machine or the SKILL.md, not both")
    if patch.skill:
        if skill is None:
            raise PatchError("a SKILL.md patch needs a parent with a SKILL.md")
        text = skill
        for i, change in enumerate(patch.skill):
            count = text.count(change.find) if change.find else 0
            if count != 1:
                raise PatchError(f"SKILL.md edit {i}: `find` occurs {count} times (it must occur once)")
            text = text.replace(change.find, change.replace)
        return build_skill(text), text
    module = _parse(machine, "the parent machine")
    for i, edit in enumerate(patch.machine):
        module = _apply(module, edit, i)
    from skillc.syntax.printer import print_module

    return print_module(module), skill


def build_skill(text: str) -> str:
    """The machine the offline structural `skillc build` makes of a SKILL.md text; PatchError when it fails."""
    from skillc.frontends.markdown.pipeline import build

    with tempfile.TemporaryDirectory(prefix="skillc-evolve-") as folder:
        path = Path(folder) / "SKILL.md"
        path.write_text(text, encoding="utf-8")
        result = build(path, output=Path(folder) / "SKILL.skm")  # `source "SKILL.md"`: the machine sits beside it
    if result.text is None:
        first = next((d for d in result.diagnostics if d.is_error), None)
        raise PatchError("the patched SKILL.md does not build" + (f" ({first.code}: {first.message})" if first else ""))
    return result.text


# ---------------------------------------------------------------- the syntax tree edits


def _parse(text: str, what: str) -> n.Module:
    """A parsed module; PatchError when it does not parse."""
    from skillc.syntax.parser import parse

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


def _machine(module: n.Module) -> tuple[int, n.Machine]:
    """The module's machine and its position."""
    found = [(i, item) for i, item in enumerate(module.items) if isinstance(item, n.Machine)]
    if len(found) != 1:
        raise PatchError("the parent module must hold exactly one machine")
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


def _with_state(items: tuple[n.Stmt, ...], edit: Edit, where: str,
                change: Callable[[n.State], n.State]) -> tuple[n.Stmt, ...]:
    """The items with the state `edit.state` changed."""
    i = _position(items, edit.state, where)
    state = items[i]
    if not isinstance(state, n.State):
        raise PatchError(f"{where}: `{edit.state}` is a terminal, not a state")
    return items[:i] + (change(state),) + items[i + 1:]


def _apply(module: n.Module, edit: Edit, index: int) -> n.Module:
    """The module with one edit applied."""
    where = f"edit {index} ({edit.op})"
    at, machine = _machine(module)
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
    at = _position(items, edit.state, where) + 1 if edit.state else (states[-1] + 1 if states else len(items))
    return items[:at] + new + items[at:]


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
    at = _first_block(items)
    return items[:at] + new + items[at:]


def _start(items: tuple[n.Stmt, ...], edit: Edit, where: str) -> tuple[n.Stmt, ...]:
    if not edit.target:
        raise PatchError(f"{where}: give the new start `target`")
    for i, item in enumerate(items):
        if isinstance(item, n.Start):
            return items[:i] + (attrs.evolve(item, target=edit.target),) + items[i + 1:]
    raise PatchError(f"{where}: the machine has no `start`")


_EDITS: dict[EditOp, Callable[[tuple[n.Stmt, ...], Edit, str], tuple[n.Stmt, ...]]] = {
    "add_state": _add_state, "remove_state": _remove_state, "set_prompt": _set_prompt, "add_edge": _add_edge,
    "remove_edge": _remove_edge, "retarget": _retarget, "set_guard": _set_guard, "set_counter": _set_counter,
    "add_statement": _add_statement, "start": _start,
}
