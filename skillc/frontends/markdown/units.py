"""Units: the document's classified clauses grouped into pieces of control flow.

A unit is a step (with the command fence after it and the bullets of its list
item as notes), a condition (its `If` arms, `Otherwise` and a "repeat until"
that sends it "again"), a loop, a verification (consecutive checks of one
section) or an ASCII decision tree. `group_units` is a pure function; `Sections`
answers which section or procedure holds a line.
"""

from __future__ import annotations

import bisect
from typing import Literal

import attrs

from skillc.frontends.markdown.clauses import _STEP_HEADING, Clause, strip_markup
from skillc.frontends.markdown.document import Block, Document
from skillc.frontends.markdown.phrases import BACK, DECIDE, OTHERWISE, again

UnitKind = Literal["step", "branch", "loop", "verify", "tree", "whole"]


@attrs.frozen
class Unit:
    """A piece of control flow: a step, a condition, a loop, a verification or a tree."""

    kind: UnitKind
    clauses: tuple[Clause, ...]
    command: Clause | None = None
    notes: tuple[Clause, ...] = ()
    otherwise: Clause | None = None
    arms: tuple[Clause, ...] = ()  # the `If` sentences of a multi-way condition
    loop: Clause | None = None  # a "repeat until" merged into a branch that goes "again"
    lead: Clause | None = None  # "Decide whether C." whose bullets are the branch's arms: the judge asks it


def group_units(clauses: list[Clause]) -> list[Unit]:
    """Group the control clauses into units, attaching commands, notes, `Otherwise` and loops."""
    out: list[Unit] = []
    for c in clauses:
        _add(out, c)
    return _decisions(_with_notes(_split(out), clauses))


def _add(out: list[Unit], c: Clause) -> None:
    """Append clause `c` to the units so far: a new unit, or part of the last one."""
    prev = out[-1] if out else None
    if c.kind == "step":
        out.append(Unit("step", (c,)))
    elif c.kind == "command":
        if prev is not None and prev.kind == "step" and prev.command is None and _near(prev, c):
            out[-1] = attrs.evolve(prev, command=c)
        else:
            out.append(Unit("step", (), command=c))
    elif c.kind == "branch" and c.block is not None and c.block.kind == "code":
        out.append(Unit("tree", (c,)))
    elif c.kind == "branch" and OTHERWISE.match(strip_markup(c.text)):
        if prev is not None and prev.kind == "branch" and prev.otherwise is None:
            out[-1] = attrs.evolve(prev, otherwise=c)
        else:
            out.append(Unit("step", (c,)))  # an `Otherwise` with nothing before it is just a step
    elif c.kind == "branch":
        if prev is not None and prev.kind == "branch" and prev.otherwise is None and _same_block(prev, c):
            out[-1] = attrs.evolve(prev, arms=(*prev.arms, c))
        else:
            out.append(Unit("branch", (c,), arms=(c,)))
    elif c.kind == "loop":
        if prev is not None and prev.kind == "branch" and prev.loop is None and (
                again(prev.arms[-1].text) or BACK.search(strip_markup(prev.arms[-1].text))):
            out[-1] = attrs.evolve(prev, loop=c)
        else:
            out.append(Unit("loop", (c,)))
    elif c.kind == "verify":
        if prev is not None and prev.kind == "verify" and _same_checklist(prev.clauses[-1], c):
            out[-1] = attrs.evolve(prev, clauses=(*prev.clauses, c))
        else:
            out.append(Unit("verify", (c,)))


def _same_checklist(last: Clause, c: Clause) -> bool:
    """Two checks of the same section, both checkboxes or both not."""
    return last.section == c.section and _checkbox(last.block) == _checkbox(c.block)


def _checkbox(block: Block | None) -> bool:
    """Whether a clause's block is a checklist item (verify clauses always have a block)."""
    assert block is not None, "a verify clause comes from a block"
    return block.checkbox


