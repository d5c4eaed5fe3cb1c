"""examples/release-notes end to end: a scripted model, the real tool kit, a real git repository.

The bundled script runs from the skill folder (`skill_dir`) against a repository the test makes (commits
`feat: …`, `fix: …`, a tag); the house style is read from `references/`; the approval is answered by prepared
answers, by the API's callback, and as an interrupt through the real command line (`skillc run` exits 6, then
`skillc run --resume RUN --answer approve`). The user's cancel writes nothing (partial); outside a git repository
the script fails and the run ends `failed` with nothing written.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from skillc import api
from skillc.runtime.record import RunTrace, load_run
from tests.conftest import EXAMPLES
from tests.harness.cases import GIT_ENV
from tests.harness.cases import git as run_git

FOLDER = EXAMPLES / "release-notes"
MACHINE = FOLDER / "release-notes.skm"
NOTES = """## v1.1.0

### Features

- Add export to CSV

### Fixes

- Handle empty input

### Other

- Update the installation guide
"""
REVISED = NOTES.replace("- Add export to CSV", "- Add export to CSV (comma-separated)")
SCRIPT = {"outputs": {"draft": [{"notes": NOTES}], "redraft": [{"notes": REVISED}]}}


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # `python` in the skill's command is this interpreter (a system may have only `python3`); git never looks
    # above the test's folder for a repository, nor at the user's configuration.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name, value in GIT_ENV.items():
        monkeypatch.setenv(name, value)


def make_repo(root: Path) -> Path:
    """A repository with a tagged first commit and three commits after the tag."""
    repo = root / "repo"
    repo.mkdir()

    def git(*args: str) -> None:
        run_git(repo, *args)

    git("init", "-q")
    for name, subject in [("a", "chore: initial import"), ("b", "feat: add export to CSV"),
                          ("c", "fix: handle empty input"), ("d", "Update the installation guide")]:
        (repo / name).write_text(subject + "\n")
        git("add", name)
        git("commit", "-q", "-m", subject)
        if name == "a":
            git("tag", "v1.0.0")
    return repo


def _config(tmp_path: Path, workdir: Path, **changes) -> api.RunConfig:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    return attrs.evolve(api.RunConfig(machine=str(MACHINE), executor=f"scripted:{script}", workdir=str(workdir),
                                      journal=str(tmp_path / "runs.sqlite"), trace=str(tmp_path / "run.jsonl")),
                        **changes)


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if ".git" not in p.parts)


def _assert_acted_for_real(trace: RunTrace, repo: Path) -> None:
    """The script ran from the skill folder in the work folder, the style was read from the skill folder, and
    the notes were written and read back: every one an effect in the trace."""
    steps = {s.state: s for s in trace.steps}
    assert trace.header.extra.get("skillc.skill_dir") == str(FOLDER.resolve())
    assert trace.header.workdir == str(repo.resolve())
    collect = steps["collect"]
    assert collect.tool_call is not None and collect.tool_call.effects is not None
    assert str(FOLDER.resolve() / "scripts" / "collect_changes.py") in collect.tool_call.args["command"]
    assert collect.tool_call.effects[0]["exit_code"] == 0 and collect.tool_call.effects[0]["cwd"] == "."
    out = collect.output or {}
    assert out["changes"].splitlines() == ["Changes since v1.0.0:", "- [Features] add export to CSV",
                                           "- [Fixes] handle empty input", "- [Other] Update the installation guide"]
    style = steps["read_style"].tool_call
    assert style is not None and style.effects is not None
    assert style.effects[0]["path"] == str(FOLDER.resolve() / "references" / "style.md")
    assert "House style" in (steps["read_style"].output or {})["style"]
    write = steps["write_notes"].tool_call
    assert write is not None and write.effects is not None
    assert write.effects[0]["path"] == "RELEASE_NOTES.md" and write.effects[0]["created"] is True
    assert trace.footer is not None and trace.footer.outcome == "success"
    assert trace.footer.evidence['file("RELEASE_NOTES.md") == notes'] is True
    # The order the skill asks for: collect, read the style, draft, approve, write, read back.
    assert list(dict.fromkeys(s for s in trace.states if s not in ("ask_change", "redraft"))) == \
        ["collect", "read_style", "draft", "approve", "write_notes", "read_back"]


def test_prepared_answer_approves_and_the_notes_are_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    report = api.run(_config(tmp_path, repo, answers=["approve"]))
    result = report.result
    assert result is not None, (report.usage, report.error, report.diagnostics)
    assert (result.outcome, result.terminal) == ("success", "done"), result.error
    assert (repo / "RELEASE_NOTES.md").read_text(encoding="utf-8") == NOTES
    assert all(v.holds for v in result.predicates) and len(result.predicates) == 2
    trace = load_run(tmp_path / "run.jsonl")
    _assert_acted_for_real(trace, repo)
    approve = next(s for s in trace.steps if s.state == "approve")
    assert approve.answered_by == "prepared" and approve.tool_result == {"answer": "approve"}
    assert approve.tool_call is not None and approve.tool_call.args["options"] == ["approve", "revise", "cancel"]
    assert NOTES in approve.tool_call.args["question"]  # the user saw the draft


def test_a_callback_asks_for_a_revision_then_approves(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    asked: list[tuple[str, tuple[str, ...]]] = []
    replies = iter(["revise", "Say that the export is comma-separated.", "approve"])

    def answer(question: str) -> str:
        asked.append((question, tuple(getattr(question, "options", None) or ())))
        return next(replies)

    report = api.run(_config(tmp_path, repo, answer=answer))
    assert report.result is not None and report.result.outcome == "success", report.result
    assert (repo / "RELEASE_NOTES.md").read_text(encoding="utf-8") == REVISED
    assert [options for _, options in asked] == [("approve", "revise", "cancel"), (),
                                                 ("approve", "revise", "cancel")]
    assert NOTES in asked[0][0] and REVISED in asked[2][0]
    trace = load_run(tmp_path / "run.jsonl")
    _assert_acted_for_real(trace, repo)
    assert trace.states.count("approve") == 2 and "redraft" in trace.states
    assert {s.answered_by for s in trace.steps if s.state in ("approve", "ask_change")} == {"callback"}
    redraft = next(s for s in trace.steps if s.state == "redraft")
    assert (redraft.inputs or {})["feedback"] == "Say that the export is comma-separated."


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True, cwd=cwd,
                          stdin=subprocess.DEVNULL, env=os.environ.copy(), timeout=120)


def test_the_command_line_waits_for_approval_and_resumes_once(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    journal, trace_file = tmp_path / "runs.sqlite", tmp_path / "run.jsonl"
    first = _cli("run", str(MACHINE), "--executor", f"scripted:{script}", "--workdir", str(repo),
                 "--journal", str(journal), "--trace", str(trace_file), cwd=repo)
    assert first.returncode == 6, first.stdout + first.stderr
    assert "waiting for the user (step 3, `approve`): Approve these release notes?" in first.stdout
    assert 'answer one of: "approve", "revise", "cancel"' in first.stdout
    match = re.search(r"to answer: skillc run --resume ([0-9a-f]+) ", first.stdout)
    assert match, first.stdout
    run_id = match.group(1)
    assert not (repo / "RELEASE_NOTES.md").exists()  # nothing is written before the user approves
    waiting = load_run(trace_file)
    assert waiting.footer is None and waiting.states == ("collect", "read_style", "draft")

    done = _cli("run", "--resume", run_id, "--journal", str(journal), "--answer", "approve", cwd=repo)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "outcome: success (terminal `done`)" in done.stdout
    assert (repo / "RELEASE_NOTES.md").read_text(encoding="utf-8") == NOTES
    trace = load_run(trace_file)
    _assert_acted_for_real(trace, repo)
    approve = next(s for s in trace.steps if s.state == "approve")
    assert approve.answered_by == "user" and approve.tool_result == {"answer": "approve"}
    assert trace.states.count("collect") == 1  # the committed tool steps were not run again

    again = _cli("run", "--resume", run_id, "--journal", str(journal), "--answer", "approve", cwd=repo)
    assert again.returncode == 2 and "SKM501" in again.stderr


def test_the_user_cancels_and_nothing_is_written(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    before = _files(repo)
    report = api.run(_config(tmp_path, repo, answers=["cancel"]))
    assert report.result is not None
    assert (report.result.outcome, report.result.terminal) == ("partial", "cancelled")
    assert not (repo / "RELEASE_NOTES.md").exists() and _files(repo) == before
    trace = load_run(tmp_path / "run.jsonl")
    assert "write_notes" not in trace.states
    assert not [e for s in trace.steps if s.tool_call and s.tool_call.effects
                for e in s.tool_call.effects if e["op"] in ("write", "edit")]


def test_outside_a_git_repository_the_script_fails_and_nothing_is_written(tmp_path: Path) -> None:
    work = tmp_path / "not-a-repo"
    work.mkdir()
    report = api.run(_config(tmp_path, work, answers=["approve"]))
    result = report.result
    assert result is not None
    assert (result.outcome, result.terminal) == ("failed", "failed")
    assert "not a git repository" in result.evidence["collect_error"]
    assert list(work.iterdir()) == []
    trace = load_run(tmp_path / "run.jsonl")
    assert trace.states == ("collect",)  # no style read, no draft, no question
    collect = trace.steps[0]
    assert collect.tool_call is not None and collect.tool_call.effects is not None
    assert collect.tool_call.effects[0]["exit_code"] == 1
