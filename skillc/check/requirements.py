"""Termination and data rules as graph facts.

- `rule ends OP in OUTCOME`: every run that reaches a state performing `OP`
  ends in a terminal whose outcome is `OUTCOME` — no other terminal is
  reachable from those states by the machine's edges (SKM260). The fallback
  counts as a `failed` terminal when an edge names it; the runtime's own
  routing of failed operations to the fallback is not an edge and is not
  counted (it is the same for every machine).
- `rule reads B from A`: some variable `v` that `B` reads is written by `A`,
  and every definition of `v` that reaches `B` comes from `A`: from every
  other state that writes `v` (and from `start`, when `v` has a value before
  the first state) `B` cannot be reached without passing through `A`
  (SKM261). Together with definite assignment this says that, on every run,
  `B` sees what `A` produced.

Each violation prints the offending path.
"""

from __future__ import annotations

from collections.abc import Iterator

from skillc.check import codes
from skillc.check.codes import EXAMPLE_MACHINE as EXAMPLE_MACHINE  # the SKM260/261 examples; tests build on it
from skillc.check.context import CheckContext
from skillc.check.graph import Succ, shared_successors, shortest_path, show_path
from skillc.diagnostics import Diagnostic, make
from skillc.ir.machine import Machine, Rule


def _outcome(m: Machine, state: str) -> str | None:
    s = m.states[state]
    return (s.outcome or "failed") if s.kind == "fallback" else s.outcome


def _writers(m: Machine, var: str) -> set[str]:
    """States that write `var`, by their own writes or on one of their edges."""
    return {name for name, s in m.states.items()
            if var in s.writes or any(a.var == var for e in s.edges for a in e.assigns)}


def _ends(m: Machine, rule: Rule, succ: Succ) -> Iterator[Diagnostic]:
    want = rule.outcome
    for p in sorted(rule.performers[0]):
        path = shortest_path(succ, p, lambda s: m.states[s].is_terminal and _outcome(m, s) != want)
        if path:
            end = path[-1]
            yield make(codes.TERMINATION_RULE_VIOLATED,
                       f"a run through `{rule.ops[0]}` can end `{_outcome(m, end)}` in `{end}`, "
                       f"not `{want}`", rule.span, label=f'"{rule.quote}"',
                       witness=[f"{show_path(path)} ends {_outcome(m, end)}"],
                       hint=f"route every path from `{rule.ops[0]}` to a `{want}` terminal")
            return


def _reads(m: Machine, rule: Rule, succ: Succ) -> Iterator[Diagnostic]:
    readers, producers = set(rule.performers[0]), set(rule.performers[1])
    b, a = rule.ops
    produced = {v for p in producers for v in m.states[p].writes}
    for r in sorted(readers):
        shared = [v for v in m.states[r].reads if v in produced]
        if not shared:
            yield make(codes.DATA_RULE_VIOLATED, f"`{b}` reads nothing that `{a}` writes", rule.span,
                       label=f'"{rule.quote}"',
                       hint=f"add a variable `{a}` writes to the `reads` of `{b}`")
            return
        witness = None
        for v in shared:
            witness = _other_definition(m, v, r, producers, succ)
            if witness is None:
                break
        if witness is not None:
            yield make(codes.DATA_RULE_VIOLATED, f"`{b}` can read `{shared[-1]}` without `{a}` having produced it",
                       rule.span,
                       label=f'"{rule.quote}"', witness=[f"{show_path(witness)} reaches `{b}` avoiding `{a}`"],
                       hint=f"make every path from another definition to `{b}` pass through `{a}`")
            return


def _other_definition(m: Machine, var: str, reader: str, producers: set[str], succ: Succ) -> list[str] | None:
    """A path by which a definition of `var` not made by `producers` reaches `reader`, or None."""
    origins = [w for w in sorted(_writers(m, var)) if w not in producers]
    variable = m.variables.get(var)
    if variable is not None and variable.defined_at_start and m.start not in producers:
        path = shortest_path(succ, m.start, reader.__eq__, blocked=producers)
        if path:
            return path
    for w in origins:
        for t in succ.get(w, ()):
            path = shortest_path(succ, t, reader.__eq__, blocked=producers)
            if path:
                return [w, *path]
    return None


def check_requirement_rules(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """`ends` and `reads` rules hold on every path."""
    succ = shared_successors(m, context)
    for rule in m.rules:
        if rule.kind == "ends":
            yield from _ends(m, rule, succ)
        elif rule.kind == "reads":
            yield from _reads(m, rule, succ)
