"""Rules as graph facts.

- `rule required o`: no success terminal is reachable once the states performing
  `o` are removed (SKM220);
- `rule order o1 before o2`: no state performing `o2` is reachable once the
  states performing `o1` are removed (SKM221);
- `rule forbid o`: no reachable state performs `o` (SKM222).

A rule a fragment brought in is checked from its instance's entry, inside the
instance: the fragment promises it for runs through the instance, and its
exits count as the success terminals of `required` (unless routed to fallback).
Each violation prints the offending path.
"""

from __future__ import annotations

from collections.abc import Iterator

from skillc.check.context import CheckContext
from skillc.check.graph import shortest_path, show_path, successors
from skillc.diagnostics import Diagnostic, make
from skillc.ir.machine import FALLBACK, Machine, Rule


def _scope(m: Machine, rule: Rule, succ):
    """Start state, successor map and success test for checking one rule."""
    if rule.instance is None or rule.instance not in m.instances:
        success = {n for n, s in m.states.items() if s.kind == "terminal" and s.outcome == "success"}
        return m.start, succ, success.__contains__
    prefix = rule.instance + "."
    inside = {n for n in m.states if n.startswith(prefix)}
    local = {n: (succ[n] if n in inside else []) for n in m.states}
    return m.instances[rule.instance], local, lambda s: s not in inside and s != FALLBACK


def _quoted(rule: Rule) -> str:
    return f'"{rule.quote}"'


def check_rules(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Required operations, orders and prohibitions hold on every path."""
    succ = successors(m)
    for rule in m.rules:
        start, graph, success = _scope(m, rule, succ)
        performers = [set(p) for p in rule.performers]
        where = f" (from fragment `{rule.fragment}` in `{rule.instance}`)" if rule.fragment else ""
        if rule.kind == "required":
            path = shortest_path(graph, start, success, blocked=performers[0])
            if path:
                yield make("SKM220", f"a run can finish without `{rule.ops[0]}`{where}", rule.span,
                           label=_quoted(rule), witness=[f"{show_path(path)} never performs `{rule.ops[0]}`"],
                           hint=f"route every path to a success terminal through `{rule.ops[0]}`")
        elif rule.kind == "order":
            path = shortest_path(graph, start, performers[1].__contains__, blocked=performers[0])
            if path:
                yield make("SKM221", f"`{rule.ops[1]}` can run before `{rule.ops[0]}`{where}", rule.span,
                           label=_quoted(rule), witness=[f"{show_path(path)} skips `{rule.ops[0]}`"],
                           hint=f"make every path to `{rule.ops[1]}` pass through `{rule.ops[0]}` first")
        elif rule.kind == "forbid":
            path = shortest_path(graph, start, performers[0].__contains__)
            if path:
                yield make("SKM222", f"forbidden operation `{rule.ops[0]}` can run{where}", rule.span,
                           label=_quoted(rule), witness=[f"{show_path(path)} performs it"],
                           hint=f"remove the states that perform `{rule.ops[0]}`, or the edges that lead there")
