"""Quick fixes: findings whose fix is mechanical, as workspace edits computed from the text and the AST.

- a finding whose hint is a `Suggestion` (undefined state, variable, tool, label, type, fragment, field,
  argument, outcome, a misspelt keyword, …): the name it carries in `data` (found once in the finding's span
  outside strings and comments) replaced by the suggestion;
- SKM202, a state without a default edge: `-> fallback` added as its last edge;
- SKM131, a tool argument reading a variable outside `reads`: the variable added to the state's `reads` (a
  `reads` line added when there is none);
- SKM510, untrusted text spliced into a bash command: the spliced expression wrapped in `quote(…)`, where
  it stands as a whole argument (inside double quotes and the like, quoting does not protect it: SKM511).

A fix is offered only when the document's text is the one the findings were computed for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from lsprotocol import types as lsp

from skillc.check import codes as check_codes
from skillc.diagnostics import Diagnostic
from skillc.diagnostics import codes as codes
from skillc.lsp.lines import LineIndex
from skillc.lsp.resolve import masked
from skillc.syntax import nodes as n


def _states(module: n.Module) -> Iterator[n.State]:
    for item in module.items:
        if isinstance(item, (n.Machine, n.Fragment)):
            for d in item.items:
                if isinstance(d, n.State):
                    yield d


def _state_at(module: n.Module, offset: int) -> n.State | None:
    return next((s for s in _states(module) if s.span is not None and s.span.start <= offset < s.span.end), None)


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _indent(text: str, offset: int) -> str:
    """The leading whitespace of the line that holds `offset`."""
    start = _line_start(text, offset)
    end = start
    while end < len(text) and text[end] in " \t":
        end += 1
    return text[start:end]


def _item_indent(text: str, state: n.State) -> str:
    """The indentation of the state's items (its own plus two spaces when it has none on their own lines)."""
    assert state.span is not None
    for item in state.items:
        if item.span is not None and not text[_line_start(text, item.span.start):item.span.start].strip():
            return text[_line_start(text, item.span.start):item.span.start]
    return _indent(text, state.span.start) + "  "


def _insert_last(text: str, state: n.State, line: str) -> tuple[int, int, str] | None:
    """An edit adding `line` as the last item of a state (before its `}`)."""
    assert state.span is not None
    close = state.span.end - 1
    if text[close:close + 1] != "}":
        return None
    start = _line_start(text, close)
    if not text[start:close].strip():
        return start, start, f"{_item_indent(text, state)}{line}\n"
    return close, close, f" {line} "


def did_you_mean(text: str, d: Diagnostic) -> tuple[str, tuple[int, int, str]] | None:
    """(title, edit) replacing the misspelt name by the suggestion the finding carries (its `Suggestion` hint)."""
    wrong, right = d.datum("name"), d.datum("suggestion")
    if d.span is None or wrong is None or right is None or wrong == right or not re.fullmatch(r"[\w.]+", wrong):
        return None
    body = masked(text[d.span.start:d.span.end])
    hits = [m.start() for m in re.finditer(rf"(?<![\w.]){re.escape(wrong)}(?![\w])", body)]
    if len(hits) != 1:
        return None
    at = d.span.start + hits[0]
    return f"Change `{wrong}` to `{right}`", (at, at + len(wrong), right)


def missing_default_edge(text: str, module: n.Module, d: Diagnostic) -> tuple[str, tuple[int, int, str]] | None:
    if d.span is None:
        return None
    state = _state_at(module, d.span.start)
    if state is None:
        return None
    edit = _insert_last(text, state, "-> fallback")
    return ("Add the default edge `-> fallback`", edit) if edit else None


def missing_read(text: str, module: n.Module, d: Diagnostic) -> tuple[str, tuple[int, int, str]] | None:
    if d.span is None:
        return None
    var = d.datum("var")
    if var is None:
        return None
    state = _state_at(module, d.span.start)
    if state is None or state.span is None:
        return None
    title = f"Add `{var}` to the state's `reads`"
    reads = next((i for i in state.items if isinstance(i, n.Reads)), None)
    if reads is not None and reads.span is not None:
        if var in reads.names:
            return None
        return title, (reads.span.end, reads.span.end, f", {var}")
    first = next((i for i in state.items if i.span is not None), None)
    if first is not None and first.span is not None:
        start = _line_start(text, first.span.start)
        if not text[start:first.span.start].strip():
            return title, (start, start, f"{text[start:first.span.start]}reads {var}\n")
        return title, (first.span.start, first.span.start, f"reads {var} ")
    edit = _insert_last(text, state, f"reads {var}")
    return (title, edit) if edit else None


def quote_value(text: str, d: Diagnostic) -> tuple[str, tuple[int, int, str]] | None:
    """`quote(…)` around the spliced value, where quoting protects it (SKM510 labels such a place `unquoted`;
    inside double quotes, a here-document, as the program, … `quote()` would only move the finding to SKM511)."""
    if d.span is None or d.label != "unquoted":
        return None
    value = text[d.span.start:d.span.end]
    if not value.strip() or value.startswith("quote("):
        return None
    return f"Wrap `{value}` in `quote()`", (d.span.start, d.span.end, f"quote({value})")


def quick_fixes(uri: str, text: str, module: n.Module | None, found: Iterable[tuple[Diagnostic, lsp.Diagnostic]],
                lo: int, hi: int, index: LineIndex) -> list[lsp.CodeAction]:
    """Quick fixes for the findings (skillc's, paired with what was published) that touch [lo, hi]."""
    actions = []
    for d, published in found:
        if d.span is None or d.span.end < lo or d.span.start > hi:
            continue
        fixes: list[tuple[str, tuple[int, int, str]] | None] = [did_you_mean(text, d)]
        if module is not None and d.code == check_codes.MISSING_DEFAULT_EDGE:
            fixes.append(missing_default_edge(text, module, d))
        if module is not None and d.code == codes.UNDECLARED_READ:
            fixes.append(missing_read(text, module, d))
        if d.code == codes.UNQUOTED_SHELL_VALUE:
            fixes.append(quote_value(text, d))
        for entry in fixes:
            if entry is None:
                continue
            title, (start, end, new) = entry
            edit = lsp.TextEdit(range=index.range(start, end), new_text=new)
            actions.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[published],
                                          is_preferred=True, edit=lsp.WorkspaceEdit(changes={uri: [edit]})))
    return actions
