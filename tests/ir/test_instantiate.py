"""Fragment instantiation: bindings checked against the fragment, instances expanded by renaming."""

from __future__ import annotations

from skillc.diagnostics import Diagnostic
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.instantiate import Instance, counter_problem, landing
from skillc.ir.machine import Variable
from tests.conftest import codes, load_text

PASS = """fragment pass() -> (out) {
  start out
}
"""


def _machine(body: str) -> str:
    return PASS + "machine m {\n" + body + "\n  fallback\n}\n"


def test_pass_through_instances_lead_to_the_state_their_exit_names() -> None:
    result = load_text(_machine("""
  start a
  use pass as a() -> (out: b)
  use pass as b() -> (out: done)
  terminal done: success
"""))
    assert result.diagnostics == []
    assert result.machine is not None
    assert result.machine.start == "done" and result.machine.instances == {"a": "done", "b": "done"}


def test_instances_routing_in_a_circle_are_reported_once_each() -> None:
    result = load_text(_machine("""
  start a
  use pass as a() -> (out: b)
  use pass as b() -> (out: a)
  terminal done: success
"""))
    assert codes(result.diagnostics) == ["SKM145", "SKM145"]
    assert sorted(d.message.split(": ")[1] for d in result.diagnostics) == ["a -> b -> a", "b -> a -> b"]


def test_landing_follows_entries_and_reports_a_circle_once() -> None:
    instances = {"a": Instance("b"), "b": Instance("a"), "c": Instance("s"), "d": Instance(None)}
    found: list[Diagnostic] = []
    circular: set[str] = set()
    assert landing("c", instances, {}, circular, found.append) == "s"
    assert landing("d", instances, {}, circular, found.append) == "d"  # not expanded: the name itself
    assert landing("x", instances, {}, circular, found.append) == "x"
    assert landing("a", instances, {}, circular, found.append) is None
    assert landing("a", instances, {}, circular, found.append) is None
    assert [str(d.code) for d in found] == ["SKM145"]


def test_counter_problem_allows_positive_steps_and_resets_in_range() -> None:
    c = Variable("c", T.INT, "counter", max=2)

    def const(v: int) -> ir.Expr:
        return ir.Const(T.INT, value=v)

    assert counter_problem(c, "+=", const(1)) is None
    assert counter_problem(c, "=", const(2)) is None
    assert counter_problem(c, "+=", const(0)) == "counter `c` can only be incremented by a positive integer constant"
    assert counter_problem(c, "-=", const(1)) == "counter `c` never goes down; reset it with `c = 0`"
    assert counter_problem(c, "=", const(3)) == "counter `c` can only be reset to a constant between 0 and 2"
    assert counter_problem(Variable("v", T.INT, "var"), "-=", const(1)) is None


def test_a_binding_that_does_not_fit_leaves_the_instance_unexpanded() -> None:
    result = load_text(_machine("""
  var n: int
  start a
  use pass as a(x: n) -> (out: done)
  terminal done: success
"""))
    assert codes(result.diagnostics) == ["SKM127"]
    assert result.machine is not None and result.machine.instances == {}
