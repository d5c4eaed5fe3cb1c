"""Odd but valid input: names that are keywords, clashing templates, repeated support actions, odd files."""

from __future__ import annotations

import os

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import skillc
from skillc.frontends.distill import distill
from skillc.frontends.distill.library import load_skills, skill_sources, write_library
from skillc.frontends.distill.schema import identifier
from skillc.frontends.distill.trace import parse_traces, read_traces
from skillc.frontends.distill.verify import verify
from tests.conftest import codes
from tests.frontends.distill.conftest import jsonl, trace


class Script:
    """A world that offers the next action of a script (and a decoy), so any replay of it succeeds."""

    def __init__(self, actions):
        self.actions = list(actions)
        self.position = 0

    @property
    def available_actions(self):
        nxt = self.actions[self.position:self.position + 1]
        return [*nxt, "wait"]

    def step(self, action):
        assert action == self.actions[self.position], action
        self.position += 1
        return {"observation": f"did {action}", "available_actions": self.available_actions,
                "done": self.position == len(self.actions)}


def generic(ident, actions, templates):
    return trace(actions, ident=ident, env="lab", entities=None, templates=templates)


@pytest.mark.parametrize("role", ["class", "in", "env", "run", "i", "at", "observation", "admissible", "len",
                                  "true", "1st", "température"])
def test_roles_become_safe_names_in_python_and_skm(role, tmp_path):
    templates = [f"grab {{{role}}} from {{place}}", f"stash {{{role}}} in {{box}}"]
    runs = [generic(f"r{k}", [f"grab cup{k} from shelf", f"stash cup{k} in bin"], templates) for k in range(3)]
    result = distill(runs)
    assert result.ok and len(result.clusters) == 1, result.diagnostics
    (c,) = result.clusters
    name = identifier(role)
    assert c.params[0].name == name and name.isidentifier()
    write_library(skill_sources(result, result.clusters), tmp_path / "lib")
    assert not [d for d in skillc.check(tmp_path / "lib" / "fragments" / f"{c.name}.skm").diagnostics
                if d.severity.name != "NOTE"]
    skill = load_skills(result, result.clusters)[c.name]
    world = Script(["grab mug from desk", "stash mug in crate"])
    out = skill(world, **{name: "mug", "place": "desk", "box": "crate"}, available_actions=world.available_actions)
    assert out["success"] and [t["action"] for t in out["process_trace"]] == world.actions


def test_odd_words_make_distinct_schemas_and_skill_names():
    templates = ["pick-up {obj}", "put-down {obj}", "take {item}", "take {item} {extra}", "use {x}", "start {x}"]
    runs = [generic("a", ["pick-up cup", "put-down cup"], templates),
            generic("b", ["take cup", "take cup fast"], templates),
            generic("c", ["use lever", "start lever"], templates)]
    result = distill(runs)
    assert result.ok, result.diagnostics
    shapes = {c.name: [s.core.schema for s in c.steps] for c in result.clusters}
    assert shapes["pick_up_put_down"] == ["pick_up", "put_down"]
    (takes,) = [v for k, v in shapes.items() if k.startswith("take")]
    assert sorted(takes) == ["take", "take_2"]  # two templates, two schemas: `take cup fast` is not `take {item}`
    assert shapes["use_start"] == ["use", "start"]
    load_skills(result, result.clusters)  # every module imports


def test_keyword_skill_names_are_renamed(tmp_path):
    templates = ["ready", "warm", "use {x}"]
    result = distill([generic("a", ["ready", "use lever"], templates), generic("b", ["warm", "use crank"], templates)])
    (c,) = result.clusters
    assert [g.share for g in c.steps[0].pre] == [0.5, 0.5]
    assert c.name == "use_skill"  # `use` alone is a keyword of .skm and cannot name a fragment
    write_library(skill_sources(result, result.clusters), tmp_path)
    assert skillc.check(tmp_path / "fragments" / "use_skill.skm").ok
    skill = load_skills(result, result.clusters)["use_skill"]
    world = Script(["warm", "use lever"])
    out = skill(world, x="lever", available_actions=world.available_actions)
    assert out["success"] and [t["kind"] for t in out["process_trace"]] == ["support", "core"]


def test_two_support_actions_of_one_template_get_their_own_slots():
    templates = ["open {box}", "move {thing} from {box} to {target}", "wear {thing}"]
    runs = [generic("a", ["open box1", "open box2", "move hat from box1 to box2", "wear hat"], templates),
            generic("b", ["open box4", "move cap from box3 to box4", "wear cap"], templates)]
    result = distill(runs)
    (c,) = result.clusters
    assert [(g.slot.args, g.share) for g in c.steps[0].pre] == [((("box", "box"),), 0.5),
                                                               ((("box", "target"),), 1.0)]
    skill = load_skills(result, result.clusters)[c.name]
    world = Script(["open box1", "open box2", "move hat from box1 to box2", "wear hat"])
    out = skill(world, thing="hat", box="box1", target="box2", available_actions=world.available_actions)
    assert out["success"], out


