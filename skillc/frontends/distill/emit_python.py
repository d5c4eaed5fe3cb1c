"""Compile a cluster into a Python skill function (one module per skill, plus a shared `_runtime`).

The generated code needs only the standard library and the library's
`_runtime.py` (a copy of `skill_runtime.py`): a library directory can be
shipped and imported without skillc.
"""

from __future__ import annotations

import pprint
import string
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

import attrs

from skillc.frontends.distill.cluster import Cluster, Param, SkillStep, Slot
from skillc.frontends.distill.schema import TYPE_NAMES

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object

RUNTIME = Path(__file__).with_name("skill_runtime.py")


def _values(slot: Slot, listed: set[str], index: str = "i") -> str:
    """`{"item": item, "direction": directions[i]}`: a slot's role → value mapping as Python source."""
    parts = []
    for role, name in slot.args:
        parts.append(f"{role!r}: {f'at({name}, {index})' if name in listed else name}")
    return "{" + ", ".join(parts) + "}"


def _support(step: SkillStep, listed: set[str], index: str = "i") -> str:
    items = [f"({g.slot.template.text!r}, {_values(g.slot, listed, index)})" for g in step.pre]
    return "[" + ", ".join(items) + "]"


def _annotation(param: Param) -> str:
    base = "str"
    if not param.entity and param.values:
        base = "Literal[" + ", ".join(repr(v) for v in sorted(set(param.values))) + "]"
    if param.listed:
        return f"Sequence[{base} | None] | None" if param.optional else f"Sequence[{base}]"
    return f"{base} | None" if param.optional else base


def _signature(cluster: Cluster, first: str, observed: bool = True) -> str:
    required = [f"{p.name}: {_annotation(p)}" for p in cluster.params if not p.optional]
    optional = [f"{p.name}: {_annotation(p)} = None" for p in cluster.params if p.optional]
    tail = ["available_actions: Sequence[str] | None = None"] if observed else []
    return ", ".join([first, *required, *(["*"] if optional or tail else []), *optional, *tail])


class Facts(TypedDict):
    """What a skill's docstring and library.json say about it, as sentences."""

    summary: str
    preconditions: list[str]
    postconditions: list[str]
    side_effects: list[str]


def describe(cluster: Cluster, effects: dict[str, str]) -> Facts:
    """Summary, preconditions, postconditions and side effects of a skill, as sentences."""
    first = cluster.steps[0]
    parts = []
    for s in cluster.steps:
        parts += [f"`{g.slot.shown}`" for g in s.pre if g.share == 1.0]
        parts.append(f"for each position i: `{s.core.shown}`" if s.loop else f"`{s.core.shown}`")
    summary = ", then ".join(parts)
    focus = _focus(first.core)
    elsewhere = (f" and no available `{first.core.template.text}` acts on the same `{focus}` with other arguments"
                 if focus is not None else "")
    pre = [f"`{first.core.shown}` is among the available actions"
           + (", or one of its support actions is (" + ", ".join(f"`{g.slot.shown}`" for g in first.pre) + ")"
              + elsewhere if first.pre else "")]
    for step in cluster.steps:
        if step.loop:
            first_list, *others = step.lists
            pre.append(f"`{first_list}` has between 1 and {step.bound} items"
                       + (f" (and {', '.join(f'`{n}`' for n in others)} as many)" if others else ""))
    pre.append("each later core action becomes available once the earlier ones are done "
               "(support actions are taken when the observation shows they are needed)")
    post = []
    for step in cluster.steps:
        slot = _element(step.core, set(step.lists)) if step.loop else step.core
        text = _effect(effects.get(step.core.schema), slot) or f"`{slot.shown}` was done"
        post.append(("for every position i: " if step.loop else "") + text)
    post.append("on failure, `error` names the action that was not available and `process_trace` shows what ran")
    sizes = cluster.sizes
    span = f"{min(sizes)} to {max(sizes)}" if min(sizes) != max(sizes) else f"{min(sizes)}"
    side = [f"plays {span} primitive actions in the environment in training "
            f"({cluster.mean_size:.1f} on average), one game turn each"]
    for step in cluster.steps:
        for g in step.pre:
            side.append(f"may play the support action `{g.slot.shown}` (taken in {g.share:.0%} of training calls)")
    return {"summary": summary, "preconditions": pre, "postconditions": post, "side_effects": side}


def _focus(slot: Slot) -> str | None:
    """The role of the first entity of a slot's template (what the action acts on), if any."""
    return next((r for r in slot.template.roles if r not in slot.template.choices), None)


def _element(slot: Slot, listed: set[str]) -> Slot:
    """The slot with list parameters named by their item at position i (`directions[i]`)."""
    return attrs.evolve(slot, args=tuple((role, f"{name}[i]" if name in listed else name) for role, name in slot.args))


def _effect(effect: str | None, slot: Slot) -> str | None:
    """The postcondition sentence of a slot's schema, when it names only roles the slot has."""
    if effect is None:
        return None
    names = dict(slot.args)
    holes = [field for _text, field, _spec, _conv in string.Formatter().parse(effect) if field is not None]
    if not all(h in names for h in holes):
        return None  # a trace template reused the schema's name with other roles
    return effect.format(**{role: "{" + name + "}" for role, name in names.items()})


