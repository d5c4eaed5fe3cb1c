"""Verification: execute the distilled Python skills for real on held-out games.

Each held-out walkthrough is segmented like the training traces; every
operation that matches a skill's shape, where the skill's preconditions hold
at that point of the game, is replaced by one call of the skill, which plays
its own actions in the real environment. Everything else is played as
primitive actions. We count turns (a skill call is one turn), skill calls,
execution errors per skill, and whether each game is still won.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.frontends.distill import Distilled, codes, pddl
from skillc.frontends.distill.cluster import Cluster, match
from skillc.frontends.distill.schema import normalised
from skillc.frontends.distill.segment import MIN_STEPS, Operation, segment
from skillc.frontends.distill.skill_runtime import SkillResult
from skillc.frontends.distill.textworld import Game, Unavailable, game_path
from skillc.frontends.distill.trace import Episode

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object


class Skill(Protocol):
    """A generated skill function: `skill(env, **parameters)` returns a `SkillResult`."""

    preconditions_hold: Callable[..., bool]  # (available actions, **parameters) -> may the skill start here

    def __call__(self, env: object, **values: object) -> SkillResult: ...


@attrs.define
class SkillStats:
    """Calls, errors and replaced primitive actions of one skill on the held-out games."""

    calls: int = 0
    errors: int = 0  # failed calls, and lost games blamed on one of its calls
    primitives: int = 0
    skipped: int = 0  # matched an operation, but its preconditions did not hold there
    failures: list[Object] = attrs.field(factory=list)

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else 0.0

    def to_json(self) -> Object:
        return {"calls": self.calls, "errors": self.errors, "error_rate": round(self.error_rate, 4),
                "primitives_replaced": self.primitives, "precondition_misses": self.skipped,
                "failures": self.failures[:3]}


@attrs.frozen
class Call:
    """One skill call in a held-out game: what it was asked to replace and what it played."""

    skill: str
    binding: dict[str, object] = attrs.field(eq=False)
    turn: int
    played: tuple[str, ...]
    replaced: tuple[str, ...]  # the walkthrough's actions of the operation the call replaced

    @property
    def diverged(self) -> bool:
        """Whether the call played other actions than the walkthrough (the game left the walkthrough's path)."""
        return Counter(self.played) != Counter(self.replaced)

    def __str__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.binding.items() if v is not None)
        return f"`{self.skill}({args})` at turn {self.turn}"

    def difference(self) -> str:
        """How the call's actions differ from the walkthrough's, in words."""
        played, replaced = Counter(self.played), Counter(self.replaced)
        missing = ", ".join(f"`{a}`" for a in (replaced - played))
        extra = ", ".join(f"`{a}`" for a in (played - replaced))
        parts = ([f"it did not play {missing}"] if missing else []) + ([f"it played {extra}"] if extra else [])
        return (("; ".join(parts) + " (the walkthrough did otherwise)") if parts
                else "it played the walkthrough's actions")


@attrs.define
class GameRun:
    """One held-out game played with skills."""

    trace_id: str
    primitive_turns: int
    turns: int = 0
    calls: int = 0
    won: bool = False
    error: str | None = None
    blame: str | None = None  # the skill whose call the loss is attributed to; None when unattributed


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
        """Execution errors: failed skill calls and lost games blamed on a call, plus lost games blamed on none."""
        return sum(s.errors for s in self.skills.values()) + self.unattributed

    @property
    def error_rate(self) -> float:
        return self.errors / self.calls if self.calls else (1.0 if self.errors else 0.0)

    @property
    def won(self) -> int:
        return sum(g.won for g in self.games)

    @property
    def lost(self) -> int:
        return sum(not g.won for g in self.games)

    @property
    def unattributed(self) -> int:
        """Lost games that no skill call is to blame for."""
        return sum(not g.won and g.blame is None for g in self.games)


