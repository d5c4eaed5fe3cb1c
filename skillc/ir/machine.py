"""The machine IR: M = (Q, q0, V, op, E, F, τ) with rules, fully resolved and typed.

Every name in the IR refers to something that exists: states (including
terminals and the fallback) by name, variables by name, tools by name.
Fragment instances are already expanded: their states and private variables
carry dotted names (`save.write`), `State.instance` records where they came
from, and `Machine.instances` maps each instance (nested ones as `a.b`) to its
entry state.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal, TypeAlias, TypedDict, get_args

import attrs

from skillc.diagnostics import Span
from skillc.ir.expr import Expr
from skillc.ir.types import Type

if TYPE_CHECKING:
    from skillc.ir.toolkit import Capability

_span = attrs.field(default=None, eq=False, repr=False, kw_only=True)

#: A terminal's outcome category.
Outcome: TypeAlias = Literal["success", "partial", "failed"]
#: The states that do work (an operation), and every kind of state.
OperationKind: TypeAlias = Literal["model", "judge", "tool"]
StateKind: TypeAlias = Literal[OperationKind, "terminal", "fallback"]
#: param: a fragment parameter; place: `skill_dir` / `workdir`, read-only strings the runtime sets
VariableKind: TypeAlias = Literal["input", "var", "counter", "param", "place"]

OUTCOMES: Final[tuple[Outcome, ...]] = get_args(Outcome)
FALLBACK = "fallback"


@attrs.frozen
class Variable:
    """An `input`, `var` or `counter`; counters are ints that start at 0 and have a maximum."""

    name: str
    type: Type
    kind: VariableKind
    max: int | None = None
    init: Expr | None = None
    span: Span | None = _span

    @property
    def is_input(self) -> bool:
        return self.kind == "input"

    @property
    def is_counter(self) -> bool:
        return self.kind == "counter"

    @property
    def defined_at_start(self) -> bool:
        """Inputs, counters, places and initialised variables have a value before the first state."""
        return self.kind in ("input", "counter", "place") or self.init is not None


@attrs.frozen
class Tool:
    """An entry of the interface table."""

    name: str
    params: tuple[tuple[str, Type], ...]
    results: tuple[tuple[str, Type], ...]
    span: Span | None = _span
    #: The MCP server that serves the tool (`from mcp "docs"`, a name of `[tool.skillc.mcp]`); None: not MCP.
    mcp: str | None = None
    #: The tool's name on that server (`as "get-page"`); None: its own name.
    remote: str | None = None

    @property
    def mcp_name(self) -> str:
        """The name the MCP server knows the tool by."""
        return self.remote if self.remote is not None else self.name

    def param(self, name: str) -> Type | None:
        return dict(self.params).get(name)

    def result(self, name: str) -> Type | None:
        return dict(self.results).get(name)


@attrs.frozen
class Assignment:
    """`var = value`, `var += value` or `var -= value` on an edge."""

    var: str
    op: str
    value: Expr
    span: Span | None = _span


@attrs.frozen
class Edge:
    """An ordered, guarded transition; `guard` None is the default edge."""

    source: str
    index: int
    guard: Expr | None
    target: str
    assigns: tuple[Assignment, ...] = ()
    span: Span | None = _span

    @property
    def is_default(self) -> bool:
        return self.guard is None


@attrs.frozen
class ToolCall:
    tool: str
    args: tuple[tuple[str, Expr], ...]
    span: Span | None = _span


@attrs.frozen
class Provenance:
    """The lines of the skill document a state or rule came from."""

    file: str
    start: int
    end: int

    def __str__(self) -> str:
        return f"{self.file}:{self.start}-{self.end}" if self.end != self.start else f"{self.file}:{self.start}"


@attrs.frozen
class State:
    """A state. `kind` is model, judge, tool, terminal or fallback."""

    name: str
    kind: StateKind
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    prompt: str | None = None
    doc: str | None = None
    call: ToolCall | None = None
    bindings: tuple[tuple[str, str], ...] = ()
    edges: tuple[Edge, ...] = ()
    outcome: Outcome | None = None
    requires: tuple[str, ...] = ()
    #: A terminal's evidence predicates (`requires exists("r.md"), status == 0`): bool expressions the runtime
    #: evaluates on arrival, over variables and the world (`exists`, `file`); a failing one routes to the fallback.
    predicates: tuple[Expr, ...] = ()
    provenance: Provenance | None = None
    instance: str | None = None
    span: Span | None = _span
    item_spans: dict[str, Span] = attrs.field(factory=dict, eq=False, repr=False, kw_only=True)

    def span_of(self, item: str) -> Span | None:
        """The span of an item of the state, else the state's own.

        Items: `reads`, `writes`, `call`, `prompt`, and one name of a list such as
        `reads:answer` or `requires:answer` (found in its statement, kept under `in:` + item, on first use).
        """
        found = self.item_spans.get(item)
        if found is not None:
            return found
        statement = self.item_spans.get("in:" + item)
        if statement is None:
            return self.span
        found = self.item_spans[item] = statement.narrow(item.partition(":")[2])
        return found

    @property
    def is_terminal(self) -> bool:
        """Terminals and the fallback end a run."""
        return self.kind in ("terminal", "fallback")

    @property
    def successors(self) -> tuple[str, ...]:
        return tuple(e.target for e in self.edges)


@attrs.frozen
class Rule:
    """A control requirement with the sentence it encodes.

    `performers[i]` are the states that perform `ops[i]`: the state itself, every
    state of a fragment instance, or every tool state calling a tool. `fragment`
    and `instance` name the fragment a rule was instantiated from and the
    instance it belongs to (None for the machine's own rules).
    """

    kind: str
    ops: tuple[str, ...]
    quote: str
    performers: tuple[tuple[str, ...], ...]
    provenance: Provenance | None = None
    fragment: str | None = None
    instance: str | None = None
    outcome: Outcome | None = None  # `ends OP in OUTCOME`: the outcome every run through OP ends with
    span: Span | None = _span

    @property
    def from_fragment(self) -> bool:
        """True for a rule a fragment brought in; its quotation comes from the fragment's own text."""
        return self.fragment is not None



class Summary(TypedDict):
    """`Machine.summary()`: the counts users ask about first, and the states by kind."""

    states: int
    transitions: int
    variables: int
    counters: int
    inputs: int
    tools: int
    rules: int
    kinds: dict[str, int]


@attrs.frozen(hash=False)
class Machine:
    """A resolved machine."""

    name: str
    doc: str | None
    source: str | None
    tools: dict[str, Tool]
    types: dict[str, Type]
    variables: dict[str, Variable]
    start: str
    states: dict[str, State]
    rules: tuple[Rule, ...]
    path: str | None = None
    instances: dict[str, str] = attrs.Factory(dict)
    #: The capability set (`allow "Read", "Bash(git diff:*)"`); empty: no list, every declared tool allowed.
    allowed: tuple[Capability, ...] = ()
    #: The kit tools the machine took with `use tools std` (their signatures are in `tools` too).
    kit: tuple[str, ...] = ()
    #: A fragment seen as a machine (`check.fragment_machine`): its exits, success terminals that deliver nothing.
    exits: tuple[str, ...] = ()
    #: Where the `allow` lines are, for diagnostics that cite them.
    allow_spans: tuple[Span, ...] = attrs.field(default=(), eq=False, repr=False)
    #: Where the `source` line is, for diagnostics about the skill document it names.
    source_span: Span | None = attrs.field(default=None, eq=False, repr=False)
    span: Span | None = _span

    @property
    def fallback(self) -> State:
        return self.states[FALLBACK]

    @property
    def source_path(self) -> Path | None:
        """The skill document the machine was built from: its `source`, relative to the machine's file; None
        without either."""
        if not (self.source and self.path):
            return None
        return Path(self.path).parent / self.source

    def terminals(self) -> Iterator[State]:
        """Terminal states, the fallback included."""
        return (s for s in self.states.values() if s.is_terminal)

    def edges(self) -> Iterator[Edge]:
        for s in self.states.values():
            yield from s.edges

    def summary(self) -> Summary:
        """Counts users ask about first."""
        kinds: dict[str, int] = {}
        for s in self.states.values():
            kinds[s.kind] = kinds.get(s.kind, 0) + 1
        return {
            "states": len(self.states),
            "transitions": sum(len(s.edges) for s in self.states.values()),
            "variables": len(self.variables),
            "counters": sum(1 for v in self.variables.values() if v.is_counter),
            "inputs": sum(1 for v in self.variables.values() if v.is_input),
            "tools": len(self.tools),
            "rules": len(self.rules),
            "kinds": kinds,
        }
