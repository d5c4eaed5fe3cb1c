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
    assert (f"to answer: skillc run --resume {run_id} --journal 'my runs.sqlite' --workdir {tmp_path.resolve()} "
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


def test_the_printed_resume_command_names_the_runs_folders() -> None:
    """A resumed run's places come from the resuming command, so the command printed for a waiting run names
    the work and skill folders it ran in (resumed from elsewhere, it would act in the wrong folder)."""
    from skillc.console import resume_command

    line = resume_command("r1", ".skillc/runs.sqlite", "/w/repo dir", "/skills/notes")
    assert line == "skillc run --resume r1 --workdir '/w/repo dir' --skill-dir /skills/notes --answer \"…\""
    assert resume_command("r1", "j.sqlite") == 'skillc run --resume r1 --journal j.sqlite --answer "…"'