def test_a_support_action_moves_to_the_action_it_prepares():
    # The knife is taken before the apple but used for chopping: the skill takes it right before chopping.
    program = [trace(["take knife from table", "take apple from counter", "chop apple with knife", "eat apple"],
                     ident="k")]
    result = distill(program)
    (c,) = result.clusters
    assert [s.core.schema for s in c.steps] == ["take", "cut", "eat"]
    assert [g.slot.template.text for g in c.steps[1].pre] == ["take {item} from {source}"]
    member = c.members[0]
    assert [a.text for a in member.op.actions] == ["take apple from counter", "take knife from table",
                                                   "chop apple with knife", "eat apple"]
    assert [a.text for a in member.op.original][:2] == ["take knife from table", "take apple from counter"]


def test_repeated_support_actions_in_a_loop_do_not_collide():
    doors = {"d1": "d", "d2": "d", "d3": "d"}
    runs = [trace(["open d1", "open d2", "go north", "open d3", "go east"], ident="a", entities=doors),
            trace(["go south", "go west"], ident="b", entities=doors)]
    result = distill(runs)
    (walk,) = result.clusters
    assert walk.steps[0].loop and len(walk.steps[0].pre) == 2
    names = [g.slot.args[0][1] for g in walk.steps[0].pre]
    assert names == ["open_targets", "open_targets_2"]
    a = next(m.binding for m in walk.members if m.op.trace_id == "a")
    assert a == {"directions": ["north", "east"], "open_targets": ["d1", "d3"], "open_targets_2": ["d2", None]}


def test_bom_and_deep_nesting(tmp_path):
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + jsonl(trace(["eat apple"], ident="b")).encode())
    traces, problems = read_traces([path])
    assert [t.id for t in traces] == ["b"] and not problems
    _, problems = parse_traces("[" * 100_000 + "]" * 100_000 + "\n")
    assert codes(problems) == ["SKM401"] and "nests too deeply" in problems[0].message


@pytest.mark.parametrize("game", [{"file": 5}, {"generator": "tw-cooking", "seed": "abc"},
                                  {"generator": "tw-cooking", "seed": 1, "go": True},
                                  {"generator": "tw-cooking", "seed": 1, "colour": "red", "recipe": "two"}])
def test_bad_game_settings_are_skm406(game, distilled, heldout_traces, tmp_path):
    bad = attrs.evolve(heldout_traces[0], id="bad", game=game)
    _, evaluation, problems = verify(distilled, {}, [bad], games=tmp_path)
    assert codes(problems) == ["SKM406"] and evaluation.games == []


def test_a_file_that_is_not_a_game_is_skm406(distilled, heldout_traces, tmp_path):
    fake = tmp_path / "fake.z8"
    fake.write_text("not a game")
    bad = attrs.evolve(heldout_traces[0], id="bad", game={"file": str(fake)})
    _, _, problems = verify(distilled, {}, [bad], games=tmp_path)
    assert codes(problems) == ["SKM406"] and "not a game TextWorld can open" in problems[0].message
    fake.with_suffix(".json").write_text("{}")
    fake.write_bytes(bytes([3]) + bytes(100))  # a Z-machine version 3 story: TextWorld only makes version 8
    _, _, problems = verify(distilled, {}, [bad], games=tmp_path)
    assert codes(problems) == ["SKM406"] and "version 8" in problems[0].message


def test_a_support_goes_to_the_first_core_action_that_needs_it():
    from skillc.frontends.distill.schema import normalise
    from skillc.frontends.distill.segment import segment

    program, _ = normalise(trace(["open fridge", "take knife from fridge", "take apple from fridge",
                                  "chop apple with knife"]))
    (op,) = segment(program)
    assert [([a.text for a in g.pre], g.core.text) for g in op.groups] == [
        (["open fridge"], "take apple from fridge"), (["take knife from fridge"], "chop apple with knife")]


def test_support_order_follows_the_members_that_took_several():
    from tests.frontends.distill.kitchen import Kitchen, play

    t1 = play(Kitchen({"apple": "counter", "knife": "table"}, closed=()), [
        "take apple from counter", "take knife from table", "chop apple with knife", "prepare meal", "eat meal"], "a")
    t2 = play(Kitchen({"carrot": "counter", "knife": "fridge"}, recipe=("carrot",)), [
        "take carrot from counter", "open fridge", "take knife from fridge", "chop carrot with knife",
        "prepare meal", "eat meal"], "b")
    result = distill([t1, t2])
    (c,) = [c for c in result.clusters if c.name.endswith("take_cut")]
    assert [g.slot.template.text for g in c.steps[1].pre] == ["open {target}", "take {item} from {source}"]
    skill = load_skills(result, result.clusters)[c.name]
    member = next(m for m in c.members if m.op.trace_id == "b")
    world = Kitchen({"carrot": "counter", "knife": "fridge"}, recipe=("carrot",))
    out = skill(world, **member.binding, available_actions=world.available_actions)
    assert out["success"], out["error"]
    assert [t["action"] for t in out["process_trace"]] == [a.text for a in member.op.actions]


