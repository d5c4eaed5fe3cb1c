"""The search state: the patch tree, hypothesis lifecycle, symmetric expansion and pruning of the evidence matrix."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from skillc.improve.edits import Edit, Patch
from skillc.improve.evolve.state import (
    Case,
    CaseBank,
    Child,
    Evidence,
    HypothesisStore,
    Knowledge,
    Operation,
    OperationError,
    Output,
    PatchTree,
    add_children,
    apply_operation,
    expand_case,
    expand_node,
    operate,
    record_visit,
)


def _output(tag: str) -> Output:
    return Output(Path(f"/cached/{tag}"), Path(f"/cached/{tag}.jsonl"), 0)


def _case(case_id: str, *owners: str) -> Case:
    return Case(case_id, "shell", "true", "hard", frozenset(owners))


def test_children_get_ids_priors_and_the_parent_is_expanded() -> None:
    tree = add_children(PatchTree.rooted("m0"), 0, [Child("m1", 1, "a"), Child("m2", 2, "b")], (0.7, 0.3))
    assert [n.id for n in tree.nodes] == [0, 1, 2]
    assert tree.root.children == (1, 2) and tree.root.expanded
    assert (tree.node(2).parent, tree.node(2).rank, tree.node(2).prior, tree.node(2).name) == (0, 2, 0.3, "b")
    tree = add_children(tree, 2, [Child("m3", 1)], (1.0,))
    assert tree.path(3) == (0, 2, 3)
    with pytest.raises(ValueError):
        add_children(tree, 0, [Child("m4", 1)], (0.5, 0.5))  # a prior per child, exactly


def test_a_child_keeps_the_patch_that_made_it() -> None:
    patch = Patch((Edit("set_prompt", state="a", text="x"),))
    tree = add_children(PatchTree.rooted("m0"), 0, [Child("m1", 1, "p", patch=patch), Child("m2", 2, "t")], (0.7, 0.3))
    assert tree.node(1).patch == patch and tree.node(2).patch is None and tree.root.patch is None


def test_visits_count_along_the_selection_path() -> None:
    tree = add_children(PatchTree.rooted("m0"), 0, [Child("m1", 1), Child("m2", 2)], (0.7, 0.3))
    tree = add_children(tree, 1, [Child("m3", 1)], (1.0,))
    tree = record_visit(record_visit(tree, 3), 2)
    assert [n.visits for n in tree.nodes] == [2, 1, 1, 1]


def test_hypothesis_lifecycle_add_refine_refute() -> None:
    store = apply_operation(HypothesisStore(), 0, Operation("add", "h1", "wrong format", "answer.txt is not JSON"))
    store = apply_operation(store, 1, Operation("refine", "h1", "keys are missing", new_id="h2"))
    h1, h2 = store.get("h1"), store.get("h2")
    assert h1 is not None and h2 is not None
    assert (h1.state, h2.state, h2.parent, h2.node) == ("refined", "active", "h1", 1)
    assert h2.prediction == "answer.txt is not JSON"  # a refinement keeps what it does not restate
    store = apply_operation(store, 2, Operation("refute", "h2"))
    assert store.active() == () and [op.op for _, op in store.log] == ["add", "refine", "refute"]


@pytest.mark.parametrize("op", [Operation("add", "h1"), Operation("refute", "h9"), Operation("refine", "h1"),
                                Operation("refine", "h1", new_id="h1")])
def test_operations_that_do_not_fit_the_store_are_refused(op: Operation) -> None:
    store = apply_operation(HypothesisStore(), 0, Operation("add", "h1", "d", "p"))
    with pytest.raises(OperationError):
        apply_operation(store, 0, op)


def test_refuting_an_already_refuted_hypothesis_is_refused() -> None:
    store = apply_operation(HypothesisStore(), 0, Operation("add", "h1", "d", "p"))
    store = apply_operation(store, 0, Operation("refute", "h1"))
    with pytest.raises(OperationError):
        apply_operation(store, 0, Operation("refute", "h1"))


def _evaluated_tree(count: int) -> PatchTree:
    tree = PatchTree.rooted("m0")
    tree = add_children(tree, 0, [Child(f"m{i}", i) for i in range(1, count)], [1 / count] * (count - 1))
    for node in tree.nodes:
        tree = tree.replace(attrs.evolve(node, output=_output(str(node.id))))
    return tree


def test_a_new_node_runs_every_existing_case() -> None:
    tree = _evaluated_tree(2)
    bank = CaseBank((_case("c1", "h"), _case("c2", "h")))
    ran: list[tuple[str, str]] = []

    def run(case: Case, output: Output) -> int:
        ran.append((case.id, output.workdir.name))
        return int(case.id == "c2")

    evidence = Evidence((0,), ("c1", "c2"), frozenset({(0, "c1")}))
    evidence = expand_node(evidence, tree.node(1), bank, run)
    assert ran == [("c1", "1"), ("c2", "1")]
    assert evidence.rows == (0, 1) and evidence.row(0) == (1, 0) and evidence.row(1) == (0, 1)
    assert expand_node(evidence, tree.node(1), bank, run) is evidence  # a row is added once


def test_a_node_that_has_not_run_adds_no_row() -> None:
    evidence = Evidence((), ("c1",))
    assert expand_node(evidence, PatchTree.rooted("m").root, CaseBank((_case("c1", "h"),)), lambda c, o: 1) \
        == evidence


def test_a_new_case_runs_on_every_cached_output() -> None:
    tree = _evaluated_tree(3)
    evidence = Evidence((0, 1, 2))
    seen: list[str] = []

    def run(case: Case, output: Output) -> int:
        seen.append(output.workdir.name)
        return int(output.workdir.name != "1")

    evidence = expand_case(evidence, _case("c1", "h"), tree, run)
    assert seen == ["0", "1", "2"]
    assert evidence.columns == ("c1",) and [evidence.value(n, "c1") for n in (0, 1, 2)] == [1, 0, 1]


def test_refuting_prunes_only_the_columns_the_hypothesis_alone_owns() -> None:
    store = HypothesisStore()
    for h in ("h1", "h2"):
        store = apply_operation(store, 0, Operation("add", h, "d", "p"))
    bank = CaseBank((_case("only1", "h1"), _case("shared", "h1", "h2"), _case("only2", "h2")))
    evidence = Evidence((0, 1), ("only1", "shared", "only2"),
                        frozenset({(0, "only1"), (1, "only1"), (0, "shared"), (1, "only2")}))
    after = operate(Knowledge(store, bank, evidence), 1, Operation("refute", "h1"))
    assert [c.id for c in after.bank.cases] == ["shared", "only2"]
    shared = after.bank.get("shared")
    assert shared is not None and shared.owners == frozenset({"h2"})
    assert after.evidence.columns == ("shared", "only2")
    assert after.evidence.passed == frozenset({(0, "shared"), (1, "only2")})
    assert after.evidence.rows == (0, 1)
    h1 = after.store.get("h1")
    assert h1 is not None and h1.state == "refuted"


def test_refuting_keeps_a_case_the_hypothesis_never_owned_even_one_nobody_owns() -> None:
    store = apply_operation(HypothesisStore(), 0, Operation("add", "h1", "d", "p"))
    bank = CaseBank((_case("mine", "h1"), _case("nobodys")))
    evidence = Evidence((0,), ("mine", "nobodys"), frozenset({(0, "mine"), (0, "nobodys")}))
    after = operate(Knowledge(store, bank, evidence), 0, Operation("refute", "h1"))
    assert [c.id for c in after.bank.cases] == ["nobodys"] and after.evidence.columns == ("nobodys",)
    assert after.evidence.passed == frozenset({(0, "nobodys")})


def test_a_refinement_passes_its_cases_on_so_refuting_the_old_one_keeps_them() -> None:
    store = apply_operation(HypothesisStore(), 0, Operation("add", "h1", "d", "p"))
    knowledge = Knowledge(store, CaseBank((_case("c1", "h1"),)), Evidence((0,), ("c1",)))
    knowledge = operate(knowledge, 0, Operation("refine", "h1", "sharper", new_id="h2"))
    case = knowledge.bank.get("c1")
    assert case is not None and case.owners == frozenset({"h2"})  # only active hypotheses own cases
    knowledge = operate(knowledge, 0, Operation("refute", "h2"))
    assert knowledge.bank.cases == () and knowledge.evidence.columns == ()


def test_adding_a_known_case_only_gains_owners() -> None:
    bank = CaseBank((_case("c1", "h1"),)).add(_case("c1", "h2"))
    assert len(bank.cases) == 1 and bank.cases[0].owners == frozenset({"h1", "h2"})
