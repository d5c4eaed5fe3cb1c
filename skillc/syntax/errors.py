"""Turn Lark's parse errors into coded, human diagnostics.

Common mistakes are recognised from example programs (Lark's
`match_examples` maps the failing parser state back to the example that fails
the same way); the rest are classified from the set of tokens the parser would
have accepted, and worded as "skillc was looking for …".
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from skillc.diagnostics import Code, Diagnostic, Label, SourceFile, Span, Suggestion, codes, make
from skillc.syntax.grammar import arrow_terminal, keyword_terminals

# label -> (code, message, label text, examples that fail in the same parser state)
_EXAMPLES: dict[str, tuple[Code, str, str, list[str]]] = {
    "chained": (codes.CHAINED_COMPARISON, "comparisons cannot be chained", "second comparison", [
        "machine m { model a { when a < b < c -> d } }",
        "machine m { model a { when a == b == c -> d } }",
        "machine m { model a { when a != 1 < c -> d } }",
        "machine m { model a { when a >= 1 > c -> d } }",
        "machine m { model a { when a <= 1 <= c -> d } }",
        "machine m { model a { when a < 1 == c -> d } }",
        "machine m { model a { when a == 1 != c -> d } }",
        "machine m { model a { when a in b in c -> d } }",
    ]),
    "quotation": (codes.MISSING_QUOTATION, "this rule has no quotation", "expected the quoted sentence here", [
        "machine m { rule required a }",
        "machine m { rule forbid a }",
        "machine m { rule order a before b }",
        "machine m { rule required a rule forbid b \"x\" }",
        "machine m { rule required a.b }",
        "machine m { rule order a before b.c }",
    ]),
}

Signature = tuple[int, frozenset[str]]  # an LALR parser state and the tokens it accepts

_HUMAN = {
    "NAME": "a name",
    "INT": "an integer",
    "FLOAT": "a number",
    "STRING": "a string",
    "TRIPLE_STRING": "a string",
    "$END": "the end of the file",
}

_CLASSES = [
    # (code, message, label, hint, tokens that identify the context)
    (codes.EXPECTED_EDGE_TARGET, "this edge has no target state", "expected a state name", None, {"__EDGE_TARGET__"}),
    (codes.MISSING_ARROW, "missing `->` between the guard and the target", "expected `->` before this", None,
     {"__MISSING_ARROW__"}),
    (codes.EXPECTED_EXPRESSION, "an expression is missing here", "expected an expression", None, {"__EXPR__"}),
    (codes.EXPECTED_TYPE, "a type is missing or malformed here", "expected a type", None, {"__TYPE__"}),
    (codes.EXPECTED_STATE_ITEM, "unexpected {found} inside a state", "not a state item",
     "a state holds `reads`, `writes`, `prompt`, `call`, `doc`, `from` and edges `when GUARD -> target` / `-> target`",
     {"READS", "WRITES", "PROMPT", "WHEN"}),
    (codes.EXPECTED_MACHINE_ITEM, "unexpected {found} inside a machine", "not a declaration",
     "declarations start with `doc`, `source`, `tool`, `record`, `enum`, `input`, `var`, `counter`, "
     "`start`, `model`, `judge`, `terminal`, `fallback`, `rule`, `use` or `allow`",
     {"MODEL", "JUDGE", "INPUT", "VAR", "COUNTER", "TERMINAL", "RULE"}),
    (codes.EXPECTED_TOP_LEVEL_ITEM, "unexpected {found} at the top level of the file", "not allowed here",
     "a file holds `import`, `record`, `enum`, `fragment` and `machine` declarations",
     {"MACHINE", "FRAGMENT", "IMPORT"}),
]

_EXPR_START = {"NAME", "INT", "FLOAT", "STRING", "TRIPLE_STRING", "TRUE", "FALSE", "NONE", "NOT", "LPAR",
               "LSQB", "MINUS"}
_TYPE_START = {"LIST", "MAP", "ENUM"}


def _describe_terminal(parser: lark.Lark, name: str) -> str:
    if name in _HUMAN:
        return _HUMAN[name]
    keyword = keyword_terminals().get(name)
    if keyword is not None:
        return f"`{keyword}`"
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name.lower()
    return f"`{pattern.value}`" if pattern.type == "str" else name.lower()


def _describe_token(tok: lark.Token) -> str:
    if tok.type == "$END":
        return "the end of the file"
    text = str(tok)
    if tok.type in ("STRING", "TRIPLE_STRING"):
        return "a string"
    if tok.type in ("INT", "FLOAT"):
        return f"number `{text}`"
    if tok.type == "NAME":
        return f"name `{text}`"
    return f"`{text}`"


def _open_block(text: str, upto: int) -> int | None:
    """Offset of the innermost `{` still open at `upto` (strings and comments skipped)."""
    stack: list[int] = []
    for m in re.finditer(r'"""(?:[^"]|"(?!""))*"""|"(?:[^"\\\n]|\\.)*"|#[^\n]*|[{}]', text[:upto]):
        tok = m.group(0)
        if tok == "{":
            stack.append(m.start())
        elif tok == "}" and stack:
            stack.pop()
    return stack[-1] if stack else None


def _signature(exc: UnexpectedInput) -> Signature | None:
    """The parser state an error happened in: LALR state number and acceptable tokens."""
    state = getattr(exc, "state", None)
    stack = getattr(state, "state_stack", None)
    if not stack:
        return None
    top: int = stack[-1]
    return top, frozenset(_expected(exc))


def example_index(parse_fn: Callable[[str], object]) -> dict[Signature, str]:
    """Parser-state signature → example label (Lark's `match_examples`, computed once per parser).

    State numbers are only comparable within one parser instance, so the
    examples are parsed by the same instance that reports the error.
    """
    index: dict[Signature, str] = {}
    for label, (_, _, _, examples) in _EXAMPLES.items():
        for example in examples:
            try:
                parse_fn(example)
            except UnexpectedInput as exc:
                sig = _signature(exc)
                if sig is not None:
                    index.setdefault(sig, label)
            else:  # pragma: no cover - an example that parses is a bug in the table
                raise AssertionError(f"syntax example parses: {example!r}")
    return index


def _expected(exc: UnexpectedInput) -> set[str]:
    accepts = getattr(exc, "accepts", None) or getattr(exc, "expected", None) or set()
    return set(accepts)


def syntax_error(exc: UnexpectedInput, source: SourceFile, examples: dict[Signature, str],
                 parser: lark.Lark) -> Diagnostic:
    """The diagnostic for a Lark parse error; `examples` comes from `example_index` for the same parser."""
    text = source.text
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        if ch == '"':
            end = text.find("\n", pos)
            end = len(text) if end == -1 else end
            return make(codes.UNTERMINATED_STRING, "this string is not closed on its line", Span(source, pos, end),
                        label="unterminated string")
        shown = repr(ch)[1:-1] if ch.isprintable() and ch != "" else f"U+{ord(ch):04X}" if ch else "?"
        expected = sorted({_describe_terminal(parser, t) for t in exc.allowed or ()})
        return make(codes.UNEXPECTED_CHARACTER, f"unexpected character `{shown}`", Span(source, pos, pos + 1),
                    label="no token starts with this",
                    notes=[f"skillc was looking for {_join(expected)}"] if expected else ())

    if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
        at = len(text.rstrip())
        opened = _open_block(text, len(text))
        secondary = []
        if opened is not None:
            secondary.append(Label(Span(source, opened, opened + 1), "this block is never closed"))
        expected = sorted({_describe_terminal(parser, t) for t in _expected(exc)})
        return make(codes.UNEXPECTED_END_OF_FILE, "the file ends before the construct is complete",
                    Span(source, at, at), label="file ends here", secondary=secondary,
                    notes=[f"skillc was looking for {_join(expected)}"] if expected else ())

    assert isinstance(exc, UnexpectedToken)
    tok = exc.token
    span = Span(source, tok.start_pos, tok.end_pos if tok.end_pos is not None else tok.start_pos + len(tok))
    found = _describe_token(tok)
    if str(tok) == ">" and tok.start_pos > 0 and text[tok.start_pos - 1] == "-":
        # Where `->` cannot follow, the contextual lexer splits it into `-` `>`; report the arrow.
        span = Span(source, tok.start_pos - 1, tok.start_pos + 1)
        found = "`->`"
    signature = _signature(exc)
    label = examples.get(signature) if signature is not None else None
    if label is not None:
        code, message, lab, _ = _EXAMPLES[label]
        return make(code, message, span, label=lab)
    acceptable = _expected(exc)
    wanted = sorted({_describe_terminal(parser, t) for t in acceptable
                     if not t.startswith("__") or t == arrow_terminal()})
    notes = [f"skillc was looking for {_join(wanted)}"] if wanted else []
    context = _context(exc, acceptable)
    suggestion = _did_you_mean(tok, acceptable)
    for code, message, lab, hint, marks in _CLASSES:
        if marks & context:
            return make(code, message.format(found=found), span, label=lab, notes=notes,
                        hint=suggestion or hint or None)
    return make(codes.UNEXPECTED_TOKEN, f"unexpected {found}", span, label="unexpected here", notes=notes,
                hint=suggestion or None)


def _did_you_mean(tok: lark.Token, expected: set[str]) -> Suggestion | None:
    """Suggest the keyword a misspelt name was probably meant to be."""
    if tok.type != "NAME":
        return None
    keywords = keyword_terminals()
    candidates = [keywords[t] for t in expected if t in keywords]
    close = difflib.get_close_matches(str(tok), candidates, n=1, cutoff=0.6)
    return Suggestion(str(tok), close[0]) if close else None


def _context(exc: UnexpectedToken, expected: set[str]) -> set[str]:
    """Tokens that identify where the parser was, plus synthetic marks for common situations."""
    marks = set(expected)
    prev = exc.token_history[-1] if getattr(exc, "token_history", None) else None
    arrow = arrow_terminal()
    if prev is not None and str(prev) == "->" and "NAME" in expected:
        marks.add("__EDGE_TARGET__")
    elif arrow in expected and ("AND" in expected or "OR" in expected) and exc.token.type == "NAME":
        marks.add("__MISSING_ARROW__")
    elif expected and expected <= (_EXPR_START | {"LBRACE"}) and "NAME" in expected and "INT" in expected:
        marks.add("__EXPR__")
    elif "NAME" in expected and expected & _TYPE_START:
        marks.add("__TYPE__")
    return marks


def _join(items: list[str], limit: int = 8) -> str:
    if len(items) > limit:
        items = items[:limit] + ["…"]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " or " + items[-1]
