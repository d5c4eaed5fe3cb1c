"""Compile a cluster into a `.skm` fragment: a parameterised sub-machine over two tools.

`act(command)` plays one primitive action and `observe()` reads the latest
observation without playing; both give the observation text and the available
actions. Each action is a tool state; routing edges branch on the latest
observation exactly as the Python skill does (a support action runs when its
core action is not available and it is), loops are bounded by a counter, and
the fragment leaves by `done` or `failed`. The text goes through the project
parser and printer, so it is formatted like every other machine.
"""

from __future__ import annotations

import re

import attrs

from skillc.check.source import check_source
from skillc.frontends.distill.cluster import Cluster, Param, SkillStep, Slot
from skillc.frontends.distill.emit_python import describe
from skillc.frontends.distill.schema import HOLE
from skillc.ir.names import RESERVED_VARIABLES, unique
from skillc.syntax.format import format_source
from skillc.syntax.grammar import keyword_terminals
from skillc.syntax.strings import encode_plain

TOOLS = ("tool act(command: str) -> (observation: str, admissible: list[str], done: bool)",
         "tool observe() -> (observation: str, admissible: list[str])")


def command(slot: Slot, listed: set[str], index: str) -> str:
    """The `.skm` expression of a slot's command: `"take " ++ item ++ " from " ++ source`."""
    names = dict(slot.args)
    parts, pos = [], 0
    text = slot.template.text
    for m in HOLE.finditer(text):
        if text[pos:m.start()]:
            parts.append(encode_plain(text[pos:m.start()]))
        name = names[m.group(1)]
        parts.append(f"{name}[{index}]" if name in listed else name)
        pos = m.end()
    if text[pos:]:
        parts.append(encode_plain(text[pos:]))
    return " ++ ".join(parts) or '""'


class _Names:
    """State names: unique, readable, never a fragment exit."""

    def __init__(self) -> None:
        self.taken = {"done", "failed", "look"}

    def __call__(self, base: str) -> str:
        name = unique(base, self.taken)
        self.taken.add(name)
        return name


def param_type(param: Param) -> str:
    """The `.skm` type of a skill parameter: a word parameter is an enum of the words seen in training."""
    base = "str"
    words = sorted(set(param.values))
    if not param.entity and words and all(_label(w) for w in words):
        base = "enum {" + ", ".join(words) + "}"
    return f"list[{base}]" if param.listed else base


def _label(word: str) -> bool:
    """Whether a word can be an enum label (a name that is not a keyword of the language)."""
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word) is not None and word not in keyword_terminals().values() \
        and word not in RESERVED_VARIABLES and word != "fallback"


def fragment_source(cluster: Cluster, header: str = "") -> str:
    """The formatted `.skm` text of one fragment (with a leading comment)."""
    listed = {p.name for p in cluster.params if p.listed}
    optional = {p.name for p in cluster.params if p.listed and p.optional}
    summary = describe(cluster, {})["summary"].replace("`", "")
    names = _Names()
    core_names = [names(s.core.schema) for s in cluster.steps]
    roles = {p.name: p.role for p in cluster.params}
    pre_names = [[names(f"{g.slot.schema}_{_subject(g.slot, listed, roles)}") for g in s.pre] for s in cluster.steps]
    loops = {k: (f"i_{k}", f"rounds_{k}") for k, s in enumerate(cluster.steps) if s.loop}
    params = [f"{p.name}: {param_type(p)}" for p in cluster.params]
    params += ["observation: str", "admissible: list[str]", "error: str"]
    ctx = _Context(cluster, core_names, pre_names, listed, optional, loops)
    lines = [f"fragment {cluster.name}({', '.join(params)}) -> (done, failed) {{",
             f"  doc {encode_plain('Distilled skill: ' + summary + '.')}",
             *[f"  {t}" for t in TOOLS]]
    lines.append("  var ended: bool = false  # the game is over: nothing more can be played")
    for k, (index, counter) in loops.items():
        lines += [f"  var {index}: int = 0", f"  counter {counter} max {cluster.steps[k].bound - 1}"]
    lines += ["  start look", "",
              "  tool look {",
              '    doc "Read the latest observation: the text and the actions it makes available."',
              "    call observe()",
              "    writes observation = observation, admissible = admissible",
              *_route(ctx, 0, -1),
              "  }"]
    for k, step in enumerate(cluster.steps):
        index = loops[k][0] if k in loops else "0"
        for j, g in enumerate(step.pre):
            lines += [f"  tool {pre_names[k][j]} {{",
                      f"    doc {encode_plain(f'Support action, taken in {g.share:.0%} of training calls.')}",
                      *_reads(g.slot, listed, index),
                      f"    call act(command: {command(g.slot, listed, index)})",
                      ACT_WRITES,
                      *_route(ctx, k, j, same_iteration=True),
                      "  }"]
        lines += [f"  tool {core_names[k]} {{",
                  *_reads(step.core, listed, index),
                  f"    call act(command: {command(step.core, listed, index)})",
                  ACT_WRITES]
        if k in loops:
            i, counter = loops[k]
            length = step.lists[0]
            nxt = f"{i} + 1"
            following = command(step.core, listed, nxt)
            lines.append(f"    when ended and {i} + 1 < len({length}) -> failed {_why(_ended(following))}")
            more = f"{i} + 1 < len({length}) and {counter} < {step.bound - 1}"
            lines.append(f"    when {more} and {following} in admissible -> {core_names[k]} "
                         f"{{ {i} += 1, {counter} += 1 }}")
            for j, g in enumerate(step.pre):
                lines.append(f"    when {more} and {_present(g.slot, optional, nxt)}{command(g.slot, listed, nxt)} "
                             f"in admissible -> {pre_names[k][j]} {{ {i} += 1, {counter} += 1 }}")
            lines.append(f"    when {i} + 1 < len({length}) -> failed {_why(_missing(following))}")
        lines += [*_route(ctx, k + 1, -1), "  }"]
    lines.append("}")
    text, diagnostics = format_source("\n".join(lines) + "\n", f"{cluster.name}.skm")
    if text is not None:
        diagnostics = [d for d in check_source(text, path=f"{cluster.name}.skm").diagnostics
                       if d.severity.name != "NOTE"]
    if text is None or diagnostics:
        # Every fragment goes through the checker; one that fails is a bug of the distiller, not of the traces.
        raise AssertionError(f"distilled fragment {cluster.name} does not check: "
                             + "; ".join(f"{d.code} {d.message}" for d in diagnostics))
    return (header + text) if header else text


