"""Skills that generalise (issue 21): enabling actions stay with what they enable, preconditions are a real
gate, verification blames lost games on the call responsible, and the emitted code is what it says."""

from __future__ import annotations

import json
import subprocess
import sys

import attrs
import pytest

import skillc
from skillc.frontends.distill import distill
from skillc.frontends.distill.library import load_skills, skill_sources, write_library
from skillc.frontends.distill.report import table
from skillc.frontends.distill.schema import normalise
from skillc.frontends.distill.segment import segment
from skillc.frontends.distill.trace import Episode, Transition
from skillc.frontends.distill.verify import verify
from skillc.runtime import Interpreter, RunOptions, ToolBox
from skillc.runtime.executors.scripted import ScriptedExecutor
from tests.conftest import codes
from tests.frontends.distill.conftest import KITCHEN
from tests.frontends.distill.kitchen import Kitchen, training
from tests.frontends.distill.test_emit import host


def walk(pairs, ident="w") -> Episode:
    """A trace of (action, actions available before it) pairs; the last step is done."""
    steps = tuple(Transition("", a, "", tuple(available), 0.0, i == len(pairs) - 1)
                  for i, (a, available) in enumerate(pairs))
    return Episode(ident, steps, True, env="textworld", entities=KITCHEN)


def groups(t: Episode):
    program, problems = normalise(t)
    assert not problems
    return [(op.anchor, [([a.text for a in g.pre], g.core.text) for g in op.groups]) for op in segment(program)]


# ---------------------------------------------------------------------------------------------- segmentation

def test_a_door_opened_for_a_later_move_is_not_a_step_of_the_next_move():
    # `go north` was available before the door was opened: a skill would skip `open wooden door` there.
    ops = groups(walk([
        ("open wooden door", ["open wooden door", "go north"]),
        ("go north", ["go north", "go east", "close wooden door"]),
        ("go south", ["go south"]),
        ("go east", ["go east", "go north", "close wooden door"]),
    ]))
    assert ops == [("<nav>", [([], "go north"), ([], "go south"), (["open wooden door"], "go east")])], ops


def test_a_door_for_a_later_move_without_evidence_stands_alone():
    # The door is not at hand when `go east` is played (no available action names it): it stays where it was.
    ops = groups(walk([
        ("open wooden door", ["open wooden door", "go north"]),
        ("go north", ["go north", "go east"]),
        ("go east", ["go east", "go west"]),
    ]))
    assert ops[0] == ("wooden door", [([], "open wooden door")]) and ops[1][0] == "<nav>"


def test_a_door_still_joins_the_move_it_opens():
    ops = groups(walk([("go west", ["go west"]), ("open wooden door", ["open wooden door", "go east"]),
                       ("go north", ["go north", "go east"])]))
    assert ops == [("<nav>", [([], "go west"), (["open wooden door"], "go north")])]


def test_a_support_action_whose_consumer_was_available_already_is_not_its_support():
    # Another knife was carried: `chop apple with knife` was available before `take knife from table`.
    ops = groups(walk([("take apple from counter", ["take apple from counter"]),
                       ("take knife from table", ["take knife from table", "chop apple with knife"]),
                       ("chop apple with knife", ["chop apple with knife"])]))
    assert [g for _anchor, gs in ops for g in gs] == [([], "take apple from counter"), ([], "take knife from table"),
                                                      ([], "chop apple with knife")]


# ---------------------------------------------------------------------------------------------- preconditions

@pytest.fixture(scope="module")
def kitchen():
    result = distill(training())
    assert result.ok
    return result


def test_preconditions_refuse_a_thing_that_is_elsewhere(kitchen):
    skill = load_skills(kitchen, kitchen.clusters)["take_cook_cut"]
    # The carrot lies on the counter; the fridge is closed. Opening the fridge cannot make
    # `take carrot from fridge` available, although `open fridge` is.
    world = Kitchen({"carrot": "counter", "knife": "table"}, recipe=("carrot",))
    assert "open fridge" in world.available_actions
    assert not skill.preconditions_hold(world.available_actions, "carrot", "fridge", "stove", "dice", "knife")
    # Where the carrot is in the closed fridge, the support action may bring it: the gate lets it through.
    world = Kitchen({"carrot": "fridge", "knife": "table"}, recipe=("carrot",))
    assert skill.preconditions_hold(world.available_actions, "carrot", "fridge", "stove", "dice", "knife")
    assert skill(world, "carrot", "fridge", "stove", "dice", "knife",
                 available_actions=world.available_actions)["success"]
    assert "no available `take {item} from {source}` acts on the same `item`" in skill.__doc__


