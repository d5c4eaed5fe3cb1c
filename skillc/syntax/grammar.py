"""Locate and load `grammar/skm.lark`, the single source of truth for the syntax."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import lark
from lark.lexer import PatternRE

_HERE = Path(__file__).resolve().parent.parent


def grammar_path() -> Path:
    """The grammar file: packaged copy in a wheel, the repository's `grammar/` in a checkout."""
    for candidate in (_HERE / "_data" / "grammar" / "skm.lark", _HERE.parent / "grammar" / "skm.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("grammar/skm.lark is missing from this installation of skillc")


@functools.cache
def grammar_text() -> str:
    """The grammar's text."""
    return grammar_path().read_text(encoding="utf-8")


def stdlib_path() -> Path:
    """The bundled fragment library (`stdlib/`)."""
    for candidate in (_HERE / "_data" / "stdlib", _HERE.parent / "stdlib"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("stdlib/ is missing from this installation of skillc")



_KEYWORDS: dict[str, str] = {}   # terminal name -> keyword, recorded while building a parser
_LITERALS: dict[str, str] = {}   # terminal name -> literal text, for every string terminal


def _whole_word(terminal) -> None:
    """Keywords match whole words only: `variable` is a name, not `var` + `iable`.

    Keywords are contextual (a state may be called `source`), so they also take
    priority over NAME wherever both could start a token.
    """
    pattern = terminal.pattern
    if pattern.type == "str":
        _LITERALS[terminal.name] = pattern.value
        if pattern.value.isidentifier():
            _KEYWORDS[terminal.name] = pattern.value
            terminal.pattern = PatternRE(re.escape(pattern.value) + r"\b")
            terminal.priority = 2


def keyword_terminals() -> dict[str, str]:
    """Terminal name → keyword text, for error messages and generators."""
    if not _KEYWORDS:
        make_lark()
    return dict(_KEYWORDS)


def arrow_terminal() -> str:
    """The name Lark gave the `->` terminal."""
    if not _LITERALS:
        make_lark()
    return next(name for name, text in _LITERALS.items() if text == "->")


def make_lark(**options) -> lark.Lark:
    """A Lark LALR parser over the grammar with the options every skillc parser shares."""
    return lark.Lark(
        grammar_text(),
        start="module",
        parser="lalr",
        lexer="contextual",
        keep_all_tokens=True,
        maybe_placeholders=True,
        edit_terminals=_whole_word,
        **options,
    )
