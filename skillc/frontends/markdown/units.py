"""Units: the document's classified clauses grouped into pieces of control flow.

A unit is a step (with the command fence after it and the bullets of its list
item as notes), a condition (its `If` arms, `Otherwise` and a "repeat until"
that sends it "again"), a loop, a verification (consecutive checks of one
section) or an ASCII decision tree. `group_units` is a pure function; `Sections`
answers which section or procedure holds a line.
"""

from __future__ import annotations

import bisect
import itertools
import re
from typing import Literal

import attrs

from skillc.frontends.markdown.clauses import _STEP_HEADING, CASE_ARROW, FOREACH, Clause, is_imperative, strip_markup
from skillc.frontends.markdown.document import Block, Document
from skillc.frontends.markdown.names import content_stems, stem
from skillc.frontends.markdown.phrases import (
    ALTERNATIVE,
    BACK,
    DECIDE,
    GATE,
    MENU,
    NEXT_ITEM,
    OTHERWISE,
    again,
)

UnitKind = Literal["step", "branch", "loop", "verify", "tree", "whole", "gate", "foreach", "menu", "alternatives",
                   "chain"]


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
    commands: tuple[tuple[int, Clause], ...] = ()  # (arm clause index, fence): "If C:" / "Otherwise run:" + a fence
    body: tuple[Unit, ...] = ()  # what a gate ("## 3) If the user agrees") or a "For each X:" loop does
    title: Clause | None = None  # the step heading a step's first unit carries ("### 1. Initial test run")


def group_units(clauses: list[Clause]) -> list[Unit]:
    """Group the control clauses into units, attaching commands, notes, `Otherwise` and loops."""
    out: list[Unit] = []
    taken: set[int] = set()
    for i, c in enumerate(clauses):
        if c.index in taken:
            continue
        menu = _menu(clauses, i)
        if menu is not None:  # "Options:" and a list of actions: one branch per option
            out.append(menu)
            taken |= {x.index for o in menu.body for x in (*o.clauses, *o.notes, *([o.command] if o.command else []))}
            continue
        _add(out, c)
    units = _bodies(_titles(_decisions(_with_notes(_split(out), [c for c in clauses if c.index not in taken]))))
    return _gated_lists(_checks_first(_alternatives(units), clauses), clauses)


#: A lead saying when the steps after it apply: "These steps only apply when `ios/` exists in the project:".
_GATE_LEAD = re.compile(r"^(?:these|the following|the next)\s+(?:steps|commands|instructions|actions)\s+"
                        r"(?:only\s+)?apply\s+(?:only\s+)?(?:when|if)\s+(?P<cond>.+?):$", re.I)


def _gated_lists(units: list[Unit], clauses: list[Clause]) -> list[Unit]:
    """The steps right after a lead saying when they apply ("These steps only apply when `ios/` exists:") are done
    only then: a gate over them, as a heading that is a condition is."""
    for c in clauses:
        m = _GATE_LEAD.match(strip_markup(c.text).strip()) if "appl" in c.text else None
        if m is None:
            continue
        body = _introduced(units, clauses, c)
        if not body:
            continue
        gate = attrs.evolve(c, kind="branch", text=f"If {m.group('cond')}:")
        units = [*units[:body[0]], Unit("gate", (gate,), body=tuple(units[i] for i in body)), *units[body[-1] + 1:]]
    return units


def _introduced(units: list[Unit], clauses: list[Clause], lead: Clause) -> list[int]:
    """The units made from what a lead ending with a colon introduces: the clauses after it in its section, up to the
    next lead of a list ("After the image is made:") or heading; by index, in order."""
    after = itertools.takewhile(lambda x: x.section == lead.section and not (
        x.block is not None and x.block.kind == "para" and strip_markup(x.text).rstrip().endswith(":")),
                                (x for x in clauses if x.start > lead.end))
    inside = {x.index for x in after}
    return [i for i, u in enumerate(units) if (f := _first(u)) is not None and f.index in inside]


#: A lead putting the steps after it before a run shown earlier: "Before running, check if the user has configured
#: their API key:", "Before calling `research_lookup.py`, check if a relevant result already exists:".
_BEFORE_RUN = re.compile(r"\bbefore (?:running|using|calling|invoking|executing)\b\s*(?P<what>[^,]{0,60}?)\s*,"
                         r"\s*\w[^:]*:$", re.I)


