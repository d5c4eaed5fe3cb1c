"""The canonical printer: identity fixture, idempotence, comments, `skillc fmt`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from skillc.api import format_text, parse
from skillc.syntax.printer import print_module
from tests.conftest import EXAMPLES, ROOT, STDLIB

FIXTURES = Path(__file__).parent / "fixtures"
SNIPPETS = (FIXTURES / "identity.skm").read_text(encoding="utf-8").split("%%%\n")


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_identity(snippet: str) -> None:
    module, diags = parse(snippet)
    assert diags == []
    assert print_module(module) == snippet


def _all_skm() -> list[Path]:
    return sorted([*EXAMPLES.rglob("*.skm"), *STDLIB.rglob("*.skm")])


@pytest.mark.parametrize("path", _all_skm(), ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_files_are_formatted(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert format_text(text)[0] == text


def test_comments_are_kept_and_moved_predictably() -> None:
    text = ("machine m { # after brace\n  var x: str # t\n  start s # t2\n"
            "  model s { writes x prompt \"p\" -> s # edge\n # tail\n } }\n")
    out, diags = format_text(text)
    assert diags == []
    assert out == (
        "machine m {  # after brace\n"
        "  var x: str  # t\n"
        "  start s  # t2\n"
        "\n"
        "  model s {\n"
        "    writes x\n"
        '    prompt "p"\n'
        "    -> s  # edge\n"
        "    # tail\n"
        "  }\n"
        "}\n"
    )
    assert format_text(out)[0] == out


def test_comment_inside_expression_moves_above_its_statement() -> None:
    text = "machine m {\n  model s {\n    when a and # why\n      b -> s\n    -> s\n  }\n}\n"
    out, _ = format_text(text)
    assert "    # why\n    when a and b -> s\n" in out


def test_blank_lines_collapse_to_one() -> None:
    out, _ = format_text("machine m {\n  var a: str\n\n\n\n  var b: str\n  var c: str\n}\n")
    assert out == "machine m {\n  var a: str\n\n  var b: str\n  var c: str\n}\n"


def test_redundant_parentheses_are_dropped_and_clarifying_ones_added() -> None:
    out, _ = format_text("machine m { model s { when ((a)) or (b and c) -> s -> s } }")
    assert "when a or (b and c) -> s" in out


def test_strings_that_cannot_be_blocks_fall_back_to_escapes() -> None:
    out, _ = format_text('machine m { model s { prompt "  indented\\n  both" -> s } }')
    assert 'prompt "  indented\\n  both"' in out
    out, _ = format_text('machine m { model s { prompt "has \\"\\"\\" inside\\nand a newline" -> s } }')
    assert '"has \\"\\"\\" inside\\nand a newline"' in out
    # a raw block cannot hold a control character: the file would hold a NUL byte (SKM001) or an invisible one
    out, _ = format_text('machine m { model s { prompt "nul \\u{0}\\nand \\u{b} tab" -> s } }')
    assert 'prompt "nul \\u{0}\\nand \\u{b} tab"' in out and "\x00" not in out


def _skillc(*args: str, input: str | None = None, cwd: Path | None = None):
    return subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True,
                          input=input, cwd=cwd or ROOT, timeout=120)


def test_fmt_check_diff_and_in_place(tmp_path: Path) -> None:
    messy = "machine m {var x: str\nstart s\nmodel s {writes x prompt \"p\" -> s}\nfallback}\n"
    f = tmp_path / "m.skm"
    f.write_text(messy)
    r = _skillc("fmt", "--check", str(f))
    assert r.returncode == 1 and "would reformat" in r.stderr
    assert f.read_text() == messy
    r = _skillc("fmt", "--diff", str(f))
    assert r.returncode == 1 and r.stdout.startswith("---") and "+  start s" in r.stdout
    assert f.read_text() == messy
    r = _skillc("fmt", str(f))
    assert r.returncode == 0
    formatted = f.read_text()
    assert formatted != messy
    r = _skillc("fmt", "--check", str(f))
    assert r.returncode == 0
    assert f.read_text() == formatted


def test_fmt_refuses_to_touch_a_file_with_syntax_errors(tmp_path: Path) -> None:
    f = tmp_path / "bad.skm"
    f.write_text("machine m { model s { -> } }\n")
    r = _skillc("fmt", str(f))
    assert r.returncode == 1
    assert "SKM011" in r.stdout
    assert f.read_text() == "machine m { model s { -> } }\n"


def test_fmt_stdin_to_stdout() -> None:
    r = _skillc("fmt", "-", input="machine m {fallback}")
    assert r.returncode == 0
    assert r.stdout == "machine m {\n  fallback\n}\n"
