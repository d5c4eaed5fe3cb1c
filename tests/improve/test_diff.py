"""The one structural diff (skillc.improve.diff): what a picture shows changed, and what a replay could see."""

from __future__ import annotations

import attrs

from skillc.improve.diff import MachineDiff, diff_machines
from tests.render.test_diff import NEW, OLD, machine


def test_the_diff_names_what_changed() -> None:
    d = diff_machines(machine(OLD), machine(NEW))
    assert (d.added_states, d.removed_states, d.changed_states) == (("c",), ("b",), ("a",))
    assert set(d.added_edges) == {("a", "c"), ("c", "done")}
    assert set(d.removed_edges) == {("a", "b"), ("b", "done")}
    assert d.changed_edges == (("a", "fallback"),)
    assert d.state_change("c") == "added" and d.state_change("done") == "same"
    assert d.edge_change(("a", "b")) == "removed" and d.edge_change(("a", "fallback")) == "changed"
    same = diff_machines(machine(OLD), machine(OLD))
    assert same.empty and same.replay_same and same == MachineDiff()


def test_the_replay_view_of_the_same_diff() -> None:
    """`a`'s call changed and `b` → `c`: operations; `a`'s first edge's guard changed: its edges from edge 1."""
    d = diff_machines(machine(OLD), machine(NEW))
    assert not d.everything and d.operations == {"a", "b", "c"} and d.edges == {"a": 0}
    assert d.why == ("the operation of `a` changed", "the edges of `a` changed from edge 1", "state `b` removed",
                     "state `c` added")
    moved = diff_machines(machine(OLD), machine(OLD.replace("start a", "start b")))
    assert moved.everything and moved.why == ("the start state, an input or an initial value changed",)


def test_a_prompt_is_a_change_a_picture_shows_but_no_replay_sees() -> None:
    old = machine(OLD)
    a = old.states["a"]
    documented = attrs.evolve(old, states={**old.states, "a": attrs.evolve(a, prompt="say more")})
    d = diff_machines(old, documented)
    assert d.changed_states == ("a",) and not d.empty and d.replay_same


def test_edges_compare_as_printed_in_order() -> None:
    """Two edges between the same states swapped: the pair is changed (order is part of an edge)."""
    old = machine(OLD)
    a = old.states["a"]
    swapped = (attrs.evolve(a.edges[1], index=0), attrs.evolve(a.edges[0], index=1))
    d = diff_machines(old, attrs.evolve(old, states={**old.states, "a": attrs.evolve(a, edges=swapped)}))
    assert set(d.changed_edges) == {("a", "fallback"), ("a", "b")} and d.edges == {"a": 0}


def test_lines_list_every_change_a_picture_shows() -> None:
    d = diff_machines(machine(OLD), machine(NEW))
    assert d.lines()[:3] == ("state `c` added", "state `b` removed", "state `a` changed")
    assert "edge a -> fallback changed" in d.lines() and len(d.lines()) == 3 + 5
