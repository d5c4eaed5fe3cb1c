"""Reads: what each state of the finished graph reads, decided by definite assignment.

A state reads the task and the outputs of its predecessors (and the variables
it wants) that are assigned on every path into it, so the machine satisfies
definite assignment by construction. "Assigned on every path" is the checker's
own analysis (`skillc.check.dataflow.solve`), run on the draft's graph as a
machine skeleton; a success or partial terminal requires the deliverable the
same analysis says is sure to exist there.
"""

from __future__ import annotations

import attrs

from skillc.check.dataflow import solve
from skillc.frontends.markdown.draft import TASK, DMachine, DState
from skillc.frontends.markdown.units import Sections
from skillc.ir import expr as ir
from skillc.ir import machine as m
from skillc.ir.types import IntT, StrT
from skillc.syntax import nodes as n

# What a variable holds when it is the result of a step (a command's output, a user's answer, a model's result).
_RESULTS = (None, "stdout", "answer")


@attrs.frozen(hash=False)
class Assigned:
    """The draft's variables assigned on every path into each reached state and terminal, as the checker's masks."""

    variables: tuple[str, ...]  # the draft's variables, in declaration order
    bits: dict[str, int]
    defined: dict[str, int]  # reached state -> mask of the variables assigned on entry

    def has(self, name: str, var: str) -> bool:
        """Whether `var` is sure to be assigned on entry to `name` (never, for a state no run reaches)."""
        mask = self.defined.get(name)
        return mask is not None and bool(mask >> self.bits[var] & 1)

    def at(self, name: str) -> tuple[str, ...]:
        """The draft's variables sure to be assigned on entry to `name`, in declaration order."""
        return tuple(v for v in self.variables if self.has(name, v))


def skeleton(d: DMachine) -> m.Machine:
    """The draft's graph as a machine: variables, writes and edges, enough for the checker's dataflow."""
    variables = {TASK: m.Variable(TASK, StrT(), "input")}
    for v in d.vars:
        variables[v] = m.Variable(v, StrT(), "var", init=ir.Const(StrT(), value="") if v in d.inits else None)
    for c, limit in d.counters.items():
        variables[c] = m.Variable(c, IntT(), "counter", max=limit)
    states = {name: _state(s) for name, s in d.states.items()}
    for name, t in d.terminals.items():
        states[name] = m.State(name, "terminal", outcome=t.outcome)
    states[m.FALLBACK] = m.State(m.FALLBACK, "fallback")
    return m.Machine("draft", None, d.source, {}, {}, variables, d.order[0], states, ())


def _state(s: DState) -> m.State:
    """One state of the skeleton: its writes and its edges, with the counters they bump."""
    edges = tuple(m.Edge(s.name, i, None, e.target or m.FALLBACK,
                         tuple(m.Assignment(a.target, a.op, ir.Const(IntT(), value=1)) for a in e.assigns))
                  for i, e in enumerate(s.edges))
    return m.State(s.name, s.kind, writes=tuple(dict.fromkeys(v for v, _ in s.writes)), edges=edges)


def assigned(d: DMachine) -> Assigned:
    """Definite assignment over the draft's graph, from the checker's analysis."""
    flow = solve(skeleton(d))
    return Assigned(tuple(d.vars), flow.bits, {name: flow.defined[name] for name in flow.reached})


def infer_reads(d: DMachine, sections: Sections) -> Assigned:
    """Set every state's reads: the task, predecessors' outputs and wanted variables assigned on every path in."""
    flow = assigned(d)
    preds: dict[str, set[str]] = {s: set() for s in d.states}
    for name, s in d.states.items():
        for e in s.edges:
            if e.target in d.states:
                preds[e.target].add(name)
    position = {name: i for i, name in enumerate(d.order)}
    section_of = {name: sections.procedure(d.states[name].start) for name in d.steps}
    for name, s in d.states.items():
        before = sorted(preds[name], key=position.__getitem__)
        if s.kind == "tool":
            _tool_reads(d, s, before, flow)
            continue
        candidates = [*_from_predecessors(d, before), *s.wants]
        # The results of the earlier steps of the same procedure (section), when they are sure to exist.
        here = sections.procedure(s.start)
        candidates += [v for step in d.steps if section_of[step] == here and step != name
                       for v, r in d.states[step].writes if r in _RESULTS]
        s.reads = [TASK] + [v for v in dict.fromkeys(candidates) if flow.has(name, v) and v not in d.counters]
    return flow


def _tool_reads(d: DMachine, s: DState, before: list[str], flow: Assigned) -> None:
    """A tool state reads the variables of its argument; a question to the user shows what the step before made."""
    if s.tool == "ask_user":  # the question shows the latest result (what a judge before it decided on)
        context = [v for p in before if d.states[p].kind != "judge"
                   for v, r in d.states[p].writes if r in _RESULTS and flow.has(s.name, v)]
        context = context or [v for p in before if d.states[p].kind == "judge" for v in d.states[p].reads
                              if v != TASK and not isinstance(d.vars.get(v), n.EnumType) and flow.has(s.name, v)]
        if context:
            s.parts = [*s.parts, "\n\n", ("var", context[-1])]
    s.reads = list(dict.fromkeys([*(p[1] for p in s.parts if isinstance(p, tuple) and p[0] in ("var", "quote")),
                                  *([s.content] if s.content else []), *(v for _, v in s.args)]))


def _from_predecessors(d: DMachine, before: list[str]) -> list[str]:
    """What the predecessors made: their writes; for a judge, what it decided on and a label that says more."""
    out: list[str] = []
    for p in before:
        ps = d.states[p]
        if ps.kind == "judge":  # what the decision was made on, and the label when it says more than yes/no
            out += [v for v in ps.reads if v != TASK]
            labels = d.vars[ps.writes[0][0]]
            if isinstance(labels, n.EnumType) and len(labels.labels) > 2:
                out.append(ps.writes[0][0])
        else:
            out += [v for v, _ in ps.writes]
    return out


def evidence(d: DMachine, flow: Assigned, terminal: str) -> list[str]:
    """What a success or partial terminal requires: the deliverable when a command produced it.

    The latest command output (or user answer) sure to exist on arrival, beside the latest other
    result; without command outputs, the last two results made on every path. Every file saved on every
    path in (a `write`'s result) is required too: the files are the deliverables.
    """
    order = list(d.vars)
    sure = [v for v in flow.at(terminal) if v != d.review_flag and v not in d.inits]  # an initial value proves nothing
    tools = [s for s in d.states.values() if s.kind == "tool"]
    produced = {v for s in tools for v, r in s.writes if r in ("stdout", "answer", "sha256")}
    delivered = [v for v in sure if v in produced]
    if not delivered:
        return sure[-2:]
    rest = [v for v in sure if v not in produced and not any(v == w for st in tools for w, _ in st.writes)]
    files = {w for st in tools for w, r in st.writes if r == "sha256"}  # what a `write` state saved
    saved = [v for v in sure if v in files]
    return sorted({delivered[-1], *rest[-1:], *saved}, key=order.index)
