"""`skillc test`: explore a machine with generated outputs, steering toward uncovered transitions.

Each run picks an uncovered transition (state or edge, by `--coverage`),
follows a shortest path to it, and makes every edge on the way fire by asking
Z3 for values of the state's writes (or tool results) that satisfy the edge's
guard and none of the guards before it; everything else is drawn at random
(type-correct). Every run is checked for:

- termination within the bound the counters imply;
- the rules: required operations before a success terminal, orders, prohibitions;
- no fallback except by an explicit edge (outputs are valid and tools stand in,
  so the runtime itself must never have to give up);
- terminal evidence defined on arrival.

A failing run is minimised (the shortest of up to 30 re-runs of its plan with
other random choices that fails the same property) and kept as a replayable
trace.
"""

from __future__ import annotations

import json
import math
import random
import string
from collections import deque
from pathlib import Path
from typing import Any

import attrs
import z3

from skillc.check.smt import Encoder, float_value, solver
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import FALLBACK, Machine, State
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.base import BaseExecutor, Response
from skillc.runtime.score import passages


@attrs.define
class Failure:
    prop: str
    message: str
    trace: str | None


@attrs.define
class TestReport:
    runs: int = 0
    states: set = attrs.Factory(set)
    edges: set = attrs.Factory(set)
    total_states: int = 0
    total_edges: int = 0
    failures: list[Failure] = attrs.Factory(list)

    def coverage(self, kind: str) -> float:
        if kind == "states":
            return len(self.states) / max(1, self.total_states)
        return len(self.edges) / max(1, self.total_edges)


def random_value(t: T.Type, rng: random.Random, pool: list[str] | None = None) -> Any:
    """A type-correct value (JSON data); strings are often taken from `pool` (labels, constants, values seen)."""
    if isinstance(t, T.OptionalT):
        return None if rng.random() < 0.2 else random_value(t.inner, rng, pool)
    if isinstance(t, T.StrT):
        if pool and rng.random() < 0.5:
            return rng.choice(pool)
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(0, 6)))
    if isinstance(t, T.IntT):
        return rng.randint(-3, 10)
    if isinstance(t, T.FloatT):
        return round(rng.uniform(-10, 10), 2)
    if isinstance(t, T.BoolT):
        return rng.random() < 0.5
    if isinstance(t, T.EnumT):
        return rng.choice(t.labels)
    if isinstance(t, T.ListT):
        return [random_value(t.item, rng, pool) for _ in range(rng.randint(0, 3))]
    if isinstance(t, T.MapT):
        keys = [random_value(T.STR, rng, pool) for _ in range(rng.randint(0, 6))]
        return {k: random_value(t.value, rng, pool) for k in keys}
    if isinstance(t, T.RecordT):
        return {name: random_value(ft, rng, pool) for name, ft in t.fields}
    return None


def _fix(e: ir.Expr, env: dict, free: set[str]) -> ir.Expr:
    """The expression with every non-free scalar variable replaced by its current value."""
    if isinstance(e, ir.Var) and e.name not in free and e.name in env:
        value = env[e.name]
        base = T.strip_optional(e.type)
        if isinstance(base, T.EnumT) and isinstance(value, str):
            return ir.Label(base, value=value)
        if value is None or isinstance(value, (bool, int, float, str)):
            return ir.Const(e.type, value=value)
        return e
    changes = {}
    for a in attrs.fields(type(e)):
        v = getattr(e, a.name)
        if isinstance(v, ir.Expr):
            changes[a.name] = _fix(v, env, free)
        elif isinstance(v, tuple) and v and isinstance(v[0], ir.Expr):
            changes[a.name] = tuple(_fix(x, env, free) for x in v)
    return attrs.evolve(e, **changes) if changes else e


