"""A machine's rules as effect requirements: what RFC checks in every mode, derived from the `.skm` itself.

A `required`, `order` or `forbid` rule whose operations are all tools becomes a requirement on the run's tool
calls (`effects.ToolRequirement`, `OrderRequirement`, `NoToolRequirement`), so it means the same in machine,
native and prompt-only mode. An operation is a tool when it names a declared tool (any call of it) or a tool
state (a call of the tool that state calls, whose arguments match the pattern the state's call fixes: the
literal text of each string argument in order, see `argument_pattern`). A rule about a model or judge state, a
fragment instance or a terminal is a *state rule*: not an effect, judged from the visited states in machine
mode only (`skillc.runtime.score`) and never counted in RFC. The terminals' `requires` become one
`EvidenceRequirement` (the run hands over what a terminal of its outcome requires), which RFC counts.
"""

from __future__ import annotations

import re

import attrs

from skillc.bench.effects import (
    CallPattern,
    EvidenceRequirement,
    NoToolRequirement,
    OrderRequirement,
    Requirement,
    ToolRequirement,
)
from skillc.ir.expr import Const, Expr, Label, concat_parts
from skillc.ir.machine import Machine, Rule

#: The rule kinds scored on traces; `ends` and `reads` are proved by the checker, not scored.
SCORED_KINDS = ("required", "order", "forbid")
#: The id of the terminal-evidence requirement.
EVIDENCE_ID = "evidence"


@attrs.frozen
class RuleRequirements:
    """What a machine's rules ask of a run: effect requirements (counted in RFC) and state rules (not)."""

    requirements: tuple[Requirement, ...]
    state_rules: tuple[tuple[str, Rule], ...]  # (id, rule)


def rule_id(index: int) -> str:
    """The id of the machine's rule number `index` (0-based) in verdicts and results: `rule-1`, `rule-2`, …"""
    return f"rule-{index + 1}"


def rule_requirements(machine: Machine) -> RuleRequirements:
    """Each scored rule as an effect requirement or a state rule, then the terminal-evidence requirement."""
    requirements: list[Requirement] = []
    state_rules: list[tuple[str, Rule]] = []
    for i, rule in enumerate(machine.rules):
        if rule.kind not in SCORED_KINDS:
            continue
        requirement = effect_requirement(machine, rule, rule_id(i))
        if requirement is None:
            state_rules.append((rule_id(i), rule))
        else:
            requirements.append(requirement)
    evidence = evidence_requirement(machine)
    if evidence is not None:
        requirements.append(evidence)
    return RuleRequirements(tuple(requirements), tuple(state_rules))


def effect_requirement(machine: Machine, rule: Rule, rid: str) -> Requirement | None:
    """The rule as a requirement on tool calls, or None when one of its operations is not a tool (a state rule)."""
    if rule.instance is not None:  # judged on every passage through the instance: passages are machine states
        return None
    patterns = [op_pattern(machine, op) for op in rule.ops]
    if any(p is None for p in patterns) or not patterns:
        return None
    calls = [p for p in patterns if p is not None]
    if rule.kind == "required":
        return ToolRequirement(rid, calls[0], rule.quote)
    if rule.kind == "forbid":
        return NoToolRequirement(rid, calls[0], rule.quote)
    return OrderRequirement(rid, calls[0], calls[1], rule.quote, then_required=False)


def op_pattern(machine: Machine, op: str) -> CallPattern | None:
    """The calls that perform `op`: a declared tool's, or a tool state's (with its fixed arguments); else None."""
    if op in machine.tools:
        return CallPattern(op)
    state = machine.states.get(op)
    if state is None or state.kind != "tool" or state.call is None:
        return None
    fixed = tuple((name, regex) for name, expr in state.call.args if (regex := argument_pattern(expr)) is not None)
    shown = ", ".join(f"{name}: {_shape(expr)}" for name, expr in state.call.args if dict(fixed).get(name))
    label = f"`{state.call.tool}` as state `{op}` calls it" + (f" ({shown})" if shown else "")
    return CallPattern(state.call.tool, arguments=fixed, label=label)


def _shape(expr: Expr) -> str:
    """An argument as its literal text with `…` for what varies: `printf %s … > …`."""
    parts = [p.value if isinstance(p, (Const, Label)) and isinstance(p.value, str) else None
             for p in concat_parts(expr)]
    if len(parts) == 1 and isinstance(expr, (Const, Label)):
        return repr(str(expr.value))
    return repr("".join("…" if p is None else p for p in parts))


def argument_pattern(expr: Expr) -> str | None:
    """The regex a call argument's value always matches, or None when the expression fixes nothing.

    A constant is matched whole. A string built with `++` keeps its literal pieces in order, with anything
    between them (`.*?`, across lines); a run of whitespace in a literal matches any whitespace (none at all
    next to a shell operator such as `>`), so `printf %s ⟨choice⟩ > ⟨path⟩` accepts `printf %s B >answer.txt`.
    """
    if isinstance(expr, (Const, Label)):
        value = expr.value
        if value is None or isinstance(value, (list, dict)):
            return None
        whole = _literal(expr) if isinstance(value, str) else re.escape(str(value))
        return f"(?s)^\\s*{whole}\\s*$" if whole else None
    pieces = _merge_holes([_literal(part) for part in concat_parts(expr)])
    while pieces and pieces[-1] is None:  # a trailing hole matches anything: say nothing
        pieces.pop()
    if not pieces:
        return None
    guard = r"(?<![\w./-])" if pieces[0] is not None and pieces[0][:1].isalnum() else ""
    return "(?s)" + guard + "".join(".*?" if p is None else p for p in pieces)


def _literal(part: Expr) -> str | None:
    """A literal string piece as a regex, whitespace flexible, or None for a hole."""
    if not isinstance(part, (Const, Label)) or not isinstance(part.value, str) or not part.value:
        return None
    chunks = [c for c in re.split(r"(\s+)", part.value) if c]
    out = []
    for k, chunk in enumerate(chunks):
        if not chunk.isspace():
            out.append(re.escape(chunk))
            continue
        # Next to a shell operator whitespace is optional (`>answer.txt`); next to a word it is not
        # (`cat answer.txt` is not `category`).
        near = (chunks[k - 1][-1:] if k > 0 else "") + (chunks[k + 1][:1] if k + 1 < len(chunks) else "")
        out.append(r"\s*" if near and all(ch in _OPERATORS for ch in near) else r"\s+")
    return "".join(out)


#: Shell operator characters around which whitespace is optional.
_OPERATORS = frozenset("<>|&;=(){}")


def _merge_holes(pieces: list[str | None]) -> list[str | None]:
    """Adjacent holes collapsed into one."""
    out: list[str | None] = []
    for p in pieces:
        if p is None and out and out[-1] is None:
            continue
        out.append(p)
    return out


def evidence_requirement(machine: Machine) -> EvidenceRequirement | None:
    """What a run must hand over: for each terminal (not the fallback), its outcome and its `requires`."""
    alternatives = tuple((t.outcome, t.requires) for t in machine.terminals()
                         if t.kind == "terminal" and t.outcome is not None)
    if not alternatives:
        return None
    return EvidenceRequirement(EVIDENCE_ID, alternatives,
                               "the values a terminal of the run's outcome requires (its `requires`)")