def _prepare(heldout: Iterable[Episode]) -> tuple[list[tuple[Episode, list[Operation]]], list[Diagnostic]]:
    """The held-out traces that can be replayed, each with its operations, and why the others cannot."""
    normal, diagnostics = normalised(heldout)
    return [(trace, segment(program)) for trace, program in normal], diagnostics


def evaluate(distilled: Distilled, clusters: Sequence[Cluster], skills: dict[str, Skill],
             heldout: Iterable[Episode], *, games: str | Path | None = None) -> Evaluation:
    """Play every held-out game with the skills substituted wherever they apply."""
    return _evaluate(distilled, clusters, skills, *_prepare(heldout), games)


def _evaluate(distilled: Distilled, clusters: Sequence[Cluster], skills: dict[str, Skill],
              prepared: list[tuple[Episode, list[Operation]]], diagnostics: list[Diagnostic],
              games: str | Path | None, progress: Callable[[int], None] | None = None) -> Evaluation:
    evaluation = Evaluation(skills={c.name: SkillStats() for c in clusters}, diagnostics=list(diagnostics))
    for trace, ops in prepared:
        try:
            game = open_game(trace, games)
        except Unavailable as exc:
            evaluation.diagnostics.append(make(codes.GAME_UNAVAILABLE, f"held-out trace `{trace.id}`: {exc}",
                                               trace.span))
            continue
        with game:
            evaluation.games.append(_play(game, trace, ops, clusters, skills, distilled.loops, evaluation.skills))
        if progress is not None:
            progress(1)
    return evaluation


def open_game(trace: Episode, games: str | Path | None = None) -> Game | pddl.Game:
    """The environment a held-out trace was recorded in, reopened at its start: a PDDLGym problem for a PDDL
    trace, else a TextWorld game (its file, or regenerated into `games`). Unavailable when it cannot be."""
    if trace.env == pddl.ENV or (trace.game or {}).get("generator") == pddl.GENERATOR:
        return pddl.game_for(trace)
    return Game(game_path(trace, games, relative_to=_folder(trace)))


def _folder(trace: Episode) -> Path | None:
    """The folder of the file a trace was read from: where its `game.file` is relative to."""
    return Path(trace.span.path).parent if trace.span is not None else None


def _play(game: Game | pddl.Game, trace: Episode, ops: list[Operation], clusters: Sequence[Cluster],
          skills: dict[str, Skill], loops: frozenset[str], stats: dict[str, SkillStats]) -> GameRun:
    """Play one held-out game: skill calls where they apply, primitive actions elsewhere; blame any loss."""
    run = GameRun(trace.id, primitive_turns=len(trace.steps))
    calls: list[Call] = []
    game.reset()
    for op in ops:
        found = match(op, clusters, loops) if len(op) >= MIN_STEPS else None
        if found is not None:
            cluster, binding = found
            skill = skills[cluster.name]
            s = stats[cluster.name]
            if skill.preconditions_hold(game.available_actions, **binding):
                result = skill(game, **binding, available_actions=game.available_actions)
                played = tuple(t["action"] for t in result["process_trace"])
                call = Call(cluster.name, binding, run.turns + 1, played, tuple(a.text for a in op.original))
                calls.append(call)
                run.turns += 1
                run.calls += 1
                s.calls += 1
                s.primitives += len(played)
                if game.lost:
                    return _lost(run, trace, result["error"] or "the game was lost", _blame(calls), stats)
                if not result["success"]:
                    earlier = next((c for c in calls[:-1] if c.diverged), None)
                    if earlier is None and _stuck(call, game.available_actions):
                        return _lost(run, trace, result["error"], None, stats)
                    return _lost(run, trace, result["error"], earlier or call, stats)
                continue
            s.skipped += 1
        for action in op.original:
            if action.text not in game.available_actions:
                return _lost(run, trace, f"`{action.text}` is not available", _blame(calls), stats)
            game.step(action.text)
            run.turns += 1
            if game.lost:
                return _lost(run, trace, f"the game was lost after `{action.text}`", _blame(calls), stats)
    run.won = game.won
    return run if run.won else _lost(run, trace, "the walkthrough was played to its end but the game is not won",
                                     _blame(calls), stats)


