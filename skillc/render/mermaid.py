"""Mermaid `stateDiagram-v2` for GitHub and GitLab markdown."""

from __future__ import annotations

import re

from skillc.ir.machine import Machine
from skillc.render.overlay import Overlay
from skillc.render.style import edge_label, rule_marks


def _id(name: str) -> str:
    return "s_" + re.sub(r"[^A-Za-z0-9_]", "_", name)


def _text(text: str) -> str:
    # Mermaid labels cannot hold ':' or quotes reliably; '#58;'-style entities are its escape.
    return text.replace('"', "#quot;").replace(":", "#58;").replace("\n", " ")


def to_mermaid(m: Machine, overlay: Overlay | None = None) -> str:
    """A state diagram with kinds, outcomes, numbered guards, and (optionally) visit counts."""
    marks = rule_marks(m)
    lines = ["stateDiagram-v2"]
    for st in m.states.values():
        kind = st.outcome if st.is_terminal else st.kind
        flag = " ⚑" if marks.get(st.name) else ""
        visits = f" ×{overlay.visits[st.name]}" if overlay and overlay.visits.get(st.name) else ""
        lines.append(f'    state "{_text(st.name)} ({kind}){flag}{visits}" as {_id(st.name)}')
    lines.append(f"    [*] --> {_id(m.start)}")
    if overlay is not None and overlay.note:  # a baseline's path is inferred from its tool calls: say so
        lines.append(f"    note left of {_id(m.start)}: {_text(overlay.note)}")
    for st in m.states.values():
        numbered = len(st.edges) > 1
        for e in st.edges:
            label = edge_label(e, numbered)
            if overlay and overlay.edges.get((st.name, e.index)):
                label += f" (×{overlay.edges[(st.name, e.index)]})"
            lines.append(f"    {_id(st.name)} --> {_id(e.target)}: {_text(label)}")
        if st.is_terminal:
            lines.append(f"    {_id(st.name)} --> [*]")
    for kind, style in (("model", "fill:#e8f0fe,stroke:#3367d6"), ("judge", "fill:#fef7e0,stroke:#e37400"),
                        ("tool", "fill:#e6f4ea,stroke:#188038"), ("terminal", "fill:#ffffff,stroke:#188038"),
                        ("fallback", "fill:#fce8e6,stroke:#c5221f")):
        members = [_id(s.name) for s in m.states.values() if s.kind == kind]
        if members:
            lines.append(f"    classDef {kind} {style}")
            lines.append(f"    class {','.join(members)} {kind}")
    return "\n".join(lines) + "\n"
