"""Faithfulness: the requirements corpus, the scorer's queries, the new rule kinds and the honest livemath build.

The corpus (tests/frontends/markdown/faithfulness/) holds skill documents of many shapes,
each with a requirements file written from the document alone. The scorer must
be able to fail: machines that miss a requirement are scored below full marks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import skillc
from bench.faithfulness import document_of, measure
from skillc.check.requirements import EXAMPLE_MACHINE
from skillc.frontends.markdown import build
from skillc.frontends.markdown.faithfulness import (
    RequirementsError,
    accepted,
    load,
    load_review,
    machine_key,
    parse_requirements,
    reviewed_failures,
    score,
)
from skillc.ir.machine import Machine
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.scripted import ScriptedExecutor
from skillc.runtime.interaction import AskUser
from tests.conftest import codes

CORPUS = Path(__file__).parent / "faithfulness"
REQS = sorted(CORPUS.glob("*.req"))
LIVEMATH = Path(__file__).resolve().parents[3] / "examples" / "livemath" / "SKILL.md"

# Every shape of skill the issue names, and the corpus documents of that shape.
CATEGORIES = {
    "numbered workflow": ["01", "06", "09", "17"],
    "decision tree": ["02", "18"],
    "phase guide with scripts": ["07", "14"],
    "catalogue of options": ["08", "19"],
    "policy document": ["03", "15", "21"],
    "tool manual with commands": ["04", "11", "24"],
    "asks the user": ["05", "12", "23"],
    "stop / abort / report failure": ["01", "04", "16", "20", "22"],
    "go back to step N": ["06", "17"],
    "(below) reference": ["13", "25"],
    "optional steps": ["09", "15", "25"],
    "nested procedure": ["10", "22"],
    "else-if chain": ["26", "21"],
}


def test_the_corpus_has_25_documents_and_every_shape_twice() -> None:
    docs = sorted(CORPUS.glob("*.md"))
    assert len(docs) >= 25
    stems = {d.stem[:2] for d in docs}
    for shape, members in CATEGORIES.items():
        assert len(members) >= 2 and set(members) <= stems, shape


@pytest.mark.parametrize("req", REQS, ids=lambda p: p.stem)
def test_every_corpus_document_builds_and_its_requirements_parse(req: Path) -> None:
    requirements = load(req, document_of(req))
    assert requirements
    result, built = measure(req)
    assert result is not None, codes(built.diagnostics)
    assert built.ok


def test_structural_compiler_meets_nine_in_ten_requirements() -> None:
    correct = total = 0
    for req in REQS:
        result, _ = measure(req)
        correct += result.correct
        total += result.total
    assert total >= 150
    assert correct / total >= 0.9, f"{correct}/{total}"


# ---------------------------------------------------------------- the scorer can fail


def _livemath(tmp_path: Path):
    result = build(LIVEMATH, output=tmp_path / "livemath.skm")
    assert result.ok, codes(result.diagnostics)
    (tmp_path / "livemath.skm").write_text(result.text)
    return result


def _rescore(text: str, tmp_path: Path):
    path = tmp_path / "edited.skm"
    path.write_text(text)
    checked = skillc.check(path)
    assert checked.machine is not None, codes(checked.diagnostics)
    return score(checked.machine, load(CORPUS / "livemath.req", LIVEMATH))


def test_livemath_meets_every_requirement(tmp_path: Path) -> None:
    result = _livemath(tmp_path)
    s = score(result.machine, load(CORPUS / "livemath.req", LIVEMATH))
    assert s.correct == s.total, [v.requirement.text for v in s.verdicts if not v.ok]


def test_a_failure_that_ends_in_success_is_caught(tmp_path: Path) -> None:
    text = _livemath(tmp_path).text
    broken = re.sub(r"(when write_answer_run_status != 0 -> )failure", r"\1read_file_back", text)
    assert broken != text
    s = _rescore(broken, tmp_path)
    failed = [v.requirement.text for v in s.verdicts if not v.ok]
    assert any(t.startswith('ends "If the command fails (non-zero') for t in failed)


def test_a_command_left_to_a_model_is_caught(tmp_path: Path) -> None:
    # The old build: the write was a model state, the prohibition an invented tool nobody calls.
    old = """machine livemath {
  source "SKILL.md"
  tool write_one_letter()
  input task: str
  var write_answer_result: str
  start write_answer
  model write_answer {
    from "SKILL.md":47-48
    reads task
    writes write_answer_result
    prompt "Run the command with bash."
    -> done
  }
  terminal done: success { requires write_answer_result }
  fallback
  rule forbid write_one_letter "Never write more than one letter to the file." from "SKILL.md":21
}
"""
    (tmp_path / "SKILL.md").write_text(LIVEMATH.read_text())
    s = _rescore(old, tmp_path)
    verdicts = {v.requirement.text: v for v in s.verdicts}
    assert not verdicts['tool "Run the command with bash." bash'].ok
    assert "invented" in verdicts['prohibit "Never write more than one letter to the file."'].why
    assert not verdicts['ends "If the command fails, stop with failure." failed'].ok
    assert s.correct < s.total / 3


def test_every_kind_of_requirement_has_its_query() -> None:
    from skillc.frontends.markdown.faithfulness import KINDS, QUERIES

    assert set(QUERIES) == set(KINDS)


def test_requirements_files_are_checked_against_the_document() -> None:
    doc = "# Skill\n\n1. Read the file.\n2. Write the summary.\n"
    assert len(parse_requirements('order "Read the file." before "Write the summary."', doc)) == 1
    with pytest.raises(RequirementsError, match="not in the document"):
        parse_requirements('required "Delete the file."', doc)
    with pytest.raises(RequirementsError, match="unknown requirement"):
        parse_requirements('sometimes "Read the file."', doc)
    with pytest.raises(RequirementsError, match="takes 2"):
        parse_requirements('order "Read the file."', doc)


def _checked(path: Path, text: str) -> Machine:
    """The machine `text` holds, written to `path` and checked (a test's own machine must check)."""
    path.write_text(text)
    checked = skillc.check(path)
    assert checked.machine is not None, codes(checked.diagnostics)
    return checked.machine


_PHASES = """# Triage

## Phase 1: Gather the issues

Fetch the open issues.

Fetch the open pull requests.

## Phase 2: Report the triage

Write the report.
"""


def _phases(tmp_path: Path, first: str, second: str, gather: str = "3-7") -> str:
    """A machine for _PHASES whose states run `first` then `second` (lines of their own steps, not the headings)."""
    (tmp_path / "SKILL.md").write_text(_PHASES)
    lines = {"fetch": gather, "report": "11"}
    body = "".join(f"""  model {name} {{
    from "SKILL.md":{lines[name]}
    prompt "Do it."
    -> {after}
  }}
""" for name, after in ((first, second), (second, "done")))
    return _checked(tmp_path / "m.skm", f"machine m {{\n  source \"SKILL.md\"\n  start {first}\n{body}"
                                         "  terminal done: success\n  fallback\n}\n")


def test_a_heading_no_state_holds_stands_for_its_section(tmp_path: Path) -> None:
    reqs = parse_requirements('order "Gather the issues" before "Report the triage"\n'
                              'required "Gather the issues"\nknowledge "Report the triage"', _PHASES)
    assert reqs[0].sections == ((3, 8), (9, 12))
    good = score(_phases(tmp_path, "fetch", "report", gather="5-7"), reqs)
    assert [v.ok for v in good.verdicts] == [True, True, False], good.verdicts
    assert good.verdicts[2].why == "it is in no state's instructions"  # knowledge asks of the heading's own line
    bad = score(_phases(tmp_path, "report", "fetch", gather="5-7"), reqs)
    assert "skips it" in bad.verdicts[0].why
    # A state whose range holds the heading line is the anchor's state, as before: the section is not consulted.
    held = score(_phases(tmp_path, "fetch", "report", gather="3-7"), reqs)
    assert held.verdicts[0].ok and held.verdicts[1].ok


def _upgrade(tmp_path: Path, order: tuple[str, ...]) -> Machine:
    """A machine for `1. Upgrade the packages` (lines 3-4) then `2. Run the doctor` (line 6): `upgrade` (3-4) runs
    the step and goes to `explain` (line 3 alone, ending `failed`) when it fails; the others run in `order`."""
    (tmp_path / "SKILL.md").write_text("# U\n\n1. Upgrade the packages\n   with the CLI.\n\n2. Run the doctor.\n")
    lines = {"upgrade": "3-4", "doctor": "6"}
    body = "".join(f"""  tool {name} {{
    from "SKILL.md":{lines[name]}
    call bash(command: "true")
    writes {name}_code = exit_code
    {"when upgrade_code != 0 -> explain" if name == "upgrade" else ""}
    -> {after}
  }}
""" for name, after in zip(order, (*order[1:], "done")))
    return _checked(tmp_path / "m.skm", f"""machine m {{
  source "SKILL.md"
  use tools std(bash)
  start {order[0]}
{body}  model explain {{
    from "SKILL.md":3
    reads upgrade_code
    prompt "Explain the failure."
    -> gave_up
  }}
  terminal done: success
  terminal gone: failed
  terminal gave_up: failed
  fallback
}}
""")


def test_an_order_is_of_the_step_not_a_handler_made_from_its_line(tmp_path: Path) -> None:
    doc = "# U\n\n1. Upgrade the packages\n   with the CLI.\n\n2. Run the doctor.\n"
    reqs = parse_requirements('order "Upgrade the packages" before "Run the doctor"', doc)
    # `explain` is the narrowest state at line 3, but no successful run passes it: the step is `upgrade`.
    assert score(_upgrade(tmp_path, ("upgrade", "doctor")), reqs).verdicts[0].ok
    bad = score(_upgrade(tmp_path, ("doctor", "upgrade")), reqs).verdicts[0]
    assert not bad.ok and bad.why == "doctor skips it", bad


def test_an_order_is_met_by_deciding_a_conditional_step_first(tmp_path: Path) -> None:
    doc = "# F\n\n1. For graphs, identify the focus.\n2. Run the script.\n"
    (tmp_path / "SKILL.md").write_text(doc)
    reqs = parse_requirements('order "identify the focus" before "Run the script"', doc)

    def machine(start: str) -> Machine:
        return _checked(tmp_path / "m.skm", f"""machine m {{
  source "SKILL.md"
  enum Kind {{ graph, other }}
  var kind: Kind
  start {start}
  judge needs {{
    from "SKILL.md":3
    writes kind
    prompt "Is it a graph?"
    when kind == graph -> focus
    -> run
  }}
  model focus {{
    from "SKILL.md":3
    prompt "Identify the focus."
    -> run
  }}
  model run {{
    from "SKILL.md":4
    prompt "Run it."
    -> done
  }}
  terminal done: success
  fallback
}}
""")

    # the step is conditional: a run that decided it (and skipped it) before the script keeps the order
    assert score(machine("needs"), reqs).verdicts[0].ok
    assert not score(machine("run"), reqs).verdicts[0].ok


def test_a_list_item_with_sub_steps_stands_for_them() -> None:
    doc = "# T\n\n1. Resolve the work:\n   - If given, use it.\n   - Otherwise inspect it.\n\n2. Classify it.\n- lone\n"
    reqs = parse_requirements('order "Resolve the work" before "Classify it"\nrequired "lone"', doc)
    assert reqs[0].sections == ((3, 5), None)  # an item without nested lines opens no block
    assert reqs[1].sections == (None,)


def test_a_paragraph_ending_in_a_colon_stands_for_the_code_and_list_it_leads_in() -> None:
    doc = ("# T\n\nFetch these resources first:\n\n```bash\nnode fetch.js <url>\n```\n\n1. The schema\n"
           "2. The syntax\n\nThen write the file.\n\nA plain sentence.\n- not led in\n\n**Run it:**\n\n"
           "```\nmake\n```\n")
    reqs = parse_requirements('tool "Fetch these resources" bash\nrequired "A plain sentence"\n'
                              'required "Then write the file"\nrequired "Run it"', doc)
    assert reqs[0].sections == ((3, 10),)  # the code and the numbered list after it, to the next paragraph
    assert reqs[1].sections == (None,)  # no colon: the list after it is not its block
    assert reqs[2].sections == (None,)  # a paragraph followed by a paragraph leads in nothing
    assert reqs[3].sections == ((17, 21),)  # markdown around the colon is ignored


def test_a_tool_made_from_the_block_of_the_step_is_the_steps_tool(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("# E\n\nUse Edit when the point is in the code:\n\n```\nold -> new\n```\n\n"
                                       "Report.\n")
    reqs = parse_requirements('tool "Use Edit when the point is in the code" edit', (tmp_path / "SKILL.md").read_text())

    def machine(edit_from: str) -> Machine:
        return _checked(tmp_path / "m.skm", f"""machine m {{
  source "SKILL.md"
  use tools std(edit)
  var old: str
  var new: str
  start plan
  model plan {{
    from "SKILL.md":2-3
    writes old, new
    prompt "Plan the edit."
    -> report
  }}
  model report {{
    from "SKILL.md":9
    prompt "Report."
    -> apply
  }}
  tool apply {{
    from "SKILL.md":{edit_from}
    reads old, new
    call edit(path: "a.py", old: old, new: new)
    -> done
  }}
  terminal done: success
  fallback
}}
""")

    # `plan` holds the step's line; the edit made from the step's code block (lines 5-7) is the step's tool
    assert score(machine("5-7"), reqs).verdicts[0].ok
    # an edit made from the next step, after a state of its own, is not (right after `plan`, it would make the call
    # `plan` prepared: test_a_step_that_prepares_a_call_is_the_steps_tool)
    assert score(machine("9"), reqs).verdicts[0].why == "no tool state calls `edit` there"


def test_a_branch_target_is_not_the_state_deciding_it(tmp_path: Path) -> None:
    doc = "# K\n\n1. Check for the key\n2. If not found, tell the user to:\n   - make one\n   - or export it\n"
    (tmp_path / "SKILL.md").write_text(doc)
    reqs = parse_requirements('branch "Check for the key" to "If not found, tell the user"', doc)

    def machine(target: str) -> Machine:
        return _checked(tmp_path / "m.skm", f"""machine m {{
  source "SKILL.md"
  use tools std(bash)
  start check
  tool check {{
    from "SKILL.md":3-4
    call bash(command: "test -f .env")
    writes code = exit_code
    when code != 0 -> {target}
    -> done
  }}
  model explain {{
    from "SKILL.md":4-6
    prompt "Tell the user how to set the key."
    -> missing
  }}
  model other {{
    from "SKILL.md":2
    prompt "Say something else."
    -> missing
  }}
  terminal done: success
  terminal missing: failed
  fallback
}}
""")

    # `check` (lines 3-4) is the narrowest state at line 4, but it decides; the state telling the user is the target
    assert score(machine("explain"), reqs).verdicts[0].ok
    assert score(machine("other"), reqs).verdicts[0].why == "no decision at the condition leads there"


_DEPLOY = """# Deploy

1. Check whether the build exists.
2. If it exists:
   - Load the notes.
   - Publish the build.
3. Report.
"""


def _deploy(tmp_path: Path, edges: dict[str, str], default: str = "report") -> object:
    """A machine for _DEPLOY: `decide` (line 4) takes `load` when the build exists, else `default`; `edges` gives
    each other state's next state."""
    (tmp_path / "SKILL.md").write_text(_DEPLOY)
    lines = {"load": 5, "publish": 6, "report": 7}
    body = "".join(f"""  model {name} {{
    from "SKILL.md":{lines[name]}
    reads exists
    prompt "Do it."
    {after if after.startswith("when") else "-> " + after}
  }}
""" for name, after in edges.items())
    return _checked(tmp_path / "m.skm", f"""machine m {{
  source "SKILL.md"
  var exists: bool
  start decide
  judge decide {{
    from "SKILL.md":4
    writes exists
    prompt "Does the build exist?"
    when exists -> load
    -> {default}
  }}
{body}  terminal done: success
  terminal gone: failed
  fallback
}}
""")


def _deploy_from(tmp_path: Path, machine: object, start: str) -> object:
    """The machine `_deploy` just wrote, started at `start`."""
    return _checked(tmp_path / "m.skm",
                    (tmp_path / "m.skm").read_text().replace("  start decide\n", f"  start {start}\n"))


def test_a_branch_holds_when_the_target_depends_on_the_decision(tmp_path: Path) -> None:
    """`branch`: X runs on every successful run of one arm and is skipped on another, even past a first state."""
    reqs = parse_requirements('branch "If it exists" to "Publish the build"', _DEPLOY)
    through = _deploy(tmp_path, {"load": "publish", "publish": "report", "report": "done"})
    assert score(through, reqs).verdicts[0].ok
    # after the arms meet, X runs whichever way the decision went
    merged = _deploy(tmp_path, {"load": "report", "report": "publish", "publish": "done"})
    assert score(merged, reqs).verdicts[0].why == "no decision at the condition leads there"
    # the other arm only fails: no successful run skips X, so the decision does not choose it
    failing = _deploy(tmp_path, {"load": "publish", "publish": "report", "report": "done"}, default="gone")
    assert not score(failing, reqs).verdicts[0].ok
    # one successful run of the arm goes around X
    around = _deploy(tmp_path, {"load": "when exists -> report\n    -> publish", "publish": "report",
                                "report": "done"})
    assert score(around, reqs).verdicts[0].why == "no decision at the condition leads there"
    # X runs on every run before the decision is made; the arm only starts the loop again
    restart = _deploy_from(tmp_path, _deploy(tmp_path, {"load": "publish", "publish": "decide", "report": "done"}),
                           "load")
    assert not score(restart, reqs).verdicts[0].ok
    # a run of the arm comes back to the decision without X
    back = _deploy(tmp_path, {"load": "when exists -> decide\n    -> publish", "publish": "report", "report": "done"})
    assert not score(back, reqs).verdicts[0].ok


def _module(tmp_path: Path, doc: str, body: str, tools: str = "") -> Machine:
    """A machine over `doc` (written beside it as SKILL.md) with these states, checked."""
    (tmp_path / "SKILL.md").write_text(doc)
    uses = f"  use tools std({tools})\n" if tools else ""
    return _checked(tmp_path / "m.skm", f'machine m {{\n  source "SKILL.md"\n{uses}{body}  terminal done: success\n'
                                         "  fallback\n}\n")


def test_an_optional_step_decided_at_its_line_is_the_act_not_the_decision(tmp_path: Path) -> None:
    doc = "# H\n\n## Details\n\nDetails live in `ref.md`. Read that file when the summary is not enough.\n\nAnswer.\n"
    reqs = parse_requirements('optional "Read that file when the summary is not enough."', doc)

    def machine(around: str) -> Machine:
        return _module(tmp_path, doc, f"""  var need: bool
  start need_it
  judge need_it {{
    from "SKILL.md":5
    writes need
    prompt "Is the summary enough?"
    when need -> read_ref
    -> {around}
  }}
  tool read_ref {{
    from "SKILL.md":3-5
    call read(path: "ref.md")
    -> answer
  }}
  model answer {{
    from "SKILL.md":7
    prompt "Answer."
    -> done
  }}
""", tools="read")

    # the judge holds the line alone, but the read it decides on is the step: a run goes around it
    assert score(machine("answer"), reqs).verdicts[0].ok
    # both arms read: every successful run performs the step
    assert score(machine("read_ref"), reqs).verdicts[0].why == "every successful run performs it"


def test_a_steps_result_is_what_its_sub_steps_produce(tmp_path: Path) -> None:
    doc = ("# F\n\n1. Resolve the PR.\n   - View the current branch's PR.\n2. Inspect its checks.\n"
           "3. Report.\n")
    reqs = parse_requirements('reads "Inspect its checks." from "Resolve the PR."', doc)

    def machine(view_from: str, view: str = '"gh pr view " ++ quote(ref)') -> Machine:
        return _module(tmp_path, doc, f"""  var ref: str
  var url: str
  start resolve
  model resolve {{
    from "SKILL.md":3
    writes ref
    prompt "Which PR?"
    -> view
  }}
  tool view {{
    from "SKILL.md":{view_from}
    {"reads ref" if "ref" in view else ""}
    writes url = stdout
    call bash(command: {view})
    -> inspect
  }}
  tool inspect {{
    from "SKILL.md":5
    reads url
    call bash(command: "gh pr checks " ++ quote(url))
    -> done
  }}
""", tools="bash")

    # the URL the inspection reads comes from the sub-step of "Resolve the PR." (line 4)
    assert score(machine("4"), reqs).verdicts[0].ok
    # made from another step's line, it is not the resolving step's result, but what it makes of that result is
    assert score(machine("6"), reqs).verdicts[0].ok
    # made from another step's line out of nothing the resolving step produced, it is not
    assert score(machine("6", view='"gh pr view"'), reqs).verdicts[0].why == \
        "inspect reads nothing only resolve produced"


def test_a_fallback_made_into_one_state_with_its_condition_is_the_arm_of_the_edge_into_it(tmp_path: Path) -> None:
    doc = ("# S\n\nRun the script.\n\nIf the script fails, run manually:\n\n```bash\ngh api notifications\n```\n\n"
           "Report.\n")
    reqs = parse_requirements('branch "If the script fails, run manually:" to "gh api notifications"', doc)

    def machine(edges: str) -> Machine:
        return _module(tmp_path, doc, f"""  var status: int
  start script
  tool script {{
    from "SKILL.md":3
    writes status = exit_code
    call bash(command: "python fetch.py")
    {edges}
  }}
  tool manual {{
    from "SKILL.md":5-9
    call bash(command: "gh api notifications")
    -> report
  }}
  model report {{
    from "SKILL.md":11
    prompt "Report."
    -> done
  }}
""", tools="bash")

    # `manual` holds the condition and the command: the script's failure edge into it is the branch
    assert score(machine("when status != 0 -> manual\n    -> report"), reqs).verdicts[0].ok
    # every run goes the manual way: nothing is decided
    assert score(machine("-> manual"), reqs).verdicts[0].why == "no decision at the condition leads there"


def test_a_review_counts_only_for_the_machine_and_requirement_it_saw(tmp_path: Path) -> None:
    doc = "# R\n\n1. Fetch the data.\n2. Report it.\n"
    (tmp_path / "SKILL.md").write_text(doc)
    reqs = parse_requirements('order "Report it." before "Fetch the data."\nrequired "Report it."', doc)
    text = ('machine m {\n  source "SKILL.md"\n  start fetch\n  model fetch {\n    from "SKILL.md":3\n'
            '    prompt "Fetch."\n    -> report\n  }\n  model report {\n    from "SKILL.md":4\n    prompt "Report."\n'
            '    -> done\n  }\n  terminal done: success\n  fallback\n}\n')
    verdicts = score(_checked(tmp_path / "m.skm", text), reqs).verdicts
    assert [v.ok for v in verdicts] == [False, True]
    key = machine_key(text)
    # the key does not depend on where the machine was written (its `from` paths to the document)
    assert machine_key(text.replace('"SKILL.md"', '"../../skills/r/SKILL.md"')) == key
    table = tmp_path / "review.tsv"
    table.write_text("skill\tmachine\tfailure\trequirement\tmeasure\tverdict\treviewer\n"
                     f"r\t{key}\tF1\t{reqs[0].text}\tskips it\tQ\tfine\n")
    review = load_review(table)
    assert accepted("r", key, verdicts, review) == [verdicts[0]]
    assert reviewed_failures("r", key, verdicts, review) == [verdicts[0]]
    # another machine (a prompt changed), another skill, or a verdict other than Q: not accepted
    assert accepted("r", machine_key(text.replace("Fetch.", "Get.")), verdicts, review) == []
    assert accepted("s", key, verdicts, review) == []
    table.write_text(table.read_text().replace("\tQ\t", "\tR\t"))
    assert accepted("r", key, verdicts, load_review(table)) == []
    assert reviewed_failures("r", key, verdicts, load_review(table)) == [verdicts[0]]


_ZONES = "# G\n\n## Protocol\n\nCheck the zone.\n\n- RED: stop now.\n- GREEN: go on.\n\n## Report\n\nReport.\n"


def test_a_branch_is_decided_inside_the_block_its_condition_opens(tmp_path: Path) -> None:
    reqs = parse_requirements('branch "Protocol" to "RED: stop now."', _ZONES)

    def machine(check_from: str) -> Machine:
        return _module(tmp_path, _ZONES, f"""  var red: bool
  start note
  model note {{
    from "SKILL.md":3
    prompt "Note the protocol."
    -> check
  }}
  judge check {{
    from "SKILL.md":{check_from}
    writes red
    prompt "Is the zone red?"
    when red -> halt
    -> report
  }}
  model halt {{
    from "SKILL.md":7
    prompt "Say the session stops."
    -> stopped
  }}
  model report {{
    from "SKILL.md":13
    prompt "Report."
    -> done
  }}
  terminal stopped: partial
""")

    # `note` holds the heading's line and decides nothing; `check`, made inside the section, decides the arm
    assert score(machine("5"), reqs).verdicts[0].ok
    # a decision made outside the section is not the condition's
    assert score(machine("13"), reqs).verdicts[0].why == "no decision at the condition leads there"


def test_a_step_that_prepares_a_call_is_the_steps_tool(tmp_path: Path) -> None:
    doc = "# I\n\n1. Install from the list when the user names a skill.\n\n## Scripts\n\nRun `install.py NAME`.\n"
    reqs = parse_requirements('tool "Install from the list when the user names a skill." bash', doc)

    def machine(reads: str) -> Machine:
        return _module(tmp_path, doc, f"""  input task: str
  var name: str
  start pick
  model pick {{
    from "SKILL.md":3
    reads task
    writes name
    prompt "Which skill?"
    -> install
  }}
  tool install {{
    from "SKILL.md":7
    reads {reads}
    call bash(command: "python install.py " ++ quote({reads}))
    -> done
  }}
""", tools="bash")

    # `pick` drafts the argument the next state's bash call runs with: the step is done with bash
    assert score(machine("name"), reqs).verdicts[0].ok
    # a call that takes nothing the step drafted is not the step's
    assert score(machine("task"), reqs).verdicts[0].why == "no tool state calls `bash` there"


def test_a_state_holding_the_readers_line_may_be_the_reader(tmp_path: Path) -> None:
    doc = "# R\n\n1. Run the script.\n2. Present the results:\n   show them as a table.\n"
    reqs = parse_requirements('reads "show them as a table." from "Run the script."', doc)

    def machine(present_reads: str) -> Machine:
        return _module(tmp_path, doc, f"""  input task: str
  var out: str
  var where: str
  start run
  tool run {{
    from "SKILL.md":3
    writes out = stdout
    call bash(command: "python script.py")
    -> present
  }}
  model present {{
    from "SKILL.md":4-5
    reads {present_reads}
    prompt "Present the results."
    -> where_to
  }}
  model where_to {{
    from "SKILL.md":5
    reads task
    writes where
    prompt "Where should the table go?"
    -> done
  }}
""", tools="bash")

    # `where_to`, the narrowest state at line 5, only picks a path; `present`, holding the line too, reads the output
    assert score(machine("out"), reqs).verdicts[0].ok
    assert "reads nothing only run produced" in score(machine("task"), reqs).verdicts[0].why


# ---------------------------------------------------------------- rule kinds the checker proves


def _rules(target: str = "write_failed", ends: str = "write_failed", reads: str = "save from think",
           outcome: str = "failed") -> str:
    """The registry's example machine (think -> save, a failed terminal) with an `ends` and a `reads` rule."""
    return EXAMPLE_MACHINE.format(failure=target,
                                  rule=f'ends {ends} in {outcome} "If the write fails, stop with failure."'
                                       f'\n  rule reads {reads} "Write the answer you found."')


def test_ends_and_reads_rules_are_proved_or_reported() -> None:
    good = skillc.check(_rules())
    assert not [d for d in good.diagnostics if d.is_error], codes(good.diagnostics)
    assert "SKM260" in codes(skillc.check(_rules(target="done", ends="save")).diagnostics)
    assert "SKM261" in codes(skillc.check(_rules(reads="think from save")).diagnostics)
    assert "SKM140" in codes(skillc.check(_rules(outcome="lost")).diagnostics)


def test_new_rule_kinds_print_back_as_written() -> None:
    from skillc.syntax.printer import print_module

    again = print_module(skillc.parse(_rules()).module)
    assert 'rule ends write_failed in failed "If the write fails, stop with failure."' in again
    assert 'rule reads save from think "Write the answer you found."' in again


# ---------------------------------------------------------------- the honest demo


def _run(machine, outputs: dict, tools: dict | None, workdir: Path):
    executor = ScriptedExecutor({"outputs": outputs, "tools": tools or {}})
    box = ToolBox.default(cwd=str(workdir))
    return Interpreter(machine, executor, box, RunOptions(retries=0)).run({"task": "6 x 7? A) 40 B) 42 C) 44"})


def _answers(letter: str, same: str = "yes") -> dict:
    outputs = {name: [{var: "x"}] for name, var in [
        ("analyse_question", "analyse_question_result"), ("restate_being_asked", "restate_being_asked_result"),
        ("work_problem_scratch", "work_problem_scratch_result"), ("go_through_options", "go_through_options_result"),
        ("choose_option_pick", "choose_option_pick_result"), ("verify_consistency_compare",
                                                              "verify_consistency_compare_result")]}
    outputs.update({"if_two_options_still": [{"two_options_still": "no"}],
                    "if_analysis_incomplete": [{"analysis_incomplete": "no"}],
                    "build_write_command": [{"chosen_letter": letter}],
                    "verify_command_contains": [{"command_contains_verdict": "passed"}],
                    "if_content_exactly_chosen": [{"content_exactly_chosen": same}],
                    "if_content_differs_extra": [{"content_differs_extra": "yes"}]})
    return outputs


def test_built_livemath_really_writes_and_reads_back_the_letter(tmp_path: Path) -> None:
    m = _livemath(tmp_path).machine
    work = tmp_path / "run"
    work.mkdir()
    r = _run(m, _answers("B"), None, work)
    assert (work / "answer.txt").read_text() == "B"
    assert (r.outcome, r.terminal) == ("success", "verified")
    assert r.evidence["read_file_back_output"] == "B"  # success carries the delivered letter


def test_built_livemath_fails_when_the_write_fails(tmp_path: Path) -> None:
    m = _livemath(tmp_path).machine
    work = tmp_path / "run"
    work.mkdir()
    r = _run(m, _answers("B"), {"write_answer_run": [{"stdout": "", "exit_code": 1}]}, work)
    assert (r.outcome, r.terminal) == ("failed", "failure")
    r = _run(m, _answers("B"), {"read_file_back": [{"stdout": "", "exit_code": 2}]}, work)
    assert (r.outcome, r.terminal) == ("failed", "failure")


def test_built_livemath_is_partial_when_the_content_differs(tmp_path: Path) -> None:
    m = _livemath(tmp_path).machine
    work = tmp_path / "run"
    work.mkdir()
    r = _run(m, _answers("B", same="no"), {"read_file_back": [{"stdout": "B\n", "exit_code": 0}]}, work)
    assert (r.outcome, r.terminal) == ("partial", "unverified")


def test_built_livemath_success_needs_the_file_to_hold_the_letter_whatever_the_judges_say(tmp_path: Path) -> None:
    """The model's verdicts cannot take a run past a mismatch the machine can see."""
    m = _livemath(tmp_path).machine
    assert m.variables["chosen_letter"].type.labels == ("A", "B", "C", "D", "E")  # the letter, not any text
    work = tmp_path / "run"
    work.mkdir()
    both_wrong = _answers("B")  # the judges say "same" and then "not different"
    both_wrong["if_content_differs_extra"] = [{"content_differs_extra": "no"}]
    r = _run(m, both_wrong, {"read_file_back": [{"stdout": "6 times 7", "exit_code": 0}]}, work)
    assert (r.outcome, r.terminal) == ("partial", "unverified")
    r = _run(m, both_wrong, None, work)  # the real read-back holds the letter: success, whatever judge 1 said
    assert r.outcome == "success" and r.evidence["read_file_back_output"] == "B"


# ---------------------------------------------------------------- asking the user


def test_questions_to_the_user_are_answered_by_the_user(tmp_path: Path) -> None:
    md = tmp_path / "SKILL.md"
    md.write_text("# Deploy\n\n1. Ask the user which environment to deploy to.\n2. Deploy the build there.\n")
    result = build(md)
    assert result.ok, codes(result.diagnostics)
    m = result.machine
    ask = m.states["ask_user_environment"]
    assert ask.kind == "tool" and ask.call.tool == "ask_user"
    deploy = m.states["deploy_build"]
    assert "ask_user_environment_answer" in deploy.reads
    asked: list[str] = []
    box = ToolBox.default()
    box.functions["ask_user"] = AskUser(answer=lambda q: asked.append(q) or "staging")
    executor = ScriptedExecutor({"outputs": {"deploy_build": [{"deploy_build_result": "done"}]}})
    r = Interpreter(m, executor, box, RunOptions(retries=0)).run({"task": "deploy"})
    assert r.outcome == "success" and asked == ["Ask the user which environment to deploy to."]
    # Without a user to ask, the run fails instead of guessing.
    box.functions["ask_user"] = AskUser(stdin=_Closed())
    r = Interpreter(m, executor, box, RunOptions(retries=0)).run({"task": "deploy"})
    assert r.outcome == "failed"


class _Closed:
    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        return ""


# ---------------------------------------------------------------- bad input


def test_a_reference_to_a_missing_step_is_reported_with_its_line(tmp_path: Path) -> None:
    md = tmp_path / "SKILL.md"
    md.write_text("# Skill\n\n1. Read the file.\n   - If it is empty, continue to step 7.\n2. Summarise it.\n")
    result = build(md)
    assert result.ok, codes(result.diagnostics)
    missing = [d for d in result.diagnostics if str(d.code) == "SKM316"]
    assert missing and missing[0].span.start_pos[0] == 4


# ---------------------------------------------------------------- the LLM compiler, same measure


def _llm(name: str):
    import json

    script = json.loads((CORPUS / "llm" / f"{name}.json").read_text())
    return measure(CORPUS / f"{name}.req", ScriptedExecutor(script))


def test_llm_redrafts_from_an_unproven_requirement_rule() -> None:
    s, built = _llm("03_refund_policy")
    assert built.ok, codes(built.diagnostics)
    # the first draft's `rule ends issue_refund in failed` did not hold: its SKM260 went back to the model
    assert [r.ok for r in built.rounds] == [False, True]
    assert any("SKM260" in e for e in built.rounds[0].errors)
    structural, _ = measure(CORPUS / "03_refund_policy.req")
    assert s.correct == structural.correct


def test_llm_build_that_checks_clean_can_still_be_unfaithful() -> None:
    s, built = _llm("16_translation_stop")
    assert built.ok, codes(built.diagnostics)
    failed = [v.requirement.text for v in s.verdicts if not v.ok]
    assert any(t.startswith('ends "If the file cannot be saved') for t in failed)
    structural, _ = measure(CORPUS / "16_translation_stop.req")
    assert s.correct < structural.correct


def test_contradictory_orders_and_foreign_commands_are_reported(tmp_path: Path) -> None:
    md = tmp_path / "SKILL.md"
    md.write_text("# Deploy\n\n## Rules\n\n- Test the build before you deploy the build.\n"
                  "- Deploy the build before you test the build.\n\n## Procedure\n\n1. Test the build.\n"
                  "2. Deploy the build.\n3. Run the cleanup script.\n\n"
                  "   ```powershell\n   Remove-Item build\n   ```\n")
    result = build(md)
    assert result.ok, codes(result.diagnostics)
    clash = [d for d in result.diagnostics if str(d.code) == "SKM318"]
    assert clash and clash[0].span.start_pos[0] == 5
    assert not [r for r in result.machine.rules if r.kind == "order"]
    foreign = [d for d in result.diagnostics if str(d.code) == "SKM319"]
    assert foreign and foreign[0].span.start_pos[0] == 14
    assert not [s for s in result.machine.states.values() if s.kind == "tool"]


def test_a_program_named_on_the_anchors_line_is_run_by_its_step(tmp_path: Path) -> None:
    """An anchor no state's range holds stands for the tool states running the script (or the code line's command)
    it names; a `tool` requirement is met by such a state wherever it was made from."""
    doc = ("# Gen\n\n## Quick start\n\nUse the `scripts/gen.py` script to make images.\n\n```bash\n"
           "helm dependency update\n```\n\n## Steps\n\n1. Plan the images.\n2. Report.\n")
    reqs = parse_requirements('tool "Use the scripts/gen.py script to make images" bash\n'
                              'required "Use the scripts/gen.py script to make images"\n'
                              'order "Plan the images." before "Use the scripts/gen.py script"\n'
                              'tool "helm dependency update" bash\n', doc)

    def machine(script: str, command: str, runner: str = "python3") -> Machine:
        return _module(tmp_path, doc, f"""  start plan
  model plan {{
    from "SKILL.md":13
    prompt "Plan the images."
    -> deps
  }}
  tool deps {{
    from "SKILL.md":13
    call bash(command: "{command} .")
    -> make
  }}
  tool make {{
    from "SKILL.md":14
    call bash(command: "{runner} " ++ quote("{script}") ++ " --out a.png")
    -> done
  }}
""", tools="bash")

    assert [v.ok for v in score(machine("scripts/gen.py", "helm dependency update"), reqs).verdicts] == [True] * 4
    others = score(machine("scripts/draw.py", "helm lint"), reqs).verdicts
    assert [v.why for v in others] == ["no tool state calls `bash` there", "no state for it",
                                       "no state at the second anchor", "no tool state calls `bash` there"]
    # a name counts as a whole word: `regen.py` is not `gen.py`, nor `helm dependency updates` the command
    assert not any(v.ok for v in score(machine("scripts/regen.py", "helm dependency updates"), reqs).verdicts[::3])
    # a command that only names the script does not run it
    assert not any(v.ok for v in score(machine("scripts/gen.py", "echo helm dependency update", runner="test -f"),
                                       reqs).verdicts)


def test_a_script_named_with_its_subcommand_is_that_subcommand(tmp_path: Path) -> None:
    doc = "# T\n\n```bash\npython scripts/tool.py build --release\n```\n\n1. Report.\n"
    reqs = parse_requirements('required "python scripts/tool.py build --release"', doc)

    def machine(sub: str) -> Machine:
        return _module(tmp_path, doc, f"""  start run
  tool run {{
    from "SKILL.md":7
    call bash(command: "python3 scripts/tool.py {sub} --release")
    -> done
  }}
""", tools="bash")

    assert score(machine("build"), reqs).verdicts[0].ok
    assert not score(machine("init"), reqs).verdicts[0].ok


def test_the_state_running_the_program_a_step_names_is_the_step(tmp_path: Path) -> None:
    """Among the states made from a step's line, those running the program it names are the step, however narrow
    a handler made from the same line is."""
    doc = "# F\n\n1. Check auth.\n2. Run scripts/fetch.py; if it fails, ask the user to log in.\n3. Number them.\n"
    reqs = parse_requirements('order "Run scripts/fetch.py" before "Number them."', doc)

    def machine(script: str) -> Machine:
        return _module(tmp_path, doc, f"""  var status: int
  start auth
  model auth {{
    from "SKILL.md":3
    prompt "Check auth."
    -> fetch
  }}
  tool fetch {{
    from "SKILL.md":3-4
    writes status = exit_code
    call bash(command: "python3 {script}")
    when status != 0 -> relogin
    -> number
  }}
  tool relogin {{
    from "SKILL.md":4
    call ask_user(question: "Please run gh auth login.")
    -> fetch
  }}
  model number {{
    from "SKILL.md":5
    prompt "Number them."
    -> done
  }}
""", tools="bash, ask_user")

    assert score(machine("scripts/fetch.py"), reqs).verdicts[0].ok
    # the narrowest state at the line, the question asked when the fetch fails, is not passed on every run
    assert score(machine("scripts/other.py"), reqs).verdicts[0].why == "auth -> fetch -> number skips it"


def test_a_branch_may_pass_further_questions_before_its_target(tmp_path: Path) -> None:
    """`branch`: a question's arm that goes on to X through another question (a precondition the skill states
    beside the step) still leads there; an action in between does not."""
    reqs = parse_requirements('branch "If it exists" to "Publish the build"', _DEPLOY)
    ask = _deploy(tmp_path, {"load": "publish", "publish": "report", "report": "done"})
    text = (tmp_path / "m.skm").read_text()
    checked = text.replace("    when exists -> load\n", "    when exists -> ready\n").replace(
        "  terminal done: success\n", """  judge ready {
    from "SKILL.md":5
    reads exists
    prompt "Is it ready to publish?"
    when exists -> publish
    -> report
  }
  terminal done: success
""")
    assert score(ask, reqs).verdicts[0].ok
    assert score(_checked(tmp_path / "m.skm", checked), reqs).verdicts[0].ok
    # both ways lead to the same question before X: the first decides nothing about it
    both = checked.replace("    -> report\n  }\n  model load", "    -> ready\n  }\n  model load")
    assert both != checked and not score(_checked(tmp_path / "m.skm", both), reqs).verdicts[0].ok
    # an action that may go around X stands between the decision and X
    acted = text.replace("    when exists -> load\n", "    when exists -> ready\n").replace(
        "  terminal done: success\n", """  model ready {
    from "SKILL.md":5
    reads exists
    prompt "Get it ready."
    when exists -> publish
    -> report
  }
  terminal done: success
""")
    assert not score(_checked(tmp_path / "m.skm", acted), reqs).verdicts[0].ok


def test_a_heading_decides_by_the_states_of_its_section_when_its_own_state_does_not(tmp_path: Path) -> None:
    """`branch "Heading" to "X"`: the state made from the heading's line saves a report or handles its own failure;
    the decision inside the section is the branch."""
    doc = "# G\n\n## Protocol\n\n- Check the budget.\n- If it is red, STOP.\n- Otherwise go on.\n"
    reqs = parse_requirements('branch "Protocol" to "STOP"', doc)

    judge = "judge check {\n    writes level\n    when level == red -> stop\n    -> go_on"

    def machine(edges: str, check: str = judge, start: str = "measure", stopped: str = "done") -> Machine:
        return _module(tmp_path, doc, f"""  enum Level {{ red, green }}
  var level: Level
  var status: int
  start {start}
  tool measure {{
    from "SKILL.md":3
    writes status = exit_code
    call bash(command: "wc -l log.txt")
    {edges}
  }}
  {check}
    from "SKILL.md":5
    prompt "Is the budget red?"
  }}
  model stop {{
    from "SKILL.md":6
    prompt "Stop."
    -> {stopped}
  }}
  model go_on {{
    from "SKILL.md":7
    prompt "Go on."
    -> done
  }}
  terminal broken: failed
""", tools="bash")

    # the heading's state only handles its own failure: the section's judge decides
    assert score(machine("when status != 0 -> broken\n    -> check"), reqs).verdicts[0].ok
    # the section's state always stops: nothing is decided
    assert not score(machine("when status != 0 -> broken\n    -> check", check="model check {\n    -> stop"),
                     reqs).verdicts[0].ok
    # every run stops first, and the section's judge only sends it back to stop again: the stop is not its choice
    again = judge.replace("-> go_on", "-> measure")
    assert not score(machine("when status != 0 -> broken\n    -> done", check=again, start="stop", stopped="check"),
                     reqs).verdicts[0].ok


def test_a_reader_may_use_what_a_later_state_made_of_the_product(tmp_path: Path) -> None:
    """`reads "B" from "A"`: B may read what a state after A made of A's product, but not a value made before A,
    nor one made without A that reaches B."""
    doc = "# R\n\n1. Fetch the issue.\n2. Write the summary.\n"
    reqs = parse_requirements('reads "Write the summary." from "Fetch the issue."', doc)

    def machine(middle: str, start: str = "fetch") -> Machine:
        return _module(tmp_path, doc, f"""  input topic: str
  var issue: str
  var summary: str
  start {start}
  model fetch {{
    from "SKILL.md":3
    writes issue
    prompt "Fetch it."
    -> {"draft" if start == "fetch" else "write"}
  }}
{middle}
  model write {{
    from "SKILL.md":4
    reads summary
    prompt "Write it."
    -> done
  }}
""")

    draft = """  model draft {
    reads issue
    writes summary
    prompt "Draft it."
    -> write
  }"""
    assert score(machine(draft), reqs).verdicts[0].ok
    # the summary is made before the issue is fetched
    early = draft.replace("reads issue", "reads topic").replace("-> write", "-> fetch")
    assert not score(machine(early, start="draft"), reqs).verdicts[0].ok
    # a canned summary made without the issue also reaches the writer, past a state that reads the issue
    canned = """  model draft {
    reads issue
    writes issue_ok
    prompt "Is it there?"
    -> canned
  }
  model canned {
    writes summary
    prompt "Say something."
    -> log
  }
  model log {
    reads issue
    prompt "Log it."
    -> write
  }"""
    assert not score(machine(canned.replace("writes issue_ok", "writes summary")), reqs).verdicts[0].ok
