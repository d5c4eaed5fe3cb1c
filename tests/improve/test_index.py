"""Incremental replay: the traces `affected` leaves out keep their verdict — checked against full replay.

The property test draws runs of a machine (through the real interpreter), archives them with their replay
paths, applies a random edit to the machine (edges reordered, retargeted, dropped or given another guard,
a counter's bound, a terminal's outcome, a state's writes, the start state, or only a prompt) and compares:
every trace's full replay on the edited machine must equal, for traces `affected` leaves out, the verdict
they had. SKILLC_REFINE_INDEX_EXAMPLES raises the number of edits tried (default 40).
"""

from __future__ import annotations

import functools
import os
import random
from pathlib import Path
from typing import Any

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skillc
from skillc.improve.diff import MachineDiff as Changes
from skillc.improve.diff import diff_machines as changed
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.index import ALL_EDGES, affected, build_index, looked_at
from skillc.improve.replay import ReplayPath, replay_trace
from skillc.ir import types as T
from skillc.ir.machine import Machine
from skillc.runtime.executors.base import BaseExecutor, Response
from skillc.runtime.interpreter import Interpreter, RunOptions

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = int(os.environ.get("SKILLC_REFINE_INDEX_EXAMPLES", "40"))

PROP = """machine prop {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var plan: str
  var verdict: enum { good, bad, unsure }
  var status: int
  var note: str
  counter tries max 2
  start plan_it
  model plan_it {
    writes plan
    prompt "Plan."
    when plan == "skip" -> check
    -> review
  }
  judge review {
    reads plan
    writes verdict
    prompt "Good?"
    when verdict == bad and tries < 2 -> plan_it { tries += 1 }
    when verdict == unsure -> ask
    when verdict == bad -> fallback
    -> apply
  }
  model ask {
    writes note
    prompt "Ask."
    when note == "stop" -> gave_up
    -> apply
  }
  tool apply {
    reads plan
    call bash(command: plan)
    writes status = exit_code
    when status == 0 -> check
    when status == 1 and tries < 2 -> plan_it { tries += 1 }
    -> failed_run
  }
  tool check {
    call bash(command: "test")
    writes status = exit_code
    when status == 0 -> done
    -> partial_run
  }
  terminal done: success { requires status }
  terminal partial_run: partial
  terminal failed_run: failed
  terminal gave_up: failed
  fallback
}
"""


@functools.lru_cache(maxsize=1)
def machine() -> Machine:
    """PROP, checked once (edits make new machines; this one is never changed)."""
    result = skillc.check(PROP, path=str(ROOT / "prop.skm"))
    assert result.machine is not None and not [d for d in result.diagnostics if d.is_error], result.diagnostics
    return result.machine


def value(t: T.Type, rng: random.Random) -> Any:
    """A random value of a variable's type (the few types PROP uses)."""
    if isinstance(t, T.EnumT):
        return rng.choice(list(t.labels))
    if isinstance(t, T.IntT):
        return rng.choice([0, 0, 1, 2])
    return rng.choice(["make", "skip", "stop", "go"])


class RandomModel(BaseExecutor):
    """Answers every model and judge state with random values of its writes; tools exit 0, 1 or 2."""

    def __init__(self, m: Machine, rng: random.Random) -> None:
        self.m, self.rng = m, rng

    def complete(self, request):
        import json

        state = self.m.states[request.state]
        return Response(json.dumps({w: value(self.m.variables[w].type, self.rng) for w in state.writes}))

    def tool_source(self, over: object) -> RandomModel:
        return self

    def missing(self, m: Machine) -> list[str]:
        return []

    def result(self, state: str, tool: object, args: dict) -> dict:
        return {"stdout": "", "exit_code": self.rng.choice([0, 0, 1, 2])}


def draw_trace(m: Machine, rng: random.Random) -> tuple[DevTrace, Alignment]:
    """A run of `m` as a trace, sometimes cut short, mislabelled, or with model events left unaligned."""
    steps: list = []
    result = Interpreter(m, RandomModel(m, rng), RandomModel(m, rng), RunOptions(retries=0),
                         on_step=lambda s, _env: steps.append(s)).run({})
    events = [Event("tool", tool=s.tool_call.tool, args=dict(s.tool_call.args), result=dict(s.tool_result),
                    state=s.state) if s.kind == "tool" else Event("model", output=dict(s.output), state=s.state)
              for s in steps if s.output is not None or s.tool_result is not None]
    outcome = result.outcome
    if rng.random() < 0.2 and events:
        events, outcome = events[: rng.randrange(len(events))], "unfinished"
    elif rng.random() < 0.1:
        outcome = rng.choice(["success", "partial", "failed"])
    trace = DevTrace(tuple(events), outcome, "skillc", inputs={"n": rng.random()})  # type: ignore[arg-type]
    states = tuple(None if e.kind == "model" and rng.random() < 0.15 else e.state for e in events)
    return trace, Alignment(trace.id, states)


