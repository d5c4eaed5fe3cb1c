"""Bounded loops and counter bounds (check/loops.py): what pays for a loop, and what overflows a counter."""

from __future__ import annotations

from skillc.diagnostics import has_errors
from tests.check.helpers import check_text as _check
from tests.check.helpers import codes as _codes

LOOP = """machine m {
  var answer: str
  counter tries max 2
  start think

  model think {
    writes answer
    prompt "p"
    when answer == "" and tries < 2 -> reset { tries += 1 }
    -> done
  }

  model reset {
    writes answer
    prompt "p"
    -> think ASSIGN
  }

  terminal done: success
  fallback
}
"""


def test_counters_only_step_up_or_reset_to_a_constant_in_range() -> None:
    assert _codes(LOOP.replace("ASSIGN", "")) == []
    assert _codes(LOOP.replace("ASSIGN", "{ tries = 5 }")) == ["SKM139"]
    assert _codes(LOOP.replace("ASSIGN", "{ tries -= 1 }")) == ["SKM139"]
    assert "SKM139" in _codes(LOOP.replace("ASSIGN", "{ tries += tries }"))


def test_a_fragment_state_cannot_write_a_counter_it_is_bound_to() -> None:
    text = """fragment bump(n: int) -> (out) {
  start s

  model s {
    writes n
    prompt "Pick a number."
    -> out
  }
}

machine m {
  var answer: str
  counter tries max 2
  start think

  model think {
    writes answer
    prompt "p"
    when answer == "" and tries < 2 -> w { tries += 1 }
    -> done
  }

  use bump as w(n: tries) -> (out: think)
  terminal done: success
  fallback
}
"""
    assert "SKM137" in _codes(text)


def test_loops_among_unreachable_states_are_only_unreachable() -> None:
    text = """machine m {
  var x: str
  start a

  model a {
    writes x
    prompt "p"
    -> done
  }

  model b {
    writes x
    prompt "p"
    -> c
  }

  model c {
    writes x
    prompt "p"
    -> b
  }

  terminal done: success
  fallback
}
"""
    assert _codes(text) == ["SKM200", "SKM200"]


# ------------------------------------------------------------------ several assignments to one counter


def _counter_machine(edge: str, top: int = 2) -> str:
    return f"""machine m {{
  var answer: str
  counter tries max {top}
  start think
  model think {{
    writes answer
    prompt "p"
    {edge}
    -> done
  }}
  model again {{
    writes answer
    prompt "p"
    -> done
  }}
  terminal done: success
  fallback
}}
"""


def test_two_increments_on_one_edge_are_added_up() -> None:
    assert "SKM251" in _codes(_counter_machine('when answer == "" -> again { tries += 1, tries += 1 }', top=1))
    assert "SKM251" in _codes(_counter_machine('when answer == "" and tries < 2 -> again { tries += 1, tries += 1 }'))
    assert not has_errors(_check(_counter_machine(
        'when answer == "" and tries < 1 -> again { tries += 1, tries += 1 }')).diagnostics)


def test_a_reset_then_an_increment_past_the_maximum_is_an_overflow() -> None:
    found = [d for d in _check(_counter_machine('when answer == "" -> again { tries = 2, tries += 1 }')).diagnostics
             if str(d.code) == "SKM251"]
    assert found and "to 3" in found[0].message


def test_an_increment_before_a_reset_can_overflow_on_the_way() -> None:
    # The runtime checks the bound after each assignment, so `tries += 1` at tries = 2 fails before the reset.
    assert "SKM251" in _codes(_counter_machine('when answer == "" -> again { tries += 1, tries = 0 }'))
    assert "SKM251" not in _codes(
        _counter_machine('when answer == "" and tries < 2 -> again { tries += 1, tries = 0 }'))


def test_a_double_increment_pays_for_a_loop() -> None:
    text = _counter_machine('when answer == "" and tries < 1 -> think { tries += 1, tries += 1 }')
    assert [c for c in _codes(text) if c != "SKM200"] == [], _codes(text)  # `again` is unused here


def test_a_reset_composed_after_an_increment_does_not_pay() -> None:
    assert "SKM250" in _codes(_counter_machine('when answer == "" and tries < 2 -> think { tries += 1, tries = 0 }'))
