"""`skillc conform`: the verdicts, the formats, the exit statuses, and bad input as coded diagnostics."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillc import api
from skillc.conform.codes import ALL
from skillc.conform.conform import conform_trace
from skillc.improve.events import DevTrace, Event
from skillc.improve.refine.traces import parse_traces
from skillc.improve.spelling import normalize
from tests.conftest import BROKEN, ROOT

LIVEMATH = ROOT / "examples" / "livemath" / "livemath.skm"
DEPLOY = ROOT / "tests" / "conform" / "fixtures" / "deploy" / "deploy.skm"
FIXTURES = ROOT / "tests" / "conform" / "fixtures"
# Which machine each code's example is judged against (skillc/conform/codes.py says so too).
MACHINE_OF = {"SKM860": LIVEMATH, "SKM861": DEPLOY, "SKM862": DEPLOY, "SKM863": DEPLOY, "SKM864": LIVEMATH,
              "SKM865": LIVEMATH}


def cli(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "NO_COLOR": "1"}, timeout=120)


@pytest.mark.parametrize("entry", ALL, ids=lambda c: c.code)
def test_each_codes_example_triggers_it_and_the_good_one_does_not(entry, tmp_path: Path) -> None:
    machine = MACHINE_OF[entry.code]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(entry.bad + "\n", encoding="utf-8")
    result = api.conform(str(machine), [str(bad)])
    assert entry.code in [str(d.code) for d in result.diagnostics], [d.message for d in result.diagnostics]
    found = next(d for d in result.diagnostics if str(d.code) == entry.code)
    assert found.severity == entry.severity and found.span is not None and found.span.start_pos[0] == 1
    if entry.good:
        good = tmp_path / "good.jsonl"
        good.write_text(entry.good + "\n", encoding="utf-8")
        assert [str(d.code) for d in api.conform(str(machine), [str(good)]).diagnostics if d.is_error] == []


def test_text_report_names_rule_quotation_event_and_excerpt() -> None:
    r = cli("conform", str(LIVEMATH), "tests/conform/fixtures/livemath/native-no-readback.jsonl")
    assert r.returncode == 1, r.stderr
    assert 'required read_back "You MUST read answer.txt back after writing it."' in r.stdout
    assert "at event 2 (line 3)" in r.stdout and '"action": "finish"' in r.stdout
    assert "breaks 2 rules" in r.stdout and "1 broke 2 rules" in r.stderr


def test_a_forbidden_call_late_in_the_run_is_found_at_its_event() -> None:
    r = cli("conform", str(DEPLOY), "tests/conform/fixtures/deploy/claude-forbid-late.jsonl")
    assert r.returncode == 1
    assert "forbid wipe_server" in r.stdout and "at event 5" in r.stdout and "ssh web rm -rf /srv/site" in r.stdout


def test_clean_transcripts_exit_zero_and_verbose_shows_the_alignment() -> None:
    r = cli("conform", str(LIVEMATH), "-v", "tests/conform/fixtures/livemath/chat-clean.jsonl",
            "tests/conform/fixtures/livemath/chat-shell-alias.jsonl")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "aligned: 1:write, 2:read_back" in r.stdout
    assert "read event 0: shell(cmd) read as bash(command: printf %s B > answer.txt)" in r.stdout
    assert "not judged: order pick before write (`pick` is performed by model states only" in r.stdout
    assert "all conform" in r.stderr


def test_json_is_one_document_with_every_violation() -> None:
    r = cli("conform", str(DEPLOY), "--format", "json", "tests/conform/fixtures/deploy/claude-three.jsonl",
            "tests/conform/fixtures/deploy/native-clean.jsonl")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["summary"] == {"transcripts": 2, "broken": 1, "violations": 3}
    first = doc["transcripts"][0]
    assert [(v["rule"], v["event"]) for v in first["violations"]] == [
        ("order build before publish", 0), ("order run_tests before publish", 0), ("forbid wipe_server", 2)]
    assert first["violations"][0]["quote"] == "Never publish a site that has not been built."
    assert doc["transcripts"][1]["ok"] is True


def test_sarif_points_at_the_event_and_at_the_rule() -> None:
    r = cli("conform", str(DEPLOY), "--format", "sarif", "tests/conform/fixtures/deploy/chat-build-fail-continue.jsonl")
    assert r.returncode == 1
    results = json.loads(r.stdout)["runs"][0]["results"]
    assert [x["ruleId"] for x in results] == ["SKM863"]
    where = results[0]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"].endswith("chat-build-fail-continue.jsonl")
    related = results[0]["relatedLocations"][0]
    assert related["physicalLocation"]["artifactLocation"]["uri"].endswith("deploy.skm")
    assert "If the build fails" in related["message"]["text"]


def test_several_transcripts_in_one_file_are_numbered() -> None:
    r = cli("conform", str(LIVEMATH), "tests/conform/fixtures/livemath/claude-two-sessions.jsonl")
    assert r.returncode == 1
    assert "claude-two-sessions.jsonl#1 (claude-code, success, 2 events): conforms" in r.stdout
    assert "claude-two-sessions.jsonl#2 (claude-code, success, 2 events): breaks 1 rule" in r.stdout


def _session_file() -> str:
    """A Claude Code session file as `~/.claude/projects/PROJECT/SESSION.jsonl` holds it: a snapshot record first,
    `sessionId`/`uuid`/`parentUuid` on every record, no `result` at the end, a subagent's records as a sidechain."""
    common = {"isSidechain": False, "userType": "external", "cwd": "/srv", "sessionId": "5e55", "version": "2.1.63"}
    records: list[dict] = [{"type": "file-history-snapshot", "messageId": "m0", "isSnapshotUpdate": False,
                            "snapshot": {"messageId": "m0", "trackedFileBackups": {}}}]

    def add(kind: str, content: object, **extra: object) -> None:
        records.append({"parentUuid": records[-1].get("uuid"), **common, "type": kind, "uuid": f"u{len(records)}",
                        "message": {"role": kind, "content": content}, **extra})

    add("user", "Deploy the site with the skill.")
    for i, command in enumerate(["rsync -a --checksum dist/ web:/srv/site/", "curl -fsS https://example.org/health",
                                 "ssh web rm -rf /srv/site"]):
        add("assistant", [{"type": "tool_use", "id": f"toolu_{i}", "name": "Bash", "input": {"command": command}}])
        add("user", [{"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": ""}], toolUseResult={})
        if i == 0:  # a subagent's call, in the same file: its parent's Task call stands for it, not this
            add("assistant", [{"type": "tool_use", "id": "toolu_s", "name": "Bash",
                               "input": {"command": "ssh web rm -rf /srv/other"}}], isSidechain=True)
    add("assistant", [{"type": "text", "text": "Deployed."}])
    return "".join(json.dumps(r) + "\n" for r in records)


