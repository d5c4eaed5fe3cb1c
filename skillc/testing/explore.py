"""`skillc test`: explore a machine with generated outputs, steering toward uncovered transitions.

Each run picks an uncovered transition (state or edge, by `--coverage`),
follows a shortest path to it, and makes every edge on the way fire by asking
Z3 for values of the state's writes (or tool results) that satisfy the edge's
guard and none of the guards before it; everything else is drawn at random
(type-correct). Every run is checked for:

- termination within the bound the counters imply;
- the rules: required operations before a success terminal, orders, prohibitions;
- no fallback except by an explicit edge (outputs are valid and tools stand in,
  so the runtime itself must never have to give up; the world stands in too: a
  terminal's success predicates are taken to hold, as no real tool wrote anything);
- terminal evidence defined on arrival.

A failing run is minimised (the shortest of up to 30 re-runs of its plan with
other random choices that fails the same property) and kept as a replayable
trace.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import string
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import z3

from skillc.check.smt import Encoder, decode, solver
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import FALLBACK, Machine, State, Tool
from skillc.ir.printexpr import show_expr
from skillc.runtime.executors.base import BaseExecutor, Response
from skillc.runtime.interpreter import Interpreter, OnStep, RunOptions, initial_env, parse_inputs
from skillc.runtime.jsonvalue import Env, Object, Value
from skillc.runtime.record import Step, Verdict
from skillc.runtime.score import passages
from skillc.runtime.session import stand_in_skill_dir
from skillc.runtime.tools import ToolBox
from skillc.runtime.toolsource import ToolSource


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
    budget: int | None = None  # the step budget of a run, when the counters allow longer runs (else None)
    unfinished: int = 0  # runs stopped at that budget before reaching a terminal

    def coverage(self, kind: str) -> float:
        if kind == "states":
            return len(self.states) / max(1, self.total_states)
        return len(self.edges) / max(1, self.total_edges)


def random_value(t: T.Type, rng: random.Random, pool: list[str] | None = None) -> Value:
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
    changes: dict[str, Any] = {}
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
        self.env: Env = {}
        enums = [t for t in (T.strip_optional(v.type) for v in machine.variables.values()) if isinstance(t, T.EnumT)]
        self.constants = sorted({lab for t in enums for lab in t.labels}
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

    def _solve(self, st: State, free: list[str]) -> Object | None:
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

    def _value(self, enc: Encoder, model: z3.ModelRef, name: str) -> Value:
        t = self.machine.variables[name].type
        base = T.strip_optional(t)
        mode = enc.string_mode.get(name)
        try:
            if mode == "eq":  # drawn first, whatever the model says, so runs replay the same random choices
                other = "".join(self.rng.choice("qwz") for _ in range(5))
            elif mode != "len" and (name not in enc.vars
                                    or not isinstance(base, (T.StrT, T.IntT, T.BoolT, T.EnumT, T.FloatT))):
                return random_value(t, self.rng, self.pool())
            d = decode(model, enc, name)
            if d.kind == "none":
                return None
            if d.kind == "length":
                return "x" * int(d.value or 0)
            if d.kind == "unlike":
                return other
            if isinstance(d.value, float) and not math.isfinite(d.value):
                return random_value(t, self.rng)  # NaN and infinities are no JSON output: draw instead
            if d.kind in ("value", "label"):
                return d.value
        except (AttributeError, z3.Z3Exception, IndexError):
            pass
        return random_value(t, self.rng)

    def complete(self, request) -> Response:
        st = self.machine.states[request.state]
        values = self._solve(st, list(st.writes)) or {}
        pool = self.pool()
        out = {w: values[w] if w in values else random_value(self.machine.variables[w].type, self.rng, pool)
               for w in st.writes}
        self.env.update(out)
        return Response(json.dumps(out))

    def tool_source(self, over: ToolSource) -> ToolSource:
        """Tool states are steered too: no real tool runs."""
        return _SteeredTools(self)

    def verdicts(self, terminal: State) -> tuple[Verdict, ...]:
        """A terminal's success predicates, as the interpreter asks for them on arrival: the world stands in as
        the tools do, so they hold (a real run judges them over its work folder)."""
        return tuple(Verdict(terminal.name, show_expr(p), True) for p in terminal.predicates)

    def on_step(self, step: Step, env: Mapping[str, Value]) -> None:
        """The interpreter's `on_step`: the variables as the next step begins are what the next guards see."""
        self.env = dict(env)

    def tool_result(self, state: str, tool: str) -> Object:
        """Results of a tool state that make its planned edge fire (random elsewhere)."""
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


class _SteeredTools:
    """The steering executor's tool results, as a ToolSource."""

    def __init__(self, steering: Steering) -> None:
        self.steering = steering

    def missing(self, machine: Machine) -> list[str]:
        return []

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        return self.steering.tool_result(state, tool.name)


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


#: Steps one explored run may take: a run the counters allow to go on longer is stopped here, unfinished, and is
#: not a termination failure (the counters' bound is what `skillc check` proves; see `check_run`).
RUN_STEP_BUDGET = 2_000


def step_bound(machine: Machine, cap: int = 100_000) -> int:
    """An upper bound on the steps of a run implied by the counters (at most `cap`)."""
    bound = len(machine.states) + 1
    for v in machine.variables.values():
        if v.is_counter:
            bound *= (v.max or 0) + 1
            if bound > cap:
                return cap
    return bound


