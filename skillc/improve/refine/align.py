"""Alignment: which state of the machine realised each event of a development trace.

Each event is *reused* (an existing state of the same kind performed it), *new* (no state performs it: the
edit step adds one) or *ignored* (it realises no operation of the skill, e.g. a native turn that only chose
the next tool, or the closing `finish`). The choice is deterministic: candidates are scored by tool name
(a tool event needs a tool state calling the same tool), argument shape (the same argument names; the
command's first word against the literal text of the state's call), the similarity of the state's
instructions to the event's text, and whether the state is reachable from the position the trace has
reached (preferred). When the two best candidates are within `MARGIN`, an optional `judge` (an LLM through
skillc's executors, see `model_judge`) picks among them.

An alignment is rejected (SKM820) when the edges it implies — between consecutive aligned states that
the machine does not connect — would let a run bypass a state that a `required` or `order` rule needs:
the rules are re-checked as graph facts (skillc.check.rules) on the machine with those edges added.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import attrs

from skillc.check.graph import reachable, successors
from skillc.check.rules import check_rules
from skillc.diagnostics import Diagnostic, make
from skillc.improve import codes
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.ir import expr as ir
from skillc.ir.machine import Edge, Machine, State
from skillc.runtime.executors.base import ExecutorError
from skillc.runtime.interpreter import json_answer
from skillc.runtime.prompts import Request

if TYPE_CHECKING:
    from skillc.runtime.executors.base import Executor

Action = Literal["reuse", "new", "ignore"]
#: A score at or above this reuses the state; below it the event is new (tool) or ignored (model).
THRESHOLD = 0.5
#: Two candidates this close are ambiguous: the judge (when there is one) decides.
MARGIN = 0.1
#: Keys of a native / prompt-only turn's parsed action: such a model event only chooses the next step.
PROTOCOL_KEYS = frozenset({"action", "args", "outcome", "evidence"})

#: Picks one of the candidate state names for an event, or None to keep the deterministic choice.
Judge = Callable[[Event, Sequence[State]], "str | None"]


@attrs.frozen
class Decision:
    """How one event was aligned, with the score and the reason, for the report."""

    index: int
    action: Action
    state: str | None  # the state reused, or the name proposed for a new one
    score: float
    reason: str
    judged: bool = False  # the judge chose among ambiguous candidates


@attrs.frozen
class Aligned:
    """The alignment of one trace, every decision behind it, and why it was rejected (if it was)."""

    trace: DevTrace
    alignment: Alignment
    decisions: tuple[Decision, ...]
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        """No rule would be bypassed."""
        return not self.diagnostics

    @property
    def new(self) -> dict[str, tuple[int, ...]]:
        """Each proposed new state and the events it realises."""
        out: dict[str, list[int]] = {}
        for d in self.decisions:
            if d.action == "new" and d.state is not None:
                out.setdefault(d.state, []).append(d.index)
        return {k: tuple(v) for k, v in out.items()}


def words(text: str) -> set[str]:
    """Lower-case word tokens of a text (for similarity)."""
    return {w for w in re.findall(r"[a-z0-9_%.>/-]+", text.lower()) if w not in {"-", "."}}


def similarity(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard similarity of two token sets (0 when both are empty)."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 0.0


def _literals(e: ir.Expr) -> str:
    """The string constants of an expression, in order (the fixed text of a command)."""
    return " ".join(str(n.value) for n in ir.walk(e) if isinstance(n, ir.Const) and isinstance(n.value, str))


def verb(value: object) -> str | None:
    """The first word of a string argument (`cat` in `cat answer.txt`), the operation it names."""
    if not isinstance(value, str):
        return None
    found = re.match(r"\s*([A-Za-z_][\w-]*)", value)
    return found.group(1).lower() if found else None


def _first_str(args: Mapping[str, object]) -> object:
    """The first string-valued argument of an event (its command, typically)."""
    return next((v for v in args.values() if isinstance(v, str)), None)


def tool_score(state: State, event: Event) -> tuple[float, str]:
    """How well a tool state matches a tool event (0 when it calls another tool)."""
    # Case aside: a Claude Code log calls `Bash` where a machine declares `bash`.
    if state.call is None or state.call.tool.casefold() != (event.tool or "").casefold():
        return 0.0, "another tool"
    names = {k for k, _ in state.call.args}
    shape = 0.3 if names == set(event.args) else 0.15 if set(event.args) <= names else 0.0
    fixed = " ".join(_literals(v) for _, v in state.call.args)
    ours, theirs = verb(fixed), verb(_first_str(event.args))
    text = similarity(words(fixed), words(" ".join(str(v) for v in event.args.values())))
    # A call with no fixed text (`bash(command: plan)`) can run any command: it cannot disagree on the verb.
    score = shape + 0.3 * text + (0.3 if ours and ours == theirs else 0.25 if not fixed.strip() else 0.0)
    score += 0.1 * similarity(words(state.prompt or state.doc or ""), words(event.text))
    if ours and theirs and ours != theirs:
        score *= 0.3  # a different command is a different operation
        return score, f"`{state.call.tool}` runs `{ours}` here, the event runs `{theirs}`"
    return score, f"same tool `{event.tool}`" + (f", same command `{ours}`" if ours and ours == theirs else "")


def _values(event: Event) -> Mapping[str, object]:
    """The values a model event wrote (protocol keys of a native turn excluded)."""
    return {k: v for k, v in (event.output or {}).items() if k not in PROTOCOL_KEYS}


def model_score(state: State, event: Event) -> tuple[float, str]:
    """How well a model or judge state matches a model event: the values it wrote and its text."""
    if state.kind not in ("model", "judge"):
        return 0.0, "not a model state"
    wrote = set(_values(event))
    keys = similarity(wrote, state.writes) if wrote else 0.0
    text = similarity(words(state.prompt or state.doc or ""), words(event.text))
    return 0.7 * keys + 0.3 * text, f"writes {len(wrote & set(state.writes))} of `{state.name}`'s variables"


def new_name(machine: Machine, event: Event, taken: Mapping[str, str]) -> str:
    """A fresh state name for a new operation: the tool and its command's verb (`bash_cat`)."""
    key = _new_key(event)
    if key in taken:
        return taken[key]
    if event.kind == "tool":
        base = "_".join(p for p in (event.tool or "tool", verb(_first_str(event.args))) if p)
    else:  # after what it writes, but never the variable's own name (states and variables share a namespace)
        base = next(iter(_values(event)), "model") + "_step"
    base = re.sub(r"\W", "_", base).strip("_").lower() or "step"
    name, i = base, 2
    used = set(machine.states) | set(taken.values())
    while name in used:
        name, i = f"{base}_{i}", i + 1
    return name


