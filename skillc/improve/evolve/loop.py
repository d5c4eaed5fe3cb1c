"""The evolve loop: run the root, then select (PUCT), gate, execute, reflect and test until the budget is spent.

One iteration of the tree strategy descends from the root by PUCT (search.select). A version that
has run but was never reflected on is expanded: up to L reflection rounds (the last with
`must_emit_patch`), hypothesis operations applied as they come, the self-verifier asked for cases
for every new active hypothesis (validated, then run on every cached output: symmetric expansion),
and the first round that proposes children adds up to B of them with their priors; a version that
still proposes none is exhausted. A version that has not run goes through the gate first (the check
and replay of `skillc refine`, injected): a refused candidate never consumes an execution and is
counted as one saved; one that passes runs (the executor, e.g. the bench runner), runs every existing
case (symmetric expansion) and counts one of the K executions. The search stops at the first rewarded
version (by default), when K executions are spent, or when no live branch is left, and returns the
best evaluated version by s. The greedy strategy (the ablation) always refines the last version run,
taking its best-ranked valid child, and never backs off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.improve.edits import PatchError
from skillc.improve.evolve import codes, search
from skillc.improve.evolve.cases import SelfVerifier, generate_cases, holds
from skillc.improve.evolve.options import EvolveOptions, option_problems
from skillc.improve.evolve.patch import apply_patch
from skillc.improve.evolve.roles import Reflector, ReflectRequest, RoleError, VersionRunner
from skillc.improve.evolve.state import (
    Case,
    CaseRunner,
    Child,
    Knowledge,
    Node,
    Operation,
    OperationError,
    Output,
    PatchTree,
    add_children,
    expand_case,
    expand_node,
    operate,
    record_visit,
)

#: What a trajectory step records.
StepKind = Literal["run", "expand", "refused"]
#: The check + replay gate: why a candidate (child node) may not run, or None when it may.
Gate = Callable[[Node], str | None]


def no_gate(node: Node) -> str | None:
    """A gate that lets every candidate run (the ablation without the check/replay gate)."""
    return None


@attrs.frozen
class Roles:
    """The three roles; `verifier` None is the ablation without generated tests."""

    runner: VersionRunner
    reflector: Reflector
    verifier: SelfVerifier | None = None


@attrs.frozen
class Step:
    """One event of the trajectory: a run (and whether it jumped away from the last version run), an expansion,
    or a candidate the gate refused."""

    kind: StepKind
    node: int
    reward: int | None = None
    jump: bool = False  # a run whose parent is not the version run just before: the search backed off
    detail: str = ""


@attrs.frozen
class Evolution:
    """The outcome: the tree, the knowledge, the best evaluated version, and what it cost."""

    tree: PatchTree
    knowledge: Knowledge
    best: Node
    executions: int  # evolved executions after the root
    saved: int  # candidates the gate refused, each an execution not spent
    steps: tuple[Step, ...]
    diagnostics: tuple[Diagnostic, ...] = ()
    interrupted: bool = False  # stopped by an interrupt (Ctrl-C): what it holds is what was found before it

    @property
    def success(self) -> bool:
        """The best version was rewarded."""
        return self.best.reward == 1


@attrs.define
class _Search:
    """The mutable driver around the immutable state records (one per `evolve` call)."""

    roles: Roles
    gate: Gate
    options: EvolveOptions
    run_case: CaseRunner
    tree: PatchTree
    knowledge: Knowledge = Knowledge()  # noqa: RUF009 - frozen, so one shared default is safe
    executions: int = 0
    saved: int = 0
    last_run: int | None = None
    tried: set[str] = attrs.Factory(set)  # hypotheses the self-verifier was already asked about
    steps: list[Step] = attrs.Factory(list)
    diagnostics: list[Diagnostic] = attrs.Factory(list)

    # ------------------------------------------------------------ running a version

    def run(self, node_id: int) -> int:
        """Execute a version, cache its output, visit its path, run every case on it; its reward."""
        node = self.tree.node(node_id)
        output = self.roles.runner.execute(node)
        jump = self.last_run is not None and node.parent != self.last_run
        tree = record_visit(self.tree.replace(attrs.evolve(node, output=output)), node_id)
        k = self.knowledge
        evidence = expand_node(k.evidence, tree.node(node_id), k.bank, self.run_case)
        # Committed together, after every case ran: an interrupt before this leaves the version unrun.
        self.tree, self.knowledge = tree, attrs.evolve(k, evidence=evidence)
        self.last_run = node_id
        self.executions += node_id != 0  # counted once it ran: an interrupted run is not an execution
        self.steps.append(Step("run", node_id, output.reward, jump))
        return output.reward

    def admit(self, node_id: int) -> bool:
        """Put a candidate through the gate; a refusal marks it invalid and saves an execution.

        A candidate whose machine (and SKILL.md) is a version that already ran is refused too: its run would
        only repeat that one.
        """
        node = self.tree.node(node_id)
        twin = next((n for n in self.tree.evaluated() if (n.machine, n.skill) == (node.machine, node.skill)), None)
        reason = f"the same version as {label(self.tree, twin.id)}, which already ran" if twin else self.gate(node)
        if reason is None:
            return True
        self.refuse(node_id, reason)
        return False

    def refuse(self, node_id: int, reason: str) -> None:
        """Mark a candidate invalid before it runs: one execution saved."""
        self.tree = self.tree.replace(attrs.evolve(self.tree.node(node_id), invalid=reason))
        self.saved += 1
        self.steps.append(Step("refused", node_id, detail=reason))

    # ------------------------------------------------------------ reflecting on a version

    def expand(self, node_id: int) -> None:
        """Up to L reflection rounds on a version that ran; children from the first round that proposes any."""
        rounds = self.options.reflection_rounds
        for round_ in range(1, rounds + 1):
            request = ReflectRequest(self.tree.node(node_id), self.tree, self.knowledge, round_, round_ == rounds)
            reply = self.roles.reflector.reflect(request)
            self.diagnostics.extend(reply.diagnostics)
            for op in reply.operations:
                self.apply(node_id, op)
            self.generate(node_id)
            children = best_ranked(reply.children, self.options.branching)
            if children:
                resolved = [resolve(self.tree.node(node_id), c) for c in children]
                priors = search.priors([c.rank for c in children], self.options.beta)
                first = len(self.tree.nodes)
                self.tree = add_children(self.tree, node_id, [c for c, _ in resolved], priors)
                self.steps.append(Step("expand", node_id, detail=f"{len(children)} children in round {round_}"))
                for offset, (_, problem) in enumerate(resolved):
                    if problem is not None:
                        self.refuse(first + offset, problem)
                return
        self.tree = self.tree.replace(attrs.evolve(self.tree.node(node_id), expanded=True, exhausted=True))
        self.steps.append(Step("expand", node_id, detail=f"exhausted after {rounds} rounds"))

    def apply(self, node_id: int, op: Operation) -> None:
        """One hypothesis operation; one that does not fit the store is dropped with SKM842."""
        try:
            self.knowledge = operate(self.knowledge, node_id, op)
        except OperationError as exc:
            self.diagnostics.append(make(codes.INVALID_HYPOTHESIS_OPERATION, f"node {node_id}: {exc}"))

    def generate(self, node_id: int) -> None:
        """Cases for every active hypothesis not yet asked about, each run on every cached output."""
        verifier = self.roles.verifier
        output = self.tree.node(node_id).output
        if verifier is None or not self.options.self_verifier or output is None:
            return
        for hypothesis in self.knowledge.store.active():
            if hypothesis.id in self.tried:
                continue
            self.tried.add(hypothesis.id)
            made = generate_cases(verifier, hypothesis, node_id, output, repair_rounds=self.options.repair_rounds,
                                  max_cases=self.options.max_cases, timeout_s=self.options.case_timeout_s)
            self.diagnostics.extend(made.diagnostics)

            def run(case: Case, cached: Output) -> int:
                """The validation's verdict on this node's output (already run), else a fresh run."""
                # B023 suppressed below: `run` is called only within this iteration (by expand_case)
                return int(case.id in made.held) if cached is output else self.run_case(case, cached)  # noqa: B023

            for case in made.cases:
                k = self.knowledge
                known = k.bank.get(case.id)
                if known is not None and (known.kind, known.source) != (case.kind, case.source):
                    self.diagnostics.append(make(codes.UNVALIDATED_CASE, f"case {case.id!r} for hypothesis "
                                                 f"{hypothesis.id!r} was dropped: its id is taken by another case"))
                    continue  # the same case proposed again only gains an owner (bank.add)
                self.knowledge = attrs.evolve(k, bank=k.bank.add(case),
                                              evidence=expand_case(k.evidence, case, self.tree, run))

    # ------------------------------------------------------------ choosing

    def next(self) -> search.Selection | None:
        """Where to go: PUCT over the tree, or the greedy refinement of the last version run."""
        k = self.knowledge
        if self.options.strategy == "tree":
            return search.select(self.tree, k.bank, k.evidence, self.options)
        last = self.tree.node(self.last_run if self.last_run is not None else 0)
        if not last.expanded:
            return search.Selection("expand", last.id, self.tree.path(last.id))
        waiting = [c for c in self.tree.children(last.id) if c.invalid is None and not c.evaluated]
        if not waiting:
            return None  # greedy never backs off: the branch it committed to is spent
        best = min(waiting, key=lambda c: (c.rank, c.id))
        return search.Selection("run", best.id, self.tree.path(best.id))

    def done(self, reward: int) -> bool:
        """Stop at a rewarded version (when asked to)."""
        return reward == 1 and self.options.stop_on_success


def best_ranked(children: Sequence[Child], branching: int) -> tuple[Child, ...]:
    """The B best-ranked children (the earlier among equal ranks), kept in the order reflection gave them."""
    keep = set(sorted(range(len(children)), key=lambda i: (children[i].rank, i))[:branching])
    return tuple(c for i, c in enumerate(children) if i in keep)


def resolve(parent: Node, child: Child) -> tuple[Child, str | None]:
    """A child with its own text: a patch applied to the parent's version, or why it does not apply."""
    if child.patch is None:
        return child, None
    try:
        machine, skill = apply_patch(parent.machine, parent.skill, child.patch)
    except PatchError as exc:
        return attrs.evolve(child, machine=parent.machine, skill=parent.skill), f"the patch does not apply ({exc})"
    return attrs.evolve(child, machine=machine, skill=skill), None