def _checks_first(units: list[Unit], clauses: list[Clause]) -> list[Unit]:
    """The steps a "Before running X, check …:" lead introduces go before the step that runs X, where the document
    showed that step earlier (its usage first, the checks after it): X named, the first step running it; else the
    last command before the lead."""
    for c in clauses:
        m = _BEFORE_RUN.search(strip_markup(c.text)) if "efore" in c.text else None
        if m is None:
            continue
        firsts = [_first(u) for u in units]
        moved = [i for i, f in enumerate(firsts) if f is c] + _introduced(units, clauses, c)  # with its own
        name = m.group("what").strip("` ").lower()
        named = name if re.search(r"[./]", name) else ""
        runs = [i for i, (u, f) in enumerate(zip(units, firsts)) if f is not None and f.end < c.start
                and u.command is not None and named in (u.command.text + " ".join(x.text for x in u.clauses)).lower()]
        if not moved or not runs:
            continue
        at = runs[0] if named else runs[-1]
        units = [*units[:at], *(units[i] for i in moved), *(u for i, u in enumerate(units[at:], at) if i not in moved)]
    return units


def _alternatives(units: list[Unit]) -> list[Unit]:
    """Sibling sections that are alternatives ("### Yellow Zone (40-60 tool calls)", "### Red Zone (60+)"): their
    steps are one choice, a chain per section, not one chain through all of them."""
    out: list[Unit] = []
    i = 0
    while i < len(units):
        first = _first(units[i])
        parent = first.section[:-1] if first is not None and len(first.section) >= 2 else None
        group: list[tuple[str, list[Unit]]] = []
        j = i
        while parent is not None and j < len(units):
            c = _first(units[j])
            if c is None or len(c.section) <= len(parent) or c.section[:len(parent)] != parent:
                break
            title = c.section[len(parent)]
            if not (ALTERNATIVE.search(title) or _named_as_choice(parent[-1], title)):
                break
            if not group or group[-1][0] != title:
                group.append((title, []))
            group[-1][1].append(units[j])
            j += 1
        if len(group) >= 2:
            body = tuple(Unit("chain", (), body=tuple(us)) for _, us in group)
            out.append(Unit("alternatives", (_first(units[i]),), body=body))  # type: ignore[arg-type]
            i = j
            continue
        out.append(units[i])
        i += 1
    return out


def _named_as_choice(parent: str, title: str) -> bool:
    """A section one of those its parent's title sets against each other ("Standard vs Deep Verification" →
    "Standard Verification", "Deep Verification")."""
    words = content_stems(title)
    return bool(re.search(r"\s(?:vs\.?|versus)\s", parent, re.I)) and bool(words) \
        and stem(title.split()[0].lower()) in content_stems(parent)


def _menu(clauses: list[Clause], i: int) -> Unit | None:
    """A menu at clause `i`: a sentence offering options ("Options:", "choose one of:", "based on the task:")
    followed by a list of at least two actions; each item is one option (its lead, its fence, its details)."""
    lead = clauses[i]
    if lead.block is None or lead.block.kind == "code" or not MENU.search(strip_markup(lead.text)):
        return None
    options: list[Unit] = []
    depth = None
    for c in clauses[i + 1:]:
        b = c.block
        if b is None or b.item is None or c.section != lead.section:
            break
        if depth is None:
            if b.depth <= lead.block.depth or not b.first_in_item:
                return None
            depth = b.depth
        if b.depth < depth:
            break
        if b.depth == depth and b.first_in_item and b.kind == "item" and c.start == b.start:
            options.append(Unit("step", (attrs.evolve(c, kind="step"),)))
        elif not options:
            return None
        elif c.kind == "command" and options[-1].command is None:
            options[-1] = attrs.evolve(options[-1], command=c)
        else:
            options[-1] = attrs.evolve(options[-1], notes=(*options[-1].notes, c))
    actions = sum(is_imperative(o.clauses[0].text) or o.command is not None for o in options)
    if len(options) < 2 or actions < 2:
        return None
    return Unit("menu", (lead,), body=tuple(options))


