"""The offline compiler on the patterns real skills use, each on a small synthetic document.

Examples are knowledge; placeholders are typed holes; menus are choices; "stop and ask" waits for the
user; flow diagrams and "at any point … return to phase N" are edges; checklists and RED/GREEN headings
are steps; bundled scripts run from the skill's folder; what cannot be encoded ends `review_required`
(and `--strict` refuses it); the report says what it proved and no more.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillc.check.graph import reachable, successors
from skillc.frontends.markdown import Options, build
from skillc.frontends.markdown.commands import cut
from skillc.frontends.markdown.diagram import parse_diagram
from skillc.frontends.markdown.phrases import named_script, written_file
from skillc.frontends.markdown.pipeline import BuildResult
from skillc.ir.machine import Machine
from skillc.ir.printexpr import show_expr
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.scripted import ScriptedExecutor
from tests.conftest import codes


def built(tmp_path: Path, text: str, scripts: tuple[str, ...] = (), strict: bool = False) -> BuildResult:
    """Build a skill folder holding `text` as SKILL.md (and empty bundled scripts)."""
    folder = tmp_path / "skill"
    folder.mkdir(exist_ok=True)
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    for s in scripts:
        (folder / s).parent.mkdir(parents=True, exist_ok=True)
        (folder / s).write_text("print('hi')\n", encoding="utf-8")
    return build(folder, output=tmp_path / "skill.skm", options=Options(strict=strict))


def machine(tmp_path: Path, text: str, scripts: tuple[str, ...] = ()) -> Machine:
    result = built(tmp_path, text, scripts)
    assert result.ok and result.machine is not None, codes(result.diagnostics)
    return result.machine


def at(m: Machine, line: int) -> list[str]:
    """The states whose `from` range holds a line."""
    return [name for name, s in m.states.items() if s.provenance is not None
            and s.provenance.start <= line <= s.provenance.end]


def calls(m: Machine, tool: str) -> list[str]:
    return [name for name, s in m.states.items() if s.call is not None and s.call.tool == tool]


# ---------------------------------------------------------------- examples are knowledge

def test_code_under_an_examples_heading_and_after_for_example_is_not_run(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Deploy

## Procedure

1. Build the image with `docker build -t app .`.
2. Check the status; for example, run `docker ps` to see it.

## Examples

```bash
docker run -d app
```
""")
    commands = [m.states[s].doc or "" for s in calls(m, "bash")]
    assert len(calls(m, "bash")) == 1, commands
    assert not any(s.startswith("docker_run") for s in m.states), "an example fence is no step"



def test_a_fence_of_options_alone_shows_arguments_and_is_not_run(tmp_path: Path) -> None:
    """eas-simulator's `--name "…"  # why` lines had become a step that bash refuses (`--name: invalid option`)."""
    m = machine(tmp_path, """# Sessions

## Procedure

1. Start the session with `eas simulator:start`.
2. Name the session for a person reading the list later:

   ```bash
   --name "Checkout flow screenshots"     # what you did
   --name "Login repro for issue 412"     # why it exists
   ```
""")
    assert len(calls(m, "bash")) == 1, calls(m, "bash")  # the start; the options are no command
    assert not any("--name" in str(m.states[s].call) for s in calls(m, "bash"))
    assert any("Checkout flow screenshots" in (s.prompt or "") + (s.doc or "") for s in m.states.values())


def test_the_items_of_a_dont_list_stay_prohibitions(tmp_path: Path) -> None:
    """n8n's "### ❌ Don't" items ("Deploy without testing") had become constraints that read as instructions."""
    m = machine(tmp_path, """# Build a workflow

## Procedure

1. Design the workflow.
2. Deploy the workflow.

## Best Practices

### ❌ Don't

- Deploy without testing
- Hardcoded credentials in parameters

## Common Mistakes

- Trusting that you remember the rules
""")
    prompts = "\n".join(s.prompt or "" for s in m.states.values())
    items = ("Deploy without testing", "Hardcoded credentials in parameters", "Trusting that you remember the rules")
    for item in items:
        assert f"Avoid: {item}" in prompts
        assert f"- {item}" not in prompts, "an item said without its heading's word reads as an instruction"

def test_commands_with_sample_names_are_examples(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Test

## Procedure

1. Run the focused tests with `pytest tests/path/to/test_file.py -v`.
2. Run all tests with `pytest -q`.
""")
    assert len(calls(m, "bash")) == 1


def test_an_example_workflow_section_is_knowledge(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix tests

## Procedure

1. Run `make test` to find the failures.
2. Fix each failure.

## Example Workflow

1. Run `make test` and see 15 failures.
2. Fix the import errors first.
""")
    assert all(s.provenance is None or s.provenance.start < 9 for s in m.states.values() if not s.is_terminal)


# ---------------------------------------------------------------- placeholders are typed holes

def test_placeholders_are_holes_filled_by_a_model_and_quoted(tmp_path: Path) -> None:
    result = built(tmp_path, """# Merge

## Procedure

1. Merge the branch:

   ```bash
   git merge <feature-branch>
   ```
""")
    assert result.ok and result.text is not None and result.machine is not None, codes(result.diagnostics)
    assert 'call bash(command: "git merge " ++ quote(feature_branch))' in result.text
    m = result.machine
    fill = [s for s in m.states.values() if s.kind == "model" and "feature_branch" in s.writes]
    assert fill and type(m.variables["feature_branch"].type).__name__ == "StrT"


def test_a_hole_quoting_cannot_make_safe_is_the_users_to_give(tmp_path: Path) -> None:
    # The program a command runs, and a here-document's body: `quote()` of a model's text is not enough there
    # (SKM511), so the offline draft asks the user for the value (an input) and still checks clean.
    result = built(tmp_path, """# Ship

## Procedure

1. Run the tool directly:

   ```bash
   <burp-java> -jar burp.jar --project-file=x.burp
   ```

2. Update the PR body:

   ```bash
   gh pr edit 12 --body "$(cat <<'EOF'
   <new-body>
   EOF
   )"
   ```

3. Merge the branch:

   ```bash
   git merge <feature-branch>
   ```
""")
    assert result.ok and result.text is not None and result.machine is not None, codes(result.diagnostics)
    m = result.machine
    inputs = {v.name for v in m.variables.values() if v.is_input}
    assert {"burp_java", "new_body"} <= inputs, inputs
    assert "feature_branch" not in inputs  # a plain argument is still a model's, quoted
    assert not any({"burp_java", "new_body"} & set(s.writes) for s in m.states.values())
    assert "# Given by the user: the command of" in result.text and "as the program the command runs" in result.text


def test_sample_lists_tables_and_quoted_output_are_knowledge(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Review

## Procedure

1. Check the permissions.
2. Rate the risk.

Example assessments:
- `Read Grep` - Low risk, read-only analysis skill
- `Read Bash` - Medium risk, needs justification

3. Display results as a markdown table with full URLs:

| # | Title | URL |
|---|-------|-----|
| 1 | feat: add a broker restart | https://example.org/pull/1 |

4. When listing skills, output approximately as follows:
\"\"\"
Skills from {repo}:
1. skill-1
2. skill-2 (already installed)
\"\"\"
""")
    assert {s.provenance.start for s in m.states.values() if s.provenance is not None} == {5, 6, 12, 18}
    prompts = "\n".join(s.prompt or "" for s in m.states.values())
    assert "Low risk, read-only analysis skill" in prompts and "skill-2 (already installed)" in prompts


@pytest.mark.parametrize("command, parts", [
    ("gh pr view {number}", ("gh pr view ", ("quote", "number"))),
    ("gh run view $RUN_ID --log", ("gh run view ", ("quote", "run_id"), " --log")),
    ("open [process]-flowchart.html", ("open ", ("quote", "process"), "-flowchart.html")),
    ('gh api "/repos/<owner>/x"', ('gh api "/repos/"', ("quote", "owner"), '"/x"')),
    ("echo $HOME; X=1; echo $X", ("echo $HOME; X=1; echo $X",)),
    ("awk '{print $1}' f | grep [a-z]", ("awk '{print $1}' f | grep [a-z]",)),
    ("echo $ARGUMENTS", ("echo ", ("quote", "task"))),
    ("python3 insert.py a.py 50 [--backup]", ("python3 insert.py a.py 50",)),  # a usage line's optional argument
    ("uv run fetch.py [--pr NUMBER] --json", ("uv run fetch.py --json",)),
    ("if [ -f x ]; then echo '[--keep]'; fi", ("if [ -f x ]; then echo '[--keep]'; fi",)),
])
def test_cut_finds_holes_and_leaves_shell_alone(command: str, parts: tuple[object, ...]) -> None:
    assert cut(command).parts == parts


# ---------------------------------------------------------------- bundled scripts

def test_bundled_scripts_run_from_the_skill_folder(tmp_path: Path) -> None:
    result = built(tmp_path, """# Comments

## 1) Fetch

- Run scripts/fetch_comments.py which prints every comment.

## 2) Report

- Summarize the comments.
""", scripts=("scripts/fetch_comments.py",))
    assert result.ok and result.text is not None, codes(result.diagnostics)
    assert 'quote(skill_dir ++ "/scripts/fetch_comments.py")' in result.text
    assert "python3 " in result.text


def test_a_script_after_a_skill_dir_placeholder_runs_from_skill_dir(tmp_path: Path) -> None:
    assert cut("node <skill-dir>/scripts/fetch.js <url>").parts == (
        "node ", ("path", "scripts/fetch.js"), " ", ("quote", "url"))
    assert cut("cd <skill-directory>").parts == ("cd ", ("path", ""))
    # A skill's path as an argument is another skill's (the one to install or scan), not this one's folder.
    assert cut("install.py --path <path/to/skill>").parts == ("install.py --path ", ("quote", "path_skill"))
    assert cut("scan.py <path-to-skill>").parts == ("scan.py ", ("quote", "path_skill"))
    assert cut("uv run scripts/scan.py <skill-directory>", frozenset({"scripts/scan.py"})).parts == (
        "uv run ", ("path", "scripts/scan.py"), " ", ("quote", "skill_directory")), "a bundled script's argument"


def test_sample_invocations_of_one_program_run_the_first_with_its_sample_path_a_hole(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix

## Procedure

1. Verify the fix.
   - Run the tests of this group with markers or file patterns:
     ```bash
     uv run pytest tests/path/to/test_file.py -v
     uv run pytest -k "pattern" -v
     ```
""")
    [run] = calls(m, "bash")
    assert show_expr(dict(m.states[run].call.args)["command"]) == '"uv run pytest " ++ quote(test_file) ++ " -v"'


