"""The machine under construction, shared by the graph, placement and reads phases.

`DMachine` holds the states (`DState`), their edges (`DEdge`), variables, counters,
terminals, rules, where each clause landed, and the problems found on the way.
The phases fill it in order: `graph` makes every state and edge, `placement`
adds rules, constraints and notes, `reads` sets what each state reads; `emit`
turns it into an AST module. Its records are mutable on purpose: an edge is
made before the state it goes to exists, and is pointed there later.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from skillc.diagnostics import Code
from skillc.frontends.markdown.clauses import Clause, strip_markup
from skillc.frontends.markdown.commands import Part
from skillc.frontends.markdown.names import Namer, condition_slug, content_stems
from skillc.ir.machine import OperationKind as StateKind
from skillc.ir.machine import Outcome
from skillc.syntax import nodes as n

TASK = "task"
DEFAULT_MAX_REVISIONS = 2
DEFAULT_MAX_REPEATS = 3


@attrs.frozen
class Options:
    """Choices of the structural compiler."""

    tools: frozenset[str] = frozenset()  # tools steps may call (`bash`), on top of the front matter's
    max_revisions: int = DEFAULT_MAX_REVISIONS
    max_repeats: int = DEFAULT_MAX_REPEATS
    source: str = "SKILL.md"  # how the machine names the document (relative to the machine file)
    strict: bool = False  # refuse a build with constructs it could not encode (SKM321) instead of marking them


@attrs.define
class DEdge:
    """An edge under construction; `target` None means "whatever comes next"."""

    guard: n.Expr | None
    target: str | None
    assigns: tuple[n.Assign, ...] = ()
    auto: bool = False  # the compiler's own "a failed command goes to fallback", not a sentence of the document


@attrs.define
class DState:
    """A state under construction."""

    name: str
    kind: StateKind
    start: int
    end: int
    text: list[str] = attrs.field(factory=list)
    notes: list[str] = attrs.field(factory=list)
    constraints: list[str] = attrs.field(factory=list)
    writes: list[tuple[str, str | None]] = attrs.field(factory=list)
    edges: list[DEdge] = attrs.field(factory=list)
    reads: list[str] = attrs.field(factory=list)
    wants: list[str] = attrs.field(factory=list)  # variables it should read when they are assigned
    topic: set[str] = attrs.field(factory=set)  # stems for matching knowledge and rules
    tool: str = "bash"  # the tool a tool state calls
    parts: list[Part] = attrs.field(factory=list)  # the argument of a tool state's call
    content: str = ""  # a `write` state's content: the variable it saves
    failure: str = ""  # a tool state's stated failure handling: "", "retry" or "handled"
    options: list[str] = attrs.field(factory=list)  # the menu an `ask_user` state offers (the answer is one of them)
    args: list[tuple[str, str]] = attrs.field(factory=list)  # a call's arguments by name, each a variable (`edit`)


@attrs.define
class DTerminal:
    """A terminal under construction: its outcome, the sentences that describe it, and their lines."""

    outcome: Outcome
    docs: list[str] = attrs.field(factory=list)
    start: int | None = None
    end: int | None = None


@attrs.frozen
class Problem:
    """A finding of the structural compiler, reported by the front end as a diagnostic."""

    code: Code
    message: str
    clause: Clause


@attrs.define
class DMachine:
    """The machine under construction."""

    source: str  # how the machine names the document
    bash_declared: bool  # the front matter (or the options) declare `bash`
    bash: bool  # steps may run commands through `bash`
    states: dict[str, DState] = attrs.field(factory=dict)
    order: list[str] = attrs.field(factory=list)  # states in the order they were made
    steps: list[str] = attrs.field(factory=list)  # states made from steps, in order
    entries: dict[int, str] = attrs.field(factory=dict)  # step ordinal -> entry state
    vars: dict[str, n.TypeExpr] = attrs.field(factory=dict)
    counters: dict[str, int] = attrs.field(factory=dict)
    inits: dict[str, n.Expr] = attrs.field(factory=dict)  # variables with an initial value
    # Command holes the user gives (`input NAME: str`): where `quote()` cannot make a model's text safe.
    inputs: dict[str, str] = attrs.field(factory=dict)
    terminals: dict[str, DTerminal] = attrs.field(factory=dict)
    rules: list[n.Rule] = attrs.field(factory=list)
    landings: dict[int, str] = attrs.field(factory=dict)  # clause index -> where it landed
    problems: list[Problem] = attrs.field(factory=list)
    # States where a construct of the document could not be encoded: runs through them end `review_required`.
    review: dict[str, list[tuple[Clause, str]]] = attrs.field(factory=dict)
    review_flag: str | None = None  # the variable set on the way through those states
    state_names: Namer = attrs.field(factory=lambda: Namer({"fallback", "done"}))
    # A variable never takes an enum label's name (a guard `x == yes` would read the variable `yes`): the labels of
    # yes/no questions and checks are taken from the start, any other enum's when it is declared.
    var_names: Namer = attrs.field(factory=lambda: Namer({TASK, "yes", "no", "passed", "failed"}))
    holes: set[str] = attrs.field(factory=set)  # the placeholders of the document's commands: variables to come

    def state(self, kind: StateKind, base: str, lines: tuple[int, int], topic: str = "") -> DState:
        """A new state named after `base`, made from `lines`, whose topic is the stems of `topic`."""
        s = DState(self.state_names.fresh(base), kind, *lines)
        s.topic = content_stems(topic)
        self.states[s.name] = s
        self.order.append(s.name)
        return s

    def judge(self, base: str, var_base: str, labels: list[str], clause: Clause, prompt: str) -> tuple[DState, str]:
        """A judge state asking `prompt`, writing a new enum variable of `labels`."""
        s = self.state("judge", base, (clause.start, clause.end), prompt)
        var = self.var(var_base, n.EnumType(tuple(labels)))
        s.writes = [(var, None)]
        s.text.append(prompt)
        return s, var

    def holds(self, cond: str, clause: Clause, now: str = "") -> tuple[DState, str]:
        """A yes/no judge of whether a condition holds (`now`: "now", for one asked again after each state), it and
        its variable named after the condition, its negation kept."""
        name = condition_slug(cond)
        when = f" {now}" if now else ""
        return self.judge(f"if_{name}", name, ["yes", "no"], clause,
                          f"Decide whether this holds{when}: {cond}. Answer `yes` or `no`.")

    def var(self, base: str, type_: n.TypeExpr) -> str:
        """A new variable named after `base`."""
        if isinstance(type_, n.EnumType):
            self.var_names.taken.update(type_.labels)
        name = self.var_names.fresh(base)
        self.vars[name] = type_
        return name

    def label_namer(self) -> Namer:
        """A namespace for one enum's labels, none of them a variable's name (a guard `x == name` reads the
        variable: a variable always wins over a label)."""
        return Namer({TASK, "skill_dir", "workdir", *self.vars, *self.counters, *self.inputs, *self.holes})

    def counter(self, base: str, limit: int) -> str:
        """A new counter named after `base`, bounded by `limit` (at least 1)."""
        name = self.var_names.fresh(base)
        self.counters[name] = max(1, limit)
        return name

    def land(self, clause: Clause, where: str) -> None:
        """Record where a clause landed (the first place it was used)."""
        self.landings.setdefault(clause.index, where)

    def terminal(self, name: str, outcome: Outcome, clause: Clause | None = None) -> str:
        """The terminal `name` (made with `outcome` if new), described by `clause` when given."""
        if name not in self.terminals:
            self.state_names.taken.add(name)
            self.terminals[name] = DTerminal(outcome)
        if clause is not None:
            docs = self.terminals[name].docs
            text = strip_markup(clause.text)
            if text not in docs:
                docs.append(text)
        return name

    def where(self, start: int, end: int) -> n.Provenance:
        """`from "SKILL.md":START-END` (just START for one line)."""
        return n.Provenance(self.source, start, end if end != start else None)

    def problem(self, code: Code, message: str, clause: Clause) -> None:
        """Report a finding about a clause."""
        self.problems.append(Problem(code, message, clause))

    def unencoded(self, state: str, clause: Clause, what: str) -> None:
        """A construct the compiler could not encode, met at `state`: runs through it end in review, not success."""
        self.review.setdefault(state, []).append((clause, what))

    def best_match(self, text: str, kinds: Iterable[str] = ("model", "tool", "judge"), keep_verbs: bool = False,
                   among: list[str] | None = None) -> str | None:
        """The state sharing most content words with `text`: the first made, or with `among`, the latest of those."""
        want = content_stems(text) - ({"again", "repeat"} if keep_verbs else {"again", "repeat", "run", "go", "back"})
        best, score = None, 0
        for name in (self.order if among is None else reversed(among)):
            s = self.states[name]
            if s.kind not in kinds:
                continue
            overlap = len(want & s.topic)
            if overlap > score:
                best, score = name, overlap
        return best

    def latest_output(self) -> str | None:
        """The variable holding the standard output of the latest command made so far."""
        for name in reversed(self.order):
            s = self.states[name]
            if s.kind == "tool":
                return next((v for v, r in s.writes if r == "stdout"), None)
        return None


def eq(var: str, label: str) -> n.Expr:
    """`var == label`."""
    return n.BinOp("==", n.Name(var), n.Name(label))


def below(counter: str, limit: int) -> n.Expr:
    """`counter < limit`."""
    return n.BinOp("<", n.Name(counter), n.IntLit(limit))


def bump(counter: str) -> tuple[n.Assign, ...]:
    """`counter += 1`."""
    return (n.Assign(counter, "+=", n.IntLit(1)),)


def failed(tool: DState) -> n.Expr:
    """`status != 0` for a tool state's exit status."""
    status = next(v for v, r in tool.writes if r in ("exit_code",))
    return n.BinOp("!=", n.Name(status), n.IntLit(0))
