"""Scoring from effects: hand-made machine, native and prompt-only traces (tests/bench/fixtures/score/) scored by
the one function the bench and `skillc score` share — task success from the verifier, RFC from the tool calls,
the workdir and the handed-over evidence, the machine's state rules beside RFC."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import skillc
from skillc import api
from skillc.bench.effects import OrderRequirement, ToolCall, ToolRequirement
from skillc.bench.rules import argument_pattern, rule_requirements
from skillc.bench.score import RunScore, TraceScore, score_run, score_trace_file
from skillc.bench.suite import load_suite
from skillc.cli import main
from skillc.ir.evaluate import evaluate
from skillc.ir.machine import Machine
from skillc.runtime.record import load_run
from tests.conftest import EXAMPLES

FIXTURES = Path(__file__).parent / "fixtures" / "score"
LIVEMATH = EXAMPLES / "livemath" / "livemath.skm"
CAREFUL = FIXTURES / "careful.skm"
SUITE = FIXTURES / "suite.toml"


def _machine(path: Path) -> Machine:
    machine = skillc.check(path.read_text(encoding="utf-8")).machine
    assert machine is not None
    return machine


def _scored(case: str, *, suite: bool = True) -> TraceScore:
    """A fixture trace scored as `skillc score` does (its workdir: the `work/` beside it)."""
    loaded = load_suite(SUITE).suite if suite else None
    return score_trace_file(FIXTURES / case / "trace.jsonl", _machine(LIVEMATH), suite=loaded)


def _statuses(sc: RunScore) -> dict[str, str]:
    return {v.id: v.status for v in sc.compliance.verdicts}


def test_the_issues_native_run_fails_by_its_verifier_and_by_rfc() -> None:
    """It wrote `B\\nC\\n`, never read it back and claimed `{"choice": "B", "readback": "B"}`."""
    ts = _scored("native-issue")
    sc = ts.score
    assert (ts.task, sc.mode, sc.outcome) == ("two-plus-two", "native", "success")
    assert sc.success is False and "holds 'B\\nC\\n'" in sc.success_reason
    assert sc.rfc is False
    assert _statuses(sc) == {"read-back": "violated", "rule-3": "violated", "rule-6": "violated", "evidence": "met"}
    reasons = {v.id: v.reason for v in sc.compliance.verdicts}
    assert reasons["rule-6"] == "no call of `bash` as state `read_back` calls it (command: 'cat …')"
    quotes = {v.id: v.quote for v in sc.compliance.verdicts}
    assert quotes["rule-6"] == "You MUST read answer.txt back after writing it."


def test_a_native_run_with_the_machines_effects_is_compliant_and_verified() -> None:
    sc = _scored("native-ok").score
    assert (sc.success, sc.rfc) == (True, True)
    assert set(_statuses(sc).values()) == {"met"}


def test_a_failed_run_is_not_compliant_whatever_it_left_out() -> None:
    """The run went to the fallback before writing: `required write` is violated, not waived by the outcome."""
    sc = _scored("machine-failed").score
    assert (sc.outcome, sc.success, sc.rfc) == ("failed", False, False)
    assert sc.compliance.reason == "the run ended failed"
    assert _statuses(sc)["rule-3"] == "violated"
    run = load_run(FIXTURES / "machine-failed" / "trace.jsonl")
    lenient = score_run(run, FIXTURES / "machine-failed" / "trace.jsonl", requirements=(), workdir=None,
                        verifier=None, failed_runs_comply=True, machine=_machine(LIVEMATH))
    assert lenient.rfc is False and lenient.compliance.violated == ("rule-3", "rule-6")


def test_state_rules_are_judged_in_machine_mode_and_never_counted_in_rfc() -> None:
    sc = _scored("machine-skipped-analyze").score
    states = {v.id: (v.status, v.reason) for v in sc.state_rules}
    assert states["rule-1"] == ("violated", "`pick` ran before `analyze`")
    assert states["rule-2"][0] == "met"
    assert sc.rfc is True  # every effect held; the broken state rule is reported beside RFC
    assert "rule-1" not in _statuses(sc)


@pytest.mark.parametrize("case", ["native-ok", "native-issue", "prompt-only-wrong"])
def test_state_rules_are_not_applicable_in_baselines(case: str) -> None:
    sc = _scored(case).score
    assert [v.id for v in sc.state_rules] == ["rule-1", "rule-2", "rule-4", "rule-5"]
    assert {v.status for v in sc.state_rules} == {"not applicable"}
    assert all("visits none" in v.reason for v in sc.state_rules)


def test_evidence_is_the_values_a_terminal_of_the_outcome_requires() -> None:
    sc = _scored("prompt-only-wrong").score
    assert sc.success is False and sc.rfc is False
    assert sc.compliance.violated == ("evidence",)
    assert sc.compliance.verdicts[-1].reason == "evidence missing: readback"


def test_success_never_comes_from_the_declared_outcome() -> None:
    for case in ("machine-ok", "native-issue", "native-ok"):
        ts = _scored(case, suite=False)
        assert ts.score.outcome == "success" and ts.score.success is None
        assert ts.score.success_reason == "no verifier (no suite)"


# ---------------------------------------------------------------- the same requirement in every mode

def _trace(tmp_path: Path, mode: str, calls: list[tuple[str, str, dict]], evidence: dict) -> Path:
    """A hand-made trace of `careful` in one mode: each call as a machine tool state or a baseline turn."""
    records: list[dict] = [{"type": "header", "skillc.trace_version": 2, "skillc.mode": mode,
                            "inputs": {"target": "data.csv"}}]
    for k, (state, tool, args) in enumerate(calls):
        records.append({"type": "step", "step": k, "state": state if mode == "machine" else "native",
                        "kind": "tool" if mode == "machine" else "turn", "tool_call": {"tool": tool, "args": args}})
    records.append({"type": "footer", "skillc.terminal": "done" if mode == "machine" else "native",
                    "skillc.outcome": "success", "skillc.evidence": evidence})
    path = tmp_path / f"{mode}-{len(list(tmp_path.iterdir()))}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


LOOK = ("look", "bash", {"command": "ls -l"})
SAVE = ("save", "bash", {"command": "cp data.csv backup/"})
RM = ("save", "rm", {"path": "data.csv"})
RUNS = {
    "look-then-save": ([LOOK, SAVE], {"rule-1": "met", "rule-2": "met", "rule-3": "met"}),
    "save-then-look": ([SAVE, LOOK], {"rule-1": "met", "rule-2": "violated", "rule-3": "met"}),
    "save-only": ([SAVE], {"rule-1": "violated", "rule-2": "violated", "rule-3": "met"}),
    "look-only": ([LOOK], {"rule-1": "met", "rule-2": "met", "rule-3": "met"}),  # order: no `save` at all
    "look-rm": ([LOOK, RM], {"rule-1": "met", "rule-2": "met", "rule-3": "violated"}),
}


@pytest.mark.parametrize("run_name", sorted(RUNS))
def test_the_same_tool_requirement_gives_the_same_verdict_in_every_mode(tmp_path: Path, run_name: str) -> None:
    calls, expected = RUNS[run_name]
    machine = _machine(CAREFUL)
    verdicts = {}
    for mode in ("machine", "native", "prompt-only"):
        trace = _trace(tmp_path, mode, calls, {"listing": "x"})
        sc = score_run(load_run(trace), trace, requirements=(), workdir=None, verifier=None, machine=machine)
        verdicts[mode] = sc.compliance.verdicts
        assert {v.id: v.status for v in sc.compliance.verdicts if v.id != "evidence"} == expected, mode
        assert sc.state_rules == ()  # every rule of `careful` is about tools
    assert verdicts["machine"] == verdicts["native"] == verdicts["prompt-only"]


def test_forbid_rules_name_the_offending_call(tmp_path: Path) -> None:
    trace = _trace(tmp_path, "native", [LOOK, RM], {"listing": "x"})
    sc = score_run(load_run(trace), trace, requirements=(), workdir=None, verifier=None, machine=_machine(CAREFUL))
    verdict = next(v for v in sc.compliance.verdicts if v.id == "rule-3")
    assert (verdict.status, verdict.reason, verdict.quote) == ("violated", "call 2 is `rm`", "Never delete files.")
    assert sc.rfc is False


def test_an_order_rule_judges_the_first_calls() -> None:
    rules = rule_requirements(_machine(CAREFUL))
    order = next(r for r in rules.requirements if isinstance(r, OrderRequirement))
    assert not order.then_required
    assert order.first.accepts(ToolCall("bash", {"command": "ls  -l"}))
    assert not order.first.accepts(ToolCall("bash", {"command": "ls -la"}))


# ---------------------------------------------------------------- argument patterns

@pytest.mark.parametrize("value", ["B", "C", "a b", "it's", "line\nbreak", "", "  "])
def test_a_derived_pattern_accepts_every_call_the_state_can_make(value: str) -> None:
    """The pattern keeps the literal text of the call and lets the holes be anything, so the machine always meets it:
    the state's own call expression, evaluated with any values, matches."""
    machine = _machine(LIVEMATH)
    requirements = {r.id: r for r in rule_requirements(machine).requirements if isinstance(r, ToolRequirement)}
    for rid, state in (("rule-3", "write"), ("rule-6", "read_back")):
        call = machine.states[state].call
        assert call is not None
        command = evaluate(dict(call.args)["command"], {"choice": value, "answer_path": value or "a.txt"})
        assert requirements[rid].call.accepts(ToolCall("bash", {"command": command})), (rid, command)


