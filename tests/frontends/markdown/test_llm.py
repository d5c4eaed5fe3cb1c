"""The LLM compiler over real HTTP (the `openai` SDK against a local OpenAI-compatible server) and the local model.

The request carries the language card, the folder and the numbered skill; replies are `.skm` text. A draft
the checker rejects is fixed from all of its findings; a clean draft with smells is redrafted; rules whose
quotation is not in the skill are dropped; a model that never converges ends in SKM310 with nothing written.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import skillc
from skillc.cli import main
from skillc.frontends.markdown import build
from skillc.frontends.markdown.card import card
from skillc.frontends.markdown.document import read_document
from skillc.frontends.markdown.llm import (
    DEFAULT_MAX_TOKENS,
    DRAFT_SCHEMA,
    Finding,
    LLMOptions,
    feedback,
    read_reply,
    split_sections,
)
from skillc.frontends.markdown.schema import MACHINE_SCHEMA, to_json, to_skm
from skillc.runtime.executors.base import Response
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.prompts import Request
from tests.conftest import codes
from tests.runtime.fake_openai import FakeOpenAI

SKILL = """# Answer a question

1. Read the question and write a short answer.
2. Write the answer to answer.txt.

Always write the answer to answer.txt.
"""

GOOD = """machine answer {
  doc "Answer a question and save the answer to answer.txt."
  source "SKILL.md"
  use tools std(write)

  input question: str
  var answer: str
  var saved: str

  start solve

  model solve {
    from "SKILL.md":3
    reads question
    writes answer
    prompt "Read the question and write a short answer. Reply with the answer only."
    -> save
  }

  tool save {
    from "SKILL.md":4
    reads answer
    call write(path: "answer.txt", content: answer)
    writes saved = sha256
    -> done
  }

  terminal done: success { requires saved, exists("answer.txt") }
  fallback

  rule required save "Always write the answer to answer.txt." from "SKILL.md":6
}
"""

BROKEN = GOOD.replace("    reads question\n", "    reads question, saved\n")  # SKM210: `saved` is written later


@pytest.fixture()
def skill(tmp_path: Path) -> Path:
    p = tmp_path / "SKILL.md"
    p.write_text(SKILL, encoding="utf-8")
    return p


def reply(skm: str) -> dict:
    return {"content": json.dumps({"skm": skm})}


def out_of(skill: Path) -> Path:
    return skill.with_name("answer.skm")


# ---------------------------------------------------------------- the request


def test_an_invalid_first_draft_is_fixed_from_the_diagnostics(skill: Path) -> None:
    with FakeOpenAI([reply(BROKEN), reply(GOOD)]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
        requests = server.requests
    assert result.ok, codes(result.diagnostics)
    assert [r.ok for r in result.rounds] == [False, True]
    assert any("SKM210" in e for e in result.rounds[0].errors)
    first, second = requests
    # the request: the card as the system message, the folder and the numbered skill, the draft contract
    assert first["messages"][0]["role"] == "system" and card() in first["messages"][0]["content"]
    user = first["messages"][1]["content"]
    assert "   1 | # Answer a question" in user and "Files:\n- SKILL.md" in user
    assert "offline compiler's draft" not in user and 'Reply with {"skm"' in user
    assert first["response_format"]["schema"] == DRAFT_SCHEMA
    assert first["max_tokens"] == DEFAULT_MAX_TOKENS >= 16_384
    # the redraft: the previous reply as the assistant's turn, then every finding with its line and text
    assert second["messages"][2] == {"role": "assistant", "content": json.dumps({"skm": BROKEN})}
    told = second["messages"][3]["content"]
    assert re.search(r"SKM210 [a-z-]+: .*\(error, 1×\)", told)
    assert "line 14 `reads question, saved`: state `solve` reads `saved`" in told
    assert result.machine is not None and [r.quote for r in result.machine.rules] == \
        ["Always write the answer to answer.txt."]


def test_rules_without_backing_are_dropped_and_sent_back(skill: Path) -> None:
    invented = GOOD.replace("  rule required save", '  rule forbid solve "Never answer in French."\n'
                                                     '  rule required send_email "Write the answer to answer.txt."\n'
                                                     "  rule required save")
    with FakeOpenAI([reply(invented), reply(GOOD)]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
        told = server.requests[1]["messages"][3]["content"]
    assert result.ok, codes(result.diagnostics)
    first = {str(f.code) for f in result.rounds[0].findings}
    assert {"SKM312", "SKM313"} <= first and result.rounds[0].ok  # dropped, not fatal: the rest checked
    assert "Never answer in French" in told and "send_email" in told
    assert [r.ok for r in result.rounds] == [True, True] and result.rounds[1].findings == ()
    assert all("send_email" not in r.ops for r in result.machine.rules)


def test_smells_of_a_clean_draft_are_sent_back(skill: Path) -> None:
    acting = GOOD.replace("Read the question and write a short answer. Reply with the answer only.",
                          "Read the question and write a short answer. Save it to answer.txt.")
    with FakeOpenAI([reply(acting), reply(GOOD)]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
        told = server.requests[1]["messages"][3]["content"]
    assert result.ok
    assert [str(f.code) for f in result.rounds[0].findings] == ["SKM341"]
    assert "SKM341 model-told-to-act" in told and "Save it to answer.txt." in told
    assert "SKM341" not in codes(result.diagnostics)


@pytest.mark.parametrize(("allow", "named"), [
    ('  allow "Write", "Bash(rm:*)"\n', "`allow` grants Bash(rm:*)"),
    ("", "the machine has no `allow`"),
])
def test_a_draft_may_not_allow_more_than_the_front_matter(skill: Path, allow: str, named: str) -> None:
    """SKM347: `allowed-tools` is the author's grant; a draft that widens it is sent back, never kept."""
    skill.write_text("---\nname: answer\nallowed-tools: Write, AskUserQuestion\n---\n" + SKILL, encoding="utf-8")
    narrow = GOOD.replace('"SKILL.md":3', '"SKILL.md":7').replace('"SKILL.md":4', '"SKILL.md":8').replace(
        '"SKILL.md":6', '"SKILL.md":10').replace("  use tools std(write)\n",
                                                 '  use tools std(write)\n  allow "Write"\n')
    wide = narrow.replace('  allow "Write"\n', allow)
    with FakeOpenAI([reply(wide), reply(wide), reply(narrow)]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
        told = server.requests[1]["messages"][3]["content"]
    assert result.ok, codes(result.diagnostics)
    assert [r.ok for r in result.rounds] == [False, False, True]
    assert "SKM347 allow-wider-than-skill" in told and named in told
    assert result.machine is not None and [c.spelling for c in result.machine.allowed] == ["Write"]
    with FakeOpenAI([reply(wide)] * 3) as server:  # never narrowed: nothing is written
        failed = build(skill, output=out_of(skill).with_name("wide.skm"), model="openai:fake", base_url=server.url)
    assert not failed.ok and not out_of(skill).with_name("wide.skm").exists()


def test_the_best_clean_draft_is_kept_when_rounds_run_out(skill: Path) -> None:
    acting = GOOD.replace("Reply with the answer only.", "Save it to answer.txt.")
    with FakeOpenAI([reply(acting), reply(BROKEN)]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url, rounds=2)
    assert result.ok, codes(result.diagnostics)
    assert [r.ok for r in result.rounds] == [True, False]
    assert "SKM341" in codes(result.diagnostics)  # kept, with its smell reported as a warning


def test_every_error_goes_back_grouped_by_code_with_no_cap(skill: Path) -> None:
    many = GOOD.replace("  var saved: str\n", "".join(f"  var v{i}: str\n" for i in range(30)) + "  var saved: str\n")
    many = many.replace("    reads question\n", "    reads question, " + ", ".join(f"v{i}" for i in range(30)) + "\n")
    with FakeOpenAI([reply(many), reply(GOOD)]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
        told = server.requests[1]["messages"][3]["content"]
    assert result.ok
    assert len(result.rounds[0].errors) == 30
    assert told.count("reads `v") == 30 and "(error, 30×)" in told


def test_findings_are_ordered_errors_first_then_by_family() -> None:
    from skillc.registry import lookup

    text = feedback([Finding(lookup("SKM305"), "warning", "a clause", 3, "skill"),
                     Finding(lookup("SKM341"), "warning", "acts", 9),
                     Finding(lookup("SKM210"), "error", "unassigned", 4, excerpt="reads x"),
                     Finding(lookup("SKM001"), "error", "syntax", 2)])
    order = [text.index(c) for c in ("SKM001", "SKM210", "SKM341", "SKM305")]
    assert order == sorted(order)
    assert "SKILL.md line 3: a clause" in text and "line 4 `reads x`: unassigned" in text


def test_a_warning_on_a_question_the_solver_gave_up_on_is_not_sent_to_the_model() -> None:
    from skillc.frontends.markdown.llm import _solver_dependent
    from tests.check.test_capabilities import bash

    # How many resource units Z3 spends on one formula varies with what the process did before, so whether a question
    # near its budget is decided is luck: a request built from such a warning could not be replayed.
    found = skillc.check(bash('command: name ++ " git diff"'), smt_timeout_ms=1).diagnostics
    assert [str(d.code) for d in found if _solver_dependent(d)] == ["SKM283"]
    refuted = skillc.check(bash('command: name ++ " git diff"')).diagnostics
    assert [str(d.code) for d in refuted if not _solver_dependent(d)] == ["SKM281"]  # decided: sent


def test_a_model_that_never_converges_fails_and_writes_nothing(skill: Path) -> None:
    out = out_of(skill)
    with FakeOpenAI([reply(BROKEN)] * 2) as server:
        r = CliRunner().invoke(main, ["build", str(skill), "-o", str(out), "--model", "openai:fake",
                                      "--base-url", server.url, "--rounds", "2"])
    assert r.exit_code == 1, r.output
    assert "SKM310" in r.output and "no draft checked clean in 2 rounds" in r.output
    assert not out.exists()


def test_replies_that_are_not_machines_cost_a_round(skill: Path) -> None:
    not_json = {"content": "Sure! Here is the machine: {"}
    no_skm = {"content": json.dumps({"machine": "nope"})}
    with FakeOpenAI([not_json, no_skm, reply(GOOD)]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
    assert result.ok
    messages = [d.message for d in result.diagnostics if str(d.code) == "SKM311"]
    assert any("not JSON" in m for m in messages) and any("without `skm`" in m for m in messages)


def test_replies_in_other_shapes_are_read() -> None:
    assert read_reply(f"```skm\n{GOOD}```", "SKILL.md").skm == GOOD
    assert read_reply(GOOD, "SKILL.md").skm == GOOD
    assert read_reply("```json\n" + json.dumps({"skm": GOOD}) + "\n```", "SKILL.md").skm == GOOD
    ir_draft = to_json(skillc.parse(GOOD).module)  # a JSON draft of the IR schema
    assert read_reply(json.dumps(ir_draft), "SKILL.md").skm == to_skm(ir_draft, "SKILL.md")
    assert read_reply("[1, 2]", "SKILL.md").problem
    cut = read_reply(json.dumps({"skm": GOOD})[:300], "SKILL.md").problem
    assert cut is not None and "cut off" in cut and "--max-tokens" in cut


def test_a_draft_with_control_characters_and_lone_surrogates_is_written_as_a_file_that_checks(skill: Path) -> None:
    """A reply's JSON may escape a NUL or a lone surrogate into a prompt: the machine written is still text that
    `skillc check` reads (the NUL escaped in a plain string, the surrogate U+FFFD), not a file it refuses."""
    odd = GOOD.replace('prompt "Read the question', 'prompt """\n      Odd: \x00 \ud800 \x0b.\n      Read the question')
    odd = odd.replace('Reply with the answer only."', 'Reply with the answer only.\n      """')
    with FakeOpenAI([{"content": json.dumps({"skm": odd})}]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
    assert result.ok and result.text is not None, [str(d) for d in result.diagnostics]
    out_of(skill).write_text(result.text, encoding="utf-8")  # as `skillc build` writes it
    written = out_of(skill).read_text(encoding="utf-8")
    assert "\\u{0}" in written and "\\u{b}" in written and "\ufffd" in written and "\x00" not in written
    assert not [d for d in skillc.check(out_of(skill)).diagnostics if d.severity.name == "ERROR"]


def test_a_failing_backend_is_a_diagnostic(skill: Path) -> None:
    with FakeOpenAI([{"status": 500}]) as server:
        result = build(skill, output=out_of(skill), model="openai:fake", base_url=server.url)
    assert result.text is None
    assert "SKM314" in codes(result.diagnostics)


def test_unknown_model_spec_is_a_diagnostic(skill: Path) -> None:
    result = build(skill, model="gpt-4")
    assert result.text is None and "SKM314" in codes(result.diagnostics)


def test_the_build_executor_is_the_runtime_one_with_budgets_for_whole_machines() -> None:
    from skillc.frontends.markdown.llm import make_build_executor
    from skillc.runtime.executors import ExecutorError
    from skillc.runtime.executors.openai_exec import OpenAIExecutor

    executor = make_build_executor("openai:fake", base_url="http://127.0.0.1:9")
    try:
        assert isinstance(executor, OpenAIExecutor)
        assert executor.max_tokens == 16_384 and executor.timeout_s == 600.0
    finally:
        executor.close()
    for spec in ("scripted:replies.json", "replay:trace.jsonl", "openai:", "gpt-4"):
        with pytest.raises(ExecutorError, match="unknown model"):
            make_build_executor(spec)


def test_max_tokens_and_rounds_are_options(skill: Path) -> None:
    with FakeOpenAI([reply(GOOD)]) as server:
        r = CliRunner().invoke(main, ["build", str(skill), "-o", str(out_of(skill)), "--model", "openai:fake",
                                      "--base-url", server.url, "--max-tokens", "20000", "--report"])
        sent = server.requests[0]
    assert r.exit_code == 0, r.output
    assert sent["max_tokens"] == 20000
    assert "LLM compiler: openai:fake (from --model)" in r.output
    assert "LLM rounds:\n  round 1 (machine): checked clean, 0 findings" in r.output
    assert "offline draft" not in r.output


# ---------------------------------------------------------------- the front door


def test_offline_builds_say_so(skill: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SKILLC_MODEL", raising=False)
    r = CliRunner().invoke(main, ["build", str(skill), "-o", str(out_of(skill))])
    assert r.exit_code == 0, r.output
    assert "offline draft: no model configured (--model, SKILLC_MODEL or [tool.skillc] model)" in r.output


def test_a_configured_model_is_the_front_door(skill: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.frontends.markdown.frontdoor import resolve_model

    monkeypatch.delenv("SKILLC_MODEL", raising=False)
    (skill.parent / "skillc.toml").write_text('model = "openai:from-config"\n', encoding="utf-8")
    assert resolve_model(None, skill) == ("openai:from-config", "config")
    assert resolve_model(None, skill, {"SKILLC_MODEL": "anthropic:env"}) == ("anthropic:env", "SKILLC_MODEL")
    assert resolve_model("openai:flag", skill, {"SKILLC_MODEL": "anthropic:env"}) == ("openai:flag", "--model")
    assert resolve_model("offline", skill) == (None, "--model")
    with FakeOpenAI([reply(GOOD)]) as server:
        r = CliRunner().invoke(main, ["build", str(skill), "-o", str(out_of(skill)), "--base-url", server.url])
        assert server.requests and server.requests[0]["model"] == "from-config"
    assert r.exit_code == 0, r.output
    assert "offline draft" not in r.output and "1 draft round(s)" in r.output
    monkeypatch.setenv("SKILLC_MODEL", "offline")
    r = CliRunner().invoke(main, ["build", str(skill), "-o", str(out_of(skill))])
    assert r.exit_code == 0 and "draft round" not in r.output


def test_a_bad_model_setting_is_a_config_error(tmp_path: Path) -> None:
    from skillc.config import config_schema, parse_config

    config, problems = parse_config({"model": 3})
    assert config.model is None and [str(d.code) for d in problems] == ["SKM290"]
    assert parse_config({"model": "openai:x"})[0].model == "openai:x"
    assert config_schema()["properties"]["model"]["type"] == "string"


# ---------------------------------------------------------------- large skills, section by section


def big_skill(tmp_path: Path) -> Path:
    lines = ["# Release", ""]
    for part, verb in ((1, "Collect"), (2, "Draft")):
        lines += [f"## Part {part}", ""]
        lines += [f"{i}. {verb} item {i} of part {part} carefully and completely." for i in range(1, 4)]
        lines += ["", "Some background about this part. " * 30, ""]
    p = tmp_path / "SKILL.md"
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_large_skills_are_drafted_section_by_section(tmp_path: Path) -> None:
    skill = big_skill(tmp_path)
    doc, _ = read_document(skill)
    sections = split_sections(doc, 400)
    assert [s.name for s in sections] == ["part1_release", "part2_part_2"]
    assert sections[0].start == 1 and sections[1].start == sections[0].end + 1 and sections[1].end == len(doc.lines)
    signatures = ["fragment part1_release(task: str, notes: str) -> (next)",
                  "fragment part2_part_2(notes: str, report: str) -> (next)"]
    machine = ('machine release {\n  source "SKILL.md"\n  input task: str\n  var notes: str\n  var report: str\n'
               "  start one\n  use part1_release as one(task: task, notes: notes) -> (next: two)\n"
               "  use part2_part_2 as two(notes: notes, report: report) -> (next: done)\n"
               "  terminal done: success { requires report }\n  fallback\n}\n")

    def fragment(name: str, reads: str, writes: str, lines: tuple[int, int], text: str) -> str:
        return (f"{signatures[0] if name.startswith('part1') else signatures[1]} {{\n  start work\n"
                f"  model work {{\n    from \"SKILL.md\":{lines[0]}-{lines[1]}\n"
                f"    reads {reads}\n    writes {writes}\n"
                f"    prompt \"{text}\"\n    -> next\n  }}\n}}\n")

    one = fragment("part1", "task", "notes", (sections[0].start, sections[0].end), "Collect the items.")
    two = fragment("part2", "notes", "report", (sections[1].start, sections[1].end), "Draft the items.")
    broken_two = two.replace("reads notes", "reads nothing_here")
    rule = f'rule required two.work "{doc.lines[sections[1].start + 1].split(". ", 1)[1]}"'
    script = {"outputs": {
        "build_outline": [{"skm": machine, "signatures": signatures}],
        "build_section:part1_release": [{"skm": one, "rules": []}],
        "build_section:part2_part_2": [{"skm": broken_two, "rules": [rule]}, {"skm": two, "rules": [rule]}],
    }}
    executor = ScriptedExecutor(script)
    result = build(skill, output=skill.with_name("release.skm"), executor=executor,
                   llm=LLMOptions(section_tokens=400))
    assert result.ok, codes(result.diagnostics)
    assert [r.parts for r in result.rounds] == [("machine", "part1_release", "part2_part_2"), ("part2_part_2",)]
    assert any("nothing_here" in e for e in result.rounds[0].errors)
    assert executor.used == {"build_outline": 1, "build_section:part1_release": 1, "build_section:part2_part_2": 2}
    assert {"one.work", "two.work"} <= set(result.machine.states)
    assert [r.ops for r in result.machine.rules] == [("two.work",)]
    assert result.coverage == 1.0  # the fragments' `from` ranges cover the sections' clauses


class CutWhole:
    """Answers a whole draft cut at the reply budget (as a backend does past `max_tokens`); the rest from a script."""

    name = "cut-whole"

    def __init__(self, script: dict) -> None:
        self.inner = ScriptedExecutor(script)
        self.whole = 0

    def complete(self, request: Request) -> Response:
        if request.state == "build_draft":
            self.whole += 1
            return Response('{"skm": "machine release {\\n  source \\"SKILL.md\\"\\n  input ta', cut=True)
        return self.inner.complete(request)


def test_a_whole_draft_cut_at_the_reply_budget_is_drafted_in_sections_instead(tmp_path: Path) -> None:
    skill = big_skill(tmp_path)
    doc, _ = read_document(skill)
    halves = split_sections(doc, sum(len(x) + 1 for x in doc.lines) // 8)  # half the document's tokens
    assert len(halves) > 1
    signatures = [f"fragment {s.name}(task: str) -> (next)" for s in halves]
    uses = "".join(f"  use {s.name} as s{i}(task: task) -> (next: {f's{i + 1}' if i + 1 < len(halves) else 'done'})\n"
                   for i, s in enumerate(halves))
    machine = f'machine release {{\n  source "SKILL.md"\n  input task: str\n  start s0\n{uses}' \
              "  terminal done: success\n  fallback\n}\n"
    fragments = {s.name: f"{sig} {{\n  start work\n  model work {{\n    from \"SKILL.md\":{s.start}-{s.end}\n"
                         f"    reads task\n    prompt \"Do this part.\"\n    -> next\n  }}\n}}\n"
                 for s, sig in zip(halves, signatures)}
    executor = CutWhole({"outputs": {
        "build_outline": [{"skm": machine, "signatures": signatures}],
        **{f"build_section:{name}": [{"skm": text, "rules": []}] for name, text in fragments.items()},
    }})
    # the document is under the section threshold, so the first request asks for the whole machine
    result = build(skill, output=skill.with_name("release.skm"), executor=executor,
                   llm=LLMOptions(section_tokens=100_000))
    assert result.ok, codes(result.diagnostics)
    assert executor.whole == 1
    assert executor.inner.used == {"build_outline": 1, **{f"build_section:{s.name}": 1 for s in halves}}
    assert {f"s{i}.work" for i in range(len(halves))} <= set(result.machine.states)
    cut = [d for d in result.diagnostics if str(d.code) == "SKM311"]
    assert len(cut) == 1 and "cut off at the reply budget" in cut[0].message
    assert f"{len(halves)} sections" in cut[0].message
    assert [r.parts for r in result.rounds] == [("machine",), ("machine", *(s.name for s in halves))]


def test_a_cut_whole_draft_of_a_document_that_does_not_split_is_told_to_the_model(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Greet\n\nGreet the user.\n", encoding="utf-8")
    executor = CutWhole({"outputs": {}})
    result = build(skill, output=tmp_path / "greet.skm", executor=executor)
    assert executor.whole == 3 and not result.ok  # each round asks for the whole machine again
    told = [d.message for d in result.diagnostics if str(d.code) == "SKM311"]
    assert len(told) == 3 and all("cut off at the reply budget (16384 tokens)" in m for m in told), told


def test_a_fragment_finding_at_the_machines_use_line_goes_to_that_section_too(tmp_path: Path) -> None:
    # Section two calls `bash`, which the outline does not declare: the instantiation reports it at the outline's
    # `use` line, and the section that calls the tool is asked about it as well (it can drop the call).
    skill = big_skill(tmp_path)
    doc, _ = read_document(skill)
    sections = split_sections(doc, 400)
    signatures = ["fragment part1_release(task: str) -> (next)", "fragment part2_part_2(task: str) -> (next)"]
    machine = ('machine release {\n  source "SKILL.md"\n  input task: str\n'
               "  start one\n  use part1_release as one(task: task) -> (next: two)\n"
               "  use part2_part_2 as two(task: task) -> (next: done)\n"
               "  terminal done: success\n  fallback\n}\n")

    def fragment(sig: str, lines: tuple[int, int], body: str) -> str:
        uses = "  use tools std(bash)\n" if body == "tool" else ""
        return (f"{sig} {{\n{uses}  start work\n  {body} work {{\n    from \"SKILL.md\":{lines[0]}-{lines[1]}\n"
                + ("    call bash(command: \"true\")\n" if body == "tool" else "    prompt \"Collect the items.\"\n")
                + "    -> next\n  }\n}\n")

    one = fragment(signatures[0], (sections[0].start, sections[0].end), "model")
    calls = fragment(signatures[1], (sections[1].start, sections[1].end), "tool")
    fixed = fragment(signatures[1], (sections[1].start, sections[1].end), "model")
    script = {"outputs": {
        "build_outline": [{"skm": machine, "signatures": signatures}, {"skm": machine, "signatures": signatures}],
        "build_section:part1_release": [{"skm": one, "rules": []}],
        "build_section:part2_part_2": [{"skm": calls, "rules": []}, {"skm": fixed, "rules": []}],
    }}
    executor = ScriptedExecutor(script)
    result = build(skill, output=skill.with_name("release.skm"), executor=executor,
                   llm=LLMOptions(section_tokens=400))
    assert any("calls tool `bash`" in e for e in result.rounds[0].errors), result.rounds[0].errors
    assert result.rounds[1].parts == ("machine", "part2_part_2")
    assert result.ok, codes(result.diagnostics)
    assert executor.used["build_section:part2_part_2"] == 2


# ---------------------------------------------------------------- schema and grammar export


def test_schema_round_trip_of_every_golden() -> None:
    for golden in sorted((Path(__file__).parent / "skills").glob("*.skm")):
        module = skillc.parse(golden).module
        again = skillc.parse(to_skm(to_json(module), golden.with_suffix(".md").name)).module
        assert again is not None
        assert skillc.format_text(to_skm(to_json(again), golden.with_suffix(".md").name))[0] == \
            skillc.format_text(to_skm(to_json(module), golden.with_suffix(".md").name))[0]


def test_grammar_json_schema_export() -> None:
    r = CliRunner().invoke(main, ["grammar", "--format", "json-schema"])
    assert r.exit_code == 0
    assert json.loads(r.output) == MACHINE_SCHEMA


# ---------------------------------------------------------------- the real local model

_local = pytest.mark.skipif(
    not os.environ.get("SKILLC_REQUIRE_LOCAL") and not __import__("importlib").util.find_spec("llama_cpp"),
    reason="needs the `local` extra (CI sets SKILLC_REQUIRE_LOCAL=1)")


@_local
def test_local_model_drafts_a_simple_skill(skill: Path) -> None:
    """Plumbing only: the 270M model's replies go through the reply reader and the checker; the result is either
    a checked machine or a clear failure, never a bad file. A small context gets the brief card."""
    from skillc.runtime.executors.local import LocalExecutor

    out = out_of(skill)
    # small budget: constrained decoding is slow on 2 cores; the timeout is the one `skillc build` gives its model
    executor = LocalExecutor(n_ctx=8192, max_tokens=160, timeout_s=600.0)
    try:
        result = build(skill, output=out, executor=executor, rounds=1, llm=LLMOptions(offline_draft=False))
    finally:
        executor.close()
    assert result.rounds, codes(result.diagnostics)  # the model was asked for a draft and the checker saw it
    if result.ok:
        assert skillc.check(result.text, path=str(out), skill=skill).machine is not None
    else:
        assert result.text is None
        assert {"SKM310", "SKM311"} & set(codes(result.diagnostics))
