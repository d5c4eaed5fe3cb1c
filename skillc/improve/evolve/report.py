"""What an evolution leaves behind: the tree as JSON, the trajectory as Markdown, the tree as Graphviz DOT, the
evolved machine — each file written whole (write to a temporary file, fsync, rename: never half-written).

The JSON holds every node (rank, prior, visits, reward, s, Q, Q̂, why the gate refused it, its work folder and
trace, why it did not really run (`note`), whether it is exhausted, the patch that made it in the role-script
format), the hypotheses and every operation applied to them, the test bank, the evidence matrix, the trajectory
and whether an interrupt stopped the search; the Markdown shows the same for a reader (each revision with what
became of it and its edits one line each, what changed in it (its structural diff from its parent), each case \
with its strength and owners, the matrix with s); the drawing
colours rewarded versions, greys out refused ones (with the gate's reason cut short), dots the ones not run,
outlines the best one and draws each backtracking jump as a dashed red edge labelled "jump".
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

from skillc.check.source import check_source
from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics import codes as diagnostics_codes
from skillc.diagnostics.files import FileProblem, write_output
from skillc.improve.diff import diff_machines
from skillc.improve.edits import patch_json, patch_lines
from skillc.improve.evolve import search
from skillc.improve.evolve.loop import Evolution, label, trajectory
from skillc.improve.evolve.state import Node
from skillc.ir.machine import Machine

#: The report's JSON schema version.
SCHEMA_VERSION = 1


def _node_json(node: Node, vals: search.Values) -> dict[str, object]:
    """One node with its values."""
    return {"id": node.id, "name": node.name, "parent": node.parent, "children": list(node.children),
            "rank": node.rank, "prior": node.prior, "visits": node.visits, "reward": node.reward,
            "score": vals.scores.get(node.id), "q": vals.q.get(node.id), "q_normalised": vals.normalised.get(node.id),
            "invalid": node.invalid, "exhausted": node.exhausted,
            "workdir": None if node.output is None else str(node.output.workdir),
            "trace": None if node.output is None else str(node.output.trace),
            "note": None if node.output is None or not node.output.note else node.output.note,
            "patch": None if node.patch is None else patch_json(node.patch)}


def evolution_json(evolution: Evolution) -> dict[str, object]:
    """The whole evolution as one JSON object (the tree file)."""
    k = evolution.knowledge
    vals = search.values(evolution.tree, k.bank, k.evidence)
    return {
        "v": SCHEMA_VERSION, "success": evolution.success, "interrupted": evolution.interrupted,
        "best": evolution.best.id,
        "executions": evolution.executions, "saved": evolution.saved,
        "nodes": [_node_json(n, vals) for n in evolution.tree.nodes],
        "hypotheses": [{"id": h.id, "description": h.description, "prediction": h.prediction, "state": h.state,
                        "parent": h.parent, "node": h.node} for h in k.store.hypotheses],
        "operations": [{"node": node, "op": op.op, "id": op.id, "new_id": op.new_id} for node, op in k.store.log],
        "cases": [{"id": c.id, "kind": c.kind, "strength": c.strength, "owners": sorted(c.owners),
                   "description": c.description, "source": c.source} for c in k.bank.cases],
        "evidence": {"rows": list(k.evidence.rows), "columns": list(k.evidence.columns),
                     "values": [list(k.evidence.row(r)) for r in k.evidence.rows]},
        "steps": [{"kind": s.kind, "node": s.node, "reward": s.reward, "jump": s.jump, "detail": s.detail}
                  for s in evolution.steps],
        "diagnostics": [f"{d.code}: {d.message}" for d in evolution.diagnostics],
    }


def evolution_markdown(evolution: Evolution) -> str:
    """The trajectory report: outcome, the runs and jumps, hypotheses with their operations, the evidence matrix."""
    k = evolution.knowledge
    outcome = "succeeded" if evolution.success else "did not succeed"
    tree = evolution.tree
    lines = ["# skillc evolve", "",
             f"{outcome}{' (interrupted: the versions run so far)' if evolution.interrupted else ''}: best version "
             f"`{label(tree, evolution.best.id)}`, {evolution.executions} evolved executions, {evolution.saved} saved "
             "by the check/replay gate", "",
             "## Trajectory", "", *[f"1. {line}" for line in trajectory(evolution)], "", "## Hypotheses", ""]
    lines += [f"- `{h.id}` ({h.state}): {h.description} — predicts: {h.prediction}" for h in k.store.hypotheses]
    lines += ["", "| node | operation | hypothesis |", "|---|---|---|"]
    lines += [f"| {label(tree, n)} | {op.op} | {op.id}{' → ' + op.new_id if op.new_id else ''} |"
              for n, op in k.store.log]
    vals = search.values(evolution.tree, k.bank, k.evidence)
    lines += ["", "## Revisions", ""] + _revision_lines(evolution, vals)
    lines += ["", "## What changed", "", "Each revision's structural diff from its parent (skillc.improve.diff: states "
              "matched by name, edges by source and target).", ""] + _change_lines(evolution)
    lines += ["", "## Cases", ""] + [f"- `{c.id}` ({c.strength}, {c.kind}; owned by {', '.join(sorted(c.owners))})"
                                     + (f": {c.description}" if c.description else "") for c in k.bank.cases]
    if not k.bank.cases:
        lines.append("(no cases)")
    lines += ["", "## Evidence", "", "M[node, case]: 1 where the case holds on the node's output; s is the score.", ""]
    lines += [_row(["node", *k.evidence.columns, "s"]), "|---|" + "---|" * (len(k.evidence.columns) + 1)]
    lines += [_row([label(tree, r), *map(str, k.evidence.row(r)), _score(vals.scores.get(r))])
              for r in k.evidence.rows]
    return "\n".join(lines) + "\n"


def _row(cells: list[str]) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(cells) + " |"


def _score(value: float | None) -> str:
    """s to two places, or a dash before the version ran."""
    return "-" if value is None else f"{value:.2f}"


def _status(node: Node, vals: search.Values) -> str:
    """What became of a revision: refused, run (reward and s), not run, exhausted."""
    if node.invalid is not None:
        return "refused by the gate"
    if node.output is None:
        return "not run"
    values = f"reward {node.reward}, s {_score(vals.scores.get(node.id))}"
    # a version that does not check (no gate) never ran: it is charged as a failed run, its note says why
    ran = f"charged as a failed run, {values} ({node.output.note.split(' (')[0]})" if node.output.note \
        else f"ran: {values}"
    return ran + ("; exhausted" if node.exhausted else "")


def _code(text: str) -> str:
    """Inline Markdown code, with a double-backtick fence when the text holds a backtick."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _revision_lines(evolution: Evolution, vals: search.Values) -> list[str]:
    """Each child with what became of it and how it was made: a whole text, or its patch's edits one line each."""
    lines: list[str] = []
    for node in evolution.tree.nodes[1:]:
        parent = evolution.tree.node(node.parent) if node.parent is not None else node
        how = "the whole machine text" if node.patch is None else "a patch:"
        names = f"`{label(evolution.tree, node.id)}` (from `{label(evolution.tree, parent.id)}`, rank {node.rank}"
        lines.append(f"- {names}; {_status(node, vals)}): {how}")
        lines += [f"  - {_code(line)}" for line in (patch_lines(node.patch) if node.patch is not None else ())]
    return lines or ["(no revisions)"]


