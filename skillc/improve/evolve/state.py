"""The search state of `skillc evolve`: the patch tree, the hypothesis store, the test bank, the evidence matrix.

Every record is a frozen attrs value and every update returns a new one (`attrs.evolve`), so a
search step can be replayed and compared. Nodes are numbered by their position in the tree (the
root is 0); hypotheses and test cases by their string ids. Nothing here runs anything: the evidence
functions take the case runner as an argument (`cases.run_case` in the loop, a fake in tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Literal

import attrs

from skillc.improve.edits import Patch

#: A hypothesis is active (tests run for it), refined (replaced by a sharper one) or refuted (its tests pruned).
Lifecycle = Literal["active", "refined", "refuted"]
#: A hard constraint (a file exists, a format parses) or a semantic check (the content is right).
Strength = Literal["hard", "semantic"]
#: A Python check `check(workdir, outputs, trace)` or a shell command run in the workdir.
CaseKind = Literal["python", "shell"]


# ---------------------------------------------------------------- the patch tree


@attrs.frozen
class Output:
    """The cached result of one evaluated run: its work folder, trace and declared outputs, and the binary reward."""

    workdir: Path
    trace: Path
    reward: int  # the hidden verifier's verdict, 0 or 1: all the search ever sees of it
    outputs: tuple[tuple[str, str], ...] = ()  # (name, JSON text) of the run's declared outputs
    note: str = ""  # why the version did not really run (e.g. it does not check, without the gate), else ""


@attrs.frozen
class Node:
    """One skill version: the machine text (and SKILL.md), its place in the tree, and its run once evaluated.

    `rank` is the ordinal rank ρ the reflection gave it among its siblings (1 = most promising) and
    `prior` the P(u) computed from the ranks; `visits` is N(v). `invalid` holds why the check/replay
    gate refused it (such a node never runs); `exhausted` marks a node whose reflection emitted no patch.
    `patch` is the patch on its parent that made it (None for the root and for a child given as a whole text).
    """

    id: int
    machine: str
    parent: int | None = None
    skill: str | None = None
    name: str = ""
    rank: int = 1
    prior: float = 1.0
    children: tuple[int, ...] = ()
    visits: int = 0
    output: Output | None = None
    invalid: str | None = None
    exhausted: bool = False
    expanded: bool = False  # reflection has run on it (children proposed, or none and it is exhausted)
    patch: Patch | None = None

    @property
    def evaluated(self) -> bool:
        """The node has run (it has a cached output and a reward)."""
        return self.output is not None

    @property
    def reward(self) -> int | None:
        """Its run's reward (None before it runs)."""
        return None if self.output is None else self.output.reward


@attrs.frozen
class Child:
    """A child proposed by reflection: machine text (and SKILL.md), a name and its ordinal rank ρ ≥ 1.

    A child given as a `patch` on its parent (patch.py) has no text of its own until the loop applies it.
    """

    machine: str
    rank: int
    name: str = ""
    skill: str | None = None
    patch: Patch | None = None


@attrs.frozen
class PatchTree:
    """The tree of skill versions; `nodes[i].id == i` and node 0 is the root."""

    nodes: tuple[Node, ...]

    @classmethod
    def rooted(cls, machine: str, skill: str | None = None, name: str = "root") -> PatchTree:
        """A tree holding only the initial version."""
        return cls((Node(0, machine, skill=skill, name=name),))

    @property
    def root(self) -> Node:
        """The initial version."""
        return self.nodes[0]

    def node(self, node_id: int) -> Node:
        """The node with that id."""
        return self.nodes[node_id]

    def children(self, node_id: int) -> tuple[Node, ...]:
        """The children of a node, in the order they were added."""
        return tuple(self.nodes[c] for c in self.nodes[node_id].children)

    def path(self, node_id: int) -> tuple[int, ...]:
        """The ids from the root down to the node."""
        ids: list[int] = []
        current: int | None = node_id
        while current is not None:
            ids.append(current)
            current = self.nodes[current].parent
        return tuple(reversed(ids))

    def evaluated(self) -> tuple[Node, ...]:
        """Every node that has run, in id order."""
        return tuple(n for n in self.nodes if n.evaluated)

    def replace(self, node: Node) -> PatchTree:
        """The tree with one node replaced (same id)."""
        return PatchTree(self.nodes[:node.id] + (node,) + self.nodes[node.id + 1:])


