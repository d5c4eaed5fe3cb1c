"""`skillc import langgraph` of a graph that `skillc export langgraph` wrote: the machine it carries, checked
against the graph.

An exported module keeps its machine (`MACHINE`, run by its `STEPS`). Its graph is recognised by its node
functions: they belong to a module whose `STEPS` is a `skillc.export.runtime.Steps`. The machine is given back
only while the graph still matches it — one node per state with the state's kind in its metadata, `START` to the
start state, after each operation one conditional edge whose path map holds the state's edge targets and the
fallback, after each terminal an edge to `END` — and only when its text still checks (SKM872 otherwise). A graph
edited by hand is imported like any other LangGraph graph (`skillc.frontends.importers.langgraph`), with the warning \
SKM871
listing what no longer matches. Any other object is not this module's business: `read_back` returns None and
the generic importer takes it.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from skillc.check.source import check_source
from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.export import codes
from skillc.export.langgraph import targets
from skillc.export.runtime import ExportError, Steps
from skillc.frontends.importers.langgraph import builder_of, load_spec, to_skm
from skillc.ir.machine import Machine
from skillc.runtime.jsonvalue import Value

START, END = "__start__", "__end__"


def exported_steps(builder: Any) -> Steps | None:
    """The `Steps` of the module an exported graph's nodes come from, or None (not an exported graph)."""
    for spec in builder.nodes.values():
        runnable = spec.runnable
        func = getattr(runnable, "func", None) or getattr(runnable, "afunc", None) or runnable
        module = sys.modules.get(getattr(func, "__module__", "") or "")
        steps = getattr(module, "STEPS", None)
        if isinstance(steps, Steps):
            return steps
    return None


def graph_mismatches(builder: Any, machine: Machine) -> list[str]:
    """What of the builder's graph does not match the machine (empty: it is the exported graph)."""
    out: list[str] = []
    nodes: Mapping[str, Value] = builder.nodes
    out += [f"node `{n}` is not a state of `{machine.name}`" for n in nodes if n not in machine.states]
    out += [f"state `{s}` has no node" for s in machine.states if s not in nodes]
    edges = {(a, b) for a, b in builder.edges}
    if {b for a, b in edges if a == START} != {machine.start} or builder.branches.get(START):
        out.append(f"START does not lead to the start state `{machine.start}` alone")
    if builder.waiting_edges:
        out.append("the graph has waiting edges (joins), which a machine does not have")
    for name, st in machine.states.items():
        if name not in nodes:
            continue
        meta = (getattr(nodes[name], "metadata", None) or {}).get("skillc", {})
        if meta.get("state") != name or meta.get("kind") != st.kind:
            out.append(f"node `{name}` is not marked as the {st.kind} state it was exported as")
        static = sorted(b for a, b in edges if a == name)
        branches = builder.branches.get(name, {})
        if st.is_terminal:
            if static != [END] or branches:
                out.append(f"terminal `{name}` does not lead to END alone")
            continue
        ends = [tuple((b.ends or {}).values()) for b in branches.values()]
        if static or len(ends) != 1 or set(ends[0]) != set(targets(st)):
            out.append(f"the edges after `{name}` are not its targets {targets(st)}")
    return out


def read_back(spec: str) -> tuple[str | None, list[Diagnostic]] | None:
    """The machine of the exported graph at `module:attr` as `.skm` text with its findings, or None when the object
    is not an exported graph (the generic importer's business; so is a spec that does not load)."""

    obj, problem = load_spec(spec)
    if obj is None or problem is not None:
        return None
    builder, _ = builder_of(obj)
    steps = exported_steps(builder) if builder is not None else None
    if steps is None:
        return None
    try:
        machine = steps.machine
    except ExportError as exc:
        return None, [make(codes.EXPORTED_MACHINE_DOES_NOT_CHECK, str(exc))]
    mismatches = graph_mismatches(builder, machine)
    if mismatches:

        text, found = to_skm(spec)
        return text, [make(codes.EXPORTED_GRAPH_CHANGED, f"the graph of `{spec}` no longer matches the machine "
                           f"`{machine.name}` it was exported with: imported as any LangGraph graph",
                           notes=mismatches[:10])] + found

    checked = check_source(steps.text, path=steps.path)
    return steps.text, list(checked.diagnostics)
