"""Places as values and success predicates judged over the world on arrival at a terminal."""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

import skillc
from skillc import api
from skillc.cli import main
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.evaluate import EvalError, WorkFolder, evaluate
from skillc.runtime import Interpreter, RunError, RunOptions, ToolBox
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.record import load_run
from skillc.runtime.replay import replay_file
from skillc.runtime.session import default_skill_dir

REPORT = """machine report {
  use tools std
  input topic: str
  var text: str
  var wrote: str
  start draft
  model draft {
    reads topic
    writes text
    prompt "Write about the topic."
    -> save
  }
  tool save {
    reads text
    call write(path: "report.md", content: text)
    writes wrote = path
    -> done
  }
  terminal done: success { requires wrote, exists("report.md"), file("report.md") == text }
  fallback
}
"""

PLACES = """machine places {
  use tools std
  source "SKILL.md"
  var content: str
  var here: str
  start load
  tool load {
    call read(path: skill_dir ++ "/references/guide.md")
    writes content = content
    -> where
  }
  tool where {
    call bash(command: "printf %s \\"$PWD\\"")
    writes here = stdout
    -> done
  }
  terminal done: success { requires content, here == workdir }
  fallback
}
"""


def _machine(text: str, path: Path | None = None):
    result = skillc.check(text, path=str(path) if path else "m.skm")
    assert result.machine is not None and not result.failed, [d.message for d in result.diagnostics]
    return result.machine


def _run(tmp_path: Path, text: str = REPORT, script: dict | None = None, *, skill_dir: Path | None = None,
         inputs: dict | None = None, machine=None):
    m = machine or _machine(text)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    box = ToolBox.for_run(m, workdir=work, skill_dir=skill_dir)
    options = RunOptions(trace=tmp_path / "t.jsonl", workdir=str(work),
                         skill_dir=None if skill_dir is None else str(skill_dir))
    executor = ScriptedExecutor(script or {"outputs": {"draft": [{"text": "hello"}]}})
    return Interpreter(m, executor, box, options, text).run(inputs if inputs is not None else {"topic": "x"})


# ---------------------------------------------------------------- the world functions


