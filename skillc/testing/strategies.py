"""Hypothesis strategies for machines, outputs and runs.

    from skillc.testing import machines, outputs_for, runs

    @given(machines(max_states=6))
    def test_my_property(text): ...
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from hypothesis import strategies as st

from skillc.ir import types as T
from skillc.ir.machine import Machine, State, Tool
from skillc.runtime.executors.base import BaseExecutor, Response
from skillc.runtime.interpreter import Interpreter, RunOptions
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.prompts import Request

if TYPE_CHECKING:
    from skillc.runtime.interpreter import RunResult

_SCALARS = [("note", "str", '""'), ("count", "int", "0"), ("flag", "bool", "false"),
            ("level", "enum { low, high }", "low")]


def _atom(draw: st.DrawFn, var: str, t: str) -> str:
    """A comparison of `var` (of scalar type `t`) for a guard."""
    if t == "int":
        return f"{var} {draw(st.sampled_from(['<', '>', '==', '!=']))} {draw(st.integers(-2, 5))}"
    if t == "bool":
        return draw(st.sampled_from([var, f"not {var}"]))
    if t == "str":
        return draw(st.sampled_from([f'{var} == ""', f'{var} != "x"', f"len({var}) > {draw(st.integers(0, 3))}"]))
    return f"{var} == {draw(st.sampled_from(['low', 'high']))}"


@st.composite
def machines(draw: st.DrawFn, min_states: int = 2, max_states: int = 8, loops: bool = True, nested: bool = True,
             kinds: tuple[Literal["model", "judge", "tool"], ...] = ("model", "judge", "tool"),
             structured: bool = False) -> str:
    """Source text of a machine that passes `skillc check`, built names first, then edges into them.

    Every variable starts initialised (so definite assignment holds), `done` also
    requires the input `origin` (a value no model wrote, so success rests on more
    than model text whatever states run, SKM270), every loop
    has its own counter guarded below its maximum (so loops are paid for), each
    state's guards test different variables (so none shadows another), and
    every judge routes each of its labels differently.
    """
    n = draw(st.integers(min_states, max_states))
    names = [f"s{i}" for i in range(n)]
    state_kinds = [draw(st.sampled_from(kinds)) for _ in names]
    lines = ["machine generated {", "  tool run(x: str) -> (out: str, code: int)", '  input origin: str = ""']
    if structured:
        lines = ["record Item {", "  name: str", "  qty: int", "}", ""] + lines
    for var, t, init in _SCALARS:
        lines.append(f"  var {var}: {t} = {init}")
    if structured:
        lines.append("  var items: map[str, Item] = {}")
    judges = [i for i, k in enumerate(state_kinds) if k == "judge"]
    for i in judges:
        lines.append(f"  var j{i}: enum {{ yes, no, maybe }} = maybe")
    loops_spec: list[tuple[int, int, int]] = []  # (from, to, max)
    if loops and n > 1:
        for _ in range(draw(st.integers(0, 2 if nested else 1))):
            src = draw(st.integers(0, n - 1))
            dst = draw(st.integers(0, src))
            loops_spec.append((src, dst, draw(st.integers(1, 3))))
    for k, (_, _, top) in enumerate(loops_spec):
        lines.append(f"  counter c{k} max {top}")
    lines += ["  start s0", ""]
    scalar_types = {v: t for v, t, _ in _SCALARS}
    all_edges: list[str] = []
    for i, (name, kind) in enumerate(zip(names, state_kinds)):
        nxt = names[i + 1] if i + 1 < n else "done"
        reads = draw(st.lists(st.sampled_from(list(scalar_types)), max_size=2, unique=True))
        body = []
        if kind == "tool":
            reads = sorted(set(reads) | {"note"})
            body += [f"reads {', '.join(reads)}", "call run(x: note)", "writes note = out, count = code"]
        else:
            if reads:
                body.append(f"reads {', '.join(reads)}")
            if kind == "judge":
                body.append(f"writes j{i}")
            else:
                writes = draw(st.lists(st.sampled_from(list(scalar_types) + (["items"] if structured else [])),
                                       min_size=1, max_size=3, unique=True))
                body.append(f"writes {', '.join(writes)}")
            body.append(f'prompt "Step {i}: do the work."')
        used: set[str] = set()
        edges = []
        for k, (src, dst, top) in enumerate(loops_spec):
            if src == i:
                var = draw(st.sampled_from([v for v in scalar_types if v not in used]))
                used.add(var)
                edges.append(f"when {_atom(draw, var, scalar_types[var])} and c{k} < {top} "
                             f"-> {names[dst]} {{ c{k} += 1 }}")
        if kind == "judge":
            later = names[i + 1 :] + ["done", "gave_up"]
            edges.append(f"when j{i} == yes -> {draw(st.sampled_from(later))}")
            edges.append(f"when j{i} == no -> {draw(st.sampled_from(later))}")
        else:
            for _ in range(draw(st.integers(0, 2))):
                free = [v for v in scalar_types if v not in used]
                if not free:
                    break
                var = draw(st.sampled_from(free))
                used.add(var)
                target = draw(st.sampled_from(names[i + 1 :] + ["done", "gave_up", "fallback"]))
                edges.append(f"when {_atom(draw, var, scalar_types[var])} -> {target}")
        edges.append(f"-> {nxt}")
        all_edges += edges
        lines.append(f"  {kind} {name} {{")
        lines += [f"    {line}" for line in body + edges]
        lines += ["  }", ""]
    lines.append("  terminal done: success { requires note, origin }")
    if any(e.split("->")[1].split()[0] == "gave_up" for e in all_edges):
        lines.append("  terminal gave_up: partial")
    lines += ["  fallback", '  rule required s0 "Always begin with the first step."', "}"]
    return "\n".join(lines) + "\n"


def values_of(t: T.Type, valid: bool = True) -> st.SearchStrategy[Value]:
    """Values of a type (JSON data), or values that are not of it."""
    if not valid:
        return st.one_of(st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2)).filter(
            lambda v: bool(__import__("skillc.runtime.values", fromlist=["check_value"]).check_value(v, t)))
    if isinstance(t, T.OptionalT):
        return st.one_of(st.none(), values_of(t.inner))
    if isinstance(t, T.StrT):
        return st.text(max_size=12)
    if isinstance(t, T.IntT):
        return st.integers(-5, 50)
    if isinstance(t, T.FloatT):
        return st.floats(-100, 100, allow_nan=False)
    if isinstance(t, T.BoolT):
        return st.booleans()
    if isinstance(t, T.EnumT):
        return st.sampled_from(t.labels)
    if isinstance(t, T.ListT):
        return st.lists(values_of(t.item), max_size=3)
    if isinstance(t, T.MapT):
        return st.dictionaries(st.text(min_size=1, max_size=4), values_of(t.value), max_size=3)
    if isinstance(t, T.RecordT):
        return st.fixed_dictionaries({name: values_of(ft) for name, ft in t.fields})
    return st.none()


def outputs_for(machine: Machine, state: State, valid: bool = True) -> st.SearchStrategy[Object]:
    """A model/judge output for a state: its write set with values of the right types (or, on request, not)."""
    good = st.fixed_dictionaries({w: values_of(machine.variables[w].type) for w in state.writes})
    if valid:
        return good
    bad_key = st.sampled_from(list(state.writes)) if state.writes else st.nothing()
    return st.one_of(
        good.flatmap(lambda d: bad_key.flatmap(lambda k: values_of(machine.variables[k].type, valid=False)
                                               .map(lambda v: {**d, k: v}))),
        good.map(lambda d: {**d, "unexpected": 1}),
        good.flatmap(lambda d: bad_key.map(lambda k: {x: v for x, v in d.items() if x != k})),
    )


def tool_results_for(machine: Machine, state: State) -> st.SearchStrategy[Object]:
    """Type-correct results of the tool a state calls."""
    if state.call is None:
        raise ValueError(f"state `{state.name}` calls no tool")
    tool = machine.tools[state.call.tool]
    return st.fixed_dictionaries({name: values_of(t) for name, t in tool.results})


@st.composite
def runs(draw: st.DrawFn, machine: Machine, max_steps: int = 500) -> RunResult:
    """A run of the machine through the scripted path, every output and tool result drawn by Hypothesis."""
    class Drawn(BaseExecutor):
        """Model and judge outputs drawn by Hypothesis."""

        name = "hypothesis"

        def complete(self, request: Request) -> Response:
            st_ = machine.states[request.state]
            return Response(json.dumps(draw(outputs_for(machine, st_))))

    class DrawnTools:
        """Every tool state's results drawn by Hypothesis (a `ToolSource`)."""

        def missing(self, machine: Machine) -> list[str]:
            return []

        def result(self, state: str, tool: Tool, args: Object) -> Object:
            return draw(tool_results_for(machine, machine.states[state]))

    inputs = {v.name: draw(values_of(v.type)) for v in machine.variables.values() if v.is_input and v.init is None}
    return Interpreter(machine, Drawn(), DrawnTools(), RunOptions(retries=0, max_steps=max_steps)).run(inputs)