def add_children(tree: PatchTree, parent: int, children: Iterable[Child], priors: Iterable[float]) -> PatchTree:
    """The tree with `children` (and their priors) under `parent`, which is then marked expanded."""
    nodes = list(tree.nodes)
    ids: list[int] = []
    for child, prior in zip(children, priors, strict=True):
        ids.append(len(nodes))
        nodes.append(Node(len(nodes), child.machine, parent=parent, skill=child.skill, name=child.name,
                          rank=child.rank, prior=prior, patch=child.patch))
    head = nodes[parent]
    nodes[parent] = attrs.evolve(head, children=head.children + tuple(ids), expanded=True)
    return PatchTree(tuple(nodes))


def record_visit(tree: PatchTree, node_id: int) -> PatchTree:
    """The tree with N incremented on every node from the root down to `node_id` (one selection's path)."""
    nodes = list(tree.nodes)
    for i in tree.path(node_id):
        nodes[i] = attrs.evolve(nodes[i], visits=nodes[i].visits + 1)
    return PatchTree(tuple(nodes))


# ---------------------------------------------------------------- hypotheses


@attrs.frozen
class Hypothesis:
    """A falsifiable failure hypothesis: what is wrong, the observable behaviour it predicts, its lifecycle."""

    id: str
    description: str
    prediction: str
    state: Lifecycle = "active"
    parent: str | None = None  # the hypothesis it refines
    node: int | None = None  # the node whose failure it explains


@attrs.frozen
class Operation:
    """One reflection operation on the store: add a hypothesis, refine one into a new one, or refute one."""

    op: Literal["add", "refine", "refute"]
    id: str  # the hypothesis added, or refined, or refuted
    description: str = ""
    prediction: str = ""
    new_id: str | None = None  # refine: the id of the sharper hypothesis


@attrs.frozen
class HypothesisStore:
    """The hypotheses in the order they were made, and every operation applied (the trajectory shows them)."""

    hypotheses: tuple[Hypothesis, ...] = ()
    log: tuple[tuple[int, Operation], ...] = ()  # (node the reflection ran on, operation)

    def get(self, hypothesis_id: str) -> Hypothesis | None:
        """The hypothesis with that id, if any."""
        return next((h for h in self.hypotheses if h.id == hypothesis_id), None)

    def active(self) -> tuple[Hypothesis, ...]:
        """The hypotheses tests are generated for."""
        return tuple(h for h in self.hypotheses if h.state == "active")


class OperationError(ValueError):
    """An operation that does not fit the store (an id taken, or unknown); the message says which."""


def apply_operation(store: HypothesisStore, node: int, op: Operation) -> HypothesisStore:
    """The store after one operation; OperationError when it names a missing hypothesis or reuses an id."""
    known = store.get(op.id)
    if op.op == "add":
        if known is not None:
            raise OperationError(f"hypothesis {op.id!r} already exists")
        added = Hypothesis(op.id, op.description, op.prediction, node=node)
        return HypothesisStore(store.hypotheses + (added,), store.log + ((node, op),))
    if known is None or known.state != "active":
        raise OperationError(f"no active hypothesis {op.id!r} to {op.op}")
    if op.op == "refute":
        return HypothesisStore(_with(store, attrs.evolve(known, state="refuted")), store.log + ((node, op),))
    if op.new_id is None or store.get(op.new_id) is not None:
        raise OperationError(f"refining {op.id!r} needs a new id that is not taken (got {op.new_id!r})")
    sharper = Hypothesis(op.new_id, op.description or known.description, op.prediction or known.prediction,
                         parent=known.id, node=node)
    hypotheses = _with(store, attrs.evolve(known, state="refined")) + (sharper,)
    return HypothesisStore(hypotheses, store.log + ((node, op),))


def _with(store: HypothesisStore, changed: Hypothesis) -> tuple[Hypothesis, ...]:
    """The store's hypotheses with one replaced by id."""
    return tuple(changed if h.id == changed.id else h for h in store.hypotheses)


# ---------------------------------------------------------------- tests and evidence


@attrs.frozen
class Case:
    """A validated executable test: its source, kind, assertion strength and the hypotheses that own it."""

    id: str
    kind: CaseKind
    source: str  # Python defining `check(workdir, outputs, trace)`, or a shell command
    strength: Strength
    owners: frozenset[str]  # hypothesis ids; the case is pruned when the last of them is refuted
    description: str = ""


