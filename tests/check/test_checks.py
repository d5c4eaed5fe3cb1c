"""Focused checks of the checker's reporting: spans, per-place notes, forbidden states, witnesses."""

from __future__ import annotations

import skillc
from skillc.diagnostics import Severity


def _check(text: str):
    return skillc.check(text, path="case.skm")


def _at(result, code: str) -> list[tuple[int, int]]:
    return [d.span.start_pos for d in result.diagnostics if str(d.code) == code]


def test_spans_point_at_the_variable_not_at_a_string_or_keyword() -> None:
    text = """machine m {
  var notes: str
  var reads: str
  start a

  model a {
    reads reads
    writes notes
    prompt "p"
    when contains(notes, "reads") and reads == "" -> done
    -> done { notes = "reads: " ++ reads }
  }

  terminal done: success
  fallback
}
"""
    r = _check(text)
    assert _at(r, "SKM210") == [(7, 11)]
    assert sorted(_at(r, "SKM211")) == [(10, 39), (11, 36)]


def test_opaque_notes_are_reported_at_every_place() -> None:
    text = """machine m {
  record Review {
    score: int
  }

  var review: Review
  start a

  model a {
    writes review
    prompt "p"
    when review.score > 3 -> b
    -> b
  }

  model b {
    reads review
    writes review
    prompt "p"
    when review.score > 3 -> done
    -> done
  }

  terminal done: success
  fallback
}
"""
    notes = [d for d in _check(text).diagnostics if str(d.code) == "SKM242"]
    assert sorted(d.span.start_pos for d in notes) == [(12, 10), (20, 10)]
    assert all(d.severity is Severity.NOTE for d in notes)


def test_a_forbidden_state_may_be_unreachable() -> None:
    text = """machine m {
  var x: str
  start a

  model a {
    writes x
    prompt "p"
    -> done
  }

  model delete_everything {
    writes x
    prompt "Delete."
    -> done
  }

  terminal done: success
  fallback
  rule forbid delete_everything "Never delete the user's files."
}
"""
    assert _check(text).diagnostics == []
    reachable = text.replace("    -> done\n  }\n\n  model delete",
                             "    when x == \"\" -> delete_everything\n    -> done\n  }\n\n  model delete")
    r = _check(reachable)
    assert [str(d.code) for d in r.diagnostics] == ["SKM222"]
    assert r.diagnostics[0].witness == ("a -> delete_everything performs it",)


def test_edges_after_the_default_are_not_also_reported_as_shadowed() -> None:
    text = """machine m {
  var x: str
  start a

  model a {
    writes x
    prompt "p"
    -> done
    when x == "" -> fallback
    -> fallback
  }

  terminal done: success
  fallback
}
"""
    assert sorted(str(d.code) for d in _check(text).diagnostics) == ["SKM203", "SKM203"]


def test_shadowing_witness_names_the_edge_that_takes_it() -> None:
    text = """machine m {
  var score: int
  start a

  model a {
    writes score
    prompt "p"
    when score > 100 -> done
    when score >= 10 -> done
    when score > 50 -> fallback
    -> done
  }

  terminal done: success
  fallback
}
"""
    (d,) = [d for d in _check(text).diagnostics if str(d.code) == "SKM241"]
    assert d.span.start_pos == (10, 10)
    assert d.secondary[0].span.start_pos == (9, 10)
    (line,) = d.witness
    value = int(line.split("=")[1])
    assert line.startswith("score = ") and 50 < value <= 100


def test_every_requires_line_reports_at_its_own_name() -> None:
    text = """machine m {
  var a: str
  var b: str
  start s

  model s {
    writes a
    prompt "p"
    -> done
  }

  terminal done: success {
    requires a
    requires b, c
  }

  fallback
}
"""
    result = skillc.check(text)
    spans = {str(d.code): d.span.start_pos for d in result.diagnostics}
    assert spans == {"SKM103": (14, 17)}
    result = skillc.check(text.replace("requires b, c", "requires b"))
    assert [(str(d.code), d.span.start_pos) for d in result.diagnostics] == [("SKM213", (14, 14))]


def test_twin_states_get_the_same_opaque_notes() -> None:
    """The second of two states with the same guards reuses the first one's answers, and notes the same places."""
    state = """  model NAME {
    writes answer
    prompt "p"
    when answer == "a" -> done
    -> done
    when "x" in items -> done
  }
"""
    text = ("machine m {\n  var answer: str\n  var items: list[str] = []\n  start one\n\n"
            + state.replace("NAME", "one").replace("-> done\n    when", "-> two\n    when")
            + "\n" + state.replace("NAME", "two") + "\n  terminal done: success\n  fallback\n}\n")
    r = skillc.check(text, path="case.skm")
    assert sorted(str(d.code) for d in r.diagnostics) == ["SKM203", "SKM203"]  # no SKM242: those edges never fire