def test_a_claude_code_session_file_is_read_and_judged(tmp_path: Path) -> None:
    """The files Claude Code keeps of each session are judged like its `stream-json` logs, subagents left out; they
    record no outcome, so the trace is unfinished, and SKM805 says how to get one."""
    session = tmp_path / "5e55.jsonl"
    session.write_text(_session_file(), encoding="utf-8")
    r = cli("conform", str(DEPLOY), str(session))
    assert r.returncode == 1, r.stderr
    assert "5e55.jsonl (claude-code, unfinished, 4 events): breaks 3 rules" in r.stdout
    assert "at event 2 (line 8): Bash" in r.stdout and "/srv/other" not in r.stdout
    assert "warning[SKM805]: a Claude Code session file records no outcome" in r.stderr
    assert "--output-format stream-json" in r.stderr


def test_a_session_file_is_read_along_the_branch_it_ended_on(tmp_path: Path) -> None:
    """A rewind leaves the abandoned branch's records in the session file, and a branched session repeats records:
    the transcript judged is the chain of `parentUuid` from the last record, each record once."""
    common = {"isSidechain": False, "userType": "external", "sessionId": "5e55"}

    def record(uuid: str, parent: str | None, kind: str, content: object) -> str:
        return json.dumps({"parentUuid": parent, **common, "type": kind, "uuid": uuid,
                           "message": {"role": kind, "content": content}}) + "\n"

    def call(i: int, command: str) -> list[object]:
        return [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": command}}]

    def done(i: int) -> list[object]:
        return [{"type": "tool_result", "tool_use_id": f"t{i}", "content": ""}]

    lines = [record("a", None, "user", "Deploy."),
             record("b", "a", "assistant", call(0, "rsync -a dist/ web:/srv/site/")), record("c", "b", "user", done(0)),
             record("d", "c", "assistant", call(1, "ssh web rm -rf /srv/site")), record("e", "d", "user", done(1)),
             # the user rewound to `c`; the session went on from there (and a branch copied `b` and `c` again)
             record("b", "a", "assistant", call(0, "rsync -a dist/ web:/srv/site/")), record("c", "b", "user", done(0)),
             record("f", "c", "assistant", call(2, "curl -fsS https://example.org/health")),
             record("g", "f", "user", done(2)), record("h", "g", "assistant", [{"type": "text", "text": "Done."}])]
    session = tmp_path / "5e55.jsonl"
    session.write_text("".join(lines), encoding="utf-8")
    r = cli("conform", str(DEPLOY), str(session))
    assert "(claude-code, unfinished, 3 events)" in r.stdout, r.stdout + r.stderr
    assert "wipe_server" not in r.stdout and "rm -rf" not in r.stdout  # the abandoned branch is not judged
    assert "SKM804" not in r.stderr  # no call left without its result by a repeated record


def _rollout(end: str | None = "task_complete") -> str:
    """A Codex CLI session file (`~/.codex/sessions/…/rollout-….jsonl`): the shell three ways (`shell` with an argv,
    `exec_command` with `cmd`, a `local_shell_call`), the plan tool, a reasoning summary, and how the turn ended."""
    records: list[tuple[str, dict]] = [
        ("session_meta", {"id": "0199", "cwd": "/srv", "originator": "codex_cli_rs"}),
        ("event_msg", {"type": "user_message", "message": "Deploy the site with the skill."}),
        ("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Deploy."}]}),
        ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Publish first."}]}),
        ("response_item", {"type": "function_call", "name": "update_plan", "call_id": "p",
                           "arguments": json.dumps({"plan": [{"step": "deploy", "status": "in_progress"}]})}),
        ("response_item", {"type": "function_call_output", "call_id": "p", "output": "Plan updated"}),
        ("response_item", {"type": "function_call", "name": "shell", "call_id": "c0", "arguments": json.dumps(
            {"command": ["bash", "-lc", "rsync -a --checksum dist/ web:/srv/site/"], "workdir": "/srv"})}),
        ("response_item", {"type": "function_call_output", "call_id": "c0",
                           "output": json.dumps({"output": "", "metadata": {"exit_code": 0}})}),
        ("response_item", {"type": "function_call", "name": "exec_command", "call_id": "c1",
                           "arguments": json.dumps({"cmd": "curl -fsS https://example.org/health"})}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}),
        ("response_item", {"type": "local_shell_call", "call_id": "c2", "status": "completed",
                           "action": {"type": "exec", "command": ["ssh", "web", "rm -rf /srv/site"]}}),
        ("response_item", {"type": "local_shell_call_output", "call_id": "c2", "output": ""}),
        ("response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text",
                                                                                 "text": "Deployed."}]})]
    if end is not None:
        records.append(("event_msg", {"type": end}))
    return "".join(json.dumps({"timestamp": "2026-12-01T10:00:00Z", "type": t, "payload": p}) + "\n"
                   for t, p in records)


