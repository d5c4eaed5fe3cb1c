"""A human summary of a machine (`skillc show`)."""

from __future__ import annotations

from skillc.ir import types as T
from skillc.ir.machine import Machine
from skillc.ir.printexpr import show_expr


def describe(m: Machine) -> str:
    """Several lines: header, counts, states with their edges, variables, tools and rules."""
    s = m.summary()
    lines = [f"machine {m.name}" + (f" — {m.doc}" if m.doc else "")]
    if m.source:
        lines.append(f"  compiled from {m.source}")
    kinds = ", ".join(f"{v} {k}" for k, v in sorted(s["kinds"].items()))
    lines.append(f"  {s['states']} states ({kinds}), {s['transitions']} transitions, "
                 f"{s['variables']} variables ({s['inputs']} inputs, {s['counters']} counters), "
                 f"{s['tools']} tools, {len(m.rules)} rules")
    lines.append(f"  start: {m.start}")
    lines.append("  states:")
    for st in m.states.values():
        if st.is_terminal:
            evidence = [*st.requires, *(show_expr(p) for p in st.predicates)]
            req = f" requires {', '.join(evidence)}" if evidence else ""
            lines.append(f"    {st.kind:<8} {st.name}: {st.outcome}{req}")
            continue
        arrows = ", ".join(("default" if e.guard is None else "guarded") + f"→{e.target}" for e in st.edges)
        lines.append(f"    {st.kind:<8} {st.name} [{arrows}]")
    lines.append("  variables:")
    for v in m.variables.values():
        extra = f" max {v.max}" if v.max is not None else ""
        lines.append(f"    {v.kind:<8} {v.name}: {T.show(v.type)}{extra}")
    if m.tools:
        lines.append("  tools:")
        for t in m.tools.values():
            params = ", ".join(f"{k}: {T.show(v)}" for k, v in t.params)
            results = ", ".join(f"{k}: {T.show(v)}" for k, v in t.results)
            lines.append(f"    {t.name}({params}) -> ({results})")
    if m.kit:
        lines.append(f"  kit: {', '.join(m.kit)}")
    if m.allowed:
        lines.append(f"  allow: {', '.join(c.spelling for c in m.allowed)}")
    if m.rules:
        lines.append("  rules:")
        for r in m.rules:
            ops = f"{r.ops[0]} before {r.ops[1]}" if r.kind == "order" else r.ops[0]
            lines.append(f"    {r.kind} {ops}: \"{r.quote}\"")
    return "\n".join(lines)
