"""Judging an aligned transcript against the machine's rules and its success evidence.

The alignment (`skillc.improve.refine.align`) says which state performed each event. An operation `OP` of a
rule is *performed* at an event aligned to one of `OP`'s states (`Rule.performers`), or, when `OP` names a
declared tool, at a call of that tool (a forbidden tool usually has no state at all). Per rule:

- `required OP`: a run that ended `success` performed `OP` somewhere (reported at the last event);
- `order A before B`: the first event performing `B` comes after an event performing `A`;
- `forbid OP`: no event performs `OP` (the first one is reported, the rest counted);
- `ends OP in OUTCOME`: a run that performed `OP` ended with `OUTCOME` (unfinished runs are not judged);
- `reads` rules are about values, not events: they are not judged here.

A rule of a fragment instance (`Rule.instance`) is judged only on a run that entered the instance. An operation
is *observable* on a transcript when one of its states is a tool state or it is a tool; a model or judge state
is observable only on a skillc machine-mode trace whose steps name states of this machine. A rule with an operation
the transcript cannot show is listed as not judged (SKM865), never as broken.

The success evidence: a run that ended `success` hands over (the trace's `evidence`) a value for every variable
that some success terminal `requires`; when every success terminal misses one, the terminal missing the fewest
is named. A Claude Code log has no evidence channel, so it is not judged on evidence.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final, Literal

import attrs

from skillc.improve.events import DevTrace, Event
from skillc.ir.machine import Machine, Rule

ViolationKind = Literal["required", "order", "forbid", "ends", "evidence"]
#: The rule kinds judged on events (`reads` is a property of values, proved by the checker).
JUDGED_KINDS: Final = ("required", "order", "forbid", "ends")
#: How long an event's excerpt may be.
EXCERPT: Final = 100


@attrs.frozen
class Violation:
    """One rule a transcript broke: which, where (event index and line), and why."""

    kind: ViolationKind
    rule: int | None  # the rule's index in `Machine.rules` (None: the success evidence)
    head: str  # the rule as written without its quotation: `order pick before write`, or `evidence`
    quote: str | None
    event: int | None  # the event that broke it (None: a transcript without events)
    line: int  # that event's line in the transcript file (0: unknown)
    excerpt: str
    message: str
    also: int = 0  # later events that broke it too (forbid)

    def to_json(self) -> dict[str, object]:
        """The violation as the JSON report writes it."""
        return {"kind": self.kind, "rule": self.head, "quote": self.quote, "event": self.event, "line": self.line,
                "excerpt": self.excerpt, "message": self.message, "also": self.also}


@attrs.frozen
class Unjudged:
    """A rule the transcript cannot show, and why."""

    rule: int
    head: str
    reason: str


@attrs.frozen
class Judgement:
    """Every violation of one transcript, and the rules that could not be judged on it."""

    violations: tuple[Violation, ...]
    unjudged: tuple[Unjudged, ...]


def rule_head(rule: Rule) -> str:
    """A rule as written, without its quotation."""
    ops = rule.ops
    if rule.kind == "order" and len(ops) == 2:
        return f"order {ops[0]} before {ops[1]}"
    if rule.kind == "reads" and len(ops) == 2:
        return f"reads {ops[0]} from {ops[1]}"
    if rule.kind == "ends" and ops:
        return f"ends {ops[0]} in {rule.outcome}"
    return " ".join((rule.kind, *ops))


def excerpt(event: Event | None) -> str:
    """A short, one-line picture of an event: the tool and its arguments, or the start of the model's text."""
    if event is None:
        return ""
    if event.kind == "tool":
        text = f"{event.tool} {json.dumps(dict(event.args), ensure_ascii=False, default=str)}"
    else:
        text = " ".join(event.text.split()) or json.dumps(event.output or {}, ensure_ascii=False, default=str)
    return text if len(text) <= EXCERPT else text[:EXCERPT - 1] + "…"


class _Judge:
    """The facts of one aligned transcript that every rule looks at."""

    def __init__(self, machine: Machine, trace: DevTrace, states: Sequence[str | None]) -> None:
        self.machine = machine
        self.trace = trace
        self.states = states
        # A machine-mode trace names the state of every step: model and judge states are seen, if they are this
        # machine's (a trace of another machine is aligned by its events, like a native one).
        self.machine_mode = trace.format == "skillc" and trace.mode in (None, "machine") and all(
            e.state in machine.states for e in trace.events)

    def performs(self, event: int, op: int, rule: Rule) -> bool:
        """Whether event `event` performs operation number `op` of `rule`."""
        name = rule.ops[op]
        state = self.states[event]
        performers = rule.performers[op] if op < len(rule.performers) else ()
        if state is not None and state in performers:
            return True
        ev = self.trace.events[event]
        return name in self.machine.tools and ev.kind == "tool" and (ev.tool or "").casefold() == name.casefold()

    def events_of(self, op: int, rule: Rule) -> list[int]:
        """Every event that performs operation `op` of `rule`, in order."""
        return [i for i in range(len(self.states)) if self.performs(i, op, rule)]

    def hidden(self, op: int, rule: Rule) -> str | None:
        """Why the transcript cannot show operation `op` of `rule` (None: it can)."""
        if self.machine_mode:
            return None
        name = rule.ops[op]
        if name in self.machine.tools:
            return None
        performers = rule.performers[op] if op < len(rule.performers) else ()
        states = [self.machine.states[s] for s in performers if s in self.machine.states]
        if any(s.kind == "tool" for s in states):
            return None
        kinds: list[str] = sorted({s.kind for s in states}) or ["no"]
        where = {"chat": "a chat transcript", "claude-code": "a Claude Code log", "codex": "a Codex session"}.get(
            self.trace.format, f"a {self.trace.mode or 'native'}-mode trace")
        return f"`{name}` is performed by {' and '.join(kinds)} states only, which {where} does not show"

    def entered(self, instance: str) -> bool:
        """Whether the run performed any state of a fragment instance."""
        prefix = instance + "."
        return any(s is not None and s.startswith(prefix) for s in self.states)

    def at(self, index: int | None) -> tuple[int, str]:
        """The line and excerpt of event `index`."""
        if index is None or not 0 <= index < len(self.trace.events):
            return 0, ""
        event = self.trace.events[index]
        return event.line, excerpt(event)


