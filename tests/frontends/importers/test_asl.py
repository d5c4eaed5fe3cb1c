"""The ASL importer: construct mapping, positions, the checks that make sense for ASL, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import skillc
from skillc.diagnostics import Severity, SourceFile
from skillc.frontends.importers.asl import import_asl
from skillc.syntax.printer import print_module
from tests.conftest import ROOT
from tests.frontends.importers.conftest import CORPUS, check_text, codes_of

ORPHANS = """{
  "StartAt": "Work",
  "States": {
    "Work": {"Type": "Succeed"},
    "Ping": {"Type": "Pass", "Next": "Pong"},
    "Pong": {"Type": "Pass", "Next": "Ping"}
  }
}
"""


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120)


def machine(definition: dict) -> str:
    """The .skm text of a definition."""
    imported = import_asl(SourceFile.from_text("m.asl.json", json.dumps(definition)), as_json=True)
    assert imported.module is not None, imported.diagnostics
    return print_module(imported.module)


def test_orphan_cycle_is_unreachable_at_its_json_position() -> None:
    found = check_text(ORPHANS)
    assert codes_of(found) == ["SKM200", "SKM200"]
    assert [d.span.start_pos for d in found.diagnostics] == [(5, 5), (6, 5)]
    assert "state `Ping` is unreachable from `start Work`" in found.diagnostics[0].message


def test_task_maps_to_a_tool_state_reading_its_paths_and_writing_its_result() -> None:
    text = machine({"StartAt": "Get", "States": {
        "Get": {"Type": "Task", "Resource": "arn:aws:lambda:get", "InputPath": "$.req",
                "Parameters": {"id.$": "$.id", "fixed": 1}, "ResultPath": "$.res", "Next": "Done"},
        "Done": {"Type": "Choice", "Choices": [{"Variable": "$.res.ok", "BooleanEquals": True, "Next": "Y"}],
                 "Default": "N"},
        "Y": {"Type": "Succeed"}, "N": {"Type": "Fail"}}})
    assert "input req: str" in text and "input req_id: str" in text
    assert "var res: str" in text and "var res_ok: bool" in text
    assert "reads req, req_id" in text and "writes res, res_ok" in text
    assert "when res_ok == true -> Y" in text and "-> N" in text
    assert "terminal Y: success" in text and "terminal N: failed" in text


def test_paths_after_input_path_are_read_below_it_and_output_path_reshapes() -> None:
    text = machine({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "InputPath": "$.order", "Choices": [
            {"Variable": "$.total", "NumericGreaterThan": 100, "Next": "T"}], "Default": "T"},
        "T": {"Type": "Task", "Resource": "r", "ResultPath": "$.out", "OutputPath": "$.out", "Next": "D"},
        "D": {"Type": "Succeed"}}})
    assert "input order_total: float" in text and "when order_total > 100.0 -> T" in text
    assert "writes out" in text


def test_result_path_null_writes_nothing_and_pass_without_result_is_identity() -> None:
    text = machine({"StartAt": "A", "States": {
        "A": {"Type": "Task", "Resource": "r", "ResultPath": None, "Next": "B"},
        "B": {"Type": "Pass", "Next": "C"},
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "NumericEquals": 1, "Next": "D"}], "Default": "D"},
        "D": {"Type": "Succeed"}}})
    assert "input x: float" in text and "writes" not in text


def test_retry_is_a_bounded_self_loop_then_catch_then_failure() -> None:
    text = machine({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "r", "End": True,
              "Retry": [{"ErrorEquals": ["Busy"], "MaxAttempts": 4}, {"ErrorEquals": ["States.ALL"]}],
              "Catch": [{"ErrorEquals": ["Fatal"], "ResultPath": "$.err", "Next": "F"}]},
        "F": {"Type": "Fail"}}})
    assert "counter T_retry1 max 4" in text and "counter T_retry2 max 3" in text  # MaxAttempts defaults to 3
    assert "when T_error == Busy and T_retry1 < 4 -> T { T_retry1 += 1 }" in text
    assert "when T_error in {Fatal, States_Timeout, other} and T_retry2 < 3 -> T { T_retry2 += 1 }" in text
    assert "when T_error == Fatal -> F" in text
    assert "when T_error != ok -> fallback" in text


def test_a_catch_into_dollar_error_keeps_the_error_result_apart() -> None:
    """`"ResultPath": "$.error"` (the commonest Catch of public definitions) writes a path named `error`; the task's
    error kind is then a result of another name, and the machine checks (was SKM108 and SKM114)."""
    definition = {"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "r", "ResultPath": "$.error", "Next": "Done",
              "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Handle"}]},
        "Handle": {"Type": "Fail", "ErrorPath": "$.error.Error"},
        "Done": {"Type": "Succeed"}}}
    text = machine(definition)
    assert "tool T() -> (error: str, error_Error: str, error_2: enum { ok, States_Timeout, other })" in text
    assert "writes error, error_Error, T_error = error_2" in text
    checked = check_text(json.dumps(definition))
    assert checked.machine is not None and [d for d in checked.diagnostics if d.severity is Severity.ERROR] == []


def test_entering_a_state_again_resets_its_retries_and_the_loop_is_still_reported() -> None:
    definition = {"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "r", "Next": "W", "Retry": [{"ErrorEquals": ["States.ALL"]}]},
        "W": {"Type": "Wait", "Seconds": 5, "Next": "T"}}}
    text = machine(definition)
    assert "-> T { T_retry1 = 0 }" in text and "-> T { T_retry1 += 1 }" in text
    assert codes_of(check_text(json.dumps(definition))) == ["SKM621"]  # an error still ends it (fallback)


def test_max_attempts_zero_means_no_retry() -> None:
    text = machine({"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "r", "End": True,
                                                      "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 0}]}}})
    assert "counter" not in text


def test_retrier_covered_by_an_earlier_one_is_dead() -> None:
    found = check_text(json.dumps({"StartAt": "T", "States": {"T": {
        "Type": "Task", "Resource": "r", "End": True,
        "Retry": [{"ErrorEquals": ["States.TaskFailed"]}, {"ErrorEquals": ["Throttled"], "MaxAttempts": 9}]}}}))
    assert codes_of(found) == ["SKM240"]
    assert found.diagnostics[0].message.startswith("Retry[1] of `T` can never fire")


def test_retry_loop_is_bounded_but_a_polling_loop_is_a_warning() -> None:
    assert codes_of(check_text(json.dumps({"StartAt": "T", "States": {"T": {
        "Type": "Task", "Resource": "r", "End": True, "Retry": [{"ErrorEquals": ["States.ALL"]}]}}}))) == []
    found = check_text((CORPUS / "own" / "polling.asl.yaml").read_text(), "polling.asl.yaml")
    assert codes_of(found) == ["SKM621"]
    assert found.diagnostics[0].severity is Severity.WARNING
    assert found.diagnostics[0].witness == ("Wait a bit -> Get status -> Finished? -> Wait a bit",)


def test_an_imported_polling_loop_is_counted_against_the_history_quota_so_the_skm_checks(tmp_path: Path) -> None:
    """A loop no retrier pays for is a warning of the definition (SKM621), but SKM250 in `.skm`: the written machine
    counts the loop's passes against a standard execution's 25,000-event history and fails once they run out, so
    `skillc check`, `test` and `run` take it; a loop inside a Parallel branch is counted in its fragment."""
    out = tmp_path / "polling.skm"
    r = cli("import", "asl", str(CORPUS / "own" / "polling.asl.yaml"), "-o", str(out))
    said = r.stdout + r.stderr
    assert r.returncode == 0 and "warning[SKM621]" in said and "counter passes max 12500" in said
    text = out.read_text()
    assert "counter passes max 12500" in text and "passes < 12500" in text and "passes += 1" in text
    assert skillc.check(out).diagnostics == []
    assert cli("test", str(out), "--examples", "20").returncode == 0
    branch = {"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": True, "Branches": [{"StartAt": "Poll",
              "States": {"Poll": {"Type": "Task", "Resource": "r", "ResultPath": "$.s", "Next": "Done?"},
                         "Done?": {"Type": "Choice", "Choices": [{"Variable": "$.s", "StringEquals": "ok",
                                                                   "Next": "Ok"}], "Default": "Poll"},
                         "Ok": {"Type": "Succeed"}}}]}}}
    # a branch that reads a path named `passes` has a parameter of that name: the counter takes another
    named = json.loads(json.dumps(branch))
    named["States"]["P"]["Branches"][0]["States"]["Poll"]["Parameters"] = {"n.$": "$.passes"}
    for name, definition, says in (("branch", branch, ("counter passes max 12500", "passes < 12500 -> Poll {")),
                                   ("named", named, ("(passes: str)", "counter passes_2 max 12500"))):
        source = tmp_path / f"{name}.asl.json"
        source.write_text(json.dumps(definition))
        r = cli("import", "asl", str(source), "-o", str(tmp_path / f"{name}.skm"))
        assert r.returncode == 0, r.stdout + r.stderr
        fragment = (tmp_path / f"{name}.skm").read_text().split("fragment ")[1]
        assert all(s in fragment for s in says), fragment
        assert skillc.check(tmp_path / f"{name}.skm").diagnostics == []


def test_choice_without_default_has_a_witness_unless_the_rules_cover_everything() -> None:
    gap = check_text(json.dumps({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThan": 10, "Next": "D"},
                                            {"Variable": "$.n", "NumericLessThan": 0, "Next": "D"}]},
        "D": {"Type": "Succeed"}}}))
    assert codes_of(gap) == ["SKM620"]
    value = float(gap.diagnostics[0].witness[0].split(" = ")[1])
    assert 0 <= value <= 10
    covered = check_text(json.dumps({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [
            {"Or": [{"Variable": "$.n", "NumericGreaterThan": 10}, {"Variable": "$.n", "NumericLessThanEquals": 10}],
             "Next": "D"}]},
        "D": {"Type": "Succeed"}}}))
    assert codes_of(covered) == []


def test_and_or_not_and_path_comparisons_are_exact() -> None:
    found = check_text(json.dumps({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [
            {"Not": {"Variable": "$.a", "StringEqualsPath": "$.b"}, "Next": "D"},
            {"And": [{"Variable": "$.a", "StringEqualsPath": "$.b"}, {"Variable": "$.a", "StringEquals": "x"}],
             "Next": "D"},
            {"Variable": "$.a", "StringEquals": "x", "Next": "D"}], "Default": "D"},
        "D": {"Type": "Succeed"}}}))
    assert codes_of(found) == ["SKM241"]  # the third rule: a == b and a == x were both taken before
    assert found.diagnostics[0].message.startswith("Choices[2] of `C`")


def test_is_present_guards_the_path_and_opaque_tests_are_notes() -> None:
    found = check_text(json.dumps({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [
            {"And": [{"Variable": "$.r", "IsPresent": True}, {"Variable": "$.r.ok", "BooleanEquals": True}],
             "Next": "D"}, {"Variable": "$.when", "TimestampLessThan": "2020-01-01T00:00:00Z", "Next": "D"}],
              "Default": "T"},
        "T": {"Type": "Task", "Resource": "r", "ResultPath": "$.r", "Next": "D"},
        "D": {"Type": "Succeed"}}}))
    assert codes_of(found) == ["SKM623", "SKM623"]
    assert all(d.severity is Severity.NOTE for d in found.diagnostics)


def test_a_path_read_before_it_is_written_is_a_warning_with_a_path() -> None:
    found = check_text((CORPUS / "own" / "unset-path.asl.json").read_text())
    [d] = found.diagnostics
    assert str(d.code) == "SKM622" and d.severity is Severity.WARNING
    assert "`$.result.ok`" in d.message
    assert d.witness == ("`$.result.ok` is never assigned on Cached? -> Use result",)
    assert d.span.start_pos == (12, 32)


def test_nested_branches_are_checked_on_their_own() -> None:
    found = check_text((CORPUS / "own" / "fan-out.asl.yaml").read_text(), "fan-out.asl.yaml")
    [d] = found.diagnostics
    assert str(d.code) == "SKM620" and "`Thumb ok?`" in d.message and d.span.start_pos == (17, 19)
    text = machine({"StartAt": "P", "States": {"P": {"Type": "Parallel", "End": True, "Branches": [
        {"StartAt": "X", "States": {"X": {"Type": "Pass", "End": True}}}]}}})
    assert "fragment P_branch1() -> (end)" in text


def test_transitions_cannot_leave_their_branch() -> None:
    found = check_text(json.dumps({"StartAt": "P", "States": {
        "P": {"Type": "Parallel", "Next": "Z", "Branches": [
            {"StartAt": "X", "States": {"X": {"Type": "Pass", "Next": "Z"}}}]},
        "Z": {"Type": "Succeed"}}}))
    assert codes_of(found) == ["SKM606"]


def test_a_filter_after_a_dot_is_a_path_and_a_template_placeholder_is_named() -> None:
    """`$.[?(@.OU > 0)]` (an AWS sample's ResultSelector) is read as Jayway reads it, `$[?(…)]`; `$.${Key}` of a
    SAM template is refused with the reason: a placeholder to substitute first."""
    ok = check_text(json.dumps({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "r", "ResultSelector": {"newOU.$": "$.[?(@.OU > 0)]"}, "End": True}}}))
    assert codes_of(ok) == []
    templated = check_text(json.dumps({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": "r", "Parameters": {"S.$": "$.${PartitionKey}"}, "End": True}}}))
    [d] = templated.diagnostics
    assert str(d.code) == "SKM609" and "template placeholder: substitute it first" in d.message
    waits = check_text("StartAt: W\nStates:\n  W:\n    Type: Wait\n    Seconds: ${Timeout}\n    End: true\n",
                       "case.asl.yaml")
    [d] = waits.diagnostics
    assert str(d.code) == "SKM605" and d.hint is not None and "template placeholder" in d.hint


def test_field_rules_point_at_the_field() -> None:
    found = check_text('{"StartAt": "A",\n "States": {\n  "A": {"Type": "Pass", "Nxt": "B", "End": true}}}\n')
    [d] = found.diagnostics
    assert str(d.code) == "SKM603" and d.span.start_pos == (3, 25) and d.hint == "did you mean `Next`?"


@pytest.mark.parametrize("text, code, position", [
    ('{"StartAt": "A", "States": {"A": {"Type": "Succeed"},}}', "SKM600", (1, 54)),
    ('{"StartAt": "A"', "SKM600", (1, 16)),
    ("", "SKM600", (1, 1)),
    ("[1, 2]", "SKM601", (1, 1)),
    ('{"StartAt": "A", "States": {}}', "SKM601", (1, 28)),
    ('{"StartAt": "A", "States": {"A": {"Type": "Lambda", "End": true}}}', "SKM602", (1, 43)),
    ('{"StartAt": "A", "States": {"A": {"Type": "Pass", "ResultPath": "$.a[", "End": true}}}', "SKM609", (1, 65)),
    ('{"StartAt": "A", "States": {"A": {"Type": "Pass", "ResultPath": "a.b", "End": true}}}', "SKM609", (1, 65)),
    ('{"StartAt": "A", "States": {"A": {"Type": "Succeed"}, "A": {"Type": "Fail"}}}', "SKM607", (1, 55)),
])
def test_malformed_definitions_get_coded_positioned_diagnostics(text: str, code: str, position) -> None:
    found = check_text(text)
    mine = [d for d in found.diagnostics if str(d.code) == code]
    assert mine, codes_of(found)
    assert mine[0].span.start_pos == position


def test_yaml_errors_and_yaml_definitions() -> None:
    bad = check_text("StartAt: A\nStates:\n  A: {Type: Succeed\n", "x.asl.yaml")
    assert codes_of(bad) == ["SKM600"] and bad.diagnostics[0].span.start_pos[0] == 4
    good = check_text("StartAt: A\nStates:\n  A:\n    Type: Succeed\n", "x.asl.yaml")
    assert good.diagnostics == []


@pytest.mark.parametrize("text", [
    "a: !!python/object:os.system x",
    "a: &x [*x]",
    "---\na: 1\n---\nb: 2\n",
    "[" * 3000 + "]" * 3000,
    "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)),
])
def test_hostile_yaml_is_refused_with_a_diagnostic(text: str) -> None:
    assert codes_of(check_text(text, "x.asl.yaml")) == ["SKM600"]


def test_same_findings_from_json_and_yaml() -> None:
    definition = json.loads(ORPHANS)
    import yaml

    as_yaml = check_text(yaml.safe_dump(definition, sort_keys=False), "x.asl.yaml")
    assert codes_of(as_yaml) == codes_of(check_text(ORPHANS))


def test_garbage_never_raises() -> None:
    for text in ["\x00\x01", "{" * 5000, "[" * 3000 + "]" * 3000, '{"StartAt": 1, "States": []}', "null",
                 '{"StartAt": "A", "States": {"A": 5}}', '{"StartAt": "A", "States": {"A": {"Type": "Choice"}}}',
                 '{"StartAt": "A", "States": {"A": {"Type": "Task", "Retry": 3, "Catch": [1], "End": "yes"}}}',
                 '{"StartAt": "A", "States": {"A": {"Type": "Choice", "Choices": [{"And": 1, "Next": "A"}]}}}',
                 '{"StartAt": "A", "States": {"A": {"Type": "Map", "ItemProcessor": 3, "End": true}}}']:
        found = check_text(text)
        assert found.diagnostics and all(str(d.code).startswith("SKM6") or str(d.code).startswith("SKM2")
                                         for d in found.diagnostics), (text[:30], codes_of(found))


def test_numeric_comparison_with_a_non_number_is_a_field_error_not_a_crash() -> None:
    # It used to raise TypeError (abs() of a string) while building the guard.
    found = check_text(json.dumps({"StartAt": "C", "States": {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.x", "NumericEquals": "abc", "Next": "D"}],
              "Default": "D"},
        "D": {"Type": "Succeed"}}}))
    assert codes_of(found) == ["SKM605", "SKM623"]
    assert [d.span.start_pos for d in found.diagnostics if str(d.code) == "SKM605"] == [(1, 102)]


# ---------------------------------------------------------------- command line


def test_check_reports_at_the_definition_in_every_format(tmp_path: Path) -> None:
    f = tmp_path / "orphans.asl.json"
    f.write_text(ORPHANS)
    r = cli("check", str(f), "--format", "concise")
    assert r.returncode == 0, r.stderr
    assert f"{f}:5:5: warning[SKM200]" in r.stdout or "orphans.asl.json:5:5: warning[SKM200]" in r.stdout
    r = cli("check", str(f), "--format", "github")
    assert "::warning file=" in r.stdout and "orphans.asl.json,line=5,col=5" in r.stdout
    r = cli("check", str(f), "--format", "sarif")
    result = json.loads(r.stdout)["runs"][0]["results"][0]
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("orphans.asl.json")
    assert location["region"]["startLine"] == 5
    r = cli("check", str(f), "--strict")
    assert r.returncode == 1


def test_check_exit_codes_for_bad_definitions(tmp_path: Path) -> None:
    f = tmp_path / "bad.asl.json"
    f.write_text('{"StartAt": ')
    r = cli("check", str(f))
    assert r.returncode == 1 and "SKM600" in r.stdout and "Traceback" not in r.stderr
    f.write_bytes(b"\xff\xfe{}")
    r = cli("check", str(f))
    assert r.returncode == 1 and "SKM001" in r.stdout
    r = cli("check", str(tmp_path / "missing.asl.json"))
    assert r.returncode == 2


def test_import_writes_a_machine_that_checks_and_runs(tmp_path: Path) -> None:
    out = tmp_path / "order.skm"
    r = cli("import", "asl", str(CORPUS / "own" / "order-processing.asl.json"), "-o", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    assert skillc.check(out).diagnostics == []
    r = cli("test", str(out), "--examples", "30")
    assert r.returncode == 0, r.stdout
    r = cli("dot", str(CORPUS / "own" / "order-processing.asl.json"))
    assert r.returncode == 0 and r.stdout.startswith("digraph")
    r = cli("test", str(CORPUS / "own" / "order-processing.asl.json"), "--examples", "30")
    assert r.returncode == 0 and "runs:" in r.stdout


def test_import_of_a_broken_definition_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.asl.json"
    bad.write_text('{"StartAt": "A", "States": {"A": {"Type": "Nope", "End": true}}}')
    out = tmp_path / "out.skm"
    r = cli("import", "asl", str(bad), "-o", str(out))
    assert r.returncode == 1 and "SKM602" in r.stdout and not out.exists()
    r = cli("import", "asl", str(tmp_path / "none.asl.json"))
    assert r.returncode == 2


def test_check_reads_a_definition_from_stdin_by_its_name() -> None:
    r = subprocess.run([sys.executable, "-m", "skillc", "check", "-", "--stdin-filename", "wf.asl.json",
                        "--format", "concise"], input=ORPHANS, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and "wf.asl.json:5:5: warning[SKM200]" in r.stdout
    assert str(skillc.check(ORPHANS, path="wf.asl.json").diagnostics[0].code) == "SKM200"
