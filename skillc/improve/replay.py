"""Replaying a development trace against a machine: does the machine do what the trace did?

`replay_trace(machine, trace, alignment)` drives the real interpreter
(`skillc.runtime.interpreter`) with the trace's aligned events in place of a
model and tools: the step loop, the guards, the assignments, the counters and
the fallback are the runtime's own; only the operations are answered from the
trace. The verdict is ok iff

- the aligned states appear in the machine's path in the trace's order, and
  nothing else happens between them but model and judge turns: a tool state
  the machine enters that is not the next aligned one, or an aligned state it
  skips, is a divergence; a model or judge state with no aligned event at that
  point is *unobserved* (a native run's reasoning leaves no event) and is
  passed with its values unknown, see below (`strict=True` makes it a
  divergence too);
- it never reaches the fallback (an invalid value, a failed tool, no edge, a
  counter past its maximum, a divergence: every one ends the replay);
- it ends in a terminal of the trace's outcome category, with every aligned
  event consumed (an `unfinished` trace — a run cut off — replays ok once all
  its aligned events are consumed; what the machine does after is not judged).

Events aligned to no state (None) are skipped. What a state is answered with:

- a model or judge state: the aligned event's `output` restricted to the
  state's writes, validated by the runtime against the state's output contract
  (a value of the wrong type goes to the fallback). When the event has no
  `output`, or it lacks one of the writes (and for an unobserved state), the
  writes take the value the run reported at its end (`DevTrace.evidence`, a
  skillc footer's or a native run's `finish`) where it names them, and are
  otherwise *unknown*: left without a value, so a guard or an argument that
  reads them cannot be evaluated (the runtime records a warning and the guard
  does not hold; the default edge may still fire). A state with a write left
  unknown is listed in `ReplayVerdict.unknown`.
- a tool state: the aligned event's `result` when it is an object, validated
  against the tool's results; a result that is not an object (a Claude Code
  text result) leaves the state's bindings unknown, as above. The arguments
  the machine would pass are evaluated when they can be; the trace's own are
  recorded when they cannot (they read an unknown value), since no tool runs.
- inputs: the trace's recorded inputs where the machine declares them; an
  input the trace does not give (and without a default) is unknown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from skillc.improve.events import Alignment, DevTrace, Event
from skillc.ir.evaluate import EvalError, evaluate
from skillc.ir.machine import FALLBACK, Machine, State, Tool, Variable
from skillc.ir.printexpr import show_expr
from skillc.runtime.executors.base import BaseExecutor, ExecutorError, Response

# `StepFailed` is how an operation sends the run to the fallback; the replay's operations fail the same way.
from skillc.runtime.interpreter import (
    Answer,
    Interpreter,
    Operation,
    RunError,
    RunOptions,
    RunResult,
    StepFailed,
    bind_results,
    initial_env,
)
from skillc.runtime.jsonvalue import Env, Object, Value
from skillc.runtime.prompts import Request
from skillc.runtime.record import ErrorKind, Step, StepError, ToolCall, Verdict
from skillc.runtime.values import apply_outputs, check_value, coerce

#: A transition as the replay took it: the state and the index of the edge that fired, or None when none did
#: (the operation failed, or no guard held) — every edge of that state was then, or may have been, looked at.
Transition = tuple[str, int | None]


@attrs.frozen
class ReplayPath:
    """Where a replay went: the states entered (the terminal or fallback last) and the transition at each step."""

    states: tuple[str, ...] = ()
    transitions: tuple[Transition, ...] = ()

    def to_json(self) -> dict[str, object]:
        """The path as JSON (the archive stores each trace's last one)."""
        return {"states": list(self.states), "transitions": [list(t) for t in self.transitions]}

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> ReplayPath:
        """A path as `to_json` wrote it (raises ValueError when it is not one)."""
        states, transitions = obj.get("states"), obj.get("transitions")
        if not isinstance(states, list) or not all(isinstance(s, str) for s in states) \
                or not isinstance(transitions, list):
            raise ValueError("a replay path needs a list of `states` and one of `transitions`")
        out: list[Transition] = []
        for t in transitions:
            if not (isinstance(t, list) and len(t) == 2 and isinstance(t[0], str)
                    and (t[1] is None or isinstance(t[1], int))):
                raise ValueError("a transition is a [state, edge index or null] pair")
            out.append((t[0], t[1]))
        return cls(tuple(states), tuple(out))


@attrs.frozen
class ReplayVerdict:
    """The outcome of replaying one trace: ok, where it went, and why not (with the event it diverged at)."""

    ok: bool
    path: ReplayPath
    reason: str | None = None  # why the replay is not ok (None when it is)
    diverged_at: int | None = None  # the index of the event where it went wrong (len(events): past the end)
    terminal: str | None = None  # the terminal (or fallback) the machine ended in; None for a stopped replay
    outcome: str | None = None  # that terminal's outcome category
    unknown: tuple[str, ...] = ()  # states entered whose values the trace does not give (see the module doc)
    warnings: tuple[str, ...] = ()  # the runtime's warnings (guards that read an unknown value)
    unobserved: tuple[str, ...] = ()  # model/judge states entered that the trace shows no event for there

    @property
    def states(self) -> tuple[str, ...]:
        """The states entered (the path's)."""
        return self.path.states

    @property
    def transitions(self) -> tuple[Transition, ...]:
        """The (state, edge index) pairs taken (the path's)."""
        return self.path.transitions


class _Diverged(ExecutorError):
    """The machine entered a state that is not the trace's next aligned one."""

    kind: ErrorKind = "divergence"




class _Cursor:
    """The trace's aligned events in order, consumed as the machine enters their states."""

    def __init__(self, trace: DevTrace, alignment: Alignment) -> None:
        self.expected = [(i, s) for i, s in enumerate(alignment.states) if s is not None]
        self.events = trace.events
        self.position = 0
        self.exhausted = False  # the machine went on after the last aligned event

    @property
    def next_index(self) -> int:
        """The event index of the next aligned event (len(events) when none is left)."""
        return self.expected[self.position][0] if self.position < len(self.expected) else len(self.events)

    def peek(self, state: str) -> Event:
        """The next aligned event, which must be of `state` (else a divergence)."""
        if self.position >= len(self.expected):
            self.exhausted = True
            raise _Diverged(f"the machine entered `{state}` after the trace's last aligned event")
        index, aligned = self.expected[self.position]
        if aligned != state:
            raise _Diverged(f"event {index} is aligned to `{aligned}`, but the machine entered `{state}`")
        return self.events[index]

    def take(self, state: str) -> Event:
        """The next aligned event (of `state`), consumed."""
        event = self.peek(state)
        self.position += 1
        return event


def model_values(state: State, event: Event) -> dict[str, object] | None:
    """The values a model/judge state takes from its event: its `output` on the state's writes, or None (unknown)."""
    if event.output is None or any(w not in event.output for w in state.writes):
        return None
    return {w: event.output[w] for w in state.writes}


class _Executor(BaseExecutor):
    """The run's executor: never asked (the replay answers model and judge states itself); brings the trace's tools."""

    name = "refine-replay"

    def __init__(self, cursor: _Cursor) -> None:
        self.cursor = cursor

    def complete(self, request: Request) -> Response:
        """Not used: `_Replayer.ask` applies the aligned event's values without building a prompt."""
        raise ExecutorError(f"no model is asked during a replay (state `{request.state}`)")

    def tool_source(self, over: object) -> _Tools:
        """The trace's results stand in for every tool."""
        return _Tools(self.cursor)


class _Tools:
    """A ToolSource answering tool states with the aligned event's result object."""

    def __init__(self, cursor: _Cursor) -> None:
        self.cursor = cursor

    def missing(self, machine: Machine) -> list[str]:
        return []

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        result = self.cursor.take(state).result
        assert isinstance(result, dict)  # _Replayer.call_tool sends results that are not objects the unknown way
        return result


class _Replayer(Interpreter):
    """The interpreter with operations answered from a trace; unknown values leave the writes without a value."""

    def __init__(self, machine: Machine, cursor: _Cursor, strict: bool, reported: Env) -> None:
        # No retries: the same event would answer again. The step limit leaves room for every aligned event and
        # stops a cycle of unobserved turns whose unknown values keep the default edges firing.
        options = RunOptions(retries=0, max_steps=1000 + len(cursor.events))
        super().__init__(machine, _Executor(cursor), _Tools(cursor), options)
        self.cursor = cursor
        self.reported = reported  # the trace's evidence, on the machine's variables
        self.strict = strict
        self.unknown: list[str] = []  # states whose values stayed unknown (unobserved ones included)
        self.unobserved: list[str] = []  # model/judge states entered with no aligned event at that point

    def judge(self, terminal: State, env: Mapping[str, Value]) -> tuple[Verdict, ...]:
        """A terminal's success predicates: the trace's world is gone (its tools' results stand in for it), so they
        are taken to hold; a replay judges the path and the outcome, not the files."""
        return tuple(Verdict(terminal.name, show_expr(p), True) for p in terminal.predicates)

    def ask(self, st: State, env: Env) -> Answer:
        """A model or judge state answered by its aligned event's values (unknown ones forgotten); no prompt."""
        try:
            event = self.cursor.peek(st.name)
        except _Diverged as exc:
            if self.strict:
                raise StepFailed(StepError("divergence", str(exc))) from exc
            self.unobserved.append(st.name)  # a model turn the trace does not show: passed with unknown values
            return Answer(self._forget(st, env, st.writes))
        self.cursor.take(st.name)
        values = model_values(st, event)
        if values is None:
            return Answer(self._forget(st, env, st.writes), Operation("chat"))
        # The runtime's own contract check (the one a model's answer gets), without building a prompt.
        new_env, problems = apply_outputs(self.machine, st, env, values)
        if problems:
            raise StepFailed(StepError("invalid_output", "invalid output: " + "; ".join(problems)), Operation("chat"))
        label = new_env[st.writes[0]] if st.kind == "judge" else None
        return Answer(new_env, Operation("chat", output=values, label=label))

    def call_tool(self, st: State, env: Env) -> Answer:
        """A tool state answered by its aligned event's result: the runtime's own call when the machine's arguments
        can be evaluated and the result is an object, else the trace's arguments recorded and the bindings bound
        (or forgotten, for a result that is not an object)."""
        event = self._peek(st)
        assert st.call is not None
        if isinstance(event.result, dict) and self._evaluable(st, env):
            return super().call_tool(st, env)
        self.cursor.take(st.name)
        done = Operation("execute_tool", tool_call=ToolCall(st.call.tool, self._args(st, env, event)))
        if not isinstance(event.result, dict):
            return Answer(self._forget(st, env, tuple(var for var, _ in st.bindings)), done)
        new_env, problems = bind_results(self.machine, st, env, event.result)
        if problems:
            raise StepFailed(StepError("tool", f"tool `{st.call.tool}`: the trace's result does not fit: "
                                               + "; ".join(problems)), done)
        return Answer(new_env, attrs.evolve(done, tool_result=event.result,
                                            output={var: new_env[var] for var, _ in st.bindings}))

    def _peek(self, st: State) -> Event:
        """The state's aligned event; a divergence goes to the fallback as the runtime's own replay does."""
        try:
            return self.cursor.peek(st.name)
        except _Diverged as exc:
            raise StepFailed(StepError("divergence", str(exc))) from exc

    def _forget(self, st: State, env: Mapping[str, Value], names: tuple[str, ...]) -> Env:
        """The variables with `names` take the values the run reported at its end, else are left without one."""
        new_env = {k: v for k, v in env.items() if k not in names}
        for name in names:
            if name in self.reported:
                new_env[name] = self.reported[name]
        if any(name not in new_env for name in names):
            self.unknown.append(st.name)  # noted per entry; the verdict lists each state once
        return new_env

    @staticmethod
    def _evaluable(st: State, env: Mapping[str, Value]) -> bool:
        """Whether every argument of the state's call can be evaluated with the values known."""
        assert st.call is not None
        try:
            for _, value in st.call.args:
                evaluate(value, env)
        except EvalError:
            return False
        return True

    def _args(self, st: State, env: Mapping[str, Value], event: Event) -> Object:
        """The machine's arguments where they can be evaluated, else the trace's."""
        return {name: evaluate(value, env) for name, value in st.call.args} if st.call is not None \
            and self._evaluable(st, env) else dict(event.args)


def _known(machine: Machine, values: Mapping[str, object], fits: Callable[[Variable], bool]) -> Env:
    """The values that name a variable of the machine `fits` accepts and have its type; the others are left out."""
    known: Env = {}
    for name, value in values.items():
        var = machine.variables.get(name)
        if var is not None and fits(var) and not check_value(value, var.type, name):
            known[name] = coerce(value, var.type)
    return known


def replay_trace(machine: Machine, trace: DevTrace, alignment: Alignment, *, strict: bool = False) -> ReplayVerdict:
    """Replay `trace` (aligned by `alignment`) on `machine` with the runtime's interpreter; never raises on bad input.

    `strict`: every state entered must have the next aligned event (no unobserved model or judge turn).
    """
    if len(alignment.states) != len(trace.events):
        return ReplayVerdict(False, ReplayPath(), f"the alignment has {len(alignment.states)} entries for "
                             f"{len(trace.events)} events", 0)
    cursor = _Cursor(trace, alignment)
    steps: list[Step] = []
    replayer = _Replayer(machine, cursor, strict, _known(machine, trace.evidence, lambda v: not v.is_input))
    replayer.on_step = lambda step, _env: steps.append(step)
    env = initial_env(machine, {})
    for var in machine.variables.values():
        if var.is_input and var.init is not None:
            env[var.name] = coerce(evaluate(var.init, {}), var.type)
    env.update(_known(machine, trace.inputs, lambda v: v.is_input))
    # Not `Interpreter.run`: it refuses a run whose required inputs are missing, and a trace from a chat log
    # records none (they stay unknown). No trace file, journal or model is involved.
    try:
        result = replayer.run_from(env)
    except RunError as exc:  # a default of the wrong type in a machine nobody checked
        return ReplayVerdict(False, ReplayPath(), f"the machine cannot be run: {exc}", 0)
    return _verdict(trace, cursor, replayer, steps, result)


def _verdict(trace: DevTrace, cursor: _Cursor, replayer: _Replayer, steps: list[Step],
             result: RunResult) -> ReplayVerdict:
    """The verdict from how the run ended and how far the cursor got."""
    states = tuple(s.state for s in steps) + (result.terminal,)
    path = ReplayPath(states, tuple((s.state, s.edge) for s in steps))
    seen = ReplayVerdict(False, path, unknown=tuple(dict.fromkeys(replayer.unknown)),
                         unobserved=tuple(dict.fromkeys(replayer.unobserved)),
                         warnings=tuple(w for s in steps for w in s.warnings))
    reason = result.reason
    consumed = cursor.position >= len(cursor.expected)
    if trace.outcome == "unfinished" and consumed and (result.terminal != FALLBACK or cursor.exhausted):
        # A run cut off before its end: ok when the machine did all it did; what follows is not judged.
        cut = len(steps) - 1 if result.terminal == FALLBACK else len(steps)
        return attrs.evolve(seen, ok=True, path=ReplayPath(states[:cut], path.transitions[:cut]))
    if result.terminal == FALLBACK:
        why = reason.message if reason is not None else "the machine reached the fallback"
        kind = reason.kind if reason is not None else "fallback"
        at = cursor.next_index if kind == "divergence" else \
            cursor.expected[max(cursor.position - 1, 0)][0] if cursor.expected else 0
        return attrs.evolve(seen, reason=f"{kind}: {why}", diverged_at=at, terminal=FALLBACK, outcome="failed")
    ended = attrs.evolve(seen, terminal=result.terminal, outcome=result.outcome)
    if not consumed:
        index, state = cursor.expected[cursor.position]
        return attrs.evolve(ended, reason=f"the machine ended in `{result.terminal}` before event {index} "
                            f"(aligned to `{state}`)", diverged_at=index)
    if trace.outcome != result.outcome:
        return attrs.evolve(ended, reason=f"the trace's outcome is {trace.outcome}, the machine ended in "
                            f"`{result.terminal}` ({result.outcome})", diverged_at=len(trace.events))
    return attrs.evolve(ended, ok=True)
