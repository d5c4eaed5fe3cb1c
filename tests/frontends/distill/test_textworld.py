"""End to end in real TextWorld games: collection, every skill executed, held-out verification."""

from __future__ import annotations

import pytest

from skillc.frontends.distill import textworld as tw
from skillc.frontends.distill.library import load_skills
from skillc.frontends.distill.verify import verify


@pytest.fixture(scope="module")
def skills(distilled):
    return load_skills(distilled, distilled.clusters)


def test_collect_records_a_winning_walkthrough(games):
    spec = tw.GameSpec(seed=5, recipe=2, take=1, go=6, open=True, cook=True, cut=True)
    path = tw.make_game(spec, games)
    assert tw.make_game(spec, games) == path  # made once, then reused
    t = tw.record(path, spec)
    assert t.success and t.steps[-1].done and t.score == t.max_score
    assert t.actions[-2:] == ("prepare meal", "eat meal")
    assert all(s.action in s.available_actions for s in t.steps)  # the walkthrough only plays what is offered
    assert t.entities["meal"] == "meal" and t.game["recipe"] == 2 and t.game["file"] == str(path)
    assert "Your score has just gone up" in t.steps[0].next_observation or t.steps[0].next_observation


def test_committed_heldout_traces_match_their_regenerated_games(heldout_traces, game_of):
    for t in heldout_traces:
        with game_of(t) as game:
            state = game.reset()
            assert list(state["policy_commands"]) == list(t.actions), t.id


def test_every_skill_replays_a_training_operation_in_the_real_game(distilled, skills, train_traces, game_of):
    """Each skill, called where one of its training operations began, plays exactly that operation."""
    by_id = {t.id: t for t in train_traces}
    for c in distilled.clusters:
        member = c.members[0]
        t = by_id[member.op.trace_id]
        with game_of(t) as game:
            game.reset()
            for action in t.actions[:member.op.start]:
                game.step(action)
            skill = skills[c.name]
            assert skill.preconditions_hold(game.available_actions, **member.binding), c.name
            result = skill(game, **member.binding, available_actions=game.available_actions)
            assert result["success"], (c.name, result["error"])
            played = [step["action"] for step in result["process_trace"]]
            assert played == [a.text for a in member.op.actions], c.name
            for action in t.actions[member.op.start + len(member.op):]:
                game.step(action)
            assert game.won, c.name


def test_a_skill_called_out_of_place_fails_cleanly(distilled, skills, heldout_traces, game_of):
    (c,) = [c for c in distilled.clusters if c.name == "prepare_meal_eat"]
    with game_of(heldout_traces[0]) as game:
        game.reset()
        skill = skills[c.name]
        assert not skill.preconditions_hold(game.available_actions, item="meal")
        result = skill(game, item="meal", available_actions=game.available_actions)
        assert not result["success"] and result["error"] == "`eat meal` is not available"
        assert result["process_trace"] == [] and not result["done"]


def test_heldout_verification(distilled, skills, heldout_traces, games):
    kept, evaluation, problems = verify(distilled, skills, heldout_traces, games=games)
    assert not problems and kept == distilled.clusters
    assert len(evaluation.games) == len(heldout_traces) and evaluation.won == len(heldout_traces)
    assert evaluation.calls >= len(heldout_traces) and evaluation.errors == 0
    assert evaluation.reduction >= 0.4, evaluation.reduction
    assert all(g.turns < g.primitive_turns for g in evaluation.games)
