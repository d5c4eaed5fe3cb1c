"""What a trace adds to a picture: visit counts, edges taken, and the path to the terminal.

A machine-mode trace records the states it visited and the edges it took. A
native or prompt-only trace records only tool calls, so its path is inferred:
each call is mapped onto a tool state that calls the same tool (the argument
names must match, and the literal text of the state's arguments decides between
several), preferring the one nearest along the graph from where the run was; the
states and edges between two mapped calls are the shortest way through the
graph. The overlay's `note` says so, and the drawing shows it.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs

from skillc.ir.expr import Const, walk
from skillc.ir.machine import Machine, State
from skillc.runtime.record import RunTrace, ToolCall, load_run

EdgeRef = tuple[str, int]
#: Distance given to a tool state that cannot be reached from where the run was (it may still be the only match).
FAR = 10**6


@attrs.frozen
class Overlay:
    """Visits per state, uses per edge (source, edge index), the final path's edges, and how they were found.

    `note`: empty for a machine-mode trace; for a baseline, a sentence saying the path is inferred from tool calls.
    `unmatched`: the step indices of a baseline's tool calls that no tool state fits.
    """

    visits: dict[str, int]
    edges: dict[EdgeRef, int]
    final_path: frozenset[EdgeRef]
    terminal: str | None
    note: str = ""
    unmatched: tuple[int, ...] = ()
    foreign: str = ""  # why the trace is not a run of this machine (SKM525); empty when it is


def foreign_reason(m: Machine, run: RunTrace) -> str:
    """Why `run` was not recorded with `m` (another machine's name in its header, states `m` does not have), or ""."""
    recorded = run.header.machine
    if recorded is not None and recorded != m.name:
        return f"the trace was recorded with machine `{recorded}`, not `{m.name}`"
    if run.header.mode == "machine":
        unknown = sorted({s.state for s in run.steps if s.state not in m.states})
        if unknown:
            shown = ", ".join(f"`{name}`" for name in unknown[:5]) + (", …" if len(unknown) > 5 else "")
            return f"the trace visits states `{m.name}` does not have: {shown}"
    return ""


def overlay_from_trace(m: Machine, path: str | Path) -> Overlay:
    """Read a trace into an overlay: recorded states and edges (machine mode), or an inferred path (baselines)."""
    run = load_run(path)
    foreign = foreign_reason(m, run)
    if run.header.mode != "machine":
        return attrs.evolve(baseline_overlay(m, run), foreign=foreign)
    visits: Counter[str] = Counter()
    edges: Counter[EdgeRef] = Counter()
    taken: list[EdgeRef] = []
    for s in run.steps:
        if s.state not in m.states:
            continue
        visits[s.state] += 1
        if s.edge is not None:
            edges[(s.state, s.edge)] += 1
            taken.append((s.state, s.edge))
    terminal = run.footer.terminal if run.footer is not None else None
    if terminal is not None and terminal in m.states:
        visits[terminal] += 1
    return Overlay(dict(visits), dict(edges), final_path(taken), terminal if terminal in m.states else None,
                   foreign=foreign)


def final_path(taken: Sequence[EdgeRef]) -> frozenset[EdgeRef]:
    """The path into the terminal: the edge taken after the last visit of each state, walked back from the end."""
    final: list[EdgeRef] = []
    seen: set[str] = set()
    for source, index in reversed(taken):
        if source not in seen:
            seen.add(source)
            final.append((source, index))
    return frozenset(final)


def shortest_path(m: Machine, source: str, targets: Iterable[str], *, allow_empty: bool) -> list[EdgeRef] | None:
    """The fewest edges from `source` to any of `targets` (edges in evaluation order break ties), or None."""
    wanted = set(targets)
    if allow_empty and source in wanted:
        return []
    back: dict[str, tuple[str, int] | None] = {}
    queue: deque[str] = deque()
    for e in m.states[source].edges:  # at least one edge: leaving `source` is part of the path
        if e.target not in back:
            back[e.target] = (source, e.index)
            queue.append(e.target)
    while queue:
        name = queue.popleft()
        if name in wanted:
            return _walk_back(back, name, source)
        for e in m.states[name].edges:
            if e.target not in back:
                back[e.target] = (name, e.index)
                queue.append(e.target)
    return None


def _walk_back(back: dict[str, tuple[str, int] | None], end: str, source: str) -> list[EdgeRef]:
    """The edges that led to `end`, in order (a target reached again is never revisited, so this ends)."""
    path: list[EdgeRef] = []
    name = end
    while True:
        step = back[name]
        assert step is not None
        path.append(step)
        name = step[0]
        if name == source:
            return path[::-1]


def _literals(st: State) -> list[str]:
    """The text literals of a tool state's arguments (`"cat "`, `"printf %s "`): what tells two calls apart."""
    assert st.call is not None
    return [n.value.strip() for _, arg in st.call.args for n in walk(arg)
            if isinstance(n, Const) and isinstance(n.value, str) and n.value.strip()]


def _fit(st: State, call: ToolCall) -> int | None:
    """How well a recorded call fits a tool state: None (another tool or other argument names), else the number
    of the state's argument literals that occur in the call's arguments."""
    if st.call is None or st.call.tool != call.tool or {k for k, _ in st.call.args} != set(call.args):
        return None
    text = " ".join(str(v) for v in call.args.values())
    return sum(1 for lit in _literals(st) if lit in text)


def map_call(m: Machine, call: ToolCall, at: str, started: bool) -> tuple[str, list[EdgeRef] | None] | None:
    """The tool state a call is mapped to and the way there from `at` (None: not reachable, the run jumped):
    best literal fit, then nearest, then first declared."""
    best: tuple[int, int, int] | None = None
    chosen: tuple[str, list[EdgeRef] | None] | None = None
    for order, st in enumerate(m.states.values()):
        fit = _fit(st, call)
        if fit is None:
            continue
        way = shortest_path(m, at, [st.name], allow_empty=not started)
        rank = (-fit, FAR if way is None else len(way), order)
        if best is None or rank < best:
            best, chosen = rank, (st.name, way)
    return chosen


def baseline_overlay(m: Machine, run: RunTrace) -> Overlay:
    """A native or prompt-only run drawn on the machine: its tool calls mapped onto tool states, in order."""
    visits: Counter[str] = Counter({m.start: 1})
    edges: Counter[EdgeRef] = Counter()
    taken: list[EdgeRef] = []
    unmatched: list[int] = []
    at, started, calls = m.start, False, 0
    for s in run.steps:
        if s.tool_call is None:
            continue
        calls += 1
        mapped = map_call(m, s.tool_call, at, started)
        if mapped is None:
            unmatched.append(s.index)
            continue
        if mapped[1] is None:
            visits[mapped[0]] += 1
        else:
            _follow(m, mapped[1], visits, edges, taken)
        at, started = mapped[0], True
    terminal = _terminal(m, run, at, started)
    if terminal is not None:
        _follow(m, terminal[1], visits, edges, taken)
    return Overlay(dict(visits), dict(edges), final_path(taken), terminal[0] if terminal else None,
                   _note(run.header.mode, calls, unmatched), tuple(unmatched))


def _target(m: Machine, ref: EdgeRef) -> str:
    """The state an edge leads to."""
    return next(e.target for e in m.states[ref[0]].edges if e.index == ref[1])


def _follow(m: Machine, way: list[EdgeRef], visits: Counter[str], edges: Counter[EdgeRef],
            taken: list[EdgeRef]) -> None:
    """Count the edges along `way` and the states they enter."""
    for ref in way:
        edges[ref] += 1
        taken.append(ref)
        visits[_target(m, ref)] += 1


def _terminal(m: Machine, run: RunTrace, at: str, started: bool) -> tuple[str, list[EdgeRef]] | None:
    """The nearest terminal with the run's outcome (a failed run may end in the fallback), and the way there."""
    outcome = run.footer.outcome if run.footer is not None else None
    if outcome is None:
        return None
    ends = [st.name for st in m.states.values() if st.kind == "terminal" and st.outcome == outcome]
    ends += [st.name for st in m.states.values() if st.kind == "fallback" and outcome == "failed"]
    way = shortest_path(m, at, ends, allow_empty=not started)
    if way is None:
        return None
    return (_target(m, way[-1]) if way else at), way


def _note(mode: str, calls: int, unmatched: list[int]) -> str:
    """The drawing's caveat: a baseline's path is inferred, not recorded."""
    note = (f"{mode} run: path inferred from its {calls} tool call{'s' if calls != 1 else ''} (matched to tool "
            f"states by tool, argument names and text, and order along the graph; states between them are the "
            f"shortest way, not observed)")
    if unmatched:
        note += f"; {len(unmatched)} call{'s' if len(unmatched) != 1 else ''} fit no tool state (steps " \
                + ", ".join(map(str, unmatched[:10])) + ")"
    return note
