"""The search formulas of `skillc evolve`: prior, hierarchical score, max-backup, normalisation, PUCT, selection.

All of them are pure functions of the state records (state.py) and the options (options.py), so
each is unit-tested against hand-computed values (tests/improve/evolve/test_search.py).

- Prior: the reflection ranks its children ρ = 1, 2, …; P(u) = softmax(−β(ρ−1)) over the siblings.
- Score of an evaluated node: s(v) = 2·R(v) + t(v) with R the binary reward and
  t(v) = (h(v) + [h(v) = 1]·σ(v)) / 2, where h is the fraction of hard cases that hold on v's output
  (1 when the bank has none) and σ the fraction of semantic cases that hold (0 when it has none).
  Semantic evidence therefore counts only once every hard constraint passes: t ∈ [0, ½] while a hard case
  fails, t ∈ [½, 1] once all pass; and a rewarded node (s ≥ 2) outranks every unrewarded one (s ≤ 1).
- Max-backup: Q(v) = max(s(v), max over children Q(u)) over the evaluated part of the subtree
  (None when nothing in it has run).
- Normalisation: Q̂(v) = (Q(v) − min Q) / (max Q − min Q) over every node with a Q; ½ for all when they are
  all equal (no evidence prefers any node, so every value sits in the middle).
- PUCT at v for a child u: Q̂(u) + c·P(u)·√max(1, N(v)) / (1 + N(v, u)); a child with no Q takes the
  first-play urgency Q̂(v) − fpu_reduction. N(v, u) is N(u): in a tree, every visit to u passes through v.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

import attrs

from skillc.improve.evolve.options import EvolveOptions
from skillc.improve.evolve.state import CaseBank, Evidence, Node, PatchTree

#: Q̂ when every node has the same Q.
EQUAL_VALUE = 0.5


def priors(ranks: Sequence[int], beta: float) -> tuple[float, ...]:
    """P(u) = softmax(−β(ρ−1)) over the siblings' ordinal ranks ρ."""
    if not ranks:
        return ()
    logits = [-beta * (rank - 1) for rank in ranks]
    top = max(logits)  # shifted for numerical stability; softmax is shift-invariant
    weights = [math.exp(logit - top) for logit in logits]
    total = sum(weights)
    return tuple(w / total for w in weights)


def score(node: Node, bank: CaseBank, evidence: Evidence) -> float | None:
    """s(v): the reward twice over, plus the hard-then-semantic test fraction t(v) ∈ [0, 1]; None before it runs."""
    if node.reward is None:
        return None
    return 2.0 * node.reward + test_part(node.id, bank, evidence)


def test_part(node: int, bank: CaseBank, evidence: Evidence) -> float:
    """t(v) = (h + [h = 1]·σ) / 2 over the bank's cases that the matrix has a column for."""
    hard = [c.id for c in bank.cases if c.strength == "hard" and c.id in evidence.columns]
    semantic = [c.id for c in bank.cases if c.strength == "semantic" and c.id in evidence.columns]
    h = _fraction(node, hard, evidence, empty=1.0)
    sigma = _fraction(node, semantic, evidence, empty=0.0) if h == 1.0 else 0.0
    return (h + sigma) / 2.0


def _fraction(node: int, cases: Sequence[str], evidence: Evidence, *, empty: float) -> float:
    """The share of `cases` that hold on the node (`empty` when there are none)."""
    if not cases:
        return empty
    return sum(evidence.value(node, c) for c in cases) / len(cases)


def backup(tree: PatchTree, scores: Mapping[int, float]) -> dict[int, float]:
    """Q(v) = max(s(v), max over children Q(u)) for every node whose subtree holds a scored node."""
    values: dict[int, float] = {}
    for node in reversed(tree.nodes):  # children always have larger ids than their parent
        candidates = [values[c] for c in node.children if c in values]
        if node.id in scores:
            candidates.append(scores[node.id])
        if candidates:
            values[node.id] = max(candidates)
    return values


def normalise(values: Mapping[int, float]) -> dict[int, float]:
    """Min-max normalisation of Q over the tree; EQUAL_VALUE for all when max = min."""
    if not values:
        return {}
    low, high = min(values.values()), max(values.values())
    if high == low:
        return {k: EQUAL_VALUE for k in values}
    return {k: (v - low) / (high - low) for k, v in values.items()}


def first_play_urgency(parent_value: float, options: EvolveOptions) -> float:
    """The value a child that has not run yet is given: its parent's normalised value minus the reduction."""
    return parent_value - options.fpu_reduction


def puct(value: float, prior: float, parent_visits: int, child_visits: int, options: EvolveOptions) -> float:
    """Q̂(u) + c·P(u)·√max(1, N(v)) / (1 + N(v, u))."""
    return value + options.c_puct * prior * math.sqrt(max(1, parent_visits)) / (1 + child_visits)


@attrs.frozen
class Values:
    """The tree's values at one moment: s for evaluated nodes, Q where a subtree has run, and Q̂."""

    scores: Mapping[int, float]
    q: Mapping[int, float]
    normalised: Mapping[int, float]


def values(tree: PatchTree, bank: CaseBank, evidence: Evidence) -> Values:
    """s, Q and Q̂ for the whole tree."""
    scores = {n.id: s for n in tree.nodes if (s := score(n, bank, evidence)) is not None}
    q = backup(tree, scores)
    return Values(scores, q, normalise(q))


def alive(tree: PatchTree) -> frozenset[int]:
    """The nodes the search can still spend on: not refused by the gate, and not run with every branch dead."""
    live: set[int] = set()
    for node in reversed(tree.nodes):
        if node.invalid is not None:
            continue
        if not node.evaluated or not node.expanded or any(c in live for c in node.children):
            live.add(node.id)
    return frozenset(live)


def child_scores(tree: PatchTree, parent: int, vals: Values, options: EvolveOptions) -> dict[int, float]:
    """PUCT of each live child of `parent` (a child with no Q gets the first-play urgency)."""
    live = alive(tree)
    head = tree.node(parent)
    fpu = first_play_urgency(vals.normalised.get(parent, EQUAL_VALUE), options)
    return {c.id: puct(vals.normalised.get(c.id, fpu), c.prior, head.visits, c.visits, options)
            for c in tree.children(parent) if c.id in live}


@attrs.frozen
class Selection:
    """Where the search goes next: run a node that has not run, or expand one that has (reflection)."""

    action: Literal["run", "expand"]
    node: int
    path: tuple[int, ...]


def select(tree: PatchTree, bank: CaseBank, evidence: Evidence, options: EvolveOptions) -> Selection | None:
    """Descend from the root by PUCT to the first node to run or expand; None when the whole tree is dead."""
    live = alive(tree)
    if 0 not in live:
        return None
    vals = values(tree, bank, evidence)
    current = tree.root
    path = [0]
    while True:
        if not current.evaluated:
            return Selection("run", current.id, tuple(path))
        if not current.expanded:
            return Selection("expand", current.id, tuple(path))
        ranked = child_scores(tree, current.id, vals, options)
        # Ties go to the better rank, then to the older child, so the search is deterministic.
        best = max(ranked, key=lambda i: (ranked[i], -tree.node(i).rank, -i))
        current = tree.node(best)
        path.append(best)


def best_evaluated(tree: PatchTree, bank: CaseBank, evidence: Evidence) -> Node:
    """The evaluated version with the highest s (the earliest among equals); the root if nothing ran."""
    scored = [(s, -n.id, n) for n in tree.evaluated() if (s := score(n, bank, evidence)) is not None]
    return max(scored, key=lambda t: (t[0], t[1]))[2] if scored else tree.root