def _new_key(event: Event) -> str:
    """Events with the same key are one new operation (the same command run twice is one state)."""
    if event.kind == "tool":
        return json.dumps(["tool", event.tool, sorted(event.args), verb(_first_str(event.args))])
    return json.dumps(["model", sorted(_values(event))])


def _candidates(machine: Machine, event: Event) -> list[tuple[float, State, str]]:
    """Every state of the event's kind with its score, best first (ties keep the machine's order)."""
    scorer = tool_score if event.kind == "tool" else model_score
    scored = [(*scorer(st, event), st) for st in machine.states.values() if not st.is_terminal]
    ranked = [(s, st, why) for s, why, st in scored if s > 0]
    return sorted(ranked, key=lambda x: -x[0])


def _decide(machine: Machine, event: Event, index: int, near: set[str], judge: Judge | None,
            taken: dict[str, str], only_near: bool) -> Decision:
    """Align one event: reuse the best candidate (reachable ones preferred), or mark it new or ignored."""
    if event.state is not None and event.state in machine.states:
        return Decision(index, "reuse", event.state, 1.0, "the trace names the state that performed it")
    if event.kind == "model" and not _values(event) and event.output is not None:
        return Decision(index, "ignore", None, 0.0, "a turn that only chose the next step")
    ranked = [(s + (0.1 if st.name in near else 0.0), st, why) for s, st, why in _candidates(machine, event)
              if not only_near or st.name in near]
    ranked.sort(key=lambda x: -x[0])
    if ranked and ranked[0][0] >= THRESHOLD:
        close = [st for s, st, _ in ranked if ranked[0][0] - s < MARGIN]
        if judge is not None and len(close) > 1:
            picked = judge(event, close)
            if picked is not None and picked in {st.name for st in close}:
                return Decision(index, "reuse", picked, ranked[0][0], "the judge chose among " +
                                ", ".join(f"`{st.name}`" for st in close), judged=True)
        score, st, why = ranked[0]
        return Decision(index, "reuse", st.name, round(score, 3), why)
    best = round(ranked[0][0], 3) if ranked else 0.0
    if event.kind == "model" and not _values(event):
        return Decision(index, "ignore", None, best, "no model state's instructions match its text")
    name = new_name(machine, event, taken)
    taken.setdefault(_new_key(event), name)
    return Decision(index, "new", name, best, "no state performs it" if not ranked else
                    f"the best candidate `{ranked[0][1].name}` scores {best} < {THRESHOLD}")


