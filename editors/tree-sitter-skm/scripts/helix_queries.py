"""Write queries/helix/highlights.scm from queries/highlights.scm: the same patterns, Helix's scope names.

Neovim (nvim-treesitter) and Zed read the capture names of queries/highlights.scm; Helix themes know other
names for some of them (`@number` is `constant.numeric.integer` there). Run after editing the queries:

    python editors/tree-sitter-skm/scripts/helix_queries.py

tests/editors/test_tree_sitter.py fails while the Helix file differs from what this writes.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SOURCE = HERE / "queries" / "highlights.scm"
TARGET = HERE / "queries" / "helix" / "highlights.scm"

#: nvim-treesitter capture → Helix scope (names not listed stay as they are; None drops the capture).
HELIX: dict[str, str | None] = {
    "keyword.conditional": "keyword.control.conditional",
    "variable.member": "variable.other.member",
    "module": "namespace",
    "function.call": "function",
    "boolean": "constant.builtin.boolean",
    "number": "constant.numeric.integer",
    "number.float": "constant.numeric.float",
    "string.escape": "constant.character.escape",
    "string.documentation": "string",
    "spell": None,
}

HEADER = ("; Generated from ../highlights.scm by scripts/helix_queries.py with Helix's scope names: "
          "edit that file, then run the script.\n")


def helix_text(text: str) -> str:
    """The Helix version of a highlights query in nvim-treesitter names."""
    def rename(match: re.Match[str]) -> str:
        space, name = match.group(1), match.group(2)
        if name not in HELIX:
            return match.group(0)
        new = HELIX[name]
        return "" if new is None else f"{space}@{new}"

    lines = text.splitlines(keepends=True)
    body = "".join(lines[1:] if lines and lines[0].startswith(";") else lines)
    body = re.sub(r"( ?)@([A-Za-z_][\w.]*)(?![\w.])", rename, body)
    return HEADER + body


def main() -> int:
    TARGET.parent.mkdir(exist_ok=True)
    TARGET.write_text(helix_text(SOURCE.read_text(encoding="utf-8")), encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