class Steering(BaseExecutor):
    """Answers with values that make planned edges fire; random values elsewhere."""

    name = "steering"

    def __init__(self, machine: Machine, plan: dict[str, int] | deque, rng: random.Random,
                 timeout_ms: int = 300) -> None:
        self.machine = machine
        self.plan = plan  # state -> edge index (first visit), or a deque of (state, edge index) to follow
        self.rng = rng
        self.timeout_ms = timeout_ms
        self.env: dict[str, Any] = {}
        self.constants = sorted({lab for v in machine.variables.values()
                                 if isinstance(T.strip_optional(v.type), T.EnumT)
                                 for lab in T.strip_optional(v.type).labels}
                                | {n.value for st in machine.states.values() for e in st.edges if e.guard is not None
                                   for n in ir.walk(e.guard) if isinstance(n, ir.Const) and isinstance(n.value, str)})

    def pool(self) -> list[str]:
        """Strings worth trying: labels, constants of guards, and string values of the run so far."""
        return self.constants + [v for v in self.env.values() if isinstance(v, str)]

    def _planned(self, state: str) -> int | None:
        if isinstance(self.plan, deque):  # a path to follow step by step
            if self.plan and self.plan[0][0] == state:
                return self.plan.popleft()[1]
            return None
        return self.plan.pop(state, None)

    def _solve(self, st: State, free: list[str]) -> dict[str, Any] | None:
        index = self._planned(st.name)
        if index is None:
            return None
        enc = Encoder(self.machine)
        edges = st.edges[: index + 1]
        guards = [_fix(e.guard, self.env, set(free)) if e.guard is not None else None for e in edges]
        enc.begin(guards)
        formula = [enc.fires(g) if g is not None else z3.BoolVal(True) for g in guards]
        s = solver(self.timeout_ms)
        s.add(*enc.domain)
        s.add(formula[-1], *[z3.Not(f) for f in formula[:-1]])
        if s.check() != z3.sat:
            return None
        model = s.model()
        out = {}
        for name in free:
            out[name] = self._value(enc, model, name)
        return out

    def _value(self, enc: Encoder, model, name: str) -> Any:
        t = self.machine.variables[name].type
        base = T.strip_optional(t)
        mode = enc.string_mode.get(name)
        try:
            if isinstance(base, T.StrT) and mode == "len" and f"len({name})" in enc.vars:
                return "x" * model.eval(enc.vars[f"len({name})"].term, model_completion=True).as_long()
            if isinstance(base, T.StrT) and mode == "eq":
                code = model.eval(enc._coded(name).term, model_completion=True).as_long()
                known = {c: text for text, c in enc.codes.items()}
                return known.get(code, "".join(self.rng.choice("qwz") for _ in range(5)))
            if name not in enc.vars or not isinstance(base, (T.StrT, T.IntT, T.BoolT, T.EnumT, T.FloatT)):
                return random_value(t, self.rng, self.pool())
            v = enc.vars[name]
            value = model.eval(v.term, model_completion=True)
            if isinstance(base, T.EnumT):
                return v.labels[value.as_long()]
            if isinstance(base, T.BoolT):
                return z3.is_true(value)
            if isinstance(base, T.IntT):
                return value.as_long()
            if isinstance(base, T.FloatT):
                number = float_value(model, v.term)  # NaN and infinities are no JSON output: draw instead
                return number if math.isfinite(number) else random_value(t, self.rng)
            from skillc.check.smt import _unescape

            return _unescape(value.as_string())
        except (AttributeError, z3.Z3Exception, IndexError):
            return random_value(t, self.rng)

    def complete(self, request) -> Response:
        st = self.machine.states[request.state]
        values = self._solve(st, list(st.writes)) or {}
        pool = self.pool()
        out = {w: values[w] if w in values else random_value(self.machine.variables[w].type, self.rng, pool)
               for w in st.writes}
        self.env.update(out)
        return Response(json.dumps(out))

    def stands_in(self, state: str) -> bool:
        return True

    def tool_result(self, state: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        st = self.machine.states[state]
        bound = [v for v, _ in st.bindings]
        values = self._solve(st, bound) or {}
        t = self.machine.tools[tool]
        pool = self.pool()
        result = {r: random_value(rt, self.rng, pool) for r, rt in t.results}
        for var, res in st.bindings:
            if var in values:
                result[res] = values[var]
        for var, res in st.bindings:
            self.env[var] = result[res]
        return result


def _path_to(machine: Machine, goal: str) -> list[tuple[str, int]] | None:
    """Edges (state, index) of a shortest path from start to `goal`."""
    prev: dict[str, tuple[str, int]] = {}
    queue = deque([machine.start])
    seen = {machine.start}
    while queue:
        s = queue.popleft()
        if s == goal:
            path = []
            while s != machine.start:
                path.append(prev[s])
                s = prev[s][0]
            return path[::-1]
        for e in machine.states[s].edges:
            if e.target not in seen:
                seen.add(e.target)
                prev[e.target] = (s, e.index)
                queue.append(e.target)
    return None


def step_bound(machine: Machine) -> int:
    """An upper bound on the steps of a run implied by the counters (capped)."""
    bound = len(machine.states) + 1
    for v in machine.variables.values():
        if v.is_counter:
            bound *= (v.max or 0) + 1
            if bound > 100_000:
                return 100_000
    return bound


def explore(machine: Machine, source_text: str, examples: int = 200, seed: int = 0, coverage: str = "transitions",
            traces: Path | None = None) -> TestReport:
    """Run up to `examples` steered runs; stop early once coverage is complete."""
    rng = random.Random(seed)
    report = TestReport(total_states=sum(1 for s in machine.states.values()),
                        total_edges=sum(len(s.edges) for s in machine.states.values()))
    bound = step_bound(machine)
    targets = [(s.name, e.index) for s in machine.states.values() for e in s.edges]
    for i in range(examples):
        if report.coverage(coverage) >= 1.0:
            break
        plan: dict[str, int] = {}
        uncovered = [t for t in targets if t not in report.edges] if coverage == "transitions" else \
            [(s, None) for s in machine.states if s not in report.states]
        if uncovered:
            src, index = uncovered[rng.randrange(len(uncovered))] if i % 3 == 2 else uncovered[0]
            path = _path_to(machine, src)
            if path is not None:
                plan = {s: k for s, k in path}
                if index is not None:
                    plan[src] = index
        trace = (traces / f"run{i}.jsonl") if traces is not None else None
        result = _one_run(machine, source_text, dict(plan), rng, bound, trace)
        report.runs += 1
        report.states.update(result.visited)
        report.states.add(result.terminal)
        report.edges.update(result.edges)
        problems = check_run(machine, result, bound)
        if problems:
            result = _minimise(machine, source_text, plan, bound, result, problems[0][0], traces, i)
            for prop, message in check_run(machine, result, bound):
                report.failures.append(Failure(prop, message, result.trace))
    return report


def _one_run(machine, source_text, plan, rng, bound, trace):
    executor = Steering(machine, plan, rng)
    interp = _Watched(machine, executor, ToolBox(), RunOptions(retries=0, max_steps=bound, trace=trace), source_text)
    return interp.run({v.name: random_value(v.type, rng) for v in machine.variables.values()
                       if v.is_input and v.init is None})


def _minimise(machine, source_text, plan, bound, failed, prop: str, traces: Path | None, i: int, tries: int = 30):
    """The shortest run, among the failing run and re-runs of its plan with other random choices, that fails the
    same property; its trace is kept as the replayable witness."""
    best = failed
    for k in range(tries):
        trace = (traces / f"run{i}-min{k}.jsonl") if traces is not None else None
        candidate = _one_run(machine, source_text, dict(plan), random.Random(10_000 * (i + 1) + k), bound, trace)
        if candidate.steps < best.steps and any(p == prop for p, _ in check_run(machine, candidate, bound)):
            best = candidate
        elif trace is not None:
            trace.unlink(missing_ok=True)
    return best


class _Watched(Interpreter):
    """An interpreter that shows the steering executor the variables as each step begins."""

    stop_at: str | None = None
    seen_env: dict | None = None

    def _step(self, st, env, step):
        self.executor.env = dict(env)
        if st.name == self.stop_at and not self.executor.plan:
            self.seen_env = dict(env)
            raise _Reached
        return super()._step(st, env, step)


class _Reached(Exception):
    """The followed path arrived where it was going."""


def follow(machine: Machine, path: list[str], repeat: int = 1, seed: int = 0, max_steps: int = 10_000):
    """Drive a run along a path of states (its edges repeated `repeat` times).

    Returns ("reached", env) with the variables as the path's last state is
    entered, or ("run", result) when the run ended first. This is how a
    checker's witness is replayed: a definite-assignment path arrives with the
    variable unset, an unpaid cycle followed again and again never ends.
    """
    edges = []
    for a, b in zip(path, path[1:]):
        index = next(e.index for e in machine.states[a].edges if e.target == b)
        edges.append((a, index))
    plan = deque(edges * repeat)
    executor = Steering(machine, plan, random.Random(seed))
    interp = _Watched(machine, executor, ToolBox(), RunOptions(retries=0, max_steps=max_steps), "")
    interp.stop_at = path[-1]
    try:
        result = interp.run({v.name: random_value(v.type, random.Random(seed)) for v in machine.variables.values()
                             if v.is_input and v.init is None})
    except _Reached:
        return "reached", interp.seen_env
    return "run", result


def check_run(machine: Machine, result, bound: int) -> list[tuple[str, str]]:
    """The properties every explored run must have; returns (property, message) for each violation."""
    problems = []
    if result.error and "step limit" in result.error:
        problems.append(("termination", f"no terminal within {bound} steps"))
    elif result.terminal == FALLBACK and result.error:
        problems.append(("fallback", f"the runtime gave up although every output was valid: {result.error}"))
    if result.missing_evidence:
        problems.append(("evidence", f"`{result.terminal}` reached without {', '.join(result.missing_evidence)}"))
    visited = list(result.visited)
    for rule in machine.rules:
        if rule.instance is None:
            problems += _rule_problems(rule, visited, result.outcome == "success")
            continue
        # A fragment's rule holds for every passage through its instance, however the run entered it.
        for lo, hi, leaves_to in passages(visited, rule.instance + ".", result.terminal):
            problems += _rule_problems(rule, visited[lo:hi], leaves_to is not None and leaves_to != FALLBACK)
    return problems


def _rule_problems(rule, visited: list[str], finished: bool) -> list[tuple[str, str]]:
    """Violations of one rule by a sequence of visited states; `finished`: it ended where `required` counts."""
    first = [next((k for k, s in enumerate(visited) if s in set(p)), None) for p in rule.performers]
    where = f" in `{rule.instance}`" if rule.instance else ""
    if rule.kind == "required" and finished and first[0] is None:
        return [("rule", f'`{rule.ops[0]}` never ran before success{where}: "{rule.quote}"')]
    if rule.kind == "order" and first[1] is not None and (first[0] is None or first[0] > first[1]):
        return [("rule", f'`{rule.ops[1]}` ran before `{rule.ops[0]}`{where}: "{rule.quote}"')]
    if rule.kind == "forbid" and first[0] is not None:
        return [("rule", f'forbidden `{rule.ops[0]}` ran{where}: "{rule.quote}"')]
    return []