@attrs.frozen
class CaseBank:
    """The validated test bank, in the order cases were added."""

    cases: tuple[Case, ...] = ()

    def get(self, case_id: str) -> Case | None:
        """The case with that id, if any."""
        return next((c for c in self.cases if c.id == case_id), None)

    def add(self, case: Case) -> CaseBank:
        """The bank with one more case (a case with a known id only gains owners)."""
        known = self.get(case.id)
        if known is None:
            return CaseBank(self.cases + (case,))
        merged = attrs.evolve(known, owners=known.owners | case.owners)
        return CaseBank(tuple(merged if c.id == case.id else c for c in self.cases))


def link_refinement(bank: CaseBank, old: str, new: str) -> CaseBank:
    """The bank with `old`'s cases handed to `new`: a refinement keeps its evidence, and only active
    hypotheses own cases (so refuting the sharper one prunes what the lineage alone owned)."""
    return CaseBank(tuple(attrs.evolve(c, owners=(c.owners - {old}) | {new}) if old in c.owners else c
                          for c in bank.cases))


@attrs.frozen
class Evidence:
    """The evidence matrix M[node, case] ∈ {0, 1} over the evaluated nodes (rows) and the bank's cases (columns).

    Symmetric expansion keeps it total: every row has a value in every column.
    """

    rows: tuple[int, ...] = ()
    columns: tuple[str, ...] = ()
    passed: frozenset[tuple[int, str]] = frozenset()

    def value(self, node: int, case: str) -> int:
        """M[node, case]: 1 when the case holds on the node's output."""
        return int((node, case) in self.passed)

    def row(self, node: int) -> tuple[int, ...]:
        """The node's values, in column order."""
        return tuple(self.value(node, c) for c in self.columns)


#: Runs one case on one node's cached output: 1 when it holds, else 0.
CaseRunner = Callable[[Case, Output], int]


def expand_node(evidence: Evidence, node: Node, bank: CaseBank, run: CaseRunner) -> Evidence:
    """Symmetric expansion for a new evaluated node: it runs every existing case (one new row)."""
    if node.output is None or node.id in evidence.rows:
        return evidence
    output = node.output
    hits = {(node.id, c.id) for c in bank.cases if c.id in evidence.columns and run(c, output)}
    return Evidence(evidence.rows + (node.id,), evidence.columns, evidence.passed | hits)


def expand_case(evidence: Evidence, case: Case, tree: PatchTree, run: CaseRunner) -> Evidence:
    """Symmetric expansion for a new case: it runs on every cached output (one new column)."""
    if case.id in evidence.columns:
        return evidence
    hits = set()
    for row in evidence.rows:
        output = tree.node(row).output
        if output is not None and run(case, output):
            hits.add((row, case.id))
    return Evidence(evidence.rows, evidence.columns + (case.id,), evidence.passed | hits)


@attrs.frozen
class Knowledge:
    """What reflection and the self-verifier have built: hypotheses, the test bank, the evidence matrix."""

    store: HypothesisStore = HypothesisStore()
    bank: CaseBank = CaseBank()
    evidence: Evidence = Evidence()


def operate(knowledge: Knowledge, node: int, op: Operation) -> Knowledge:
    """One reflection operation: a refinement passes its cases on, a refutation prunes what it alone owned."""
    if op.op == "refute":
        return refute(knowledge, node, op.id)
    store = apply_operation(knowledge.store, node, op)
    bank = knowledge.bank
    if op.op == "refine" and op.new_id is not None:
        bank = link_refinement(bank, op.id, op.new_id)
    return Knowledge(store, bank, knowledge.evidence)


def refute(knowledge: Knowledge, node: int, hypothesis: str) -> Knowledge:
    """Refute a hypothesis and prune the cases (and evidence columns) it alone owned; others just lose it."""
    store = apply_operation(knowledge.store, node, Operation("refute", hypothesis))
    bank, evidence = knowledge.bank, knowledge.evidence
    kept: list[Case] = []
    for case in bank.cases:
        owners = case.owners - {hypothesis}
        if owners or hypothesis not in case.owners:  # only what it alone owned goes (a case nobody owns stays)
            kept.append(attrs.evolve(case, owners=owners))
    alive = {c.id for c in kept}
    columns = tuple(c for c in evidence.columns if c in alive)
    passed = frozenset(p for p in evidence.passed if p[1] in alive)
    return Knowledge(store, CaseBank(tuple(kept)), Evidence(evidence.rows, columns, passed))