def _split(units: list[Unit]) -> list[Unit]:
    """Multi-way conditions without `Otherwise` are sequential yes/no questions."""
    out: list[Unit] = []
    for u in units:
        if u.kind == "branch" and len(u.arms) > 1 and u.otherwise is None:
            for i, arm in enumerate(u.arms):
                out.append(Unit("branch", (arm,), arms=(arm,), loop=u.loop if i == len(u.arms) - 1 else None))
        else:
            out.append(u)
    return out


def _with_notes(units: list[Unit], clauses: list[Clause]) -> list[Unit]:
    """Bullets and later sentences of a numbered item detail that item's step."""
    by_item: dict[int, int] = {}
    for i, u in enumerate(units):
        block = u.clauses[0].block if u.kind == "step" and u.clauses else None
        if block is not None and block.item is not None:
            by_item.setdefault(block.item, i)
    notes: dict[int, list[Clause]] = {}
    for c in clauses:
        if c.kind == "knowledge" and c.block is not None:
            owner = _owner(by_item, c.block)
            if owner is not None:
                notes.setdefault(owner, []).append(c)
    return [attrs.evolve(u, notes=(*u.notes, *notes[i])) if i in notes else u for i, u in enumerate(units)]


def _owner(by_item: dict[int, int], block: Block) -> int | None:
    """The unit of the list item holding a block, or of its parent item."""
    own = by_item.get(block.item) if block.item is not None else None
    if own is not None:
        return own
    return by_item.get(block.parent_item) if block.parent_item is not None else None


def _decisions(units: list[Unit]) -> list[Unit]:
    """A step "Decide whether C." followed by its own If/Otherwise bullets becomes the lead of that branch."""
    out: list[Unit] = []
    for u in units:
        prev = out[-1] if out else None
        if u.kind == "branch" and prev is not None and prev.kind == "step" and prev.command is None \
                and len(prev.clauses) == 1 and DECIDE.match(strip_markup(prev.clauses[0].text)) \
                and prev.clauses[0].ordinal is not None and all(a.ordinal == prev.clauses[0].ordinal for a in u.arms):
            out[-1] = attrs.evolve(u, lead=prev.clauses[0], notes=prev.notes, clauses=(prev.clauses[0], *u.clauses))
            continue
        out.append(u)
    return out


def _near(unit: Unit, command: Clause) -> bool:
    """A fence right after a step (or inside its list item) is that step's command."""
    lead = unit.clauses[-1]
    same_item = lead.block is not None and command.block is not None and command.block.item is not None \
        and command.block.item == lead.block.item
    return same_item or 0 < command.start - lead.end <= 3


def _same_block(unit: Unit, c: Clause) -> bool:
    """An `If` sentence of the same paragraph (or numbered item) as the condition's last arm."""
    last = unit.arms[-1]
    return last.block is c.block or (last.ordinal is not None and last.ordinal == c.ordinal)


@attrs.frozen
class Sections:
    """The document's headings: which section and which procedure hold a line."""

    headings: tuple[Block, ...]
    starts: tuple[int, ...]
    lines: int

    @classmethod
    def of(cls, doc: Document) -> Sections:
        """The sections of a document."""
        heads = tuple(b for b in doc.blocks if b.kind == "heading")
        return cls(heads, tuple(b.start for b in heads), len(doc.lines))

    def section(self, line: int) -> tuple[int, int]:
        """The lines [start, end) of the section holding a line: from its nearest heading above to the next."""
        heads = self.starts
        i = bisect.bisect_right(heads, line)
        return (heads[i - 1] if i else 0), (heads[i] if i < len(heads) else self.lines + 1)

    def procedure(self, line: int) -> int:
        """The heading line of the procedure holding a line: its section, or the parent of `Phase N` sections."""
        heads = self.headings
        i = bisect.bisect_right(self.starts, line) - 1
        while i >= 0 and _STEP_HEADING.match(heads[i].text):
            level = heads[i].level
            i = next((k for k in range(i - 1, -1, -1) if heads[k].level < level), -1)
        return heads[i].start if i >= 0 else 0
