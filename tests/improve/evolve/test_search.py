"""The search formulas against hand-computed values: prior, score, backup, normalisation, FPU, PUCT, selection."""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import pytest

from skillc.improve.evolve import search
from skillc.improve.evolve.options import EvolveOptions
from skillc.improve.evolve.state import Case, CaseBank, Child, Evidence, Output, PatchTree, add_children, record_visit

OPTIONS = EvolveOptions()


def _output(reward: int = 0) -> Output:
    return Output(Path("/nonexistent/work"), Path("/nonexistent/trace.jsonl"), reward)


def _case(case_id: str, strength: str) -> Case:
    return Case(case_id, "shell", "true", strength, frozenset({"h"}))  # type: ignore[arg-type]


def _run(tree: PatchTree, node: int, reward: int = 0) -> PatchTree:
    """The tree after `node` ran: a cached output and a visit along its path."""
    tree = tree.replace(attrs.evolve(tree.node(node), output=_output(reward)))
    return record_visit(tree, node)


# ---------------------------------------------------------------- prior


def test_prior_of_three_ranks_is_the_softmax_of_minus_rank() -> None:
    # weights 1, e^-1, e^-2; total 1.503214724
    assert search.priors([1, 2, 3], 1.0) == pytest.approx((0.665241, 0.244728, 0.090031), abs=1e-6)


def test_prior_of_equal_ranks_is_uniform_and_beta_sharpens() -> None:
    assert search.priors([1, 1], 1.0) == pytest.approx((0.5, 0.5))
    assert search.priors([2, 1], 0.0) == pytest.approx((0.5, 0.5))
    # beta = 2, ranks 1 and 3: weights 1 and e^-4 = 0.0183156
    assert search.priors([1, 3], 2.0) == pytest.approx((0.982014, 0.017986), abs=1e-6)
    assert search.priors([], 1.0) == ()


def test_prior_is_stable_for_large_ranks() -> None:
    p = search.priors([1, 800], 1.0)
    assert p[0] == pytest.approx(1.0) and p[1] >= 0.0 and not math.isnan(p[1])


# ---------------------------------------------------------------- score


BANK = CaseBank((_case("h1", "hard"), _case("h2", "hard"), _case("s1", "semantic"), _case("s2", "semantic")))


def _evidence(*passes: str) -> Evidence:
    return Evidence((0,), ("h1", "h2", "s1", "s2"), frozenset((0, p) for p in passes))


def test_score_counts_semantic_cases_only_when_every_hard_case_passes() -> None:
    node = attrs.evolve(PatchTree.rooted("m").root, output=_output(0))
    assert search.score(node, BANK, _evidence("h1")) == pytest.approx(0.25)  # h = 1/2, σ ignored
    assert search.score(node, BANK, _evidence("h1", "s1", "s2")) == pytest.approx(0.25)  # semantics don't count
    assert search.score(node, BANK, _evidence("h1", "h2")) == pytest.approx(0.5)  # h = 1, σ = 0
    assert search.score(node, BANK, _evidence("h1", "h2", "s1")) == pytest.approx(0.75)  # (1 + 1/2) / 2
    rewarded = attrs.evolve(node, output=_output(1))
    assert search.score(rewarded, BANK, _evidence()) == pytest.approx(2.0)  # reward 1 beats every t ≤ 1
    assert search.score(rewarded, BANK, _evidence("h1", "h2", "s1", "s2")) == pytest.approx(3.0)


def test_score_without_cases_and_before_running() -> None:
    node = attrs.evolve(PatchTree.rooted("m").root, output=_output(0))
    assert search.score(node, CaseBank(), Evidence((0,))) == pytest.approx(0.5)  # h vacuously 1, σ 0
    assert search.score(PatchTree.rooted("m").root, BANK, _evidence()) is None
    # a case without an evidence column (not run yet) does not count
    only_semantic = CaseBank((_case("s1", "semantic"),))
    assert search.score(node, only_semantic, Evidence((0,), ("s1",), frozenset({(0, "s1")}))) == pytest.approx(1.0)
    assert search.score(node, only_semantic, Evidence((0,))) == pytest.approx(0.5)


# ---------------------------------------------------------------- backup and normalisation


def _tree() -> PatchTree:
    """root 0 with children 1 and 2; 1 has child 3."""
    tree = PatchTree.rooted("m0")
    tree = add_children(tree, 0, [Child("m1", 1), Child("m2", 2)], search.priors([1, 2], 1.0))
    return add_children(tree, 1, [Child("m3", 1)], (1.0,))


def test_max_backup_takes_the_best_score_in_each_subtree() -> None:
    q = search.backup(_tree(), {0: 0.5, 1: 0.25, 3: 0.75})
    assert q == {3: 0.75, 1: 0.75, 0: 0.75}  # node 2 has not run: no Q
    assert search.backup(_tree(), {0: 0.5, 1: 0.25}) == {1: 0.25, 0: 0.5}
    assert search.backup(_tree(), {}) == {}


