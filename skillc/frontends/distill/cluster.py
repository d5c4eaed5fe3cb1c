"""Clustering: group operations by parameterised control flow and score their reuse.

An operation's *shape* is its sequence of core action schemas with concrete
values replaced by parameters named after their role at first use (`take(item,
source) cook(item, appliance) cut(style, item, tool)`): two operations with
the same shape do the same thing to different things. Runs of one schema
(`go east, go north, go north`) fold into a bounded loop whose per-iteration
values are list parameters, so walks of any length share one shape. Support
actions are not part of the shape: each becomes a guarded step before its
core action, taken only when the latest observation says it is needed (the
core action is not available and the support action is), which is how an
optional `open fridge` or `take knife` is expressed.

The reusability of a cluster, r_k, is the share of training traces that
contain at least one of its operations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Literal, NamedTuple

import attrs

from skillc.frontends.distill.schema import Action, Template, identifier
from skillc.frontends.distill.segment import Group, Operation
from skillc.ir.names import unique
from skillc.syntax.grammar import keyword_terminals

LOOP_SLACK = 2  # a loop may run this many times the longest run seen in training

ShapeKind = Literal["step", "loop"]
Args = tuple[tuple[str, str], ...]  # (role, parameter) pairs, in template order


class ShapeItem(NamedTuple):
    """One item of a shape: a core schema taken once (`step`) or folded into a `loop`, and its arguments."""

    kind: ShapeKind
    schema: str
    args: Args


Shape = tuple[ShapeItem, ...]
Run = tuple[Group, ...]  # the groups one shape item covers
SlotKey = tuple[str, Args]  # a support slot: its template's text and its arguments


@attrs.frozen
class Param:
    """A parameter of a skill: its name, kind and what training bound it to."""

    name: str
    role: str
    entity: bool
    listed: bool = False  # one value per loop iteration
    optional: bool = False  # only support actions use it; found from the observation when not given
    types: tuple[str, ...] = ()
    values: tuple[str, ...] = ()


@attrs.frozen
class Slot:
    """One action of a skill: a template whose holes are filled by parameters (role → parameter)."""

    template: Template
    args: Args

    @property
    def schema(self) -> str:
        return self.template.schema

    @property
    def shown(self) -> str:
        """The template with holes named by parameter: `take {item} from {source}`."""
        return self.template.render({role: "{" + name + "}" for role, name in self.args})


@attrs.frozen
class Guarded:
    """A support action before a core action, with the share of members that took it."""

    slot: Slot
    share: float


@attrs.frozen
class SkillStep:
    """A core action (repeated over list parameters when `loop`), with its guarded support actions."""

    core: Slot
    pre: tuple[Guarded, ...] = ()
    loop: bool = False
    bound: int = 1

    @property
    def lists(self) -> tuple[str, ...]:
        """The list parameters a loop iterates over (every argument of its core action), in order."""
        return tuple(dict.fromkeys(name for _role, name in self.core.args)) if self.loop else ()


@attrs.frozen
class Member:
    """One training operation of a cluster and the parameter values it binds."""

    op: Operation
    binding: dict[str, object] = attrs.field(eq=False)


@attrs.frozen
class Cluster:
    """Operations with one shape: the skill they make, and how often training reused it."""

    name: str
    shape: Shape
    steps: tuple[SkillStep, ...]
    params: tuple[Param, ...]
    members: tuple[Member, ...] = attrs.field(eq=False, repr=False)
    traces: int
    reuse: float

    @property
    def sizes(self) -> list[int]:
        """Primitive actions of each member operation."""
        return [len(m.op) for m in self.members]

    @property
    def mean_size(self) -> float:
        return sum(self.sizes) / len(self.sizes)

    @property
    def level(self) -> int:
        """Abstraction level: 1 for a straight sequence, 2 when it folds a loop."""
        return 2 if any(s.loop for s in self.steps) else 1


@attrs.frozen
class Lifted:
    """An operation seen through its shape: the shape, and the values of its core parameters."""

    shape: Shape
    units: tuple[Run, ...]  # per shape item: the groups it covers
    params: dict[str, Param]
    binding: dict[str, object]


def loop_schemas(ops: Iterable[Operation]) -> frozenset[str]:
    """Schemas that some operation repeats back to back: these fold into loops everywhere."""
    found: set[str] = set()
    for op in ops:
        for a, b in zip(op.groups, op.groups[1:]):
            # A loop needs something to iterate over: a schema without arguments does not fold.
            if a.core.schema == b.core.schema and a.core.args:
                found.add(a.core.schema)
    return frozenset(found)


def _runs(op: Operation, loops: frozenset[str]) -> Iterator[tuple[bool, Run]]:
    """The operation's groups in runs: a run of one loop schema (folded), or a single group."""
    groups = list(op.groups)
    i = 0
    while i < len(groups):
        j = i + 1
        if groups[i].core.schema in loops:
            while j < len(groups) and groups[j].core.schema == groups[i].core.schema:
                j += 1
        yield groups[i].core.schema in loops, tuple(groups[i:j])
        i = j


