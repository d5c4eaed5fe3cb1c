"""Edits: a new state inserted on the edge that fired, guards read from values, bindings, judges and counters."""

from __future__ import annotations

from pathlib import Path

from skillc.check.source import check_source
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.refine.align import align
from skillc.improve.refine.edit import Candidate, _Var, propose, separate
from skillc.improve.replay import replay_trace
from skillc.ir import types as T
from skillc.ir.machine import Machine
from skillc.syntax.parser import parse
from skillc.syntax.printer import expr
from tests.improve.refine.test_align import GOOD, OK, PARTIAL, ROOT, WRITE, machine, native, partial


def edited(m: Machine, text: str, trace: DevTrace, archive: tuple[tuple[DevTrace, Alignment], ...] = (),
           path: Path = PARTIAL) -> tuple[Candidate, Alignment]:
    """Align and edit; the candidate must check."""
    cand, aligned, _ = checked_edit(m, text, trace, archive, path)
    return cand, aligned


def checked_edit(m: Machine, text: str, trace: DevTrace, archive: tuple[tuple[DevTrace, Alignment], ...] = (),
                 path: Path = PARTIAL) -> tuple[Candidate, Alignment, Machine]:
    """Align and edit; the candidate, the alignment and the candidate's checked machine (it must check)."""
    aligned = align(m, trace)
    module, problems = parse(text, str(path))
    assert module is not None, problems
    candidate = propose(module, m, trace, aligned.alignment, archive)
    checked = check_source(candidate.text, path=str(path))
    assert checked.machine is not None, [d.message for d in checked.diagnostics]
    assert not [d for d in checked.diagnostics if d.is_error], [d.message for d in checked.diagnostics]
    return candidate, aligned.alignment, checked.machine


def on_retry(events: tuple[Event, ...], outcome: str = "success") -> tuple[DevTrace, Candidate, Alignment, Machine]:
    """A trace on the RETRY machine, edited: the trace, the candidate, its alignment and its checked machine."""
    trace = DevTrace(events, outcome, "chat")  # type: ignore[arg-type]
    cand, aligned, m = checked_edit(machine(RETRY), RETRY, trace, path=ROOT / "m.skm")
    return trace, cand, aligned, m


def test_the_missing_read_back_is_inserted_after_the_write() -> None:
    text = PARTIAL.read_text(encoding="utf-8")
    cand, _ = edited(partial(), text, GOOD)
    assert [c.kind for c in cand.changes] == ["variable", "variable", "state", "retarget", "edge"]
    assert "tool bash_cat {" in cand.text
    assert '    call bash(command: "cat " ++ quote(answer_path))' in cand.text  # the value became a binding
    assert "writes bash_cat_stdout = stdout, bash_cat_exit_code = exit_code" in cand.text
    assert 'from "../livemath/SKILL.md":49' in cand.text  # "6. Read the file back. Run `cat answer.txt`"
    write = cand.text[cand.text.index("tool write {"):cand.text.index("tool bash_cat {")]
    assert "-> bash_cat" in write and "-> verified" not in write


def read_back_added() -> tuple[Machine, str, tuple[tuple[DevTrace, Alignment], ...]]:
    """The partial machine refined by one full run: the machine, its text and the archive of that run."""
    first, a = edited(partial(), PARTIAL.read_text(encoding="utf-8"), GOOD)
    m2 = check_source(first.text, path=str(PARTIAL)).machine
    assert m2 is not None
    return m2, first.text, ((GOOD, a),)


def test_a_guard_is_read_from_the_values_that_led_elsewhere() -> None:
    m2, text2, archive = read_back_added()
    bad = native([("printf '%s\\n' B > answer.txt", OK), ("cat answer.txt", {"stdout": "B\n", "exit_code": 0})],
                 "partial")
    second, _ = edited(m2, text2, bad, archive)
    assert "when len(bash_cat_stdout) != 1 -> partial_end" in second.text
    assert "terminal partial_end: partial" in second.text
    assert {c.kind for c in second.changes} == {"terminal", "guard"}


def test_a_failed_run_retargets_the_edge_only_it_takes() -> None:
    m, text = partial(), PARTIAL.read_text(encoding="utf-8")
    cand, _ = edited(m, text, native([("printf %s C > missing/answer.txt", {"stdout": "", "exit_code": 1})], "failed"))
    assert "when write_status != 0 -> failed_end" in cand.text
    assert [c.kind for c in cand.changes] == ["terminal", "retarget"]


def test_separate_prefers_variable_equality_then_lengths_then_literals() -> None:
    s, c, code = _Var("s", T.StrT()), _Var("c", T.EnumT(("A", "B"))), _Var("code", T.IntT())
    pos = [{"s": "A", "c": "A", "code": 0}, {"s": "B", "c": "B", "code": 0}]
    neg = [{"s": "A\n", "c": "A", "code": 0}]
    got = separate(pos, neg, [s, c, code])
    assert got is not None and expr(got) == "s == str(c)"
    got = separate([{"code": 2}], [{"code": 0}, {"code": 0}], [code])
    assert got is not None and expr(got) == "code != 0"
    assert separate([{"code": 0}], [{"code": 0}], [code]) is None  # the same values go both ways
    verdict = _Var("verdict", T.EnumT(("good", "bad", "ugly")))
    got = separate([{"verdict": "bad"}, {"verdict": "ugly"}], [{"verdict": "good"}], [verdict])
    assert got is not None and expr(got) == "verdict != good"  # a judge's label, as the enum literal


