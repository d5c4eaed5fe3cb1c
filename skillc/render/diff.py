"""`skillc dot --diff OLD NEW`: NEW drawn with what changed since OLD coloured, OLD's removed parts dashed.

The diff itself is not computed here: it is the one structural `MachineDiff` of `skillc.improve.diff`, which
the caller (`skillc.api.draw_diff`) computes and passes in. Render is a lower stage than improve and never
imports it; it reads the diff through `DiffView`, the few names a picture needs (states matched by name, edges
by (source, target), each added, removed, changed or the same).
"""

from __future__ import annotations

from typing import Protocol

from skillc.ir.machine import Edge, Machine, State
from skillc.render.dot import _attrs, _q
from skillc.render.style import KIND_STYLE, OUTCOME_COLOR, edge_label, rule_marks, state_caption

#: Colour of each kind of change (and of "unchanged").
CHANGE_COLOR = {"added": "#188038", "removed": "#c5221f", "changed": "#e37400", "same": "#9aa0a6"}

EdgeKey = tuple[str, str]


class DiffView(Protocol):
    """What a picture reads of a diff (skillc.improve.diff.MachineDiff has it)."""

    @property
    def added_states(self) -> tuple[str, ...]: ...
    @property
    def removed_states(self) -> tuple[str, ...]: ...
    @property
    def changed_states(self) -> tuple[str, ...]: ...
    @property
    def added_edges(self) -> tuple[EdgeKey, ...]: ...
    @property
    def removed_edges(self) -> tuple[EdgeKey, ...]: ...
    @property
    def changed_edges(self) -> tuple[EdgeKey, ...]: ...

    def state_change(self, name: str) -> str:
        """added, removed, changed or same."""
        ...

    def edge_change(self, key: EdgeKey) -> str:
        """added, removed, changed or same."""
        ...


#: How an unchanged state is drawn: its kind's shape, in grey. The kinds' own colours (a judge's orange, a tool's
#: green, the fallback's dashed red) are the change colours, so only a change may be coloured here.
SAME_STYLE = {"fillcolor": "#f8f9fa", "color": CHANGE_COLOR["same"]}


def _node(st: State, change: str, marks: list[str]) -> str:
    """One state, shaped by its kind and coloured by its change (grey when unchanged)."""
    style = dict(KIND_STYLE.get(st.kind, {"shape": "doubleoctagon", "style": "filled", "fillcolor": "#ffffff",
                                          "color": OUTCOME_COLOR.get(st.outcome or "", "#5f6368")}))
    caption = state_caption(st, marks)
    if change == "same":
        style.update(SAME_STYLE, style=style["style"].replace(",dashed", ""))
    else:
        style.update(color=CHANGE_COLOR[change], penwidth="3")
        caption += f"\n({change})"
    if change == "removed":
        style.update(style="dashed", fillcolor="#ffffff", fontcolor=CHANGE_COLOR["removed"])
    return f"  {_q(st.name)} {_attrs(label=caption, **style)};"


def _edge(e: Edge, numbered: bool, change: str) -> str:
    """One edge, coloured by its change."""
    a = {"label": edge_label(e, numbered, width=42)}
    if change == "same":
        a["color"] = "#5f6368"
    else:
        a.update(color=CHANGE_COLOR[change], fontcolor=CHANGE_COLOR[change], penwidth="2.5")
    if change == "removed" or e.guard is None:
        a["style"] = "dashed"
    return f"  {_q(e.source)} -> {_q(e.target)} {_attrs(**a)};"


def _legend() -> list[str]:
    """A small cluster naming each colour."""
    lines = ['  subgraph "cluster_legend" {', '    label="changes"; style="rounded"; color="#dadce0"; fontsize=9;']
    for change, color in CHANGE_COLOR.items():
        style = _attrs(label=change, shape="box", style="rounded", color=color, fontcolor=color)
        lines.append(f"    {_q('legend_' + change)} {style};")
    lines.append("  }")
    return lines


def to_dot_diff(old: Machine, new: Machine, d: DiffView) -> str:
    """NEW as a DOT digraph with what changed since OLD (`d`, their diff) coloured, OLD's removed parts dashed,
    and a legend."""
    summary = (f"{len(d.added_states)} states added, {len(d.removed_states)} removed, {len(d.changed_states)} "
               f"changed; {len(d.added_edges)} edges added, {len(d.removed_edges)} removed, "
               f"{len(d.changed_edges)} changed")
    lines = [f"digraph {_q(new.name + ' (diff)')} {{", '  graph [rankdir=TB, fontname="Helvetica", fontsize=11, '
             'labelloc=t, labeljust=l];', '  node [fontname="Helvetica", fontsize=10];',
             '  edge [fontname="Helvetica", fontsize=9, arrowsize=0.7];',
             f"  label={_q(new.name + ' — ' + summary)};",
             '  __start [shape=point, width=0.12, label=""];']
    marks = rule_marks(new)
    lines += [_node(st, d.state_change(n), marks.get(n, [])) for n, st in new.states.items()]
    lines += [_node(old.states[n], "removed", []) for n in d.removed_states]
    lines.append(f"  __start -> {_q(new.start)};")
    for st in new.states.values():
        lines += [_edge(e, len(st.edges) > 1, d.edge_change((st.name, e.target))) for e in st.edges]
    for st in old.states.values():
        lines += [_edge(e, len(st.edges) > 1, "removed") for e in st.edges if (st.name, e.target) in d.removed_edges]
    lines += _legend()
    lines.append("}")
    return "\n".join(lines) + "\n"