class Spoiling(Kitchen):
    """A kitchen where cooking `spoils` loses the game (TextWorld does so for a ruined ingredient)."""

    def __init__(self, *args, spoils: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.spoils = spoils

    def step(self, action):
        seen = super().step(action)
        if action.startswith(f"cook {self.spoils} "):
            self.done = True
            return {**seen, "done": True, "lost": True, "available_actions": []}
        return seen


def test_a_game_lost_during_a_call_is_an_error_that_says_so(kitchen):
    skill = load_skills(kitchen, kitchen.clusters)["take_cook_cut"]
    world = Spoiling({"carrot": "counter", "knife": "table"}, closed=(), recipe=("carrot",), spoils="carrot")
    result = skill(world, "carrot", "counter", "stove", "dice", "knife", available_actions=world.available_actions)
    assert not result["success"] and result["error"] == "the game was lost after `cook carrot with stove`"
    assert [t["action"] for t in result["process_trace"]] == ["take carrot from counter", "cook carrot with stove"]


# ---------------------------------------------------------------------------------------------- verification

def test_a_lost_game_is_blamed_on_the_call_that_left_the_walkthrough(distilled, heldout_traces, games):
    skills = load_skills(distilled, distilled.clusters)

    def cooks_only(env, item, appliance, **_kwargs):
        """Plays the first action of `cook_cut` and claims success: the knife is never taken, nothing cut."""
        action = f"cook {item} with {appliance}"
        env.step(action)
        return {"success": True, "observation": "", "available_actions": env.available_actions,
                "process_trace": [{"action": action, "kind": "core", "observation": ""}], "error": None,
                "done": False}

    cooks_only.preconditions_hold = skills["cook_cut"].preconditions_hold
    skills["cook_cut"] = cooks_only
    kept, evaluation, problems = verify(distilled, skills, heldout_traces[:1], games=games)
    assert codes(problems) == ["SKM405"], [(str(d.code), d.message) for d in problems]
    (d,) = problems
    assert "skill `cook_cut` failed 1 of 1 held-out calls" in d.message
    assert "after the call `cook_cut(item='green apple', appliance='oven'" in d.message
    assert d.witness == ("cook green apple with oven",)
    assert "it did not play `take knife from counter`, `chop green apple with knife`" in d.notes[0]
    assert "cook_cut" not in [c.name for c in kept]
    # Replayed without it, the game is won: the evaluation reported is of the kept library.
    assert evaluation.won == 1 and evaluation.errors == 0 and evaluation.dropped["cook_cut"].errors == 1


def _broken(t: Episode, action: str) -> Episode:
    """The held-out trace without one of its actions: it no longer replays to a win."""
    steps = tuple(s for s in t.steps if s.action != action)
    return attrs.evolve(t, id=t.id + "-broken", steps=steps)


def test_a_lost_game_that_no_call_is_to_blame_for_is_an_error(distilled, heldout_traces, games):
    broken = _broken(heldout_traces[1], "cook orange bell pepper with oven")
    skills = load_skills(distilled, distilled.clusters)
    kept, evaluation, problems = verify(distilled, skills, [broken], games=games)
    assert codes(problems) == ["SKM407"], [(str(d.code), d.message) for d in problems]
    assert problems[0].is_error and broken.id in problems[0].message
    assert kept == distilled.clusters
    assert evaluation.won == 0 and evaluation.lost == 1 and evaluation.unattributed == 1 and evaluation.errors == 1
    report = table(distilled, kept, evaluation)
    assert "1 game, 0 won with skills, 1 lost (1 not attributed to a skill call)" in report
    assert "1 execution error" in report and "0 execution errors" not in report


def test_a_lost_game_fails_the_command(distilled, heldout_traces, games, tmp_path):
    from click.testing import CliRunner

    from skillc.cli import main
    from tests.frontends.distill.conftest import TRAIN, jsonl

    broken = _broken(heldout_traces[1], "cook orange bell pepper with oven")
    path = tmp_path / "heldout.jsonl"
    path.write_text(jsonl(attrs.evolve(broken, game={k: v for k, v in broken.game.items() if k != "file"})))
    r = CliRunner().invoke(main, ["distill", str(TRAIN), "--heldout", str(path), "--games", str(games),
                                  "--report", "--format", "json"])
    assert r.exit_code == 1, r.output
    report = json.loads(r.stdout)
    assert report["evaluation"]["lost"] == 1 and report["evaluation"]["unattributed"] == 1
    assert [d["code"] for d in report["diagnostics"]] == ["SKM407"]


# ---------------------------------------------------------------------------------------------- emission

def test_emitted_python_passes_mypy_strict(kitchen, distilled, tmp_path):
    from tests.frontends.distill.test_pddl import distilled_domain

    gripper = distilled_domain("gripper")[1]
    for result, folder in ((kitchen, tmp_path / "kitchen"), (distilled, tmp_path / "textworld"),
                           (gripper, tmp_path / "gripper")):
        write_library(skill_sources(result, result.clusters), folder)
        done = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir",
                               str(tmp_path / ".mypy"), "skills"], cwd=folder, capture_output=True, text=True,
                              timeout=240)
        assert done.returncode == 0, done.stdout + done.stderr