def align(machine: Machine, trace: DevTrace, *, judge: Judge | None = None, only_reachable: bool = False) -> Aligned:
    """Align every event of `trace` to `machine` (see the module docstring); `only_reachable` is the realignment."""
    succ = successors(machine)
    position: str | None = None
    taken: dict[str, str] = {}
    decisions = []
    for i, event in enumerate(trace.events):
        near = reachable(succ, succ.get(position, []) if position else [machine.start])
        if position is None:
            near.add(machine.start)
        d = _decide(machine, event, i, near, judge, taken, only_reachable)
        decisions.append(d)
        if d.action == "reuse" and d.state is not None:
            position = d.state
    alignment = Alignment(trace.id, tuple(d.state if d.action != "ignore" else None for d in decisions))
    found = tuple(bypasses(machine, alignment))
    return Aligned(trace, alignment, tuple(decisions), found)


def unobserved_ahead(machine: Machine, targets: Iterable[str], goal: str | None = None) -> set[str]:
    """States reached from `targets` passing only through model and judge states (turns a trace may not show)."""
    seen = set(targets)
    queue = list(seen)
    while queue:
        st = machine.states[queue.pop()]
        if st.kind in ("model", "judge") and st.name != goal:
            for t in st.successors:
                if t not in seen:
                    seen.add(t)
                    queue.append(t)
    return seen


def implied_edges(machine: Machine, alignment: Alignment) -> list[tuple[str, str]]:
    """Edges the alignment needs and the machine lacks: consecutive aligned states (the start first) that are not
    connected directly or through unobserved model and judge states."""
    path = [s for s in alignment.states if s is not None and s in machine.states]
    missing: list[tuple[str, str]] = []
    for a, b in zip([machine.start, *path], path):
        targets = [a] if a == machine.start and b is path[0] else machine.states[a].successors
        if b not in unobserved_ahead(machine, targets, b) and (a, b) not in missing:
            missing.append((a, b))
    return missing


def with_edges(machine: Machine, added: Iterable[tuple[str, str]]) -> Machine:
    """The machine with default edges `a -> b` appended (a graph fact only: for the rule checks)."""
    states = dict(machine.states)
    for a, b in added:
        st = states[a]
        states[a] = attrs.evolve(st, edges=(*st.edges, Edge(a, len(st.edges), None, b)))
    return attrs.evolve(machine, states=states)


def bypasses(machine: Machine, alignment: Alignment) -> Iterator[Diagnostic]:
    """SKM820 for each rule that holds on the machine but breaks once the alignment's implied edges exist."""
    added = implied_edges(machine, alignment)
    if not added:
        return
    before = {(d.code, d.message) for d in check_rules(machine)}
    for d in check_rules(with_edges(machine, added)):
        if (d.code, d.message) not in before:
            edges = ", ".join(f"{a} -> {b}" for a, b in added)
            yield make(codes.ALIGNMENT_BYPASSES_RULE, f"aligning this trace would add {edges}: {d.message}",
                       d.span, label=d.label, witness=d.witness,
                       hint="the trace skips a state a rule needs; it is dropped unless a realignment avoids it")


def model_judge(executor: Executor) -> Judge:
    """A judge that asks a model (a skillc executor) which candidate state performed an event."""
    def judge(event: Event, candidates: Sequence[State]) -> str | None:
        """Ask once; an unusable reply keeps the deterministic choice."""
        names = [st.name for st in candidates]
        lines = [f"- {st.name} ({st.kind}): {st.prompt or st.doc or ''}".strip() for st in candidates]
        text = ("Which step of the procedure performed this event? Reply with one JSON object "
                '{"state": NAME}.\nEvent: ' + json.dumps(event.to_json(), ensure_ascii=False, default=str)
                + "\nSteps:\n" + "\n".join(lines))
        schema = {"type": "object", "properties": {"state": {"type": "string", "enum": names}}, "required": ["state"]}
        try:
            reply = executor.complete(Request("align", "judge", ({"role": "user", "content": text},), schema))
            picked = json_answer(reply.text).get("state")
        except (ExecutorError, ValueError, AttributeError, TypeError):
            return None
        return picked if picked in names else None

    return judge
