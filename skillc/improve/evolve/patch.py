"""Evolve's revisions: a `Patch` (skillc.improve.edits, the one machine-edit language) of machine edits, or of
SKILL.md edits followed by a build.

Machine edits are applied to the parent's parsed `.skm` syntax tree and printed (`edits.edit_text`); SKILL.md
edits (`SkillEdit`: `find` must occur exactly once) are applied to the parent's SKILL.md, then the offline
structural `skillc build` (skillc.frontends.markdown) of the patched document gives the machine; the patched
SKILL.md is kept. `apply_patch` answers the new (machine, SKILL.md) or raises PatchError naming the edit that
does not apply; the loop then refuses the child like the gate does (it never costs an execution).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import attrs

from skillc.frontends.markdown.pipeline import build
from skillc.improve.edits import Patch, PatchError, edit_text, refuse_nul


def apply_patch(machine: str, skill: str | None, patch: Patch) -> tuple[str, str | None]:
    """The patched version (machine text, SKILL.md); PatchError when an edit does not apply or the build fails."""
    if patch.machine and patch.skill:
        raise PatchError("a patch edits the machine or the SKILL.md, not both")
    refuse_nul("edit", [attrs.asdict(e) for e in patch.machine])
    refuse_nul("SKILL.md edit", [attrs.asdict(e) for e in patch.skill])
    if patch.skill:
        if skill is None:
            raise PatchError("a SKILL.md patch needs a parent with a SKILL.md")
        text = skill
        for i, change in enumerate(patch.skill):
            count = text.count(change.find) if change.find else 0
            if count != 1:
                raise PatchError(f"SKILL.md edit {i}: `find` occurs {count} times (it must occur once)")
            text = text.replace(change.find, change.replace)
        return build_skill(text), text
    return edit_text(machine, patch.machine), skill


def build_skill(text: str) -> str:
    """The machine the offline structural `skillc build` makes of a SKILL.md text; PatchError when it fails."""
    with tempfile.TemporaryDirectory(prefix="skillc-evolve-") as folder:
        path = Path(folder) / "SKILL.md"
        path.write_text(text, encoding="utf-8")
        result = build(path, output=Path(folder) / "SKILL.skm")  # `source "SKILL.md"`: the machine sits beside it
    if result.text is None:
        first = next((d for d in result.diagnostics if d.is_error), None)
        raise PatchError("the patched SKILL.md does not build" + (f" ({first.code}: {first.message})" if first else ""))
    return result.text
