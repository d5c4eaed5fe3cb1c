"""Environment profiles as data: templates, moves, support schemas, passages and effects in the trace header
or in a profile file; TextWorld is one built-in profile."""

from __future__ import annotations

import json

import attrs

from skillc.frontends.distill import distill
from skillc.frontends.distill.library import load_skills, skill_sources
from skillc.frontends.distill.schema import TEXTWORLD, declared_profile, profile_for
from skillc.frontends.distill.trace import read_traces
from tests.conftest import codes
from tests.frontends.distill.conftest import jsonl, trace

MAZE = {"templates": ["walk {way:north|south|east|west}", "unbar {gate}", "grab {thing}", "eat {thing}"],
        "moves": ["walk"], "passages": ["gate"],
        "effects": {"walk": "the walker went {way}", "grab": "{thing} is in hand", "eat": "{thing} is eaten"}}
ENTITIES = {"apple": "food", "pear": "food", "plum": "food", "g1": "gate", "g2": "gate"}


def runs(profile=MAZE):
    out = [trace(["walk north", "walk east", "grab apple", "eat apple"], ident="m1"),
           trace(["unbar g1", "walk south", "walk west", "walk north", "grab pear", "eat pear"], ident="m2"),
           trace(["walk east", "unbar g2", "walk east", "grab plum", "eat plum"], ident="m3")]
    return [attrs.evolve(t, env="maze", entities=ENTITIES, profile=profile) for t in out]


def test_another_environment_declares_its_moves():
    result = distill(runs())
    assert result.ok, result.diagnostics
    by_name = {c.name: c for c in result.clusters}
    assert set(by_name) == {"repeat_walk", "grab_eat"}
    walk = by_name["repeat_walk"]
    assert walk.steps[0].loop and [g.slot.template.text for g in walk.steps[0].pre] == ["unbar {gate}"]
    source = skill_sources(result, [walk])["skills/repeat_walk.py"]
    assert "the walker went {ways[i]}" in source
    skill = load_skills(result, [walk])["repeat_walk"]
    assert skill.preconditions_hold(["walk north"], ["north", "east"])


def test_without_the_profile_walks_are_not_navigation():
    # The same runs with templates only: nothing says `walk` is a move, so no walk folds into a loop.
    bare = [attrs.evolve(t, profile=None, templates=tuple(MAZE["templates"])) for t in runs()]
    assert "repeat_walk" not in {c.name for c in distill(bare).clusters}


def test_a_profile_file_beside_the_traces(tmp_path):
    (tmp_path / "maze.json").write_text(json.dumps(MAZE))
    path = tmp_path / "maze.jsonl"
    path.write_text(jsonl(*runs(profile="maze.json")))
    found, problems = read_traces([path])
    assert not problems and found[0].profile == "maze.json"
    assert {c.name for c in distill(found).clusters} == {"repeat_walk", "grab_eat"}


def test_bad_profiles_leave_the_trace_out_with_a_reason(tmp_path):
    cases = {"moves": ({"templates": ["walk {way}"], "moves": "walk"}, "`moves` is a list"),
             "field": ({"templates": [], "colour": "red"}, "unknown fields: colour"),
             "file": ("missing.json", "cannot read the profile")}
    for name, (profile, words) in cases.items():
        result = distill([attrs.evolve(t, profile=profile) for t in runs()])
        assert set(codes(result.diagnostics)) == {"SKM403", "SKM400"}, name
        assert words in result.diagnostics[0].message, (name, result.diagnostics[0].message)
    path = tmp_path / "bad.jsonl"
    path.write_text(jsonl(runs()[0]).replace('"profile": {', '"profile": 3, "x": {'))
    _found, problems = read_traces([path])
    assert codes(problems) == ["SKM401"] and "`profile`" in problems[0].message


def test_textworld_is_a_built_in_profile():
    assert declared_profile("textworld", TEXTWORLD) is TEXTWORLD
    t = trace(["go north", "take apple from counter", "eat apple"])
    assert profile_for(t).nav_schemas == {"go"}
    extended = profile_for(attrs.evolve(t, profile={"effects": {"eat": "{item} is gone"}}))
    assert extended.effects["eat"] == "{item} is gone" and extended.templates == TEXTWORLD.templates
