"""Segmentation into sub-goal operations: anchors, support actions, navigation."""

from __future__ import annotations

from skillc.frontends.distill.schema import normalise
from skillc.frontends.distill.segment import NAV, operations, segment
from tests.frontends.distill.conftest import trace


def ops_of(actions):
    program, problems = normalise(trace(actions))
    assert not problems
    return segment(program)


def shape(ops):
    return [(op.anchor, [([a.text for a in g.pre], g.core.text) for g in op.groups]) for op in ops]


def test_everything_done_to_one_ingredient_is_one_operation():
    ops = ops_of(["open fridge", "take apple from fridge", "cook apple with stove", "take knife from table",
                  "chop apple with knife", "take carrot from counter", "slice carrot with knife",
                  "prepare meal", "eat meal"])
    assert shape(ops) == [
        ("apple", [(["open fridge"], "take apple from fridge"), ([], "cook apple with stove"),
                   (["take knife from table"], "chop apple with knife")]),
        ("carrot", [([], "take carrot from counter"), ([], "slice carrot with knife")]),
        ("meal", [(["prepare meal"], "eat meal")]),
    ]
    assert [op.start for op in ops] == [0, 5, 7]
    assert sum(len(op) for op in ops) == 9


def test_walks_and_doors_are_navigation():
    ops = ops_of(["go east", "open wooden door", "go north", "take apple from counter", "eat apple"])
    assert shape(ops)[0] == (NAV, [([], "go east"), (["open wooden door"], "go north")])
    assert shape(ops)[1] == ("apple", [([], "take apple from counter"), ([], "eat apple")])


def test_support_before_a_move_stays_where_it_is():
    # The knife is taken in the first room; moving it past `go north` would change the game.
    ops = ops_of(["take knife from counter", "go north", "chop apple with knife", "cook apple with stove"])
    assert shape(ops) == [("knife", [([], "take knife from counter")]), (NAV, [([], "go north")]),
                          ("apple", [([], "chop apple with knife"), ([], "cook apple with stove")])]


def test_trailing_support_actions_stand_alone():
    ops = ops_of(["eat apple", "prepare meal"])
    assert shape(ops) == [("apple", [([], "eat apple")]), ("<prepare_meal>", [([], "prepare meal")])]


def test_a_door_opened_before_something_else_stands_alone():
    # Found on held-out games: grouped with `take knife`, the door was skipped (the knife needs no door),
    # and the move after it failed.
    ops = ops_of(["go north", "open wooden door", "take knife from counter", "go west", "chop apple with knife"])
    assert shape(ops)[1:3] == [("wooden door", [([], "open wooden door")]),
                               ("knife", [([], "take knife from counter")])]


def test_support_actions_join_the_action_they_prepare():
    ops = ops_of(["take knife from table", "open fridge", "take apple from fridge", "chop apple with knife"])
    assert shape(ops) == [("apple", [(["open fridge"], "take apple from fridge"),
                                     (["take knife from table"], "chop apple with knife")])]
    assert [a.text for a in ops[0].original] == ["take knife from table", "open fridge", "take apple from fridge",
                                                 "chop apple with knife"]


def test_a_support_action_whose_consumer_is_in_another_run_stands_alone():
    ops = ops_of(["take knife from table", "take apple from counter", "cook apple with stove",
                  "take carrot from counter", "chop carrot with knife"])
    assert [op.anchor for op in ops] == ["knife", "apple", "carrot"]


def test_short_operations_are_not_sub_goals():
    program, _ = normalise(trace(["go east", "take apple from counter", "cook apple with stove", "eat meal"]))
    assert [op.anchor for op in operations(program)] == ["apple"]


def test_committed_traces_segment_completely(train_traces):
    for t in train_traces:
        program, _ = normalise(t)
        ops = segment(program)
        assert [a.text for op in ops for a in op.original] == list(t.actions)
        assert sorted(a.text for op in ops for a in op.actions) == sorted(t.actions)
