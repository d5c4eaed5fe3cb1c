"""Model-backed reflection and self-verifier over a real skillc executor (`scripted:` here): prompts, one retry on an
unusable reply, SKM845 after the second, RoleError when the model fails outright."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import pytest

from skillc.evolve import codes
from skillc.evolve.cases import VerifyRequest
from skillc.evolve.models import ModelReflector, ModelVerifier, describe_output, model_roles
from skillc.evolve.roles import ReflectRequest, RoleError
from skillc.evolve.state import (
    Case,
    CaseBank,
    Evidence,
    Hypothesis,
    HypothesisStore,
    Knowledge,
    Output,
    PatchTree,
)
from skillc.runtime.executors import make_executor
from skillc.runtime.executors.base import Executor

CHILD = {"name": "json-output", "rank": 1, "machine": "machine fixed {}"}
GOOD_REFLECTION = {"operations": [{"op": "add", "id": "h1", "description": "not JSON", "prediction": "no braces"}],
                   "children": [CHILD]}


def _executor(tmp_path: Path, outputs: dict[str, list[Any]]) -> Executor:
    path = tmp_path / "model.json"
    path.write_text(json.dumps({"outputs": outputs}), encoding="utf-8")
    return make_executor(f"scripted:{path}")


def _request(output: Output, *, must: bool = False) -> ReflectRequest:
    tree = PatchTree.rooted("machine m {}")
    root = attrs.evolve(tree.root, output=output)
    store = HypothesisStore((Hypothesis("h0", "the value is wrong", "answer.txt lacks 42"),))
    bank = CaseBank((Case("has42", "shell", "grep -q 42 answer.txt", "semantic", frozenset({"h0"}), "holds 42"),))
    knowledge = Knowledge(store, bank, Evidence((0,), ("has42",), frozenset({(0, "has42")})))
    return ReflectRequest(root, tree.replace(root), knowledge, 3 if must else 1, must)


def test_the_reflection_prompt_shows_the_machine_the_run_and_the_evidence(output: Output, tmp_path: Path) -> None:
    reflector = ModelReflector(_executor(tmp_path, {}))
    prompt = reflector.prompt(_request(output, must=True))
    assert "machine m {}" in prompt and 'answer.txt: "42\\n"' in prompt and '"outcome": "failed"' in prompt
    assert "- h0 (active): the value is wrong" in prompt and "- has42 (semantic, for h0): holds" in prompt
    assert "You must propose at least one revised machine" in prompt


def test_a_valid_reply_becomes_operations_and_children(output: Output, tmp_path: Path) -> None:
    reflection = ModelReflector(_executor(tmp_path, {"evolve.reflect": [GOOD_REFLECTION]})).reflect(_request(output))
    assert [op.id for op in reflection.operations] == ["h1"] and reflection.diagnostics == ()
    assert [(c.name, c.rank, c.machine) for c in reflection.children] == [("json-output", 1, "machine fixed {}")]


def test_a_model_may_propose_a_child_as_a_machine_patch(output: Output, tmp_path: Path) -> None:
    patch = {"machine": [{"op": "set_prompt", "state": "a", "text": "write JSON"}]}
    reply = {"operations": [], "children": [{"name": "p", "rank": 1, "patch": patch}]}
    reflector = ModelReflector(_executor(tmp_path, {"evolve.reflect": [reply]}))
    assert '\\"patch\\"' in json.dumps(reflector.prompt(_request(output)))  # the prompt offers the patch form
    child = reflector.reflect(_request(output)).children[0]
    assert child.machine == "" and child.patch is not None and child.patch.machine[0].text == "write JSON"


def test_an_unusable_reply_is_retried_once(output: Output, tmp_path: Path) -> None:
    bad = {"operations": [], "children": [{"name": "x", "rank": "first", "machine": "m"}]}
    reflection = ModelReflector(_executor(tmp_path, {"evolve.reflect": [bad, GOOD_REFLECTION]})).reflect(
        _request(output))
    assert [c.name for c in reflection.children] == ["json-output"] and reflection.diagnostics == ()


@pytest.mark.parametrize("bad", ["not json at all",
                                 {"operations": [], "children": [dict(CHILD, machine_file="/etc/passwd")]}])
def test_two_unusable_replies_make_an_empty_round_with_skm845(output: Output, tmp_path: Path, bad: Any) -> None:
    reflection = ModelReflector(_executor(tmp_path, {"evolve.reflect": [bad, bad]})).reflect(_request(output))
    assert reflection.children == () and reflection.operations == ()
    assert [d.code for d in reflection.diagnostics] == [codes.UNUSABLE_ROLE_REPLY.code]
    if bad == "not json at all":  # the decoder's own words once, not wrapped in a second position
        assert reflection.diagnostics[0].message == \
            "evolve.reflect: not JSON (Expecting value at line 1 column 1)"


def test_a_model_that_fails_outright_is_a_role_error(output: Output, tmp_path: Path) -> None:
    with pytest.raises(RoleError, match="evolve.reflect"):
        ModelReflector(_executor(tmp_path, {})).reflect(_request(output))  # the script has no such state


def test_the_model_verifier_returns_drafts_and_asks_for_repairs(output: Output, tmp_path: Path) -> None:
    case = {"id": "json", "kind": "python", "source": "def check(w, o, t):\n    return True\n", "strength": "hard"}
    reflector, verifier = model_roles(_executor(tmp_path, {"evolve.verify": [{"cases": [case]}]}), max_cases=3)
    assert isinstance(verifier, ModelVerifier) and reflector.branching == 5
    request = VerifyRequest(Hypothesis("h1", "not JSON", "no braces"), 0, output, 2, (("json", "line 1: bad"),))
    proposal = verifier.propose(request)
    assert [d.id for d in proposal.drafts] == ["json"] and proposal.diagnostics == ()
    prompt = verifier.prompt(request)
    assert "- case json was rejected: line 1: bad" in prompt and "at most 3 cases" in prompt
    unusable = ModelVerifier(_executor(tmp_path, {"evolve.verify": [{"cases": "none"}]})).propose(request)
    assert unusable.drafts == () and [d.code for d in unusable.diagnostics] == [codes.UNUSABLE_ROLE_REPLY.code]


def test_describe_output_copes_with_a_missing_work_folder(tmp_path: Path) -> None:
    text = describe_output(Output(tmp_path / "gone", tmp_path / "gone.jsonl", 0))
    assert "- (none)" in text and "(no trace)" in text
