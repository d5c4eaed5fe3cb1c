"""Executable test cases on cached outputs: verdicts, broken cases, timeouts, isolation, validation and repair."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from skillc.improve.evolve import codes
from skillc.improve.evolve.cases import (
    Draft,
    Proposal,
    VerifyRequest,
    generate_cases,
    run_case,
    syntax_problem,
    validate,
)
from skillc.improve.evolve.state import Hypothesis, Output

_PY_FILE = "def check(workdir, outputs, trace):\n    return (workdir / 'answer.txt').is_file()\n"


def _py(source: str, case_id: str = "c") -> Draft:
    return Draft(case_id, "python", source, "hard")


def _sh(source: str, case_id: str = "c") -> Draft:
    return Draft(case_id, "shell", source, "hard")


def test_python_case_sees_workdir_outputs_and_trace(output: Output) -> None:
    assert run_case(_py(_PY_FILE), output, 30).holds
    reads = ("def check(workdir, outputs, trace):\n"
             "    ok = outputs['answer']['value'] == 42 and trace.read_text().startswith('{')\n"
             "    return ok, 'checked'\n")
    result = run_case(_py(reads), output, 30)
    assert (result.holds, result.reason, result.error) == (True, "checked", None)
    missing = _py("def check(workdir, outputs, trace):\n    return (workdir / 'nope.txt').is_file()\n")
    assert run_case(missing, output, 30).holds is False and run_case(missing, output, 30).error is None


def test_shell_case_exit_status_holds_fails_or_is_broken(output: Output) -> None:
    assert run_case(_sh("grep -qx 42 answer.txt"), output, 30).holds
    result = run_case(_sh("grep -qx 41 answer.txt"), output, 30)
    assert not result.holds and result.error is None
    broken = run_case(_sh("exit 3"), output, 30)
    assert not broken.holds and broken.error is not None and "exited 3" in broken.error


def test_a_case_that_raises_or_returns_junk_is_broken(output: Output) -> None:
    raised = run_case(_py("def check(workdir, outputs, trace):\n    raise KeyError('x')\n"), output, 30)
    assert raised.error is not None and "KeyError" in raised.error
    junk = run_case(_py("def check(workdir, outputs, trace):\n    return 'yes'\n"), output, 30)
    assert junk.error is not None and "not a bool" in junk.error
    exits = run_case(_py("import sys\ndef check(workdir, outputs, trace):\n    sys.exit(0)\n"), output, 30)
    assert exits.error is not None and "SystemExit" in exits.error


def test_a_case_that_hangs_is_killed_at_its_timeout(output: Output) -> None:
    started = time.monotonic()
    result = run_case(_sh("sleep 30 & sleep 30"), output, 0.5)
    assert time.monotonic() - started < 10
    assert not result.holds and result.error is not None and "0.5 s" in result.error


def test_a_case_cannot_change_the_cached_output(output: Output) -> None:
    assert run_case(_sh("rm answer.txt && echo x > new.txt"), output, 30).holds
    assert sorted(p.name for p in output.workdir.iterdir()) == ["answer.txt"]


@pytest.mark.parametrize(("draft", "fragment"), [
    (_py("def check(workdir, outputs, trace)\n    return True\n"), "line 1"),
    (_py("def verify(workdir, outputs, trace):\n    return True\n"), "no top-level function check"),
    (_sh("if then fi"), ""),
])
def test_syntax_problems_are_found_without_running(draft: Draft, fragment: str) -> None:
    problem = syntax_problem(draft)
    assert problem is not None and fragment in problem


def test_validate_accepts_a_case_that_reaches_a_verdict(output: Output) -> None:
    assert validate(_py(_PY_FILE), output, 30) is None
    assert validate(_sh("test -f nope.txt"), output, 30) is None  # does not hold, but is a usable case
    assert validate(_sh("no-such-command-xyz"), output, 30) is not None  # exit 127: broken


class _Scripted:
    """A self-verifier replaying one list of drafts per round, recording its requests."""

    def __init__(self, rounds: Sequence[Sequence[Draft]]) -> None:
        self.rounds = rounds
        self.requests: list[VerifyRequest] = []

    def propose(self, request: VerifyRequest) -> Proposal:
        self.requests.append(request)
        return Proposal(tuple(self.rounds[request.round - 1]) if request.round <= len(self.rounds) else ())


HYPOTHESIS = Hypothesis("h1", "the answer file is missing", "answer.txt does not exist")


def test_broken_drafts_are_repaired_from_the_feedback(output: Output) -> None:
    verifier = _Scripted([[_py(_PY_FILE, "good"), _py("def check(:\n", "bad")],
                          [_py(_PY_FILE.replace("answer", "nope"), "bad")]])
    generated = generate_cases(verifier, HYPOTHESIS, 0, output, repair_rounds=3, max_cases=10, timeout_s=30)
    assert [c.id for c in generated.cases] == ["good", "bad"] and generated.rounds == 2
    assert all(c.owners == frozenset({"h1"}) for c in generated.cases)
    assert verifier.requests[1].feedback[0][0] == "bad" and generated.diagnostics == ()


def test_a_draft_still_broken_after_v_rounds_is_dropped_with_skm843(output: Output) -> None:
    bad = _sh("exit 4", "bad")
    generated = generate_cases(_Scripted([[bad], [bad], [bad], [bad]]), HYPOTHESIS, 0, output,
                               repair_rounds=3, max_cases=10, timeout_s=30)
    assert generated.cases == () and generated.rounds == 3
    assert [str(d.code) for d in generated.diagnostics] == [codes.UNVALIDATED_CASE.code]


def test_at_most_c_cases_per_invocation(output: Output) -> None:
    drafts = [_sh("true", f"c{i}") for i in range(5)]
    generated = generate_cases(_Scripted([drafts]), HYPOTHESIS, 0, output, repair_rounds=3, max_cases=2,
                               timeout_s=30)
    assert [c.id for c in generated.cases] == ["c0", "c1"]


def test_a_broken_draft_the_verifier_stops_repairing_is_still_dropped_with_skm843(output: Output) -> None:
    verifier = _Scripted([[_sh("exit 4", "bad"), _sh("true", "ok")]])  # no repair in the later rounds
    generated = generate_cases(verifier, HYPOTHESIS, 0, output, repair_rounds=3, max_cases=10, timeout_s=30)
    assert [c.id for c in generated.cases] == ["ok"] and generated.rounds == 3
    assert [f[0] for f in verifier.requests[2].feedback] == ["bad"]  # still asked to repair it
    assert [str(d.code) for d in generated.diagnostics] == [codes.UNVALIDATED_CASE.code]
    assert "'bad'" in generated.diagnostics[0].message and "exited 4" in generated.diagnostics[0].message


def test_an_empty_case_and_a_reused_id_never_become_cases(output: Output) -> None:
    verifier = _Scripted([[_sh("", "empty"), _sh("true", ""), _sh("true", "c"), _sh("false", "c")]])
    generated = generate_cases(verifier, HYPOTHESIS, 0, output, repair_rounds=1, max_cases=10, timeout_s=30)
    assert [(c.id, c.source) for c in generated.cases] == [("c", "true")]
    messages = sorted(d.message for d in generated.diagnostics)
    assert len(messages) == 3 and all(str(d.code) == codes.UNVALIDATED_CASE.code for d in generated.diagnostics)
    assert any("'c'" in m and "its id is taken" in m for m in messages)
    assert any("'empty'" in m and "source is empty" in m for m in messages)
    assert any("''" in m and "no id" in m for m in messages)