@pytest.mark.parametrize("actions", [
    ["prepare meal", "prepare meal", "take knife from table", "eat apple", "chop carrot with knife"],
    ["take apple from counter", "eat apple", "prepare meal", "prepare meal"],
    ["inventory", "inventory", "take apple from counter", "eat apple"],
])
def test_degenerate_repetitions_do_not_break_anything(actions, tmp_path):
    from skillc.frontends.distill.cluster import match
    from skillc.frontends.distill.schema import normalise
    from skillc.frontends.distill.segment import operations

    result = distill([trace(actions, ident="d"), trace(actions, ident="e")])
    assert result.ok
    write_library(skill_sources(result, result.clusters), tmp_path)  # every fragment checks
    load_skills(result, result.clusters)
    program, _ = normalise(trace(actions, ident="f"))
    for op in operations(program):
        assert match(op, result.clusters, result.loops) is not None, [a.text for a in op.original]


def test_word_arguments_of_support_actions_are_not_bound_by_coincidence():
    templates = ["set {level:low|high}", "heat {obj} {level:low|high}", "grab {obj} from {place}"]
    result = distill([generic("a", ["grab pot from shelf", "set high", "heat pot high"], templates),
                      generic("b", ["grab cup from box", "set low", "heat cup high"], templates)])
    (c,) = result.clusters
    assert [g.slot.args for g in c.steps[1].pre] == [(("level", "set_level"),)]
    from skillc.frontends.distill.cluster import match
    from skillc.frontends.distill.schema import normalise
    from skillc.frontends.distill.segment import operations

    program, _ = normalise(generic("h", ["grab pan from shelf", "set high", "heat pan low"], templates))
    (op,) = operations(program)
    _, binding = match(op, result.clusters, result.loops)
    assert binding["set_level"] == "high" and binding["level"] == "low"


def test_a_game_that_ends_early_stops_skill_and_fragment_alike(tmp_path):
    from tests.frontends.distill.kitchen import Kitchen, training
    from tests.frontends.distill.test_emit import _run_fragment

    class EndsWhenPrepared(Kitchen):
        def step(self, action):
            seen = super().step(action)
            if action == "prepare meal":
                self.done = seen["done"] = True
            return seen

    result = distill(training())
    write_library(skill_sources(result, result.clusters), tmp_path)
    (c,) = [c for c in result.clusters if c.name == "prepare_meal_eat"]
    by_python = EndsWhenPrepared({}, closed=(), recipe=(), carried=())
    out = load_skills(result, result.clusters)[c.name](by_python, item="meal",
                                                       available_actions=by_python.available_actions)
    assert not out["success"] and out["error"] == "the game ended before `eat meal`"
    by_machine = EndsWhenPrepared({}, closed=(), recipe=(), carried=())
    outcome = _run_fragment(tmp_path, c, by_machine, {"item": "meal"})
    assert outcome.terminal == "broken" and by_machine.log == by_python.log == ["prepare meal"]


VOCABULARY = ["take apple from counter", "take carrot from fridge", "take knife from table", "open fridge",
              "open wooden door", "go north", "go east", "cook apple with stove", "cook carrot with oven",
              "chop apple with knife", "slice carrot with knife", "prepare meal", "eat meal", "eat apple",
              "juggle apple"]


@settings(max_examples=int(os.environ.get("SKILLC_DISTILL_EXAMPLES", "60")), deadline=None)
@given(st.lists(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=14), min_size=1, max_size=6),
       st.floats(0.0, 1.0))
def test_random_traces_never_crash_and_every_fragment_checks(runs, min_reuse):
    """Property: any mix of traces distils without an exception, and whatever it emits checks and imports."""
    traces = [trace(actions, ident=f"r{k}") for k, actions in enumerate(runs)]
    result = distill(traces, min_reuse=min_reuse)
    assert all(str(d.code).startswith("SKM4") for d in result.diagnostics)
    files = skill_sources(result, result.clusters)  # fragment_source checks every fragment
    assert sum(1 for name in files if name.startswith("fragments/")) == len(result.clusters)
    load_skills(result, result.clusters)
    from skillc.frontends.distill.cluster import match
    from skillc.frontends.distill.schema import normalise
    from skillc.frontends.distill.segment import operations

    for t in traces:
        program, _ = normalise(t)
        for op in operations(program) if program else ():
            found = match(op, result.clusters, result.loops)
            if found is not None:  # a training operation of a kept cluster binds every required parameter
                cluster, binding = found
                assert {p.name for p in cluster.params if not p.optional} <= set(binding)