def _stuck(call: Call, available: Sequence[str]) -> bool:
    """Whether the walkthrough itself could not go on where a failed call stopped: then the call is not to blame.

    True when the call played only walkthrough actions and the walkthrough's next action is not available
    either (or there is none).
    """
    if Counter(call.played) - Counter(call.replaced):
        return False
    played = Counter(call.played)
    for action in call.replaced:
        if played[action]:
            played[action] -= 1
            continue
        return action not in available
    return True


def _blame(calls: Sequence[Call]) -> Call | None:
    """The call after which the game left the walkthrough's path, or None when every call played its actions.

    That is the first call that played other actions than the operation it replaced, else the first that
    played them in another order; a call that played exactly the walkthrough's actions is never blamed.
    """
    return next((c for c in calls if c.diverged), None) or next((c for c in calls if c.played != c.replaced), None)


def _lost(run: GameRun, trace: Episode, error: str | None, call: Call | None, stats: dict[str, SkillStats]) -> GameRun:
    """Record a lost game, as an error of the call it is blamed on (when there is one)."""
    run.error = error or "the game was lost"
    if call is not None:
        run.blame = call.skill
        s = stats[call.skill]
        s.errors += 1
        s.failures.append({"trace": trace.id, "error": run.error, "call": str(call), "turn": call.turn,
                           "difference": call.difference(),
                           "process_trace": list(call.played)})
    return run


def verify(distilled: Distilled, skills: dict[str, Skill], heldout: Sequence[Episode], *,
           games: str | Path | None = None,
           progress: Callable[[int], None] | None = None) -> tuple[list[Cluster], Evaluation, list[Diagnostic]]:
    """Keep the skills with no execution error on held-out games; the evaluation is of the kept library.

    Dropping a skill changes which operations the others get, so the games are played again until a round
    drops nothing (at most once per skill). A game lost in the last round that no call is to blame for is an
    SKM407 error. `progress(n)` is told of every game played.
    """
    kept = list(distilled.clusters)
    dropped: dict[str, SkillStats] = {}
    diagnostics: list[Diagnostic] = []
    prepared, problems = _prepare(heldout)  # normalised and segmented once, replayed each round
    while True:
        evaluation = _evaluate(distilled, kept, skills, prepared, problems, games, progress)
        failed = sorted(name for name, s in evaluation.skills.items() if s.errors)
        for name in failed:
            s = evaluation.skills[name]
            first = s.failures[0]
            diagnostics.append(make(
                codes.SKILL_FAILED_VERIFICATION,
                f"skill `{name}` failed {s.errors} of {s.calls} held-out calls and is dropped (first, in "
                f"`{first['trace']}`: {first['error']}, after the call {first['call']})",
                notes=[f"the call {first['call']}: {first['difference']}"],
                hint=f"the witness lists what `{name}` played in that call; compare it with the held-out trace",
                witness=first["process_trace"]))
            dropped[name] = s
        kept = [c for c in kept if c.name not in failed]
        if not failed:
            break
    for game in evaluation.games:
        if not game.won and game.blame is None:
            trace = next(t for t, _ops in prepared if t.id == game.trace_id)
            how = "with no skill call" if not game.calls else "and every skill call played the walkthrough's actions"
            diagnostics.append(make(codes.HELDOUT_GAME_LOST,
                                    f"held-out game `{game.trace_id}` was lost {how}: {game.error}",
                                    trace.span, hint="check that the held-out trace replays in its game "
                                                     "(same game file or generator settings)"))
    evaluation.dropped = dropped
    return kept, evaluation, list(evaluation.diagnostics) + diagnostics
