"""Flow diagrams drawn in a skill document: ```dot digraphs and ```mermaid flowcharts as nodes and edges.

`parse_diagram` reads the fence's text into a `Diagram`: each node with its label, its line in the fence and
whether it is drawn as a decision (a mermaid `{…}`, a dot `shape=diamond`), and each edge with its label
(`A -->|more screens| A`, `a -> b [label="yes"]`). The graph phase maps the nodes to the states of the steps
they name and adds the edges the document order does not already have. Pure functions of text.
"""

from __future__ import annotations

import re

import attrs


@attrs.frozen
class Node:
    """A node of a diagram: its id, label, line (0-based, in the fence) and whether it is a decision."""

    id: str
    label: str
    line: int
    decision: bool = False


@attrs.frozen
class Arrow:
    """An edge of a diagram, with its label ('' when none) and line (0-based, in the fence)."""

    source: str
    target: str
    label: str
    line: int


@attrs.frozen
class Diagram:
    """The nodes and edges of a flow diagram."""

    nodes: dict[str, Node]
    arrows: tuple[Arrow, ...]


def is_diagram(info: str, text: str) -> bool:
    """A fence that draws a flow diagram: ```dot / ```graphviz / ```mermaid flowchart, or text that says so."""
    head = text.lstrip().split("\n", 1)[0].strip().lower()
    if info in ("dot", "graphviz", "gv"):
        return True
    if info == "mermaid" or not info:
        return bool(re.match(r"^(?:flowchart|graph)\b", head)) or bool(re.match(r"^(?:strict\s+)?digraph\b", head))
    return False


def parse_diagram(info: str, text: str) -> Diagram | None:
    """The diagram a fence draws, or None when it draws none (or nothing this module reads)."""
    head = text.lstrip().split("\n", 1)[0].strip().lower()
    if info in ("dot", "graphviz", "gv") or re.match(r"^(?:strict\s+)?digraph\b", head):
        return _dot(text)
    if re.match(r"^(?:flowchart|graph)\b", head):
        return _mermaid(text)
    return None


# ------------------------------------------------------------------ mermaid

_MERMAID_NODE = re.compile(r"([A-Za-z_][\w-]*)\s*(\(\[|\[\[|\[\(|\(\(|\[|\(|\{\{|\{|>)(.*?)"
                           r"(\]\)|\]\]|\)\]|\)\)|\]|\)|\}\}|\})")
_MERMAID_ARROW = re.compile(r"\s*(?:--\s*([^-|>][^>]*?)\s*-->|-->\s*\|([^|]*)\||-\.->|==>|-->|---|-\.-)\s*"
                            r"(?:\|([^|]*)\|)?\s*")


def _clean(label: str) -> str:
    """A label without quotes, HTML line breaks and markup."""
    label = re.sub(r"<br\s*/?>", " ", label.strip().strip('"'))
    return re.sub(r"\s+", " ", re.sub(r"[*_`]", "", label)).strip()


def _mermaid(text: str) -> Diagram:
    nodes: dict[str, Node] = {}
    arrows: list[Arrow] = []
    for i, raw in enumerate(text.split("\n")):
        line = raw.split("%%")[0].strip().rstrip(";")
        if not line or re.match(r"^(?:flowchart|graph|subgraph|end|classDef|class|style|linkStyle|click)\b", line):
            continue
        # Split on arrows, keeping their labels.
        pieces, labels, pos = [], [], 0
        for m in _MERMAID_ARROW.finditer(line):
            if not line[pos:m.start()].strip():
                continue
            pieces.append(line[pos:m.start()])
            labels.append(_clean(m.group(1) or m.group(2) or m.group(3) or ""))
            pos = m.end()
        pieces.append(line[pos:])
        ids = []
        for piece in pieces:
            piece = piece.strip()
            node = _MERMAID_NODE.match(piece)
            if node is not None:
                m = node
                nid, opening = m.group(1), m.group(2)
                if nid not in nodes or not nodes[nid].label:
                    nodes[nid] = Node(nid, _clean(m.group(3)), i, opening in ("{", "{{"))
            else:
                nid = re.split(r"[\s&]", piece, maxsplit=1)[0] if piece else ""
                if nid and nid not in nodes:
                    nodes[nid] = Node(nid, nid, i)
            ids.append(nid)
        for k in range(len(ids) - 1):
            if ids[k] and ids[k + 1]:
                arrows.append(Arrow(ids[k], ids[k + 1], labels[k] if k < len(labels) else "", i))
    return Diagram(nodes, tuple(arrows))


# ------------------------------------------------------------------ dot

_DOT_ID = r'(?:"((?:[^"\\]|\\.)*)"|([A-Za-z_][\w.]*))'
_DOT_EDGE = re.compile(_DOT_ID + r"\s*->\s*" + _DOT_ID + r"\s*(?:\[([^\]]*)\])?")
_DOT_NODE = re.compile(r"^\s*" + _DOT_ID + r"\s*\[([^\]]*)\]")


def _attr(attrs_text: str, name: str) -> str:
    m = re.search(name + r'\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([\w.]+))', attrs_text or "")
    return (m.group(1) if m and m.group(1) is not None else m.group(2) if m else "") or ""


def _dot(text: str) -> Diagram:
    nodes: dict[str, Node] = {}
    arrows: list[Arrow] = []
    for i, raw in enumerate(text.split("\n")):
        line = re.sub(r"//.*$|#.*$", "", raw)
        if "->" in line:
            chain = [m for m in _DOT_EDGE.finditer(line)]
            for m in chain:
                a = m.group(1) if m.group(1) is not None else m.group(2)
                b = m.group(3) if m.group(3) is not None else m.group(4)
                for nid in (a, b):
                    nodes.setdefault(nid, Node(nid, _clean(nid), i))
                arrows.append(Arrow(a, b, _clean(_attr(m.group(5) or "", "label")), i))
            continue
        decl = _DOT_NODE.match(line)
        if decl is not None:
            m = decl
            nid = m.group(1) if m.group(1) is not None else m.group(2)
            if nid in ("node", "edge", "graph"):
                continue
            label = _clean(_attr(m.group(3), "label")) or _clean(nid)
            nodes[nid] = Node(nid, label, i, _attr(m.group(3), "shape") == "diamond")
    return Diagram(nodes, tuple(arrows))


__all__ = ["Arrow", "Diagram", "Node", "is_diagram", "parse_diagram"]
