"""Issue 32: the incremental parse (`skillc.check.incremental`) gives the tree and the findings of a full check.

Seeded chains of random edits over the example machines — a variable renamed, a prompt's text changed, an
edge added or removed, a state duplicated or deleted, a comment or blank line added, a number changed, a
character deleted or a brace added (broken syntax) — each parsed by one `ItemParser` whose cache carries
over from edit to edit, compared with `parse_source` of the whole text: the same tree, every span, comment
and blank-line flag included; and every so often the language server's check (`run_check`, which parses
through that parser) compared with `skillc.api.check` finding for finding, positions included.
`SKILLC_INCREMENTAL_EDITS` sets how many edits per example (default 12).
"""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import attrs
import pytest

from skillc import api
from skillc.check.incremental import ItemParser, relocate, rescan, scan
from skillc.diagnostics import SourceFile, Span
from skillc.lsp import analysis
from skillc.syntax import nodes as n
from skillc.syntax.parser import parse_source
from tests.conftest import EXAMPLES

EDITS = int(os.environ.get("SKILLC_INCREMENTAL_EDITS", "12"))
CHECK_EVERY = 3  # a full check is compared on every third edit (a parse on every one)
FILES = sorted(p for p in EXAMPLES.rglob("*.skm"))


def shape(node: object, out: list) -> list:
    """Everything of a tree that equality leaves out: each node's class, span and blank-line flag, in order."""
    if isinstance(node, Span):
        out.append((node.start, node.end))
    elif isinstance(node, tuple):
        for x in node:
            shape(x, out)
    elif isinstance(node, n.Node):
        out.append(type(node).__name__)
        for a in attrs.fields(type(node)):
            value = getattr(node, a.name)
            if a.name == "blank_before":
                out.append(value)
            shape(value, out)
    return out


def sources(node: object, out: set) -> set:
    """The source files the spans of a tree point into (one: the new text's)."""
    if isinstance(node, Span):
        out.add(id(node.source))
    elif isinstance(node, tuple):
        for x in node:
            sources(x, out)
    elif isinstance(node, n.Node):
        for a in attrs.fields(type(node)):
            sources(getattr(node, a.name), out)
    return out


def findings(diagnostics: list) -> list:
    return [(str(d.code), d.severity, d.message, d.span and (d.span.path, d.span.start, d.span.end), tuple(d.notes),
             d.hint, tuple(d.witness), tuple((s.span.start, s.span.end, s.message) for s in d.secondary))
            for d in diagnostics]


