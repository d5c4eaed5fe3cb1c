"""State rules: a machine's rules about its model and judge states, judged on the states a machine run visited.

RFC is computed from effects (`skillc.bench.score`); a rule that names a model or judge state, a fragment
instance or a terminal is not an effect and is judged here instead, only in machine mode — a native or
prompt-only run visits no machine states, so there every state rule is "not applicable", never counted
either way. A `required` rule is violated by a run that never performed it, whatever outcome it declared. A
fragment instance's rules are judged on every passage through the instance (`passages`), the way `skillc
check` proves them from every entry and `skillc test` judges them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

import attrs

from skillc.ir.machine import Machine, Rule
from skillc.runtime.record import RunTrace

StateStatus = Literal["met", "violated", "not applicable"]


@attrs.frozen
class StateRuleVerdict:
    """One state rule's judgement on one run."""

    id: str
    quote: str
    status: StateStatus
    reason: str = ""


def judge_state_rules(m: Machine, rules: Sequence[tuple[str, Rule]], run: RunTrace) -> tuple[StateRuleVerdict, ...]:
    """Each (id, rule) judged on the run's visited states and tool calls; not applicable outside machine mode."""
    mode = run.header.mode
    if mode != "machine":
        why = f"about machine states; a {mode} run visits none"
        return tuple(StateRuleVerdict(rid, rule.quote, "not applicable", why) for rid, rule in rules)
    events = [{s.state} | ({s.tool_call.tool} if s.tool_call is not None else set()) for s in run.steps]
    visited = list(run.states)
    ended = run.footer.terminal if run.footer is not None else None
    out = []
    for rid, rule in rules:
        observed = [{op} if op in m.tools else set(performers) for op, performers in zip(rule.ops, rule.performers)]
        if rule.instance is None:
            problems = _violations(rule, observed, events)
        else:  # a fragment's rule holds on every passage through its instance, however the run entered it
            problems = [p for lo, hi, _ in passages(visited, rule.instance + ".", ended)
                        for p in _violations(rule, observed, events[lo:hi], f" in `{rule.instance}`")]
        out.append(StateRuleVerdict(rid, rule.quote, "violated" if problems else "met", "; ".join(problems)))
    return tuple(out)


def _violations(rule: Rule, observed: list[set[str]], events: list[set[str]], where: str = "") -> list[str]:
    """How one rule was broken by a sequence of observed operations (steps numbered from 1)."""
    first = [next((i for i, ops in enumerate(events) if ops & o), None) for o in observed]
    if rule.kind == "required" and first[0] is None:
        return [f"`{rule.ops[0]}` never ran{where}"]
    if rule.kind == "order" and first[1] is not None and (first[0] is None or first[0] > first[1]):
        return [f"`{rule.ops[1]}` ran before `{rule.ops[0]}`{where}"]
    if rule.kind == "forbid" and first[0] is not None:
        return [f"`{rule.ops[0]}` ran at step {first[0] + 1}{where}"]
    return []


def passages(visited: list[str], prefix: str, terminal: str | None) -> Iterator[tuple[int, int, str | None]]:
    """Each maximal stretch `visited[lo:hi]` of states inside an instance, with the state the run left it for."""
    k = 0
    while k < len(visited):
        if not visited[k].startswith(prefix):
            k += 1
            continue
        end = k
        while end + 1 < len(visited) and visited[end + 1].startswith(prefix):
            end += 1
        yield k, end + 1, visited[end + 1] if end + 1 < len(visited) else terminal
        k = end + 1
