"""Quote provenance: every rule's quotation occurs in the skill document.

The document is `--skill PATH`, else the machine's `source`, relative to the
machine file. Both texts are normalised (markdown emphasis, code ticks, links,
list markers and runs of whitespace removed) before searching. Rejected
(SKM223): a quotation that does not occur, with the nearest passage and its
line. A declared source that cannot be read is SKM224. Rules brought in by a
fragment quote the fragment, not the skill, and are skipped.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from pathlib import Path

from skillc.check.context import CheckContext
from skillc.diagnostics import Diagnostic, make
from skillc.ir.machine import Machine

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"\*\*|__|\*|(?<![\w])_|_(?![\w])|`|~~")
_MARKER = re.compile(r"^\s*(?:[-*+>]|\d+[.)]|#+)\s+", re.M)
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Text with markdown decoration and layout removed, for verbatim comparison."""
    text = _LINK.sub(r"\1", text)
    text = _MARKER.sub("", text)
    text = _EMPHASIS.sub("", text)
    text = text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
    return _SPACE.sub(" ", text).strip()


def skill_document(m: Machine, context: CheckContext | None) -> Path | None:
    """The document rules are checked against, or None when the machine names none."""
    if context is not None and context.skill is not None:
        return context.skill
    if m.source and m.path:
        return Path(m.path).parent / m.source
    return None


def nearest_passage(quote: str, lines: list[str]) -> tuple[int, str, float]:
    """The 1–3 line window of the document most similar to the quotation: (line, text, ratio)."""
    target = normalise(quote)
    best = (1, "", 0.0)
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for i in range(len(lines)):
        if not lines[i].strip():
            continue  # a passage starts on a line with text
        for width in (1, 2, 3):
            window = normalise(" ".join(lines[i : i + width]))
            if not window:
                continue
            matcher.set_seq1(window)
            if matcher.real_quick_ratio() <= best[2] or matcher.quick_ratio() <= best[2]:
                continue
            ratio = matcher.ratio()
            if ratio > best[2]:
                best = (i + 1, window, ratio)
    return best


def check_quotes(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Each rule's quotation occurs verbatim (modulo markdown) in the skill document."""
    own = [r for r in m.rules if not r.from_fragment]
    doc = skill_document(m, context)
    if doc is None or not own:
        return
    try:
        text = doc.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        yield make("SKM224", f"cannot read the skill document {doc}: {getattr(exc, 'strerror', None) or exc}",
                   m.span, label="quotations not checked",
                   hint="pass `--skill PATH`, or fix `source` in the machine")
        return
    haystack = normalise(text)
    lines = text.splitlines()
    for rule in own:
        if normalise(rule.quote) in haystack:
            continue
        line, passage, ratio = nearest_passage(rule.quote, lines)
        notes = [f"nearest passage ({doc.name}:{line}, {ratio:.0%} similar): {passage}"] if passage else []
        yield make("SKM223", f"the quotation of this rule does not occur in {doc.name}", rule.span,
                   label="not found in the skill", notes=notes,
                   hint="quote the sentence exactly as the skill writes it")