def _add(out: list[Unit], c: Clause) -> None:
    """Append clause `c` to the units so far: a new unit, or part of the last one."""
    prev = out[-1] if out else None
    if c.kind == "step":
        out.append(Unit("step", (c,)))
    elif c.kind == "command":
        arm = (prev.otherwise or prev.arms[-1]) if prev is not None and prev.kind == "branch" and prev.arms else None
        if prev is not None and arm is not None and strip_markup(arm.text).endswith(":") \
                and arm.index not in dict(prev.commands) and _near_clause(arm, c):
            out[-1] = attrs.evolve(prev, commands=(*prev.commands, (arm.index, c)))  # the arm runs the fence
        elif prev is not None and prev.kind == "step" and prev.command is None and _near(prev, c):
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
    elif c.kind == "knowledge" and prev is not None and prev.kind == "branch" and prev.arms \
            and c.block is not None and c.block.kind == "para" and _says(prev.otherwise or prev.arms[-1]) \
            and (prev.otherwise or prev.arms[-1]).index not in dict(prev.commands) \
            and _near_clause(prev.otherwise or prev.arms[-1], c):
        # "If the user has not named a team, ask:" and the question after it: what the arm asks or says.
        arm = prev.otherwise or prev.arms[-1]
        out[-1] = attrs.evolve(prev, commands=(*prev.commands, (arm.index, c)))
    elif c.kind == "loop" and FOREACH.match(strip_markup(c.text)):
        out.append(Unit("foreach", (c,)))
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
        prev = out[-1] if out else None
        cases = prev is not None and prev.kind == "step" and prev.command is None and len(prev.clauses) == 1 \
            and strip_markup(prev.clauses[0].text).endswith(":") and _arms_of(prev.clauses[0], u.arms[0]) \
            if u.kind == "branch" and u.arms else False
        cases = cases or (u.kind == "branch" and all(_case(a) for a in u.arms))
        if u.kind == "branch" and len(u.arms) > 1 and u.otherwise is None and not cases:
            for i, arm in enumerate(u.arms):
                out.append(Unit("branch", (arm,), arms=(arm,), loop=u.loop if i == len(u.arms) - 1 else None,
                                commands=tuple(x for x in u.commands if x[0] == arm.index)))
        else:
            out.append(u)
    return out


def _case(arm: Clause) -> bool:
    """An arm of a list of cases ("- Simple change → use the quick plan"): one choice with its siblings."""
    plain = strip_markup(arm.text)
    return CASE_ARROW.match(plain) is not None and not re.match(r"^(?:if|when|unless)\b", plain, re.I)


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
        if u.kind == "branch" and prev is not None and prev.kind == "step" and prev.command is None \
                and len(prev.clauses) == 1 and strip_markup(prev.clauses[0].text).endswith(":") \
                and _arms_of(prev.clauses[0], u.arms[0]):
            # "Determine the scan target:" and its If bullets: the lead is the decision the judge makes.
            out[-1] = attrs.evolve(u, lead=prev.clauses[0], notes=prev.notes, clauses=(prev.clauses[0], *u.clauses),
                                   title=prev.title)
            continue
        out.append(u)
    return out


def _heading(unit: Unit) -> Clause | None:
    """The step heading a unit was made from, if any."""
    lead = unit.clauses[0] if unit.clauses else None
    return lead if lead is not None and lead.block is not None and lead.block.kind == "heading" else None


def _inside(c: Clause | None, heading: Clause) -> bool:
    """A clause stands in the section of a heading (or one of its subsections)."""
    return c is not None and c.section[:len(heading.section)] == heading.section and c.start > heading.end


def _first(unit: Unit) -> Clause | None:
    """The first clause of a unit (its sentence, or its fence)."""
    return unit.clauses[0] if unit.clauses else unit.command


def _titles(units: list[Unit]) -> list[Unit]:
    """A step heading whose section starts with a step of its own is that step's title, not a state of its own.

    A heading that is a condition ("## 3) If the user chooses comments") gates the steps of its section.
    """
    out: list[Unit] = []
    i = 0
    while i < len(units):
        u = units[i]
        h = _heading(u) if u.kind == "step" and u.command is None and len(u.clauses) == 1 else None
        if h is not None and GATE.match(strip_markup(h.text)):
            body = []
            while i + 1 < len(units) and _inside(_first(units[i + 1]), h):
                i += 1
                body.append(units[i])
            out.append(Unit("gate", (h,), notes=u.notes, body=tuple(_titles(body))))
        elif h is not None and i + 1 < len(units) and units[i + 1].clauses and units[i + 1].title is None \
                and (units[i + 1].kind == "step" or (units[i + 1].kind == "branch" and units[i + 1].lead is not None)) \
                and _inside(units[i + 1].clauses[0], h) and not u.notes:
            units[i + 1] = attrs.evolve(units[i + 1], title=h)
        else:
            out.append(u)
        i += 1
    return out


