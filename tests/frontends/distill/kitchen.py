"""A tiny deterministic cooking world, to run distilled skills and fragments without TextWorld."""

from __future__ import annotations

from skillc.frontends.distill.trace import Episode, Transition

ENTITIES = {"apple": "f", "carrot": "f", "potato": "f", "knife": "o", "fridge": "c", "counter": "s",
            "table": "s", "stove": "stove", "oven": "oven", "meal": "meal"}


class Kitchen:
    """Things lie in places; closed containers hide theirs; cooking and cutting need the thing carried."""

    def __init__(self, places: dict[str, str], closed=("fridge",), recipe=("apple",), carried=()):
        self.places = dict(places)
        self.closed = set(closed)
        self.carried = set(carried)
        self.recipe = tuple(recipe)
        self.done = False
        self.log: list[str] = []

    @property
    def available_actions(self) -> list[str]:
        out = [f"take {thing} from {place}" for thing, place in self.places.items() if place not in self.closed]
        out += [f"open {c}" for c in sorted(self.closed)]
        for thing in sorted(self.carried - {"knife", "meal"}):
            out += [f"cook {thing} with stove", f"cook {thing} with oven"]
            if "knife" in self.carried:
                out += [f"{verb} {thing} with knife" for verb in ("chop", "slice", "dice")]
        if set(self.recipe) <= self.carried:
            out.append("prepare meal")
        if "meal" in self.carried:
            out.append("eat meal")
        return sorted(out)

    def step(self, action: str) -> dict:
        """Play one action: a mapping with the observation, the available actions and done."""
        self.log.append(action)
        words = action.split()
        if action not in self.available_actions:
            return self._seen("You can't do that.")
        if words[0] == "take":
            thing = action[5:action.index(" from ")]
            del self.places[thing]
            self.carried.add(thing)
        elif words[0] == "open":
            self.closed.discard(action[5:])
        elif action == "prepare meal":
            self.carried -= set(self.recipe)
            self.carried.add("meal")
        elif action == "eat meal":
            self.done = True
        return self._seen(f"You {action}.")

    def _seen(self, text: str) -> dict:
        return {"observation": text, "available_actions": self.available_actions, "done": self.done}


def play(kitchen: Kitchen, actions, ident: str) -> Episode:
    """Play `actions` and record them as a successful trace."""
    steps = []
    for action in actions:
        available = tuple(kitchen.available_actions)
        seen = kitchen.step(action)
        assert seen["observation"] != "You can't do that.", action
        steps.append(Transition("", action, seen["observation"], available, 0, seen["done"]))
    return Episode(ident, tuple(steps), True, env="textworld", entities=ENTITIES)


def training() -> list[Episode]:
    """Four runs: apples and carrots from an open or closed fridge, with or without the knife at hand."""
    return [
        play(Kitchen({"apple": "fridge", "knife": "table"}), [
            "open fridge", "take apple from fridge", "cook apple with stove", "take knife from table",
            "chop apple with knife", "prepare meal", "eat meal"], "k1"),
        play(Kitchen({"carrot": "counter", "knife": "counter"}, closed=(), recipe=("carrot",)), [
            "take carrot from counter", "cook carrot with oven", "take knife from counter",
            "dice carrot with knife", "prepare meal", "eat meal"], "k2"),
        play(Kitchen({"potato": "counter"}, closed=(), recipe=("potato",), carried=("knife",)), [
            "take potato from counter", "cook potato with stove", "slice potato with knife", "prepare meal",
            "eat meal"], "k3"),
        play(Kitchen({"apple": "fridge", "knife": "table"}), [
            "open fridge", "take apple from fridge", "cook apple with oven", "take knife from table",
            "slice apple with knife", "prepare meal", "eat meal"], "k4"),
    ]
