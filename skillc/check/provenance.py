"""Quote provenance: every rule's quotation occurs in the skill document.

The document is `--skill PATH`, else the machine's `source`, relative to the
machine file. Both texts are normalised (markdown emphasis, code ticks, links,
list markers and runs of whitespace removed) before searching. Rejected
(SKM223): a quotation that does not occur, with the nearest passage and its
line. A quotation of fewer than `quote-min-words` words (default 3) is SKM225:
any short text occurs somewhere. A declared source that cannot be read is
SKM224. Rules of fragments defined in the machine's own file are checked too
(once each); rules of imported fragments quote the fragment and are skipped.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from pathlib import Path

from skillc.check import codes
from skillc.check.context import DEFAULT_QUOTE_MIN_WORDS, CheckContext
from skillc.diagnostics import Diagnostic, make
from skillc.ir.machine import Machine, Rule

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"\*\*|__|\*|(?<![\w])_|_(?![\w])|`|~~")
_MARKER = re.compile(r"^\s*(?:[-*+>]|#+)\s+")
_ORDERED = re.compile(r"^\s*(\d{1,9})[.)](?:\s+|$)")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")


def _strip_markers(text: str) -> str:
    """Remove the block markers (bullets, `1.`, `>`, `#`) that open a line, as CommonMark reads them.

    An ordered item may interrupt a paragraph only when it starts at 1 (CommonMark 5.2),
    so a hard-wrapped line such as `100. items a day` inside a paragraph is text. Inside
    a list, a numbered line opens the next item whatever its number.
    """
    out = []
    paragraph = in_list = False
    for line in text.split("\n"):
        if not line.strip():
            paragraph = False
            out.append(line)
            continue
        bullet = _MARKER.match(line)
        ordered = _ORDERED.match(line)
        if bullet:
            in_list = not bullet.group(0).strip().startswith(("#", ">"))
            line = line[bullet.end():]
        elif ordered and (not paragraph or in_list or int(ordered.group(1)) == 1):
            in_list = True
            line = line[ordered.end():]
        elif not paragraph:
            in_list = False
        paragraph = not (bullet and bullet.group(0).strip().startswith("#"))  # a heading is one line
        out.append(line)
    return "\n".join(out)


def normalise(text: str) -> str:
    """Text with markdown decoration and layout removed, for verbatim comparison."""
    text = _LINK.sub(r"\1", text)
    text = _strip_markers(text)
    text = _EMPHASIS.sub("", text)
    text = text.replace("\u2019", "'").replace("\u201c", '"').replace("\u201d", '"')
    return _SPACE.sub(" ", text).strip()


def skill_document(m: Machine, context: CheckContext | None) -> Path | None:
    """The document rules are checked against, or None when the machine names none."""
    if context is not None and context.skill is not None:
        return context.skill
    return m.source_path


def _outside_root(doc: Path, context: CheckContext | None) -> Path | None:
    """The root a machine's `source` document escapes (symlinks followed), or None when it may be read."""
    if context is None or context.root is None or context.skill is not None:
        return None
    try:
        root = context.root.resolve()
        inside = doc.resolve().is_relative_to(root)
    except (OSError, RuntimeError, ValueError):  # a symlink loop or a NUL byte: reading it says what is wrong
        return None
    return None if inside else root


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


def _own_rules(m: Machine) -> list[Rule]:
    """The rules whose quotations come from the machine's skill: its own, and those of fragments defined
    in the machine's file (each once, however many instances copy it). Imported fragments quote their own text."""
    here = m.span.source if m.span is not None else None
    out: dict[object, Rule] = {}
    for r in m.rules:
        if not r.from_fragment:
            out[id(r)] = r
        elif here is not None and r.span is not None and r.span.source is here:
            out.setdefault((r.span.start, r.span.end), r)
    return list(out.values())


def check_quotes(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Each rule's quotation is a meaningful span that occurs verbatim (modulo markdown) in the skill document."""
    own = _own_rules(m)
    doc = skill_document(m, context)
    if doc is None or not own:
        return
    outside = _outside_root(doc, context)
    if outside is not None:
        yield make(codes.SKILL_DOCUMENT_UNREADABLE, f"the skill document {doc} is outside {outside}: it is not read",
                   m.source_span or m.span, label="quotations not checked",
                   hint="keep the skill document inside the project (or the editor's workspace), or pass "
                   "`--skill PATH`")
        return
    try:
        text = doc.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        named_here = context is None or context.skill is None  # else `--skill PATH` named it
        yield make(codes.SKILL_DOCUMENT_UNREADABLE,
                   f"cannot read the skill document {doc}: {getattr(exc, 'strerror', None) or exc}",
                   (m.source_span if named_here else None) or m.span, label="quotations not checked",
                   hint="pass `--skill PATH`, or fix `source` in the machine")
        return
    haystack = normalise(text)
    lines = text.splitlines()
    least = context.quote_min_words if context is not None else DEFAULT_QUOTE_MIN_WORDS
    for rule in own:
        words = len(_WORD.findall(normalise(rule.quote)))
        if words < least:
            yield make(codes.QUOTATION_TOO_SHORT,
                       f"the quotation of this rule has {words} word{'s' if words != 1 else ''}; "
                       f"a quotation needs at least {least}", rule.span, label="too short to locate",
                       hint="quote the whole sentence the rule encodes (or set `quote-min-words`)")
            continue
        if normalise(rule.quote) in haystack:
            continue
        line, passage, ratio = nearest_passage(rule.quote, lines)
        notes = [f"nearest passage ({doc.name}:{line}, {ratio:.0%} similar): {passage}"] if passage else []
        yield make(codes.QUOTATION_NOT_FOUND, f"the quotation of this rule does not occur in {doc.name}", rule.span,
                   label="not found in the skill", notes=notes,
                   hint="quote the sentence exactly as the skill writes it")