def metadata(cluster: Cluster, n_traces: int, verification: Object | None = None) -> Object:
    """The machine-readable facts of a skill (also written to library.json)."""
    sizes = cluster.sizes
    return {
        "name": cluster.name,
        "abstraction_level": cluster.level,
        "primitives_per_call": {"mean": round(cluster.mean_size, 2), "min": min(sizes), "max": max(sizes)},
        "primitives_saved_per_call": round(cluster.mean_size - 1, 2),
        "confidence": round(cluster.reuse, 4),
        "training_traces": n_traces,
        "traces_matched": cluster.traces,
        "operations": len(cluster.members),
        "verification": verification,
    }


def _param_doc(param: Param) -> str:
    kinds = ", ".join(TYPE_NAMES.get(t, t) for t in param.types) or "value"
    seen = ", ".join(param.values[:4])
    extra = " One per loop iteration." if param.listed else ""
    if param.optional:
        extra += " Only support actions use it; when None it is read off the available actions."
    return f"{param.name}: {kinds} (seen: {seen}).{extra}"


def python_source(cluster: Cluster, effects: dict[str, str], meta: Object) -> str:
    """The source of one skill module."""
    facts = describe(cluster, effects)
    listed = {p.name for p in cluster.params if p.listed}
    names = [p.name for p in cluster.params]
    doc = [f"Distilled skill `{cluster.name}`: {facts['summary']}.", "", "Args:",
           "    env: the environment; `env.step(action)` plays one primitive action."]
    doc += [f"    {_param_doc(p)}" for p in cluster.params]
    doc += ["    available_actions: the actions the latest observation offers (read from `env.state` when None).",
            "", "Preconditions:"] + [f"    - {p}" for p in facts["preconditions"]]
    doc += ["", "Postconditions:"] + [f"    - {p}" for p in facts["postconditions"]]
    doc += ["", "Side effects:"] + [f"    - {p}" for p in facts["side_effects"]]
    ppc = meta["primitives_per_call"]
    doc += ["", "Metadata:", f"    abstraction level {meta['abstraction_level']}; replaces {ppc['mean']} primitive "
            f"actions per call on average (max {ppc['max']}); confidence r_k = {meta['confidence']:.2f}.", "",
            "Returns:", "    {success, observation, available_actions, process_trace, error, done}."]
    body = []
    for step in cluster.steps:
        core = f"{step.core.template.text!r}"
        if step.loop:
            length, *others = step.lists
            body += [f"    if not 1 <= len({length}) <= {step.bound}:",
                     f"        return run.fail(f\"`{length}` must have 1 to {step.bound} items, "
                     f"not {{len({length})}}\")",
                     *[f"    if len({other}) != len({length}):\n"
                       f"        return run.fail(\"`{other}` and `{length}` differ in length\")" for other in others],
                     f"    for i in range(len({length})):",
                     f"        run.step({core}, {_values(step.core, listed)}, {_support(step, listed)})"]
        else:
            body.append(f"    run.step({core}, {_values(step.core, listed)}, {_support(step, listed)})")
    first = cluster.steps[0]
    lines = [
        f'"""Skill `{cluster.name}`, distilled by skillc from {meta["training_traces"]} training traces."""',
        "",
        "from __future__ import annotations",
        "",
        "from collections.abc import Sequence",
        "from typing import Any, Literal  # noqa: F401",
        "",
        "from ._runtime import SkillResult, SkillRun, at  # noqa: F401",
        "",
        f"METADATA = {_literal(meta)}",
        f"PRECONDITIONS = {_literal(facts['preconditions'])}",
        f"POSTCONDITIONS = {_literal(facts['postconditions'])}",
        f"SIDE_EFFECTS = {_literal(facts['side_effects'])}",
        "",
        "",
        f"def {cluster.name}({_signature(cluster, 'env: Any')}) -> SkillResult:",
        '    """' + _docstring(doc) + '\n    """',
        "    run = SkillRun(env, available_actions)",
        *body,
        "    return run.result()",
        "",
        "",
        f"def preconditions_hold("
        f"{_signature(cluster, 'available_actions_now: Sequence[str]', observed=False)}) -> bool:",
        '    """Whether the skill may be called now: its first core action is available, or its support actions '
        'may make it so (see PRECONDITIONS)."""',
        "    run = SkillRun(None, available_actions_now)",
    ]
    for step in cluster.steps:
        if step.loop:
            lines.append(f"    if not 1 <= len({step.lists[0]}) <= {step.bound}:\n        return False")
    values = _values(first.core, listed, "0")
    lines += [f"    return run.can_start({first.core.template.text!r}, {values}, {_support(first, listed, '0')}, "
              f"focus={_focus(first.core)!r})",
              "", "",
              f"{cluster.name}.metadata = METADATA  # type: ignore[attr-defined]",
              f"{cluster.name}.preconditions_hold = preconditions_hold  # type: ignore[attr-defined]",
              f"PARAMETERS = {names!r}", ""]
    return "\n".join(lines)


def _literal(value: object) -> str:
    """A Python literal of JSON-like data (strings escaped by `repr`)."""
    return pprint.pformat(value, indent=1, width=100, sort_dicts=False)


def _docstring(lines: list[str]) -> str:
    """Docstring lines, indented, with backslashes and quotes from the traces made harmless."""
    text = "\n".join(("    " + line) if line else "" for line in lines).lstrip()
    return text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')


def package_init(clusters: list[Cluster]) -> str:
    """`skills/__init__.py`: every skill by name."""
    lines = ['"""Skills distilled by skillc; `SKILLS` maps each name to its function."""', "",
             "from __future__ import annotations", ""]
    lines += [f"from .{c.name} import {c.name}" for c in clusters]
    lines += ["", "SKILLS = {" + ", ".join(f"{c.name!r}: {c.name}" for c in clusters) + "}", ""]
    return "\n".join(lines)
