"""Normalisation: actions parsed into action schemas, entities lifted to typed arguments."""

from __future__ import annotations

import pytest

from skillc.frontends.distill.schema import TEXTWORLD, Template, normalise, parse_action, profile_for
from tests.conftest import codes
from tests.frontends.distill.conftest import KITCHEN, trace


@pytest.mark.parametrize("command, schema, args", [
    ("take apple from fridge", "take", [("item", "apple", "f"), ("source", "fridge", "c")]),
    ("take knife", "pick_up", [("item", "knife", "o")]),
    ("cook potato with stove", "cook", [("item", "potato", "f"), ("appliance", "stove", "stove")]),
    ("slice carrot with knife", "cut", [("style", "slice", "enum"), ("item", "carrot", "f"), ("tool", "knife", "o")]),
    ("dice  carrot   with knife", "cut", [("style", "dice", "enum"), ("item", "carrot", "f"), ("tool", "knife", "o")]),
    ("go north", "go", [("direction", "north", "enum")]),
    ("open wooden door", "open", [("target", "wooden door", "d")]),
    ("prepare meal", "prepare_meal", []),
    ("eat meal", "eat", [("item", "meal", "meal")]),
    ("put knife on table", "put", [("item", "knife", "o"), ("surface", "table", "s")]),
])
def test_textworld_actions(command, schema, args):
    action = parse_action(command, TEXTWORLD, KITCHEN)
    assert action is not None and action.schema == schema
    assert [(a.role, a.value, a.type) for a in action.args] == args


def test_entities_decide_between_templates_and_reject_unknown_things():
    assert parse_action("take apple from moon", TEXTWORLD, KITCHEN) is None  # `moon` is not an entity
    assert parse_action("go upwards", TEXTWORLD, KITCHEN) is None  # not one of the four directions
    assert parse_action("juggle apple", TEXTWORLD, KITCHEN) is None
    # Without an entity list every value is accepted, typed `thing`.
    action = parse_action("take moon rock from crater", TEXTWORLD, None)
    assert [(a.value, a.type) for a in action.args] == [("moon rock", "thing"), ("crater", "thing")]


def test_focus_is_the_first_entity_argument():
    cut = parse_action("chop apple with knife", TEXTWORLD, KITCHEN)
    assert cut.focus.value == "apple"
    assert parse_action("go east", TEXTWORLD, KITCHEN).focus is None


def test_template_notation():
    t = Template.parse("pack {item} into {box:crate|bag}")
    assert t.schema == "pack_into" and t.roles == ("item", "box") and t.choices == {"box": ("crate", "bag")}
    assert t.render({"item": "cup", "box": "bag"}) == "pack cup into bag"
    with pytest.raises(ValueError):
        Template.parse("move {x} to {x}")


def test_generic_environment_brings_its_templates():
    t = trace(["pick cup from shelf", "pack cup into box"], env="warehouse",
              entities={"cup": "item", "shelf": "place", "box": "container"},
              templates=["pick {item} from {place}", "pack {item} into {box}"])
    program, problems = normalise(t)
    assert not problems
    assert [a.schema for a in program.actions] == ["pick_from", "pack_into"]
    assert program.actions[1].args[1].type == "container"


def test_textworld_templates_in_traces_do_not_shadow_the_profile():
    t = trace(["take apple from fridge"], templates=["take {o} from {c}", "take {o} from {s}", "sing {o}"])
    profile = profile_for(t)
    assert [x.text for x in profile.templates[len(TEXTWORLD.templates):]] == ["sing {o}"]


def test_unparsable_action_leaves_the_trace_out():
    program, problems = normalise(trace(["take apple from fridge", "juggle apple", "eat apple"], ident="j"))
    assert program is None and codes(problems) == ["SKM403"]
    assert "step 2 `juggle apple`" in problems[0].message and "trace `j`" in problems[0].message
    assert "no template starts with `juggle`" in problems[0].hint


def test_unknown_entity_hint_points_at_entities():
    _, problems = normalise(trace(["take pear from fridge", "eat pear"]))
    assert "is every entity listed in `entities`" in problems[0].hint


def test_every_committed_trace_normalises(train_traces, heldout_traces):
    for t in [*train_traces, *heldout_traces]:
        program, problems = normalise(t)
        assert not problems, t.id
        assert [a.text for a in program.actions] == [" ".join(s.action.split()) for s in t.steps]