@pytest.mark.parametrize(("command", "read_back"), [
    ("cat answer.txt", True), ("cat  'answer.txt'", True), ("ls; cat answer.txt", True),
    ("ls category", False), ("concatenate answer.txt", False), ("echo B > answer.txt", False), ("cat", False),
])
def test_a_derived_pattern_tells_the_states_call_from_others(command: str, read_back: bool) -> None:
    machine = _machine(LIVEMATH)
    pattern = argument_pattern(dict(machine.states["read_back"].call.args)["command"])  # type: ignore[union-attr]
    assert pattern is not None
    assert bool(re.search(pattern, command)) is read_back


def test_rules_that_are_not_about_tools_are_state_rules() -> None:
    rules = rule_requirements(_machine(LIVEMATH))
    assert [rid for rid, _ in rules.state_rules] == ["rule-1", "rule-2", "rule-4", "rule-5"]
    assert [r.id for r in rules.requirements] == ["rule-3", "rule-6", "evidence"]


# ---------------------------------------------------------------- choosing the task

def test_the_task_is_the_one_whose_inputs_the_header_holds(tmp_path: Path) -> None:
    suite = load_suite(SUITE).suite
    assert suite is not None
    ts = score_trace_file(FIXTURES / "native-ok" / "trace.jsonl", _machine(LIVEMATH), suite=suite)
    assert (ts.task, ts.task_reason) == ("two-plus-two", "its inputs")
    named = score_trace_file(FIXTURES / "native-ok" / "trace.jsonl", _machine(LIVEMATH), suite=suite,
                             task_id="three-plus-four")
    assert (named.task, named.score.success) == ("three-plus-four", False)  # it wrote B; that task's answer is C
    other = tmp_path / "trace.jsonl"
    text = (FIXTURES / "native-ok" / "trace.jsonl").read_text(encoding="utf-8")
    other.write_text(text.replace("What is 2+2?", "What is 9+9?"), encoding="utf-8")
    unknown = score_trace_file(other, _machine(LIVEMATH), suite=suite)
    assert unknown.task is None and unknown.score.success is None
    assert unknown.score.success_reason == "no verifier (no task of the suite has this run's inputs; give --task)"
    assert unknown.workdir is None  # no `work/` beside it: file requirements are unverifiable
    assert unknown.score.rfc is True  # the suite's and the rules' requirements are all about tool calls here