def plural(role: str) -> str:
    """`direction` → `directions`: the name of a per-iteration list parameter."""
    return role + ("es" if role.endswith(("s", "x", "ch", "sh")) else "s")


def lift(op: Operation, loops: frozenset[str]) -> Lifted:
    """The shape of an operation and its parameter binding."""
    names: dict[tuple[bool, str], str] = {}  # (entity?, value) → scalar parameter
    params: dict[str, Param] = {}
    binding: dict[str, object] = {}
    shape: list[ShapeItem] = []
    units: list[Run] = []

    for loop, run in _runs(op, loops):
        core = run[0].core
        args: list[tuple[str, str]] = []
        if loop:
            for index, arg in enumerate(core.args):
                name = unique(identifier(plural(arg.role)), params)
                params[name] = Param(name, arg.role, arg.entity, listed=True)
                binding[name] = [g.core.args[index].value for g in run]
                args.append((arg.role, name))
        else:
            for arg in core.args:
                key = (arg.entity, arg.value)
                if key not in names:
                    names[key] = unique(arg.role, params)
                    params[names[key]] = Param(names[key], arg.role, arg.entity)
                    binding[names[key]] = arg.value
                args.append((arg.role, names[key]))
        shape.append(ShapeItem("loop" if loop else "step", core.schema, tuple(args)))
        units.append(run)
    return Lifted(tuple(shape), tuple(units), params, binding)


class _FreeNames:
    """Names of the free values of support actions: one per (step, template, role, occurrence), never clashing."""

    def __init__(self, taken: Iterable[str]) -> None:
        self.taken = set(taken)
        self.by_key: dict[tuple[object, ...], str] = {}

    def __call__(self, key: tuple[object, ...], base: str) -> str:
        if key not in self.by_key:
            self.by_key[key] = unique(identifier(base), self.taken)
            self.taken.add(self.by_key[key])
        return self.by_key[key]


def _support_slot(action: Action, values: dict[tuple[bool, str], str], listed: bool, names: _FreeNames,
                  where: tuple[int, int], core: Action) -> tuple[Slot, dict[str, str]]:
    """A support action as a slot: its focus is bound to the core parameter that holds it, and so is any
    entity the core action it prepares also names; the rest are free.

    The focus links a support action to what it prepares (`take knife` → the `tool` of `chop … with
    knife`), and so do the things both name (`move rooma roomb` → `drop ball1 roomb left`: the robot
    goes where it drops); where the knife lies is found in the observation, even when it happens to equal
    another value. `where` (step, occurrence of this template in the group) keeps two `open` actions before
    one step apart.
    """
    bound: list[tuple[str, str]] = []
    free: dict[str, str] = {}
    focus = action.focus
    link = values.get((True, focus.value)) if focus is not None else None
    shared = {a.value for a in core.entities}
    for arg in action.args:
        if arg is focus and link is not None:
            bound.append((arg.role, link))
            continue
        if arg.entity and arg.value in shared and values.get((True, arg.value)) is not None:
            bound.append((arg.role, values[(True, arg.value)]))
            continue
        base = f"{link}_{arg.role}" if link else f"{action.schema}_{arg.role}"
        name = names((*where, action.template.text, arg.role, link), plural(base) if listed else base)
        bound.append((arg.role, name))
        free[name] = arg.value
    return Slot(action.template, tuple(bound)), free


def _occurrences(actions: Sequence[Action]) -> list[int]:
    """For each action, how many earlier actions of the list share its template."""
    counts: dict[str, int] = {}
    out: list[int] = []
    for action in actions:
        out.append(counts.get(action.template.text, 0))
        counts[action.template.text] = out[-1] + 1
    return out


def _values(lifted: Lifted, shape_item: ShapeItem, group: Group, in_loop: bool) -> dict[tuple[bool, str], str]:
    """Which parameter holds each value at this group: scalars everywhere, list items in their iteration."""
    values: dict[tuple[bool, str], str] = {}
    for name, param in lifted.params.items():
        if not param.listed:
            values[(param.entity, str(lifted.binding[name]))] = name
    if in_loop:
        for (_role, name), arg in zip(shape_item.args, group.core.args):
            values[(arg.entity, arg.value)] = name
    return values


