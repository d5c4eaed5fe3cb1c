"""Request-level full compliance (RFC), scored separately from task success.

A run is fully compliant when every mechanically checkable requirement held:
required operations happened before a success outcome, orders were respected,
forbidden operations never ran, and the terminal's evidence is present. An
operation is observed as a visited state (machine mode) or as a tool call (all
modes); a requirement about a state cannot be observed in a native run and is
reported as unverifiable rather than counted either way.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from skillc.ir.machine import Machine
from skillc.runtime.trace import read_trace


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
    header, steps, footer = read_trace(path)
    mode = header.get("skillc.mode", "machine")
    outcome = (footer or {}).get("skillc.outcome", "unfinished")
    events: list[set[str]] = []
    for s in steps:
        ops = {s["state"]} if mode == "machine" else set()
        call = s.get("tool_call")
        if isinstance(call, dict) and isinstance(call.get("tool"), str):
            ops.add(call["tool"])
        events.append(ops)
    violations, unverifiable = [], []
    for rule in (r for r in m.rules if not r.from_fragment):
        observed = []
        for op, performers in zip(rule.ops, rule.performers):
            if op in m.tools:
                observed.append({op})
            elif mode == "machine":
                observed.append(set(performers))
            else:
                observed.append(None)
        if any(o is None for o in observed):
            unverifiable.append(f'"{rule.quote}" (about a state; not observable in {mode} mode)')
            continue
        first = [next((i for i, ops in enumerate(events) if ops & o), None) for o in observed]
        if rule.kind == "required" and outcome == "success" and first[0] is None:
            violations.append(f'required `{rule.ops[0]}` never ran: "{rule.quote}"')
        elif rule.kind == "order" and first[1] is not None and (first[0] is None or first[0] > first[1]):
            violations.append(f'`{rule.ops[1]}` ran before `{rule.ops[0]}`: "{rule.quote}"')
        elif rule.kind == "forbid" and first[0] is not None:
            violations.append(f'forbidden `{rule.ops[0]}` ran at step {first[0]}: "{rule.quote}"')
    if footer is None:
        violations.append("the run did not finish")
    else:
        evidence = footer.get("skillc.evidence") or {}
        terminal = m.states.get(footer.get("skillc.terminal", ""))
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
