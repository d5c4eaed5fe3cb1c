"""Verification: execute the distilled Python skills for real on held-out games.

Each held-out walkthrough is segmented like the training traces; every
operation that matches a skill's shape, where the skill's preconditions hold
at that point of the game, is replaced by one call of the skill, which plays
its own actions in the real environment. Everything else is played as
primitive actions. We count turns (a skill call is one turn), skill calls,
execution errors per skill, and whether each game is still won.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.frontends.distill import Distilled
from skillc.frontends.distill.cluster import Cluster, match
from skillc.frontends.distill.schema import normalise
from skillc.frontends.distill.segment import MIN_STEPS, Operation, segment
from skillc.frontends.distill.textworld import Game, Unavailable, game_path
from skillc.frontends.distill.trace import Trace, successful


@attrs.define
class SkillStats:
    """Calls, errors and replaced primitive actions of one skill on the held-out games."""

    calls: int = 0
    errors: int = 0
    primitives: int = 0
    skipped: int = 0  # matched an operation, but its preconditions did not hold there
    failures: list[dict] = attrs.field(factory=list)

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    def to_json(self) -> dict:
        return {"calls": self.calls, "errors": self.errors, "error_rate": round(self.error_rate, 4),
                "primitives_replaced": self.primitives, "precondition_misses": self.skipped,
                "failures": self.failures[:3]}


@attrs.define
class GameRun:
    """One held-out game played with skills."""

    trace_id: str
    primitive_turns: int
    turns: int = 0
    calls: int = 0
    won: bool = False
    error: str | None = None


@attrs.define
class Evaluation:
    """Held-out results: per game and per skill."""

    games: list[GameRun] = attrs.field(factory=list)
    skills: dict[str, SkillStats] = attrs.field(factory=dict)
    diagnostics: list[Diagnostic] = attrs.field(factory=list)
    dropped: dict[str, SkillStats] = attrs.field(factory=dict)  # skills verification dropped, as they fared

    @property
    def primitive_turns(self) -> int:
        """Turns the won games take with primitive actions only."""
        return sum(g.primitive_turns for g in self.games if g.won)

    @property
    def turns(self) -> int:
        """Turns the won games take when skills are called (a call is one turn)."""
        return sum(g.turns for g in self.games if g.won)

    @property
    def reduction(self) -> float:
        """Share of turns saved by calling skills, over the games that were won (a lost game saves nothing)."""
        return 1 - self.turns / self.primitive_turns if self.primitive_turns else 0.0

    @property
    def calls(self) -> int:
        return sum(s.calls for s in self.skills.values())

    @property
    def errors(self) -> int:
        return sum(s.errors for s in self.skills.values())

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    @property
    def won(self) -> int:
        return sum(g.won for g in self.games)


def _prepare(heldout: Iterable[Trace]) -> tuple[list[tuple[Trace, list[Operation]]], list[Diagnostic]]:
    """The held-out traces that can be replayed, each with its operations, and why the others cannot."""
    kept, diagnostics = successful(heldout)
    prepared = []
    for trace in kept:
        program, problems = normalise(trace)
        diagnostics += problems
        if program is not None:
            prepared.append((trace, segment(program)))
    return prepared, diagnostics


def evaluate(distilled: Distilled, clusters: Sequence[Cluster], skills: dict[str, Callable],
             heldout: Iterable[Trace], *, games: str | Path | None = None) -> Evaluation:
    """Play every held-out game with the skills substituted wherever they apply."""
    return _evaluate(distilled, clusters, skills, *_prepare(heldout), games)


def _evaluate(distilled: Distilled, clusters: Sequence[Cluster], skills: dict[str, Callable],
              prepared: list[tuple[Trace, list[Operation]]], diagnostics: list[Diagnostic],
              games: str | Path | None) -> Evaluation:
    evaluation = Evaluation(skills={c.name: SkillStats() for c in clusters}, diagnostics=list(diagnostics))
    for trace, ops in prepared:
        try:
            path = game_path(trace, games, relative_to=_folder(trace))
            game = Game(path)
        except Unavailable as exc:
            evaluation.diagnostics.append(make("SKM406", f"held-out trace `{trace.id}`: {exc}", trace.span))
            continue
        with game:
            evaluation.games.append(_play(game, trace, ops, clusters, skills, distilled.loops, evaluation.skills))
    return evaluation


def _folder(trace: Trace) -> Path | None:
    """The folder of the file a trace was read from: where its `game.file` is relative to."""
    return Path(trace.span.path).parent if trace.span is not None else None


def _play(game: Game, trace: Trace, ops, clusters, skills, loops, stats: dict[str, SkillStats]) -> GameRun:
    run = GameRun(trace.id, primitive_turns=len(trace.steps))
    game.reset()
    for op in ops:
        found = match(op, clusters, loops) if len(op) >= MIN_STEPS else None
        if found is not None:
            cluster, binding = found
            skill = skills[cluster.name]
            s = stats[cluster.name]
            if skill.preconditions_hold(game.available_actions, **binding):
                result = skill(game, **binding, available_actions=game.available_actions)
                run.turns += 1
                run.calls += 1
                s.calls += 1
                s.primitives += len(result["process_trace"])
                if not result["success"]:
                    s.errors += 1
                    s.failures.append({"trace": trace.id, "error": result["error"],
                                       "process_trace": [t["action"] for t in result["process_trace"]]})
                    run.error = f"{cluster.name}: {result['error']}"
                    return run
                continue
            s.skipped += 1
        for action in op.original:
            if action.text not in game.available_actions:
                run.error = f"`{action.text}` is not available"
                return run
            game.step(action.text)
            run.turns += 1
    run.won = game.won
    return run


def verify(distilled: Distilled, skills: dict[str, Callable], heldout: Sequence[Trace], *,
           games: str | Path | None = None) -> tuple[list[Cluster], Evaluation, list[Diagnostic]]:
    """Keep the skills with no execution error on held-out games; the evaluation is of the kept library.

    Dropping a skill changes which operations the others get, so the games are played again until a round
    drops nothing (at most once per skill).
    """
    kept = list(distilled.clusters)
    dropped: dict[str, SkillStats] = {}
    diagnostics: list[Diagnostic] = []
    prepared, problems = _prepare(heldout)  # normalised and segmented once, replayed each round
    while True:
        evaluation = _evaluate(distilled, kept, skills, prepared, problems, games)
        failed = sorted(name for name, s in evaluation.skills.items() if s.errors)
        for name in failed:
            s = evaluation.skills[name]
            first = s.failures[0]
            diagnostics.append(make("SKM405", f"skill `{name}` failed {s.errors} of {s.calls} held-out calls and "
                                              f"is dropped (first: {first['error']} in `{first['trace']}`)",
                                    witness=first["process_trace"]))
            dropped[name] = s
        kept = [c for c in kept if c.name not in failed]
        if not failed:
            break
    evaluation.dropped = dropped
    return kept, evaluation, list(evaluation.diagnostics) + diagnostics