def edit(text: str, rng: random.Random) -> str:
    """One random edit of the kinds an editor makes."""
    lines = text.split("\n")
    kind = rng.choice(["rename", "prompt", "add_edge", "drop_line", "duplicate", "comment", "blank", "number",
                       "delete_char", "brace", "state_name"])
    words = sorted(set(re.findall(r"\b[a-z_][a-z0-9_]*\b", text)))
    if kind == "rename" and words:
        old = rng.choice(words)
        hits = [m.start() for m in re.finditer(rf"\b{old}\b", text)]
        at = rng.choice(hits)
        return text[:at] + old + "x" + text[at + len(old):]
    if kind == "prompt":
        hits = [m.end() for m in re.finditer(r'prompt "', text)]
        if hits:
            at = rng.choice(hits)
            return text[:at] + rng.choice(["Now ", "", "Quote \\\" this. "]) + text[at:]
    if kind == "add_edge":
        hits = [i for i, line in enumerate(lines) if line.strip().startswith("->")]
        if hits:
            i = rng.choice(hits)
            target = rng.choice(words) if words else "x"
            lines.insert(i, re.match(r"\s*", lines[i]).group() + f"when {target} -> {rng.choice(words or ['x'])}")
            return "\n".join(lines)
    if kind == "drop_line" and len(lines) > 2:
        del lines[rng.randrange(len(lines))]
        return "\n".join(lines)
    if kind == "duplicate":
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines)
    if kind == "comment":
        i = rng.randrange(len(lines) + 1)
        lines.insert(i, "  # a comment " + str(rng.randrange(100)))
        return "\n".join(lines)
    if kind == "blank":
        lines.insert(rng.randrange(len(lines) + 1), "")
        return "\n".join(lines)
    if kind == "number":
        hits = list(re.finditer(r"\b\d+\b", text))
        if hits:
            m = rng.choice(hits)
            return text[:m.start()] + str(int(m.group()) + rng.randrange(1, 5)) + text[m.end():]
    if kind == "state_name":
        hits = list(re.finditer(r"\b(model|judge|tool) (\w+) \{", text))
        if hits:
            m = rng.choice(hits)
            return text[:m.end(2)] + "_b" + text[m.end(2):]
    if kind == "brace":
        at = rng.randrange(len(text) + 1)
        return text[:at] + rng.choice(["{", "}", '"']) + text[at:]
    if text:
        at = rng.randrange(len(text))
        return text[:at] + text[at + 1:]
    return text


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_random_edits_parse_and_check_as_a_full_check(path: Path) -> None:
    rng = random.Random(f"{path.name}-32")
    parser = ItemParser()
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    name = str(path)
    good = text
    for step in range(EDITS + 1):
        if step:  # a broken text is edited once more, then the user fixes it: the next edit starts from the last good
            text = edit(text if text == good or rng.random() < 0.5 else good, rng)
        source = SourceFile(name, text)
        full, full_diagnostics = parse_source(SourceFile(name, text))
        got, got_diagnostics = parser.parse(source)
        assert (full is None) == (got is None), (step, text)
        assert findings(got_diagnostics) == findings(full_diagnostics), step
        if full is not None and got is not None:
            good = text
            assert got == full, step
            assert shape(got, []) == shape(full, []), step
            assert sources(got, set()) == {id(source)}, step
        if step % CHECK_EVERY == 0:
            incremental, _ = analysis.run_check(text, name, {})
            fresh = api.check(text, path=name)
            assert findings(incremental.diagnostics) == findings(fresh.diagnostics), (step, text)
    assert parser.stats["items"] > 0 or not scan(path.read_text(encoding="utf-8")), parser.stats


def test_an_edit_parses_one_item() -> None:
    """The point of it: after an edit inside one state, only that item (and the frame) is parsed again."""
    text = (EXAMPLES / "warehouse" / "warehouse.skm").read_text(encoding="utf-8")
    assert scan(text), "the warehouse machine is split into items"
    parser = ItemParser()
    parser.parse(SourceFile("w.skm", text))
    before = dict(parser.stats)
    at = text.index('prompt """\n') + len('prompt """\n')
    edited = text[:at] + "Carefully: " + text[at:]
    module, _ = parser.parse(SourceFile("w.skm", edited))
    assert module is not None and parser.stats["parsed"] - before["parsed"] == 1
    assert module == parse_source(SourceFile("w.skm", edited))[0]


def test_relocate_moves_every_span() -> None:
    module, _ = parse_source(SourceFile("a.skm", (EXAMPLES / "warehouse" / "warehouse.skm").read_text()))
    target = SourceFile("b.skm", "x" * 10 + "")
    moved = relocate(module, target, 10)
    assert moved == module
    assert [s if isinstance(s, (str, bool)) else (s[0] - 10, s[1] - 10)
            for s in shape(moved, [])] == shape(module, [])
    assert sources(moved, set()) == {id(target)}


