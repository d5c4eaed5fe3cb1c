"""The build's own findings on a checked draft: each smell fires on its shape and not on the fixed machine."""

from __future__ import annotations

from pathlib import Path

import pytest

import skillc
from skillc.frontends.markdown.card import EXAMPLE_MACHINE, EXAMPLE_SKILL
from skillc.frontends.markdown.document import read_document
from skillc.frontends.markdown.smells import shell_names, smells, told_to_act

SMELLY = """machine s {
  use tools std(bash)
  tool notify(msg: str)
  input task: str
  var plan: str
  var out: str
  var status: int
  var out2: str
  var status2: int
  start make_plan
  model make_plan {
    reads task
    writes plan
    prompt "Read the task. Then run `git status` and save the plan to plan.md."
    -> go
  }
  tool go {
    call bash(command: "BRANCH=$(git branch --show-current); git checkout -b <branch-name>")
    writes out = stdout, status = exit_code
    -> go2
  }
  tool go2 {
    reads plan
    call bash(command: "echo $BRANCH " ++ quote(plan))
    writes out2 = stdout, status2 = exit_code
    when status2 != 0 -> fallback
    -> done
  }
  terminal done: success { requires out2 }
  fallback
  rule required make_plan "Read the task."
  rule forbid notify "Never notify anyone."
}
"""


def machine(text: str, path: str = "/tmp/case.skm"):
    result = skillc.check(text, path=path)
    assert result.machine is not None, [str(d.code) for d in result.diagnostics]
    return result.machine


def test_each_smell_on_its_shape() -> None:
    found = [(str(d.code), d.message) for d in smells(machine(SMELLY))]
    assert [c for c, _ in found] == ["SKM341", "SKM342", "SKM342", "SKM344", "SKM344", "SKM345", "SKM345"]
    text = "\n".join(m for _, m in found)
    assert "`make_plan` is told to act: \"run `git status` and save the plan to plan.md.\"" in text
    assert "`out`, written by `go`" in text and "`status`, written by `go`" in text
    assert "placeholder `<branch-name>`" in text and "uses `$BRANCH`, which only `go`'s command sets" in text
    assert "`rule required make_plan` holds trivially" in text and "`rule forbid notify` holds trivially" in text