def test_a_failure_said_in_other_words_is_the_commands_failure(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix CI

## Workflow

1. Verify gh authentication.
   - Run `gh auth status` in the repo.
   - If unauthenticated, ask the user to log in before proceeding.
2. Resolve the PR.
""")
    [check] = calls(m, "bash")
    [ask] = calls(m, "ask_user")
    failing = [e for e in m.states[check].edges if e.guard is not None and "!= 0" in show_expr(e.guard)]
    assert [e.target for e in failing] == [ask], "an unauthenticated `gh` exits non-zero: that edge asks the user"


def test_a_state_word_after_a_command_that_answers_in_json_is_read_from_its_output(tmp_path: Path) -> None:
    doc = """# Cloud sim

## Workflow

1. Check availability:
   ```bash
   simctl availability --json
   ```
   If it's not available, tell the user the feature is not enabled on their account.
2. Start a session with `simctl start`.
"""
    m = machine(tmp_path, doc)
    check = next(n for n in calls(m, "bash") if "availability" in show_expr(m.states[n].call.args[0][1]))
    assert not any(e.guard is not None and "!= 0" in show_expr(e.guard) for e in m.states[check].edges), \
        "`--json` prints `available: false` and exits 0: its exit status does not say it"
    [judge] = [t for t in successors(m)[check] if m.states[t].kind == "judge"]
    assert f"{check}_output" in m.states[judge].reads
    plain = machine(tmp_path, doc.replace(" --json", ""))
    check = next(n for n in calls(plain, "bash") if "availability" in show_expr(plain.states[n].call.args[0][1]))
    assert any(e.guard is not None and "!= 0" in show_expr(e.guard) for e in plain.states[check].edges)


# ---------------------------------------------------------------- menus

MENU = """# Finish

## Procedure

1. Run the tests with `pytest -q`.
2. Present the options to the user:
   1. **Merge** - merge back to main locally
   2. **Push** - push and open a pull request
   3. **Keep** - keep the branch as it is
   4. **Discard** - delete the branch
3. Report what was done.
"""


NOTES = """# Project notes

Summarise a repository for newcomers.

## Steps

1. Survey the repository layout and the main modules.
2. Write `NOTES.md` with a summary of each module.
3. Tell the user where the notes are.
"""


def test_a_step_that_writes_a_named_file_saves_it_and_success_requires_the_write(tmp_path: Path) -> None:
    m = machine(tmp_path, NOTES)
    compose, save = m.states["write_notes_md"], m.states["save_notes_md"]
    assert compose.kind == "model" and "Compose the content of `NOTES.md`" in (compose.prompt or "")
    assert save.call is not None and save.call.tool == "write" and save.reads == ("write_notes_md_content",)
    assert [e.target for e in compose.edges] == ["save_notes_md"] and save.provenance == compose.provenance
    assert "save_notes_md_sha256" in m.states["done"].requires
    assert [show_expr(p) for p in m.states["done"].predicates] == ['exists("NOTES.md")']  # and the file is still there
    # run: the file is the step's effect, with the content the model composed
    work = tmp_path / "run"
    work.mkdir()
    outputs = {"survey_repository_layout": [{"survey_repository_layout_result": "src/ and tests/"}],
               "write_notes_md": [{"write_notes_md_content": "# Notes\n\n- src: the code\n"}],
               "tell_user_notes": [{"tell_user_notes_result": "See NOTES.md."}]}
    run = Interpreter(m, ScriptedExecutor({"outputs": outputs, "tools": {}}), ToolBox.default(cwd=str(work)),
                      RunOptions(retries=0, workdir=str(work))).run({"task": "notes for newcomers"})
    assert (run.outcome, run.terminal) == ("success", "done")
    assert (work / "NOTES.md").read_text(encoding="utf-8") == "# Notes\n\n- src: the code\n"


@pytest.mark.parametrize(("front", "step", "writes"), [
    ("", "Write `NOTES.md` with a summary of each module.", True),
    ("allowed-tools: Read, Write\n", "Write `NOTES.md` with a summary of each module.", True),
    ("allowed-tools: Read, Write(docs/**)\n", "Write `docs/NOTES.md` with a summary of each module.", True),
    ("allowed-tools: Read, Write(docs/**)\n", "Write `NOTES.md` with a summary of each module.", False),
    ("allowed-tools: Read\n", "Write `NOTES.md` with a summary of each module.", False),
    ("", "Write `<topic>.md` with a summary of each module.", True),
    ("allowed-tools: Read, Write(docs/**)\n", "Write `<topic>.md` with a summary of each module.", False),
    ("", "Summarise each module, for example in NOTES.md.", False),
])
def test_a_file_is_written_only_where_the_skill_names_it_and_may_write_it(tmp_path: Path, front: str, step: str,
                                                                         writes: bool) -> None:
    text = NOTES.replace("Write `NOTES.md` with a summary of each module.", step)
    if front:
        text = f"---\nname: notes\ndescription: Notes.\n{front}---\n" + text
    m = machine(tmp_path, text)
    assert any(s.call is not None and s.call.tool == "write" for s in m.states.values()) is writes


@pytest.mark.parametrize(("step", "named"), [
    ("Write to `[process]-flowchart.html`", "`[process]-flowchart.html`"),
    ("CHECKPOINT - write state to handoff document", "handoff document"),
])
def test_a_file_the_run_names_is_named_by_a_model_and_written_by_a_tool(tmp_path: Path, step: str,
                                                                       named: str) -> None:
    m = machine(tmp_path, NOTES.replace("Write `NOTES.md` with a summary of each module.", step))
    [save] = calls(m, "write")
    path = show_expr(dict(m.states[save].call.args)["path"])
    namer = next(n for n, s in m.states.items() if path in s.writes)
    assert m.states[namer].kind == "model" and named in m.states[namer].prompt
    assert f"exists({path})" in [show_expr(p) for p in m.states["done"].predicates]  # the file is the effect
    compose = next(n for n, s in m.states.items() if save in successors(m)[n])
    assert path in m.states[compose].reads and [namer] == [n for n in m.states if compose in successors(m)[n]]
    # run: the file is where the model named it, with the content it composed
    work = tmp_path / "run"
    work.mkdir()
    outputs = {"survey_repository_layout": [{"survey_repository_layout_result": "src/"}],
               namer: [{path: "flow/checkout-flowchart.html"}],
               compose: [{next(iter(m.states[compose].writes)): "<html>checkout</html>\n"}],
               "tell_user_notes": [{"tell_user_notes_result": "Done."}]}
    run = Interpreter(m, ScriptedExecutor({"outputs": outputs, "tools": {}}), ToolBox.default(cwd=str(work)),
                      RunOptions(retries=0, workdir=str(work))).run({"task": "a flowchart of checkout"})
    assert (run.outcome, run.terminal) == ("success", "done")
    assert (work / "flow" / "checkout-flowchart.html").read_text(encoding="utf-8") == "<html>checkout</html>\n"


def test_a_write_step_leaves_the_skills_own_files_and_steps_with_sub_steps_alone(tmp_path: Path) -> None:
    own = machine(tmp_path, NOTES.replace("Write `NOTES.md`", "Write `template.md`"), scripts=("template.md",))
    assert not any(s.call is not None and s.call.tool == "write" for s in own.states.values())
    nested = NOTES.replace("2. Write `NOTES.md` with a summary of each module.\n",
                           "2. Write `NOTES.md`:\n   - List each module.\n"
                           "   - Run `pytest -q` and record the result.\n")
    m = machine(tmp_path, nested)
    assert not any(s.call is not None and s.call.tool == "write" for s in m.states.values())


def test_a_condition_or_an_option_that_writes_a_file_saves_it_on_that_arm_only(tmp_path: Path) -> None:
    m = machine(tmp_path, "---\nname: report\ndescription: Test report.\nallowed-tools: Bash, Write\n---\n"
                          "# Test report\n\n## Steps\n\n1. Run the tests with `pytest -q`.\n"
                          "2. If the tests fail, write `FAILURES.md` with the failing tests and their errors.\n"
                          "3. Optionally, write `SUMMARY.md` with a one-paragraph summary.\n"
                          "4. Tell the user what you found.\n")
    saves = {str(dict(s.call.args)["path"].value): s.name for s in m.states.values()
             if s.call is not None and s.call.tool == "write"}
    assert set(saves) == {"FAILURES.md", "SUMMARY.md"}
    run = next(s for s in m.states.values() if s.call is not None and s.call.tool == "bash")
    failing = [e.target for e in run.edges if e.guard is not None]
    assert [e.target for e in m.states[failing[0]].edges] == [saves["FAILURES.md"]]  # compose, then save
    assert m.states["whether_optionally_write_summary"].kind == "judge"
    # neither file is on every path, so success requires neither
    assert not m.states["done"].predicates and not any("save_" in r for r in m.states["done"].requires)


RELEASE = """# Release check

Check a package before release.

## Steps

1. Read `package.json` to find the version and the scripts.
2. Review `CHANGELOG.md` for an entry for that version.
3. Write `RELEASE.md` with what is missing.
"""


def test_a_step_that_reads_a_work_file_gets_its_content_from_a_read_state(tmp_path: Path) -> None:
    m = machine(tmp_path, RELEASE)
    load, step = m.states["load_package_json"], m.states["read_package_json"]
    assert load.call is not None and load.call.tool == "read" and show_expr(dict(load.call.args)["path"]) == \
        '"package.json"'
    assert [e.target for e in load.edges] == ["read_package_json"] and "load_package_json_content" in step.reads
    assert "is in `load_package_json_content`, read for you" in (step.prompt or "")
    outputs = {"verify_package_release": [{"package_release_verdict": "passed"}],
               "read_package_json": [{"read_package_json_result": "1.2.0"}],
               "review_changelog_md": [{"review_changelog_md_result": "no entry for 1.2.0"}],
               "write_release_md": [{"write_release_md_content": "Missing: a CHANGELOG entry for 1.2.0.\n"}]}

    def run(work: Path):
        return Interpreter(m, ScriptedExecutor({"outputs": outputs, "tools": {}}), ToolBox.default(cwd=str(work)),
                           RunOptions(retries=0, workdir=str(work))).run({"task": "check the release"})

    work = tmp_path / "run"
    work.mkdir()
    (work / "package.json").write_text('{"version": "1.2.0"}', encoding="utf-8")
    (work / "CHANGELOG.md").write_text("# Changelog\n", encoding="utf-8")
    done = run(work)
    assert (done.outcome, done.terminal) == ("success", "done")
    assert (work / "RELEASE.md").read_text(encoding="utf-8") == "Missing: a CHANGELOG entry for 1.2.0.\n"
    # without the file there is nothing to read: the run does not go on as if it had read it
    bare = tmp_path / "bare"
    bare.mkdir()
    assert run(bare).outcome != "success" and not (bare / "RELEASE.md").exists()


@pytest.mark.parametrize(("step", "reads"), [
    ("Read `package.json` to find the version.", True),
    ("Review src/app.py for obvious bugs.", True),
    ("Read `<file>.json` to find the version.", False),
    ("Read the notes, e.g. notes.md.", False),
    ("Summarise `package.json`.", False),
    ("Read the file `package.json` first.", True),
    # the file is not what the verb reads: the step's output, a passing mention, or one that may be missing
    ("Read the repo and produce `package.json`.", False),
    ("Follow existing patterns (check package.json).", False),
    ("Read `package.json` if it exists.", False),
])
def test_which_steps_read_a_work_file(tmp_path: Path, step: str, reads: bool) -> None:
    m = machine(tmp_path, RELEASE.replace("Read `package.json` to find the version and the scripts.", step))
    assert any(s.name.startswith("load_") and s.call is not None and s.call.tool == "read"
               and s.provenance is not None and s.provenance.start == 7 for s in m.states.values()) is reads


def test_a_work_file_is_read_only_where_the_allowed_tools_let_it(tmp_path: Path) -> None:
    front = "---\nname: release\ndescription: Release check.\nallowed-tools: Read(docs/**), Write\n---\n"
    m = machine(tmp_path, front + RELEASE)
    assert "load_package_json" not in m.states and m.states["read_package_json"].kind == "model"


def test_every_file_saved_on_the_way_is_required_by_success(tmp_path: Path) -> None:
    two = NOTES.replace("3. Tell the user where the notes are.", "3. Write `TODO.md` with the open questions.\n"
                        "4. Tell the user where the notes are.")
    m = machine(tmp_path, two)
    assert {"save_notes_md_sha256", "save_todo_md_sha256"} <= set(m.states["done"].requires)


@pytest.mark.parametrize(("sentence", "path"), [
    ("Write AGENTS.md to the repo root.", "AGENTS.md"),
    ("Then save the review to review.md.", "review.md"),
    ("Produce `.claude/pipeline/project-doc.md` using the following structure", ".claude/pipeline/project-doc.md"),
    ("Write to [process]-flowchart.html", None),
    ("Save the report to <name>.md", None),
    ("Save as report.md.bak", None),
    ("Save to ~/notes.md", None),
    ("Read NOTES.md and summarise it.", None),
    ("Write the summary, e.g. out.md", None),
    # a file the sentence reads or is about is not the one it writes
    ("Save the summary of README.md to SUMMARY.md.", "SUMMARY.md"),
    ("Export the rows of data.csv to report.html.", "report.html"),
    ("Generate the report following template.md.", None),
    ("Generate the changelog from package.json.", None),
    ("Write tests for parser.md", None),
    ("Create a pull request that updates CHANGELOG.md.", None),
    ("Output the contents of error.log.", None),
    # nor one it says not to write, one outside the work folder, or one of two with no destination
    ("Write the result to stdout, not to result.json.", None),
    ("Write a summary; do not touch NOTES.md.", None),
    ("Write ../x.md", None),
    ("Write C:\\temp\\x.md", None),
    ("Write NOTES.md and TODO.md.", None),
    ("Write ./NOTES.md", "NOTES.md"),
])
def test_the_file_a_step_writes(sentence: str, path: str | None) -> None:
    assert written_file(sentence) == path


def test_a_menu_is_one_user_choice_with_a_branch_per_option(tmp_path: Path) -> None:
    m = machine(tmp_path, MENU)
    asks = calls(m, "ask_user")
    assert len(asks) == 1
    ask = m.states[asks[0]]
    targets = {e.target for e in ask.edges}
    assert len(targets) == 4, "one branch per option, never a chain through all of them"
    succ = successors(m)
    for t in targets:  # no option leads into another option
        assert not (reachable(succ, [t]) - {t}) & (targets - {t})


def test_a_menu_the_task_decides_is_a_judge(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Installer

Use the helper scripts based on the task:
- List the curated skills when the user asks what is available.
- Install from the curated list when the user names a skill.
- Install from another repo when the user gives a path.
""")
    judges = [s for s in m.states.values() if s.kind == "judge"]
    assert len(judges) == 1 and len({e.target for e in judges[0].edges}) == 3
    assert m.start == judges[0].name, "the run opens with the choice, not with its first option"