def edit(m: Machine, rng: random.Random) -> Machine:
    """One random edit of the machine's IR."""
    working = [s for s in m.states.values() if s.edges]
    st_ = rng.choice(working)
    edges = list(st_.edges)
    kind = rng.choice(["swap", "target", "drop", "guard", "counter", "outcome", "writes", "start", "prompt"])
    if kind == "swap" and len(edges) > 1:
        i = rng.randrange(len(edges) - 1)
        edges[i], edges[i + 1] = edges[i + 1], edges[i]
    elif kind == "target":
        i = rng.randrange(len(edges))
        edges[i] = attrs.evolve(edges[i], target=rng.choice(list(m.states)))
    elif kind == "drop" and len(edges) > 1:
        edges.pop(rng.randrange(len(edges) - 1))
    elif kind == "guard":
        guards = [e.guard for s in m.states.values() for e in s.edges if e.guard is not None]
        i = rng.randrange(len(edges))
        edges[i] = attrs.evolve(edges[i], guard=rng.choice(guards))
    elif kind == "counter":
        tries = m.variables["tries"]
        return attrs.evolve(m, variables={**m.variables, "tries": attrs.evolve(tries, max=rng.choice([0, 1, 3]))})
    elif kind == "outcome":
        name = rng.choice(["done", "partial_run", "failed_run", "gave_up"])
        term = m.states[name]
        return attrs.evolve(m, states={**m.states, name: attrs.evolve(term, outcome=rng.choice(
            ["success", "partial", "failed"]))})
    elif kind == "writes" and st_.kind == "model":
        return attrs.evolve(m, states={**m.states, st_.name: attrs.evolve(st_, writes=("plan", "note"))})
    elif kind == "start":
        return attrs.evolve(m, start=rng.choice([n for n, s in m.states.items() if not s.is_terminal]))
    else:
        return attrs.evolve(m, states={**m.states, st_.name: attrs.evolve(st_, prompt="Something else.")})
    edges = [attrs.evolve(e, index=i) for i, e in enumerate(edges)]
    return attrs.evolve(m, states={**m.states, st_.name: attrs.evolve(st_, edges=tuple(edges))})


@settings(max_examples=EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(seed=st.integers(0, 2**32 - 1))
def test_incremental_replay_gives_the_verdicts_of_full_replay_after_random_edits(seed: int) -> None:
    rng = random.Random(seed)
    old = machine()
    traces = [draw_trace(old, rng) for _ in range(30)]
    before = {t.id: replay_trace(old, t, a) for t, a in traces}
    index = build_index((t.id, before[t.id].path) for t, _ in traces)
    new = old
    for _ in range(rng.choice([1, 1, 2])):
        new = edit(new, rng)
    changes = changed(old, new)
    chosen = affected(index, changes)
    for t, a in traces:
        full = replay_trace(new, t, a)
        if t.id not in chosen:
            assert full == before[t.id], (changes.why, t.id)
    if changes.replay_same:
        assert chosen == set()


def test_the_drawn_traces_cover_ok_and_failing_verdicts() -> None:
    rng = random.Random(7)
    verdicts = [replay_trace(machine(), t, a) for t, a in (draw_trace(machine(), rng) for _ in range(60))]
    assert any(v.ok for v in verdicts) and any(not v.ok for v in verdicts)
    assert len({v.path.states[-1] for v in verdicts if v.path.states}) >= 3


def test_changed_names_what_differs() -> None:
    old = machine()
    assert changed(old, old).replay_same
    review = old.states["review"]
    swapped = (attrs.evolve(review.edges[1], index=0), attrs.evolve(review.edges[0], index=1), *review.edges[2:])
    new = attrs.evolve(old, states={**old.states, "review": attrs.evolve(review, edges=swapped)})
    d = changed(old, new)
    assert (d.everything, d.operations, d.edges, d.why) == (False, frozenset(), {"review": 0},
                                                            ("the edges of `review` changed from edge 1",))
    tries = old.variables["tries"]
    bound = attrs.evolve(old, variables={**old.variables, "tries": attrs.evolve(tries, max=5)})
    assert changed(old, bound).edges == {"review": 0, "apply": 1}  # the edges that assign the counter
    assert changed(old, attrs.evolve(old, start="review")).everything
    prompt = attrs.evolve(old, states={**old.states, "ask": attrs.evolve(old.states["ask"], prompt="Other.")})
    assert changed(old, prompt).replay_same
    gone = {k: v for k, v in old.states.items() if k != "gave_up"}
    assert "gave_up" in changed(old, attrs.evolve(old, states=gone)).operations


def test_affected_picks_traces_by_state_and_by_the_edges_looked_at() -> None:
    a = ReplayPath(("plan_it", "review", "apply", "done"), (("plan_it", 1), ("review", 3), ("apply", 0)))
    b = ReplayPath(("plan_it", "check", "done"), (("plan_it", 0), ("check", 0)))
    c = ReplayPath(("plan_it", "review", "fallback"), (("plan_it", 1), ("review", None)))
    index = build_index([("a", a), ("b", b), ("c", c)])
    assert looked_at(c)["review"] == ALL_EDGES and looked_at(a)["done"] == -1
    assert affected(index, Changes(edges={"apply": 1})) == set()  # a fired apply's edge 0: edge 1 was not looked at
    assert affected(index, Changes(edges={"apply": 0})) == {"a"}
    assert affected(index, Changes(edges={"review": 3})) == {"a", "c"}
    assert affected(index, Changes(operations=frozenset({"done"}))) == {"a", "b"}
    assert affected(index, Changes(everything=True)) == {"a", "b", "c"}


def test_an_archive_committed_with_replay_paths_indexes_back(tmp_path: Path) -> None:
    from skillc.improve.archive import ArchivedTrace, commit, open_archive
    from skillc.improve.index import index_archive

    path = tmp_path / "prop.skm"
    path.write_text(PROP, encoding="utf-8")
    rng = random.Random(3)
    drawn = [draw_trace(machine(), rng) for _ in range(10)]
    entries = [ArchivedTrace(t, a, replay_trace(machine(), t, a).path) for t, a in drawn]
    archive, _ = open_archive(path)
    assert archive is not None
    commit(path, PROP, archive, entries)
    reopened, problems = open_archive(path)
    assert reopened is not None and problems == []
    index = index_archive(reopened)
    assert index == build_index((e.id, e.path) for e in entries)
    assert affected(index, Changes(operations=frozenset({"plan_it"}))) == {e.id for e in entries}
