"""DOT text for a machine, and SVG/PNG through the real Graphviz `dot` binary."""

from __future__ import annotations

import shutil
import subprocess
import textwrap

from skillc.ir.machine import Machine
from skillc.render.overlay import Overlay
from skillc.render.style import KIND_STYLE, OUTCOME_COLOR, edge_label, rule_marks, state_caption


class RenderError(Exception):
    """Rendering failed (no Graphviz, or Graphviz rejected the input)."""


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(**kv: object) -> str:
    return "[" + ", ".join(f"{k}={_q(str(v)) if not str(v).startswith('<') else v}" for k, v in kv.items()) + "]"


def to_dot(m: Machine, overlay: Overlay | None = None) -> str:
    """The machine as a DOT digraph: states by kind, numbered guarded edges, counters, rules, fragments."""
    marks = rule_marks(m)
    lines = [f"digraph {_q(m.name)} {{", '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, nodesep=0.35, '
             'ranksep=0.45, labelloc=t, labeljust=l];',
             '  node [fontname="Helvetica", fontsize=10, margin="0.12,0.06"];',
             '  edge [fontname="Helvetica", fontsize=9, arrowsize=0.7];']
    counters = [f"{v.name} ≤ {v.max}" for v in m.variables.values() if v.is_counter]
    title = m.name + (f" — {m.doc}" if m.doc and len(m.doc) < 90 else "")
    if counters:
        title += "\ncounters: " + ", ".join(counters)
    if overlay is not None and overlay.note:  # a baseline's path is inferred from its tool calls: say so
        title += "\n" + textwrap.fill(overlay.note, 110)
    lines.append(f"  label={_q(title)};")
    lines.append('  __start [shape=point, width=0.12, label=""];')
    groups: dict[str | None, list[str]] = {}
    for st in m.states.values():
        groups.setdefault(st.instance.split(".")[0] if st.instance else None, []).append(st.name)
    for group, names in groups.items():
        indent = "  "
        if group is not None:
            lines.append(f"  subgraph {_q('cluster_' + group)} {{")
            lines.append(f'    label={_q("use " + group)}; style="rounded,dashed"; color="#9aa0a6";')
            indent = "    "
        for name in names:
            st = m.states[name]
            style = dict(KIND_STYLE.get(st.kind, {"shape": "doublecircle", "style": "filled",
                                                  "fillcolor": "#ffffff",
                                                  "color": OUTCOME_COLOR.get(st.outcome or "", "#5f6368")}))
            caption = state_caption(st, marks.get(name, []))
            if overlay is not None:
                n = overlay.visits.get(name, 0)
                if n:
                    caption += f"\n×{n}"
                    style["penwidth"] = "2.5"
                else:
                    style.update(style="dashed", fillcolor="#ffffff", fontcolor="#9aa0a6", color="#bdc1c6")
            if st.kind == "terminal":
                style["shape"] = "doubleoctagon"
            lines.append(f"{indent}{_q(name)} {_attrs(label=caption, **style)};")
        if group is not None:
            lines.append("  }")
    lines.append(f"  __start -> {_q(m.start)} [penwidth=1.5];")
    for st in m.states.values():
        numbered = len(st.edges) > 1
        for e in st.edges:
            a = {"label": edge_label(e, numbered, width=42)}
            if e.guard is None:
                a["style"] = "dashed"
            if any(v.is_counter for v in (m.variables.get(x.var) for x in e.assigns) if v):
                a["color"] = "#8430ce"
            if overlay is not None:
                used = overlay.edges.get((st.name, e.index), 0)
                if used:
                    a["label"] += f"  (×{used})"
                    a["penwidth"] = str(min(1.5 + used, 5))
                    if (st.name, e.index) in overlay.final_path:
                        a["color"] = "#d93025"
                        a["penwidth"] = str(max(float(a["penwidth"]), 3))
                else:
                    a["color"] = "#dadce0"
                    a["fontcolor"] = "#9aa0a6"
            lines.append(f"  {_q(st.name)} -> {_q(e.target)} {_attrs(**a)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_image(dot_text: str, fmt: str) -> bytes:
    """SVG or PNG bytes from DOT text, through the `dot` binary."""
    exe = shutil.which("dot")
    if exe is None:
        raise RenderError("Graphviz's `dot` program is not installed; install the graphviz package "
                          "(apt-get install graphviz, brew install graphviz) or use --format dot or mermaid")
    try:
        proc = subprocess.run([exe, f"-T{fmt}"], input=dot_text.encode("utf-8"), capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        raise RenderError("Graphviz took longer than 120 s") from None
    if proc.returncode != 0:
        raise RenderError("Graphviz failed: " + proc.stderr.decode("utf-8", "replace").strip()[:500])
    return proc.stdout
