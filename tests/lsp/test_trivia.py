"""The language server's fast path (`skillc.lsp.trivia`): an edit classified as trivia is published from the last
findings, moved, without a check — so the moved findings must be exactly a full check's. A Hypothesis property
test drives chains of random edits of the example machines (aimed at comments, prompt text and whitespace, where
the fast path applies, and anywhere else) and compares, at every step the fast path takes, the moved findings with
a full check of the new text, and the moved layout with the new text's own."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillc import api
from skillc.diagnostics import Diagnostic, SourceFile
from skillc.diagnostics.source import text_edit
from skillc.lsp.trivia import Layout, shift_diagnostics
from tests.conftest import BROKEN, EXAMPLES

MACHINES = sorted(p for p in EXAMPLES.rglob("*.skm") if "traces" not in p.parts)
ALPHABET = " \n\t#\"\\abc{}()->=,.:x1_é𝄞"


@functools.lru_cache(maxsize=256)
def full(path: str, text: str) -> api.CheckResult:
    return api.check(text, path=path)


def found(diagnostics: list[Diagnostic]) -> list[tuple]:
    """Everything a published finding shows, positions included."""
    def where(span):
        return (span.path, span.start, span.end, span.start_pos, span.end_pos) if span is not None else None

    return [(str(d.code), d.severity, d.message, d.hint, d.notes, d.witness, d.label, where(d.span),
             tuple((where(s.span), s.message) for s in d.secondary)) for d in diagnostics]


def layout_fields(layout: Layout) -> tuple:
    return (layout.tok_starts, layout.tok_ends, layout.tok_kinds, layout.unsafe_starts, layout.unsafe_ends,
            layout.prompts)


AIMS = ["comment", "prompt", "space", "new comment", "drop comment", "anywhere"]


@st.composite
def edit_chains(draw: st.DrawFn) -> tuple[Path, str, list[tuple[float, int, str, str]]]:
    path = draw(st.sampled_from(MACHINES))
    steps = []
    for _ in range(draw(st.integers(1, 4))):
        aim = draw(st.sampled_from(AIMS))
        inserted = draw(st.text(alphabet=" \n\t#ab" if aim == "space" else ALPHABET.replace("\n", "")
                                if aim == "new comment" else ALPHABET, max_size=6))
        steps.append((draw(st.floats(0, 1)), draw(st.integers(0, 2 if aim == "space" else 12)), aim, inserted))
    return path, path.read_text(encoding="utf-8").replace("\r\n", "\n"), steps


def _edit(layout: Layout, text: str, where: float, length: int, aim: str, inserted: str) -> str:
    """The text after one edit aimed at a comment, a prompt's text, whitespace, a line's end (a new comment),
    a whole comment (removed), or anywhere."""
    comments = [(s, e) for s, e, k in zip(layout.tok_starts, layout.tok_ends, layout.tok_kinds) if k == "#"]
    if aim == "comment" and comments:
        spots = comments
    elif aim == "prompt" and layout.prompts:
        spots = [(s, e) for s, e in zip(layout.tok_starts, layout.tok_ends) if s in layout.prompts]
    elif aim == "space":
        spots = [(i, i + 1) for i, ch in enumerate(text) if ch in " \n"] or [(0, len(text))]
    elif aim == "new comment":
        ends = [i for i, ch in enumerate(text) if ch == "\n"] or [len(text)]
        at = ends[int(where * (len(ends) - 1))]
        return text[:at] + "  # " + inserted + text[at:]
    elif aim == "drop comment" and comments:
        s, e = comments[int(where * (len(comments) - 1))]
        while s > 0 and text[s - 1] in " \t":
            s -= 1
        return text[:s] + text[e:]
    else:
        spots = [(0, len(text))]
    s, e = spots[int(where * (len(spots) - 1))]
    at = s + int(where * (e - s))
    end = min(len(text), at + (length if aim != "anywhere" or length < 4 else 0))
    return text[:at] + inserted + text[end:]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(edit_chains())
def test_trivia_edits_find_what_a_full_check_finds(chain) -> None:
    path, text, steps = chain
    name = str(path)
    result = full(name, text)
    if result.module is None:
        return
    layout = Layout.build(text, result.module)
    diagnostics = result.diagnostics
    for where, length, aim, inserted in steps:
        new = _edit(layout, text, where, length, aim, inserted)
        edit = text_edit(text, new)
        if edit is None:
            continue
        trivia = layout.classify(new, edit)
        truth = full(name, new)
        if trivia is not None:
            moved = shift_diagnostics(diagnostics, name, SourceFile(name, new), edit, (trivia.lo, trivia.hi),
                                      trivia.closed)
            if moved is not None:
                assert truth.module is not None, "a trivia edit broke the parse"
                assert found(moved) == found(truth.diagnostics)
                assert layout_fields(trivia.layout) == layout_fields(Layout.build(new, truth.module))
                text, layout, diagnostics = new, trivia.layout, moved
                continue
        if truth.module is None:
            return
        text, layout, diagnostics = new, Layout.build(new, truth.module), truth.diagnostics


def _classify(old: str, new: str) -> tuple[object, api.CheckResult, api.CheckResult]:
    before, after = api.check(old, path="/tmp/t.skm"), api.check(new, path="/tmp/t.skm")
    assert before.module is not None
    return Layout.build(old, before.module).classify(new, text_edit(old, new)), before, after


MACHINE = """machine m {
  var answer: str
  var other: str = "x"
  start think

  model think {
    reads other, # COMMENT
      answr
    writes answer
    prompt "Think."
    -> done
  }

  model header # HEADER
  {
    reads other
    writes answer
    -> done
  }

  terminal done: success { requires answer }
  fallback
}
"""


@pytest.mark.parametrize("old, new, kind", [
    ("# COMMENT", "# COMMENT and more", None),       # inside a statement: `narrow` may find the name in it
    ("# COMMENT", "# answr", None),
    ("# HEADER", "# HEADER {", None),                 # in a block's header: the header ends at the first `{`
    ('prompt "Think."', 'prompt "Think \\q."', None),   # a bad escape is a finding
    ('prompt "Think."', 'prompt ""Think."', None),     # no longer one literal
    ('prompt "Think."', 'prompt ""', None),            # an empty prompt
    ("  start think\n", "  start think  # first\n", "gap"),
    ('prompt "Think."', 'prompt "Think again."', "prompt"),
    ("  fallback\n", "\n\n  fallback\n", "gap"),
    ("    -> done\n  }\n\n  model header", "    ->done\n  }\n\n  model header", None),  # whitespace between tokens
    ("var other", "varother", None),
])
def test_what_is_trivia(old: str, new: str, kind: str | None) -> None:
    text = MACHINE
    trivia, before, after = _classify(text, text.replace(old, new, 1))
    assert (trivia.kind if trivia is not None else None) == kind
    if trivia is not None:
        edit = text_edit(text, text.replace(old, new, 1))
        moved = shift_diagnostics(before.diagnostics, "/tmp/t.skm", SourceFile("/tmp/t.skm", text.replace(old, new, 1)),
                                  edit, (trivia.lo, trivia.hi), trivia.closed)
        assert moved is not None and found(moved) == found(after.diagnostics)


def test_a_comment_inside_a_statement_would_move_a_finding() -> None:
    """Why comments inside statements are not trivia: lowering finds a `reads` name by searching the text."""
    old = MACHINE
    new = old.replace("# COMMENT", "# answr")
    before, after = api.check(old, path="/tmp/t.skm"), api.check(new, path="/tmp/t.skm")
    undefined = [d for d in before.diagnostics if "answr" in d.message]
    assert undefined and [d.span.start for d in undefined] != [
        d.span.start for d in after.diagnostics if "answr" in d.message]


def test_the_broken_example_is_fixed_by_no_trivia_edit() -> None:
    old = BROKEN
    assert Layout.build(old, api.check(old).module).classify(
        old.replace("answr", "answer"), text_edit(old, old.replace("answr", "answer"))) is None
