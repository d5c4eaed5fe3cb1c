"""Two machines compared up to names: what a round trip through another system kept and what it lost.

`differences(a, b, names)` renames `a` by `names` (an original name → the name in `b`; a name not in the map keeps
its own) and lists every difference with `b` as one line: the start, tools, named types, variables (kind, type,
maximum, initial value), states (kind, reads, writes, bindings, instructions, documentation, call, edges in
order with guards, targets and assignments, terminal outcome, evidence and predicates, provenance) and rules
(kind, operations, quotation, outcome). Spans, the file a machine was loaded from, and where a rule came from (a
fragment) are not compared. An empty list: the machines are equal up to names.

`skeleton_differences(machine, imported, names)` compares only the graph: each state of `machine` against the state
`names` maps it to in `imported`, the start, and each state's successors in order (the fallback, which every
operation of `machine` may reach when it fails, counted as a successor). It is what a generic import of a graph
(`skillc.frontends.importers.langgraph`) can keep: it reads nodes and edges, not kinds, guards or outcomes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from skillc.ir import expr as ir
from skillc.ir.machine import FALLBACK, Machine, Rule, State
from skillc.ir.printexpr import show_expr
from skillc.runtime.jsonvalue import Object

V = TypeVar("V")
K = TypeVar("K")


def _show(e: ir.Expr | None) -> str | None:
    return show_expr(e) if e is not None else None


class _Names:
    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names

    def __call__(self, name: str) -> str:
        return self.names.get(name, name)

    def expr(self, e: ir.Expr | None) -> str | None:
        return _show(ir.rename(e, self.names)) if e is not None else None


def _state(st: State, rn: _Names) -> Object:
    """What is compared of a state, under the new names."""
    return {"kind": st.kind, "reads": sorted(map(rn, st.reads)), "writes": sorted(map(rn, st.writes)),
            "bindings": sorted((rn(v), r) for v, r in st.bindings), "prompt": st.prompt, "doc": st.doc,
            "call": None if st.call is None else (st.call.tool, [(a, rn.expr(v)) for a, v in st.call.args]),
            "edges": [(rn.expr(e.guard), rn(e.target), [(rn(a.var), a.op, rn.expr(a.value)) for a in e.assigns])
                      for e in st.edges],
            "outcome": st.outcome, "requires": [rn(r) for r in st.requires],
            "predicates": [rn.expr(p) for p in st.predicates],
            "provenance": str(st.provenance) if st.provenance else None}


def _rule(r: Rule, rn: _Names) -> tuple[object, ...]:
    return (r.kind, tuple(map(rn, r.ops)), r.quote, r.outcome)


def differences(a: Machine, b: Machine, names: Mapping[str, str] | None = None) -> list[str]:
    """Every difference between `a` (renamed by `names`) and `b`, one line each; empty when they are equal."""
    rn = _Names(names or {})
    out: list[str] = []
    if rn(a.start) != b.start:
        out.append(f"start: `{rn(a.start)}` / `{b.start}`")
    for field in ("name", "doc", "source"):
        if getattr(a, field) != getattr(b, field):
            out.append(f"{field}: {getattr(a, field)!r} / {getattr(b, field)!r}")
    _keyed(out, "tool", a.tools, b.tools, lambda t: t, lambda x, y: x == y)
    _keyed(out, "type", a.types, b.types, lambda t: t, lambda x, y: x == y)
    va = {rn(k): v for k, v in a.variables.items()}
    _keyed(out, "variable", va, b.variables, lambda v: v,
           lambda x, y: (x.kind, x.type, x.max, rn.expr(x.init)) == (y.kind, y.type, y.max, _show(y.init)))
    sa = {rn(k): _state(v, rn) for k, v in a.states.items()}
    sb = {k: _state(v, _Names({})) for k, v in b.states.items()}
    for name in sorted(set(sa) | set(sb)):
        if name not in sb:
            out.append(f"state `{name}` is missing")
        elif name not in sa:
            out.append(f"state `{name}` is new")
        else:
            out += [f"state `{name}`: {key} {sa[name][key]!r} / {sb[name][key]!r}"
                    for key in sa[name] if sa[name][key] != sb[name][key]]
    ra = sorted(map(repr, (_rule(r, rn) for r in a.rules)))
    rb = sorted(map(repr, (_rule(r, _Names({})) for r in b.rules)))
    out += [f"rule {r} is missing" for r in ra if r not in rb]
    out += [f"rule {r} is new" for r in rb if r not in ra]
    for field in ("allowed", "kit"):
        if getattr(a, field, ()) != getattr(b, field, ()):
            out.append(f"{field}: {getattr(a, field, ())!r} / {getattr(b, field, ())!r}")
    return out


def _keyed(out: list[str], what: str, a: Mapping[str, V], b: Mapping[str, V], key: Callable[[V], K],
           same: Callable[[K, K], bool]) -> None:
    for name in sorted(set(a) | set(b)):
        if name not in b:
            out.append(f"{what} `{name}` is missing")
        elif name not in a:
            out.append(f"{what} `{name}` is new")
        elif not same(key(a[name]), key(b[name])):
            out.append(f"{what} `{name}` differs")


def successors(st: State) -> list[str]:
    """A state's successors in edge order, the fallback last for an operation (where a failure goes)."""
    found = [e.target for e in st.edges]
    if not st.is_terminal:
        found.append(FALLBACK)
    return list(dict.fromkeys(found))


def skeleton_differences(machine: Machine, imported: Machine, names: Mapping[str, str]) -> list[str]:
    """The graph of `machine` against that of `imported` (each state as `names` maps it): states, start, successors.

    A terminal of `machine` is matched by a state of `imported` whose only successor is the imported graph's end
    (LangGraph's END becomes a terminal there, so an exported terminal is a node leading to it).
    """
    out: list[str] = []
    if names.get(machine.start, machine.start) != imported.start:
        out.append(f"start: `{machine.start}` / `{imported.start}`")
    for name, st in machine.states.items():
        mapped = names.get(name)
        if mapped is None or mapped not in imported.states:
            out.append(f"state `{name}` has no counterpart")
            continue
        want = [names.get(t, t) for t in successors(st)]
        have = [t for t in successors(imported.states[mapped]) if t != FALLBACK or FALLBACK in want]
        if st.is_terminal:
            ends = [t for t in have if imported.states[t].is_terminal]
            if len(ends) != 1 or len(have) != 1:
                out.append(f"terminal `{name}` leads to {have}, not to the end alone")
        elif want != have:
            out.append(f"state `{name}`: successors {want} / {have}")
    counterparts = {names.get(n) for n in machine.states}
    extra = [n for n, st in imported.states.items() if n not in counterparts and not st.is_terminal]
    out += [f"state `{n}` of the import has no counterpart" for n in extra]
    return out


__all__ = ["differences", "skeleton_differences", "successors"]