def test_normalise_is_min_max_and_equal_values_sit_in_the_middle() -> None:
    assert search.normalise({0: 1.0, 1: 0.5, 2: 0.0}) == {0: 1.0, 1: 0.5, 2: 0.0}
    assert search.normalise({0: 0.25, 1: 0.75, 2: 0.5}) == pytest.approx({0: 0.0, 1: 1.0, 2: 0.5})
    assert search.normalise({0: 2.0, 1: 2.0}) == {0: 0.5, 1: 0.5}
    assert search.normalise({}) == {}


# ---------------------------------------------------------------- FPU and PUCT


def test_first_play_urgency_is_the_parent_value_minus_the_reduction() -> None:
    assert search.first_play_urgency(0.8, OPTIONS) == pytest.approx(0.7)
    assert search.first_play_urgency(0.8, EvolveOptions(fpu_reduction=0.3)) == pytest.approx(0.5)


def test_puct_adds_the_prior_weighted_exploration_term() -> None:
    # 0.5 + 1.4 * 0.665241 * sqrt(4) / (1 + 1)
    assert search.puct(0.5, 0.665241, 4, 1, OPTIONS) == pytest.approx(1.4313374, abs=1e-6)
    # N(v) = 0 still explores: sqrt(max(1, 0)) = 1
    assert search.puct(0.2, 0.5, 0, 0, OPTIONS) == pytest.approx(0.9)
    assert search.puct(0.2, 0.5, 9, 2, EvolveOptions(c_puct=0.0)) == pytest.approx(0.2)


# ---------------------------------------------------------------- selection


def _expanded_root() -> PatchTree:
    tree = _run(PatchTree.rooted("m0"), 0)
    return add_children(tree, 0, [Child("a", 1, "a"), Child("b", 2, "b")], search.priors([1, 2], 1.0))


def test_selection_expands_an_unexpanded_root_and_runs_an_unrun_one() -> None:
    assert search.select(PatchTree.rooted("m0"), CaseBank(), Evidence(), OPTIONS) == search.Selection("run", 0, (0,))
    ran = _run(PatchTree.rooted("m0"), 0)
    assert search.select(ran, CaseBank(), Evidence((0,)), OPTIONS) == search.Selection("expand", 0, (0,))


def test_selection_prefers_the_higher_prior_among_unrun_children() -> None:
    tree = _expanded_root()
    # FPU = 0.5 - 0.1 = 0.4; a: 0.4 + 1.4 * 0.731059 = 1.4235; b: 0.4 + 1.4 * 0.268941 = 0.7765
    scores = search.child_scores(tree, 0, search.values(tree, CaseBank(), Evidence((0,))), OPTIONS)
    assert scores == pytest.approx({1: 1.4234826, 2: 0.7765174}, abs=1e-6)
    assert search.select(tree, CaseBank(), Evidence((0,)), OPTIONS) == search.Selection("run", 1, (0, 1))


def test_selection_backs_off_a_child_that_scored_below_its_parent() -> None:
    tree = _run(_expanded_root(), 1)
    bank = CaseBank((_case("h1", "hard"),))
    evidence = Evidence((0, 1), ("h1",), frozenset({(0, "h1")}))  # root passes the hard case, a does not
    # s(0) = 0.5, s(1) = 0; Q̂(0) = 1, Q̂(1) = 0; N(0) = 2, N(1) = 1
    # a: 0 + 1.4 * 0.731059 * sqrt(2) / 2 = 0.7237; b: FPU 0.9 + 1.4 * 0.268941 * sqrt(2) = 1.4325
    scores = search.child_scores(tree, 0, search.values(tree, bank, evidence), OPTIONS)
    assert scores == pytest.approx({1: 0.7237, 2: 1.4325}, abs=1e-4)
    assert search.select(tree, bank, evidence, OPTIONS) == search.Selection("run", 2, (0, 2))


def test_selection_descends_into_a_child_that_did_as_well_and_expands_it() -> None:
    tree = _run(_expanded_root(), 1)
    # s(0) = s(1) = 0.5: all Q equal, Q̂ = 0.5; a: 0.5 + 0.7237 = 1.2237; b: 0.4 + 0.5325 = 0.9325
    assert search.select(tree, CaseBank(), Evidence((0, 1)), OPTIONS) == search.Selection("expand", 1, (0, 1))


def test_dead_branches_are_skipped_and_a_dead_tree_ends_the_search() -> None:
    tree = _run(_expanded_root(), 1)
    tree = tree.replace(attrs.evolve(tree.node(1), expanded=True, exhausted=True))  # a: run, no patch
    assert search.alive(tree) == frozenset({0, 2})
    assert search.select(tree, CaseBank(), Evidence((0, 1)), OPTIONS) == search.Selection("run", 2, (0, 2))
    tree = tree.replace(attrs.evolve(tree.node(2), invalid="failed the check"))
    assert search.alive(tree) == frozenset()
    assert search.select(tree, CaseBank(), Evidence((0, 1)), OPTIONS) is None


def test_best_evaluated_is_the_highest_score_earliest_first() -> None:
    tree = _run(_run(_expanded_root(), 1), 2, reward=1)
    assert search.best_evaluated(tree, CaseBank(), Evidence((0, 1, 2))).id == 2
    tree = _run(_expanded_root(), 1)
    assert search.best_evaluated(tree, CaseBank(), Evidence((0, 1))).id == 0  # equal scores: the earliest