def judge(machine: Machine, trace: DevTrace, states: Sequence[str | None]) -> Judgement:
    """The violations of one transcript whose events are aligned to `states` (one entry per event)."""
    facts = _Judge(machine, trace, states)
    violations: list[Violation] = []
    unjudged: list[Unjudged] = []
    for index, rule in enumerate(machine.rules):
        if rule.kind not in JUDGED_KINDS:
            continue
        head = rule_head(rule)
        hidden = next((why for op in range(len(rule.ops)) if (why := facts.hidden(op, rule)) is not None), None)
        if hidden is not None:
            unjudged.append(Unjudged(index, head, hidden))
            continue
        if rule.instance is not None and not facts.entered(rule.instance):
            continue
        found = _rule(facts, index, rule, head)
        if found is not None:
            violations.append(found)
    evidence = _evidence(facts)
    if evidence is not None:
        violations.append(evidence)
    return Judgement(tuple(violations), tuple(unjudged))


def _violation(facts: _Judge, kind: ViolationKind, index: int | None, rule: Rule | None, head: str, event: int | None,
               message: str, also: int = 0) -> Violation:
    line, text = facts.at(event)
    return Violation(kind, index, head, rule.quote if rule is not None else None, event, line, text, message, also)


def _rule(facts: _Judge, index: int, rule: Rule, head: str) -> Violation | None:
    """The violation of one judged rule, or None when the transcript keeps it."""
    trace, kind = facts.trace, rule.kind
    last = len(trace.events) - 1 if trace.events else None
    if kind == "required":
        if trace.outcome != "success" or facts.events_of(0, rule):
            return None
        return _violation(facts, "required", index, rule, head, last,
                          f"the run ended `success` after {len(trace.events)} event{'s' * (len(trace.events) != 1)} "
                          f"without performing `{rule.ops[0]}`")
    if kind == "order" and len(rule.ops) == 2:
        firsts = facts.events_of(0, rule)
        seconds = facts.events_of(1, rule)
        early = next((e for e in seconds if not firsts or firsts[0] > e), None)
        if early is None:
            return None
        return _violation(facts, "order", index, rule, head, early,
                          f"`{rule.ops[1]}` ran at event {early} before any `{rule.ops[0]}`")
    if kind == "forbid":
        found = facts.events_of(0, rule)
        if not found:
            return None
        more = f" (and at {len(found) - 1} later event{'s' * (len(found) != 2)})" if len(found) > 1 else ""
        return _violation(facts, "forbid", index, rule, head, found[0],
                          f"the forbidden `{rule.ops[0]}` ran at event {found[0]}{more}", also=len(found) - 1)
    if kind == "ends" and rule.outcome is not None:
        found = facts.events_of(0, rule)
        if not found or trace.outcome in ("unfinished", rule.outcome):
            return None
        return _violation(facts, "ends", index, rule, head, found[0],
                          f"the run performed `{rule.ops[0]}` at event {found[0]} and ended `{trace.outcome}`, not "
                          f"`{rule.outcome}`")
    return None


def _evidence(facts: _Judge) -> Violation | None:
    """The success-evidence violation, or None (not a success, no success terminal, or no evidence channel)."""
    trace = facts.trace
    if trace.outcome != "success" or trace.format in ("claude-code", "codex"):  # no evidence channel
        return None
    terminals = [t for t in facts.machine.terminals() if t.kind == "terminal" and t.outcome == "success"]
    if not terminals:
        return None
    missing = [(tuple(r for r in t.requires if trace.evidence.get(r) is None), t.name) for t in terminals]
    fewest, terminal = min(missing, key=lambda m: len(m[0]))
    if not fewest:
        return None
    last = len(trace.events) - 1 if trace.events else None
    names = ", ".join(f"`{r}`" for r in fewest)
    return _violation(facts, "evidence", None, None, "evidence", last,
                      f"the run ended `success` without {names}, which the success terminal `{terminal}` requires")
