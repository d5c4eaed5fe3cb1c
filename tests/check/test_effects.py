"""Success is proved by effects (SKM270): what counts as an effect, the witness, and what is not checked."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillc
from skillc.api import check_files
from skillc.check.effects import solve
from tests.check.helpers import check_text, codes

# `think` (a model) writes `answer`; `save` (a tool) writes it to answer.txt and binds `status`.
ACTS = """machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input question: str
  var answer: str
  var status: int
  var receipt: str
  var copy: str = ""
  counter tries max 2
  start think
  model think {
    reads question
    writes answer
    prompt "Answer."
    -> save
  }
  tool save {
    reads answer
    call bash(command: "printf %s " ++ quote(answer) ++ " > answer.txt")
    writes status = exit_code, receipt = stdout
    when status != 0 -> fallback
    -> done EDGE
  }
  terminal done: success { requires EVIDENCE }
  fallback
}
"""


def acts(evidence: str, edge: str = "") -> str:
    return ACTS.replace("EVIDENCE", evidence).replace(" EDGE", edge)


@pytest.mark.parametrize("evidence", [
    "answer, status",                    # a variable a tool state bound
    "answer, status == 0",               # a predicate over such variables
    "answer, receipt != \"\"",
    'answer, exists("answer.txt")',      # a world predicate
    'file("answer.txt") == answer',      # a world predicate that also reads model text
    "question",                          # an input, never overwritten
])
def test_effect_proved_evidence_passes(evidence: str) -> None:
    assert codes(acts(evidence)) == []


@pytest.mark.parametrize("evidence", [
    "answer",                   # model text
    "answer, copy",             # an initial value is no effect
    "answer, tries",            # nor is a counter
    "answer, answer != \"\"",   # a predicate over model text
    "answer, status == status or true",  # fine: status is proved (kept as a sanity check below)
])
def test_model_text_alone_is_reported(evidence: str) -> None:
    expected = [] if "status" in evidence else ["SKM270"]
    assert codes(acts(evidence)) == expected


def test_a_constant_predicate_proves_nothing() -> None:
    assert codes(acts("answer, true")) == ["SKM270"]


def test_the_diagnostic_names_the_path_and_the_writer() -> None:
    [d] = check_text(acts("answer")).diagnostics
    assert str(d.code) == "SKM270" and d.severity.name == "WARNING"
    assert d.message == ("success terminal `done` rests on model text only: `answer` is not produced by a tool "
                         "state or an input on every path")
    assert d.witness == ("a run reaches `done` along think -> save -> done",
                         "`answer` was last written by model state `think`")
    assert 'requires exists("…")' in d.hint
    assert d.span is not None and d.span.text().startswith("terminal done")


def test_no_evidence_at_all_is_reported() -> None:
    text = acts("answer").replace("  terminal done: success { requires answer }", "  terminal done: success")
    [d] = check_text(text).diagnostics
    assert str(d.code) == "SKM270" and "requires no evidence" in d.message


def test_strict_makes_it_fail(tmp_path: Path) -> None:
    path = tmp_path / "m.skm"
    path.write_text(acts("answer"), encoding="utf-8")
    assert not check_files([str(path)]).failed
    assert check_files([str(path)], strict=True).failed


def test_edge_assignments_from_effects_are_effects() -> None:
    assert codes(acts("copy", " { copy = str(status) }")) == []
    assert codes(acts("copy", " { copy = receipt ++ \"!\" }")) == []
    # mixed with model text, or a constant: not an effect
    assert codes(acts("copy", " { copy = receipt ++ answer }")) == ["SKM270"]
    assert codes(acts("copy", ' { copy = "done" }')) == ["SKM270"]


def test_one_path_of_model_text_is_enough_to_report() -> None:
    """`status` is bound on one path, then a model overwrites `receipt` on the other."""
    text = """machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var receipt: str
  var kind: enum { quick, full }
  start pick
  judge pick {
    writes kind
    prompt "Quick or full?"
    when kind == quick -> guess
    -> run
  }
  model guess {
    writes receipt
    prompt "Guess the receipt."
    -> done
  }
  tool run {
    call bash(command: "make")
    writes receipt = stdout
    -> done
  }
  terminal done: success { requires receipt }
  fallback
}
"""
    [d] = check_text(text).diagnostics
    assert str(d.code) == "SKM270"
    assert d.witness[0] == "a run reaches `done` along pick -> guess -> done"
    assert d.witness[1] == "`receipt` was last written by model state `guess`"
    # the analysis itself: proved after `run`, not after `guess`, so not at `done`
    m = skillc.load(text).machine
    eff = solve(m)
    assert eff.has(eff.proved["done"], "receipt") is False


def test_a_machine_that_cannot_act_is_not_checked() -> None:
    text = """machine m {
  var answer: str
  start think
  model think {
    writes answer
    prompt "Answer."
    -> done
  }
  terminal done: success { requires answer }
  fallback
}
"""
    assert codes(text) == []


def test_other_outcomes_are_not_checked() -> None:
    assert codes(acts("answer").replace("done: success", "done: partial")) == []


def test_evidence_that_may_be_unassigned_is_left_to_skm213() -> None:
    text = acts("answer, receipt").replace("    -> save\n", "    when answer == \"\" -> done\n    -> save\n")
    assert codes(text) == ["SKM213"]


def test_places_count_as_effects_and_world_predicates_may_read_them() -> None:
    assert codes(acts('answer, exists(workdir ++ "/answer.txt")')) == []
    assert codes(acts("answer, skill_dir")) == []


def test_fragment_exits_are_not_terminals_to_prove() -> None:
    text = """fragment ask_then_run(command: str) -> (ok) {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var note: str
  start think
  model think {
    writes note
    prompt "Think."
    -> run
  }
  tool run {
    reads command
    call bash(command: command)
    writes note = stdout
    -> ok
  }
}
"""
    result = skillc.check(text)
    assert result.diagnostics == []


def test_a_terminal_only_tools_lead_to_needs_no_evidence() -> None:
    """Tools and inputs alone decide that a run gets there (an imported Step Functions graph looks like this)."""
    text = """machine m {
  tool charge() -> (ok: bool)
  tool ship() -> (id: str)
  var ok: bool
  var id: str
  start charge
  tool charge {
    call charge()
    writes ok
    when not ok -> fallback
    -> ship
  }
  tool ship {
    call ship()
    writes id
    -> done
  }
  terminal done: success
  fallback
}
"""
    assert codes(text) == []
    with_model = text.replace("    -> ship\n  }", "    -> think\n  }\n  model think {\n    writes id\n"
                              "    prompt \"Think.\"\n    -> ship\n  }")
    assert codes(with_model) == ["SKM270"]
