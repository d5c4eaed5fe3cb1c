"""Model-backed reflection and self-verifier over a real skillc executor (`scripted:` here): the prompts and their size
bound, the per-request schemas (the machine's names as enums, SKILL.md edits only for a built machine), one retry on
an unusable reply (cut off, wrong shape, off the schema), SKM845 after the second, RoleError when the model fails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import jsonschema
import pytest

from skillc.improve.edits import EDIT_FIELDS, EDIT_OPS, Patch, SkillEdit
from skillc.improve.evolve import codes
from skillc.improve.evolve.cases import VerifyRequest
from skillc.improve.evolve.models import (
    ECHO_CHARS,
    MACHINE_CHARS,
    MAX_CHILDREN,
    PROSE_CHARS,
    TRACE_CHARS,
    ModelReflector,
    ModelVerifier,
    describe_output,
    model_roles,
    reflect_schema,
    skill_lines,
    verify_schema,
)
from skillc.improve.evolve.patch import apply_patch, build_skill
from skillc.improve.evolve.roles import ReflectRequest, RoleError
from skillc.improve.evolve.state import (
    Case,
    CaseBank,
    Evidence,
    Hypothesis,
    HypothesisStore,
    Knowledge,
    Node,
    Output,
    PatchTree,
)
from skillc.runtime.executors import make_executor
from skillc.runtime.executors.base import BaseExecutor, Executor, Response
from skillc.runtime.prompts import Request

MACHINE = """machine m {
  input question: str
  var answer: str
  start solve

  model solve {
    reads question
    writes answer
    prompt "Work out the answer."
    when answer == "" -> fallback
    -> done
  }

  terminal done: success { requires answer }

  fallback
}
"""
SKILL = "# Answer\n\nWork out the answer to the question.\nWrite the answer to answer.txt.\n"
PATCH = {"machine": [{"op": "set_prompt", "state": "solve", "text": "Answer with a JSON object."}]}
CHILD = {"name": "json-output", "rank": 1, "patch": PATCH}
GOOD_REFLECTION = {"operations": [{"op": "add", "id": "h1", "description": "not JSON", "prediction": "no braces"}],
                   "children": [CHILD]}
CASE = {"id": "json", "kind": "python", "source": "def check(workdir, outputs, trace): return True",
        "strength": "hard", "description": "always"}


def _executor(tmp_path: Path, outputs: dict[str, list[Any]]) -> Executor:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"outputs": outputs}), encoding="utf-8")
    return make_executor(f"scripted:{path}")


def _request(output: Output, *, must: bool = False, machine: str = MACHINE, skill: str | None = None,
             ) -> ReflectRequest:
    tree = PatchTree.rooted(machine)
    root = attrs.evolve(tree.root, output=output, skill=skill)
    store = HypothesisStore((Hypothesis("h0", "the value is wrong", "answer.txt lacks 42"),))
    bank = CaseBank((Case("has42", "shell", "grep -q 42 answer.txt", "semantic", frozenset({"h0"}), "holds 42"),))
    knowledge = Knowledge(store, bank, Evidence((0,), ("has42",), frozenset({(0, "has42")})))
    return ReflectRequest(root, tree.replace(root), knowledge, 3 if must else 1, must)


@attrs.define
class Recording(BaseExecutor):
    """An executor answering from a list, recording each request, with a `max_tokens` like the local one."""

    replies: list[Response]
    max_tokens: int = 16
    requests: list[Request] = attrs.Factory(list)
    name: str = "recording"

    def complete(self, request: Request) -> Response:
        self.requests.append(request)
        return self.replies.pop(0)


def _props(schema: dict[str, Any], *path: str) -> dict[str, Any]:
    """The sub-schema at a path of property names and `items`."""
    for step in path:
        schema = schema["items"] if step == "items" else schema["properties"][step]
    return schema


# ---------------------------------------------------------------- the prompts


def test_the_reflection_prompt_shows_the_machine_the_run_and_the_evidence(output: Output, tmp_path: Path) -> None:
    reflector = ModelReflector(_executor(tmp_path, {}))
    prompt = reflector.prompt(_request(output, must=True))
    assert MACHINE.rstrip() in prompt and 'answer.txt: "42\\n"' in prompt
    assert "- h0 (active): the value is wrong" in prompt and "- has42 (semantic, for h0): holds" in prompt
    assert "You must propose at least one fixed version" in prompt
    assert all(op in prompt for op in EDIT_OPS)  # every edit op is offered, with its fields where known
    assert "SKILL.md" not in prompt  # no SKILL.md: no skill edits offered


def test_the_trace_is_summarised_one_line_per_step(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    steps = [{"type": "step", "step": i, "state": "write", "kind": "tool", "tool_result": {"exit_code": 0},
              "tool_call": {"tool": "bash", "args": {"command": f"echo {i} > answer.txt"}}, "target": "write"}
             for i in range(500)]
    footer = {"type": "footer", "skillc.outcome": "failed", "skillc.terminal": "fallback",
              "skillc.reason": {"message": "edge 2 of `write` leads to the fallback"}}
    trace = tmp_path / "trace.jsonl"
    trace.write_text("\n".join(json.dumps(r) for r in [{"type": "header"}, *steps, footer]), encoding="utf-8")
    text = describe_output(Output(work, trace, 0))
    summary = text.split("the run, step by step:\n", 1)[1]
    assert len(summary) <= TRACE_CHARS + 2 and summary.startswith("…\n")  # the end is kept, the start elided
    assert summary.endswith("end: failed at fallback; edge 2 of `write` leads to the fallback")
    assert '499 write (tool): {"tool":"bash","args":{"command":"echo 499 > answer.txt"}} => {"exit_code":0} -> write' \
        in summary


def test_a_long_machine_and_a_long_run_keep_the_prompt_bounded(tmp_path: Path) -> None:
    states = "\n".join(f'  model s{i} {{\n    prompt "Step {i} of a very long procedure, with some words."\n'
                       f'    -> s{i + 1}\n  }}\n' for i in range(60))
    machine = f"machine big {{\n  start s0\n{states}\n  terminal s60: success {{}}\n\n  fallback\n}}\n"
    work = tmp_path / "work"
    work.mkdir()
    for i in range(30):
        (work / f"f{i}.txt").write_text("x" * 5000, encoding="utf-8")
    trace = tmp_path / "trace.jsonl"
    steps = [{"type": "step", "step": i, "state": f"s{i}", "kind": "model", "output": {"text": "y" * 1000},
              "target": f"s{i + 1}"} for i in range(3)]
    trace.write_text("\n".join(json.dumps(r) for r in steps) + "\n" + "z" * 100_000, encoding="utf-8")
    assert len(machine) > MACHINE_CHARS
    request = _request(Output(work, trace, 0), machine=machine)
    prose = "a long sentence about what went wrong and what the files would show " * 2
    store = HypothesisStore(tuple(Hypothesis(f"h{i}", prose[:PROSE_CHARS], prose[:PROSE_CHARS]) for i in range(20)))
    bank = CaseBank(tuple(Case(f"c{i}", "shell", "true", "hard", frozenset({f"h{i}"}), prose[:PROSE_CHARS])
                          for i in range(20)))
    knowledge = Knowledge(store, bank, Evidence((0,), tuple(c.id for c in bank.cases), frozenset()))
    prompt = ModelReflector(_executor(tmp_path, {})).prompt(attrs.evolve(request, knowledge=knowledge))
    # 6,947 characters, 1,707 Gemma 3 tokens when measured: a reply still fits the default 2048-token context
    assert len(prompt) < 7500, len(prompt)
    assert "model s2 {" in prompt and "model s3 {" in prompt and "model s40 {" not in prompt  # the visited states
    assert "- … and 22 more" in prompt and prompt.count("- … and 14 more") == 2  # files; hypotheses and cases


# ---------------------------------------------------------------- the schemas


def test_the_edit_schema_names_the_machines_states_and_the_edit_ops(output: Output) -> None:
    schema = reflect_schema(_request(output).node, ("h0",), children=3, must=False)
    variants = {v["properties"]["op"]["const"]: v for v in
                _props(schema, "children", "items", "patch", "machine", "items")["anyOf"]}
    # one variant per op of EDIT_OPS but the tool-state ops (MACHINE has no tool state), fields in EDIT_FIELDS order
    assert list(variants) == [op for op in EDIT_OPS if op not in ("set_call", "set_arg")]
    order = [field for field, _ in EDIT_FIELDS]
    assert all(list(v["properties"])[1:] == sorted(list(v["properties"])[1:], key=order.index)
               for v in variants.values())
    assert variants["set_prompt"]["properties"]["state"] == {"enum": ["solve"]}  # the state with a prompt
    assert variants["set_prompt"]["required"] == ["op", "state", "text"]
    assert variants["remove_state"]["properties"]["state"] == {"enum": ["solve", "done"]}
    assert variants["set_outcome"]["properties"]["state"] == {"enum": ["done"]}  # terminals only
    assert variants["retarget"]["properties"]["target"] == {"enum": ["solve", "done", "fallback"]}
    assert variants["remove_edge"]["properties"]["index"] == {"enum": [0, 1, 2]}  # solve has 2 edges
    assert variants["set_counter"]["properties"]["max"] == {"enum": list(range(1, 10))}
    assert _props(schema, "children", "items", "rank") == {"enum": [1, 2, 3]}
    assert _props(schema, "children")["maxItems"] == 3 and _props(schema, "children")["minItems"] == 0
    assert reflect_schema(_request(output).node, (), children=2, must=True)["properties"]["children"]["minItems"] == 1
    # refine and refute name only an active hypothesis; without one, only `add` is possible
    ops = _props(schema, "operations", "items")["anyOf"]
    assert [o["properties"]["op"] for o in ops] == [{"const": "add"}, {"const": "refine"}, {"const": "refute"}]
    assert ops[2]["properties"]["id"] == {"enum": ["h0"]}
    # a new hypothesis gets a fresh id (one an earlier, even refuted, hypothesis has is never reused)
    assert ops[0]["properties"]["id"] == ops[1]["properties"]["new_id"] == {"enum": ["h1", "h2"]}
    bare = reflect_schema(_request(output).node, (), children=3, must=False, taken=("h1", "h3"))
    assert _props(bare, "operations", "items")["properties"]["op"] == {"const": "add"}
    assert _props(bare, "operations", "items")["properties"]["id"] == {"enum": ["h2", "h4"]}


def test_an_op_the_table_does_not_know_is_offered_with_every_field(output: Output,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from skillc.improve.evolve import models

    monkeypatch.setattr(models, "EDIT_OPS", (*EDIT_OPS, "new_op"))
    variant = models.edit_schema(models.Names.of(MACHINE))["anyOf"][-1]
    assert variant["properties"]["op"] == {"const": "new_op"} and variant["required"] == ["op"]
    assert list(variant["properties"])[1:] == [field for field, _ in EDIT_FIELDS]
    assert "new_op" in models.ModelReflector(Recording([])).prompt(_request(output))


def test_skill_edits_are_offered_only_for_a_machine_built_from_its_skill_md(output: Output, tmp_path: Path) -> None:
    built = build_skill(SKILL)
    node = _request(output, machine=built, skill=SKILL).node
    lines = skill_lines(node)
    assert lines == ("# Answer", "Work out the answer to the question.", "Write the answer to answer.txt.")
    schema = reflect_schema(node, (), children=3, must=False)
    _machine_form, skill_form = _props(schema, "children", "items", "patch")["anyOf"]
    assert _props(skill_form, "skill", "items", "find") == {"enum": list(lines)}
    prompt = ModelReflector(_executor(tmp_path, {})).prompt(_request(output, machine=built, skill=SKILL))
    assert "- Write the answer to answer.txt." in prompt and '{"skill": [{"find": ' in prompt
    # a hand-written machine beside a SKILL.md, or no SKILL.md: machine edits only
    assert skill_lines(_request(output, skill=SKILL).node) == ()
    assert "anyOf" not in _props(reflect_schema(_request(output, skill=SKILL).node, (), children=3, must=False),
                                 "children", "items", "patch")
    # a line that occurs twice (or inside another line) cannot be a `find`
    twice = SKILL + "Write the answer to answer.txt.\n"
    assert "Write the answer to answer.txt." not in skill_lines(Node(0, build_skill(twice), skill=twice))
    # each offered line makes a patch that applies
    for line in lines:
        apply_patch(built, SKILL, _skill_patch(line))


def _skill_patch(line: str) -> Any:
    return Patch(skill=(SkillEdit(line, line + " Use JSON."),))


def test_the_schemas_become_grammars_without_falling_back_to_plain_json(output: Output) -> None:
    """llama-cpp-python silently decodes unconstrained JSON when a schema does not convert; these must convert."""
    grammar = pytest.importorskip("llama_cpp.llama_grammar")
    node = _request(output, machine=build_skill(SKILL), skill=SKILL).node
    for schema in (reflect_schema(node, ("h0",), children=MAX_CHILDREN, must=True), verify_schema(3)):
        assert "root ::=" in grammar.json_schema_to_gbnf(json.dumps(schema))


def test_the_verify_schema_takes_one_line_cases() -> None:
    schema = verify_schema(2)
    validator = jsonschema.Draft202012Validator(schema)
    shell = {"id": "a", "kind": "shell", "source": "test -s answer.txt", "strength": "hard", "description": ""}
    assert validator.is_valid({"cases": [CASE, shell]})
    assert not validator.is_valid({"cases": [dict(CASE, source="import os")]})  # not a `check`
    assert not validator.is_valid({"cases": [dict(shell, source='grep -q "x" a')]})  # double quotes need escapes
    assert not validator.is_valid({"cases": [CASE, shell, shell]})  # more than asked for


# ---------------------------------------------------------------- replies


def test_a_valid_reply_becomes_operations_and_children_with_patches(output: Output, tmp_path: Path) -> None:
    reflection = ModelReflector(_executor(tmp_path, {"evolve.reflect": [GOOD_REFLECTION]})).reflect(_request(output))
    assert [op.id for op in reflection.operations] == ["h1"] and reflection.diagnostics == ()
    (child,) = reflection.children
    assert (child.name, child.rank, child.machine) == ("json-output", 1, "")
    assert child.patch is not None and child.patch.machine[0].text == "Answer with a JSON object."
    assert 'prompt "Answer with a JSON object."' in apply_patch(MACHINE, None, child.patch)[0]


def test_a_cut_off_reply_is_retried_with_a_short_echo_then_skm845(output: Output) -> None:
    cut = '{"operations": [' + '{"op": "add", "id": "1"}, ' * 100
    executor = Recording([Response(cut, output_tokens=16), Response(cut, output_tokens=16)])
    reflection = ModelReflector(executor).reflect(_request(output))
    assert (reflection.children == ()
            and [str(d.code) for d in reflection.diagnostics] == [codes.UNUSABLE_ROLE_REPLY.code])
    assert "cut off at 16 tokens" in reflection.diagnostics[0].message
    retry = executor.requests[1].messages
    assert retry[1]["role"] == "assistant" and len(retry[1]["content"]) == ECHO_CHARS + 1  # shortened, then "…"
    assert "cut off" in retry[2]["content"]


def test_an_unusable_reply_is_retried_once(output: Output, tmp_path: Path) -> None:
    bad = {"operations": [], "children": [dict(CHILD, rank="first")]}
    reflection = ModelReflector(_executor(tmp_path, {"evolve.reflect": [bad, GOOD_REFLECTION]})).reflect(
        _request(output))
    assert [c.name for c in reflection.children] == ["json-output"] and reflection.diagnostics == ()


@pytest.mark.parametrize(("bad", "problem"), [
    ("not json at all", "not JSON (Expecting value at line 1 column 1)"),
    ({"operations": [], "children": [dict(CHILD, machine_file="/etc/passwd")]}, "the reply.children[0]"),
    ({"operations": [], "children": [{"name": "w", "rank": 1, "machine": MACHINE}]}, "the reply.children[0]"),
    ({"operations": [],
      "children": [dict(CHILD, patch={"machine": [{"op": "set_prompt", "state": "nowhere", "text": "x"}]})]},
     "the reply.children[0].patch.machine[0].state: 'nowhere' is not one of ['solve']"),
    ({"operations": [{"op": "refute", "id": "h9"}], "children": []}, "the reply.operations[0]"),
])
def test_two_unusable_replies_make_an_empty_round_with_skm845(output: Output, tmp_path: Path, bad: Any,
                                                              problem: str) -> None:
    reflection = ModelReflector(_executor(tmp_path, {"evolve.reflect": [bad, bad]})).reflect(_request(output))
    assert reflection.children == () and reflection.operations == ()
    assert [str(d.code) for d in reflection.diagnostics] == [codes.UNUSABLE_ROLE_REPLY.code]
    assert reflection.diagnostics[0].message.startswith(f"evolve.reflect: {problem}")


def test_a_model_that_fails_outright_is_a_role_error(output: Output, tmp_path: Path) -> None:
    with pytest.raises(RoleError, match=r"evolve.reflect"):
        ModelReflector(_executor(tmp_path, {})).reflect(_request(output))  # the script has no such state


def test_the_model_verifier_returns_drafts_and_asks_for_repairs(output: Output, tmp_path: Path) -> None:
    reflector, verifier = model_roles(_executor(tmp_path, {"evolve.verify": [{"cases": [CASE]}]}), max_cases=2)
    assert isinstance(verifier, ModelVerifier) and reflector.branching == 5
    request = VerifyRequest(Hypothesis("h1", "not JSON", "no braces"), 0, output, 2, (("json", "line 1: bad"),))
    proposal = verifier.propose(request)
    assert [d.id for d in proposal.drafts] == ["json"] and proposal.diagnostics == ()
    prompt = verifier.prompt(request)
    assert "- case json was rejected: line 1: bad" in prompt and "at most 2 cases" in prompt
    unusable = ModelVerifier(_executor(tmp_path, {"evolve.verify": [{"cases": "none"}]})).propose(request)
    assert unusable.drafts == () and [str(d.code) for d in unusable.diagnostics] == [codes.UNUSABLE_ROLE_REPLY.code]


def test_describe_output_copes_with_a_missing_work_folder(tmp_path: Path) -> None:
    text = describe_output(Output(tmp_path / "gone", tmp_path / "gone.jsonl", 0))
    assert "- (none)" in text and "(no trace)" in text