def test_options_run_the_bundled_scripts_they_name_by_their_words(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Installer

Use the helper scripts based on the task:
- List curated skills when the user asks what is available.
- Install from another repo when the user provides a GitHub repo/path.

## Scripts

- `scripts/list-curated-skills.py`
- `scripts/install-skill-from-github.py --repo <owner>/<repo> --path <path/to/skill> [<path/to/skill> ...]`
""", scripts=("scripts/list-curated-skills.py", "scripts/install-skill-from-github.py"))
    commands = {name: show_expr(dict(m.states[name].call.args)["command"]) for name in calls(m, "bash")}
    assert len(commands) == 2, commands
    listing = next(c for c in commands.values() if "list-curated-skills.py" in c)
    install = next(c for c in commands.values() if "install-skill-from-github.py" in c)
    assert listing.startswith('"python3 "'), "run with its interpreter, as the folder holds it"
    assert "quote(owner)" in install and "quote(path_skill)" in install, "the shown usage, its holes filled"
    assert "[<path" not in install, "optional arguments are left out"


@pytest.mark.parametrize("sentence, script", [
    ("List curated skills when the user asks.", "scripts/list-curated-skills.py"),
    ("Install from another repo when the user gives a GitHub path.", "scripts/install-skill-from-github.py"),
    ("Preferred: run the bundled script (handles drift).", None),  # two scripts: which one is not said
    ("phy_export/ # For manual curation", None),  # a listing, not a step
    ("Curated skills are listed first.", None),  # does not open with the script's verb
])
def test_the_script_a_step_names_by_its_words(sentence: str, script: str | None) -> None:
    scripts = frozenset({"scripts/list-curated-skills.py", "scripts/install-skill-from-github.py"})
    assert named_script(sentence, scripts) == script
    assert named_script("Preferred: run the bundled script.", frozenset({"scripts/x.py"})) == "scripts/x.py"


# ---------------------------------------------------------------- stops

def test_stop_and_ask_waits_for_the_user(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Deploy

## Procedure

1. Read the deploy plan.
2. If the plan touches the database, stop and ask the user to confirm.
3. Deploy.
""")
    asks = calls(m, "ask_user")
    assert asks
    assert all(s.outcome != "success" or name == "done" for name, s in m.states.items() if s.is_terminal)
    assert not [name for name, s in m.states.items() if s.is_terminal and name not in ("done", "fallback")]


@pytest.mark.parametrize("arm, outcome", [
    ("stop and report failure", "failed"),
    ("abort", "failed"),
    ("report it and stop", "failed"),
    ("stop", "failed"),
    ("report what is done and stop as partial", "partial"),
])
def test_stop_outcomes_follow_the_text(tmp_path: Path, arm: str, outcome: str) -> None:
    m = machine(tmp_path, f"""# Upload

## Procedure

1. Read the key file.
2. If the key is missing, {arm}.
3. Upload the file.
""")
    ends = {s.outcome for name, s in m.states.items() if s.is_terminal and name not in ("done", "fallback")}
    assert ends == {outcome}


