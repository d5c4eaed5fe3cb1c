"""How each kind of state is drawn, shared by the DOT and Mermaid renderers."""

from __future__ import annotations

import textwrap

from skillc.ir.machine import Edge, Machine, State
from skillc.ir.printexpr import show_expr

KIND_STYLE = {
    "model": {"shape": "box", "style": "rounded,filled", "fillcolor": "#e8f0fe", "color": "#3367d6"},
    "judge": {"shape": "diamond", "style": "filled", "fillcolor": "#fef7e0", "color": "#e37400"},
    "tool": {"shape": "component", "style": "filled", "fillcolor": "#e6f4ea", "color": "#188038"},
    "fallback": {"shape": "octagon", "style": "filled,dashed", "fillcolor": "#fce8e6", "color": "#c5221f"},
}
OUTCOME_COLOR = {"success": "#188038", "partial": "#e37400", "failed": "#c5221f"}


def edge_label(e: Edge, numbered: bool, width: int = 0) -> str:
    """`2: verdict == bad and tries < 2 / tries += 1`; default edges read `else`, a lone edge nothing.

    With `width`, long labels are wrapped onto several lines.
    """
    if not numbered and e.guard is None and not e.assigns:
        return ""
    cond = show_expr(e.guard) if e.guard is not None else "else"
    sets = ", ".join(f"{a.var} {a.op} {show_expr(a.value)}" for a in e.assigns)
    text = f"{cond} / {sets}" if sets else cond
    text = f"{e.index + 1}: {text}" if numbered else text
    return "\n".join(textwrap.wrap(text, width, break_long_words=False)) if width else text


def rule_marks(m: Machine) -> dict[str, list[str]]:
    """State → the kinds of rule it takes part in (required, order, forbid)."""
    marks: dict[str, list[str]] = {}
    for r in m.rules:
        for performers in r.performers:
            for s in performers:
                if r.kind not in marks.setdefault(s, []):
                    marks[s].append(r.kind)
    return marks


def state_caption(st: State, marks: list[str]) -> str:
    """The name, the kind, and what the state does in one or two short lines."""
    if st.kind == "terminal":
        head = f"{st.name}\n[{st.outcome}]"
    elif st.kind == "fallback":
        head = "fallback\n[failed]"
    else:
        detail = (f"call {st.call.tool}" if st.call is not None
                  else f"writes {', '.join(st.writes)}" if st.writes else "")
        head = f"{st.name}\n{st.kind}" + (f": {detail}" if detail else "")
    if marks:
        head += "\n⚑ " + ", ".join(marks)
    return head