def cluster(ops: Sequence[Operation], n_traces: int, *, min_reuse: float = 0.0,
            loops: frozenset[str] | None = None) -> list[Cluster]:
    """Clusters of operations by shape, most reused first, keeping those with r_k >= `min_reuse`."""
    loops = loop_schemas(ops) if loops is None else loops
    by_shape: dict[Shape, list[tuple[Operation, Lifted]]] = {}
    for op in ops:
        lifted = lift(op, loops)
        by_shape.setdefault(lifted.shape, []).append((op, lifted))
    clusters: list[Cluster] = []
    for shape, members in by_shape.items():
        traces = len({op.trace_id for op, _ in members})
        reuse = traces / n_traces if n_traces else 0.0
        if reuse < min_reuse:
            continue
        clusters.append(_build(shape, members, traces, reuse))
    clusters.sort(key=lambda c: (-c.reuse, -c.mean_size, c.shape))
    return _named(clusters)


def _build(shape: Shape, members: list[tuple[Operation, Lifted]], traces: int, reuse: float) -> Cluster:
    """One cluster: the union of support actions at each step, parameter types, bindings and loop bounds."""
    first = members[0][1]
    params: dict[str, Param] = dict(first.params)
    pre: list[dict[SlotKey, int]] = [dict() for _ in shape]  # step -> slot -> members that took it
    orders: list[list[list[SlotKey]]] = [[] for _ in shape]  # step -> per member, its slots in order
    slots: dict[SlotKey, Slot] = {}
    types: dict[str, set[str]] = {name: set() for name in params}
    seen: dict[str, list[str]] = {name: [] for name in params}
    bound = [1] * len(shape)
    bindings = []
    names = _FreeNames(params)
    for op, lifted in members:
        binding = dict(lifted.binding)
        for index, (item, run) in enumerate(zip(shape, lifted.units)):
            in_loop = item.kind == "loop"
            bound[index] = max(bound[index], len(run))
            taken_here: list[SlotKey] = []  # this member's support slots at this step, in the order it took them
            for iteration, group in enumerate(run):
                values = _values(lifted, item, group, in_loop)
                for arg, (_role, name) in zip(group.core.args, item.args):
                    types[name].add(arg.type)
                    seen[name].append(arg.value)
                supports = _supports(group)
                for action, occurrence in zip(supports, _occurrences(supports)):
                    slot, free = _support_slot(action, values, in_loop, names, (index, occurrence), group.core)
                    key: SlotKey = (slot.template.text, slot.args)
                    slots[key] = slot
                    if key not in taken_here:
                        taken_here.append(key)
                    for name, value in free.items():
                        arg = next(a for a in action.args if a.value == value)
                        if name not in params:
                            params[name] = Param(name, arg.role, arg.entity, listed=in_loop, optional=True)
                            types[name], seen[name] = set(), []
                        types[name].add(arg.type)
                        seen[name].append(value)
                        _bind(binding, name, value, len(run) if in_loop else None, iteration)
            for key in taken_here:
                pre[index][key] = pre[index].get(key, 0) + 1
            orders[index].append(taken_here)
        bindings.append(Member(op, binding))
    steps: list[SkillStep] = []
    for index, item in enumerate(shape):
        template = members[0][1].units[index][0].core.template
        guarded = tuple(Guarded(slots[key], pre[index][key] / len(members)) for key in _merge(orders[index]))
        loop = item.kind == "loop"
        steps.append(SkillStep(Slot(template, item.args), guarded, loop, bound[index] * LOOP_SLACK if loop else 1))
    final = tuple(attrs.evolve(p, types=tuple(sorted(types[p.name])),
                               values=_seen(p, seen[p.name])) for p in _ordered(params))
    return Cluster("", shape, tuple(steps), final, tuple(bindings), traces, reuse)


def _seen(param: Param, values: list[str]) -> tuple[str, ...]:
    """The values a parameter took in training: every word of a word parameter (its type), up to 8 entities."""
    distinct = tuple(dict.fromkeys(values))
    return distinct if not param.entity else distinct[:8]