def evolve(machine: str, roles: Roles, *, gate: Gate = no_gate,
           options: EvolveOptions = EvolveOptions(),  # noqa: B008 - frozen, so one shared default is safe
           skill: str | None = None, run_case: CaseRunner | None = None) -> Evolution:
    """Evolve a version under the budget; a role that fails stops the search with SKM844, keeping what it found.

    Options out of range (SKM840) run nothing: the evolution holds only the unrun root. An interrupt (Ctrl-C) stops
    the search the same way, with SKM846 and `interrupted`: every record is replaced whole, so the state is the one
    before the step that was cut short (a run cut short leaves its version unrun).
    """
    tree = PatchTree.rooted(machine, skill)
    problems = option_problems(options)
    if problems:
        return Evolution(tree, Knowledge(), tree.root, 0, 0, (), tuple(problems))
    runner = run_case or (lambda case, output: holds(case, output, options.case_timeout_s))
    state = _Search(roles, gate, options, runner, tree)
    interrupted = False
    try:
        _drive(state)
    except RoleError as exc:
        state.diagnostics.append(make(codes.ROLE_FAILED, str(exc)))
    except KeyboardInterrupt:
        interrupted = True
        state.diagnostics.append(make(codes.EVOLVE_INTERRUPTED, f"interrupted after {state.executions} of "
                                      f"{options.budget} evolved executions; keeping the versions run so far"))
    k = state.knowledge
    best = search.best_evaluated(state.tree, k.bank, k.evidence)
    return Evolution(state.tree, k, best, state.executions, state.saved, tuple(state.steps),
                     tuple(state.diagnostics), interrupted)


