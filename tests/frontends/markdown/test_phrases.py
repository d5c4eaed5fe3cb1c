"""What one sentence says: `If` parts, stop clauses (read after markup is stripped), bounds, inline commands."""

from __future__ import annotations

import pytest

from skillc.frontends.markdown.phrases import IfThen, Stop, if_parts, inline_command, max_times, stop_clause


def test_if_parts_split_the_condition_from_the_action() -> None:
    assert if_parts("If the tests fail, fix them.") == IfThen("the tests fail", "fix them")
    assert if_parts("**If** it breaks (non-zero exit, permission error), stop.") == IfThen(
        "it breaks (non-zero exit, permission error)", "stop")
    assert if_parts("If the branch is clean") == IfThen("the branch is clean", "")


@pytest.mark.parametrize(("text", "stop"), [
    ("stop", Stop("", "stopped", "success")),
    ("give up and report failure", Stop("", "aborted", "failed")),
    ("tell the user, then stop with failure", Stop("tell the user", "failure", "failed")),
    ("finish as unverified (partial)", Stop("", "unverified", "partial")),
    ("stop as incomplete", Stop("", "incomplete", "partial")),
])
def test_stop_clauses_name_their_terminal_and_outcome(text: str, stop: Stop) -> None:
    assert stop_clause(text) == stop


def test_words_that_merely_contain_a_stop_verb_are_not_stop_clauses() -> None:
    assert stop_clause("exit-code checks run in CI") is None
    assert stop_clause("finish the release notes") is None


def test_bounds_and_inline_commands() -> None:
    assert max_times("retry at most 5 times") == 5
    assert max_times("up to two times") == 2
    assert max_times("keep going") is None
    assert inline_command("Run `pytest -q` in the root.") == "pytest -q"
    assert inline_command("Edit `pyproject.toml` with `vim`.") is None