def _bind(binding: dict[str, object], name: str, value: str, iterations: int | None, iteration: int) -> None:
    """Bind a free support value: a scalar, or item `iteration` of a list of `iterations` (None where unused)."""
    if iterations is None:
        binding[name] = value
    else:
        items = binding.setdefault(name, [None] * iterations)
        assert isinstance(items, list)  # a loop's free value is bound per iteration, never as a scalar
        items[iteration] = value


def _supports(group: Group) -> list[Action]:
    """A group's support actions, without repeats in a row and without copies of the core action itself."""
    out: list[Action] = []
    for action in group.pre:
        if action.text != group.core.text and (not out or out[-1].text != action.text):
            out.append(action)
    return out


def _merge(orders: list[list[SlotKey]]) -> list[SlotKey]:
    """One order of support slots that keeps every member's order where they agree (first seen breaks ties).

    `open fridge` then `take knife from fridge` in one member, `take knife from table` alone in another: the
    merged order still opens before it takes. Where members disagree, first appearance decides.
    """
    first: dict[SlotKey, int] = {}
    after: dict[SlotKey, set[SlotKey]] = {}
    for order in orders:
        for key in order:
            first.setdefault(key, len(first))
            after.setdefault(key, set())
        for a, b in itertools.pairwise(order):
            after[a].add(b)
    before = {key: 0 for key in first}
    for bs in after.values():
        for b in bs:
            before[b] += 1
    out: list[SlotKey] = []
    ready = sorted((k for k, n in before.items() if n == 0), key=first.__getitem__)
    while len(out) < len(first):
        if not ready:  # members disagree: take the earliest remaining slot
            ready = [min((k for k in first if k not in out), key=first.__getitem__)]
        key = ready.pop(0)
        if key in out:
            continue
        out.append(key)
        for b in after[key]:
            before[b] -= 1
            if before[b] == 0 and b not in out:
                ready.append(b)
        ready.sort(key=first.__getitem__)
    return out


def _ordered(params: dict[str, Param]) -> list[Param]:
    """Required parameters first (in order of first use), then optional ones."""
    return [p for p in params.values() if not p.optional] + [p for p in params.values() if p.optional]


def skill_name(steps: Sequence[SkillStep]) -> str:
    """A readable name from a shape: support actions every member took, then core schemas; loops as `repeat_X`."""
    parts: list[str] = []
    for step in steps:
        parts += [g.slot.schema for g in step.pre if g.share == 1.0]
        parts.append(f"repeat_{step.core.schema}" if step.loop else step.core.schema)
    deduped = [p for i, p in enumerate(parts) if i == 0 or p != parts[i - 1]]
    return "_".join(deduped)


def _named(clusters: list[Cluster]) -> list[Cluster]:
    """Each cluster named after its skill; a fragment name may not be a keyword of the language."""
    keywords = set(keyword_terminals().values())
    taken: set[str] = set()
    out: list[Cluster] = []
    for c in clusters:
        base = identifier(skill_name(c.steps), variable=False)
        name = unique(base + "_skill" if base in keywords else base, taken)
        taken.add(name)
        out.append(attrs.evolve(c, name=name))
    return out


def match(op: Operation, clusters: Sequence[Cluster],
          loops: frozenset[str]) -> tuple[Cluster, dict[str, object]] | None:
    """The cluster whose shape an operation has, with its binding (free support values included), or None."""
    lifted = lift(op, loops)
    for c in clusters:
        if c.shape != lifted.shape:
            continue
        binding = dict(lifted.binding)
        for _index, (item, run, step) in enumerate(zip(c.shape, lifted.units, c.steps)):
            if step.loop and len(run) > step.bound:
                return None
            for iteration, group in enumerate(run):
                values = _values(lifted, item, group, step.loop)
                used: set[int] = set()
                for action in _supports(group):
                    found = _find_support(step, action, values, used)
                    if found is None:
                        return None
                    for name, value in found.items():
                        _bind(binding, name, value, len(run) if step.loop else None, iteration)
        return c, binding
    return None


def _find_support(step: SkillStep, action: Action, values: dict[tuple[bool, str], str],
                  used: set[int]) -> dict[str, str] | None:
    """The free values of a support action, if the step has a support slot of its form not used yet."""
    for position, guarded in enumerate(step.pre):
        slot = guarded.slot
        if position in used or slot.template.text != action.template.text:
            continue
        free: dict[str, str] = {}
        for (_role, name), arg in zip(slot.args, action.args):
            if values.get((arg.entity, arg.value)) == name:
                continue
            if name in set(values.values()):
                break  # the slot binds this role to a core parameter that holds another value
            free[name] = arg.value
        else:
            used.add(position)
            return free
    return None
