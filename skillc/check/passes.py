"""The checks in the order they run (`CHECKS`), `check_machine` that runs them, and `fragment_machine`."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from skillc.check.capabilities import check_capabilities
from skillc.check.context import CheckContext
from skillc.check.dataflow import check_definite_assignment
from skillc.check.effects import check_effects
from skillc.check.evidence import check_terminal_evidence
from skillc.check.guards import check_guards, check_judge_coverage
from skillc.check.injection import check_shell_injection
from skillc.check.interface import check_interface
from skillc.check.loops import check_bounded_loops
from skillc.check.mcp import check_mcp_tools
from skillc.check.policy import check_call_reads
from skillc.check.provenance import check_quotes
from skillc.check.requirements import check_requirement_rules
from skillc.check.rules import check_rules
from skillc.check.structure import check_graph
from skillc.diagnostics import Diagnostic, codes, make
from skillc.ir.lower import FragmentDef
from skillc.ir.machine import FALLBACK, Machine, State, Variable
from skillc.ir.toolkit import PLACE_VARIABLES, places_in

Check = Callable[[Machine, CheckContext | None], Iterator[Diagnostic]]

CHECKS: tuple[Check, ...] = (
    check_graph,
    check_definite_assignment,
    check_terminal_evidence,
    check_effects,
    check_rules,
    check_requirement_rules,
    check_quotes,
    check_interface,
    check_mcp_tools,
    check_call_reads,
    check_shell_injection,
    check_capabilities,
    check_guards,
    check_judge_coverage,
    check_bounded_loops,
)


def check_machine(m: Machine, context: CheckContext | None = None) -> list[Diagnostic]:
    """Run every check on a lowered machine."""
    context = context or CheckContext()
    found: list[Diagnostic] = []
    for check in CHECKS:
        try:
            found.extend(check(m, context))
        except Exception as exc:  # noqa: BLE001 - a crash in a check is a bug, reported as one
            found.append(make(codes.INTERNAL_ERROR,
                              "internal error in skillc (this is a bug, not a problem with your input)",
                              m.span, notes=[f"in {check.__name__}: {type(exc).__name__}: {exc}"]))
    return found


def fragment_machine(f: FragmentDef, path: str | None) -> Machine:
    """A fragment seen as a machine: parameters are inputs, exits are success terminals."""
    variables = {name: Variable(name, t, "input") for name, t in f.params}
    variables.update(f.variables)
    variables.update({p: PLACE_VARIABLES[p] for p in places_in(f.states.values())})
    states = dict(f.states)
    for x in f.exits:
        states[x] = State(x, "terminal", outcome="success", span=f.span)
    states[FALLBACK] = State(FALLBACK, "fallback", outcome="failed", span=f.span)
    return Machine(name=f.name, doc=None, source=None, tools=f.tools, types={}, variables=variables,
                   start=f.start or "", states=states, rules=f.rules, path=path, instances=f.instances,
                   exits=tuple(f.exits), span=f.span)


__all__ = ["CHECKS", "CheckContext", "check_machine", "fragment_machine"]
