"""Source files and spans: offsets in, line/column out."""

from __future__ import annotations

import bisect
import re
from pathlib import Path

import attrs


@attrs.define(eq=False)
class SourceFile:
    """The text of one input with a lazily built line index."""

    path: str
    text: str
    _line_starts: list[int] | None = attrs.field(default=None, repr=False)

    @property
    def line_starts(self) -> list[int]:
        """Offsets at which each line begins."""
        if self._line_starts is None:
            starts = [0]
            find = self.text.find
            pos = find("\n")
            while pos != -1:
                starts.append(pos + 1)
                pos = find("\n", pos + 1)
            self._line_starts = starts
        return self._line_starts

    @classmethod
    def from_text(cls, path: str, text: str) -> SourceFile:
        """A source from text, with Windows line ends normalised (the one place this happens)."""
        return cls(path, text.replace("\r\n", "\n"))

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset; columns count characters."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.line_starts, offset) - 1
        return line + 1, offset - self.line_starts[line] + 1

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        starts = self.line_starts
        if not 1 <= line <= len(starts):
            return ""
        start = starts[line - 1]
        end = starts[line] - 1 if line < len(starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    @property
    def display_path(self) -> str:
        """The path as shown to users: relative to the working directory when possible."""
        try:
            return str(Path(self.path).resolve().relative_to(Path.cwd()))
        except (ValueError, OSError):
            return self.path


@attrs.frozen
class Span:
    """A half-open range of offsets in one source file."""

    source: SourceFile = attrs.field(eq=False, repr=False)
    start: int
    end: int

    @property
    def path(self) -> str:
        return self.source.path

    @property
    def start_pos(self) -> tuple[int, int]:
        return self.source.position(self.start)

    @property
    def end_pos(self) -> tuple[int, int]:
        return self.source.position(self.end)

    def text(self) -> str:
        """The source text the span covers."""
        return self.source.text[self.start : self.end]

    def join(self, other: Span | None) -> Span:
        """The smallest span covering both."""
        if other is None or other.source is not self.source:
            return self
        return Span(self.source, min(self.start, other.start), max(self.end, other.end))

    def narrow(self, word: str, after_keyword: bool = True) -> Span:
        """The whole-word occurrence of a name in a name list like `reads a, b` (the span itself if none).

        The search starts after the list's leading keyword, so a variable that happens
        to be called `reads` is found in the list, not in the keyword.
        """
        text = self.text()
        keyword = re.match(r"\s*\w+", text) if after_keyword else None
        start = keyword.end() if keyword else 0
        m = re.compile(rf"(?<![\w.]){re.escape(word)}(?![\w.])").search(text, start)
        return Span(self.source, self.start + m.start(), self.start + m.end()) if m else self


@attrs.frozen
class Edit:
    """`old[start:old_end]` became `new[start:new_end]` (one contiguous region)."""

    start: int
    old_end: int
    new_end: int

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end

    def start_at(self, offset: int) -> int:
        """Where a token that started at `offset` (outside the region) starts after the edit."""
        return offset + self.delta if offset >= self.old_end else offset

    def end_at(self, offset: int) -> int:
        """Where a token that ended at `offset` (outside the region) ends after the edit."""
        return offset + self.delta if offset > self.start else offset


def text_edit(old: str, new: str) -> Edit | None:
    """The one region that differs (the longest common prefix and suffix left out); None when equal."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    lo, hi = 0, limit  # the common prefix, by bisection over slices (compared in C)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[lo:mid] == new[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    lo, hi = 0, limit - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[len(old) - mid:len(old) - lo] == new[len(new) - mid:len(new) - lo]:
            lo = mid
        else:
            hi = mid - 1
    return Edit(prefix, len(old) - lo, len(new) - lo)
