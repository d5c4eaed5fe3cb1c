"""Runs that wait for their user: `ask_user` as an interrupt, the waiting run in its journal, `--resume --answer`."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner

import skillc
from skillc import api
from skillc.cli import main
from skillc.console import EXIT_WAITING
from skillc.ir import types as T
from skillc.runtime import Interpreter, Journal, RunError, RunOptions, ToolBox
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.interaction import AskUser, NeedsUser, Question
from skillc.runtime.record import load_run
from skillc.runtime.replay import replay_file
from skillc.runtime.tools import ToolError

ASK = """machine deploy {
  use tools std
  var target: str
  var out: str
  start pick
  tool pick {
    call ask_user(question: "Deploy where?", options: ["staging", "prod"])
    writes target = answer
    -> go
  }
  tool go {
    reads target
    call bash(command: "printf %s " ++ quote(target))
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""

FREE = ASK.replace(', options: ["staging", "prod"]', "")


def _machine(text: str = ASK, path: Path | None = None):
    result = skillc.check(text, path=str(path) if path else "deploy.skm")
    assert result.machine is not None and not result.failed, [d.message for d in result.diagnostics]
    return result.machine


def _interpreter(tmp_path: Path, user: AskUser, text: str = ASK, machine=None) -> Interpreter:
    m = machine or _machine(text)
    box = ToolBox.for_run(m, workdir=tmp_path, ask_user=user)
    options = RunOptions(journal=Journal(tmp_path / "runs.sqlite"), trace=tmp_path / "t.jsonl", workdir=str(tmp_path),
                         user=user)
    return Interpreter(m, ScriptedExecutor({"outputs": {}}), box, options, text)


def _status(tmp_path: Path, run_id: str) -> str:
    return sqlite3.connect(tmp_path / "runs.sqlite").execute("SELECT status FROM runs WHERE run_id = ?",
                                                            (run_id,)).fetchone()[0]


# ---------------------------------------------------------------- the ask_user tool


def test_a_callback_gets_the_question_and_its_menu() -> None:
    seen: list[Question] = []
    ask = AskUser(answer=lambda q: seen.append(q) or "prod")
    assert ask("Deploy where?", ["staging", "prod"]) == {"answer": "prod"} and ask.last_source == "callback"
    assert seen == ["Deploy where?"] and seen[0].options == ("staging", "prod")
    assert AskUser(answer=lambda q: "x")("free?")["answer"] == "x"


def test_prepared_answers_are_taken_in_order_and_must_be_on_the_menu() -> None:
    ask = AskUser.scripted(["a", "b", "c"])
    assert ask("1?")["answer"] == "a" and ask.last_source == "prepared"
    assert ask("2?", ["b"])["answer"] == "b"
    with pytest.raises(ToolError, match="not one of the options"):
        ask("3?", ["x", "y"])


def test_nobody_to_answer_needs_a_user_and_never_guesses() -> None:
    with pytest.raises(NeedsUser, match=r"^needs a user") as caught:
        AskUser.nobody()("Deploy where?", ["staging", "prod"])
    assert (caught.value.question, caught.value.options) == ("Deploy where?", ("staging", "prod"))
    with pytest.raises(NeedsUser):  # prepared answers run out
        ask = AskUser(prepared=["one"], terminal=False)
        ask("1?")
        ask("2?")


def test_the_terminal_asks_again_until_the_answer_is_on_the_menu() -> None:
    err = io.StringIO()
    ask = AskUser(stdin=io.StringIO("dev\nprod\n"), stderr=err)
    assert ask("Deploy where?", ["staging", "prod"]) == {"answer": "prod"} and ask.last_source == "user"
    assert "(one of: staging, prod)" in err.getvalue() and "'dev' is not one of the options" in err.getvalue()
    with pytest.raises(NeedsUser, match="end of input"):
        AskUser(stdin=io.StringIO(""), stderr=io.StringIO())("?")


# ---------------------------------------------------------------- waiting and resuming (the interpreter)


def test_a_journaled_run_that_asks_nobody_waits_and_resumes_once_with_the_answer(tmp_path: Path) -> None:
    waited = _interpreter(tmp_path, AskUser.nobody()).run({})
    wait = waited.waiting
    assert waited.outcome == "waiting" and wait is not None and waited.steps == 0 and waited.visited == ()
    assert (wait.question, wait.options, wait.state, wait.step) == ("Deploy where?", ("staging", "prod"), "pick", 0)
    assert _status(tmp_path, waited.run_id) == "waiting"
    assert load_run(tmp_path / "t.jsonl").footer is None  # the run has not ended
    assert Journal(tmp_path / "runs.sqlite").waiting(waited.run_id) == wait

    done = _interpreter(tmp_path, AskUser.nobody()).resume(waited.run_id, "prod")
    assert (done.outcome, done.evidence, done.steps) == ("success", {"out": "prod"}, 2)
    run = load_run(tmp_path / "t.jsonl")
    asked = run.steps[0]
    assert (asked.state, asked.tool_result, asked.answered_by) == ("pick", {"answer": "prod"}, "user")
    assert run.footer is not None and run.footer.outcome == "success"
    assert replay_file(_machine(), ASK, tmp_path / "t.jsonl").ok  # the answer replays from the record

    with pytest.raises(RunError, match="already finished"):  # answering twice changes nothing
        _interpreter(tmp_path, AskUser.nobody()).resume(waited.run_id, "staging")
    assert _status(tmp_path, waited.run_id) == "done"


def test_an_answer_off_the_menu_is_refused_and_the_run_keeps_waiting(tmp_path: Path) -> None:
    waited = _interpreter(tmp_path, AskUser.nobody()).run({})
    with pytest.raises(RunError, match=r"'dev' is not one of the options \('staging', 'prod'\); run `\w+` still "
                                       r"waits"):
        _interpreter(tmp_path, AskUser.nobody()).resume(waited.run_id, "dev")
    with pytest.raises(RunError, match="waits for the user's answer to 'Deploy where\\?'; resume it with --answer"):
        _interpreter(tmp_path, AskUser.nobody()).resume(waited.run_id)
    assert _status(tmp_path, waited.run_id) == "waiting"
    assert _interpreter(tmp_path, AskUser.nobody()).resume(waited.run_id, "staging").evidence == {"out": "staging"}


def test_answering_a_run_that_is_not_waiting_is_refused(tmp_path: Path) -> None:
    done = _interpreter(tmp_path, AskUser.scripted(["prod"])).run({})
    assert done.outcome == "success"
    run = load_run(tmp_path / "t.jsonl")
    assert run.steps[0].answered_by == "prepared"
    with pytest.raises(RunError, match="already finished"):
        _interpreter(tmp_path, AskUser.nobody()).resume(done.run_id, "prod")
    # A run stopped before its end (not waiting) refuses an answer too, and is left as it was.
    journal = Journal(tmp_path / "runs.sqlite")
    run_id = journal.start("deploy.skm", _interpreter(tmp_path, AskUser.nobody()).hash, {}, "scripted:x", None)
    journal.interrupt(run_id)
    with pytest.raises(RunError, match="is not waiting for an answer"):
        _interpreter(tmp_path, AskUser.nobody()).resume(run_id, "prod")
    assert _status(tmp_path, run_id) == "interrupted"


def test_an_answer_saved_before_a_crash_is_used_by_the_next_resume(tmp_path: Path) -> None:
    waited = _interpreter(tmp_path, AskUser.nobody()).run({})
    Journal(tmp_path / "runs.sqlite").answer(waited.run_id, "prod")  # the answer taken; then the process died
    assert _status(tmp_path, waited.run_id) == "running"
    done = _interpreter(tmp_path, AskUser.nobody()).resume(waited.run_id)
    assert done.evidence == {"out": "prod"}


def test_an_enum_answer_has_the_enums_labels_as_its_menu(tmp_path: Path) -> None:
    # The answer goes into an enum: the runtime offers its labels as the menu (the IR built directly).
    m = _machine(FREE)
    enum = T.EnumT(("staging", "prod"))
    m = attrs.evolve(m, variables={**m.variables, "target": attrs.evolve(m.variables["target"], type=enum)})
    interp = _interpreter(tmp_path, AskUser.nobody(), FREE, machine=m)
    waited = interp.run({})
    assert waited.waiting is not None and waited.waiting.options == ("staging", "prod")
    with pytest.raises(RunError, match="not one of the options"):
        _interpreter(tmp_path, AskUser.nobody(), FREE, machine=m).resume(waited.run_id, "dev")
    assert _interpreter(tmp_path, AskUser.nobody(), FREE, machine=m).resume(waited.run_id, "prod").outcome == "success"


def test_without_a_journal_nobody_to_ask_fails_as_needs_a_user(tmp_path: Path) -> None:
    m = _machine()
    user = AskUser.nobody()
    result = Interpreter(m, ScriptedExecutor({}), ToolBox.for_run(m, workdir=tmp_path, ask_user=user),
                         RunOptions(trace=tmp_path / "t.jsonl", user=user), ASK).run({})
    assert (result.outcome, result.terminal, result.reason.kind) == ("failed", "fallback", "needs_user")
    assert result.error.startswith("needs a user: the skill asks 'Deploy where?'")
    assert replay_file(m, ASK, tmp_path / "t.jsonl").ok  # the failure replays as the same kind


# ---------------------------------------------------------------- the API and the command line


def test_the_api_reports_the_waiting_run_and_takes_callbacks_and_prepared_answers(tmp_path: Path,
                                                                                 monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deploy.skm").write_text(ASK)
    (tmp_path / "empty.json").write_text('{"outputs": {}}')
    base = api.RunConfig(machine="deploy.skm", executor="scripted:empty.json", journal=str(tmp_path / "j.sqlite"))
    report = api.run(base)
    assert report.waiting is not None and report.waiting.question == "Deploy where?" and report.error is None
    # Resumed with a callback: it answers the question the run waits on.
    again = api.run(attrs.evolve(base, machine=None, executor=None, resume=report.waiting.run_id,
                                 answer=lambda q: q.options[-1]))
    assert again.result is not None and again.result.evidence == {"out": "prod"}
    prepared = api.run(attrs.evolve(base, answers=["staging"]))
    assert prepared.result is not None and prepared.result.evidence == {"out": "staging"}
    called = api.run(attrs.evolve(base, answer=lambda q: "prod"))
    assert called.result is not None and called.result.outcome == "success"
    none = api.run(attrs.evolve(base, journal=None))
    assert none.result is not None and none.result.reason.kind == "needs_user" and none.waiting is None
    assert api.run(attrs.evolve(base, answer="prod")).usage is not None  # a text answer needs --resume


def test_the_command_line_exits_6_names_the_question_and_resumes_once(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "deploy.skm").write_text(ASK)
    (tmp_path / "empty.json").write_text('{"outputs": {}}')
    runner = CliRunner()
    first = runner.invoke(main, ["run", "deploy.skm", "--executor", "scripted:empty.json", "--trace", "t.jsonl",
                                 "--journal", "my runs.sqlite"])
    assert first.exit_code == EXIT_WAITING == 6, first.output
    run_id = Journal(tmp_path / "my runs.sqlite").db.execute("SELECT run_id FROM runs").fetchone()[0]
    assert "waiting for the user (step 0, `pick`): Deploy where?" in first.stdout
    assert 'answer one of: "staging", "prod"' in first.stdout
    assert (f"to answer: skillc run --resume {run_id} --journal '{tmp_path.resolve() / 'my runs.sqlite'}' "
            f"--answer \"…\"") in first.stdout
    off = runner.invoke(main, ["run", "--resume", run_id, "--journal", "my runs.sqlite", "--answer", "dev"])
    assert off.exit_code == 2 and "not one of the options" in off.stderr
    done = runner.invoke(main, ["run", "--resume", run_id, "--journal", "my runs.sqlite", "--answer", "prod"])
    assert done.exit_code == 0 and 'out = "prod"' in done.stdout
    twice = runner.invoke(main, ["run", "--resume", run_id, "--journal", "my runs.sqlite", "--answer", "prod"])
    assert twice.exit_code == 2 and "error[SKM501]" in twice.stderr and "waits for no answer" in twice.stderr
    alone = runner.invoke(main, ["run", "deploy.skm", "--executor", "scripted:empty.json", "--answer", "prod"])
    assert alone.exit_code == 2 and "--resume" in alone.output
    as_json = runner.invoke(main, ["run", "deploy.skm", "--executor", "scripted:empty.json", "--json"])
    assert as_json.exit_code == 6 and json.loads(as_json.stdout)["waiting"]["question"] == "Deploy where?"
    assert "to answer: skillc run --resume" in as_json.stderr


def test_an_older_journal_without_the_waits_table_is_opened_and_upgraded(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "old.sqlite")
    from skillc.runtime.journal import APPLICATION_ID, SCHEMA

    db.executescript(SCHEMA.split("CREATE TABLE IF NOT EXISTS waits")[0])
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.commit()
    db.close()
    journal = Journal(tmp_path / "old.sqlite")
    assert [r[1] for r in journal.db.execute("PRAGMA table_info(waits)")][:4] == ["run_id", "step", "state",
                                                                                 "question"]


def test_the_printed_resume_command_names_the_journal_absolute_and_no_folder() -> None:
    """The command works typed in any folder: the journal named absolute, the run's folders kept by it."""
    from skillc.console import resume_command

    assert resume_command("r1", "/j/my j.sqlite") == "skillc run --resume r1 --journal '/j/my j.sqlite' --answer \"…\""
    assert resume_command("r1", "j.sqlite").endswith(f" --journal {Path('j.sqlite').resolve()} --answer \"…\"")
    default = Path(".skillc/runs.sqlite").resolve()  # relative to where it is typed: named absolute too
    assert resume_command("r1", ".skillc/runs.sqlite") == f'skillc run --resume r1 --journal {default} --answer "…"'


WRITES = ASK.replace('call bash(command: "printf %s " ++ quote(target))',
                     'call bash(command: "printf %s " ++ quote(target) ++ " > chosen.txt && cat chosen.txt")')
#: WRITES, asking a second question after its file: a run that waits twice.
TWICE = WRITES.replace("    writes out = stdout\n    -> done", """    writes out = stdout
    -> again
  }
  tool again {
    call ask_user(question: "Tag it?", options: ["yes", "no"])
    writes target = answer
    -> tag
  }
  tool tag {
    reads target
    call bash(command: "printf %s " ++ quote(target) ++ " > tagged.txt")
    writes out = stdout
    -> done""")


def _waiting_in(tmp_path: Path, work: Path, skill: Path | None = None,
                text: str = WRITES) -> tuple[CliRunner, list[str], str]:
    """A run of `text` started in `work` (journal and machine in `tmp_path`), waiting for its answer."""
    (tmp_path / "deploy.skm").write_text(text)
    (tmp_path / "empty.json").write_text('{"outputs": {}}')
    journal = str(tmp_path / "runs.sqlite")
    runner = CliRunner()
    args = ["run", str(tmp_path / "deploy.skm"), "--executor", f"scripted:{tmp_path / 'empty.json'}", "--journal",
            journal, "--trace", str(tmp_path / "t.jsonl"), "--workdir", str(work)] + (
        ["--skill-dir", str(skill)] if skill else [])
    first = runner.invoke(main, args)
    assert first.exit_code == 6, first.output
    run_id = Journal(journal).db.execute("SELECT run_id FROM runs").fetchone()[0]
    return runner, ["run", "--resume", run_id, "--journal", journal], run_id


def test_a_resume_from_another_folder_continues_in_the_folders_the_run_started_in(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    work, skill, elsewhere = tmp_path / "work", tmp_path / "skill", tmp_path / "elsewhere"
    for folder in (work, skill, elsewhere):
        folder.mkdir()
    runner, resume, run_id = _waiting_in(tmp_path, work, skill)
    info = Journal(tmp_path / "runs.sqlite").info(run_id)
    assert (info.workdir, info.skill_dir) == (str(work.resolve()), str(skill.resolve()))
    monkeypatch.chdir(elsewhere)  # the user answers from another shell folder, naming no folder
    done = runner.invoke(main, [*resume, "--answer", "prod", "--json"])
    assert done.exit_code == 0, done.output
    assert (work / "chosen.txt").read_text() == "prod" and not (elsewhere / "chosen.txt").exists()
    resumed = load_run(tmp_path / "t.jsonl").headers[-1]
    assert resumed.resumed_at_step == 0 and resumed.workdir == str(work.resolve())
    assert resumed.extra["skillc.skill_dir"] == str(skill.resolve())


def test_a_resume_names_another_work_folder_to_move_the_run_and_a_gone_one_is_refused(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    work, moved = tmp_path / "work", tmp_path / "moved"
    work.mkdir()
    runner, resume, run_id = _waiting_in(tmp_path, work)
    work.rename(moved)
    monkeypatch.chdir(tmp_path)
    gone = runner.invoke(main, [*resume, "--answer", "prod"])
    assert gone.exit_code == 2 and "error[SKM501]" in gone.stderr, gone.output
    assert f"works in the folder {work.resolve()}, which is gone" in gone.stderr
    assert "--workdir DIR" in gone.stderr and not (tmp_path / "chosen.txt").exists()
    assert Journal(tmp_path / "runs.sqlite").info(run_id).status == "waiting"  # refused, changing nothing
    work.write_text("a file now")
    file = runner.invoke(main, [*resume, "--answer", "prod"])
    assert file.exit_code == 2 and f"{work.resolve()}, which is not a folder" in file.stderr, file.output
    done = runner.invoke(main, [*resume, "--workdir", str(moved), "--answer", "prod"])
    assert done.exit_code == 0, done.output
    assert (moved / "chosen.txt").read_text() == "prod" and not (tmp_path / "chosen.txt").exists()


def test_a_run_an_older_journal_kept_without_its_places_resumes_in_the_folders_named(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    """A journal an older skillc wrote has no `places` table: it is added on opening, and the run's folders are
    those of the resuming command, as that skillc did."""
    work = tmp_path / "work"
    work.mkdir()
    runner, resume, run_id = _waiting_in(tmp_path, work)
    db = sqlite3.connect(tmp_path / "runs.sqlite")
    db.execute("DROP TABLE places")
    db.commit()
    db.close()
    assert Journal(tmp_path / "runs.sqlite").info(run_id).workdir is None
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(main, [*resume, "--answer", "staging"])
    assert done.exit_code == 0, done.output
    assert (tmp_path / "chosen.txt").read_text() == "staging" and not (work / "chosen.txt").exists()


def test_a_run_moved_by_a_resume_stays_where_it_was_moved(tmp_path: Path, monkeypatch) -> None:
    """Naming `--workdir` again moves the run for good: its next resume, typed as printed, continues there."""
    first, moved, elsewhere = tmp_path / "first", tmp_path / "moved", tmp_path / "elsewhere"
    for folder in (first, moved, elsewhere):
        folder.mkdir()
    runner, resume, run_id = _waiting_in(tmp_path, first, text=TWICE)
    monkeypatch.chdir(elsewhere)
    asked = runner.invoke(main, [*resume, "--workdir", str(moved), "--answer", "prod"])
    assert asked.exit_code == 6 and "Tag it?" in asked.stdout, asked.output
    assert "--workdir" not in asked.stdout  # the printed command names no folder: the journal keeps the new one
    done = runner.invoke(main, [*resume, "--answer", "yes"])
    assert done.exit_code == 0, done.output
    assert [p.name for p in sorted(moved.iterdir())] == ["chosen.txt", "tagged.txt"]
    assert not any(first.iterdir()) and not any(elsewhere.iterdir())
    assert Journal(tmp_path / "runs.sqlite").info(run_id).workdir == str(moved.resolve())


def test_a_resume_keeps_relative_paths_of_the_start_absolute(tmp_path: Path, monkeypatch) -> None:
    """A run started with a relative machine, trace and work folder is resumed from another folder: it reads its
    machine and appends to its own trace, not to a new one where the resume was typed."""
    (tmp_path / "work").mkdir()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "deploy.skm").write_text(WRITES)
    (tmp_path / "empty.json").write_text('{"outputs": {}}')
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(main, ["run", "deploy.skm", "--executor", "scripted:empty.json", "--journal", "j.sqlite",
                                 "--trace", "t.jsonl", "--workdir", "work"])
    assert first.exit_code == 6, first.output
    run_id = Journal(tmp_path / "j.sqlite").db.execute("SELECT run_id FROM runs").fetchone()[0]
    printed = first.stdout.split("to answer: ")[1].strip()
    monkeypatch.chdir(tmp_path / "elsewhere")
    import shlex

    argv = shlex.split(printed.replace("…", "prod"))[1:]  # the printed command, typed in another folder
    done = runner.invoke(main, argv)
    assert done.exit_code == 0, done.output
    assert (tmp_path / "work" / "chosen.txt").read_text() == "prod"
    assert not any((tmp_path / "elsewhere").iterdir())
    run = load_run(tmp_path / "t.jsonl")
    assert [h.resumed_at_step for h in run.headers] == [None, 0] and run.footer is not None
    assert run.headers[0].run_id == run_id


def test_a_resume_without_its_journal_is_refused_and_makes_none(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(main, ["run", "--resume", "0123456789ab", "--answer", "prod"])
    assert refused.exit_code == 2 and "error[SKM500]" in refused.stderr and "no run journal at" in refused.stderr
    assert not any(tmp_path.iterdir())  # no `.skillc/runs.sqlite` made in the wrong folder


def test_a_finished_run_whose_folder_is_gone_is_refused_as_finished(tmp_path: Path, monkeypatch) -> None:
    work = tmp_path / "work"
    work.mkdir()
    runner, resume, _run_id = _waiting_in(tmp_path, work)
    assert runner.invoke(main, [*resume, "--answer", "prod"]).exit_code == 0
    import shutil

    shutil.rmtree(work)
    again = runner.invoke(main, [*resume, "--answer", "prod"])
    assert again.exit_code == 2 and "already finished (success)" in again.stderr and "gone" not in again.stderr


def test_a_work_folder_whose_name_is_not_utf8_is_kept_exactly(tmp_path: Path, monkeypatch) -> None:
    """Python keeps such a name with surrogate escapes, which SQLite's text refuses: the journal stores JSON."""
    import os

    odd = os.path.join(os.fsencode(tmp_path), b"bad\xff")
    try:
        os.mkdir(odd)
    except OSError:
        pytest.skip("this file system refuses names that are not UTF-8")
    work = os.fsdecode(odd)
    runner, resume, run_id = _waiting_in(tmp_path, Path(work))
    assert Journal(tmp_path / "runs.sqlite").info(run_id).workdir == str(Path(work).resolve())
    monkeypatch.chdir(tmp_path)
    done = runner.invoke(main, [*resume, "--answer", "prod"])
    assert done.exit_code == 0, done.output
    assert (Path(work) / "chosen.txt").read_text() == "prod"


def test_a_gone_skill_folder_is_refused_before_the_answer_is_taken(tmp_path: Path, monkeypatch) -> None:
    """A machine that reads its skill folder, resumed after the folder went: refused, the answer not used up, so the
    same answer with `--skill-dir` naming the folder again is taken."""
    skill, work = tmp_path / "skill", tmp_path / "work"
    for folder in (skill, work):
        folder.mkdir()
    (skill / "guide.md").write_text("be brief")
    reads = WRITES.replace('" > chosen.txt && cat chosen.txt")', '" > chosen.txt && cat " ++ quote(skill_dir ++ '
                           '"/guide.md"))')
    runner, resume, run_id = _waiting_in(tmp_path, work, skill, text=reads)
    skill.rename(tmp_path / "moved")
    monkeypatch.chdir(tmp_path)
    refused = runner.invoke(main, [*resume, "--answer", "prod"])
    assert refused.exit_code == 2 and "uses `skill_dir`, but this run has no skill folder" in refused.stderr
    journal = Journal(tmp_path / "runs.sqlite")
    assert journal.info(run_id).status == "waiting" and journal.waiting(run_id) is not None
    done = runner.invoke(main, [*resume, "--skill-dir", str(tmp_path / "moved"), "--answer", "prod", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["evidence"] == {"out": "be brief"}
    assert journal.info(run_id).skill_dir == str((tmp_path / "moved").resolve())


def test_a_trace_named_again_with_dots_is_the_same_trace(tmp_path: Path, monkeypatch) -> None:
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    (tmp_path / "work").mkdir()
    (tmp_path / "deploy.skm").write_text(WRITES)
    (tmp_path / "empty.json").write_text('{"outputs": {}}')
    monkeypatch.chdir(deep)
    runner = CliRunner()
    first = runner.invoke(main, ["run", "../../deploy.skm", "--executor", "scripted:../../empty.json", "--journal",
                                 "../../j.sqlite", "--trace", "../t.jsonl", "--workdir", "../../work"])
    assert first.exit_code == 6, first.output
    run_id = Journal(tmp_path / "j.sqlite").db.execute("SELECT run_id FROM runs").fetchone()[0]
    done = runner.invoke(main, ["run", "--resume", run_id, "--journal", "../../j.sqlite", "--trace", "../t.jsonl",
                                "--executor", "scripted:../../empty.json", "--answer", "prod"])
    assert done.exit_code == 0, done.output
    assert load_run(tmp_path / "a" / "t.jsonl").footer is not None


def test_only_executor_specs_that_name_files_are_made_absolute(tmp_path: Path, monkeypatch) -> None:
    from skillc.runtime.executors.base import absolute_spec

    monkeypatch.chdir(tmp_path)
    for name in ("run.json", "qwen.gguf"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "rec").mkdir()
    assert absolute_spec("scripted:run.json") == f"scripted:{tmp_path.resolve() / 'run.json'}"
    assert absolute_spec("recorded:rec") == f"recorded:{tmp_path.resolve() / 'rec'}"  # a folder
    assert absolute_spec("local:qwen.gguf?n_ctx=2048") == f"local:{tmp_path.resolve() / 'qwen.gguf'}?n_ctx=2048"
    for model in ("openai:qwen.gguf", "anthropic:qwen.gguf", "scripted:missing.json", "local?n_ctx=9", "chaos:3"):
        assert absolute_spec(model) == model  # a model's name, or nothing there


def test_a_run_that_ended_before_its_journal_knew_is_ended_even_where_its_folder_is_gone(tmp_path: Path,
                                                                                          monkeypatch) -> None:
    """Killed after its trace's footer, before the journal recorded the end: the resume records the end, which
    needs no folder, instead of refusing the gone folder."""
    work = tmp_path / "work"
    work.mkdir()
    runner, resume, run_id = _waiting_in(tmp_path, work)
    assert runner.invoke(main, [*resume, "--answer", "prod"]).exit_code == 0
    db = sqlite3.connect(tmp_path / "runs.sqlite")
    db.execute("UPDATE runs SET status = 'running', outcome = NULL WHERE run_id = ?", (run_id,))
    db.commit()
    db.close()
    import shutil

    shutil.rmtree(work)
    monkeypatch.chdir(tmp_path)
    ended = runner.invoke(main, resume)
    assert ended.exit_code == 0 and "outcome: success" in ended.stdout, ended.output
    assert Journal(tmp_path / "runs.sqlite").info(run_id).status == "done"


def test_an_interpreter_resumed_without_a_work_folder_leaves_the_kept_one(tmp_path: Path, monkeypatch) -> None:
    """Through the `Interpreter`, a resume whose options name no work folder works where its caller's tool box
    does, which the journal cannot know: the folder kept for the command line's resumes stays as it was."""
    work = tmp_path / "work"
    work.mkdir()
    _runner, _resume, run_id = _waiting_in(tmp_path, work)
    machine = _machine(WRITES, tmp_path / "deploy.skm")
    box = ToolBox.for_run(machine, workdir=work)
    options = RunOptions(journal=Journal(tmp_path / "runs.sqlite"), machine_path=str(tmp_path / "deploy.skm"),
                         trace=None)
    monkeypatch.chdir(tmp_path)
    result = Interpreter(machine, ScriptedExecutor({"outputs": {}}), box, options, WRITES).resume(run_id, "prod")
    assert result.outcome == "success" and (work / "chosen.txt").read_text() == "prod"
    assert Journal(tmp_path / "runs.sqlite").info(run_id).workdir == str(work.resolve())


def test_a_resume_set_up_before_another_moved_the_run_is_refused(tmp_path: Path) -> None:
    """Two resumes typed together, one moving the run: the one that read the kept folder before the other moved it
    takes the lease second and is refused, instead of moving the run back."""
    work, moved = tmp_path / "work", tmp_path / "moved"
    for folder in (work, moved):
        folder.mkdir()
    _runner, _resume, run_id = _waiting_in(tmp_path, work)
    journal = Journal(tmp_path / "runs.sqlite")
    journal.move(run_id, str(moved.resolve()), None)  # the other resume, done first
    machine = _machine(WRITES, tmp_path / "deploy.skm")
    options = RunOptions(journal=journal, machine_path=str(tmp_path / "deploy.skm"), workdir=str(work.resolve()),
                         workdir_kept=True)
    interpreter = Interpreter(machine, ScriptedExecutor({"outputs": {}}), ToolBox.for_run(machine, workdir=work),
                              options, WRITES)
    with pytest.raises(RunError, match=f"was moved to {moved.resolve()} by another resume"):
        interpreter.resume(run_id, "prod")
    assert journal.info(run_id).status == "waiting" and not (work / "chosen.txt").exists()
