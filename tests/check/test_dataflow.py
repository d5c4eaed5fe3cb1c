"""Definite assignment (check/dataflow.py) as a function other stages call: Def at each state's entry."""

from __future__ import annotations

import skillc
from skillc.check.dataflow import assigned_on_entry, definitely_assigned

TEXT = """machine m {
  input topic: str
  var draft: str
  var note: str
  var verdict: enum { ok, redo }
  var extra: str = ""
  start write

  model write {
    reads topic
    writes draft
    prompt "p"
    when draft == "" -> write
    -> review { note = "first" }
  }

  judge review {
    reads draft
    writes verdict
    prompt "p"
    when verdict == redo -> fix
    -> done
  }

  model fix {
    reads draft, note
    writes draft
    prompt "p"
    -> review
  }

  model spare {
    writes note
    prompt "p"
    -> done
  }

  terminal done: success
  fallback
}
"""


def test_definitely_assigned_is_def_at_each_reachable_state() -> None:
    machine = skillc.load(TEXT, path="case.skm").machine
    assert machine is not None
    found = definitely_assigned(machine)
    assert found["write"] == {"topic", "extra"}
    assert found["review"] == {"topic", "extra", "draft", "note"}
    assert found["fix"] == {"topic", "extra", "draft", "note", "verdict"}
    assert found["done"] == {"topic", "extra", "draft", "note", "verdict"}
    assert "spare" not in found  # unreachable


def test_a_graph_without_a_machine_gets_the_same_fixpoint() -> None:
    edges = {"a": ["b", "c"], "b": ["d"], "c": ["d"], "d": ["b"], "lost": ["d"]}
    writes = {"a": ["x"], "b": ["y"], "c": ["y", "z"], "lost": ["w"]}
    found = assigned_on_entry("a", edges, writes, initial=["task"])
    assert found == {"a": {"task"}, "b": {"task", "x"}, "c": {"task", "x"}, "d": {"task", "x", "y"}}
