"""Placement: the sentences that are not control flow, put where they apply once the graph is built.

Requirements and prohibitions become rules where they name an operation (an
order between two states, a required step) and constraints in the prompts of
the model states they bind (every one, for a rule stated outside the steps)
and of the judges they concern; stop sentences describe `done`; two opposite orders
are reported (SKM318) and kept as instructions only; code in another language
than shell is reported (SKM319); each remaining knowledge clause goes to the
instructions of the model state it concerns most (a judge only where no model
state shares its words). Clause kinds are dispatched through
`RULE_HANDLERS`.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Callable, Iterable

import attrs

from skillc.frontends.markdown import codes
from skillc.frontends.markdown.clauses import _REQUIRE, Clause, _section_role, first_word, strip_markup
from skillc.frontends.markdown.draft import DMachine, DState
from skillc.frontends.markdown.names import content_stems
from skillc.frontends.markdown.phrases import NOT_BASH, prohibited_action, quote
from skillc.frontends.markdown.units import Sections
from skillc.syntax import nodes as n


@attrs.frozen
class Topics:
    """The prompted states (model and judge) of the finished graph, and which of them each word stem concerns."""

    prompted: tuple[str, ...]
    index: dict[str, list[str]]

    @classmethod
    def of(cls, d: DMachine) -> Topics:
        """The topics of a draft whose states are all made."""
        prompted = tuple(s for s in d.order if d.states[s].kind in ("model", "judge"))
        index: dict[str, list[str]] = {}
        for name in prompted:
            for stem in d.states[name].topic:
                index.setdefault(stem, []).append(name)
        return cls(prompted, index)

    def overlaps(self, text: str) -> dict[str, int]:
        """How many content words each prompted state shares with a text (states sharing none are left out)."""
        counts: dict[str, int] = {}
        for stem in content_stems(text):
            for name in self.index.get(stem, ()):
                counts[name] = counts.get(name, 0) + 1
        return counts


@attrs.frozen
class Placer:
    """Places the clauses of one document into its built graph."""

    d: DMachine
    clauses: list[Clause]
    sections: Sections
    topics: Topics

    def section_states(self, c: Clause, among: Iterable[str] | None = None) -> list[str]:
        """The prompted states (or those of `among`) made from the same section as a clause."""
        start, end = self.sections.section(c.start)
        return [s for s in (self.topics.prompted if among is None else among)
                if start <= self.d.states[s].start < end]

    def concerned(self, c: Clause) -> list[str]:
        """The model and judge states a sentence is about: most shared words (at least two), its section's first."""
        counts = self.topics.overlaps(strip_markup(c.text))
        top = max(counts.values(), default=0)
        best = [s for s in self.topics.prompted if top >= 2 and counts.get(s) == top]
        return self.section_states(c, best) or best

    def operations(self, text: str) -> list[str]:
        """The steps (model or tool) a requirement names: most shared content words, at least two; a tool on a tie."""
        want = content_stems(text)
        scores = {name: len(want & self.d.states[name].topic) for name in self.d.steps}
        top = max(scores.values(), default=0)
        best = [name for name, k in scores.items() if k == top and top >= 2]
        tools = [name for name in best if self.d.states[name].kind == "tool"]
        return tools if len(best) > 1 and len(tools) == 1 else best

    def order_pair(self, text: str) -> tuple[str, str] | None:
        """`A before B` / `B after A` between two different states, in the order the graph already has them."""
        m = re.search(r"^(.*?)\b(before|after|prior to|first)\b(.*)$", text, re.I)
        if not m or not m.group(3).strip():
            return None
        left, word, right = m.group(1), m.group(2).lower(), m.group(3)
        a = self.d.best_match(left, ("model", "tool", "judge"))
        b = self.d.best_match(right, ("model", "tool", "judge"))
        if a is None or b is None or a == b:
            return None
        if not (_names_state(left, self.d.states[a]) and _names_state(right, self.d.states[b])):
            return None
        if word == "after":
            a, b = b, a
        return a, b

    def constrain(self, c: Clause, targets: list[str]) -> None:
        """The sentence as a constraint of the model states it binds, and of the states it concerns.

        A rule stated under a heading of the procedure (a step heading, "## Procedure", "## Workflow") binds that
        section's model states, so the prompts of a long runbook do not grow with the square of its length; one stated
        under any other heading (an opening "Philosophy" section, "## Rules", the title alone) holds wherever the run
        acts, as it does for an agent with the whole skill in view: every model state. Where neither binds any, the
        section's prompted states, else every prompted one.
        """
        prompted = self.topics.prompted
        # its own heading decides: the title may say "Workflow"
        section = set(self.section_states(c)) if _section_role(c.section[-1:]) in ("procedure", "howto") else None
        bound = [s for s in prompted if s in targets
                 or (self.d.states[s].kind == "model" and (section is None or s in section))]
        for t in bound or self.section_states(c) or list(prompted):
            self.d.states[t].constraints.append(strip_markup(c.said))
            self.d.land(c, t)

    def order_rule(self, c: Clause, pair: tuple[str, str]) -> None:
        """`rule order A before B` quoting the clause."""
        self.d.rules.append(_rule("order", pair, c, self.d))
        self.d.land(c, f"rule order {pair[0]} before {pair[1]}")