def test_a_plain_stop_on_a_condition_that_is_no_trouble_is_success(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Upload

## Procedure

1. Read the key file.
2. If the file is already uploaded, stop.
3. Upload the file.
""")
    ends = {s.outcome for name, s in m.states.items() if s.is_terminal and name not in ("done", "fallback")}
    assert ends == {"success"}


def test_stop_and_report_if_is_a_condition(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Merge

## Procedure

1. Check each pull request.
2. Stop and report if a pull request is no longer ready.
3. Merge the pull requests.
""")
    assert any(s.kind == "judge" for s in m.states.values())
    assert any(s.outcome == "failed" for name, s in m.states.items() if s.is_terminal and name != "fallback")


# ---------------------------------------------------------------- diagrams, phases, checklists

def test_a_mermaid_loop_becomes_a_counted_edge_back(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Migrate

```mermaid
flowchart TD
    A1[1 · Assess the repo] --> A2[2 · Port a screen]
    A2 -->|more screens| A2
    A2 --> A3[3 · Ship]
```

### 1. Assess the repo

Read the repo and list the screens.

### 2. Port a screen

Port the next screen to native.

### 3. Ship

Publish the app to the stores.
""")
    port = next(n for n in m.states if n.startswith("port"))
    succ = successors(m)
    assert port in reachable(succ, [t for t in succ[port]]), "a loop through the port step"
    judge = next(s for s in m.states.values() if s.kind == "judge")
    assert any(a.op == "+=" for e in judge.edges for a in e.assigns)


def test_a_dot_digraph_decision_routes_between_steps(tmp_path: Path) -> None:
    diagram = parse_diagram("dot", 'digraph {\n"Write test" -> "Test fails?";\n"Test fails?" [shape=diamond];\n'
                                   '"Test fails?" -> "Write code" [label="yes"];\n}\n')
    assert diagram is not None and diagram.nodes["Test fails?"].decision
    assert [(a.source, a.target, a.label) for a in diagram.arrows] == [
        ("Write test", "Test fails?", ""), ("Test fails?", "Write code", "yes")]


def test_at_any_point_return_to_phase_n_is_a_guarded_edge_back(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Debug

## Phase 1: Reproduce

Reproduce the bug with a failing test.

## Phase 2: Fix

Write the smallest fix.

Run the tests again.

At any point, if the bug no longer reproduces, return to Phase 1.
""")
    entry = next(n for n in m.states if n.startswith("reproduce"))
    back = [(name, e) for name, s in m.states.items() for e in s.edges if e.target == entry and e.guard is not None]
    assert back and all(e.assigns for _, e in back), "counted back edges to phase 1"


def test_checklists_of_actions_and_red_green_headings_are_steps(tmp_path: Path) -> None:
    m = machine(tmp_path, """# TDD

## Checklist

- [ ] Write the failing test.
- [ ] Run the test suite.

## Cycle

1. RED - write one failing test
2. GREEN - write the least code that passes
3. REFACTOR - clean up with the tests green
""")
    models = [s for s in m.states.values() if s.kind == "model"]
    assert len(models) >= 5
    assert not [s for s in m.states.values() if s.kind == "judge"], "things to do are steps, not checks"


def test_for_each_list_loops_back_from_move_to_next(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix

## Procedure

For each group (largest first):

1. **Identify root cause**
2. **Implement fix**
3. **Move to next group**
""")
    identify = next(n for n in m.states if n.startswith("identify"))
    judge = at(m, 9)
    assert judge and any(e.target == identify for e in m.states[judge[0]].edges)


def test_a_condition_heading_gates_its_section(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Comments

## 1) Ask the user

- Ask the user which comments to address.

## 2) If the user chooses comments

- Apply fixes for the selected comments.
""")
    judge = next(s for s in m.states.values() if s.kind == "judge")
    assert len(judge.edges) == 2
    apply = next(n for n in m.states if n.startswith("apply"))
    assert any(e.target == apply for e in judge.edges)


def test_a_condition_with_a_fence_runs_the_fence(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Branch

## Workflow

1. Resolve the description:
   - If `$ARGUMENTS` is present, use it
   - Otherwise inspect:
     ```bash
     git diff
     ```
2. Create the branch.
""")
    judge = next(s for s in m.states.values() if s.kind == "judge")
    assert any(m.states[e.target].call is not None for e in judge.edges if e.target in m.states)


# ---------------------------------------------------------------- what cannot be encoded

UNENCODED = """# Clean

## Procedure

1. List the files.

   ```powershell
   Get-ChildItem
   ```

2. Write the report.
"""


def test_an_unencoded_construct_leaves_no_path_to_success_around_it(tmp_path: Path) -> None:
    result = built(tmp_path, UNENCODED)
    assert result.ok, codes(result.diagnostics)
    assert "SKM320" in codes(result.diagnostics)
    m = result.machine
    assert m is not None
    assert m.states["review_required"].outcome == "partial"
    flagged = next(n for n in m.states if n.startswith("list"))
    assert all(a.var.startswith("needs_review") for e in m.states[flagged].edges for a in e.assigns)
    assert "not encoded: 1 construct" in result.rules.render()


def test_strict_refuses_a_build_with_unencoded_constructs(tmp_path: Path) -> None:
    result = built(tmp_path, UNENCODED, strict=True)
    assert not result.ok and result.text is None
    assert "SKM321" in codes(result.diagnostics)


def test_cli_strict_exits_1(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text(UNENCODED, encoding="utf-8")
    out = tmp_path / "x.skm"
    r = subprocess.run([sys.executable, "-m", "skillc", "build", str(tmp_path / "SKILL.md"), "-o", str(out),
                        "--strict"], capture_output=True, text=True, cwd=Path(__file__).resolve().parents[3],
                       timeout=120)
    assert r.returncode == 1 and "SKM321" in r.stdout + r.stderr and not out.exists()


def test_the_report_says_what_it_proved_and_what_it_did_not(tmp_path: Path) -> None:
    result = built(tmp_path, MENU)
    text = result.rules.render()
    assert text.startswith("requirements: ")
    assert "not measured:" in text


# ---------------------------------------------------------------- more shapes of real skills

def test_reading_a_bundled_reference_is_a_read_tool_state_on_skill_dir(tmp_path: Path) -> None:
    folder = tmp_path / "skill" / "references"
    folder.mkdir(parents=True)
    (folder / "notes.md").write_text("# Notes\n", encoding="utf-8")
    result = built(tmp_path, """# Optimize

## Step 1: Load notes

Read `references/notes.md`.

## Step 2: Write

Write the prompt using the notes.
""")
    assert result.ok and result.text is not None, codes(result.diagnostics)
    assert 'call read(path: skill_dir ++ "/references/notes.md")' in result.text


def test_a_workflow_table_numbers_its_steps(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Scan

## Workflow

| Step | Action | Gate |
|------|--------|------|
| 1 | Resolve the output directory | — |
| 2 | Present the plan, get explicit approval | AskUserQuestion |
| 3 | Run the scans | — |
""")
    assert calls(m, "ask_user"), "the gate is the user's approval"
    assert len([s for s in m.states.values() if s.kind == "model"]) >= 2


def test_an_output_format_section_after_the_procedure_is_its_last_step(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Review

## Workflow

### Phase 1: Read

Read the diff.

### Phase 2: Judge

Decide which findings are real.

## Output Format

```markdown
## Findings
- ...
```
""")
    assert at(m, 15), "a state comes from the output format section"


def test_a_lead_with_its_cases_is_one_judge(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Scan

## Procedure

Determine the scan target:

- If the user gives a path, use it directly
- If the user names a skill, look for it under `.agents/skills/`
- If the user says "all", scan every skill

Run the scan.
""")
    judges = [s for s in m.states.values() if s.kind == "judge"]
    assert len(judges) == 1 and len(judges[0].edges) == 4


def test_sibling_sections_that_are_alternatives_are_one_choice(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Guard

## Protocol

### Yellow Zone (40-60 tool calls)

1. CHECKPOINT - summarize progress
2. REDUCE - no exploratory reads

### Red Zone (60+ tool calls)

1. STOP - do not make more tool calls
2. SPLIT - create a handoff
""")
    judge = next(s for s in m.states.values() if s.kind == "judge")
    firsts = {e.target for e in judge.edges}
    assert any(t.startswith("checkpoint") for t in firsts) and any(t.startswith("stop") for t in firsts)


def test_an_arm_that_asks_the_question_after_it(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Reviews

## Step 1: Identify the team

If the user has not specified a team, ask:

> Which GitHub team should I filter by?

## Step 2: Fetch

Run `gh api notifications`.
""")
    asks = calls(m, "ask_user")
    spans = [m.states[a].provenance for a in asks]
    assert any(p is not None and p.start <= 7 <= p.end for p in spans), "the question's lines are the ask's"