def test_a_codex_session_file_is_read_and_judged(tmp_path: Path) -> None:
    """Codex's session files are read like the other native transcripts: its shell tools are the machine's `bash`
    (an argv `bash -lc CMD` is CMD), the plan tool is left out, and the last turn's end gives the outcome."""
    rollout = tmp_path / "rollout-2026-12-01T10-00-00-0199.jsonl"
    rollout.write_text(_rollout(), encoding="utf-8")
    r = cli("conform", "-v", str(DEPLOY), str(rollout))
    assert r.returncode == 1, r.stderr
    assert "(codex, success, 5 events): breaks 3 rules" in r.stdout
    assert "aligned: 1:publish, 2:check_health, 3:wipe_server" in r.stdout
    assert "exec_command(cmd) read as bash(command: curl -fsS https://example.org/health)" in r.stdout
    assert "update_plan" not in r.stdout
    traces, problems = parse_traces(_rollout("turn_aborted"), "aborted.jsonl")
    assert [t.outcome for t in traces] == ["failed"] and problems == []
    traces, problems = parse_traces(_rollout(None), "cut.jsonl")
    assert [t.outcome for t in traces] == ["unfinished"] and [str(p.code) for p in problems] == ["SKM805"]
    damaged = _rollout().replace('"type": "local_shell_call", "call_id": "c2"', '"type": "local_shell_call"')
    traces, problems = parse_traces(damaged, "damaged.jsonl")
    assert "SKM803" in [str(p.code) for p in problems] and traces[0].outcome == "success"