def test_only_machine_and_fragment_bodies_are_split() -> None:
    """A large record is parsed with the frame: its fields are not statements a machine's header can hold."""
    fields = "".join(f"  f{i}: str\n" for i in range(12))
    states = "".join(f"  model s{i} {{\n    prompt \"Go.\"\n    -> s{i + 1}\n  }}\n" for i in range(10))
    text = f"record Big {{\n{fields}}}\n\nmachine m {{\n  start s0\n{states}  terminal s10: success\n  fallback\n}}\n"
    blocks = scan(text)
    assert blocks is not None and len(blocks) == 1 and text[blocks[0].header[0]:].startswith("machine m {")
    parser = ItemParser()
    parser.parse(SourceFile("r.skm", text))
    edited = text.replace('prompt "Go."', 'prompt "Go on."', 1)
    module, _ = parser.parse(SourceFile("r.skm", edited))
    assert module == parse_source(SourceFile("r.skm", edited))[0] and parser.stats["parsed"] == 1


def test_guard_verdicts_are_kept_by_content_across_checks() -> None:
    """The server's `Kept` store: an edit elsewhere reuses every unchanged state's guard analysis (no solver),
    a changed declaration asks again, and the findings are those of a fresh check either way."""
    from skillc.check.context import Kept

    text = """machine m {
  var n: int
  var mood: enum { calm, angry, sad }
  start ask

  model ask {
    writes n, mood
    prompt "Count."
    when n > 3 -> ask2
    when n > 5 -> done
    -> done
  }
  model ask2 {
    writes mood
    prompt "Mood."
    when mood == calm -> done
    when mood == calm -> ask
    -> done
  }
  terminal done: success
  fallback
}
"""
    kept = Kept()
    first = api.check(text, path="k.skm", kept=kept)
    shadowed = [d for d in first.diagnostics if str(d.code) == "SKM241"]
    assert len(shadowed) == 2 and kept.hits == 0 and len(kept) == 2
    edited = text.replace('prompt "Count."', 'prompt "Count them."')
    again = api.check(edited, path="k.skm", kept=kept)
    assert kept.hits == 2  # both states' verdicts reused
    assert findings(again.diagnostics) == findings(api.check(edited, path="k.skm").diagnostics)
    retyped = edited.replace("enum { calm, angry, sad }", "enum { calm, angry }")
    misses = kept.misses
    third = api.check(retyped, path="k.skm", kept=kept)
    assert kept.misses == misses + 1  # `mood`'s type changed: that state is asked again
    assert findings(third.diagnostics) == findings(api.check(retyped, path="k.skm").diagnostics)


@pytest.mark.parametrize("path", FILES[::3], ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_a_rescan_is_the_scan(path: Path) -> None:
    """`rescan` (the scan of an edited text from the last one's) equals a fresh scan whenever it answers, and
    answers for an edit inside one item."""
    rng = random.Random(f"{path.name}-rescan")
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    blocks = scan(text)
    answered = 0
    for _ in range(40):
        if not blocks:
            break
        new = edit(text, rng)
        got = rescan(text, blocks, new)
        if got is not None:
            answered += 1
            assert got == scan(new), new
        text, blocks = (new, scan(new)) if scan(new) else (text, blocks)
    assert answered or not scan(path.read_text(encoding="utf-8"))


def test_a_rescan_declines_an_edit_that_changes_the_items() -> None:
    states = "".join(f"  model s{i} {{\n    prompt \"Go.\"\n    -> s{i + 1}\n  }}\n" for i in range(10))
    text = f"machine m {{\n  start s0\n{states}  terminal s10: success\n  fallback\n}}\n"
    blocks = scan(text)
    assert blocks
    inside = text.replace('prompt "Go."', 'prompt "Go on."', 1)
    assert rescan(text, blocks, inside) == scan(inside)
    assert rescan(text, blocks, text) is blocks
    for changed in (text.replace('prompt "Go."', 'prompt "Go.', 1),  # an open string runs into the next items
                    text.replace("    -> s1\n  }\n", "    -> s1\n  }\n  model x {\n  }\n", 1),  # a new item
                    text.replace("  }\n  model s1", "  model s1", 1),  # two items merged
                    text.replace("machine m {", "machine mm {", 1)):  # the frame
        assert rescan(text, blocks, changed) is None
