"""Compilation: every cluster as a checked `.skm` fragment and as a Python skill, run in a small world."""

from __future__ import annotations

import ast

import pytest

import skillc
from skillc.frontends.distill import distill
from skillc.frontends.distill.emit_skm import param_type
from skillc.frontends.distill.library import load_skills, skill_sources, write_library
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.scripted import ScriptedExecutor
from tests.frontends.distill.kitchen import Kitchen, training


@pytest.fixture(scope="module")
def kitchen_library():
    result = distill(training())
    assert result.ok
    return result


def host(name: str, params) -> str:
    """A machine that imports a fragment and uses it with every parameter bound to an input."""
    inputs = "\n".join(f"  input {p.name}: {param_type(p)}" for p in params)
    binds = ", ".join(f"{p.name}: {p.name}" for p in params)
    return (f'import "fragments/{name}.skm"\n\nmachine host {{\n'
            "  tool act(command: str) -> (observation: str, admissible: list[str], done: bool)\n"
            "  tool observe() -> (observation: str, admissible: list[str])\n"
            f"{inputs}\n  var observation: str = \"\"\n  var admissible: list[str] = []\n  var error: str = \"\"\n"
            f"  use {name} as skill({binds}, observation: observation, admissible: admissible, error: error) "
            "-> (done: ok, failed: broken)\n  start skill\n  terminal ok: success\n  terminal broken: failed\n"
            "  fallback\n}\n")


def test_kitchen_skills(kitchen_library):
    names = [c.name for c in kitchen_library.clusters]
    assert sorted(names) == ["prepare_meal_eat", "take_cook_cut"]
    (take_cook_cut,) = [c for c in kitchen_library.clusters if c.name == "take_cook_cut"]
    assert [g.slot.template.text for g in take_cook_cut.steps[0].pre] == ["open {target}"]
    assert [g.slot.template.text for g in take_cook_cut.steps[2].pre] == ["take {item} from {source}"]


def test_every_fragment_checks_and_can_be_used(kitchen_library, distilled, tmp_path):
    for result, folder in ((kitchen_library, tmp_path / "kitchen"), (distilled, tmp_path / "textworld")):
        write_library(skill_sources(result, result.clusters), folder)
        for c in result.clusters:
            fragment = folder / "fragments" / f"{c.name}.skm"
            checked = skillc.check(fragment)
            assert not [d for d in checked.diagnostics if d.severity.name != "NOTE"], (c.name, checked.diagnostics)
            used = skillc.check(host(c.name, c.params), path=str(folder / "host.skm"))
            assert not [d for d in used.diagnostics if d.severity.name != "NOTE"], (c.name, used.diagnostics)
            assert f"use {c.name} as {c.name}(" in fragment.read_text()  # the header shows how to use it


def test_python_sources_are_documented_and_typed(kitchen_library):
    files = skill_sources(kitchen_library, kitchen_library.clusters)
    source = files["skills/take_cook_cut.py"]
    tree = ast.parse(source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "take_cook_cut")
    doc = ast.get_docstring(fn)
    for section in ("Args:", "Preconditions:", "Postconditions:", "Side effects:", "Metadata:", "Returns:"):
        assert section in doc
    assert "confidence r_k = 1.00" in doc and "abstraction level 1" in doc
    args = [a.arg for a in fn.args.args] + [a.arg for a in fn.args.kwonlyargs]
    assert args == ["env", "item", "source", "appliance", "style", "tool", "tool_source", "available_actions"]
    assert all(a.annotation is not None for a in fn.args.args)
    assert "Literal['chop', 'dice', 'slice']" in source
    assert "apple is cooked" not in doc and "{item} is cooked with {appliance}" in doc


def test_skills_take_support_actions_only_when_the_observation_needs_them(kitchen_library):
    skills = load_skills(kitchen_library, kitchen_library.clusters)
    skill = skills["take_cook_cut"]
    assert skill.metadata["confidence"] == 1.0 and skill.metadata["primitives_per_call"]["max"] == 5

    closed = Kitchen({"carrot": "fridge", "knife": "counter"}, recipe=("carrot",))
    result = skill(closed, "carrot", "fridge", "stove", "dice", "knife", available_actions=closed.available_actions)
    assert result["success"], result["error"]
    assert [(t["action"], t["kind"]) for t in result["process_trace"]] == [
        ("open fridge", "support"), ("take carrot from fridge", "core"), ("cook carrot with stove", "core"),
        ("take knife from counter", "support"), ("dice carrot with knife", "core")]
    assert "prepare meal" in result["available_actions"] and result["observation"] == "You dice carrot with knife."

    ready = Kitchen({"carrot": "counter"}, closed=(), recipe=("carrot",), carried=("knife",))
    result = skill(ready, "carrot", "counter", "oven", "chop", "knife", available_actions=ready.available_actions)
    assert [t["kind"] for t in result["process_trace"]] == ["core"] * 3


def test_a_skill_reports_what_was_not_available(kitchen_library):
    skill = load_skills(kitchen_library, kitchen_library.clusters)["take_cook_cut"]
    world = Kitchen({"carrot": "counter"}, closed=(), recipe=("carrot",))  # no knife anywhere
    assert skill.preconditions_hold(world.available_actions, "carrot", "counter", "stove", "dice", "knife")
    result = skill(world, "carrot", "counter", "stove", "dice", "knife", available_actions=world.available_actions)
    assert not result["success"] and result["error"] == "`dice carrot with knife` is not available"
    assert [t["action"] for t in result["process_trace"]] == ["take carrot from counter", "cook carrot with stove"]
    assert not skill.preconditions_hold(world.available_actions, "potato", "counter", "stove", "dice", "knife")


def _run_fragment(folder, cluster, world, binding):
    text = host(cluster.name, cluster.params)
    machine = skillc.check(text, path=str(folder / "host.skm")).machine

    def act(command):
        seen = world.step(command)
        return {"observation": seen["observation"], "admissible": seen["available_actions"], "done": seen["done"]}

    def observe():
        return {"observation": "", "admissible": world.available_actions}

    tools = ToolBox({"act": act, "observe": observe})
    return Interpreter(machine, ScriptedExecutor({}), tools, RunOptions(), text).run(binding)


def test_fragment_and_python_skill_play_the_same_actions(kitchen_library, tmp_path):
    write_library(skill_sources(kitchen_library, kitchen_library.clusters), tmp_path)
    skills = load_skills(kitchen_library, kitchen_library.clusters)
    (c,) = [c for c in kitchen_library.clusters if c.name == "take_cook_cut"]
    cases = [({"carrot": "fridge", "knife": "counter"}, ("fridge",), ()),
             ({"carrot": "counter"}, (), ("knife",)),
             ({"carrot": "counter"}, (), ())]  # fails: no knife
    for places, closed, carried in cases:
        binding = {"item": "carrot", "source": places["carrot"], "appliance": "oven", "style": "slice",
                   "tool": "knife", "tool_source": places.get("knife", "")}
        by_machine = Kitchen(places, closed=closed, recipe=("carrot",), carried=carried)
        outcome = _run_fragment(tmp_path, c, by_machine, binding)
        by_python = Kitchen(places, closed=closed, recipe=("carrot",), carried=carried)
        result = skills[c.name](by_python, **{k: v or None for k, v in binding.items()},
                                available_actions=by_python.available_actions)
        assert by_machine.log == by_python.log
        assert (outcome.terminal == "ok") == result["success"]
