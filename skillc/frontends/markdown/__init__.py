"""The markdown front end: `skillc build SKILL.md -o skill.skm`.

Pipeline (one module per stage): `document` (bytes → markdown blocks) →
`clauses` (sentences, classified) → `structural` (offline draft) →
optionally `llm` (rules with verbatim quotes, JSON drafts, redrafting from the
checker) → the project checker → `report` (where each clause landed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillc.lazy import exports

# The pipeline lives in `pipeline.py` and loads on first use, so that importing a submodule
# (`skillc.frontends.markdown.codes`, read by `skillc.registry`) does not load the whole front end.
_NAMES = (
    "BuildResult", "Options", "build", "Draft", "RULE_CODES", "check_text", "rule_head", "rule_report",
    "source_name", "structural_draft", "Clause", "extract_clauses", "MAX_BYTES", "Document", "read_document", "Row",
    "RuleReport", "coverage", "landings", "KNOWN_TOOLS", "compile_document", "Machine", "print_module", "Diagnostic",
    "make", "HasDiagnostics",
)
__getattr__ = exports(__name__, dict.fromkeys(_NAMES, "skillc.frontends.markdown.pipeline"))

if TYPE_CHECKING:
    from skillc.frontends.markdown.pipeline import BuildResult, Options, build
    from skillc.frontends.markdown.pipeline import Draft as Draft
    from skillc.frontends.markdown.pipeline import check_text as check_text
    from skillc.frontends.markdown.pipeline import source_name as source_name

__all__ = ["BuildResult", "Options", "build"]