def test_a_section_of_guidance_informs_the_state_its_heading_names(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Ensemble

## Procedure

1. Draft three prompts with different strategies.
2. Score the solutions against the rubric.
3. Present the winner.

## Strategies

| Approach | Focus |
|---|---|
| Simplicity | Minimal code, maximum readability |

## Token cost

About four times one attempt.
""")
    assert "Minimal code, maximum readability" in (m.states["draft_three_prompts"].prompt or "")
    assert "About four times" in (m.states["present_winner"].prompt or ""), "a heading naming no state: the nearest"


def test_a_failure_that_is_only_reported_ends_the_run_failed(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Diagram

## Prerequisites

Install the tool:

```bash
uv pip install trailmark
```

If installation fails, report the error to the user.

## Workflow

1. Draw the diagram.
""")
    [install] = calls(m, "bash")
    [edge] = [e for e in m.states[install].edges if e.guard is not None]
    succ = successors(m)
    outcomes = {t.name: t.outcome for t in m.terminals()}
    ends = {t for t in reachable(succ, [edge.target]) if t in outcomes}
    assert ends and all(outcomes[t] == "failed" for t in ends), ends


def test_a_list_of_cases_with_arrows_is_one_choice(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Plan

## Workflow

### 1) Read the spec
- Fetch the spec page.

### 2) Choose plan depth
- Simple change → use the quick plan template.
- Multi-phase feature → use the standard plan template.
- Create the plan page.
""")
    judges = [s for s in m.states.values() if s.kind == "judge"]
    assert len(judges) == 1, "one choice between the cases, not a yes/no question a case"
    targets = [e.target for e in judges[0].edges]
    assert len(targets) == 3 and "create_plan_page" in targets, targets  # none of them: go on


def test_sections_a_heading_sets_against_each_other_are_one_choice(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Verify

## Procedure

### Step 1: Restate the claim

### Route: Standard vs Deep Verification

#### Standard Verification

Follow the linear checklist.

#### Deep Verification

Review each phase as a task.
""")
    judges = [s for s in m.states.values() if s.kind == "judge"]
    assert len(judges) == 1 and {"follow_linear_checklist", "review_phase_task"} <= {e.target for e in judges[0].edges}
    succ = successors(m)
    assert "review_phase_task" not in reachable(succ, ["follow_linear_checklist"]), "never both paths"


def test_a_command_run_to_find_failures_goes_on_when_it_finds_them(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix tests

## Steps

### 1. Initial test run

Run `make test` to identify all failing tests.

### 2. Group the failures

Group similar failures by error type.
""")
    [run] = calls(m, "bash")
    assert all(e.target != "fallback" for e in m.states[run].edges), "failing tests are the finding, not a failure"


def test_a_bullet_that_only_shows_a_steps_command_is_its_command(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Notion

## Workflow

1. Add the Notion MCP:
   - `codex mcp add notion --url https://mcp.notion.com/mcp`
2. Log in with OAuth:
   - `codex mcp login notion`
3. Search the workspace.
""")
    commands = sorted(show_expr(dict(m.states[s].call.args)["command"]) for s in calls(m, "bash"))
    assert commands == ['"codex mcp add notion --url https://mcp.notion.com/mcp"', '"codex mcp login notion"']


def test_a_step_reading_a_file_it_does_not_name_finds_its_path_then_reads_it(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Guard

## Context anchoring

1. RE-READ the project's rules file immediately
2. Recite the critical rules.
""")
    [read] = calls(m, "read")
    path = show_expr(dict(m.states[read].call.args)["path"])
    finder = next(s for s in m.states.values() if s.kind == "model" and path in s.writes)
    assert finder.edges[0].target == read, "a model gives the path, the tool reads the file"
    doer = m.states[read].edges[0].target
    assert m.states[doer].kind == "model" and any(v in m.states[doer].reads for v in m.states[read].writes)


def test_a_list_goes_where_the_sentence_introducing_it_went(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Scan

## Procedure

1. Evaluate the permissions of the skill.
2. Analyse the behaviour of the scripts: reads, greps and network calls.

## Permission analysis

Example assessments for the permissions:
- `Read Grep Glob` - Low risk, read-only analysis
- `Read Grep Glob Bash` - Medium risk, needs Bash justification
""")
    lead = next(s for s in m.states.values() if "Example assessments" in (s.prompt or ""))
    assert "Low risk, read-only analysis" in (lead.prompt or "") and "Medium risk" in (lead.prompt or "")


def test_a_section_that_hands_the_turn_back_ends_the_run_partial(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Notion

## Workflow

### 0) If the Notion MCP is not connected, set it up:
1. Add the Notion MCP:
   - `codex mcp add notion --url https://mcp.notion.com/mcp`

After login, the user will have to restart codex. Finish your answer and tell them so.

### 1) Find the spec
Search the workspace for the spec.
""")
    outcomes = {t.name: t.outcome for t in m.terminals()}
    [add] = calls(m, "bash")
    ends = {t for t in reachable(successors(m), [add]) if t in outcomes}
    assert ends and all(outcomes[t] != "success" for t in ends), ends
    assert any(outcomes[t] == "partial" for t in ends)


def test_a_check_on_the_agents_own_thinking_is_a_prohibition_not_an_end(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Verify

## Rationalizations to reject

If you catch yourself thinking any of these, STOP.

## Procedure

1. Restate the claim.
2. Trace the data flow.
""")
    assert {t.name for t in m.terminals()} - {"fallback"} == {"done"}, "no run ends on a thought"
    assert all("If you catch yourself thinking any of these, STOP." in (s.prompt or "")
               for s in m.states.values() if s.kind == "model")


def test_a_script_documented_to_exit_non_zero_on_findings_goes_on(tmp_path: Path) -> None:
    m = machine(tmp_path, """# CI

## Workflow

1. Run scripts/inspect.py to fetch the failing checks.
2. Summarise the failures.

## Bundled resources

### scripts/inspect.py

Fetches failing checks. Exits non-zero when failures remain so it can be used in automation.
""", scripts=("scripts/inspect.py",))
    [run] = calls(m, "bash")
    assert all(e.target != "fallback" for e in m.states[run].edges), "its non-zero exit is what it found"


def test_a_question_asking_for_approval_gates_the_run_on_the_answer(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix CI

## Workflow

1. Draft a plan and request approval.
2. Apply the plan.
""")
    [ask] = calls(m, "ask_user")
    [judge] = [s for s in m.states.values() if s.kind == "judge"]
    assert m.states[ask].edges[0].target == judge.name and any(v in judge.reads for v in m.states[ask].writes)
    outcomes = {t.name: t.outcome for t in m.terminals()}
    targets = {e.target for e in judge.edges}
    assert "apply_plan" in targets and any(outcomes.get(t) == "partial" for t in targets), targets
    assert not any(s.kind == "judge" for s in machine(tmp_path, """# Ask

## Workflow

1. Ask the user which branch to use.
2. Check out the branch.
""").states.values()), "a question that is not an approval just goes on"


def test_numbered_if_and_otherwise_items_are_one_condition(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Convert

## Decision order

1. **If the conversion tools are available** (`convert_file`) — use them directly. `convert_file` takes a URL.
2. **Otherwise, run the bundled script**:

```bash
scripts/convert.sh <input-file> <target-format>
```
""", scripts=("scripts/convert.sh",))
    [judge] = [s for s in m.states.values() if s.kind == "judge"]
    [run] = calls(m, "bash")
    targets = [e.target for e in judge.edges]
    assert len(targets) == 2 and m.states[targets[0]].kind == "model", "the `If` arm does what the dash says"
    assert run not in reachable(successors(m), [targets[0]]), "the bundled script is the `Otherwise` arm only"


# ---------------------------------------------------------------- definitions, leads and sentences (dev round 8)

def test_a_numbered_list_defining_terms_beside_a_workflow_is_knowledge(tmp_path: Path) -> None:
    doc = """# Flowcharts

## Components

1. **Start/End nodes**: rounded rectangles (green, red)
2. **Process boxes**: rectangles (blue)
3. **Decision diamonds**: diamonds (orange)

## Workflow

1. Break down the process into steps
2. Identify decision points
3. Draw the nodes and connect them with arrows
"""
    m = machine(tmp_path, doc)
    assert not any(at(m, line) for line in (5, 6, 7)), "a term's definition is no step"
    assert m.start in at(m, 11), "the run starts at the workflow"
    assert any("Start/End nodes: rounded rectangles" in (s.prompt or "") for s in m.states.values())
    steps = machine(tmp_path, doc.replace("rounded rectangles (green, red)", "Create the start and end nodes"))
    assert at(steps, 5), "an item whose description is an instruction stays a step"


def test_checks_with_no_work_before_them_check_the_task_done_first(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Helm charts

Guidance for Helm charts.

## Best Practices

1. **Use semantic versioning** for chart and app versions
2. **Validate charts** before packaging
""")
    first = m.states[m.start]
    assert first.kind == "model" and "Carry out the task" in (first.prompt or "")
    judges = [n for n, s in m.states.items() if s.kind == "judge"]
    assert judges and all(reachable(successors(m), [m.start]) >= {j} for j in judges)


def test_a_step_then_if_after_a_semicolon_is_a_step_and_a_condition(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Spec

## Workflow

1. Locate the spec
   - Search first (`notion-search`); if multiple hits, ask the user which to use.
   - Fetch the page and read it.
""")
    [ask] = calls(m, "ask_user")
    search = next(n for n, s in m.states.items() if s.kind == "model" and "Search first" in (s.prompt or ""))
    [judge] = [t for t in successors(m)[search] if m.states[t].kind == "judge"]
    assert ask in successors(m)[judge] and len(successors(m)[judge]) == 2, "asked only on multiple hits"
    remark = machine(tmp_path, "# Sim\n\n## Workflow\n\n1. Start the simulator.\n\n"
                               "Flags may change; if a command fails, `cmd --help` is authoritative.\n")
    assert not [n for n, s in remark.states.items() if s.kind == "judge"], "a remark, not a condition"


