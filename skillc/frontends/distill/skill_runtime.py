"""Runtime of distilled skills: copied by `skillc distill` into every library as `skills/_runtime.py`.

It needs only the standard library. A skill drives an environment through
`env.step(action)`, which may return TextWorld's `(game_state, score, done)`
(the state gives `feedback` and `admissible_commands`) or a mapping with
`observation`, `available_actions` and `done`. Control flow is deterministic
and branches only on the latest observation: a support action runs when the
core action it prepares is not available and the support action is.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypedDict

_HOLE = re.compile(r"\{(\w+)(?::[^}]*)?\}")


class TraceStep(TypedDict):
    """One action a skill played: the command, whether it was a support or the core action, what came back."""

    action: str
    kind: Literal["support", "core"]
    observation: str


class SkillResult(TypedDict):
    """What every skill returns."""

    success: bool
    observation: str
    available_actions: list[str]
    process_trace: list[TraceStep]
    error: str | None
    done: bool


def _get(state: object, key: str) -> Any:  # Any: a field of the environment's own state
    if isinstance(state, Mapping):
        return state.get(key)
    return getattr(state, key, None)


def unpack(result: object) -> tuple[str, list[str], bool, bool]:
    """(observation, available actions, done, lost) from what `env.step` returned."""
    if isinstance(result, Mapping) and "observation" in result:
        return (str(result["observation"]), list(result.get("available_actions") or []), bool(result.get("done")),
                bool(result.get("lost")))
    if isinstance(result, tuple) and len(result) == 3:
        state, _score, done = result
        return (str(_get(state, "feedback") or ""), list(_get(state, "admissible_commands") or []), bool(done),
                bool(_get(state, "lost")))
    raise TypeError(f"env.step returned {type(result).__name__}; expected (state, score, done) or a mapping")


def render(template: str, values: Mapping[str, str | None], available: Sequence[str]) -> str | None:
    """The command of `template` for `values`; a value that is None is found in `available` when unique."""
    if all(values.get(m.group(1)) is not None for m in _HOLE.finditer(template)):
        return _HOLE.sub(lambda m: str(values[m.group(1)]), template)
    found = [a for a in available if _pattern(template, values).match(a)]
    return found[0] if len(found) == 1 else None


def _pattern(template: str, values: Mapping[str, str | None]) -> re.Pattern[str]:
    """A regex of the commands of `template` that agree with the values that are not None."""
    pattern, pos = [], 0
    for m in _HOLE.finditer(template):
        pattern.append(re.escape(template[pos:m.start()]))
        value = values.get(m.group(1))
        pattern.append(re.escape(str(value)) if value is not None else ".+?")
        pos = m.end()
    return re.compile("".join(pattern) + re.escape(template[pos:]) + r"\Z")


def at(values: Sequence[str | None] | None, index: int) -> str | None:
    """Item `index` of a per-iteration list, or None when the list is missing or short."""
    return values[index] if values is not None and index < len(values) else None


class SkillRun:
    """One execution of a skill: the latest observation, the actions taken, and the first error."""

    def __init__(self, env: Any, available_actions: Sequence[str] | None = None, observation: str = "") -> None:
        self.env = env
        if available_actions is None:
            available_actions = _get(getattr(env, "state", None), "admissible_commands") or getattr(
                env, "available_actions", None)
        if available_actions is None:
            raise TypeError("pass available_actions: the actions the latest observation offers")
        self.available = list(available_actions)
        self.observation = observation
        self.trace: list[TraceStep] = []
        self.error: str | None = None
        self.done = False

    def _act(self, action: str, kind: Literal["support", "core"]) -> None:
        self.observation, self.available, self.done, lost = unpack(self.env.step(action))
        self.trace.append({"action": action, "kind": kind, "observation": self.observation})
        if lost:
            self.error = f"the game was lost after `{action}`"

    def step(self, template: str, values: Mapping[str, str | None],
             support: Sequence[tuple[str, Mapping[str, str | None]]] = ()) -> None:
        """Run the support actions the observation calls for, then the core action."""
        if self.error is not None:
            return
        core = render(template, values, self.available)
        for pre_template, pre_values in support:
            if core is not None and core in self.available:
                break
            pre = render(pre_template, pre_values, self.available)
            if pre is not None and pre in self.available and not self.done:
                self._act(pre, "support")
                if self.error is not None:
                    return
                core = render(template, values, self.available)
        if self.done:
            self.error = f"the game ended before `{core or template}`"
        elif core is None or core not in self.available:
            self.error = f"`{core or template}` is not available"
        else:
            self._act(core, "core")

    def fail(self, reason: str) -> SkillResult:
        """Stop before acting, for a reason found in the arguments."""
        self.error = reason
        return self.result()

    def can_start(self, template: str, values: Mapping[str, str | None],
                  support: Sequence[tuple[str, Mapping[str, str | None]]] = (), focus: str | None = None) -> bool:
        """Whether the first core action is available now, or its support actions may make it available.

        The core action with its arguments must be available, or else: no available action of its template
        acts on the same `focus` value with other arguments (the thing is elsewhere, so no support action
        brings this one), and one of its support actions, which training took to make it available, is
        available now.
        """
        core = render(template, values, self.available)
        if core is not None and core in self.available:
            return True
        if focus is not None and values.get(focus) is not None:
            same_focus = _pattern(template, {focus: values[focus]})
            if any(same_focus.match(a) for a in self.available):
                return False
        for t, v in support:
            command = render(t, v, self.available)
            if command is not None and command in self.available:
                return True
        return False

    def result(self) -> SkillResult:
        return SkillResult(success=self.error is None, observation=self.observation,
                           available_actions=list(self.available), process_trace=list(self.trace),
                           error=self.error, done=self.done)