def test_postconditions_name_the_element_and_words_are_enums(distilled, tmp_path):
    from skillc.frontends.distill.emit_skm import param_type

    (walk_skill,) = [c for c in distilled.clusters if c.name == "repeat_go"]
    files = skill_sources(distilled, [walk_skill])
    source = files["skills/repeat_go.py"]
    assert "the player has moved {directions[i]}" in source and "moved {directions}'" not in source
    assert "open_targets: Sequence[str | None] | None = None" in source
    fragment = files["fragments/repeat_go.skm"]
    assert "directions: list[enum { east, north, south, west }]" in fragment
    (cut,) = [c for c in distilled.clusters if c.name == "cook_cut"]
    assert param_type(next(p for p in cut.params if p.name == "style")).startswith("enum {")
    assert "style: enum {" in skill_sources(distilled, [cut])["fragments/cook_cut.skm"]


class Rooms:
    """Rooms on a line, west to east, with closed doors between some of them."""

    def __init__(self, doors: dict[int, str], rooms: int = 4):
        self.at, self.rooms, self.doors, self.opened, self.log = 0, rooms, dict(doors), set(), []

    @property
    def available_actions(self):
        out = []
        if self.at + 1 < self.rooms:
            door = self.doors.get(self.at)
            out += ["go east"] if door is None or door in self.opened else [f"open {door}"]
        return out + (["go west"] if self.at > 0 else [])

    def step(self, action):
        self.log.append(action)
        if action not in self.available_actions:
            return {"observation": "You can't.", "available_actions": self.available_actions, "done": False}
        if action.startswith("open "):
            self.opened.add(action[5:])
        else:
            self.at += 1 if action == "go east" else -1
        return {"observation": f"room {self.at}", "available_actions": self.available_actions, "done": False}


def _fragment_run(folder, cluster, world, binding):
    # The host requires `error` on failure, so the run's evidence shows the reason the fragment gave.
    text = host(cluster.name, cluster.params).replace("terminal broken: failed",
                                                      "terminal broken: failed { requires error }")
    machine = skillc.check(text, path=str(folder / "host.skm")).machine

    def act(command):
        seen = world.step(command)
        return {"observation": seen["observation"], "admissible": seen["available_actions"], "done": seen["done"]}

    tools = ToolBox({"act": act, "observe": lambda: {"observation": "", "admissible": world.available_actions}})
    return Interpreter(machine, ScriptedExecutor({}), tools, RunOptions(), text).run(binding)


def test_fragments_accept_absent_optional_lists_and_fail_with_a_reason(distilled, tmp_path):
    (c,) = [c for c in distilled.clusters if c.name == "repeat_go"]
    write_library(skill_sources(distilled, [c]), tmp_path)
    skill = load_skills(distilled, [c])[c.name]
    # No door to open: the optional list of doors is left out (empty), as the Python skill's None.
    by_machine, by_python = Rooms({}), Rooms({})
    outcome = _fragment_run(tmp_path, c, by_machine, {"directions": ["east", "east"], "open_targets": []})
    result = skill(by_python, ["east", "east"], available_actions=by_python.available_actions)
    assert outcome.terminal == "ok" and result["success"]
    assert by_machine.log == by_python.log == ["go east", "go east"]
    # A closed door the caller did not name: the fragment cannot search for it, and says what was missing.
    by_machine = Rooms({1: "barn door"})
    outcome = _fragment_run(tmp_path, c, by_machine, {"directions": ["east", "east"], "open_targets": []})
    assert outcome.terminal == "broken" and by_machine.log == ["go east"]
    assert outcome.evidence["error"] == "`go east` is not available"


def test_one_game_is_one_game(distilled, heldout_traces, games):
    skills = load_skills(distilled, distilled.clusters)
    kept, evaluation, _ = verify(distilled, skills, heldout_traces[:1], games=games)
    assert "held-out: 1 game, 1 won with skills" in table(distilled, kept, evaluation)
