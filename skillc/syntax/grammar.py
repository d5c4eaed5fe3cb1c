"""Locate and load `grammar/skm.lark`, the single source of truth for the syntax."""

from __future__ import annotations

import functools
import hashlib
import importlib
import re
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import lark
from lark.grammar import Rule
from lark.lark import _LOAD_ALLOWED_OPTIONS
from lark.lexer import PatternRE, TerminalDef

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


# Building the LALR tables costs ~100 ms on every start, so they ship, generated, in `_tables.py` (a Python
# literal: imported from its .pyc, no pickle, no writable cache). They are used only when `tables_key()` says they
# were built from this grammar text, this Lark version and these options; otherwise the parser is built as before.
_OPTIONS: Final[dict[str, Any]] = {"start": "module", "parser": "lalr", "lexer": "contextual", "keep_all_tokens": True,
                                   "maybe_placeholders": True}
_FORMAT: Final = "1"  # bump when `_whole_word` or the layout of `_tables.py` changes
TABLES_PATH: Final = Path(__file__).resolve().with_name("_tables.py")

_KEYWORDS: dict[str, str] = {}   # terminal name -> keyword, recorded while building a parser
_LITERALS: dict[str, str] = {}   # terminal name -> literal text, for every string terminal


def _whole_word(terminal: TerminalDef) -> None:
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


def tables_key(lark_version: str = lark.__version__) -> str:
    """What the LALR tables depend on: the grammar text, the Lark version, the options and `_FORMAT`."""
    digest = hashlib.sha256()
    for part in (_FORMAT, lark_version, repr(sorted(_OPTIONS.items())), grammar_text()):
        digest.update(part.encode("utf-8") + b"\0")
    return digest.hexdigest()


@functools.cache
def shipped_tables() -> ModuleType | None:
    """The generated `_tables` module when it was built from this grammar and this Lark; None otherwise."""
    try:
        tables = importlib.import_module("skillc.syntax._tables")
    except Exception:  # noqa: BLE001 - missing or damaged: build the tables instead
        return None
    return tables if getattr(tables, "KEY", None) == tables_key() else None


def keyword_terminals() -> dict[str, str]:
    """Terminal name → keyword text, for error messages and generators."""
    tables = shipped_tables()
    if tables is not None:
        return dict(tables.KEYWORDS)
    if not _KEYWORDS:
        build_lark()
    return dict(_KEYWORDS)


#: An identifier, as the grammar's names are written.
NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Words that are values or operators, not keywords of the grammar's terminals, and never names.
_WORDS: Final = frozenset({"true", "false", "none", "and", "or", "not", "in"})


@functools.cache
def _reserved() -> frozenset[str]:
    """Every word that cannot be a name: the grammar's keywords and the value and operator words."""
    return frozenset(keyword_terminals().values()) | _WORDS


def is_name(text: str) -> bool:
    """Whether `text` can be written as a name (of a state, variable, tool, parameter or field): an identifier
    that is no keyword."""
    return NAME.fullmatch(text) is not None and text not in _reserved()


def arrow_terminal() -> str:
    """The name Lark gave the `->` terminal."""
    tables = shipped_tables()
    literals: dict[str, str] = tables.LITERALS if tables is not None else _LITERALS
    if not literals:
        build_lark()
    return next(name for name, text in literals.items() if text == "->")


def build_lark(**options: Any) -> lark.Lark:
    """A parser whose tables Lark computes now from the grammar (what `make_lark` does without fresh tables)."""
    return lark.Lark(grammar_text(), **_OPTIONS, edit_terminals=_whole_word, **options)


def make_lark(**options: Any) -> lark.Lark:
    """A Lark LALR parser over the grammar with the options every skillc parser shares."""
    tables = shipped_tables()
    if tables is not None and set(options) <= _LOAD_ALLOWED_OPTIONS:  # options that leave the tables as they are
        try:
            return lark.Lark.__new__(lark.Lark)._load({"data": tables.DATA, "memo": tables.MEMO}, **options)
        except Exception:  # noqa: BLE001 - tables Lark cannot read: build them
            pass
    return build_lark(**options)


def _literal(value: object, indent: int = 0) -> str:
    """`value` as Python source: one line when it fits in 120 columns, else one line per item (pprint indents more)."""
    flat = repr(value)
    if len(flat) + indent <= 120 or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 1)
    if isinstance(value, dict):
        items = [f"{pad}{k!r}: {_literal(v, indent + 1)}," for k, v in value.items()]
        return "{\n" + "\n".join(items) + "\n" + " " * indent + "}"
    return "[\n" + "\n".join(f"{pad}{_literal(v, indent + 1)}," for v in value) + "\n" + " " * indent + "]"


def tables_source() -> str:
    """The text of `_tables.py` for this grammar and Lark: the built parser, serialised as Python literals."""
    _KEYWORDS.clear()
    _LITERALS.clear()
    parser = build_lark()
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items()
                       if k not in _LOAD_ALLOWED_OPTIONS and k != "edit_terminals"}  # given again when loading
    parts = [('"""The LALR tables of grammar/skm.lark, generated by `skillc.syntax.grammar.write_tables()`: '
              'do not edit."""'),
             "# ruff: noqa", "from typing import Any, Final\n",
             f"KEY: Final = {tables_key()!r}", f"LARK_VERSION: Final = {lark.__version__!r}",
             f"KEYWORDS: Final[dict[str, str]] = {_literal(dict(_KEYWORDS))}",
             f"LITERALS: Final[dict[str, str]] = {_literal(dict(_LITERALS))}",
             f"DATA: Final[dict[str, Any]] = {_literal(data)}", f"MEMO: Final[dict[int, Any]] = {_literal(memo)}"]
    return "\n".join(parts) + "\n"


def write_tables() -> Path:
    """Regenerate `_tables.py` (after the grammar, `_whole_word` or the Lark version changed); its path."""
    from skillc.diagnostics.files import write_output  # a developer's tool: not on any start's path

    write_output(TABLES_PATH, tables_source())
    return TABLES_PATH
