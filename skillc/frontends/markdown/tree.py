"""ASCII decision trees drawn in code fences ("├─ Yes → …").

A tree is a question on its first line and branches below it; each branch
is `LABEL → TEXT`. A branch with branches of its own asks TEXT as the next
question (or performs TEXT and then looks at its outcome); a branch without
children is a leaf action.
"""

from __future__ import annotations

import re

import attrs

_GLYPH = re.compile(r"[├└]|\|--|\+--|`--")
_ARROW = re.compile(r"\s*(?:→|->|=>|⇒)\s*")


@attrs.define
class TreeNode:
    """A question or action with the labelled branches below it; `line` is 0-based inside the fence."""

    text: str
    line: int
    label: str = ""
    children: list[TreeNode] = attrs.field(factory=list)


def parse_tree(text: str) -> TreeNode | None:
    """The tree drawn in a fence, or None when the text does not have the shape of one."""
    lines = text.split("\n")
    root: TreeNode | None = None
    stack: list[tuple[int, TreeNode]] = []
    for i, raw in enumerate(lines):
        if not raw.strip():
            continue
        m = _GLYPH.search(raw)
        if m is None:
            if root is None:
                root = TreeNode(raw.strip(), i)
                stack = [(-1, root)]
            elif stack and stack[-1][1].children == [] and stack[-1][1] is not root:
                stack[-1][1].text += " " + raw.strip().lstrip("│| ").strip()  # a wrapped line
            continue
        if root is None:
            return None
        column = m.start()
        content = raw[m.end():].lstrip("─-— ").strip()
        parts = _ARROW.split(content, maxsplit=1)
        if len(parts) == 2:
            label, body = parts
        elif ":" in content:
            label, body = (p.strip() for p in content.split(":", 1))
        else:
            label, body = content, ""
        while stack and stack[-1][0] >= column:
            stack.pop()
        if not stack:
            return None
        node = TreeNode(body or label, i, label=label.strip())
        stack[-1][1].children.append(node)
        stack.append((column, node))
    if root is None or not root.children:
        return None
    return root
