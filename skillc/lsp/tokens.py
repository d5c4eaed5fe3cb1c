"""Semantic tokens (full), folding ranges and inlay hints of one parsed document.

Semantic tokens colour names by what they resolve to (`skillc.lsp.resolve`): states `function`,
terminals and `fallback` `event`, tools `method`, tool parameters and results `parameter`, variables
`variable` (inputs, places `readonly`), fragment instances `namespace`, fragments and machines `class`,
types `type`, enum labels `enumMember`, record fields `property`, built-in functions `function`
(`defaultLibrary`); keywords, strings, comments and numbers too, so that an editor without the TextMate
grammar highlights everything. Definitions carry the `declaration` modifier.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from skillc.ir import types as T
from skillc.lsp.lines import line_index, units
from skillc.lsp.resolve import Resolved, masked, numbers
from skillc.syntax import nodes as n
from skillc.syntax.grammar import keyword_terminals

if TYPE_CHECKING:
    from skillc.ir.machine import Machine

TOKEN_TYPES = ["namespace", "class", "type", "parameter", "variable", "property", "enumMember", "event", "function",
               "method", "keyword", "comment", "string", "number"]
TOKEN_MODIFIERS = ["declaration", "readonly", "defaultLibrary"]
LEGEND = lsp.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)
_TYPE = {t: i for i, t in enumerate(TOKEN_TYPES)}
_DECLARATION, _READONLY, _LIBRARY = 1, 2, 4

_KIND = {"state": "function", "variable": "variable", "tool": "method", "param": "parameter", "result": "parameter",
         "instance": "namespace", "fragment": "class", "machine": "class", "type": "type", "label": "enumMember",
         "field": "property", "function": "function", "place": "variable"}
_LEXEMES = re.compile(r'"""(?:[^"]|"(?!""))*"""|"(?:[^"\\\n\r]|\\.)*"|#[^\n]*')
_WORDS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERALS = frozenset({"true", "false", "none"})


def _keywords() -> frozenset[str]:
    try:
        return frozenset(keyword_terminals().values()) | _LITERALS
    except Exception:  # noqa: BLE001 - the grammar being rebuilt must not break highlighting
        return _LITERALS


def _terminals(module: n.Module) -> set[tuple[str, str]]:
    """(block, name) of the terminals and fallbacks."""
    out = set()
    for item in module.items:
        if isinstance(item, (n.Machine, n.Fragment)):
            out.add((item.name, "fallback"))
            for d in item.items:
                if isinstance(d, n.Terminal):
                    out.add((item.name, d.name))
    return out


def _inputs(module: n.Module) -> set[tuple[str, str]]:
    out = set()
    for item in module.items:
        if isinstance(item, (n.Machine, n.Fragment)):
            for d in item.items:
                if isinstance(d, n.VarDecl) and d.kind == "input":
                    out.add((item.name, d.name))
    return out


def semantic_tokens(resolved: Resolved, module: n.Module) -> list[int]:
    """The relative-encoded data of `textDocument/semanticTokens/full`."""
    text = resolved.text
    index = line_index(text)
    terminals, inputs = _terminals(module), _inputs(module)
    spans: list[tuple[int, int, int, int]] = []  # (start, end, type, modifiers)
    covered: set[int] = set()
    for o in resolved.occurrences:
        if o.key is None or o.start in covered:
            continue
        covered.add(o.start)
        token = _KIND.get(o.kind, "variable")
        mods = _DECLARATION if o.definition else 0
        if o.kind == "state" and len(o.key) >= 4 and (o.key[2], o.name) in terminals:
            token = "event"
        if o.kind == "place" or (o.kind == "variable" and len(o.key) >= 4 and (o.key[2], o.name) in inputs):
            mods |= _READONLY
        if o.kind in ("function", "place") or (o.kind == "type" and o.key[1] == ""):
            mods |= _LIBRARY
        spans.append((o.start, o.end, _TYPE[token], mods))
    keywords = _keywords()
    blank = masked(text)
    for m in _WORDS.finditer(blank):
        if m.group(0) in keywords and m.start() not in covered and (m.start() == 0 or blank[m.start() - 1] != "."):
            spans.append((m.start(), m.end(), _TYPE["keyword"], 0))
    for s, e in numbers(blank):
        spans.append((s, e, _TYPE["number"], 0))
    for m in _LEXEMES.finditer(text):
        spans.append((m.start(), m.end(), _TYPE["comment" if m.group(0)[0] == "#" else "string"], 0))
    spans.sort()
    data: list[int] = []
    prev_line = prev_col = 0
    last_end = -1
    for start, end, kind, mods in spans:
        if start < last_end:
            continue  # overlaps the previous token (never expected; skipped rather than sent)
        last_end = end
        line = index.line_of(start)
        while start < end:  # one token per line (a triple-quoted string may span several)
            line_start = index.starts[line]
            line_end = index.starts[line + 1] - 1 if line + 1 < len(index.starts) else len(text)
            piece_end = min(end, line_end)
            col = units(text[line_start:start])
            length = units(text[start:piece_end])
            if length:
                data += [line - prev_line, col - prev_col if line == prev_line else col, length, kind, mods]
                prev_line, prev_col = line, col
            line += 1
            start = line_end + 1
    return data


def folding_ranges(module: n.Module, text: str) -> list[lsp.FoldingRange]:
    """Blocks over several lines, triple-quoted strings over several lines, runs of two or more comment lines."""
    index = line_index(text)
    out: list[lsp.FoldingRange] = []

    def block(node: n.Node) -> None:
        if isinstance(node, n.Block) and node.span is not None and text[node.span.end - 1:node.span.end] == "}":
            first, close = index.line_of(node.span.start), index.line_of(node.span.end - 1)
            brace_first = not index.line_text(close)[:index.position(node.span.end - 1).character].strip()
            last = close - 1 if brace_first else close
            if last > first:
                out.append(lsp.FoldingRange(start_line=first, end_line=last, kind=lsp.FoldingRangeKind.Region))
        if isinstance(node, n.Block | n.Module):
            for item in node.body:
                block(item)

    block(module)
    for m in _LEXEMES.finditer(text):
        if m.group(0).startswith('"""'):
            first, last = index.line_of(m.start()), index.line_of(m.end())
            if last > first:
                out.append(lsp.FoldingRange(start_line=first, end_line=last, kind=lsp.FoldingRangeKind.Region))
    run: list[int] = []
    for line in range(len(index.starts)):
        if index.line_text(line).lstrip().startswith("#"):
            run.append(line)
            continue
        if len(run) >= 2:
            out.append(lsp.FoldingRange(start_line=run[0], end_line=run[-1], kind=lsp.FoldingRangeKind.Comment))
        run = []
    if len(run) >= 2:
        out.append(lsp.FoldingRange(start_line=run[0], end_line=run[-1], kind=lsp.FoldingRangeKind.Comment))
    out.sort(key=lambda r: (r.start_line, r.end_line))
    return out


def inlay_hints(module: n.Module, machine: Machine | None, text: str, lo: int, hi: int) -> list[lsp.InlayHint]:
    """`: T` after variables a tool result is bound to (`writes status = exit_code`) and after variables
    an edge assigns (`{ tries += 1 }`), inside [lo, hi]: their types without looking up the declaration."""
    if machine is None:
        return []
    index = line_index(text)
    out: list[tuple[int, str]] = []

    def hint(span_start: int, var: str) -> None:
        v = machine.variables.get(var)
        if v is None or not lo <= span_start <= hi or text[span_start:span_start + len(var)] != var:
            return
        out.append((span_start + len(var), f": {T.show(v.type)}"))

    owner = next((i for i in module.items if isinstance(i, n.Machine)), None)
    if owner is None:
        return []
    for d in owner.items:
        if not isinstance(d, n.State) or d.span is None or d.span.end < lo or d.span.start > hi:
            continue
        for item in d.items:
            if isinstance(item, n.Writes):
                for w in item.items:
                    if w.result is not None and w.span is not None:
                        hint(w.span.start, w.var)
            elif isinstance(item, n.Edge):
                for a in item.assigns:
                    if a.span is not None:
                        hint(a.span.start, a.target)
    starts = sorted(out)
    return [lsp.InlayHint(position=index.position(at), label=label, kind=lsp.InlayHintKind.Type, padding_left=False)
            for at, label in starts]


__all__ = ["LEGEND", "folding_ranges", "inlay_hints", "semantic_tokens"]