def test_the_worked_example_has_no_smell(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text(EXAMPLE_SKILL, encoding="utf-8")
    doc, _ = read_document(tmp_path / "SKILL.md")
    m = machine(EXAMPLE_MACHINE, str(tmp_path / "m.skm"))
    assert smells(m, doc, scripts=1) == []


@pytest.mark.parametrize(("prompt", "acts"), [
    ("Write a short answer.", False),
    ("Reply with the command to run.", False),
    ("Create a short description of the change.", False),
    ("Do not run anything.", False),
    ("Write the answer to answer.txt.", True),
    ("Create the branch.", True),
    ("Now, ask the user for the tag.", True),
    ("Wait for the user to confirm.", True),
    ("1. Run `pytest -q` and fix what fails.", True),
    ("Commit the changes with a clear message.", True),
])
def test_told_to_act(prompt: str, acts: bool) -> None:
    assert (told_to_act(prompt) is not None) is acts


def test_shell_names_ignore_single_quoted_text() -> None:
    assert shell_names("X=1; for f in *.py; do echo $f $X; done") == ({"X", "f"}, {"f", "X"})
    assert shell_names("awk '{print $1}' file; echo ${HOME}") == (set(), {"HOME"})


def test_examples_run_as_steps_and_a_lone_cd(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Deploy\n\n1. Build the site.\n\n   ```bash\n   make html\n   ```\n\n## Examples\n\n"
                     "```bash\ncurl -s https://example.com/status\n```\n", encoding="utf-8")
    doc, _ = read_document(skill)
    m = machine("""machine d {
  use tools std(bash)
  var a: str
  var b: str
  var c: str
  start build
  tool build {
    call bash(command: "make html")
    writes a = stdout
    -> status
  }
  tool status {
    call bash(command: "curl -s https://example.com/status")
    writes b = stdout
    -> go_docs
  }
  tool go_docs {
    call bash(command: "cd docs")
    writes c = stdout
    -> done
  }
  terminal done: success { requires a, b, c }
  fallback
}
""")
    found = [(str(d.code), d.message) for d in smells(m, doc)]
    assert [c for c, _ in found] == ["SKM343", "SKM344"]
    assert "`status` runs `curl -s https://example.com/status`" in found[0][1] and "`go_docs` only changes folder" \
        in found[1][1]


def test_model_text_evidence_when_the_skill_has_commands(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Test\n\n1. Run `pytest -q`.\n", encoding="utf-8")
    doc, _ = read_document(skill)
    m = machine('machine t {\n  var r: str\n  start run\n  model run {\n    writes r\n    prompt "Report on the '
                'tests."\n    -> done\n  }\n  terminal done: success { requires r }\n  fallback\n}\n')
    assert [str(d.code) for d in smells(m, doc)] == ["SKM340"]
    assert [str(d.code) for d in smells(m, None)] == []  # nothing to run: model text is the deliverable


STEPS_SKILL = """# Release

1. Run the tests.
2. Build the package.
3. Tag the release.
4. Publish it.

## Notes

1. Tags are signed.
2. Releases are immutable.
3. The changelog is generated.

If the tests fail, stop.
"""


def _steps_machine(skill: Path, froms: dict[str, str], decide: bool = False) -> str:
    """A chain of model states, one per `from` range; with `decide`, the first routes on a judge's verdict."""
    names = list(froms)
    body = [f"  var {n}_out: str" for n in names] + ["  var ok: enum { pass, fail }" if decide else "",
                                                    f"  start {names[0]}"]
    for i, n in enumerate(names):
        nxt = names[i + 1] if i + 1 < len(names) else "done"
        body += [f"  model {n} {{", f"    writes {n}_out", f"    prompt \"Say what {n} did.\"",
                 f'    from "{skill.name}":{froms[n]}', f"    -> {nxt}", "  }"]
    if decide:
        body[-2:-1] = ["    -> check"]
        body += ["  judge check {", "    writes ok", '    prompt "Did the tests pass?"',
                 f'    from "{skill.name}":14', "    when ok == fail -> stopped", "    -> done", "  }",
                 "  terminal stopped: failed"]
    reads = ", ".join(f"{n}_out" for n in names)
    body += [f"  terminal done: success {{ requires {reads} }}", "  fallback"]
    return "machine r {\n  source \"" + skill.name + "\"\n" + "\n".join(x for x in body if x) + "\n}\n"


def test_a_numbered_step_without_a_state_among_siblings_that_have_one(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text(STEPS_SKILL, encoding="utf-8")
    doc, _ = read_document(skill)
    where = str(tmp_path / "m.skm")
    skipped = machine(_steps_machine(skill, {"test": "3", "build": "4", "publish": "6"}), where)
    found = [(str(d.code), d.message) for d in smells(skipped, doc)]
    assert [c for c, _ in found if c == "SKM348"] == ["SKM348"]
    assert "the step at line 5 (\"Tag the release.\") has no state, though its siblings at lines 3, 4, 6 have" in (
        "\n".join(m for _, m in found))
    whole = machine(_steps_machine(skill, {"test": "3", "build": "4", "tag": "5", "publish": "6"}), where)
    assert "SKM348" not in [str(d.code) for d in smells(whole, doc)]
    # A list the machine draws on once (a state over one note) is knowledge, not a procedure with a step left out.
    drawn = machine(_steps_machine(skill, {"test": "3", "build": "4", "tag": "5", "publish": "6", "sign": "10"}),
                    where)
    assert "SKM348" not in [str(d.code) for d in smells(drawn, doc)]


def test_a_numbered_principle_is_not_a_step_left_out(tmp_path: Path) -> None:
    scan = ("# Scan\n\n1. Check the version.\n2. Always pass `--metrics=off`.\n3. Run the scan.\n"
            "4. Never upload the results.\n5. Report the findings.\n")
    # The principles belong in the scan's prompt.
    assert _found(tmp_path, scan, {"version": "3", "scan": "5", "report": "7"}, "SKM348") == []
    assert _found(tmp_path, scan, {"version": "3", "report": "7"}, "SKM348") == [
        "the step at line 5 (\"Run the scan.\") has no state, though its siblings at lines 3, 7 have"]


def test_a_condition_whose_states_decide_nothing(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text(STEPS_SKILL, encoding="utf-8")
    doc, _ = read_document(skill)
    where = str(tmp_path / "m.skm")
    ignored = machine(_steps_machine(skill, {"test": "3", "build": "4", "tag": "5", "publish": "6",
                                             "stop_check": "14"}), where)
    found = [d.message for d in smells(ignored, doc) if str(d.code) == "SKM349"]
    assert found == ["the skill decides at line 14 (\"If the tests fail, stop.\"), but `stop_check`, made from it, "
                     "neither decides nor is an arm of a decision"]
    decided = machine(_steps_machine(skill, {"test": "3", "build": "4", "tag": "5", "publish": "6"}, decide=True),
                      where)
    assert "SKM349" not in [str(d.code) for d in smells(decided, doc)]
    # A condition no state was made from is knowledge (or a prompt's): not this smell's to judge.
    unheld = machine(_steps_machine(skill, {"test": "3", "build": "4", "tag": "5", "publish": "6"}), where)
    assert "SKM349" not in [str(d.code) for d in smells(unheld, doc)]


def test_a_path_that_skips_the_step_before(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text(STEPS_SKILL, encoding="utf-8")
    doc, _ = read_document(skill)
    where = str(tmp_path / "m.skm")
    # Run the tests, tag, then build: every run reaches the tag without having built the package.
    swapped = machine(_steps_machine(skill, {"test": "3", "tag": "5", "build": "4", "publish": "6"}), where)
    assert [d.message for d in smells(swapped, doc) if str(d.code) == "SKM350"] == [
        "the path test -> tag reaches `tag`, made from the step at line 5 (\"Tag the release.\"), without passing the "
        "step before it at line 4 (\"Build the package.\": `build`)"]
    ordered = machine(_steps_machine(skill, {"test": "3", "build": "4", "tag": "5", "publish": "6"}), where)
    assert "SKM350" not in [str(d.code) for d in smells(ordered, doc)]
    # The notes' numbered list is no sequence of work: a machine drawing on it in any order skips nothing.
    notes = machine(_steps_machine(skill, {"test": "3", "build": "4", "tag": "5", "publish": "6", "immutable": "11",
                                           "signed": "10"}), where)
    assert "SKM350" not in [str(d.code) for d in smells(notes, doc)]


def test_a_step_the_skill_makes_conditional_may_be_skipped(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Release\n\n1. Run the tests.\n2. If the package is new, register it.\n3. Publish it.\n\n"
                     "## Step 4A: Announce\n\nPost it.\n\n## Step 4B: Stay quiet\n\nSay nothing.\n",
                     encoding="utf-8")
    doc, _ = read_document(skill)
    m = machine(_steps_machine(skill, {"test": "3", "publish": "5", "register": "4", "quiet": "11",
                                       "announce": "7"}), str(tmp_path / "m.skm"))
    assert "SKM350" not in [str(d.code) for d in smells(m, doc)]  # the skill says when to register; 4A/4B are arms



def test_two_numbered_lists_of_one_section_are_two_sequences(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text("# Deploy\n\nFor staging:\n\n1. Build the image.\n2. Push it to staging.\n\nFor production:\n\n"
                     "1. Tag the image.\n2. Push it to production.\n", encoding="utf-8")
    doc, _ = read_document(skill)
    m = machine('machine d {\n  source "SKILL.md"\n  var env: enum { staging, production }\n  var out: str\n'
                '  start pick\n  judge pick {\n    writes env\n    prompt "Which environment?"\n    from "SKILL.md":3\n'
                '    when env == staging -> build\n    -> tag\n  }\n'
                + "".join(f'  model {n} {{\n    writes out\n    prompt "Say what {n} did."\n'
                          f'    from "SKILL.md":{line}\n    -> {nxt}\n  }}\n'
                          for n, line, nxt in (("build", 5, "push_staging"), ("push_staging", 6, "done"),
                                               ("tag", 10, "push_production"), ("push_production", 11, "done")))
                + '  terminal done: success { requires out }\n  fallback\n}\n', str(tmp_path / "m.skm"))
    # Production never pushes to staging first: the second list starts its numbering again, so it is a list of its own.
    assert "SKM350" not in [str(d.code) for d in smells(m, doc)]


def _found(tmp_path: Path, text: str, froms: dict[str, str], code: str) -> list[str]:
    """The messages of one code for a chain of model states (`_steps_machine`) over a skill of this text."""
    skill = tmp_path / "SKILL.md"
    skill.write_text(text, encoding="utf-8")
    doc, _ = read_document(skill)
    return [d.message for d in smells(machine(_steps_machine(skill, froms), str(tmp_path / "m.skm")), doc)
            if str(d.code) == code]


def test_step_headings_are_read_against_the_heading_they_sit_under(tmp_path: Path) -> None:
    principles = ("# Debug\n\n## Core Principles\n\n### 1. Reproduce first\n\nMake it fail.\n\n### 2. Bisect\n\n"
                  "Halve it.\n")
    assert _found(tmp_path, principles, {"bisect": "9", "reproduce": "5"}, "SKM350") == []
    steps_ = "# Release\n\n## Step 1: Read the notes\n\nRead them.\n\n## Step 2: Write the summary\n\nWrite it.\n"
    assert _found(tmp_path, steps_, {"write": "7", "read": "3"}, "SKM350") == [
        "the machine starts at `write`, made from the step at line 7 (\"Step 2: Write the summary\"), without passing "
        "the step before it at line 3 (\"Read the notes\": `read`)"]


OPTIONAL_SKILL = ("# Release\n\n1. Run the tests.\n2. Update the changelog if needed.\n3. Publish it.\n\n## Notes\n\n"
                  "The optional resources are listed in NOTES.md.\n")


def test_an_optional_step_on_every_path_to_success(tmp_path: Path) -> None:
    assert _found(tmp_path, OPTIONAL_SKILL, {"test": "3", "changelog": "4", "publish": "5"}, "SKM351") == [
        "the skill makes the step at line 4 optional (\"Update the changelog if needed.\"), but every path to success "
        "passes `changelog`"]
    # "optional resources" names things that are optional, not an act the skill leaves to need
    assert _found(tmp_path, OPTIONAL_SKILL, {"test": "3", "publish": "5", "resources": "9"}, "SKM351") == []
    # a state made from the whole list is the list's, not the optional step's
    assert _found(tmp_path, OPTIONAL_SKILL, {"test": "3", "release": "3-5"}, "SKM351") == []


def test_an_optional_step_decided_at_its_line_has_a_path_around_it(tmp_path: Path) -> None:
    skill = tmp_path / "SKILL.md"
    skill.write_text(OPTIONAL_SKILL, encoding="utf-8")
    doc, _ = read_document(skill)

    def decided(around: str) -> list[str]:
        m = machine(f"""machine r {{
  source "SKILL.md"
  var need: bool
  var out: str
  start test
  model test {{
    from "SKILL.md":3
    writes out
    prompt "Say how the tests went."
    -> needed
  }}
  judge needed {{
    from "SKILL.md":4
    writes need
    prompt "Does the changelog need an entry?"
    when need -> changelog
    -> {around}
  }}
  model changelog {{
    from "SKILL.md":4
    writes out
    prompt "Write the entry."
    -> publish
  }}
  model publish {{
    from "SKILL.md":5
    writes out
    prompt "Say what was published."
    -> done
  }}
  terminal done: success {{ requires out }}
  fallback
}}
""", str(tmp_path / "m.skm"))
        return [d.message for d in smells(m, doc) if str(d.code) == "SKM351"]

    assert decided("publish") == []
    # the judge decides, but both of its arms update the changelog
    assert decided("changelog") == [
        "the skill makes the step at line 4 optional (\"Update the changelog if needed.\"), but every path to success "
        "passes `changelog`"]


GLUED = """machine g {
  use tools std(bash)
  input targets: str
  input branch: str
  var out: str
  start remove
  tool remove {
    reads targets, branch
    call bash(command: %s)
    writes out = stdout
    -> done
  }
  terminal done: success { requires out }
  fallback
}
"""


@pytest.mark.parametrize(("command", "glued"), [
    ('"wts=" ++ quote(targets) ++ "printf \'%s\\\\n\' \\"$wts\\""', "printf"),  # the git-cleanup draft's bug
    ('"git log " ++ quote(branch) ++ "git push"', "git"),
    ('"wts=" ++ quote(targets) ++ "; printf \'%s\\\\n\' \\"$wts\\""', None),  # the separator is there
    ('"cp a " ++ quote(branch) ++ "/out.txt && ls"', None),  # a path under the value: one word, meant
    ('"git tag v" ++ quote(branch) ++ " && git push --tags"', None),  # a prefix glued before is a name
    ('"echo " ++ quote(branch) ++ "s"', None),  # a suffix that ends the command
    ('"echo " ++ quote(branch) ++ "\\nls -la"', None),  # a new line
])
def test_a_spliced_value_glued_to_the_next_word(command: str, glued: str | None) -> None:
    found = [d for d in smells(machine(GLUED % command)) if str(d.code) == "SKM352"]
    assert [d.message.split("right before ")[1].split("`")[1] for d in found] == ([glued] if glued else [])
    if glued:
        assert found[0].span is not None and found[0].hint.startswith("put the separator")


@pytest.mark.parametrize(("command", "error"), [
    # the second play's burpsuite draft: an apostrophe inside ${…:-…} within double quotes opens a quote
    ('"echo \\"${BURP_JAVA:-unset, the script uses Burp\'s JRE}\\"; exit 0"', "unexpected EOF"),
    ('"if [ -f " ++ quote(targets) ++ " ]; then echo yes"', "syntax error"),  # an `if` without its `fi`
    ('"if [ -f " ++ quote(targets) ++ " ]; then echo yes; fi"', None),
    ('"--name \\"Checkout flow\\"  # what you did"', None),  # a command bash would take for an option of its own
    ('"echo \\"${BURP_JAVA:-unset, the JRE}\\"; git log " ++ quote(branch) ++ " | head -5"', None),
    # a reply that escaped a NUL into a command (bench/sweep.py --replies): no process can take it as an argument
    ('"git status\\u{0} --short"', "holds a NUL character"),
])
def test_a_command_bash_cannot_parse(command: str, error: str | None) -> None:
    found = [d.message for d in smells(machine(GLUED % command)) if str(d.code) == "SKM353"]
    assert len(found) == (1 if error else 0), found
    if error:
        assert found[0].startswith("bash cannot parse the command of `remove`") and error in found[0]


@pytest.mark.parametrize(("command", "code"), [
    # file-conversion's draft: the script's arguments expand before the assignments in front of it
    ('"SRC=" ++ quote(targets) ++ " bash run.sh \\"$SRC\\""', "SC2097"),
    ('"for x in \\"$LIST\\"; do echo $x; done"', "SC2066"),
    ('"rm -rf \\"$DIR/\\"*"', "SC2115"),
    ('"SRC=" ++ quote(targets) ++ "; bash run.sh \\"$SRC\\""', None),
    ('"cd dir; ls | grep x; echo $y"', None),  # shellcheck's style advice is not a finding
    ('"wts=" ++ quote(targets) ++ "printf \'%s\\\\n\' \\"$wts\\""', None),  # SKM352's, not said twice
])
def test_a_shell_bug_shellcheck_knows(command: str, code: str | None) -> None:
    found = [d.message for d in smells(machine(GLUED % command)) if str(d.code) == "SKM354"]
    assert len(found) == (1 if code else 0), found
    if code:
        assert found[0].startswith(f"the command of `remove` (shellcheck {code}): ")