def test_unknown_format_and_missing_file_are_coded_and_exit_two(tmp_path: Path) -> None:
    odd = tmp_path / "odd.jsonl"
    odd.write_text('{"events": []}\n', encoding="utf-8")
    r = cli("conform", str(LIVEMATH), str(odd), str(tmp_path / "missing.jsonl"),
            "tests/conform/fixtures/livemath/chat-clean.jsonl")
    assert r.returncode == 2
    assert "error[SKM801]" in r.stderr and "error[SKM800]" in r.stderr and "Traceback" not in r.stderr
    assert "chat-clean.jsonl (chat, success, 4 events): conforms" in r.stdout  # the readable file is still judged
    js = cli("conform", str(LIVEMATH), "--format", "json", str(odd))
    assert js.returncode == 2 and json.loads(js.stdout)["diagnostics"][0]["code"] == "SKM801"


def test_a_damaged_line_is_reported_and_the_others_judged(tmp_path: Path) -> None:
    good = (FIXTURES / "livemath" / "chat-no-write.jsonl").read_text(encoding="utf-8")
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(good + '{"messages": [\n', encoding="utf-8")
    r = cli("conform", str(LIVEMATH), str(mixed))
    assert r.returncode == 2 and "SKM802" in r.stderr and "required write" in r.stdout


def test_a_machine_that_does_not_check_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.skm"
    broken.write_text(BROKEN, encoding="utf-8")
    r = cli("conform", str(broken), "tests/conform/fixtures/livemath/chat-clean.jsonl")
    assert r.returncode == 1 and "SKM103" in r.stdout and "does not pass `skillc check`" in r.stderr
    r = cli("conform", str(tmp_path / "none.skm"), "tests/conform/fixtures/livemath/chat-clean.jsonl",
            "--format", "sarif")
    assert r.returncode == 2 and json.loads(r.stdout)["runs"][0]["results"][0]["ruleId"] == "SKM901"


def test_trace_format_flag_forces_the_reader() -> None:
    r = cli("conform", str(LIVEMATH), "--trace-format", "claude-code",
            "tests/conform/fixtures/livemath/chat-clean.jsonl")
    assert r.returncode == 2 and "SKM803" in r.stderr


def _machine():
    return api.load_checked(str(LIVEMATH)).machine


def test_spellings_claude_code_file_tools_and_harness_options() -> None:
    machine = _machine()
    trace = DevTrace((Event("tool", "Bash", {"command": "printf %s B > answer.txt", "description": "write it"}),
                      Event("tool", "Read", {"file_path": "answer.txt"}),
                      Event("tool", "Write", {"file_path": "answer.txt", "content": "B"}),
                      Event("tool", "WebSearch", {"query": "x"})), "success", "claude-code")
    spelled, spellings = normalize(machine, trace)
    assert [(e.tool, dict(e.args)) for e in spelled.events] == [
        ("bash", {"command": "printf %s B > answer.txt"}), ("bash", {"command": "cat answer.txt"}),
        ("bash", {"command": "printf %s B > answer.txt"}), ("WebSearch", {"query": "x"})]
    assert [s.index for s in spellings] == [0, 1, 2]
    report = conform_trace(machine, trace)
    assert report.states[:3] == ("write", "read_back", "write")


def test_a_forbidden_tool_without_a_state_is_judged_by_its_name() -> None:
    from skillc.conform.rules import judge

    text = DEPLOY.read_text(encoding="utf-8").replace(
        "  tool bash(command: str) -> (stdout: str, exit_code: int)\n",
        "  tool bash(command: str) -> (stdout: str, exit_code: int)\n  tool remove(path: str) -> (ok: bool)\n")
    text = text.replace('rule forbid wipe_server', 'rule forbid remove')
    checked = api.check(text, path=str(DEPLOY))
    assert checked.machine is not None and checked.ok, [d.message for d in checked.diagnostics]
    trace = DevTrace((Event("tool", "bash", {"command": "make build"}), Event("tool", "Remove", {"path": "/srv"})),
                     "failed", "chat")
    verdict = judge(checked.machine, trace, (None, None))
    assert [(v.head, v.event) for v in verdict.violations] == [("forbid remove", 1)]


def test_rules_of_a_fragment_instance_are_judged_only_on_runs_that_entered_it() -> None:
    machine = api.load_checked(str(ROOT / "examples" / "spreadsheet" / "spreadsheet.skm")).machine
    line = json.dumps({"messages": [], "outcome": "success", "evidence": {"summary": "s", "backup_path": "b"}})
    traces, _ = parse_traces(line, "x.jsonl")
    heads = [v.head for v in conform_trace(machine, traces[0]).violations]
    assert "required read_cells" in heads and "required save_script.read_back" not in heads