def _change_lines(evolution: Evolution) -> list[str]:
    """Each child's `MachineDiff` from its parent, one line per revision (when both machines check)."""
    checked: dict[int, Machine | None] = {}

    def machine(node: Node) -> Machine | None:
        if node.id not in checked:
            result = check_source(node.machine, path=f"<candidate {node.name or node.id}>")
            checked[node.id] = None if result.failed else result.machine
        return checked[node.id]

    lines: list[str] = []
    for node in evolution.tree.nodes[1:]:
        parent = evolution.tree.node(node.parent) if node.parent is not None else node
        old, new = machine(parent), machine(node)
        what = "one of the two machines does not check" if old is None or new is None else \
            "; ".join(diff_machines(old, new).lines()) or "no state or edge changed"
        lines.append(f"- `{label(evolution.tree, node.id)}` (from `{label(evolution.tree, parent.id)}`): {what}")
    return lines or ["(no revisions)"]


def _short(reason: str, width: int = 48) -> str:
    """A refusal's reason cut to one short line (the report and tree.json hold it whole)."""
    return reason if len(reason) <= width else reason[:width - 1] + "…"


def _dot_text(text: str) -> str:
    """A DOT double-quoted string's body."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def evolution_dot(evolution: Evolution) -> str:
    """The patch tree as a Graphviz digraph; backtracking jumps as dashed edges."""
    k = evolution.knowledge
    vals = search.values(evolution.tree, k.bank, k.evidence)
    out = ["digraph evolve {", '  node [shape=box, fontname="Helvetica"];', '  edge [fontname="Helvetica"];']
    for node in evolution.tree.nodes:
        detail = f"P={node.prior:.2f} N={node.visits}"
        if node.id in vals.scores:
            detail += f"\\nR={node.reward} s={vals.scores[node.id]:.2f}"
        style = ["filled"] if node.reward == 1 else []
        colour = "palegreen" if node.reward == 1 else "white"
        if node.invalid is not None:
            style, colour = ["filled", "dashed"], "lightgrey"
            detail += f"\\nrefused by the gate\\n{_dot_text(_short(node.invalid))}"
        elif node.output is None:
            style, detail = ["dotted"], detail + "\\nnot run"
        elif node.exhausted:
            detail += "\\nexhausted"
        width = ", penwidth=3" if node.id == evolution.best.id else ""
        name = _dot_text(label(evolution.tree, node.id))
        out.append(f'  n{node.id} [label="{name}\\n{detail}", style="{",".join(style)}", fillcolor="{colour}"{width}];')
    out += [f'  n{n.parent} -> n{n.id} [label="ρ={n.rank}"];' for n in evolution.tree.nodes if n.parent is not None]
    runs = [s for s in evolution.steps if s.kind == "run"]
    out += [f'  n{before.node} -> n{after.node} [style=dashed, color=red, constraint=false, label="jump", '
            'fontcolor=red];'
            for before, after in itertools.pairwise(runs) if after.jump]
    return "\n".join(out) + "\n}\n"


def write_evolution(evolution: Evolution, folder: Path) -> Diagnostic | None:
    """Write evolved.skm (and SKILL.md), tree.json, report.md and tree.dot into `folder`; SKM901 when one fails."""
    best = evolution.best
    files: list[tuple[str, str]] = [("evolved.skm", best.machine)]
    if best.skill is not None:
        files.append(("SKILL.md", best.skill))
    files += [("tree.json", json.dumps(evolution_json(evolution), indent=2, ensure_ascii=False) + "\n"),
              ("report.md", evolution_markdown(evolution)), ("tree.dot", evolution_dot(evolution))]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in files:
            write_output(folder / name, text)
    except (FileProblem, OSError) as exc:
        return make(diagnostics_codes.IO_ERROR, str(exc))
    return None