RETRY = """machine retry {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  var status: int
  start build
  tool build {
    call bash(command: "make all")
    writes status = exit_code
    -> done
  }
  terminal done: success
  fallback
}"""


def test_a_new_cycle_gets_a_counter_bounded_by_the_traces() -> None:
    fail, ok = {"stdout": "", "exit_code": 2}, {"stdout": "", "exit_code": 0}
    events = tuple(Event("tool", tool="bash", args={"command": "make all"}, result=r) for r in (fail, fail, ok))
    trace, cand, aligned, m = on_retry(events)
    assert aligned.states == ("build", "build", "build")
    assert "counter build_passes max 2" in cand.text
    assert "when status != 0 and build_passes < 2 -> build { build_passes += 1 }" in cand.text
    assert replay_trace(m, trace, aligned).ok


def test_no_separating_guard_inserts_a_judge() -> None:
    m2, text2, archive = read_back_added()
    skip = native([(WRITE, OK)], "success", inputs={"question": "another", "options": ["1", "2", "3", "4", "5"]})
    cand, _ = edited(m2, text2, skip, archive)
    assert "judge write_route {" in cand.text
    assert "when write_route_way == to_bash_cat -> bash_cat" in cand.text
    assert cand.problems and "no guard" in cand.problems[0]  # inputs are never guard material


def test_no_edit_when_the_machine_already_does_it() -> None:
    m, text = partial(), PARTIAL.read_text(encoding="utf-8")
    cand, _ = edited(m, text, native([(WRITE, OK)], "success"))
    assert cand.changes == () and cand.text.strip() == text.strip()


def test_a_tool_the_machine_does_not_declare_is_declared_from_the_trace() -> None:
    events = (Event("tool", tool="bash", args={"command": "make all"}, result={"stdout": "", "exit_code": 0}),
              Event("tool", tool="Read", args={"file_path": "build.log", "limit": 20}, result={"content": "ok"}))
    _, cand, aligned, _ = on_retry(events)
    assert aligned.states == ("build", "read_build")
    assert "tool Read(file_path: str, limit: int) -> (content: str)" in cand.text
    assert 'call Read(file_path: "build.log", limit: 20)' in cand.text


def test_a_model_event_nobody_performs_becomes_a_model_state_with_its_text() -> None:
    events = (Event("model", text="Summarise the build log in one line.", output={"summary": "all green"}),
              Event("tool", tool="bash", args={"command": "make all"}, result={"stdout": "", "exit_code": 0}))
    trace, cand, aligned, m = on_retry(events)
    assert aligned.states == ("summary_step", "build")
    assert "model summary_step {" in cand.text and "var summary: str" in cand.text
    assert "Summarise the build log in one line." in cand.text and "start summary_step" in cand.text
    assert replay_trace(m, trace, aligned).ok


def test_a_new_state_whose_successors_no_guard_separates_gets_a_judge() -> None:
    make, echo = {"command": "make all"}, {"command": "echo hi"}
    ok, hi = {"stdout": "", "exit_code": 0}, {"stdout": "hi", "exit_code": 0}
    events = tuple(Event("tool", tool="bash", args=a, result=r) for a, r in ((make, ok), (echo, hi)) * 2)
    trace, cand, aligned, m = on_retry(events)
    assert aligned.states == ("build", "bash_echo", "build", "bash_echo")
    assert "judge bash_echo_route {" in cand.text and cand.problems
    assert "counter bash_echo_passes max 2" in cand.text  # build -> bash_echo -> judge -> build: a new cycle
    # A judge that no event shows is replayed with its label unknown: one way only, so this trace cannot replay.
    assert not replay_trace(m, trace, aligned).ok


def test_a_value_one_new_state_read_becomes_a_binding_in_the_next() -> None:
    events = (Event("tool", tool="bash", args={"command": "make all"}, result={"stdout": "", "exit_code": 0}),
              Event("tool", tool="bash", args={"command": "ls dist"}, result={"stdout": "app.tar", "exit_code": 0}),
              Event("tool", tool="bash", args={"command": "tar tf app.tar"}, result={"stdout": "a", "exit_code": 0}))
    trace, cand, aligned, m = on_retry(events)
    assert aligned.states == ("build", "bash_ls", "bash_tar")
    assert 'call bash(command: "tar tf " ++ quote(bash_ls_stdout))' in cand.text and "reads bash_ls_stdout" in cand.text
    # quoted: no injection finding (SKM512, the bound value as `tar`'s operand, could be an option: refine binds the
    # value where the trace had it and does not add `--`, which would change the command the trace recorded)
    found = check_source(cand.text, path=str(ROOT / "m.skm")).diagnostics
    assert [str(d.code) for d in found] in ([], ["SKM512"])
    assert replay_trace(m, trace, aligned).ok


def test_a_run_cut_off_after_a_new_operation_stops_there_in_the_fallback() -> None:
    events = (Event("tool", tool="bash", args={"command": "make all"}, result={"stdout": "", "exit_code": 0}),
              Event("tool", tool="bash", args={"command": "make install"}, result={"stdout": "", "exit_code": 0}))
    trace, cand, aligned, m = on_retry(events, "unfinished")
    assert aligned.states == ("build", "build")  # the same command's verb: `make` is the build state
    cut = (events[0], Event("tool", tool="bash", args={"command": "strip app"}, result={"stdout": "", "exit_code": 0}))
    trace, cand, aligned, m = on_retry(cut, "unfinished")
    assert aligned.states == ("build", "bash_strip") and "unfinished" not in cand.text
    assert replay_trace(m, trace, aligned).ok
