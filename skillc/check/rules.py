"""Rules as graph facts.

- `rule required o`: no success terminal is reachable once the states performing
  `o` are removed (SKM220);
- `rule order o1 before o2`: no state performing `o2` is reachable once the
  states performing `o1` are removed (SKM221);
- `rule forbid o`: no reachable state performs `o` (SKM222).

A rule a fragment brought in is checked inside its instance, from every entry
into it: the instance's start and every inner state that `start` or an edge
from outside targets directly. The fragment promises it for every passage
through the instance, and its exits count as the success terminals of
`required` (unless routed to fallback).
Each violation prints the offending path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import attrs

from skillc.check import codes
from skillc.check.context import CheckContext, memo
from skillc.check.graph import Succ, reachable, shared_successors, shortest_path, show_path
from skillc.diagnostics import Diagnostic, make
from skillc.ir.machine import FALLBACK, Machine, Rule


def _scope(m: Machine, rule: Rule, succ: Succ, reached: set[str]) -> tuple[list[str], Succ, Callable[[str], bool]]:
    """Start states, successor map and success test for checking one rule."""
    if rule.instance is None or rule.instance not in m.instances:
        success = {n for n, s in m.states.items() if s.kind == "terminal" and s.outcome == "success"}
        return [m.start], succ, success.__contains__
    prefix = rule.instance + "."
    inside = {n for n in m.states if n.startswith(prefix)}
    local = {n: (succ[n] if n in inside else []) for n in m.states}
    return _entries(m, rule.instance, inside, succ, reached), local, lambda s: s not in inside and s != FALLBACK


def _entries(m: Machine, instance: str, inside: set[str], succ: Succ, reached: set[str]) -> list[str]:
    """Every state where a run can enter the instance: its entry, and any inner state that `start`
    or an edge from a reachable state outside the instance targets directly (a jump into the middle)."""
    found = dict.fromkeys([m.instances[instance]])
    if m.start in inside:
        found[m.start] = None
    for source in sorted(reached - inside):
        for t in succ.get(source, ()):
            if t in inside:
                found[t] = None
    return list(found)


def _entered(m: Machine, rule: Rule, entry: str) -> list[str]:
    """A note for a violation found from an entry other than the instance's own."""
    if rule.instance is None or entry == m.instances.get(rule.instance):
        return []
    return [f"the run enters `{rule.instance}` at `{entry}`, not at its start "
            f"`{m.instances[rule.instance]}`; the fragment's rules hold from every entry"]


def _quoted(rule: Rule) -> str:
    return f'"{rule.quote}"'


def check_rules(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Required operations, orders and prohibitions hold on every path (inside an instance: from every entry)."""
    succ = shared_successors(m, context)
    reached = memo(context, "reachable", lambda: reachable(succ, [m.start]))
    for rule in m.rules:
        starts, graph, success = _scope(m, rule, succ, reached)
        for start in starts:
            found = _violation(rule, start, graph, success)
            if found is not None:
                notes = _entered(m, rule, start)
                if notes:  # the fix is to enter the instance by its name, at its start
                    found = attrs.evolve(found, notes=(*found.notes, *notes),
                                         hint=f"target the instance `{rule.instance}` itself (`-> {rule.instance}`), "
                                         "which enters it at its start")
                yield found
                break


def _violation(rule: Rule, start: str, graph: Succ, success: Callable[[str], bool]) -> Diagnostic | None:
    """The diagnostic for a path from `start` that breaks the rule, or None."""
    performers = [set(p) for p in rule.performers]
    where = f" (from fragment `{rule.fragment}` in `{rule.instance}`)" if rule.fragment else ""
    if rule.kind == "required":
        path = shortest_path(graph, start, success, blocked=performers[0])
        if path:
            return make(codes.REQUIRED_OPERATION_BYPASSED, f"a run can finish without `{rule.ops[0]}`{where}",
                        rule.span,
                        label=_quoted(rule), witness=[f"{show_path(path)} never performs `{rule.ops[0]}`"],
                        hint=f"route every path to a success terminal through `{rule.ops[0]}`")
    elif rule.kind == "order":
        path = shortest_path(graph, start, performers[1].__contains__, blocked=performers[0])
        if path:
            return make(codes.ORDER_VIOLATED, f"`{rule.ops[1]}` can run before `{rule.ops[0]}`{where}", rule.span,
                        label=_quoted(rule), witness=[f"{show_path(path)} skips `{rule.ops[0]}`"],
                        hint=f"make every path to `{rule.ops[1]}` pass through `{rule.ops[0]}` first")
    elif rule.kind == "forbid":
        path = shortest_path(graph, start, performers[0].__contains__)
        if path:
            return make(codes.FORBIDDEN_OPERATION_REACHABLE, f"forbidden operation `{rule.ops[0]}` can run{where}",
                        rule.span,
                        label=_quoted(rule), witness=[f"{show_path(path)} performs it"],
                        hint=f"remove the states that perform `{rule.ops[0]}`, or the edges that lead there")
    return None