# ---------------------------------------------------------------- `skillc score`

def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["score", *args])
    return result.exit_code, result.stdout, result.stderr


def test_skillc_score_prints_success_rfc_and_each_violation() -> None:
    code, out, _ = _cli(str(LIVEMATH), str(FIXTURES / "native-issue" / "trace.jsonl"),
                        str(FIXTURES / "native-ok" / "trace.jsonl"), "--suite", str(SUITE))
    assert code == 0, out
    assert "native, task two-plus-two, outcome declared: success" in out
    assert "  success: NO — answer.txt holds 'B\\nC\\n', not 'B'" in out
    assert ('VIOLATED rule-6 "You MUST read answer.txt back after writing it.": no call of `bash` as state '
            "`read_back` calls it (command: 'cat …')") in out
    assert "n/a rule-1" in out
    assert out.rstrip().endswith("2 traces: task success 50% (1/2), RFC 50% (1/2)")


def test_skillc_score_without_a_suite_says_success_is_unknown() -> None:
    code, out, _ = _cli(str(LIVEMATH), str(FIXTURES / "machine-ok" / "trace.jsonl"))
    assert code == 0
    assert "success: unknown — no verifier (no suite)" in out
    assert out.rstrip().endswith("1 trace: task success unknown (0/0, 1 unknown), RFC 100% (1/1)")


def test_skillc_score_json_is_one_object_per_trace_and_a_summary() -> None:
    code, out, _ = _cli(str(LIVEMATH), str(FIXTURES / "native-issue" / "trace.jsonl"), "--suite", str(SUITE),
                        "--json")
    assert code == 0
    row, summary = (json.loads(line) for line in out.splitlines())
    assert set(row) == {"trace", "mode", "task", "task_reason", "workdir", "outcome", "success", "success_reason",
                        "rfc", "rfc_reason", "requirements", "state_rules"}
    assert (row["success"], row["rfc"], row["outcome"]) == (False, False, "success")
    assert row["requirements"][0] == {"id": "read-back", "status": "violated",
                                      "reason": "no call of `bash` with `command` matching /\\bcat\\s+answer\\.txt/"
                                                " after call 1",
                                      "quote": "You MUST read answer.txt back after writing it."}
    assert summary == {"summary": True, "traces": 1, "task_success": 0.0,
                       "success": {"passed": 0, "failed": 1, "unknown": 0}, "request_level_full_compliance": 0.0,
                       "rfc": {"compliant": 0, "not_compliant": 1, "unknown": 0}}


