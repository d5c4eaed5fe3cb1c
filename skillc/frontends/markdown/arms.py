"""Arms: where each arm of a condition goes once its judge is made.

An arm's action becomes a model state (doing what a referenced section says,
when it names one), ends the run in a terminal (a stop clause, with its `ends`
rule), goes back to an earlier step, counted ("… again", "return to step 2"),
continues with whatever comes next, or jumps to a later step ("continue to
step 5"), which is resolved once every step has a state.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from skillc.frontends.markdown.clauses import Clause, _section_role, is_imperative, strip_markup
from skillc.frontends.markdown.draft import DEdge, DMachine, DState, Options, below, bump
from skillc.frontends.markdown.names import content_stems, slug
from skillc.frontends.markdown.phrases import FORWARD, REFERENCE, again, max_times, quote, stop_clause
from skillc.frontends.markdown.units import Sections
from skillc.syntax import nodes as n

NEXT = None  # an edge target filled in when the following unit is known


@attrs.define
class Forward:
    """A "continue to step N" edge, pointed at step N's state once every step has one."""

    edge: DEdge
    number: int
    clause: Clause


class Arms:
    """Makes the targets of condition arms, and keeps the forward references until every step has a state."""

    def __init__(self, d: DMachine, clauses: list[Clause], options: Options, sections: Sections) -> None:
        """Arms of the conditions of one document."""
        self.d = d
        self.clauses = clauses
        self.options = options
        self.sections = sections
        self.forward: list[Forward] = []
        self.commands: dict[int, Clause] = {}  # arm clause index -> the fence it runs ("If C:" + a fence)
        # Makes the state of an arm that runs a command or asks the user: (entry, last state) or None for a model.
        self.acting: Callable[[str, str, Clause, tuple[int, int]], tuple[str, DState] | None] = lambda *_: None

    def action(self, text: str, clause: Clause, exits: list[DEdge], condition: str = "",
                repeats: int | None = None) -> str | Forward:
        """The target of a branch arm: a state doing `text`, a terminal, or '' (an edge in `exits`).

        An arm that goes back ("… again", "return to step N") may do so `repeats` times (default `--max-repeats`).
        An arm that goes to a step further down ("continue to step 5") is a `Forward`, resolved at the end.
        """
        plain = strip_markup(text).strip().rstrip(".")
        stop = stop_clause(plain, condition)
        terminal = None
        if stop is not None:
            plain = stop.before
            terminal = self.d.terminal(stop.terminal, stop.outcome, clause)
        forward = FORWARD.search(plain)
        ahead = int(forward.group(1)) if forward is not None and int(forward.group(1)) not in self.d.entries else None
        if forward is not None and ahead is not None:
            plain = plain[: forward.start()].strip(" ,;").removesuffix(" and").removesuffix(" then").strip(" ,;")
        # A jump back, not an action that merely sounds like one ("restart the service").
        back = re.search(r"\b(?:go back|return to|start over|restart (?:from|at|with)|continue (?:to|with) step)\b.*$",
                         plain, re.I)
        back_target = None
        if back is None and again(plain):
            phrase = next((p for p in re.split(r",|\band\b|\bthen\b", plain) if again(p)), plain)
            phrase = re.sub(r"\b(?:again|retry|rerun|re-run)\b", "", phrase)
            # "… again" repeats a step made before (not another arm's action), the latest that fits best.
            back_target = self.d.best_match(phrase, ("model", "tool"), keep_verbs=True, among=self.d.steps) \
                or self.d.best_match(plain + " " + condition, ("model", "tool"), among=self.d.steps)
        if back and not re.match(r"^(?:return|go back)\s+(?:the|it)\b", plain[back.start():], re.I):
            back_target = self._back_target(plain[back.start():], condition)
            plain = plain[: back.start()].strip(" ,;").removesuffix(" and").removesuffix(" then").strip(" ,;")
        if back_target is not None and not plain:
            plain = strip_markup(text[back.start():] if back else text).strip().rstrip(".")
        if clause.index in self.commands and not plain:
            plain = "Run the commands"  # "If C:" and a fence: the arm runs it
        if re.fullmatch(r"(?:please\s+)?(?:skip\b.*|(?:continue|proceed|move on|go on)(?:\s+(?:to|with)\s+(?:the\s+)?"
                        r"(?:next|following|rest|remaining|step|phase|procedure|workflow)\b.*|\s+(?:normally|as usual|"
                        r"anyway|as planned|as before|directly|with it|with step \d+))?)", plain, re.I) or not plain:
            return self._go_on(terminal, ahead, clause, exits)
        return self._action_state(plain, text, clause, exits, condition, repeats, terminal, back_target, ahead)

    def _go_on(self, terminal: str | None, ahead: int | None, clause: Clause, exits: list[DEdge]) -> str | Forward:
        """An arm that does nothing itself: it ends, continues with the next unit, or jumps to a later step."""
        if terminal is not None:
            return terminal
        e = DEdge(None, NEXT)
        if ahead is not None:
            f = Forward(e, ahead, clause)
            self.forward.append(f)
            return f
        exits.append(e)
        return ""  # resolved through the edge placed in `exits`

    def _action_state(self, plain: str, text: str, clause: Clause, exits: list[DEdge], condition: str,
                      repeats: int | None, terminal: str | None, back_target: str | None, ahead: int | None) -> str:
        """A model state doing an arm's action, then ending, going back, or going on."""
        lines = (clause.start, clause.end)
        referred = self.reference(plain)
        if referred and self._actionable(referred):  # "treat it as described under X (below)": do what X says
            plain = " ".join(strip_markup(c.text).rstrip(".") + "." for c in referred).rstrip(".")
            lines = (referred[0].start, referred[-1].end)
        acting = self.acting(plain.rstrip(":"), text, clause, lines)
        if acting is not None:  # it runs a command or asks the user: a tool state
            entry, s = acting
        else:
            s = self.d.state("model", slug(plain), lines, plain + " " + condition)
            s.text.append(plain[0].upper() + plain[1:].rstrip(":") + ".")
            s.writes = [(self.d.var(f"{s.name}_result", n.NamedType("str")), None)]
            entry = s.name
        for c in referred:
            self.d.land(c, s.name)
            if not self._actionable(referred):
                s.constraints.append(strip_markup(c.said))
        if terminal is not None:
            s.edges.append(DEdge(None, terminal))
            if clause.block is None or clause.block.kind != "code":  # the stop clause, as a rule the checker proves
                self.d.rules.append(n.Rule("ends", (s.name,), quote(clause), self.d.where(clause.start, clause.end),
                                           self.d.terminals[terminal].outcome))
        elif back_target is not None:
            limit = repeats or max_times(text) or self.options.max_repeats
            counter = self.d.counter(f"{s.name}_rounds", limit)
            s.edges.append(DEdge(below(counter, limit), back_target, bump(counter)))
            e = DEdge(None, NEXT)
            s.edges.append(e)
            exits.append(e)
        else:
            e = DEdge(None, NEXT)
            s.edges.append(e)
            if ahead is not None:
                self.forward.append(Forward(e, ahead, clause))
            else:
                exits.append(e)
        return entry

    def reference(self, text: str) -> list[Clause]:
        """The clauses of the section a "(below)" / "(above)" reference names, best title match; [] when none."""
        m = REFERENCE.search(text) or re.search(r"(\w[\w ]{2,40}?)\s*\((?:below|above)\)", text)
        if m is None:
            return []
        want = content_stems(m.group(1))
        best, score = None, 0
        for h in self.sections.headings:
            overlap = len(want & content_stems(h.text))
            if overlap > score:
                best, score = h, overlap
        if best is None:
            return []
        start, end = self.sections.section(best.start)
        return [c for c in self.clauses if start < c.start < end and c.kind not in ("command",)
                and c.index not in self.d.landings]

    @staticmethod
    def _actionable(clauses: list[Clause]) -> bool:
        """A referenced section says what to do (imperative sentences), rather than rules or background."""
        return bool(clauses) and _section_role(clauses[0].section) not in ("rules", "knowledge") \
            and all(is_imperative(c.text) for c in clauses)

    def _back_target(self, phrase: str, condition: str) -> str | None:
        """The state a "go back to …" phrase names: a step number, the top, or the best match."""
        m = re.search(r"\bsteps?\s+(\d+)", phrase, re.I)
        if m and int(m.group(1)) in self.d.entries:
            return self.d.entries[int(m.group(1))]
        if re.search(r"\b(?:top|start|beginning|first step)\b", phrase, re.I) and self.d.order:
            return self.d.order[0]  # terminals are not in `order`: this is the start state
        return self.d.best_match(phrase + " " + condition) or (self.d.order[0] if self.d.order else None)

    def arm(self, j: DState, guard: n.Expr | None, action: str, clause: Clause, exits: list[DEdge],
             condition: str = "", repeats: int | None = None) -> str:
        """Route `guard` of judge `j` to the arm's action; returns its state ('' when the arm just goes on)."""
        before = len(exits)
        target = self.action(action, clause, exits, condition, repeats)
        if clause.index in self.commands and j.kind == "judge":  # "If C:" and its fence are one construct
            j.end = max(j.end, self.commands[clause.index].end)
        if isinstance(target, Forward):
            target.edge.guard = guard
            j.edges.append(target.edge)
            return ""
        if target:
            j.edges.append(DEdge(guard, target))
        else:  # the arm continues with whatever comes next: the edge is one of the exits
            exits[before].guard = guard
            j.edges.append(exits[before])
        return target

    def otherwise(self, j: DState, clause: Clause, exits: list[DEdge], condition: str = "") -> None:
        """The default edge of a condition's judge: the `Otherwise, …` arm."""
        self.d.land(clause, j.name)
        j.end = max(j.end, clause.end)
        other = re.sub(r"^(?:otherwise|else)\b,?\s*", "", strip_markup(clause.text), flags=re.I)
        self.arm(j, None, other, clause, exits, condition)