def test_checks_a_lead_puts_before_running_go_before_the_run(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Images

## Usage

Use the `scripts/generate.py` script to make images:

```bash
python scripts/generate.py "a sunset"
```

## API key

Before running, check if the user has configured their API key:

1. Look for a `.env` file in the project directory
2. Check for `API_KEY=<key>` in the `.env` file

After the image is made:

3. Upload the image with `scripts/upload.sh`.
""", scripts=("scripts/generate.py", "scripts/upload.sh"))
    [run] = calls(m, "bash")
    upload = next(n for n, s in m.states.items() if "Upload the image" in (s.prompt or ""))
    assert upload in reachable(successors(m), [run]) and run not in reachable(successors(m), [upload]), \
        "the lead moves its own list, not the next one"
    look = next(n for n, s in m.states.items() if "Look for a .env file" in (s.prompt or ""))
    assert m.start == look and run in reachable(successors(m), [look])
    assert look not in reachable(successors(m), [run]), "the key is checked before the script runs, not after"


def test_the_list_after_a_conditions_colon_goes_to_its_action(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Key

## Steps

1. Look for a `.env` file in the project directory
2. If not found, inform the user they need to:
   - Create a `.env` file with `API_KEY=your-key`
   - Or set the environment variable `API_KEY`
3. Run the tool.
""")
    inform = next(n for n, s in m.states.items() if s.kind == "model" and "Inform the user" in (s.prompt or ""))
    judge = next(n for n, s in m.states.items() if s.kind == "judge")
    assert "Create a .env file" in m.states[inform].prompt and "Create a .env file" not in m.states[judge].prompt


def test_address_the_issue_before_retrying_loops_back_to_the_command(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Tool

## Steps

1. Run `make image`.

If the command fails, read the error message and address the issue before retrying.
""")
    [run] = calls(m, "bash")
    fix = next(n for n, s in m.states.items() if s.kind == "model" and "Read the error message" in (s.prompt or ""))
    assert fix in successors(m)[run] and run in successors(m)[fix]
    assert "retrying" not in m.states[fix].prompt
    assert any(v.is_counter for v in m.variables.values()), "the retries are counted"


def test_what_would_be_required_names_a_thing_and_the_step_stays_a_step(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Comments

## 2) Ask the user
- Number all the review threads and provide a short summary of what would be required to apply a fix for it
- Ask the user which numbered comments should be addressed
""")
    [ask] = calls(m, "ask_user")
    number = next(n for n, s in m.states.items() if s.kind == "model" and "Number all" in (s.prompt or ""))
    assert ask in successors(m)[number] and f"{number}_result" in show_expr(m.states[ask].call.args[0][1])


# ---------------------------------------------------------------- cases, gates and shown commands (dev round 9)

def _three_steps(step: str) -> str:
    """A document of three numbered steps, `step` the second."""
    return f"# Work\n\n## Steps\n\n1. Read the request.\n2. {step}\n3. Report back.\n"


@pytest.mark.parametrize(("step", "condition", "skip"), [
    ("Ask the user to clarify if the scope is ambiguous.", "the scope is ambiguous", False),
    ("Resolve the PR number — skip if the user supplied one:", "the user supplied one", True),
    ("Set up the MCP server (if not already configured)", "not already configured", False),
])
def test_a_step_done_in_the_case_its_sentence_ends_with_is_behind_a_judge(tmp_path: Path, step: str,
                                                                         condition: str, skip: bool) -> None:
    m = machine(tmp_path, _three_steps(step))
    [judge] = [n for n, s in m.states.items() if s.kind == "judge"]
    assert condition in m.states[judge].prompt
    done, skipped = (e for e in m.states[judge].edges)
    assert done.guard is not None and show_expr(done.guard).endswith("no" if skip else "yes")
    assert m.states[done.target].provenance.start == 6 and skipped.guard is None
    assert m.states[skipped.target].provenance.start == 7, "the other answer goes on without the step"


@pytest.mark.parametrize("step", [
    "Before reporting, check if the pattern is actually safe:",
    "Determine if the change is breaking.",
    "Use the cache for requests; add the hosting package if the backend moved.",
    "Collect traces, or synthetic tasks if none exist yet.",
    "Install the tool if it fails.",
    "Create a backup branch so you can recover if something goes wrong.",
    "Go back to the start of this step if git stops on another conflict.",
])
def test_a_question_a_clause_or_a_failure_after_if_is_not_a_case_of_the_step(tmp_path: Path, step: str) -> None:
    m = machine(tmp_path, _three_steps(step))
    assert not any(s.kind == "judge" and "Decide whether this holds" in (s.prompt or "") for s in m.states.values())


def test_a_before_lead_with_its_own_command_moves_with_it(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Lookup

## Usage

1. Run the lookup:

```bash
python lookup.py "your question" -o sources/out.md
```

## Check sources first

Before calling `lookup.py`, check if a relevant result already exists:

```bash
ls sources/
```
""")
    listing = next(n for n in calls(m, "bash") if "ls sources" in show_expr(m.states[n].call.args[0][1]))
    lookup = next(n for n in calls(m, "bash") if "lookup.py" in show_expr(m.states[n].call.args[0][1]))
    assert lookup in reachable(successors(m), [listing]) and listing not in reachable(successors(m), [lookup])


def test_the_guidance_of_a_document_of_checks_goes_to_the_work_not_the_checks(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Helm charts

Guidance for Helm charts.

## Best Practices

1. **Use semantic versioning** for chart and app versions
2. **Validate charts** before packaging
3. **Pin dependency versions** explicitly
""")
    work = m.states[m.start]
    assert "semantic versioning" in work.prompt and "Pin dependency versions" in work.prompt
    assert not any("semantic versioning" in (s.prompt or "") for n, s in m.states.items() if s.kind == "judge")


def test_a_lead_saying_when_the_steps_after_it_apply_gates_them(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Upgrade

## Upgrade process

1. Upgrade the packages: `npx expo install --fix`

## Clear caches for the bare workflow

These steps only apply when `ios/` and/or `android/` directories exist in the project:

- Clear the cocoapods cache for iOS: `cd ios && pod install --repo-update`
- Clear the Gradle cache for Android: `cd android && ./gradlew clean`

## Housekeeping workflow

- Review the release notes for the target SDK version.
""")
    [judge] = [n for n, s in m.states.items() if s.kind == "judge"]
    assert "ios/ and/or android/ directories exist" in m.states[judge].prompt
    pods = next(n for n in calls(m, "bash") if "pod install" in show_expr(m.states[n].call.args[0][1]))
    gradle = next(n for n in calls(m, "bash") if "gradlew" in show_expr(m.states[n].call.args[0][1]))
    assert pods in successors(m)[judge] and gradle in successors(m)[pods], "each cache step runs its command"
    review = next(n for n, s in m.states.items() if s.provenance is not None and s.provenance.start == 16)
    assert review in successors(m)[judge], "without the directories the run skips them"


# ---------------------------------------------------------------- hooks, holes, examples and edits (dev round 10)

def test_work_said_after_every_step_of_a_verb_follows_each_of_them(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Installer

## Steps

1. Install from the curated list with `python3 install.py --curated`.
2. Report what was installed.

## Communication

After installing a skill, tell the user: "Restart the app to pick up new skills."
""")
    [install] = calls(m, "bash")
    [tell] = [t for t in successors(m)[install] if m.states[t].kind == "model"]
    assert "Restart the app" in m.states[tell].prompt
    report = next(n for n, s in m.states.items() if "Report what was installed" in (s.prompt or ""))
    assert set(successors(m)[tell]) == {report}


def test_a_placeholder_inside_a_file_name_is_a_hole(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Lookup

## Steps

1. Run the lookup and save it:

```bash
python lookup.py "your query" -o sources/research_<topic>.md
```
""")
    [run] = calls(m, "bash")
    command = show_expr(dict(m.states[run].call.args)["command"])
    assert "<topic>" not in command and 'quote(topic) ++ ".md"' in command


def test_a_fence_after_an_examples_label_is_not_run(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Insert

## Steps

1. Insert the code with the bundled script:

```bash
python3 scripts/line_insert.py <file> <line_number> <code>
```

**Examples:**
```bash
python3 scripts/line_insert.py src/utils.py 50 "def helper(): pass"
```
""", scripts=("scripts/line_insert.py",))
    assert len(calls(m, "bash")) == 1, "the sample invocation is knowledge"