def test_skillc_score_workdir_flag_replaces_the_cells_workdir(tmp_path: Path) -> None:
    (tmp_path / "answer.txt").write_text("B", encoding="utf-8")
    code, out, _ = _cli(str(LIVEMATH), str(FIXTURES / "native-issue" / "trace.jsonl"), "--suite", str(SUITE),
                        "--workdir", str(tmp_path), "--json")
    row = json.loads(out.splitlines()[0])
    assert (code, row["success"], row["workdir"]) == (0, True, str(tmp_path))


def test_skillc_score_refuses_bad_suites_tasks_and_traces(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[suite]\nmachine = 'nope.skm'\n", encoding="utf-8")
    code, _, err = _cli(str(LIVEMATH), str(FIXTURES / "native-ok" / "trace.jsonl"), "--suite", str(bad))
    assert code == 2 and "SKM704" in err
    code, _, err = _cli(str(LIVEMATH), str(FIXTURES / "native-ok" / "trace.jsonl"), "--suite", str(SUITE),
                        "--task", "two-plus-tow")
    assert code == 2 and "the suite has no task `two-plus-tow`. did you mean `two-plus-two`?" in err
    code, _, err = _cli(str(LIVEMATH), str(FIXTURES / "native-ok" / "trace.jsonl"), "--task", "x")
    assert code == 2 and "--task needs --suite" in err
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "step"}\n', encoding="utf-8")
    code, _, err = _cli(str(LIVEMATH), str(broken))
    assert code == 2 and "SKM" in err


def test_api_score_rates_count_only_known_verdicts() -> None:
    result = api.score(str(LIVEMATH), [str(FIXTURES / c / "trace.jsonl") for c in ("machine-ok", "native-issue")])
    assert result.success is None and result.compliance == 0.5


def test_score_finds_the_files_in_the_workdir_the_trace_header_records(tmp_path: Path) -> None:
    """A `skillc run --workdir W --trace W/runs/t1.jsonl` trace: `skillc score` judges W's files without being
    told W (the trace lies in the folder its header records)."""
    beats = Path(__file__).parent / "fixtures" / "beats"
    work = tmp_path / "work"
    trace = work / "runs" / "t1.jsonl"
    work.mkdir()
    trace.parent.mkdir()
    report = api.run(api.RunConfig(machine=str(beats / "beats.skm"), executor=f"scripted:{beats / 'script.json'}",
                                   inputs=("question=six times seven?",), tools=(str(beats / "marks.py"),),
                                   workdir=str(work), trace=str(trace), journal=str(tmp_path / "j.sqlite")))
    assert report.result is not None and report.result.outcome == "success"
    assert load_run(trace).header.workdir == str(work.resolve())
    suite = load_suite(beats / "suite.toml").suite
    scored = score_trace_file(trace, _machine(beats / "beats.skm"), suite=suite, task_id="t1")
    assert scored.workdir == str(work.resolve()) and scored.score.success is True and scored.score.rfc is True
    (work / "answer.txt").unlink()  # the effect is gone: the verdict follows the files, not the trace's claims
    again = score_trace_file(trace, _machine(beats / "beats.skm"), suite=suite, task_id="t1")
    assert again.score.success is False and again.score.rfc is False


def test_score_judges_only_a_folder_the_user_named(tmp_path: Path) -> None:
    """A trace whose header names a folder that does not hold it (kept elsewhere, or tampered to point at another
    folder's files) is not judged there: success is unknown and file requirements unverifiable, until
    `--workdir` names the folder (it was judged "success" on the other folder's files)."""
    beats = Path(__file__).parent / "fixtures" / "beats"
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    trace = elsewhere / "t1.jsonl"
    report = api.run(api.RunConfig(machine=str(beats / "beats.skm"), executor=f"scripted:{beats / 'script.json'}",
                                   inputs=("question=six times seven?",), tools=(str(beats / "marks.py"),),
                                   workdir=str(work), trace=str(trace), journal=str(tmp_path / "j.sqlite")))
    assert report.result is not None and report.result.outcome == "success"
    suite = load_suite(beats / "suite.toml").suite
    scored = score_trace_file(trace, _machine(beats / "beats.skm"), suite=suite, task_id="t1")
    assert scored.workdir is None and scored.score.success is None and scored.score.rfc is not True
    named = score_trace_file(trace, _machine(beats / "beats.skm"), suite=suite, task_id="t1", workdir=work)
    assert named.score.success is True and named.score.rfc is True
