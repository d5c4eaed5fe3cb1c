"""The one machine-edit language (skillc.improve.edits): typed edits applied purely to the syntax tree, printed."""

from __future__ import annotations

import typing

import pytest

from skillc.improve import edits
from skillc.improve.edits import EDIT_FIELDS, EDIT_OPS, Edit, EditOp, Patch, PatchError, apply_edits, edit_text
from skillc.improve.events import Event
from skillc.syntax.parser import parse
from skillc.syntax.printer import print_module
from tests.improve.refine.test_align import GOOD, PARTIAL, partial
from tests.improve.refine.test_edit import RETRY, edited, on_retry

MACHINE = """machine m {
  var notes: str
  start a

  # the only step
  model a {
    writes notes
    prompt "write notes"
    -> done
  }

  terminal done: success
  fallback
}
"""


def test_every_operation_is_declared_and_dispatched() -> None:
    assert set(EDIT_OPS) == set(typing.get_args(EditOp)) == set(edits._EDITS)
    assert [name for name, _ in EDIT_FIELDS] == [f for f in Edit.__annotations__ if f != "op"]


def test_edits_rewrite_the_tree_purely_and_the_printer_keeps_comments() -> None:
    module, problems = parse(MACHINE, "m.skm")
    assert module is not None and not problems
    before = print_module(module)
    patch = Patch(machine=(Edit("set_prompt", state="a", text="write short notes"),
                           Edit("add_edge", state="a", text='notes == ""', target="a", index=0)))
    edited = apply_edits(module, patch.machine)
    assert print_module(module) == before  # the input tree is untouched
    text = print_module(edited)
    assert text == edit_text(MACHINE, patch.machine)
    assert "# the only step" in text and 'prompt "write short notes"' in text
    assert text.index('when notes == "" -> a') < text.index("-> done")


def test_an_edit_that_does_not_apply_is_named() -> None:
    with pytest.raises(PatchError, match=r"edit 1 \(remove_state\): no state `nowhere`"):
        edit_text(MACHINE, (Edit("set_prompt", state="a", text="x"), Edit("remove_state", state="nowhere")))
    with pytest.raises(PatchError, match="does not parse"):
        edit_text("machine {", ())
    with pytest.raises(PatchError, match="NUL"):
        edit_text(MACHINE, (Edit("set_prompt", state="a", text="a\x00b"),))


def test_refine_proposes_a_patch_of_the_same_language() -> None:
    """Refine's candidate is its patch applied to the machine text: new states, a retarget, guards, counters."""
    text = PARTIAL.read_text(encoding="utf-8")
    cand, _ = edited(partial(), text, GOOD)
    ops = [e.op for e in cand.patch.machine]
    assert ops == ["retarget", "add_statement", "add_statement", "add_state"], ops
    assert edit_text(text, cand.patch.machine) == cand.text
    fail, ok = {"stdout": "", "exit_code": 2}, {"stdout": "", "exit_code": 0}
    events = tuple(Event("tool", tool="bash", args={"command": "make all"}, result=r) for r in (fail, fail, ok))
    _, retried, _, _ = on_retry(events)
    assert {"set_guard", "add_assigns"} <= {e.op for e in retried.patch.machine}
    assert edit_text(RETRY, retried.patch.machine) == retried.text
    assert "when status != 0 and build_passes < 2 -> build { build_passes += 1 }" in retried.text