def test_a_step_done_with_the_edit_tool_reads_the_file_and_edits_it(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix

## Steps

1. Find the bug in the code.
2. Implement the fix
   - Use Edit tool for code changes
3. Tell the user what changed.
""")
    [edit] = calls(m, "edit")
    [load] = calls(m, "read")
    args = {k: show_expr(v) for k, v in m.states[edit].call.args}
    fix = next(n for n, s in m.states.items() if set(successors(m)[n]) == {edit})
    assert args["old"] == f"{fix}_old" and args["new"] == f"{fix}_new" and set(successors(m)[load]) == {fix}
    assert args["path"] == show_expr(dict(m.states[load].call.args)["path"]), "it edits the file it read"
    # run: the file changes as the model said, in the work folder
    work = tmp_path / "run"
    (work / "src").mkdir(parents=True)
    (work / "src" / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    namer = next(n for n, s in m.states.items() if set(successors(m)[n]) == {load})
    outputs = {"find_bug_code": [{"find_bug_code_result": "add subtracts"}],
               namer: [{args["path"]: "src/calc.py"}],
               fix: [{f"{fix}_old": "return a - b", f"{fix}_new": "return a + b"}],
               "tell_user_changed": [{"tell_user_changed_result": "add adds now"}]}
    run = Interpreter(m, ScriptedExecutor({"outputs": outputs, "tools": {}}), ToolBox.default(cwd=str(work)),
                      RunOptions(retries=0, workdir=str(work))).run({"task": "fix add"})
    assert (run.outcome, run.terminal) == ("success", "done")
    assert (work / "src" / "calc.py").read_text(encoding="utf-8") == "def add(a, b):\n    return a + b\n"
    denied = machine(tmp_path, "---\nname: fix\ndescription: Fix.\nallowed-tools: Read, Bash\n---\n"
                               + "# Fix\n\n## Steps\n\n1. Implement the fix\n   - Use Edit tool for code changes\n")
    assert not calls(denied, "edit"), "a skill whose allowed tools have no Edit edits nothing"


def test_a_failed_check_after_an_edit_reads_the_file_again_before_the_next_change(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix

## Steps

1. Implement the fix
   - Use Edit tool for code changes

Verify that the public API is unchanged.
""")
    [edit] = calls(m, "edit")
    [load] = calls(m, "read")
    revise = next(n for n in m.states if n.startswith("revise_"))
    assert revise in reachable(successors(m), [edit])
    assert set(successors(m)[revise]) == {load}, "the old text must come from the file as it is now"


# ---------------------------------------------------------------- what these rules leave alone (review of rounds 8–10)

def test_a_semicolon_inside_inline_code_does_not_split_the_step(tmp_path: Path) -> None:
    m = machine(tmp_path, "# Build\n\n## Steps\n\n1. Run `cd build; if [ -f Makefile ]; then make; fi` to build.\n")
    [run] = calls(m, "bash")
    assert "then make" in show_expr(m.states[run].call.args[0][1])
    assert not any(s.kind == "judge" for s in m.states.values())


def test_a_fence_after_a_lead_that_is_not_about_examples_still_runs(tmp_path: Path) -> None:
    m = machine(tmp_path, "# Setup\n\n## Steps\n\n1. Prepare the tools.\n\nInstall the packages, such as numpy "
                          "and pandas:\n\n```bash\npip install numpy pandas\n```\n")
    assert [show_expr(m.states[n].call.args[0][1]) for n in calls(m, "bash")] == ['"pip install numpy pandas"']


def test_only_the_lists_defining_terms_are_knowledge_not_what_stands_between_them(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Diagrams

## Setup

1. **Nodes**: rounded boxes
2. **Edges**: arrows

Install the renderer:

```bash
npm install -g renderer
```

1. **Colours**: green and red
2. **Labels**: short words

## Workflow

1. Draw the diagram.
""")
    assert [show_expr(m.states[n].call.args[0][1]) for n in calls(m, "bash")] == ['"npm install -g renderer"']


def test_a_gating_lead_gates_its_list_and_no_more(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Build

## Build workflow

These steps only apply when `ios/` exists:

1. Run `pod install`.
2. Run `xcodebuild`.

On every platform, finish with:

3. Run `npm run build`.
""")
    [judge] = [n for n, s in m.states.items() if s.kind == "judge"]
    build = next(n for n in calls(m, "bash") if "npm run build" in show_expr(m.states[n].call.args[0][1]))
    pods = next(n for n in calls(m, "bash") if "pod install" in show_expr(m.states[n].call.args[0][1]))
    assert set(successors(m)[judge]) == {pods, build}, "the judge's other answer goes to the build, not past it"


@pytest.mark.parametrize("step", [
    "Write unit tests for each function in the file.",
    "Write code to handle the document upload.",
    "Create tests as described in the design doc.",
    "Generate a summary of changes in the document.",
])
def test_words_about_a_file_are_not_a_file_to_write(tmp_path: Path, step: str) -> None:
    m = machine(tmp_path, _three_steps(step))
    assert not calls(m, "write")


def test_a_hook_follows_the_steps_of_its_verb_only(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Release

## Steps

1. Check the logs with `tail -n 50 app.log`.
2. Checkout the release branch with `git checkout release`.

## Communication

After checking the logs, tell the user what you found.
""")
    [tell] = [n for n, s in m.states.items() if s.kind == "model" and "Tell the user what" in (s.prompt or "")]
    assert [n for n in m.states if tell in successors(m)[n]] == ["check_logs_tail"], "not after `checkout_…`"


def test_a_failed_check_after_a_write_tells_the_composing_state_why(tmp_path: Path) -> None:
    m = machine(tmp_path, NOTES.replace("3. Tell the user where the notes are.\n", "")
                + "\nVerify that the notes name every module.\n")
    revise = next(n for n in m.states if n.startswith("revise_"))
    [feedback] = [v for v in m.states[revise].writes]
    assert successors(m)[revise] == ["write_notes_md"] and feedback in m.states["write_notes_md"].reads
    assert feedback not in m.states["done"].requires, "an initial value proves nothing"


def test_an_edit_needs_the_read_it_is_made_on(tmp_path: Path) -> None:
    m = machine(tmp_path, "---\nname: fix\ndescription: Fix.\nallowed-tools: Edit, Bash\n---\n"
                          "# Fix\n\n## Steps\n\n1. Implement the fix\n   - Use Edit tool for code changes\n")
    assert not calls(m, "edit") and not calls(m, "read")


@pytest.mark.parametrize("step", [
    "Explain what happens if the cache is cold.",
    "Run the migrations if the schema changed and then restart the server.",
])
def test_an_if_inside_an_embedded_clause_or_before_more_work_is_not_the_steps_case(tmp_path: Path,
                                                                                 step: str) -> None:
    m = machine(tmp_path, _three_steps(step))
    assert not any(s.kind == "judge" for s in m.states.values())


# ---------------------------------------------------------------- what a question denies; where rules and guidance go

def test_a_yes_no_question_keeps_the_negation_of_its_condition(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Image
1. Look for a `.env` file in the project directory.
2. If not found, tell the user to create one.
3. Confirm the project is the frontend project. If not, stop.
4. Generate the image.
""")
    judges = {name: s for name, s in m.states.items() if s.kind == "judge"}
    assert "if_not_found" in judges and judges["if_not_found"].writes == ("not_found",)
    denied = next(s for name, s in judges.items() if "frontend" in name)
    assert "not (the project is the frontend project)" in (denied.prompt or "")
    assert denied.writes[0].startswith("not_")


@pytest.mark.parametrize(("condition", "name"), [
    ("not found", "not_found"), ("it isn't available", "not_available"), ("no tests exist", "no_tests_exist"),
    ("the user doesn't specify an output directory", "user_not_specify_output"), ("tests pass", "tests_pass"),
    ("not", "not_answer"), ("no", "not_answer"), ("", "answer"),
    ("the output file exists but is not valid", "output_file_not_valid"), ("the file can't be found", "file_not_found"),
    ("the file won't open", "file_not_open"),
])
def test_a_condition_s_name_keeps_one_negation(condition: str, name: str) -> None:
    from skillc.frontends.markdown.names import condition_slug

    assert condition_slug(condition) == name


def test_a_prohibition_in_an_opening_section_binds_every_step_that_acts(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Review
## Philosophy
1. Understand how authorization works in the project.

Do not report theoretical issues.

## Workflow
1. Read the code of each endpoint.
2. Trace where the resource id is used.
3. Write up the confirmed findings for the user.
""")
    models = [s for s in m.states.values() if s.kind == "model"]
    assert len(models) == 4
    assert all("Do not report theoretical issues." in (s.prompt or "") for s in models)


def test_guidance_goes_to_a_step_that_acts_rather_than_to_a_question(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Images
1. Look for the API key in the `.env` file.
2. If the API key is not found, tell the user to set it.
3. Generate the image with the script.

## Models

The image model needs the API key to be found: flux is fast and cheap.
""")
    holder = [name for name, s in m.states.items() if "fast and cheap" in (s.prompt or "")]
    assert holder and all(m.states[name].kind == "model" for name in holder)


def test_a_folder_layout_drawn_as_a_tree_is_knowledge_not_a_choice(tmp_path: Path) -> None:
    text = """# Scan
1. Run the scans into the output directory.
2. Merge the results.

```
$OUTPUT_DIR/
├── rulesets.json      # The approved plan
├── raw/               # Per-scan raw output (unfiltered)
│   ├── python-python.json
│   └── ...
└── results/           # Final merged output
    └── results.sarif
```
"""
    m = machine(tmp_path, text)
    assert [s.kind for s in m.states.values() if s.kind in ("model", "judge", "tool")] == ["model", "model"]
    assert any("Per-scan raw output" in (s.prompt or "") for s in m.states.values())


def test_a_tree_of_choices_is_still_a_decision_tree(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Fix
```
Is the test failing?
├─ Yes → fix the code
└─ No → write a failing test
```
""")
    assert any(s.kind == "judge" for s in m.states.values())


def test_a_sentence_about_reading_the_document_is_not_a_step(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Review
## Workflow
1. Map the endpoints.
2. Trace each resource id.

## Checklist
- Is the query scoped to the current user?
- Is there an ownership check?

Use this to guide your review, not as a pass/fail checklist.
""")
    assert not any(s.kind == "model" and (s.prompt or "").startswith("Use this") for s in m.states.values())
    assert any("Use this to guide your review" in (s.prompt or "") for s in m.states.values())


