"""`rule ends` and `rule reads` as graph facts (skillc/check/requirements.py), as docs/checks.md §4 states them."""

from __future__ import annotations

from skillc.check.requirements import EXAMPLE_MACHINE
from tests.check.helpers import codes

ENDS = 'ends save in failed "If the write fails, stop with failure."'


def test_an_edge_to_the_fallback_counts_as_failed() -> None:
    """A `save` whose every edge goes to the fallback ends `failed`: `ends save in failed` holds, `in success` not."""
    only_fallback = EXAMPLE_MACHINE.format(failure="fallback", rule=ENDS).replace("-> done\n  }", "-> fallback\n  }")
    assert "SKM260" not in codes(only_fallback)
    assert "SKM260" in codes(only_fallback.replace("ends save in failed", "ends save in success"))


def test_a_success_terminal_after_the_operation_breaks_ends() -> None:
    """...and breaks when some path from the operation reaches a terminal of another outcome."""
    assert "SKM260" in codes(EXAMPLE_MACHINE.format(failure="fallback", rule=ENDS))


def test_reads_breaks_when_another_writer_reaches_the_reader() -> None:
    """`reads save from think` breaks once a second state writing `answer` reaches `save` without `think`."""
    rule = 'reads save from think "Write the answer you found."'
    assert "SKM261" not in codes(EXAMPLE_MACHINE.format(failure="write_failed", rule=rule))
    second = (EXAMPLE_MACHINE.format(failure="write_failed", rule=rule)
              .replace("start think", "start guess")
              .replace("  model think {", '  model guess {\n    writes answer\n    prompt "Guess."\n    -> save\n  }\n'
                                           "  model think {"))
    assert "SKM261" in codes(second)
