"""The LLM compiler's review round (`--review`): the skill, block by block, beside the states made from its lines.

A draft can check clean, with none of the build's findings, and still put a step's state on another step's
lines, decide a condition in a state made from the lines before it, or run a script from the state made from its
usage example. The checker cannot see that; the model can, once it sees its machine from the skill's side.
`line_map` prints that view, and `REVIEW` asks the model to compare the two and correct the machine: its reply is
the whole corrected text, or `{"keep": true}`.

Pure functions of a checked machine and its document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from skillc.frontends.markdown.clauses import shorten
from skillc.frontends.markdown.document import Block, Document
from skillc.frontends.markdown.phrases import unbold
from skillc.ir.machine import Machine, State
from skillc.ir.printexpr import show_expr

#: How much of a block's text the map shows.
TEXT_WIDTH = 70
#: How many states the map names at one block; more are counted.
STATES_SHOWN = 5

REVIEW = """Your machine checks clean. Before it is kept, review it against the skill: below is SKILL.md block \
by block, each with the states whose `from` range holds its lines (`name kind A-B → targets`, the targets of \
its edges in order; `…name` is a state begun on an earlier block; `—` is a block no state was made from; a \
block with no `←` line is held by the same states as the block above it).

For each block, check that:
- a step the skill says to do (a numbered step, a checklist item, a step heading) has a state made from its own \
line, on every path that one of the skill's own conditions does not take around it, in the skill's order;
- a condition ("If …", "Otherwise", "When …", a menu) is decided by a state whose `from` holds the condition's \
own line, with an edge to a state made from each arm's own line (an arm that only skips needs none);
- a command or script the skill runs, and a file it reads, writes or fetches, is a tool state whose `from` holds \
the line that says to do it;
- a step that uses what an earlier step produced reads that step's variable;
- a fact, default, caveat, example or prohibition is in the prompt or doc of the states it governs, not a state \
of its own;
- each `from` holds its own step's lines only: a range over other steps' lines, or over a condition and its \
arms, hides them.

Change only what one of these checks finds wrong. If the machine already does all of this, reply \
{"keep": true}. Otherwise reply with the whole corrected text, in the same JSON form ({"skm": "…"}).

"""


def _kind(state: State) -> str:
    """A state's kind as the map shows it: `tool:bash`, `judge`, `success` (a terminal's outcome)."""
    if state.call is not None:
        return f"tool:{state.call.tool}"
    if state.kind == "terminal":
        return f"terminal:{state.outcome}"
    return state.kind


def _targets(state: State) -> str:
    """Where a state's edges lead, in order, a guarded edge with its guard."""
    out = []
    for e in state.edges:
        guard = "" if e.guard is None else f" [{shorten(show_expr(e.guard), 40)}]"
        out.append(f"{e.target}{guard}")
    return " | ".join(out) if out else "(ends)"


def _held(machine: Machine, b: Block) -> list[State]:
    """The states whose `from` range overlaps a block, narrowest first, then by name."""
    found = [s for s in machine.states.values()
             if s.provenance is not None and s.provenance.start <= b.end and b.start <= s.provenance.end]
    return sorted(found, key=lambda s: (s.provenance.end - s.provenance.start, s.name))  # type: ignore[union-attr]


def _entry(state: State, b: Block) -> str:
    """One state at one block: in full where its range begins, `…name` where it goes on from an earlier block."""
    p = state.provenance
    assert p is not None, "only states with a `from` range are held by a block"
    if p.start < b.start:
        return f"…{state.name}"
    span = f"{p.start}" if p.start == p.end else f"{p.start}-{p.end}"
    return f"{state.name} {_kind(state)} {span} → {_targets(state)}"


#: A list item's marker as written: `-`, `1.`, `2)`, with a checkbox.
_MARKER = re.compile(r"\s*((?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?)")


def _text(b: Block, doc: Document) -> str:
    """A block's words as the map shows them (a list item with its marker, indented by its depth)."""
    if b.kind == "heading":
        return "#" * max(b.level, 1) + " " + shorten(unbold(b.text), TEXT_WIDTH)
    if b.kind == "code":
        first = next((ln for ln in b.text.splitlines() if ln.strip()), "")
        lines = b.end - b.start + 1
        return f"```{b.info} ({lines} lines) {shorten(first, TEXT_WIDTH - 20)}"
    marker = _MARKER.match(doc.lines[b.start - 1]) if b.kind == "item" and 1 <= b.start <= len(doc.lines) else None
    lead = "  " * max(b.depth - 1, 0) + (marker.group(1).strip() + " " if marker else "- " if b.kind == "item" else "")
    return lead + shorten(unbold(b.text), TEXT_WIDTH - len(lead))


def line_map(machine: Machine, doc: Document, blocks: Sequence[Block] | None = None) -> str:
    """SKILL.md block by block (html left out), each block with the states made from its lines."""
    out = []
    before: list[str] = []
    for b in blocks if blocks is not None else doc.blocks:
        if b.kind == "html":
            continue
        held = _held(machine, b)
        if b.kind == "heading" and not held:
            out.append(f"{b.start:>4}  {_text(b, doc)}")
            before = []
            continue
        shown = [_entry(s, b) for s in held[:STATES_SHOWN]]
        if len(held) > STATES_SHOWN:
            shown.append(f"and {len(held) - STATES_SHOWN} more")
        shown = shown or ["—"]
        if shown == before and all(x.startswith("…") or x == "—" for x in shown):
            out.append(f"{b.start:>4}  {_text(b, doc)}")
            continue
        before = shown
        out.append(f"{b.start:>4}  {_text(b, doc)}\n        ← {'; '.join(shown)}")
    loose = sorted(s.name for s in machine.states.values()
                   if s.provenance is None and s.kind not in ("terminal", "fallback"))
    if loose:
        out.append(f"States made from no line: {', '.join(loose)}")
    return "\n".join(out)


def review_request(machine: Machine, doc: Document) -> str:
    """The review message: what to check, then the map."""
    return REVIEW + line_map(machine, doc)


__all__ = ["REVIEW", "line_map", "review_request"]
