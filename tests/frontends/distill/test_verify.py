"""Verification: a skill that fails on held-out games is dropped (SKM405); missing games are reported (SKM406)."""

from __future__ import annotations

import attrs

from skillc.frontends.distill.library import load_skills
from skillc.frontends.distill.verify import verify
from tests.conftest import codes


def test_a_skill_that_fails_for_real_is_dropped(distilled, heldout_traces, games):
    skills = load_skills(distilled, distilled.clusters)
    real = skills["prepare_meal_eat"]

    def eats_the_wrong_thing(env, item, **kwargs):
        return real(env, item="pizza", **kwargs)  # plays in the real game; `eat pizza` is never available

    eats_the_wrong_thing.preconditions_hold = real.preconditions_hold
    skills["prepare_meal_eat"] = eats_the_wrong_thing
    kept, evaluation, problems = verify(distilled, skills, heldout_traces[:2], games=games)
    assert "prepare_meal_eat" not in [c.name for c in kept] and len(kept) == len(distilled.clusters) - 1
    assert codes(problems) == ["SKM405"]
    assert ("failed 2 of 2 held-out calls" in problems[0].message
            and "`eat pizza` is not available" in problems[0].message)
    assert problems[0].witness == ("prepare meal",)
    stats = evaluation.dropped["prepare_meal_eat"]
    assert stats.error_rate == 1.0 and stats.failures[0]["process_trace"] == ["prepare meal"]
    # The evaluation that is reported is of the kept library: every game is won without the dropped skill.
    assert evaluation.won == 2 and evaluation.errors == 0 and "prepare_meal_eat" not in evaluation.skills


def test_a_heldout_trace_without_its_game_is_reported(distilled, heldout_traces, tmp_path):
    orphan = attrs.evolve(heldout_traces[0], id="orphan", game={"file": "nowhere.z8"})
    skills = load_skills(distilled, distilled.clusters)
    kept, evaluation, problems = verify(distilled, skills, [orphan], games=tmp_path)
    assert codes(problems) == ["SKM406"] and "orphan" in problems[0].message
    assert kept == distilled.clusters and evaluation.games == []