def _rule(kind: str, ops: tuple[str, ...], c: Clause, d: DMachine) -> n.Rule:
    """A rule of `kind` over `ops` quoting clause `c`, from its lines: a table row's cells as the row writes them (its
    clause joins them with dashes, which the skill does not say)."""
    text = c.text
    if c.block is not None and c.block.kind == "row":
        text = " | ".join(x.strip() for x in c.block.text.split(" | ")[1:]) or c.text
    return n.Rule(kind, ops, re.sub(r"\s+", " ", text).strip(), d.where(c.start, c.end))


def _names_state(phrase: str, s: DState) -> bool:
    """A phrase names a state: two content words in common, or its leading verb ("choosing" for "Choose …")."""
    shared = content_stems(phrase) & s.topic
    verb = next(iter(content_stems(first_word(s.text[0]))), None) if s.text else None
    return len(shared) >= 2 or (verb is not None and verb in shared)


def _terminate(p: Placer, c: Clause) -> None:
    """"You are done when …": a description of `done`, from its lines."""
    done = p.d.terminals["done"]
    done.docs.append(strip_markup(c.text))
    done.start, done.end = done.start or c.start, c.end if done.start is None else done.end
    p.d.land(c, "done")


def _required_step(p: Placer, c: Clause) -> None:
    """A step that says it is required ("always", "must") is a `required` rule of its state."""
    where = p.d.landings.get(c.index)
    if _REQUIRE.search(strip_markup(c.text)) and where in p.d.states:
        p.d.rules.append(_rule("required", (where,), c, p.d))


def _requirement(p: Placer, c: Clause) -> None:
    """A requirement: an order or a required step when it names one, and a constraint of the states it concerns."""
    text = strip_markup(c.text)
    targets = p.concerned(c)
    pair = p.order_pair(text)
    ops = p.operations(text)
    if pair is not None:
        p.order_rule(c, pair)
    elif len(ops) == 1:
        p.d.rules.append(_rule("required", (ops[0],), c, p.d))
        p.d.land(c, f"rule required {ops[0]}")
    p.constrain(c, targets)


def _prohibition(p: Placer, c: Clause) -> None:
    """A prohibition constrains the prompts of the states it concerns; "never A before B" is also B before A.

    No operation is invented for it to forbid.
    """
    targets = p.concerned(c)
    m = re.search(r"^(.*?)\b(?:before|until)\b(.+)$", prohibited_action(strip_markup(c.text)), re.I)
    pair = p.order_pair(f"{m.group(2)} before {m.group(1)}") if m else None
    if pair is not None:
        p.order_rule(c, pair)
    p.constrain(c, targets)


RULE_HANDLERS: dict[str, Callable[[Placer, Clause], None]] = {
    "terminate": _terminate,
    "step": _required_step,
    "require": _requirement,
    "forbid": _prohibition,
}


def place(d: DMachine, clauses: list[Clause], sections: Sections) -> None:
    """Place rules, constraints and knowledge into the built graph; report opposite orders and foreign code."""
    placer = Placer(d, clauses, sections, Topics.of(d))
    for c in clauses:
        handler = RULE_HANDLERS.get(c.kind)
        if handler is not None:
            handler(placer, c)
    _contradictions(d, clauses)
    _foreign_code(d, clauses)
    _place_knowledge(placer)


def _contradictions(d: DMachine, clauses: list[Clause]) -> None:
    """Two stated orders A before B and B before A: neither can be a rule (SKM318); both stay instructions."""
    orders = {r.ops: r for r in d.rules if r.kind == "order"}
    clash = {ops for ops in orders if ops[::-1] in orders}
    for ops in sorted(clash):
        r = orders[ops]
        if ops < ops[::-1]:
            other = orders[ops[::-1]]
            c = next(c for c in clauses if quote(c) == other.quote)
            first, second = sorted((r.quote, other.quote), key=lambda q: next(
                k.start for k in clauses if quote(k) == q))
            d.problem(codes.CONTRADICTORY_ORDER, f"\"{first}\" and \"{second}\" state opposite orders of "
                                f"`{ops[0]}` and `{ops[1]}`: neither is kept as a rule", c)
    d.rules = [r for r in d.rules if not (r.kind == "order" and r.ops in clash)]


