"""Clustering: parameterised shapes, loop folding, optional support actions, r_k and matching."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillc.frontends.distill import distill
from skillc.frontends.distill.cluster import cluster, lift, loop_schemas, match
from skillc.frontends.distill.schema import normalise
from skillc.frontends.distill.segment import operations
from tests.conftest import codes
from tests.frontends.distill.conftest import KITCHEN, trace

FOODS = {"apple": "f", "carrot": "f", "potato": "f", "pear": "f", "leek": "f", "meal": "meal"}
ENTITIES = {**KITCHEN, **FOODS}


def ops(*runs):
    out = []
    for i, actions in enumerate(runs):
        program, problems = normalise(trace(actions, ident=f"t{i}", entities=ENTITIES))
        assert not problems
        out += operations(program)
    return out


def test_same_schemas_up_to_renaming_are_one_cluster():
    found = cluster(ops(["take apple from counter", "cook apple with stove", "chop apple with knife"],
                        ["take carrot from fridge", "cook carrot with oven", "dice carrot with knife"]), 2)
    assert len(found) == 1
    (c,) = found
    assert c.name == "take_cook_cut" and c.reuse == 1.0 and c.traces == 2
    assert [p.name for p in c.params] == ["item", "source", "appliance", "style", "tool"]
    assert {p.name: p.types for p in c.params}["source"] == ("c", "s")
    assert [m.binding for m in c.members] == [
        {"item": "apple", "source": "counter", "appliance": "stove", "style": "chop", "tool": "knife"},
        {"item": "carrot", "source": "fridge", "appliance": "oven", "style": "dice", "tool": "knife"}]


def test_different_sharing_is_a_different_shape():
    a, b = ops(["take apple from counter", "put apple on counter"], ["take apple from counter", "put apple on table"])
    assert lift(a, frozenset()).shape != lift(b, frozenset()).shape


def test_repetitions_fold_into_one_bounded_loop():
    found = ops(["go east", "go north", "take apple from counter", "eat apple"],
                ["go west", "go west", "go south", "take pear from table", "eat pear"],
                ["open wooden door", "go north", "take carrot from counter", "eat carrot"])
    loops = loop_schemas(found)
    assert loops == {"go"}
    walks = [c for c in cluster(found, 3, loops=loops) if c.name == "repeat_go"]
    assert len(walks) == 1
    (walk,) = walks
    assert walk.steps[0].loop and walk.steps[0].bound == 3 * 2  # longest walk seen, times the slack
    assert sorted(walk.sizes) == [2, 2, 3]
    assert [m.binding["directions"] for m in walk.members] == [["east", "north"], ["west", "west", "south"],
                                                               ["north"]]
    assert walk.members[2].binding["open_targets"] == ["wooden door"]
    assert walk.level == 2
    door = walk.steps[0].pre[0]
    assert door.slot.template.text == "open {target}" and door.share == pytest.approx(1 / 3)


def test_optional_support_actions_become_guarded_steps_with_their_share():
    found = cluster(ops(["open fridge", "take apple from fridge", "cook apple with stove"],
                        ["take carrot from counter", "cook carrot with stove"],
                        ["take potato from table", "cook potato with oven"],
                        ["take leek from fridge", "cook leek with stove"]), 4)
    (c,) = found
    (guard,) = c.steps[0].pre
    assert guard.slot.template.text == "open {target}" and guard.slot.args == (("target", "source"),)
    assert guard.share == 0.25


def test_free_values_of_support_actions_are_optional_parameters():
    (c,) = cluster(ops(["take apple from counter", "take knife from table", "chop apple with knife"],
                       ["take pear from counter", "take knife from counter", "dice pear with knife"],
                       ["take leek from counter", "slice leek with knife"]), 3)
    (guard,) = c.steps[1].pre
    assert guard.slot.args == (("item", "tool"), ("source", "tool_source"))
    assert guard.share == pytest.approx(2 / 3)
    optional = [p for p in c.params if p.optional]
    assert [p.name for p in optional] == ["tool_source"] and set(optional[0].values) == {"table", "counter"}
    assert "tool_source" not in c.members[2].binding


def test_reusability_is_the_share_of_traces_and_the_threshold_applies():
    found = ops(["take apple from counter", "cook apple with stove", "take pear from counter", "cook pear with oven"],
                ["take carrot from counter", "cook carrot with stove"],
                ["take leek from counter", "chop leek with knife"],
                ["take potato from counter", "eat potato"])
    everything = cluster(found, 4)
    reuse = {c.name: c.reuse for c in everything}
    assert reuse == {"take_cook": 0.5, "take_cut": 0.25, "take_eat": 0.25}
    assert len({c.name: c for c in everything}["take_cook"].members) == 3  # twice in the first trace, once counted
    assert [c.name for c in cluster(found, 4, min_reuse=0.3)] == ["take_cook"]


def test_no_cluster_over_the_threshold_is_a_warning():
    result = distill([trace(["take apple from counter", "eat apple"], ident="a", entities=ENTITIES),
                      trace(["take pear from table", "cook pear with stove"], ident="b", entities=ENTITIES)],
                     min_reuse=0.9)
    assert not result.clusters and codes(result.diagnostics) == ["SKM404"]
    assert "most reused reaches 50%" in result.diagnostics[0].message


def test_match_binds_a_new_operation_including_support_values():
    found = ops(["take apple from counter", "take knife from table", "chop apple with knife"],
                ["take pear from counter", "dice pear with knife"])
    clusters = cluster(found, 2)
    (new,) = ops(["open fridge", "take leek from fridge", "take knife from counter", "slice leek with knife"])
    assert match(new, clusters, frozenset()) is None  # `open fridge` is a support action no member took
    (new,) = ops(["take leek from fridge", "take knife from counter", "slice leek with knife"])
    _c, binding = match(new, clusters, frozenset())
    assert binding == {"item": "leek", "source": "fridge", "style": "slice", "tool": "knife",
                       "tool_source": "counter"}


def test_loops_longer_than_their_bound_do_not_match():
    found = ops(["go east", "go north", "take apple from counter", "eat apple"])
    clusters = cluster(found, 1)
    (walk,) = [c for c in clusters if c.steps[0].loop]
    assert walk.steps[0].bound == 4
    (long_walk, _rest) = ops(["go east"] * 4 + ["take apple from counter", "eat apple"])
    assert match(long_walk, clusters, frozenset({"go"})) is not None
    (too_long, _rest) = ops(["go east"] * 3 + ["go west"] * 2 + ["take apple from counter", "eat apple"])
    assert match(too_long, clusters, frozenset({"go"})) is None


NAMES = st.lists(st.sampled_from(sorted(FOODS.keys() - {"meal"})), min_size=3, max_size=3, unique=True)


@settings(max_examples=40, deadline=None)
@given(NAMES, st.sampled_from(["stove", "oven"]), st.sampled_from(["chop", "slice", "dice"]))
def test_renaming_entities_never_changes_shapes(names, appliance, style):
    """Property: consistently renaming the things a trace acts on leaves every shape as it was."""
    base = ["take apple from counter", "cook apple with stove", "chop apple with knife",
            "take carrot from fridge", "slice carrot with knife", "prepare meal", "eat meal"]
    mapping = {"apple": names[0], "carrot": names[1], "stove": appliance}
    renamed = [" ".join(mapping.get(w, w) for w in a.split()).replace("chop", style) for a in base]
    assert [lift(o, frozenset()).shape for o in ops(base)] == [lift(o, frozenset()).shape for o in ops(renamed)]


def test_committed_library_is_small_and_reused(distilled):
    assert 3 <= len(distilled.clusters) <= 10
    assert all(c.reuse >= 0.1 for c in distilled.clusters)
    assert distilled.clusters[0].name == "prepare_meal_eat" and distilled.clusters[0].reuse == 1.0
    assert max(max(c.sizes) for c in distilled.clusters) >= 4