def explore(machine: Machine, source_text: str, examples: int = 200, seed: int = 0, coverage: str = "transitions",
            traces: Path | None = None) -> TestReport:
    """Run up to `examples` steered runs; stop early once coverage is complete."""
    rng = random.Random(seed)
    report = TestReport(total_states=sum(1 for s in machine.states.values()),
                        total_edges=sum(len(s.edges) for s in machine.states.values()))
    bound = min(step_bound(machine, RUN_STEP_BUDGET + 1), RUN_STEP_BUDGET)
    report.budget = bound if step_bound(machine, RUN_STEP_BUDGET + 1) > RUN_STEP_BUDGET else None
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
        problems = check_run(machine, result, bound, report.budget is not None)
        if _stopped(result) and report.budget is not None:
            report.unfinished += 1
        if problems:
            result = _minimise(machine, source_text, plan, bound, result, problems[0][0], traces, i,
                               capped=report.budget is not None)
            for prop, message in check_run(machine, result, bound, report.budget is not None):
                report.failures.append(Failure(prop, message, result.trace))
    return report


def _steered(machine: Machine, executor: Steering, options: RunOptions, source_text: str, inputs: Object,
             on_step: OnStep | None = None) -> tuple[Interpreter, Object]:
    """An interpreter driven by `executor`, which sees the variables as each step begins; the inputs, checked.
    The places stand in as the tools do: `skill_dir` is the folder of the machine's `source` (else a folder named
    so under the current one), since no tool reads it."""
    if options.skill_dir is None:
        options = attrs.evolve(options, skill_dir=stand_in_skill_dir(machine))
    inputs = parse_inputs(machine, inputs)
    executor.env = initial_env(machine, inputs)
    return Interpreter(machine, executor, ToolBox(), options, source_text, on_step=on_step or executor.on_step), inputs


def _draw_inputs(machine: Machine, rng: random.Random) -> Object:
    return {v.name: random_value(v.type, rng) for v in machine.variables.values() if v.is_input and v.init is None}


def _one_run(machine, source_text, plan, rng, bound, trace):
    executor = Steering(machine, plan, rng)
    interp, inputs = _steered(machine, executor, RunOptions(retries=0, max_steps=bound, trace=trace), source_text,
                              _draw_inputs(machine, rng))
    return interp.run(inputs)


def _stopped(result) -> bool:
    """True when a run ended at its step limit, not at a terminal."""
    return result.reason is not None and result.reason.kind == "step_limit"


def _minimise(machine, source_text, plan, bound, failed, prop: str, traces: Path | None, i: int, tries: int = 30,
              capped: bool = False):
    """The shortest run, among the failing run and re-runs of its plan with other random choices, that fails the
    same property; its trace is kept as the replayable witness."""
    best = failed
    for k in range(tries):
        trace = (traces / f"run{i}-min{k}.jsonl") if traces is not None else None
        candidate = _one_run(machine, source_text, dict(plan), random.Random(10_000 * (i + 1) + k), bound, trace)
        if candidate.steps < best.steps and any(p == prop for p, _ in check_run(machine, candidate, bound, capped)):
            best = candidate
        elif trace is not None:
            trace.unlink(missing_ok=True)
    return best


class _Reached(Exception):
    """The followed path arrived where it was going; `env`: the variables as its last state is entered."""

    def __init__(self, env: Mapping[str, Value]) -> None:
        super().__init__()
        self.env = dict(env)


def follow(machine: Machine, path: list[str], repeat: int = 1, seed: int = 0, max_steps: int = 10_000):
    """Drive a run along a path of states (its edges repeated `repeat` times).

    Returns ("reached", env) with the variables as the path's last state is
    entered, or ("run", result) when the run ended first. This is how a
    checker's witness is replayed: a definite-assignment path arrives with the
    variable unset, an unpaid cycle followed again and again never ends.
    """
    edges = []
    for a, b in itertools.pairwise(path):
        index = next(e.index for e in machine.states[a].edges if e.target == b)
        edges.append((a, index))
    plan = deque(edges * repeat)
    executor = Steering(machine, plan, random.Random(seed))
    goal = machine.states[path[-1]]

    def arrived(step: Step, env: Mapping[str, Value]) -> None:
        executor.on_step(step, env)
        if step.target == goal.name and not goal.is_terminal and not plan:
            raise _Reached(env)

    interp, inputs = _steered(machine, executor, RunOptions(retries=0, max_steps=max_steps), "",
                              _draw_inputs(machine, random.Random(seed)), arrived)
    if not plan and goal.name == machine.start and not goal.is_terminal:
        return "reached", dict(executor.env)  # the path is its first state: arrived before any step
    try:
        result = interp.run(inputs)
    except _Reached as reached:
        return "reached", reached.env
    return "run", result


def check_run(machine: Machine, result, bound: int, capped: bool = False) -> list[tuple[str, str]]:
    """The properties every explored run must have; returns (property, message) for each violation. With `capped`
    (the counters allow more steps than `bound`), a run stopped at `bound` is unfinished, not a termination failure."""
    problems = []
    reason = result.reason
    if reason is not None and reason.kind == "step_limit":
        if not capped:
            problems.append(("termination", f"no terminal within {bound} steps"))
    elif result.terminal == FALLBACK and reason is not None and reason.kind != "edge":
        problems.append(("fallback", f"the runtime gave up although every output was valid: {reason.message}"))
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
