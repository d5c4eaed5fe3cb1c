"""Edits that cannot change what the checker finds, only where: the fast path of the language server.

An edit of a document is *trivia* when the tokens outside comments, whitespace and prompt text stay the
same, so the parse has the same shape and the lowering and every check see the same machine. Then the
last findings, with the positions after the edit moved, are exactly those of a full check (a Hypothesis
property test over random edits of the example machines compares the two). Three kinds, each decided from
the text before the edit (which parsed) and the edited region:

- `comment`: inside one `#` comment, after its `#`, adding no line break. Not a comment inside a statement
  that spans lines (`reads a, # …` then `b`) or in a block's header (`model x # … {`): lowering finds some
  spans by searching the text (a name in a `reads` list, the `{` that ends a header), so a comment there
  could move one.
- `prompt`: inside the text of one `prompt "…"`/`prompt \"\"\"…\"\"\"` literal, which stays one literal of the same
  kind, non-empty, with valid escapes. No check reads prompt text (a test guards this), only whether there is
  a prompt.
- `gap`: inside or at the edge of a run of whitespace and comments between tokens, which stays such a run:
  non-empty, no comment running into the token after it (a comment added or removed, a line break, an
  indent). A comment added or removed inside a statement or a block's header is not trivia (see above).

Anything else, or any finding whose span touches the edited region, falls back to a full check.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence

import attrs

from skillc.diagnostics import Diagnostic, SourceFile, Span
from skillc.diagnostics.source import Edit
from skillc.syntax import nodes as n
from skillc.syntax.strings import decode_plain, decode_triple

_TRIPLE = re.compile(r'"""(?:[^"]|"(?!""))*"""')
_STRING = re.compile(r'"(?:[^"\\\n\r]|\\.)*"')
_TOKENS = re.compile(r'(""")(?:[^"]|"(?!""))*"""|"(?:[^"\\\n\r]|\\.)*"|#[^\n]*')
_SPACE = " \t\f\r\n"
_COMMENT = re.compile(r"#[^\n]*")
_GAP = re.compile(r"(?:[ \t\f\r\n]+|#[^\n]*)*")


def _shift_points(points: list[int], edit: Edit, *, ends: bool) -> list[int]:
    """Sorted token starts (or ends) after a trivia edit."""
    i = bisect.bisect_right(points, edit.start) if ends else bisect.bisect_left(points, edit.old_end)
    d = edit.delta
    return points[:i] + [p + d for p in points[i:]]


@attrs.frozen(repr=False)
class Layout:
    """Where the strings, comments, statements and prompt literals of one text are."""

    text: str
    tok_starts: list[int]  # strings and comments, in order
    tok_ends: list[int]
    tok_kinds: list[str]  # "#", '"' or '"""'
    unsafe_starts: list[int]  # statements that are not blocks, and block headers: merged, in order
    unsafe_ends: list[int]
    prompts: list[int]  # starts of the prompt literals, in order

    @classmethod
    def build(cls, text: str, module: n.Module) -> Layout:
        starts, ends, kinds = [], [], []
        for m in _TOKENS.finditer(text):
            starts.append(m.start())
            ends.append(m.end())
            kinds.append('"""' if m.group(1) else m.group(0)[0])
        unsafe: list[tuple[int, int]] = []
        prompt_ends: list[int] = []

        def visit(stmt: n.Stmt) -> None:
            span = stmt.span
            if span is None:
                return
            if isinstance(stmt, n.Block):
                brace = text.find("{", span.start, span.end)
                unsafe.append((span.start, brace if brace != -1 else span.end))
                for item in stmt.body:
                    visit(item)
                return
            unsafe.append((span.start, span.end))
            if isinstance(stmt, n.Prompt):
                prompt_ends.append(span.end)

        for item in module.items:
            visit(item)
        unsafe.sort()
        merged: list[list[int]] = []
        for s, e in unsafe:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        prompts = []
        for end in sorted(prompt_ends):
            i = bisect.bisect_left(ends, end)
            if i < len(ends) and ends[i] == end and kinds[i] != "#":
                prompts.append(starts[i])
        return cls(text, starts, ends, kinds, [m[0] for m in merged], [m[1] for m in merged], prompts)

    def shifted(self, new_text: str, edit: Edit, gap: tuple[int, int] | None = None) -> Layout:
        """The layout of the text after a trivia edit (the comments of a replaced `gap` lexed again)."""
        starts = _shift_points(self.tok_starts, edit, ends=False)
        ends = _shift_points(self.tok_ends, edit, ends=True)
        kinds = list(self.tok_kinds)
        if gap is not None:
            g0, g1 = gap
            i = bisect.bisect_left(self.tok_starts, g0)
            j = bisect.bisect_left(self.tok_starts, g1)
            found = [(m.start(), m.end()) for m in _COMMENT.finditer(new_text, g0, g1 + edit.delta)]
            starts[i:j] = [x for x, _ in found]
            ends[i:j] = [y for _, y in found]
            kinds[i:j] = ["#"] * len(found)
        return Layout(new_text, starts, ends, kinds,
                      _shift_points(self.unsafe_starts, edit, ends=False),
                      _shift_points(self.unsafe_ends, edit, ends=True),
                      _shift_points(self.prompts, edit, ends=False))

    def _token(self, offset: int) -> int | None:
        """The string or comment with start < offset <= end."""
        i = bisect.bisect_left(self.tok_starts, offset) - 1
        if i >= 0 and self.tok_ends[i] >= offset:
            return i
        return None

    def _in_unsafe(self, offset: int) -> bool:
        i = bisect.bisect_right(self.unsafe_starts, offset) - 1
        return i >= 0 and self.unsafe_starts[i] < offset < self.unsafe_ends[i]

    def _is_prompt(self, start: int) -> bool:
        i = bisect.bisect_left(self.prompts, start)
        return i < len(self.prompts) and self.prompts[i] == start

    def _left(self, pos: int) -> int:
        """The start of the run of whitespace and comments that ends at `pos`."""
        text = self.text
        while True:
            while pos > 0 and text[pos - 1] in _SPACE:
                pos -= 1
            i = bisect.bisect_left(self.tok_starts, pos) - 1
            if i >= 0 and self.tok_kinds[i] == "#" and self.tok_ends[i] >= pos:
                pos = self.tok_starts[i]
                continue
            return pos

    def _right(self, pos: int) -> int:
        """The end of the run of whitespace and comments that starts at `pos`."""
        text = self.text
        while True:
            while pos < len(text) and text[pos] in _SPACE:
                pos += 1
            i = bisect.bisect_left(self.tok_starts, pos)
            if i < len(self.tok_starts) and self.tok_starts[i] == pos and self.tok_kinds[i] == "#":
                pos = self.tok_ends[i]
                continue
            return pos

    def classify(self, new: str, edit: Edit) -> Trivia | None:
        """How the edit is trivia (the region of the old text findings must not touch, the new layout); None
        when it may change what the checker finds."""
        old = self.text
        a, b = edit.start, edit.old_end
        inserted = new[a:edit.new_end]
        i = self._token(a) if a > 0 else None
        if i is not None and a < self.tok_ends[i]:
            s, e, kind = self.tok_starts[i], self.tok_ends[i], self.tok_kinds[i]
            if kind == "#":  # inside one comment, after its `#`
                if b <= e and "\n" not in inserted and not self._in_unsafe(s):
                    return Trivia("comment", s, e, True, self.shifted(new, edit))
                return None
            q = len(kind)  # inside a string: only the text of a prompt
            if not (s + q <= a and b <= e - q) or not self._is_prompt(s):
                return None
            end = e + edit.delta
            lexed = _TRIPLE.match(new, s)
            if q == 1 and lexed is None:
                lexed = _STRING.match(new, s)
            elif q == 1:
                return None  # `"` became `"""`: another kind of token
            if lexed is None or lexed.end() != end:
                return None
            if not (_value(old[s + q:e - q], q) and _value(new[s + q:end - q], q)):
                return None
            return Trivia("prompt", s + q, e - q, True, self.shifted(new, edit))
        # Between tokens: the run of whitespace and comments around the edit stays such a run.
        g0, g1 = self._left(a), self._right(a)
        if b > g1 or g0 == g1:
            return None  # the edit reaches a token, or there is no run here (inserting may split a token)
        gap = new[g0:g1 + edit.delta]
        if not _GAP.fullmatch(gap):
            return None
        if not gap and g0 > 0 and g1 < len(old):
            return None  # two tokens would touch
        if "#" in gap[gap.rfind("\n") + 1:] and g1 < len(old):
            return None  # a comment would swallow the token after it
        if ("#" in gap or "#" in old[g0:g1]) and self._in_unsafe(g0):
            return None  # a comment inside a statement or a block's header
        return Trivia("gap", g0, g1, False, self.shifted(new, edit, (g0, g1)))


@attrs.frozen(repr=False)
class Trivia:
    """A trivia edit: its kind, the region of the old text findings must not touch (`closed`: its edges
    included), and the layout of the new text."""

    kind: str  # "comment", "prompt" or "gap"
    lo: int
    hi: int
    closed: bool
    layout: Layout


def _value(body: str, q: int) -> bool:
    """A literal's text decodes to a non-empty value without bad escapes."""
    if q == 3:
        return bool(decode_triple(body))
    value, bad = decode_plain(body)
    return bool(value) and not bad


def shift_diagnostics(diagnostics: Sequence[Diagnostic], path: str, source: SourceFile, edit: Edit,
                      region: tuple[int, int], closed: bool = True) -> list[Diagnostic] | None:
    """The findings moved through a trivia edit to `source` (the new text); None when one touches `region`
    (an end of a span inside it, or on its edge when `closed`: a comment or a literal's text)."""
    lo, hi = region

    def inside(offset: int) -> bool:
        return lo <= offset <= hi if closed else lo < offset < hi

    def move(span: Span) -> Span | None:
        if span.path != path:
            return span
        s, e = span.start, span.end
        if inside(s) or inside(e) or (s == e and lo <= s <= hi):
            return None
        return Span(source, edit.start_at(s), edit.end_at(e))

    out = []
    for d in diagnostics:
        span = move(d.span) if d.span is not None else None
        if d.span is not None and span is None:
            return None
        labels = []
        for label in d.secondary:
            moved = move(label.span)
            if moved is None:
                return None
            labels.append(attrs.evolve(label, span=moved))
        out.append(attrs.evolve(d, span=span, secondary=tuple(labels)))
    return out
