"""The Pygments lexer: registered as `skm`, in sync with the grammar, and error-free on every shipped file."""

from __future__ import annotations

import subprocess
import sys

from pygments.lexers import get_lexer_by_name
from pygments.token import Error, Keyword, Name, String

from skillc.render import pygments_lexer as lx
from skillc.syntax.grammar import keyword_terminals
from tests.conftest import EXAMPLES, MACHINE_EXAMPLES, ROOT, STDLIB


def test_keyword_groups_match_the_grammar() -> None:
    groups = (lx.DECLARATIONS + lx.STATE_KINDS + lx.STATE_ITEMS + lx.RULE_WORDS + lx.TYPES + lx.OPERATOR_WORDS
              + lx.CONSTANTS)
    assert set(groups) == set(keyword_terminals().values())


def test_registered_entry_point_and_command() -> None:
    assert isinstance(get_lexer_by_name("skm"), lx.SkmLexer)
    r = subprocess.run([sys.executable, "-m", "pygments", "-l", "skm", "-f", "html", str(EXAMPLES / "livemath" /
                        "livemath.skm")], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert r.returncode == 0 and 'class="k' in r.stdout


def test_shipped_files_lex_without_errors() -> None:
    lexer = lx.SkmLexer()
    for path in [*EXAMPLES.rglob("*.skm"), *STDLIB.glob("*.skm")]:
        tokens = list(lexer.get_tokens(path.read_text()))
        assert not [t for t in tokens if t[0] is Error], path


def test_token_classes() -> None:
    text = 'model think {\n  prompt """\n    Say "hi".\n    """\n  when x == "a\\n" -> done { n += 1 }\n}\n'
    tokens = [(t, v) for t, v in lx.SkmLexer().get_tokens(text) if v.strip()]
    assert (Keyword.Declaration, "model") in tokens and (Name.Function, "think") in tokens
    assert (String.Escape, "\\n") in tokens and (Name.Label, "done") in tokens
    assert any(t in String and "Say" in v for t, v in tokens)


def test_the_docs_carry_highlighted_examples() -> None:
    for folder in MACHINE_EXAMPLES:
        html = (ROOT / "docs" / "machines" / f"{folder.name}.html").read_text()
        assert '<span class="k' in html and folder.name in html
