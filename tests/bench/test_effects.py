"""RFC from observable effects: hand-made tool-call traces and workdirs, judged per requirement."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillc.bench.effects import (
    CallPattern,
    Compliance,
    FileRequirement,
    NoFileRequirement,
    NoToolRequirement,
    OrderRequirement,
    ToolCall,
    ToolRequirement,
    Verdict,
    check_requirements,
)

WRITE = ToolCall("bash", {"command": "printf 'B\\n' > answer.txt"})
READ = ToolCall("bash", {"command": "cat answer.txt"})
DELETE = ToolCall("bash", {"command": "rm -rf /tmp/x"})
SEARCH = ToolCall("search", {"query": "answer to q1", "limit": 3})

REQUIREMENTS = (
    FileRequirement("answer", "answer.txt", r"^[A-E]\n?$"),
    NoFileRequirement("no-temp", "*.tmp"),
    ToolRequirement("readback", CallPattern("bash", r"\bcat\s+answer\.txt", "command")),
    NoToolRequirement("no-delete", CallPattern("bash", r"rm\s+-rf")),
    OrderRequirement("write-then-read", CallPattern("bash", r">\s*answer\.txt"), CallPattern("bash", r"cat answer")),
)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "answer.txt").write_text("B\n", encoding="utf-8")
    return tmp_path


def _statuses(c: Compliance) -> dict[str, str]:
    return {v.id: v.status for v in c.verdicts}


def test_a_compliant_run(workdir: Path) -> None:
    c = check_requirements(REQUIREMENTS, workdir=workdir, calls=[WRITE, READ], outcome="success")
    assert c == Compliance(tuple(Verdict(r.id, "met") for r in REQUIREMENTS), True)


def test_the_native_run_of_the_issue_is_not_compliant(workdir: Path) -> None:
    """It wrote `B\\nC\\n` to answer.txt, never read it back, and declared success."""
    (workdir / "answer.txt").write_text("B\nC\n", encoding="utf-8")
    c = check_requirements(REQUIREMENTS, workdir=workdir, calls=[WRITE], outcome="success")
    assert c.compliant is False
    assert c.violated == ("answer", "readback", "write-then-read")
    reasons = {v.id: v.reason for v in c.verdicts}
    assert reasons["answer"] == "answer.txt does not match /^[A-E]\\n?$/ (it holds 'B\\nC\\n')"
    assert reasons["readback"] == "no call of `bash` with `command` matching /\\bcat\\s+answer\\.txt/"
    assert reasons["write-then-read"] == "no call of `bash` with an argument matching /cat answer/ after call 1"
    assert c.reason == "violated: answer, readback, write-then-read"


def test_forbidden_operations_and_files(workdir: Path) -> None:
    (workdir / "scratch.tmp").write_text("", encoding="utf-8")
    c = check_requirements(REQUIREMENTS, workdir=workdir, calls=[WRITE, DELETE, READ], outcome="success")
    assert c.violated == ("no-temp", "no-delete")
    reasons = {v.id: v.reason for v in c.verdicts}
    assert reasons == {"answer": "", "no-temp": "scratch.tmp is present", "readback": "",
                       "no-delete": "call 2 is `bash` with an argument matching /rm\\s+-rf/", "write-then-read": ""}


def test_order_needs_the_second_call_after_the_first(workdir: Path) -> None:
    c = check_requirements(REQUIREMENTS, workdir=workdir, calls=[READ, WRITE], outcome="success")
    assert _statuses(c)["write-then-read"] == "violated"
    assert _statuses(c)["readback"] == "met"


def test_a_failed_run_is_not_compliant_by_default(workdir: Path) -> None:
    """The machine-mode runs of the issue that scored RFC 8/8 while no run wrote an answer."""
    for outcome in ("failed", "unfinished"):
        c = check_requirements(REQUIREMENTS, workdir=workdir, calls=[WRITE, READ], outcome=outcome)
        assert (c.compliant, c.reason) == (False, f"the run ended {outcome}")
        assert all(v.status == "met" for v in c.verdicts)  # the verdicts themselves stay honest
    opted_in = check_requirements(REQUIREMENTS, workdir=workdir, calls=[WRITE, READ], outcome="failed",
                                  failed_runs_comply=True)
    assert opted_in.compliant is True
    assert check_requirements(REQUIREMENTS, workdir=workdir, calls=[WRITE, READ], outcome="partial").compliant


def test_missing_evidence_is_unverifiable_not_compliant(workdir: Path) -> None:
    c = check_requirements(REQUIREMENTS, workdir=None, calls=None, outcome="success")
    assert c.compliant is None
    assert {v.status for v in c.verdicts} == {"unverifiable"}
    partly = check_requirements(REQUIREMENTS, workdir=None, calls=[WRITE], outcome="success")
    assert partly.compliant is False  # a violation seen is a violation, whatever else could not be seen


def test_call_patterns() -> None:
    assert CallPattern("search").accepts(SEARCH)
    assert not CallPattern("bash").accepts(SEARCH)
    assert CallPattern("search", "q1").accepts(SEARCH)  # any string argument
    assert not CallPattern("search", "^3$").accepts(SEARCH)  # non-strings only through `argument`
    assert CallPattern("search", "^3$", "limit").accepts(SEARCH)
    assert not CallPattern("search", "q1", "missing").accepts(SEARCH)


def test_file_outside_the_workdir_is_not_delivered(workdir: Path, tmp_path_factory) -> None:
    other = tmp_path_factory.mktemp("other") / "answer.txt"
    other.write_text("B\n", encoding="utf-8")
    (workdir / "answer.txt").unlink()
    (workdir / "answer.txt").symlink_to(other)
    c = check_requirements([FileRequirement("answer", "answer.txt")], workdir=workdir, calls=[], outcome="success")
    assert c.verdicts == (Verdict("answer", "violated", "answer.txt was not delivered"),)


def test_evidence_requirements_judge_what_the_run_handed_over() -> None:
    from skillc.bench.effects import EvidenceRequirement

    need = EvidenceRequirement("evidence", (("success", ("choice", "readback")), ("success", ("choice",))))
    judged = {
        "both": check_requirements([need], workdir=None, calls=[], outcome="success",
                                   outputs={"choice": "B", "readback": "B"}),
        "one alternative": check_requirements([need], workdir=None, calls=[], outcome="success",
                                              outputs={"choice": "B"}),
        "null": check_requirements([need], workdir=None, calls=[], outcome="success", outputs={"choice": None}),
        "no terminal": check_requirements([need], workdir=None, calls=[], outcome="partial", outputs={}),
        "not available": check_requirements([need], workdir=None, calls=[], outcome="success"),
    }
    assert {k: (c.compliant, c.verdicts[0].reason) for k, c in judged.items()} == {
        "both": (True, ""), "one alternative": (True, ""), "null": (False, "evidence missing: choice"),
        "no terminal": (False, "no terminal has outcome partial"),
        "not available": (None, "the run's outputs are not available")}


def test_a_rule_order_waits_for_its_first_then_call() -> None:
    rule = OrderRequirement("o", CallPattern("bash", "cat"), CallPattern("bash", ">"), then_required=False)
    statuses = [check_requirements([rule], workdir=None, calls=calls, outcome="success").verdicts[0].status
                for calls in ([], [READ], [READ, WRITE], [WRITE, READ], [WRITE, READ, WRITE])]
    assert statuses == ["met", "met", "met", "violated", "violated"]


def test_a_labelled_pattern_is_described_by_its_label() -> None:
    pattern = CallPattern("bash", arguments=(("command", r"^cat\s+"),), label="`bash` as state `read` calls it")
    assert pattern.accepts(READ) and not pattern.accepts(WRITE)
    assert pattern.describe() == "`bash` as state `read` calls it"
    assert CallPattern("bash", arguments=(("command", "^cat"),)).describe() == "`bash` with `command` matching /^cat/"


def test_a_rule_order_between_two_calls_of_one_tool_is_met_in_order() -> None:
    """Two states that call `ask_user` with free arguments (a menu, then a confirmation) give patterns that accept
    the same calls: the machine's own run, asking twice in order, meets `order gate1 before gate2` (it was judged
    violated, because the first call counted as a `then` call with no `first` call before it)."""
    ask = ToolCall("ask_user", {"question": "which?", "options": ["a", "b"]})
    rule = OrderRequirement("rule-2", CallPattern("ask_user"), CallPattern("ask_user"), then_required=False)
    verdict = check_requirements([rule], workdir=None, calls=[ask, ask], outcome="success").verdicts[0]
    assert verdict.status == "met"
    distinct = OrderRequirement("o", CallPattern("ask_user"), CallPattern("bash", "git branch -D"), then_required=False)
    delete = ToolCall("bash", {"command": "git branch -D wip"})
    assert [check_requirements([distinct], workdir=None, calls=c, outcome="success").verdicts[0].status
            for c in ([delete, ask], [ask, delete], [ask])] == ["violated", "met", "met"]