def _drive(state: _Search) -> None:
    """The loop itself: the root's run, then select / gate / run / expand until a stop."""
    if state.done(state.run(0)):
        return
    while state.executions < state.options.budget:  # no reflection either once the budget is spent
        selection = state.next()
        if selection is None:
            return
        if selection.action == "expand":
            state.expand(selection.node)
            continue
        if not state.admit(selection.node):
            continue
        if state.done(state.run(selection.node)):
            return


def label(tree: PatchTree, node_id: int) -> str:
    """A node's name, with its id when another node has the same name (a model may name two children alike);
    its id alone when it has none."""
    name = tree.node(node_id).name
    if not name:
        return f"node {node_id}"
    return f"{name} (node {node_id})" if sum(n.name == name for n in tree.nodes) > 1 else name


def trajectory(evolution: Evolution) -> Sequence[str]:
    """The trajectory as lines: each run (with its reward and a mark where the search jumped), expansion, refusal."""
    lines = []
    for step in evolution.steps:
        name = label(evolution.tree, step.node)
        if step.kind == "run":
            output = evolution.tree.node(step.node).output
            note = f"; {output.note}" if output is not None and output.note else ""  # e.g. not run: fails check
            lines.append(f"run {name}: reward {step.reward}" + (" (jump)" if step.jump else "") + note)
        else:
            lines.append(f"{step.kind} {name}: {step.detail}")
    return lines
