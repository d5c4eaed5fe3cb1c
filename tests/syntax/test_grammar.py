"""The shipped LALR tables (`skillc/syntax/_tables.py`): current, used only when fresh, and parsing as a built parser
does."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import lark
import pytest

from skillc.diagnostics.source import SourceFile
from skillc.syntax import _tables, grammar, parser

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted(p for d in ("examples", "stdlib", "tests") for p in (ROOT / d).rglob("*.skm"))


@pytest.fixture
def no_tables(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every parser built from the grammar, as on a start without fresh tables (a fresh per-thread parser too)."""
    monkeypatch.setattr(grammar, "shipped_tables", lambda: None)
    monkeypatch.setattr(parser, "_local", type(parser._local)())
    yield


def _texts() -> Iterator[tuple[str, str]]:
    """Every `.skm` of the repository, whole and cut short (the cut ones take the syntax-error paths)."""
    for path in SOURCES:
        text = path.read_text(encoding="utf-8")
        yield str(path), text
        for cut in (len(text) // 3, len(text) // 2, len(text) - 2):
            yield f"{path}@{cut}", text[:cut]


def _tokens(tree: object) -> list[tuple[object, ...]]:
    """Every token of a Lark tree with its type and position (Tree equality compares tokens as plain strings)."""
    assert isinstance(tree, lark.Tree)
    return [(t.type, str(t), t.line, t.column, t.end_line, t.end_column, t.start_pos, t.end_pos)
            for t in tree.scan_values(lambda v: isinstance(v, lark.Token))]


def _outcome(p: lark.Lark, text: str) -> object:
    """What a parser makes of `text`: its tree and tokens, or the error it raises (expected terminals as a set:
    Lark's order of them differs from one build to the next, and skillc sorts them)."""
    try:
        tree = p.parse(text)
    except lark.exceptions.UnexpectedInput as exc:
        expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
        return type(exc).__name__, exc.line, exc.column, str(getattr(exc, "token", "")), sorted(expected)
    return tree, _tokens(tree)


def _parsed(text: str, name: str) -> object:
    """What `parse_source` makes of `text`: the module, with every diagnostic's code, message and span."""
    module, diags = parser.parse_source(SourceFile(name, text))
    return module, [(str(d.code), d.message, d.span, d.hint) for d in diags]


def test_the_shipped_tables_were_generated_from_this_grammar() -> None:
    """Fails when grammar/skm.lark changed: run
    `python -c 'from skillc.syntax.grammar import write_tables as w; w()'`."""
    assert grammar.tables_key(_tables.LARK_VERSION) == _tables.KEY


def test_the_tables_are_used_exactly_when_lark_is_the_version_they_came_from() -> None:
    assert (grammar.shipped_tables() is _tables) == (lark.__version__ == _tables.LARK_VERSION)


def test_changing_the_grammar_text_changes_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    key = grammar.tables_key()
    monkeypatch.setattr(grammar, "grammar_text", lambda: grammar.grammar_path().read_text(encoding="utf-8") + "\n")
    assert grammar.tables_key() != key
    grammar.shipped_tables.cache_clear()
    try:
        assert grammar.shipped_tables() is None
    finally:
        grammar.shipped_tables.cache_clear()
    assert grammar.tables_key("0.0") != grammar.tables_key("0.1")


def test_loaded_and_built_parsers_agree_on_every_source() -> None:
    loaded, built = grammar.make_lark(), grammar.build_lark()
    if grammar.shipped_tables() is None:
        pytest.fail(f"the shipped tables are for Lark {_tables.LARK_VERSION}, this is Lark {lark.__version__}")
    terminals = {t.name: (t.pattern.type, t.pattern.value, sorted(t.pattern.flags), t.priority)
                 for t in built.terminals}
    assert {t.name: (t.pattern.type, t.pattern.value, sorted(t.pattern.flags), t.priority)
            for t in loaded.terminals} == terminals
    assert len(SOURCES) > 100
    for name, text in _texts():
        assert _outcome(loaded, text) == _outcome(built, text), name


def test_keywords_and_literals_come_back_with_the_tables(no_tables: None) -> None:
    built_keywords, built_arrow = grammar.keyword_terminals(), grammar.arrow_terminal()
    assert built_keywords == _tables.KEYWORDS and "MACHINE" in built_keywords
    assert built_arrow == next(name for name, text in _tables.LITERALS.items() if text == "->")


def test_parse_source_is_the_same_with_and_without_the_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    with_tables = [_parsed(text, name) for name, text in _texts()]
    monkeypatch.setattr(grammar, "shipped_tables", lambda: None)
    monkeypatch.setattr(parser, "_local", type(parser._local)())
    without = [_parsed(text, name) for name, text in _texts()]
    assert any(diags for _module, diags in with_tables)  # the cut sources did take the error paths
    assert with_tables == without


def test_damaged_tables_are_ignored_and_the_parser_built(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (ROOT / "examples" / "livemath" / "livemath.skm").read_text(encoding="utf-8")
    expected = _outcome(grammar.build_lark(), text)
    broken = ModuleType("skillc.syntax._tables")
    broken.__dict__.update(KEY=grammar.tables_key(), KEYWORDS=_tables.KEYWORDS, LITERALS=_tables.LITERALS,
                           DATA={"rules": "garbage"}, MEMO={})
    for damaged in (None, broken):  # None: the module cannot be imported at all
        monkeypatch.setitem(sys.modules, "skillc.syntax._tables", damaged)
        grammar.shipped_tables.cache_clear()
        try:
            assert grammar.shipped_tables() is (None if damaged is None else broken)
            assert _outcome(grammar.make_lark(), text) == expected
        finally:
            grammar.shipped_tables.cache_clear()


def test_options_that_change_the_tables_build_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only options Lark lets a loaded parser take (transformer, callbacks) use the tables; others build."""
    built: list[dict[str, object]] = []
    real = grammar.build_lark
    monkeypatch.setattr(grammar, "build_lark", lambda **options: built.append(options) or real(**options))
    grammar.make_lark(lexer_callbacks={})
    assert built == ([] if grammar.shipped_tables() is not None else [{"lexer_callbacks": {}}])
    grammar.make_lark(strict=False)
    assert built[-1] == {"strict": False}


def test_the_generated_source_has_what_the_loader_reads() -> None:
    namespace: dict[str, object] = {}
    exec(compile(grammar.tables_source(), "<tables>", "exec"), namespace)
    assert namespace["KEY"] == grammar.tables_key() and namespace["LARK_VERSION"] == lark.__version__
    assert namespace["KEYWORDS"] == grammar.keyword_terminals()
    regenerated = lark.Lark._load_from_dict(namespace["DATA"], namespace["MEMO"])
    text = (ROOT / "examples" / "livemath" / "livemath.skm").read_text(encoding="utf-8")
    assert _outcome(regenerated, text) == _outcome(grammar.build_lark(), text)


def test_loading_leaves_the_shared_tables_as_they_were() -> None:
    """Each thread loads its own parser from the one `_tables` module: loading and parsing must not change it."""
    import copy

    data, memo = copy.deepcopy(_tables.DATA), copy.deepcopy(_tables.MEMO)
    grammar.make_lark(lexer_callbacks={"COMMENT": lambda tok: tok}).parse(
        (ROOT / "examples" / "livemath" / "livemath.skm").read_text(encoding="utf-8"))
    assert data == _tables.DATA and memo == _tables.MEMO