def _bodies(units: list[Unit]) -> list[Unit]:
    """A "For each X:" takes the list after it as its body; a last "Move to the next X" is its loop, not a step."""
    out: list[Unit] = []
    i = 0
    while i < len(units):
        u = units[i]
        arm = u.arms[0] if u.kind == "branch" and len(u.arms) == 1 and u.otherwise is None and not u.commands \
            and u.loop is None else None
        if arm is not None and strip_markup(arm.text).endswith(":"):  # "If C:" / "When C:" and a list: a gate
            body = []
            while i + 1 < len(units) and _in_list_after(arm, _first(units[i + 1])):
                i += 1
                body.append(units[i])
            out.append(Unit("gate", (arm,), body=tuple(_bodies(body))) if body else u)
            i += 1
            continue
        if u.kind != "foreach":
            out.append(attrs.evolve(u, body=tuple(_bodies(list(u.body)))) if u.body else u)
            i += 1
            continue
        c = u.clauses[0]
        body = []
        while i + 1 < len(units) and _in_list_after(c, _first(units[i + 1])):
            i += 1
            body.append(units[i])
        i += 1
        loop = None
        last = body[-1] if body else None
        if last is not None and last.kind == "step" and len(last.clauses) == 1 and last.command is None \
                and NEXT_ITEM.match(strip_markup(last.clauses[0].text)):
            loop = last.clauses[0]
            body.pop()
        if not body:  # nothing to repeat: a step that says what to do for each
            out.append(Unit("step", (c,)) if loop is None else Unit("step", (c, loop)))
            continue
        out.append(Unit("foreach", (c,), body=tuple(_bodies(body)), loop=loop))
    return out


def _in_list_after(lead: Clause, c: Clause | None) -> bool:
    """A clause of the list right after a "For each X:" (the items under it, or the list that follows it)."""
    if c is None or c.block is None or c.block.item is None or c.section != lead.section or c.start <= lead.end:
        return False
    b = lead.block
    if b is not None and b.item is not None:  # the loop is an item: its body is the items under it
        return c.block.depth > b.depth
    return c.block.depth >= 1


def _arms_of(lead: Clause, arm: Clause) -> bool:
    """A condition is one of the cases a lead ending with a colon introduces: a bullet right under it."""
    lb, ab = lead.block, arm.block
    if lb is None or ab is None or ab.item is None:
        return False
    if lb.item is not None:
        return ab.parent_item == lb.item
    return _in_list_after(lead, arm)


def _says(arm: Clause) -> bool:
    """An arm whose action is to ask or say what the next paragraph holds ("…, ask:", "…, say:")."""
    return bool(re.search(r"[,;]\s*(?:then\s+)?(?:ask|prompt|say|show|tell the user|reply|respond|confirm)"
                          r"(?:\s+(?:the user|them|with))?\s*:$", strip_markup(arm.text), re.I))


def _near(unit: Unit, command: Clause) -> bool:
    """A fence right after a step (or inside its list item) is that step's command."""
    return _near_clause(unit.clauses[-1], command)


def _near_clause(lead: Clause, command: Clause) -> bool:
    """A fence right after a sentence (or inside its list item) belongs to it."""
    same_item = lead.block is not None and command.block is not None and command.block.item is not None \
        and command.block.item == lead.block.item
    return same_item or 0 < command.start - lead.end <= 3


def _same_block(unit: Unit, c: Clause) -> bool:
    """An `If` sentence of the same paragraph (or numbered item) as the condition's last arm."""
    last = unit.arms[-1]
    if last.block is c.block or (last.ordinal is not None and last.ordinal == c.ordinal):
        return True
    a, b = last.block, c.block  # sibling bullets of one list: "- If A, …", "- If B, …"
    return a is not None and b is not None and a.item is not None and b.item is not None and a.depth == b.depth \
        and not a.ordered and not b.ordered \
        and a.parent_item == b.parent_item and a.section == b.section and b.item == a.item + 1


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
