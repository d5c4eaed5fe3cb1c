"""Operation extraction: cut a program into sub-goal operations.

Each action gets an *anchor*, the sub-goal it serves:

- a move (`go`) serves navigation, `<nav>`;
- a *core* action serves its focus, the first entity it acts on;
- a *support* action prepares a later action, its *consumer*, and serves the
  consumer's anchor:
  - an action that names no entity prepares the next core action (`prepare
    meal` before `eat meal`);
  - an action on a door prepares the move it makes available (`open door`,
    `go east`): where the trace lists available actions, the first later move
    that was not available before it and stayed available until played; a
    move that was available already does not need it; with anything but moves
    and door actions in between it stands alone;
  - an action whose focus the next action naming it uses in another role
    prepares that action (`open fridge` before `take apple from fridge`,
    `take knife` before `chop apple with knife`), unless a move comes first
    (`take knife`, `go north`, `chop … with knife` keeps `take knife` alone).

A support action stays support only when every action between it and its
consumer serves the same anchor, and (where the trace lists available
actions) its consumer was not available before it; otherwise it is a core
action of its own. A profile that declares its support schemas lets only
those be support actions, and (where the trace lists available actions) each
prepares the first later action it made available, before any move.
An operation is a maximal run of actions with one anchor, cut into groups:
the support actions a core action consumes (in trace order), then that core
action. Operations of one action are not sub-goals and stay primitive.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from skillc.frontends.distill.schema import Action, Program

NAV = "<nav>"
MIN_STEPS = 2


@attrs.frozen
class Group:
    """Support actions (possibly none), then the core action they prepare."""

    pre: tuple[Action, ...]
    core: Action


@attrs.frozen
class Operation:
    """A run of actions that serve one anchor: trace actions `start` to `start + len(op)`, grouped."""

    trace_id: str
    anchor: str
    start: int
    groups: tuple[Group, ...]
    original: tuple[Action, ...] = attrs.field(eq=False, repr=False)

    @property
    def actions(self) -> tuple[Action, ...]:
        """The primitive actions grouped: each core action right after the support actions it consumes."""
        return tuple(a for g in self.groups for a in (*g.pre, g.core))

    def __len__(self) -> int:
        return len(self.original)


def _newly_available(program: Program, index: int) -> frozenset[str] | None:
    """The commands the action at `index` made available, as the trace shows (None: the trace does not say)."""
    steps = program.trace.steps
    if index + 1 >= len(steps) or not steps[index + 1].available_actions:
        return None
    return frozenset(_norm(a) for a in steps[index + 1].available_actions) - _available(program, index)


def _available(program: Program, index: int) -> frozenset[str]:
    """The commands available before the action at `index` (empty when the trace does not list them)."""
    return frozenset(_norm(a) for a in program.trace.steps[index].available_actions)


def _norm(command: str) -> str:
    return " ".join(command.split())


def _door_consumer(program: Program, index: int, consumer: list[int | None]) -> int | None:
    """The move an action on a door prepares, with only moves and door actions in between.

    That is the first move after it, unless the trace shows that move was available before the door action
    (a skill would skip the door action there and miss it later). Then it is the first later move that the
    door action made available, played where the door is still at hand (an available action names it);
    with no such move it prepares nothing and stands alone.
    """
    profile, actions = program.profile, program.actions
    focus = actions[index].focus
    if focus is None:
        return None  # only an action on a door (its focus) prepares a move this way
    after = index + 1
    while after < len(actions) and consumer[after] is not None and (f := actions[after].focus) is not None \
            and f.type in profile.nav_types:
        after += 1
    if after >= len(actions) or actions[after].schema not in profile.nav_schemas:
        return None
    if actions[after].text not in _available(program, index):
        return after
    newly = _newly_available(program, index) or frozenset()
    door = focus.value
    for later in range(after + 1, len(actions)):
        action = actions[later]
        if action.schema not in profile.nav_schemas:
            if action.focus is None or action.focus.type not in profile.nav_types:
                return None
            continue
        if action.text in newly and any(door in a for a in _available(program, later)):
            return later
    return None


def _consumers(program: Program) -> list[int | None]:
    """For each action, the index of the action it prepares (its consumer), or None for a core action.

    Where the trace lists available actions, a support action whose consumer was already available before
    it did not prepare it (a skill would skip it): it is a core action of its own.
    """
    profile = program.profile
    actions = program.actions
    consumer: list[int | None] = [None] * len(actions)
    next_use: dict[str, tuple[int, bool]] = {}  # value -> (next action naming it, whether as its focus)
    next_move = len(actions)
    next_core: int | None = None
    for index in range(len(actions) - 1, -1, -1):
        action = actions[index]
        focus = action.focus
        nav = action.schema in profile.nav_schemas
        if nav or (profile.support is not None and action.schema not in profile.support):
            pass
        elif profile.support is not None and (newly := _newly_available(program, index)) is not None:
            # A declared support action prepares the first later action it made available (before any move).
            consumer[index] = next((j for j in range(index + 1, min(next_move, len(actions)))
                                    if actions[j].text in newly), None)
        elif focus is None:
            consumer[index] = next_core
        elif focus.type in profile.nav_types:
            consumer[index] = _door_consumer(program, index, consumer)
        else:
            use = next_use.get(focus.value)
            if use is not None and not use[1] and use[0] < next_move:
                consumer[index] = use[0]
        c = consumer[index]
        if c is not None and actions[c].text in _available(program, index):
            consumer[index] = None
        for arg in action.entities:
            next_use[arg.value] = (index, focus is not None and arg.value == focus.value)
        if nav:
            next_move = index
        if consumer[index] is None:
            next_core = index
    return consumer


def segment(program: Program) -> list[Operation]:
    """Every operation of a program, covering all its actions in order (short ones included)."""
    actions = program.actions
    consumer = _consumers(program)
    anchors: list[str] = [""] * len(actions)
    run_end = [0] * len(actions)  # the last index of the run of equal anchors that starts here
    for i in range(len(actions) - 1, -1, -1):
        c = consumer[i]
        # Everything between a support action and its consumer must serve the consumer's anchor.
        if c is not None and anchors[i + 1] == anchors[c] and run_end[i + 1] >= c:
            anchors[i] = anchors[c]
        else:
            consumer[i] = None
            action = actions[i]
            if action.schema in program.profile.nav_schemas:
                anchors[i] = NAV
            else:
                anchors[i] = action.focus.value if action.focus is not None else f"<{action.schema}>"
        same = i + 1 < len(actions) and anchors[i + 1] == anchors[i]
        run_end[i] = run_end[i + 1] if same else i
    ops: list[Operation] = []
    i = 0
    while i < len(actions):
        j = i
        while j < len(actions) and anchors[j] == anchors[i]:
            j += 1
        ops.append(Operation(program.trace.id, anchors[i], i, _groups(actions, consumer, i, j), actions[i:j]))
        i = j
    return ops


def _groups(actions: Sequence[Action], consumer: list[int | None], start: int, end: int) -> tuple[Group, ...]:
    """The groups of actions[start:end]: each core action with the support actions it consumes.

    A support action goes to the end of its consumer chain (`open fridge` → `take knife from fridge` →
    `chop … with knife`), unless a core action before that end also names what it acts on (`take apple
    from fridge`): then it goes to that one, so no core action is moved before what prepares it.
    """
    pre: dict[int, list[Action]] = {}
    for k in range(start, end):
        if consumer[k] is None:
            continue
        final = k
        while (after := consumer[final]) is not None:
            final = after
        focus = actions[k].focus
        if focus is not None:
            final = next((j for j in range(k + 1, final) if consumer[j] is None
                          and any(a.value == focus.value for a in actions[j].entities)), final)
        pre.setdefault(final, []).append(actions[k])
    return tuple(Group(tuple(pre.get(k, ())), actions[k]) for k in range(start, end) if consumer[k] is None)


def operations(program: Program) -> list[Operation]:
    """The operations of a program long enough to be sub-goals (at least two actions)."""
    return [op for op in segment(program) if len(op) >= MIN_STEPS]