ACT_WRITES = "    writes observation = observation, admissible = admissible, ended = done"


@attrs.frozen
class _Context:
    """What every routing edge of one fragment needs to know."""

    cluster: Cluster
    core_names: list[str]
    pre_names: list[list[str]]
    listed: set[str]
    optional: set[str]  # optional list parameters: absent (empty) means the support action is never taken
    loops: dict[int, tuple[str, str]]


def _why(reason: str) -> str:
    """The assignment that gives a `failed` exit its reason, as the Python skill's `error` words it."""
    return f"{{ error = {reason} }}"


def _missing(cmd: str) -> str:
    return f'"`" ++ {cmd} ++ "` is not available"'


def _ended(cmd: str) -> str:
    return f'"the game ended before `" ++ {cmd} ++ "`"'


def _present(slot: Slot, optional: set[str], index: str) -> str:
    """A guard prefix that holds when the optional lists a support slot reads have an item at `index`."""
    lists = dict.fromkeys(name for _r, name in slot.args if name in optional)
    return "".join(f"{index} < len({name}) and " for name in lists)


def _subject(slot: Slot, listed: set[str], roles: dict[str, str]) -> str:
    if not slot.args:
        return "first"
    name = slot.args[0][1]
    return roles.get(name, name) if name in listed else name


def _reads(slot: Slot, listed: set[str], index: str) -> list[str]:
    names = list(dict.fromkeys(name for _r, name in slot.args))
    if index != "0" and any(n in listed for n in names):
        names.append(index)
    return [f"    reads {', '.join(names)}"] if names else []


def _route(ctx: _Context, k: int, after: int, same_iteration: bool = False) -> list[str]:
    """Edges into step `k`: its core action if available, else a later support action that is, else failed.

    A loop checks its lists first: the core lists must have 1 to `bound` items, all as many. An optional
    list of a support action may be shorter or empty (absent): where it has no item, that support action
    is not taken (the Python skill would look for its value among the available actions).
    """
    cluster, listed = ctx.cluster, ctx.listed
    if k >= len(cluster.steps):
        return ["    -> done"]
    step: SkillStep = cluster.steps[k]
    index = ctx.loops[k][0] if k in ctx.loops else "0"
    out = [] if after == -1 and k == 0 and not same_iteration else ["    when ended -> failed " + _why(
        '"the game ended"' if step.loop and not same_iteration else _ended(command(step.core, listed, index)))]
    if step.loop and not same_iteration:
        length, *others = step.lists
        checks = [f"len({length}) > 0", f"len({length}) <= {step.bound}"] + [f"len({o}) == len({length})"
                                                                             for o in others]
        also = f", and {', '.join(f'`{o}`' for o in others)} as many" if others else ""
        out.append(f"    when not ({' and '.join(checks)}) -> failed "
                   + _why(encode_plain(f"`{length}` must have 1 to {step.bound} items{also}")))
    out.append(f"    when {command(step.core, listed, index)} in admissible -> {ctx.core_names[k]}")
    for j, g in enumerate(step.pre):
        if j > after:
            out.append(f"    when {_present(g.slot, ctx.optional, index)}{command(g.slot, listed, index)} "
                       f"in admissible -> {ctx.pre_names[k][j]}")
    out.append("    -> failed " + _why(_missing(command(step.core, listed, index))))
    return out
