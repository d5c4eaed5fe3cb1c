"""The LangGraph importer on real StateGraphs built with the installed langgraph."""

from __future__ import annotations

import operator
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Annotated, Literal, TypedDict

import pytest

pytest.importorskip("langgraph")

from langgraph.graph import END, START, StateGraph
from langgraph.managed import RemainingSteps
from langgraph.types import Command

import skillc
from skillc.diagnostics import Severity
from skillc.frontends.importers.langgraph import check, import_graph
from skillc.syntax.printer import print_module


class State(TypedDict):
    question: str
    draft: str
    verdict: str
    tries: int
    notes: Annotated[list[str], operator.add]


class Looping(TypedDict):
    draft: str
    remaining: RemainingSteps


def plan(state: State):
    return {"notes": ["planned"]}


def write(state: State):
    return {"draft": "about " + state["question"]}


def review(state: State):
    return {"verdict": "ok" if state["draft"] else "bad"}


def orphan(state: State):
    return {"verdict": "never"}


def codes(checked) -> list[str]:
    return sorted(str(d.code) for d in checked.diagnostics)


def line_of(func) -> int:
    return func.__code__.co_firstlineno


def test_orphan_node_that_compile_accepts_is_unreachable() -> None:
    b = StateGraph(State)
    for f in (write, review, orphan):
        b.add_node(f.__name__, f)
    b.add_edge(START, "write")
    b.add_edge("write", "review")
    b.add_edge("review", END)
    b.add_edge("orphan", "review")
    b.compile()  # LangGraph itself accepts the orphan
    found = check(b)
    [d] = [d for d in found.diagnostics if str(d.code) == "SKM200"]
    assert "`orphan`" in d.message and d.span.path == __file__ and d.span.start_pos[0] == line_of(orphan)
    assert codes(found) == ["SKM200"]


def test_compiled_graph_is_read_through_its_builder() -> None:
    b = StateGraph(State)
    b.add_node("write", write)
    b.add_edge(START, "write")
    b.add_edge("write", END)
    assert check(b.compile()).diagnostics == []


def test_not_a_graph() -> None:
    assert codes(check(object())) == ["SKM651"]
    assert codes(check(lambda state: state)) == ["SKM651"]


def test_unbounded_cycle_is_a_warning_and_a_counter_in_the_router_bounds_it() -> None:
    def route(state: State) -> Literal["write", "__end__"]:
        return "write" if state["verdict"] == "bad" else END

    def counted(state: State) -> Literal["write", "__end__"]:
        return "write" if state["verdict"] == "bad" and state["tries"] < 3 else END

    for router, expected in ((route, ["SKM654"]), (counted, [])):
        b = StateGraph(State)
        b.add_node("write", write)
        b.add_node("review", review)
        b.add_edge(START, "write")
        b.add_edge("write", "review")
        b.add_conditional_edges("review", router)
        found = check(b)
        assert [str(d.code) for d in found.diagnostics if d.severity is not Severity.NOTE] == expected
        if expected:
            assert found.diagnostics[0].severity is Severity.WARNING
            assert found.diagnostics[0].witness == ("write -> review -> write",)


def test_remaining_steps_bounds_a_cycle() -> None:
    def step(state: Looping):
        return {"draft": "x"}

    def again(state: Looping) -> Literal["step", "__end__"]:
        return END if state["remaining"] <= 2 else "step"

    b = StateGraph(Looping)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", again)
    assert codes(check(b)) == []


def _steps_left(state) -> bool:
    return state["remaining"] > 2


def test_remaining_steps_read_by_a_helper_bounds_a_cycle() -> None:
    def step(state: Looping):
        if not _steps_left(state):
            return {"draft": "give up"}
        return {"draft": "again"}

    def again(state: Looping) -> Literal["step", "__end__"]:
        return "step"

    b = StateGraph(Looping)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", again)
    assert codes(check(b)) == []


def test_router_without_destinations_means_every_node() -> None:
    def route(state):
        return "review"

    b = StateGraph(State)
    b.add_node("write", write)
    b.add_node("review", review)
    b.add_edge(START, "write")
    b.add_conditional_edges("write", route)
    b.add_edge("review", END)
    found = check(b)
    assert "SKM652" in codes(found)
    [d] = [d for d in found.diagnostics if str(d.code) == "SKM652"]
    assert d.severity is Severity.WARNING and d.span.start_pos[0] == line_of(route)
    assert "SKM654" in codes(found)  # write may loop to itself, as far as the graph says


def test_path_map_missing_a_literal_value() -> None:
    def route(state: State) -> Literal["good", "bad"]:
        return "good"

    b = StateGraph(State)
    b.add_node("write", write)
    b.add_node("review", review)
    b.add_edge(START, "write")
    b.add_conditional_edges("write", route, {"good": "review"})
    b.add_edge("review", END)
    found = check(b)
    [d] = [d for d in found.diagnostics if str(d.code) == "SKM655"]
    assert "can return bad" in d.message and d.is_error