@pytest.mark.parametrize(("sentence", "asks"), [
    ("If no match, fall back to asking the user for the Linear key.", True),
    ("Ask user which items to address.", True),
    ("If not installed, ask the user and install it before proceeding.", True),
    ("Proceed without asking the user.", False),
    ("Multiple matches: ask the user to choose.", False),
    ("Apply the fixes directly instead of asking the user.", False),
    ("Fix every warning in place, and don’t ask the user for confirmation.", False),
    ("Commit the result; there is no need to ask the user first.", False),
    ("Never, ever ask the user for the password.", False),
    ("Run the installer, which asks the user for a key.", False),
])
def test_asking_the_user_anywhere_in_a_step_is_a_question_to_the_user(sentence: str, asks: bool) -> None:
    from skillc.frontends.markdown.phrases import asks_user

    assert asks_user(sentence) is asks


@pytest.mark.parametrize(("check", "arm", "asked"), [
    ("Confirm the project is the frontend project.", "If not, stop.", "not (the project is the frontend project)"),
    ("Verify that the linter is clean.", "If it isn't, run the formatter.", "not (the linter is clean)"),
    ("Ensure the API key is set.", "If it doesn't, stop.", "not (the API key is set)"),
    ("Make sure to back up the database.", "If not, stop.", "not"),
])
def test_an_arm_that_denies_a_check_asks_the_negation(tmp_path: Path, check: str, arm: str, asked: str) -> None:
    m = machine(tmp_path, f"""# Ship
1. Build the package.
2. {check} {arm}
3. Publish the package.
""")
    prompts = [s.prompt or "" for s in m.states.values() if s.kind == "judge"]
    assert any(f"Decide whether this holds: {asked}." in p for p in prompts), prompts


def test_a_workflow_title_does_not_scope_a_philosophy_section_s_rule(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Authorization Review Workflow
## Philosophy
1. Understand how authorization works in the project.

Do not report theoretical issues.

## Workflow
1. Read the code of each endpoint.
2. Write up the confirmed findings for the user.
""")
    models = [s for s in m.states.values() if s.kind == "model"]
    assert len(models) == 3 and all("Do not report theoretical issues." in (s.prompt or "") for s in models)


def test_a_layout_with_dotfiles_and_arrow_comments_is_knowledge(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Setup
1. Copy the template folder.
2. Fill in the key.

```
skill/
├── SKILL.md     ← entry point
├── .env         ← the API key
└── scripts/     ← helpers
    └── run.py
```
""")
    assert not any(s.kind == "judge" for s in m.states.values())


def test_a_rule_stated_inside_a_step_binds_that_step_not_the_whole_run(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Release
## Workflow
### Step 1: Write the docs
1. Write the README.
2. Write the changelog.

### Step 2: Tests and CI
1. Add the test job.
2. Add the lint job.

Do not replace a working formatter or linter.
""")
    holders = {name for name, s in m.states.items() if "Do not replace a working formatter" in (s.prompt or "")}
    assert holders == {"add_test_job", "add_lint_job"}


# ---------------------------------------------------------------- skills seen in a sweep of unseen collections


def test_an_answer_named_yes_is_no_variable_a_guard_would_read(tmp_path: Path) -> None:
    """'If "Yes": …' names a question `yes`; its variable may not take the name of the label every judge tests."""
    m = machine(tmp_path, """---
allowed-tools: Bash
---
# Setup
If instructions are wrong, fix this file.

1. Ask the user whether to install the hooks.
2. If "Yes": run `make hooks`.
3. Report what was installed.
""")
    labels = {label for v in m.variables.values() for label in (getattr(v.type, "labels", None) or ())}
    assert "yes" in labels and not labels & set(m.variables)


def test_a_script_fed_to_bash_through_a_quoted_here_document_is_its_body(tmp_path: Path) -> None:
    m = machine(tmp_path, """---
allowed-tools: Bash
---
# Tether
1. Parse the arguments and run the management script:

```bash
/usr/bin/env bash << 'HOOKS_EOF'
ACTION="${ARGUMENTS:-status}"
bash "$PLUGIN_DIR/scripts/manage.sh" $ACTION
HOOKS_EOF
```

2. Report the result.
""", scripts=("scripts/manage.sh",))
    [run] = calls(m, "bash")
    command = show_expr(m.states[run].call.args[0][1])
    assert "<<" not in command and 'quote(skill_dir ++ "/scripts/manage.sh")' in command
    # a here-document that only feeds text stays as it is
    assert cut("cat > notes.txt << 'EOF'\nhello\nEOF").parts == ("cat > notes.txt << 'EOF'\nhello\nEOF",)


def test_a_rule_from_a_table_row_quotes_the_row_as_written(tmp_path: Path) -> None:
    m = machine(tmp_path, """# Research
| # | Step | Rule |
| --- | --- | --- |
| 1 | Fetch the pages | Always use a 15s timeout on `fetch()` |
| 2 | Save the originals | Always persist the raw markdown |
""")
    quotes = [r.quote for r in m.rules if r.kind == "required"]
    assert quotes and all(" | " in q and " — " not in q for q in quotes)


def test_a_placeholder_one_fence_sources_is_the_users_to_give_everywhere(tmp_path: Path) -> None:
    """`cd $PROJECT_DIR` alone could be a model's (quoted); `source $PROJECT_DIR/.env` cannot, and one variable
    is one thing: the user's input."""
    result = built(tmp_path, """---
allowed-tools: Bash
---
# Restart the bot
1. Check the logs:

```bash
tail -n 20 $PROJECT_DIR/logs/bot.log
```

2. Restart with the environment loaded:

```bash
source $PROJECT_DIR/.env
launchctl kickstart -k gui/501/bot
```
""")
    assert result.ok and result.machine is not None, codes(result.diagnostics)
    assert result.machine.variables["project_dir"].is_input
    assert not any("project_dir" in s.writes for s in result.machine.states.values())


def test_a_case_label_is_never_the_name_of_a_variable(tmp_path: Path) -> None:
    """"If a git remote exists" names a yes/no question's variable `git_remote_exists`; a later list of cases
    naming the same condition gets another label, or its guard would read that variable."""
    m = machine(tmp_path, """---
allowed-tools: Bash
---
# Deploy
1. **If a git remote exists**, link the repository.
2. Decide how to deploy:
   - If a git remote exists → commit and push
   - If the git remote is on Vercel → deploy with the CLI
3. Report the deployment.
""")
    labels = {label for v in m.variables.values() for label in (getattr(v.type, "labels", None) or ())}
    assert "git_remote_exists" in m.variables and not labels & set(m.variables)


def test_a_jump_back_to_a_command_around_its_values_gives_them_again(tmp_path: Path) -> None:
    """A revise after a check that a run may reach without the command (and so without its values) does not run the
    command the document made conditional: it goes back to its check."""
    result = built(tmp_path, """---
allowed-tools: Bash
---
# Tokens
1. Check whether you have both the org and project IDs.
2. If you have both, export them:

```bash
export VERCEL_ORG_ID=<org-id>
export VERCEL_PROJECT_ID=<project-id>
```

## CLI Setup

Ensure the Vercel CLI is installed and up to date.
""")
    assert result.ok and result.machine is not None, codes(result.diagnostics)
    m = result.machine
    [export] = [n for n, s in m.states.items()
                if s.call is not None and "VERCEL_ORG_ID" in show_expr(s.call.args[0][1])]
    fills = [n for n, s in m.states.items() if s.kind == "model" and [e.target for e in s.edges] == [export]]
    assert len(fills) == 1
    into = [n for n, s in m.states.items() if any(e.target == export for e in s.edges)]
    assert into == fills
    [revise] = [n for n in m.states if n.startswith("revise_")]
    assert [e.target for e in m.states[revise].edges] == [n for n in m.states if n.startswith("verify_")]


@pytest.mark.parametrize("text", [
    # a check's labels: "If all passed" must not name a variable `passed`
    "# Release\n1. Run the tests.\n2. If all passed, write the changelog.\n\n## Check\n\nEnsure the changelog "
    "names the version.\n",
    # a placeholder of a later command named like an earlier case's label
    "---\nallowed-tools: Bash\n---\n# Merge\n1. Decide:\n   - If on a feature branch → merge it\n"
    "   - If on main → stop\n2. Merge:\n\n```bash\ngit merge <feature-branch>\n```\n",
    # a placeholder named like a question's answer
    "---\nallowed-tools: Bash\n---\n# Deploy\n1. Merge the work.\n2. If on a feature branch, run:\n\n```bash\n"
    "git merge <feature-branch>\n```\n\n3. If on main, run:\n\n```bash\ngit pull\n```\n\n4. Report.\n",
])
def test_no_label_and_no_variable_share_a_name(tmp_path: Path, text: str) -> None:
    m = machine(tmp_path, text)
    labels = {label for v in m.variables.values() for label in (getattr(v.type, "labels", None) or ())}
    assert not labels & set(m.variables)
    for s in m.states.values():  # and a command's value is a string a model gives, not a question's answer
        if s.call is not None and s.call.tool == "bash":
            assert all(str(m.variables[v].type) == "str" for v in s.reads if v in m.variables and v != "task"), s.name


@pytest.mark.parametrize("opening", ["bash -e << 'EOF'", "bash -n << 'EOF'", "zsh << 'EOF'", "bash << EOF"])
def test_a_here_document_run_with_options_or_expanded_is_kept_as_written(opening: str) -> None:
    command = f"{opening}\necho <name>\nEOF"
    assert any(isinstance(p, str) and "<<" in p for p in cut(command).parts)
