"""A "did you mean" hint is a value: printed as the hint, carried in `data` for programs that act on it."""

from __future__ import annotations

from skillc import language
from skillc.diagnostics import Suggestion, codes, make
from skillc.ir.suggest import did_you_mean


def test_a_suggestion_is_printed_as_the_hint_and_kept_as_data() -> None:
    d = make(codes.IO_ERROR, "no such thing `answr`", hint=Suggestion("answr", "answer"), data={"state": "s"})
    assert d.hint == "did you mean `answer`?"
    assert d.datum("name") == "answr" and d.datum("suggestion") == "answer" and d.datum("state") == "s"
    assert make(codes.IO_ERROR, "x", hint="plain words").data == ()


def test_did_you_mean_finds_the_close_name_or_none() -> None:
    assert did_you_mean("answr", ["answer", "task"]) == Suggestion("answr", "answer")
    assert did_you_mean("TASK", ["task"]) == Suggestion("TASK", "task")  # case alone
    assert did_you_mean("zzz", ["answer"]) is None


def test_lowering_names_the_misspelt_variable_in_data() -> None:
    text = """machine m {
  var answer: str
  start ask
  model ask {
    writes answr
    prompt "Answer."
    -> done
  }
  terminal done: success
  fallback
}
"""
    result = language.check(text, path="m.skm")
    (found,) = [d for d in result.diagnostics if d.datum("suggestion") is not None]
    assert (found.datum("name"), found.datum("suggestion")) == ("answr", "answer")
    assert found.hint == "did you mean `answer`?"