def _foreign_code(d: DMachine, clauses: list[Clause]) -> None:
    """A step that says to run code in a language other than shell: the code stays an instruction (SKM319)."""
    for prev, c in itertools.pairwise(clauses):
        info = c.block.info if c.block is not None else ""
        if c.block is not None and c.block.kind == "code" and c.kind == "knowledge" and info \
                and info not in NOT_BASH and prev.kind == "step" and re.search(r"\b(?:run|execute)\b",
                                                                              prev.text, re.I):
            d.problem(codes.COMMANDS_NOT_SHELL, f"the step runs `{info}` code, which `bash` does not run as it is: "
                                "kept as instructions", c)
            step = d.landings.get(prev.index)
            if step in d.states:
                d.unencoded(step, c, f"`{info}` code the step says to run, which `bash` does not run as it is")


def _place_knowledge(p: Placer) -> None:
    """Each knowledge clause goes to the instructions of the state it concerns most (else the nearest one).

    Ties go to the state nearest the clause, then to the earliest made.
    """
    d = p.d
    # A machine of tool states only keeps its knowledge in their docs (no model reads it, a person does).
    prompted = list(p.topics.prompted) or [s for s in d.order if d.states[s].kind == "tool"]
    if not prompted:
        return
    position = {name: i for i, name in enumerate(prompted)}
    # Guidance informs the states that act: a judge gets it only where no model state shares its words or is near.
    acting = [s for s in prompted if d.states[s].kind == "model"] or prompted
    by_start = sorted((d.states[s].start, position[s], s) for s in acting)
    starts = [start for start, _, _ in by_start]
    lead: Clause | None = None  # the sentence a list or table right after it belongs to ("Example assessments:")
    section_words: dict[tuple[int, int], dict[str, int]] = {}  # per section: the states its words concern
    for c in p.clauses:
        b = c.block
        if b is not None and b.kind in ("para", "item") and strip_markup(c.text).rstrip().endswith(":"):
            lead = c
        elif b is None or b.kind not in ("item", "row") or lead is None or lead.block is None \
                or (b.kind == "item" and b.depth <= lead.block.depth) or c.section != lead.section:
            lead = None
        if c.kind not in ("knowledge", "command", "step", "verify", "branch", "loop") or c.index in d.landings:
            continue
        introduced = d.landings.get(lead.index) if lead is not None and lead is not c else None
        if lead is not None and lead.kind == "branch" and introduced in d.states \
                and d.states[introduced].kind == "judge":  # "If not found, inform the user they need to:"
            introduced = next((e.target for e in d.states[introduced].edges if e.target in position
                               and d.states[e.target].kind != "judge"
                               and d.states[e.target].start <= lead.start <= d.states[e.target].end),
                              introduced)  # the list goes to the arm's action, not to the question
        if introduced in position:  # the list goes where the sentence introducing it went
            d.states[introduced].notes.append(c.text.strip() if c.kind == "command" else strip_markup(c.text))
            d.land(c, introduced)
            continue
        counts = p.topics.overlaps(c.text)
        models = {s: k for s, k in counts.items() if d.states[s].kind == "model"}
        counts = models if max(models.values(), default=0) >= 2 else counts
        top = max(counts.values(), default=0)
        if top >= 2:
            best = min((s for s, k in counts.items() if k == top),
                       key=lambda s: (abs(d.states[s].start - c.start), position[s]))
        else:
            best = _heading_home(p, c, acting, section_words) or _nearest(by_start, starts, c.start)
        d.states[best].notes.append(c.text.strip() if c.kind == "command" else strip_markup(c.text))
        d.land(c, best)


def _heading_home(p: Placer, c: Clause, prompted: list[str], section_words: dict[tuple[int, int], dict[str, int]]
                  ) -> str | None:
    """The state a section of guidance informs, for a sentence sharing too few words with any state: the one its
    heading names ("## Evaluation Rubric" → the state that evaluates), the section's words deciding a tie; None inside
    a section that has states of its own, under the title alone, or where the heading names none."""
    if len(c.section) < 2 or p.section_states(c, prompted):
        return None
    counts = p.topics.overlaps(strip_markup(c.section[-1]))
    if not counts:
        return None
    start, end = p.sections.section(c.start)
    if (start, end) not in section_words:  # once a section (`section_words` keeps it)
        section_words[start, end] = p.topics.overlaps(" ".join(x.text for x in p.clauses if start <= x.start < end))
    words = section_words[start, end]
    top = max(counts.values())
    return max((s for s, k in counts.items() if k == top),
               key=lambda s: (words.get(s, 0), -abs(p.d.states[s].start - c.start)))


def _nearest(by_start: list[tuple[int, int, str]], starts: list[int], line: int) -> str:
    """The state made nearest a line; between two equally near, the one above, then the earliest made."""
    i = bisect.bisect_left(starts, line)
    near = [by_start[j] for j in (i - 1, i) if 0 <= j < len(by_start)]
    distance = min(abs(start - line) for start, _, _ in near)
    first = min(start for start, _, _ in near if abs(start - line) == distance)
    return by_start[bisect.bisect_left(starts, first)][2]  # by_start sorts equal starts by position