def test_the_work_folder_answers_exists_and_file_inside_it_only(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("A\n")
    (tmp_path / "sub").mkdir()
    os.symlink("/etc/hostname", tmp_path / "out")
    world = WorkFolder(tmp_path)
    call = lambda f, p: ir.Call(T.BOOL if f == "exists" else T.STR, func=f, args=(ir.Const(T.STR, value=p),))  # noqa
    assert evaluate(call("exists", "a.txt"), {}, world) is True
    assert evaluate(call("exists", "sub"), {}, world) is True and evaluate(call("exists", "b"), {}, world) is False
    assert evaluate(call("file", "a.txt"), {}, world) == "A\n"
    assert evaluate(call("exists", str(tmp_path / "a.txt")), {}, world) is True  # absolute, but inside
    for path, why in (("b.txt", "no such file in the work folder"), ("sub", "is a folder"),
                      ("../x", "outside the work folder"), ("/etc/hostname", "outside the work folder"),
                      ("out", "outside the work folder")):
        with pytest.raises(EvalError, match=why):
            evaluate(call("file", path), {}, world)
    with pytest.raises(EvalError, match="outside the work folder"):
        evaluate(call("exists", "../.."), {}, world)
    with pytest.raises(EvalError, match="looks at the world"):
        evaluate(call("exists", "a.txt"), {})


# ---------------------------------------------------------------- success predicates


def test_predicates_that_hold_end_in_the_terminal_with_their_verdicts_as_evidence(tmp_path: Path) -> None:
    result = _run(tmp_path)
    assert (result.outcome, result.terminal, result.reason) == ("success", "done", None)
    assert result.evidence == {"wrote": "report.md", 'exists("report.md")': True,
                               'file("report.md") == text': True}
    footer = load_run(tmp_path / "t.jsonl").footer
    assert footer is not None and [(v.predicate, v.holds) for v in footer.predicates] == [
        ('exists("report.md")', True), ('file("report.md") == text', True)]


def test_a_predicate_that_does_not_hold_sends_the_run_to_the_fallback_with_why(tmp_path: Path) -> None:
    # The write is scripted: it reports success, but no file is there. Model text never proves a deliverable.
    script = {"outputs": {"draft": [{"text": "hello"}]},
              "tools": {"save": [{"path": "report.md", "bytes": 5, "sha256": "0" * 64}]}}
    result = _run(tmp_path, script=script)
    assert (result.outcome, result.terminal) == ("failed", "fallback")
    assert (result.reason.kind, result.reason.state) == ("predicate", "done")
    assert result.error == 'requires exists("report.md"): no such file in the work folder'
    assert result.evidence == {'exists("report.md")': False, 'file("report.md") == text': False}
    footer = load_run(tmp_path / "t.jsonl").footer
    assert footer.reason.message == result.error and footer.predicates[1].reason == \
        "`report.md`: no such file in the work folder"  # `file` of a missing file fails, it does not crash


def test_a_false_comparison_names_the_values_it_compared(tmp_path: Path) -> None:
    (tmp_path / "work").mkdir()
    (tmp_path / "work" / "report.md").write_text("stale")
    script = {"outputs": {"draft": [{"text": "hello"}]},
              "tools": {"save": [{"path": "report.md", "bytes": 5, "sha256": "0" * 64}]}}
    result = _run(tmp_path, script=script)
    assert result.error == 'requires file("report.md") == text: false (file("report.md") is "stale", text is "hello")'


def test_replay_reads_the_verdicts_from_the_trace_and_never_looks_at_the_world(tmp_path: Path) -> None:
    m = _machine(REPORT)
    assert _run(tmp_path).outcome == "success"
    (tmp_path / "work" / "report.md").unlink()  # the world changed since: the replay still reproduces the run
    assert replay_file(m, REPORT, tmp_path / "t.jsonl").ok
    script = {"outputs": {"draft": [{"text": "hello"}]},
              "tools": {"save": [{"path": "report.md", "bytes": 5, "sha256": "0" * 64}]}}
    assert _run(tmp_path, script=script).reason.kind == "predicate"
    (tmp_path / "work" / "report.md").write_text("hello")
    report = replay_file(m, REPORT, tmp_path / "t.jsonl")
    assert report.ok and "as the trace did (predicate:" in report.message


def test_the_command_line_reports_the_failed_predicate(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.skm").write_text(REPORT)
    (tmp_path / "script.json").write_text('{"outputs": {"draft": [{"text": "hi"}]}, "tools": {"save": '
                                          '[{"path": "report.md", "bytes": 2, "sha256": "x"}]}}')
    out = CliRunner().invoke(main, ["run", "report.skm", "--executor", "scripted:script.json", "--input", "topic=x"])
    assert out.exit_code == 5
    assert 'error: requires exists("report.md"): no such file in the work folder' in out.stdout
    assert 'exists("report.md") = false' in out.stdout


# ---------------------------------------------------------------- places


def _skill(tmp_path: Path) -> Path:
    folder = tmp_path / "skill"
    (folder / "references").mkdir(parents=True)
    (folder / "references" / "guide.md").write_text("the guide")
    (folder / "SKILL.md").write_text("# places\n")
    (folder / "places.skm").write_text(PLACES)
    return folder


def test_places_are_absolute_paths_in_the_runs_variables(tmp_path: Path) -> None:
    folder = _skill(tmp_path)
    result = _run(tmp_path, PLACES, {"outputs": {}}, skill_dir=folder, inputs={})
    assert (result.outcome, result.evidence["content"]) == ("success", "the guide"), result.error
    assert result.evidence["here == workdir"] is True  # bash ran in the work folder, the place `workdir`
    header = load_run(tmp_path / "t.jsonl").header
    assert header.extra["skillc.skill_dir"] == str(folder.resolve())


def test_a_machine_that_uses_skill_dir_without_one_is_refused_before_the_first_step(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="uses `skill_dir`, but this run has no skill folder: give --skill-dir"):
        _run(tmp_path, PLACES, {"outputs": {}}, inputs={})
    assert not (tmp_path / "t.jsonl").exists()
    assert str(RunError.code) == "SKM501"


def test_the_skill_folder_defaults_to_the_folder_of_the_machines_source(tmp_path: Path, monkeypatch) -> None:
    folder = _skill(tmp_path)
    m = _machine(PLACES, folder / "places.skm")
    assert default_skill_dir(m) == folder.resolve()
    assert default_skill_dir(attrs.evolve(m, source=None)) is None
    assert default_skill_dir(attrs.evolve(m, source="nowhere/SKILL.md")) is None
    work = tmp_path / "work"
    work.mkdir()
    (tmp_path / "empty.json").write_text('{"outputs": {}}')
    config = api.RunConfig(machine=str(folder / "places.skm"), executor=f"scripted:{tmp_path / 'empty.json'}",
                           workdir=str(work), journal=str(tmp_path / "j.sqlite"))
    report = api.run(config)
    assert report.result is not None and report.result.outcome == "success", report.error
    # --skill-dir overrides it: another folder's guide is read.
    other = tmp_path / "other"
    (other / "references").mkdir(parents=True)
    (other / "references" / "guide.md").write_text("another guide")
    report = api.run(attrs.evolve(config, skill_dir=str(other)))
    assert report.result.evidence["content"] == "another guide"
    monkeypatch.chdir(work)
    out = CliRunner().invoke(main, ["run", str(folder / "places.skm"), "--executor",
                                    f"scripted:{tmp_path / 'empty.json'}", "--skill-dir", "../nowhere"])
    assert out.exit_code == 2 and "no such folder" in out.output


def test_the_skill_folder_is_read_only_to_the_tools(tmp_path: Path) -> None:
    folder = _skill(tmp_path)
    text = PLACES.replace('call read(path: skill_dir ++ "/references/guide.md")\n    writes content = content',
                          'call write(path: skill_dir ++ "/x.md", content: "x")\n    writes content = path')
    result = _run(tmp_path, text, {"outputs": {}}, skill_dir=folder, inputs={})
    assert result.reason.kind == "tool" and "may only read" in result.error and not (folder / "x.md").exists()


def test_skillc_test_takes_the_world_as_standing_in(tmp_path: Path, monkeypatch) -> None:
    # No real tool writes anything while a machine is explored: its predicates are taken to hold there.
    monkeypatch.chdir(tmp_path)
    (tmp_path / "report.skm").write_text(REPORT)
    result = api.explore(str(tmp_path / "report.skm"), examples=5)
    assert result.report is not None and result.report.failures == []
