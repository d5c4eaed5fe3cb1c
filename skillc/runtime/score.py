"""Request-level full compliance (RFC), scored separately from task success.

A run is fully compliant when every mechanically checkable requirement held:
required operations happened before a success outcome, orders were respected,
forbidden operations never ran, and the terminal's evidence is present. An
operation is observed as a visited state (machine mode) or as a tool call (all
modes); a requirement about a state cannot be observed in a native run and is
reported as unverifiable rather than counted either way. A fragment instance's
rules are judged on every passage through the instance (`passages`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs

from skillc.ir.machine import FALLBACK, Machine, Rule
from skillc.runtime.record import load_run


@attrs.frozen
class Score:
    trace: str
    mode: str
    outcome: str
    compliant: bool
    violations: tuple[str, ...]
    unverifiable: tuple[str, ...]


def score_trace(m: Machine, path: str | Path) -> Score:
    """Score one trace against the machine's rules and terminal evidence."""
    run = load_run(path)
    steps, footer = run.steps, run.footer
    mode = run.header.mode
    outcome = footer.outcome if footer is not None and footer.outcome is not None else "unfinished"
    events: list[set[str]] = []
    for s in steps:
        ops = {s.state} if mode == "machine" else set()
        if s.tool_call is not None:
            ops.add(s.tool_call.tool)
        events.append(ops)
    violations: list[str] = []
    unverifiable: list[str] = []
    visited = list(run.states)
    ended = footer.terminal if footer is not None else None
    for rule in m.rules:
        observed: list[set[str] | None] = []
        for op, performers in zip(rule.ops, rule.performers):
            if op in m.tools:
                observed.append({op})
            elif mode == "machine":
                observed.append(set(performers))
            else:
                observed.append(None)
        seen = [o for o in observed if o is not None]
        if len(seen) < len(observed):
            unverifiable.append(f'"{rule.quote}" (about a state; not observable in {mode} mode)')
            continue
        if rule.instance is None:
            violations += _violations(rule, seen, events, outcome == "success")
        elif mode != "machine":
            unverifiable.append(f'"{rule.quote}" (a rule of instance `{rule.instance}`; its passages are '
                                f'observable only in machine mode)')
        else:  # a fragment's rule holds on every passage through its instance, however the run entered it
            for lo, hi, leaves_to in passages(visited, rule.instance + ".", ended):
                finished = leaves_to is not None and leaves_to != FALLBACK
                violations += _violations(rule, seen, events[lo:hi], finished, f" in `{rule.instance}`")
    if footer is None:
        violations.append("the run did not finish")
    else:
        evidence = footer.evidence
        terminal = m.states.get(footer.terminal or "")
        # A baseline names no terminal: its evidence must satisfy some terminal of the outcome it declared.
        candidates = [terminal] if mode == "machine" and terminal is not None else \
            [t for t in m.terminals() if t.kind == "terminal" and t.outcome == outcome]
        if outcome != "failed" and not candidates:
            violations.append(f"the machine has no terminal with outcome {outcome}")
        elif candidates:
            missing = min(([r for r in t.requires if evidence.get(r) is None] for t in candidates), key=len)
            if missing:
                violations.append("terminal evidence missing: " + ", ".join(missing))
    return Score(str(path), mode, outcome, not violations, tuple(violations), tuple(unverifiable))


def _violations(rule: Rule, observed: list[set[str]], events: list[set[str]], finished: bool,
                where: str = "") -> list[str]:
    """How one rule was broken by a sequence of observed operations; `finished`: `required` counts there."""
    first = [next((i for i, ops in enumerate(events) if ops & o), None) for o in observed]
    if rule.kind == "required" and finished and first[0] is None:
        return [f'required `{rule.ops[0]}` never ran{where}: "{rule.quote}"']
    if rule.kind == "order" and first[1] is not None and (first[0] is None or first[0] > first[1]):
        return [f'`{rule.ops[1]}` ran before `{rule.ops[0]}`{where}: "{rule.quote}"']
    if rule.kind == "forbid" and first[0] is not None:
        return [f'forbidden `{rule.ops[0]}` ran at step {first[0]}{where}: "{rule.quote}"']
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