def test_command_destinations_are_edges() -> None:
    def decide(state: State) -> Command[Literal["review", "__end__"]]:
        return Command(goto="review", update={"tries": 1})

    b = StateGraph(State)
    b.add_node("decide", decide)
    b.add_node("review", review)
    b.add_edge(START, "decide")
    b.add_edge("review", END)
    found = check(b)
    assert codes(found) == []
    text = print_module(import_graph(b).module)
    assert "when decide_next == to_review -> review" in text and "writes tries, decide_next = next" in text


def test_writes_come_from_return_literals_and_unknown_writes_are_noted() -> None:
    def opaque(state: State):
        update = {"draft": "x"}
        return update

    b = StateGraph(State)
    b.add_node("plan", plan)
    b.add_node("review", review)
    b.add_node("opaque", opaque)
    b.add_edge(START, "plan")
    b.add_edge("plan", "review")  # review reads `draft`, which nobody wrote on this path
    b.add_edge("review", "opaque")
    b.add_edge("opaque", END)
    found = check(b)
    assert codes(found) == ["SKM656", "SKM657"]
    unset = next(d for d in found.diagnostics if str(d.code) == "SKM657")
    assert "`draft`" in unset.message and unset.witness == ("`draft` is never assigned on plan -> review",)
    assert unset.span.start_pos[0] == line_of(review)


class Needs(TypedDict):  # at module level: annotations are strings here, resolved in the module's namespace
    verdict: str


def test_input_schema_is_the_read_set() -> None:
    def needs(state: Needs):
        return {}

    b = StateGraph(State)
    b.add_node("write", write)
    b.add_node("needs", needs)
    b.add_node("review", review)
    b.add_edge(START, "write")
    b.add_edge("write", "needs")  # needs reads `verdict`, which only review writes, later
    b.add_edge("needs", "review")
    b.add_edge("review", END)
    found = check(b)
    assert codes(found) == ["SKM657"] and "`verdict`" in found.diagnostics[0].message


def test_waiting_edges_and_fan_out_from_start() -> None:
    b = StateGraph(State)
    b.add_node("plan", plan)
    b.add_node("write", write)
    b.add_node("review", review)
    b.add_edge(START, "plan")
    b.add_edge(START, "write")
    b.add_edge(["plan", "write"], "review")
    b.add_edge("review", END)
    imported = import_graph(b)
    text = print_module(imported.module)
    assert "start START" in text and "-> review" in text
    assert codes(check(b)) == []


def test_node_without_edges_ends_the_run_with_a_note() -> None:
    b = StateGraph(State)
    b.add_node("write", write)
    b.add_edge(START, "write")
    found = check(b)
    assert codes(found) == ["SKM653"]
    assert found.diagnostics[0].severity is Severity.NOTE


def test_fifty_node_graph_checks() -> None:
    b = StateGraph(State)
    for i in range(50):
        b.add_node(f"n{i}", write)
    b.add_edge(START, "n0")
    for i in range(49):
        b.add_edge(f"n{i}", f"n{i + 1}")
    b.add_edge("n49", END)
    assert check(b).diagnostics == []


# ---------------------------------------------------------------- command line

AGENT = '''
from typing import Literal, TypedDict
from langgraph.graph import END, START, StateGraph

class State(TypedDict):
    question: str
    answer: str
    tries: int

def answer(state: State):
    return {"answer": "42", "tries": state.get("tries", 0) + 1}

def check(state: State) -> Literal["answer", "__end__"]:
    return END if state["tries"] >= 3 or state["answer"] else "answer"

builder = StateGraph(State)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_conditional_edges("answer", check)
graph = builder.compile()
'''


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120)


def test_cli_import_writes_a_checked_runnable_machine(tmp_path: Path) -> None:
    (tmp_path / "my_agent.py").write_text(textwrap.dedent(AGENT))
    out = tmp_path / "agent.skm"
    r = cli("import", "langgraph", "my_agent:graph", "-o", str(out), cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "counter steps max 25" in out.read_text()
    assert skillc.check(out).diagnostics == []
    assert cli("test", str(out), "--examples", "20", cwd=tmp_path).returncode == 0
    assert cli("dot", str(out), cwd=tmp_path).stdout.startswith("digraph")


def test_an_attribute_that_is_none_is_not_a_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `MODULE:ATTR` naming a None value used to give a diagnostic list holding None (an internal error).
    from skillc.frontends.importers.langgraph import to_skm

    (tmp_path / "agent_that_is_none.py").write_text("graph = None\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    text, found = to_skm("agent_that_is_none:graph")
    assert text is None and [str(d.code) for d in found] == ["SKM651"]
    assert "NoneType is not a LangGraph StateGraph" in found[0].message


@pytest.mark.parametrize("spec, code", [("nowhere:graph", "SKM650"), ("my_agent:missing", "SKM650"),
                                        ("my_agent", "SKM650"), ("boom:graph", "SKM650"), ("my_agent:State", "SKM651")])
def test_cli_import_failures_are_diagnostics(tmp_path: Path, spec: str, code: str) -> None:
    (tmp_path / "my_agent.py").write_text(textwrap.dedent(AGENT))
    (tmp_path / "boom.py").write_text("raise SystemExit('no')\n")
    out = tmp_path / "out.skm"
    r = cli("import", "langgraph", spec, "-o", str(out), cwd=tmp_path)
    assert r.returncode == 1 and code in r.stdout and "Traceback" not in r.stderr
    assert not out.exists()
