"""`skillc refine` and `skillc evolve` only propose bash bindings that pass SKM510/SKM511.

Refine binds a value a trace shows (a tool's output) into the next command with `quote()` only where
`quote()` protects it; its acceptance gate and evolve's check gate run the same check, so a candidate that
splices a value inside double quotes (the issue's `echo "processing " ++ quote(bash_cat_stdout)`) is refused.
"""

from __future__ import annotations

from skillc.check.source import check_source
from skillc.improve.events import Event
from skillc.improve.evolve.gate import check_gate
from skillc.improve.evolve.state import Node
from skillc.improve.gate import check_candidate
from tests.improve.refine.test_align import ROOT
from tests.improve.refine.test_edit import on_retry

EVENTS = (
    Event("tool", tool="bash", args={"command": "make all"}, result={"stdout": "", "exit_code": 0}),
    Event("tool", tool="bash", args={"command": "cat notes.txt"}, result={"stdout": "report.md", "exit_code": 0}),
    Event("tool", tool="bash", args={"command": 'echo "processing report.md"'}, result={"stdout": "", "exit_code": 0}),
)
INJECTABLE = '"echo \\"processing " ++ quote(bash_cat_stdout) ++ "\\""'
LITERAL = '    call bash(command: "echo \\"processing report.md\\"")'


def injectable(text: str) -> str:
    """The candidate with the issue's binding: the value spliced with `quote()` inside double quotes."""
    assert LITERAL in text
    return text.replace(LITERAL, f"    reads bash_cat_stdout\n    call bash(command: {INJECTABLE})")


def test_refine_does_not_bind_a_value_inside_double_quotes() -> None:
    _, cand, _, _ = on_retry(EVENTS)
    assert "quote(bash_cat_stdout)" not in cand.text  # inside "…" quote() would not protect it
    assert LITERAL in cand.text
    assert not [d for d in check_source(cand.text, path=str(ROOT / "m.skm")).diagnostics
                if str(d.code).startswith("SKM51")]


def test_refine_still_binds_a_value_standing_as_an_argument() -> None:
    events = (*EVENTS[:2], Event("tool", tool="bash", args={"command": "wc -l report.md"},
                                 result={"stdout": "3", "exit_code": 0}))
    _, cand, _, _ = on_retry(events)
    assert 'call bash(command: "wc -l " ++ quote(bash_cat_stdout))' in cand.text


def test_refine_acceptance_refuses_the_injectable_binding() -> None:
    trace, cand, _, _ = on_retry(EVENTS)
    machine, refusal = check_candidate(injectable(cand.text), str(ROOT / "m.skm"), f"trace {trace.id[:12]}")
    error = refusal.diagnostic if refusal is not None else None
    assert machine is None and error is not None and "SKM511" in error.message
    assert "inside double quotes" in error.message


def test_evolve_gate_refuses_the_injectable_binding() -> None:
    _, cand, _, _ = on_retry(EVENTS)
    assert check_gate(Node(0, cand.text)) is None
    why = check_gate(Node(1, injectable(cand.text)))
    assert why is not None and "SKM511" in why
