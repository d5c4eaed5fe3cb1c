"""The skill folder as the request shows it: front matter and `allow`, files, scripts' usage (read, never run)."""

from __future__ import annotations

from pathlib import Path

from skillc.frontends.markdown.document import read_document
from skillc.frontends.markdown.folder import describe, read_folder, reference_title, script_usage

SKILL = """---
name: fix-ci
description: Fix failing CI checks.
allowed-tools: Read, Bash(gh pr checks:*), WebSearch
license: MIT
---

# Fix CI

1. Inspect the checks with `python3 scripts/inspect.py --pr <number>`.
"""

PY = '''"""Inspect failing checks.

Usage:
    inspect.py --pr PR [--json]
"""
import argparse
import sys

sys.exit("ran!")  # never reached: the file is parsed, not run

def main():
    p = argparse.ArgumentParser(description="Inspect failing GitHub checks.")
    p.add_argument("--pr", required=True, help="PR number or URL")
    p.add_argument("--json", action="store_true", help="Emit JSON.")
    p.add_argument("--mode", choices=["fast", "full"], default="fast")
'''

SH = """#!/usr/bin/env bash
# Run every scan and merge the results.
# Writes OUT/merged.sarif.
set -euo pipefail

usage() {
  cat <<'USAGE'
Usage: scan.sh --target DIR --out DIR

  --target DIR   the tree to scan
  --out DIR      where results go
USAGE
}
"""


def folder(tmp_path: Path) -> Path:
    root = tmp_path / "fix-ci"
    (root / "scripts").mkdir(parents=True)
    (root / "references").mkdir()
    (root / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (root / "scripts" / "inspect.py").write_text(PY, encoding="utf-8")
    (root / "scripts" / "scan.sh").write_text(SH, encoding="utf-8")
    (root / "scripts" / "test_inspect.py").write_text("def test_x(): pass\n", encoding="utf-8")
    (root / "references" / "logs.md").write_text("---\ntitle: x\n---\n\n# Reading CI logs\n\nText.\n",
                                                 encoding="utf-8")
    (root / "README.md").write_text("# About\n", encoding="utf-8")
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "x.pyc").write_bytes(b"\0")
    return root


def test_the_folder_description(tmp_path: Path) -> None:
    root = folder(tmp_path)
    doc, _ = read_document(root / "SKILL.md")
    f = read_folder(root / "SKILL.md", doc.front)
    assert f.files == ("README.md", "SKILL.md", "references/logs.md", "scripts/inspect.py", "scripts/scan.sh",
                       "scripts/test_inspect.py")
    assert [s.path for s in f.scripts] == ["scripts/inspect.py", "scripts/scan.sh"]  # tests are not tools
    assert [(r.path, r.title) for r in f.references] == [("references/logs.md", "Reading CI logs")]
    text = describe(f)
    assert 'becomes `allow "Read", "Bash(gh pr checks:*)", "WebSearch"`; kit tools: bash, read.' in text
    assert "No skillc implementation: WebSearch" in text and "- license: MIT" in text
    assert '`"python3 " ++ quote(skill_dir ++ "/scripts/inspect.py") ++ …`' in text
    assert '`"bash " ++ quote(skill_dir ++ "/scripts/scan.sh") ++ …`' in text


def test_a_folder_that_vendors_hundreds_of_documents_is_described_within_bounds(tmp_path: Path) -> None:
    """A folder holding a vendored package or a documentation set (hundreds of `.md` and `.py` files) would put all
    of them into every request: the description keeps the references and scripts SKILL.md names, then the
    shallowest, and counts the rest."""
    root = folder(tmp_path)
    (root / "SKILL.md").write_text(SKILL + "2. Read `docs/api/deep/orders.md` for the order fields.\n",
                                   encoding="utf-8")
    for i in range(300):
        page = root / "docs" / "api" / "deep" / f"page{i:03}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f"# Page {i}\n\nText.\n", encoding="utf-8")
        (root / "lib" / f"mod{i:03}.py").parent.mkdir(exist_ok=True)
        (root / "lib" / f"mod{i:03}.py").write_text('"""A module."""\n', encoding="utf-8")
    (root / "docs" / "api" / "deep" / "orders.md").write_text("# Orders\n\nFields.\n", encoding="utf-8")
    doc, _ = read_document(root / "SKILL.md")
    f = read_folder(root / "SKILL.md", doc.front)
    assert len(f.references) == 302 and len(f.scripts) == 302  # all found; the description is what is bounded
    text = describe(f)
    assert len(text) < 20_000
    assert '- docs/api/deep/orders.md: "Orders"' in text  # named by SKILL.md, deep as it is
    assert '- references/logs.md: "Reading CI logs"' in text  # shallow
    assert "- … and 242 more markdown files, not described here" in text
    assert "scripts/inspect.py" in text and "- … and 262 more scripts, not described here" in text


def test_python_usage_is_read_with_ast_not_run(tmp_path: Path) -> None:
    root = folder(tmp_path)
    usage = script_usage(root / "scripts" / "inspect.py")
    assert usage is not None and usage.interpreter == "python3"
    lines = usage.usage.splitlines()
    assert lines[0] == "Inspect failing checks." and "    inspect.py --pr PR [--json]" in lines
    assert "description: Inspect failing GitHub checks." in lines
    assert "  --pr (required) — PR number or URL" in lines and "  --json (flag) — Emit JSON." in lines
    assert "  --mode {fast,full} (default 'fast')" in lines


def test_shell_usage_is_the_comment_block_and_the_usage_text(tmp_path: Path) -> None:
    root = folder(tmp_path)
    usage = script_usage(root / "scripts" / "scan.sh")
    assert usage is not None and usage.interpreter == "bash"
    assert usage.usage.splitlines() == [
        "Run every scan and merge the results.", "Writes OUT/merged.sarif.", "Usage: scan.sh --target DIR --out DIR",
        "", "  --target DIR   the tree to scan", "  --out DIR      where results go"]


def test_a_script_that_does_not_parse_still_gives_its_usage_line(tmp_path: Path) -> None:
    p = tmp_path / "broken.py"
    p.write_text("print('usage: broken.py FILE')\ndef (:\n", encoding="utf-8")
    usage = script_usage(p)
    assert usage is not None and usage.usage == "usage: broken.py FILE')"[:-2]


def test_reference_titles(tmp_path: Path) -> None:
    p = tmp_path / "r.md"
    p.write_text("No heading here\n\nbody\n", encoding="utf-8")
    assert reference_title(p) == ("No heading here", 3)
