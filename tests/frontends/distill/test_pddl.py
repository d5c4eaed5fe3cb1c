"""A second real environment: PDDL domains (blocks, gripper) solved by pyperplan and played in PDDLGym."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest

import skillc
from skillc.frontends.distill import distill, pddl
from skillc.frontends.distill.library import load_skills, skill_sources, write_library
from skillc.frontends.distill.trace import read_traces
from skillc.frontends.distill.verify import verify
from tests.conftest import codes

DATA = Path(__file__).resolve().parents[3] / "examples" / "traces" / "pddl"


def traces(name):
    found, problems = read_traces([DATA / name])
    assert not problems
    return found


@functools.cache
def distilled_domain(name):
    """The domain's committed training traces distilled, with its held-out traces."""
    train, heldout = traces(f"{name}-train.jsonl"), traces(f"{name}-heldout.jsonl")
    result = distill(train)
    assert result.ok and result.clusters, result.diagnostics
    return name, result, heldout


@pytest.fixture(scope="module", params=["blocks", "gripper"])
def domain(request):
    return distilled_domain(request.param)


def test_a_recorded_plan_replays_in_pddlgym():
    t = pddl.record("blocks", "train", "problem1.pddl")
    assert t.success and t.env == "pddl" and t.profile["templates"] and t.steps[-1].done
    assert all(s.action in s.available_actions for s in t.steps)  # PDDLGym offered every planned action
    assert t.entities["a"] == "block" and t.game == {"generator": "pddlgym", "domain": "blocks", "split": "train",
                                                     "problem": "problem1.pddl"}
    committed = next(c for c in traces("blocks-train.jsonl") if c.id == t.id)
    assert committed.actions == t.actions  # the committed traces are what the planner finds


def test_skills_are_checked_fragments_and_typed_python(domain, tmp_path):
    name, result, _heldout = domain
    write_library(skill_sources(result, result.clusters), tmp_path)
    for c in result.clusters:
        checked = skillc.check(tmp_path / "fragments" / f"{c.name}.skm")
        assert not [d for d in checked.diagnostics if d.severity.name != "NOTE"], (c.name, checked.diagnostics)
    expected = {"blocks": {"pick_up_stack", "unstack_put_down", "unstack_stack"},
                "gripper": {"pick_move_drop"}}[name]
    assert expected <= {c.name for c in result.clusters}
    lib = json.loads((tmp_path / "library.json").read_text())
    assert all(p["types"] for s in lib["skills"] for p in s["parameters"])


def test_heldout_problems_are_solved_by_calling_the_skills(domain):
    _name, result, heldout = domain
    skills = load_skills(result, result.clusters)
    kept, evaluation, problems = verify(result, skills, heldout)
    assert codes(problems) == [] and kept == result.clusters
    assert evaluation.won == len(heldout) == len(evaluation.games) and evaluation.errors == 0
    assert evaluation.calls >= len(heldout) and evaluation.reduction >= 0.4, evaluation.reduction


def test_the_robot_moves_where_it_drops():
    _name, result, _heldout = distilled_domain("gripper")  # its `move` is a declared support action
    (c,) = [c for c in result.clusters if c.name == "pick_move_drop"]
    # `move` is bound to the rooms the core actions name, not left to be guessed from the observation.
    assert [[g.slot.shown for g in s.pre] for s in c.steps] == [["move {room_2} {room}"], ["move {room} {room_2}"]]
    skill = load_skills(result, [c])[c.name]
    with pddl.Game("gripper", "test", "prob02.pddl") as game:
        game.reset()
        args = dict(obj="ball3", room="rooma", gripper="left", room_2="roomb")
        assert skill.preconditions_hold(game.available_actions, **args)
        out = skill(game, **args, available_actions=game.available_actions)
        assert out["success"], out["error"]
        assert [t["action"] for t in out["process_trace"]] == ["pick ball3 rooma left", "move rooma roomb",
                                                               "drop ball3 roomb left"]
        assert not skill.preconditions_hold(game.available_actions, **args)  # ball3 is in roomb now


def test_an_unknown_problem_is_skm406(domain):
    _name, result, heldout = domain
    import attrs

    orphan = attrs.evolve(heldout[0], id="orphan", game={**heldout[0].game, "problem": "nowhere.pddl"})
    _kept, evaluation, problems = verify(result, load_skills(result, result.clusters), [orphan])
    assert codes(problems) == ["SKM406"] and "nowhere.pddl" in problems[0].message and evaluation.games == []


def test_collect_and_distill_pddl_from_the_command_line(tmp_path):
    from click.testing import CliRunner

    from skillc.cli import main

    def invoke(*args):
        return CliRunner().invoke(main, [str(a) for a in args])

    train, held = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    r = invoke("collect", "--env", "pddl", "--domain", "blocks", "--count", "3", "-o", train)
    assert r.exit_code == 0, r.output
    assert "3 traces of 3 blocks problems (train)" in r.output
    r = invoke("collect", "--env", "pddl", "--domain", "blocks", "--split", "test", "--count", "4", "-o", held)
    assert r.exit_code == 0, r.output
    r = invoke("distill", train, "--heldout", held, "--report", "--format", "json")
    assert r.exit_code == 0, r.output
    report = json.loads(r.stdout)
    assert report["evaluation"]["games"] == report["evaluation"]["won"] == 4 and report["evaluation"]["errors"] == 0
    r = invoke("collect", "--env", "pddl", "--domain", "sokoban", "-o", tmp_path / "x.jsonl")
    assert r.exit_code == 2 and "unknown PDDL domain `sokoban`" in r.output and not (tmp_path / "x.jsonl").exists()
