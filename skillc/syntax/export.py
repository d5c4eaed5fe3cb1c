"""The .skm grammar for grammar-constrained decoding: a standalone Lark file and llama.cpp GBNF.

`grammar/skm.lark` stays the single source of truth. `lark_grammar()` ships it as
one self-contained file (for outlines- or llguidance-style consumers);
`gbnf_grammar()` converts Lark's own parse of it into GBNF
(https://github.com/ggml-org/llama.cpp/blob/master/grammars/README.md):

* rules keep their EBNF shape; direct left recursion (`a: a "+" b | b`) becomes
  repetition (`a ::= b ("+" b)*`), since llama.cpp rejects left-recursive rules;
* regular-expression terminals become GBNF character classes and sequences; a
  construct with no faithful translation raises `GrammarExportError`;
* GBNF has no `%ignore`, so the ignored whitespace and comments become `ws`,
  written before every token. Lark matches words greedily (keywords end at a word
  boundary, NAME and numbers take every word character), so where a word may
  follow a word, the separator is `ws1`, which needs at least one character.

Two differences from the parser remain, both harmless for generation: where a
keyword and a name may both stand (a type named `map`), Lark's contextual lexer
takes the keyword while the GBNF allows the name; and the GBNF wants whitespace
before a word wherever the token before it may end in a word character, even
when it ended in a bracket or a number (`}model`, `1and`), which Lark would split.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from re import _constants as sre
from re import _parser as sre_parse
from typing import Any, TypeGuard

import lark
from lark.grammar import NonTerminal, Terminal
from lark.lexer import PatternStr, TerminalDef

from skillc.syntax.grammar import grammar_text

FORMATS = ("lark", "gbnf")

_START = "module"  # the start rule of every skillc parser (grammar.make_lark)


class GrammarExportError(Exception):
    """The grammar uses a construct that the export cannot translate faithfully."""


def export(fmt: str) -> str:
    """The grammar in format `fmt`: "lark" or "gbnf"."""
    if fmt == "lark":
        return lark_grammar()
    if fmt == "gbnf":
        return gbnf_grammar()
    raise ValueError(f"unknown grammar format {fmt!r}; expected one of: {', '.join(FORMATS)}")


# ---------------------------------------------------------------- Lark

_IMPORT_LINE = re.compile(r"^%import\b.*$", re.MULTILINE)
_IMPORT = re.compile(r"%import[ \t]+(\w+)(?:\.(\w+)(?:[ \t]*->[ \t]*(\w+))?|[ \t]*\(([\w ,\t]+)\))[ \t]*(//.*)?")
# A terminal definition in a bundled grammar: its name, then the rest up to the
# end of its last continuation line (one that starts with `|`).
_TERM_DEF = re.compile(r"^(_?[A-Z][_A-Z0-9]*)((?:\.-?\d+)?[ \t]*:.*(?:\n[ \t]+\|.*)*)", re.MULTILINE)
_LARK_LITERAL = re.compile(r'"(?:\\.|[^"\\\n])*"i?|/(?!/)(?:\\/|\\\\|[^/\n])*?/[imslux]*')
_TERM_NAME = re.compile(r"\b_?[A-Z][_A-Z0-9]*\b")


@functools.cache
def lark_grammar() -> str:
    """The Lark grammar as shipped, with `%import`ed terminals inlined so that the file stands alone."""
    text = grammar_text()
    emitted: set[str] = set()
    return _IMPORT_LINE.sub(lambda line: _inline_import(line.group(0), emitted), text)


def _inline_import(line: str, emitted: set[str]) -> str:
    """The definitions that replace one `%import` line of a bundled Lark grammar."""
    match = _IMPORT.fullmatch(line.strip())
    if match is None:
        raise GrammarExportError(f"cannot inline {line.strip()!r}: only terminals of Lark's bundled grammars can be "
                                 "(`%import common.WS`, `%import common.WS -> SP`, `%import common (A, B)`)")
    module, single, alias, several = match.group(1, 2, 3, 4)
    wanted = {single: alias or single} if single else {n.strip(): n.strip() for n in several.split(",") if n.strip()}
    definitions = _bundled_terminals(module)
    for name in wanted:
        if name not in definitions:
            raise GrammarExportError(f"cannot inline {line.strip()!r}: {name} is not a terminal of {module}.lark")

    # Terminals the wanted ones are built from, renamed the way Lark's import namespaces them.
    renames = dict(wanted)
    pending = list(wanted)
    while pending:
        for dependency in _dependencies(definitions[pending.pop()]):
            if dependency in definitions and dependency not in renames:
                renames[dependency] = f"{module.upper()}__{dependency}"
                pending.append(dependency)

    lines = [f"// {', '.join(wanted)} from Lark's {module}.lark, inlined so that this file stands alone"]
    for name, new_name in renames.items():
        if new_name not in emitted:
            emitted.add(new_name)
            lines.append(new_name + _rename_terminals(definitions[name], renames))
    return "\n".join(lines)


@functools.cache
def _bundled_terminals(module: str) -> dict[str, str]:
    """Terminal name → the rest of its definition (from the priority or colon on), in a grammar bundled with Lark."""
    path = Path(lark.__file__).parent / "grammars" / f"{module}.lark"
    if not path.is_file():
        raise GrammarExportError(f"cannot inline imports from {module!r}: it is not a grammar bundled with Lark")
    return {m.group(1): m.group(2) for m in _TERM_DEF.finditer(path.read_text(encoding="utf-8"))}


def _outside_literals(definition: str) -> list[tuple[bool, str]]:
    """The definition cut into (is_literal, text) pieces, so names are only looked for outside strings and regexps."""
    pieces, at = [], 0
    for literal in _LARK_LITERAL.finditer(definition):
        pieces += [(False, definition[at:literal.start()]), (True, literal.group(0))]
        at = literal.end()
    return pieces + [(False, definition[at:])]


def _dependencies(definition: str) -> list[str]:
    """Terminal names used in a definition."""
    return [name for is_literal, text in _outside_literals(definition) if not is_literal
            for name in _TERM_NAME.findall(text)]


def _rename_terminals(definition: str, renames: dict[str, str]) -> str:
    """The definition with terminal names replaced."""
    return "".join(text if is_literal else _TERM_NAME.sub(lambda m: renames.get(m.group(0), m.group(0)), text)
                   for is_literal, text in _outside_literals(definition))


# ---------------------------------------------------------------- grammar IR shared by rules and terminals

@dataclass(frozen=True)
class _Lit:
    """A literal string."""

    text: str


@dataclass(frozen=True)
class _Chars:
    """One character from a class: inclusive code point ranges, possibly negated."""

    ranges: tuple[tuple[int, int], ...]
    negated: bool = False


@dataclass(frozen=True)
class _Ref:
    """A rule (lowercase) or a named terminal (uppercase)."""

    name: str


@dataclass(frozen=True)
class _Seq:
    items: tuple[_IR, ...]


@dataclass(frozen=True)
class _Alt:
    items: tuple[_IR, ...]


@dataclass(frozen=True)
class _Rep:
    """`item` repeated at least `min` times; only (0, 1), (0, None) and (1, None) occur."""

    item: _IR
    min: int
    max: int | None


_IR = _Lit | _Chars | _Ref | _Seq | _Alt | _Rep  # a terminal's or rule's language
_EMPTY = _Seq(())


def _seq(items: Iterable[_IR], join_literals: bool = False) -> _IR:
    """A sequence, flattened; adjacent literals joined if they are characters of one token."""
    flat: list[_IR] = []
    for item in items:
        for part in item.items if isinstance(item, _Seq) else (item,):
            if join_literals and flat and isinstance(part, _Lit) and isinstance(flat[-1], _Lit):
                flat[-1] = _Lit(flat[-1].text + part.text)
            else:
                flat.append(part)
    return flat[0] if len(flat) == 1 else _Seq(tuple(flat))


def _alt(items: Iterable[_IR]) -> _IR:
    """A choice, flattened and without duplicates."""
    flat: list[_IR] = []
    for item in items:
        for part in item.items if isinstance(item, _Alt) else (item,):
            if part not in flat:
                flat.append(part)
    return flat[0] if len(flat) == 1 else _Alt(tuple(flat))


def _repeat(item: _IR, low: int, high: int | None) -> _IR:
    """`item{low,high}` in terms of `?`, `*` and `+`."""
    if high is not None and high < low:
        raise GrammarExportError(f"bad repetition range {low}..{high}")
    if high is None:
        tail = _Rep(item, 1, None) if low else _Rep(item, 0, None)
        return _seq([item] * (low - 1) + [tail]) if low else tail
    optional: _IR = _EMPTY
    for _ in range(high - low):  # a{0,3} = (a (a a?)?)?
        optional = _Rep(_seq([item, optional]), 0, 1)
    return _seq([item] * low + [optional])


# ---------------------------------------------------------------- regular expressions → IR

_WORD_RANGES = ((ord("0"), ord("9")), (ord("A"), ord("Z")), (ord("_"), ord("_")), (ord("a"), ord("z")))
_MAX_CHAR = 0x10FFFF


def _regex_ir(pattern: str, where: str) -> _IR:
    """The IR of a Python regular expression that Lark uses as a terminal."""
    try:
        parsed = sre_parse.parse(pattern)
    except re.error as exc:
        raise GrammarExportError(f"{where}: bad regular expression {pattern!r}: {exc}") from None
    if parsed.state.flags & ~(sre.SRE_FLAG_UNICODE):
        raise GrammarExportError(f"{where}: regular expression flags are not supported in {pattern!r}")
    return _RegexTranslator(pattern, where).sequence(list(parsed))


class _RegexTranslator:
    """Translates the parse tree of Python's `re` module, refusing what GBNF cannot say."""

    def __init__(self, pattern: str, where: str) -> None:
        self.pattern, self.where = pattern, where

    def fail(self, what: str) -> GrammarExportError:
        return GrammarExportError(f"{self.where}: cannot translate {what} in /{self.pattern}/ to GBNF")

    def sequence(self, items: list[Any]) -> _IR:
        out: list[_IR] = []
        i = 0
        while i < len(items):
            block = self.block_string(items, i)
            if block is not None:
                out.append(block)
            else:
                out.append(self.item(*items[i]))
            i += 1
        return _seq(out, join_literals=True)

    def item(self, op: object, av: Any) -> _IR:
        if op is sre.LITERAL:
            return _Lit(chr(av))
        if op is sre.NOT_LITERAL:
            return _Chars(((av, av),), negated=True)
        if op is sre.ANY:  # no DOTALL (flags are refused): any character but a newline
            return _Chars(((10, 10),), negated=True)
        if op is sre.IN:
            return self.char_class(av)
        if op is sre.MAX_REPEAT:
            low, high, sub = av
            return _repeat(self.sequence(list(sub)), low, None if high is sre.MAXREPEAT else high)
        if op is sre.SUBPATTERN:
            _group, add_flags, del_flags, sub = av
            if add_flags or del_flags:
                raise self.fail("inline flags")
            return self.sequence(list(sub))
        if op is sre.BRANCH:
            return _alt([self.sequence(list(branch)) for branch in av[1]])
        if op in (sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            # A lazy or possessive repeat changes where the token ends, which a grammar cannot express.
            raise self.fail("a lazy or possessive repetition")
        raise self.fail(f"{str(op).lower()} (lookaround, anchor, backreference or atomic group)")

    def char_class(self, members: Any) -> _Chars:
        ranges: list[tuple[int, int]] = []
        negated = False
        for op, av in members:
            if op is sre.NEGATE:
                negated = True
            elif op is sre.LITERAL:
                ranges.append((av, av))
            elif op is sre.RANGE:
                ranges.append(av)
            else:
                # \d, \w and \s match Unicode digits, letters and spaces; spell out the class instead.
                raise self.fail(f"the class shorthand {str(av).lower()}")
        merged: list[tuple[int, int]] = []
        for lo, hi in sorted(ranges):
            if merged and lo <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
            else:
                merged.append((lo, hi))
        return _Chars(tuple(merged), negated)

    def block_string(self, items: list[Any], i: int) -> _IR | None:
        """The block-string idiom `D(?:[^q]|q(?!q{k-1}))*D` with `D = q{k}`, e.g. `\"\"\"(?:[^"]|"(?!""))*\"\"\"`.

        The lookahead says the content holds no run of k quotes and does not end
        in a quote, that is `([^q] | q{1,k-1} [^q])*`, which GBNF can say.
        """
        op, av = items[i]
        if op is not sre.MAX_REPEAT or av[0] != 0 or av[1] is not sre.MAXREPEAT or len(av[2]) != 1:
            return None
        branch_op, branch = av[2][0]
        if branch_op is not sre.BRANCH or len(branch[1]) != 2:
            return None
        plain, quoted = sorted((list(b) for b in branch[1]), key=len)
        if len(quoted) != 2 or quoted[0][0] is not sre.LITERAL or quoted[1][0] is not sre.ASSERT_NOT:
            return None
        quote = quoted[0][1]
        direction, lookahead = quoted[1][1]
        run = len(lookahead) + 1
        if (direction != 1 or any(x != (sre.LITERAL, quote) for x in lookahead)
                or plain not in ([(sre.NOT_LITERAL, quote)], [(sre.IN, [(sre.NEGATE, None), (sre.LITERAL, quote)])])
                or items[i + 1:i + 1 + run] != [(sre.LITERAL, quote)] * run):
            return None
        other = _Chars(((quote, quote),), negated=True)
        return _Rep(_alt([_seq([_Lit(chr(quote) * n), other] if n else [other]) for n in range(run)]), 0, None)


def _chars_kinds(chars: _Chars) -> frozenset[str]:
    """Whether a class holds word characters ("w") and other characters ("n")."""
    def covered(lo: int, hi: int) -> int:
        return sum(max(0, min(hi, b) - max(lo, a) + 1) for a, b in chars.ranges)

    word_total = sum(b - a + 1 for a, b in _WORD_RANGES)
    word_in = sum(covered(a, b) for a, b in _WORD_RANGES)
    all_in = covered(0, _MAX_CHAR)
    if chars.negated:
        word_in, all_in = word_total - word_in, _MAX_CHAR + 1 - all_in
    return frozenset(k for k, present in (("w", word_in > 0), ("n", all_in > word_in)) if present)


def _char_kind(char: str) -> str:
    return "w" if char.isascii() and (char.isalnum() or char == "_") else "n"


# ---------------------------------------------------------------- GBNF text

@dataclass(frozen=True)
class _G:
    """GBNF text and how tightly it binds: 0 a choice, 1 a sequence or repetition, 2 an atom."""

    text: str
    prec: int = 2


_G_EMPTY = _G("", 2)


def _g_seq(parts: Iterable[_G]) -> _G:
    parts = [p for p in parts if p.text]
    if not parts:
        return _G_EMPTY
    if len(parts) == 1:
        return parts[0]
    return _G(" ".join(p.text if p.prec else f"({p.text})" for p in parts), 1)


def _g_alt(parts: Iterable[_G]) -> _G:
    unique = list(dict.fromkeys(parts))
    choices = [p for p in unique if p.text]
    if not choices:
        return _G_EMPTY
    choice = choices[0] if len(choices) == 1 else _G(" | ".join(p.text for p in choices), 0)
    return _g_rep(choice, "?") if len(choices) < len(unique) else choice


def _g_rep(part: _G, op: str) -> _G:
    return _G((part.text if part.prec == 2 else f"({part.text})") + op, 1)


_G_ESCAPES = {"\n": r"\n", "\r": r"\r", "\t": r"\t", "\\": r"\\"}


def _g_char(code: int, in_class: bool) -> str:
    """One character inside a GBNF string literal or character class."""
    char = chr(code)
    if char in _G_ESCAPES:
        return _G_ESCAPES[char]
    if code < 0x20 or code == 0x7F or (in_class and char in "[]^-"):
        return f"\\x{code:02X}"
    return '\\"' if char == '"' and not in_class else char


def _render(node: _IR, names: dict[str, str]) -> _G:
    """GBNF for a terminal's IR; `names` maps referenced terminals to rule names."""
    if isinstance(node, _Lit):
        return _G('"' + "".join(_g_char(ord(c), False) for c in node.text) + '"')
    if isinstance(node, _Chars):
        if not node.ranges:
            raise GrammarExportError("an empty character class")
        body = "".join(_g_char(a, True) if a == b else _g_char(a, True) + ("" if b == a + 1 else "-") + _g_char(b, True)
                       for a, b in node.ranges)
        return _G(f"[{'^' if node.negated else ''}{body}]")
    if isinstance(node, _Ref):
        return _G(names[node.name])
    if isinstance(node, _Seq):
        return _g_seq([_render(i, names) for i in node.items])
    if isinstance(node, _Alt):
        return _g_alt([_render(i, names) for i in node.items])
    return _g_rep(_render(node.item, names), {(0, 1): "?", (0, None): "*", (1, None): "+"}[node.min, node.max])


# ---------------------------------------------------------------- Lark → GBNF

_HOIST = "hoist"  # emission state: the caller has written the separator before this rule's first token
_FREE, _AFTER_WORD = 0, 1  # emission states: the last token ended in punctuation (or nothing came yet), or in a word
_State = int | str

_LEGEND = """\
# `ws` is the whitespace and comments that the Lark grammar ignores; `ws1` (at least one)
# separates a word from a word that follows it; `*-after-word` rules are variants of rules
# that can start with a word, for use right after one; `t-*` rules are the terminals.
"""


@functools.cache
def gbnf_grammar() -> str:
    """The grammar as llama.cpp GBNF, converted from Lark's parse of `grammar/skm.lark`."""
    return ("# The .skm language as a llama.cpp grammar (GBNF), generated from grammar/skm.lark\n"
            "# by skillc.syntax.export: do not edit.\n" + lark_to_gbnf(grammar_text(), _START))


def lark_to_gbnf(text: str, start: str) -> str:
    """GBNF for the language of a Lark grammar (from rule `start`); raises GrammarExportError where it cannot."""
    return _GbnfConverter(lark.Lark(text, start=start, parser="earley"), start).convert()


class _GbnfConverter:
    """One Lark grammar's conversion: read its rules and terminals, analyse them, then write GBNF."""

    def __init__(self, parser: lark.Lark, start: str) -> None:
        self.start = start
        self.terminals = {t.name: t for t in parser.terminals}
        self.ignored = list(parser.ignore_tokens)
        by_raw = {t.pattern.raw: t for t in parser.terminals if t.pattern.raw is not None}
        self.term_ir: dict[str, _IR] = {}
        for name, terminal in self.terminals.items():
            pattern = terminal.pattern
            if pattern.flags:
                raise GrammarExportError(f"terminal {name}: flags {''.join(sorted(pattern.flags))} are not supported")
            self.term_ir[name] = (_Lit(pattern.value) if isinstance(pattern, PatternStr)
                                  else _regex_ir(pattern.value, f"terminal {name}"))
        self.rules: dict[str, _IR] = {}
        for name, params, tree, _options in parser.grammar.rule_defs:
            if params:
                raise GrammarExportError(f"rule {name}: template rules are not supported")
            self.rules[name] = _left_factor(_remove_left_recursion(name, self.tree_ir(tree, by_raw, name)))
        self.analyse()
        self.check_left_recursion()
        self.names = self.name_map()
        self.bodies: dict[str, _G] = {}
        self.pending: list[tuple[str, str, _State]] = []
        self.hoistable_memo: dict[str, bool] = {}
        self.used_terminals: set[str] = set()

    # -- reading Lark's grammar

    def tree_ir(self, tree: object, by_raw: dict[str, TerminalDef], rule: str) -> _IR:
        """IR of a rule's EBNF tree, as `lark.load_grammar` builds it."""
        if isinstance(tree, NonTerminal | Terminal):
            return _Ref(tree.name)
        if not isinstance(tree, lark.Tree):
            raise GrammarExportError(f"rule {rule}: unexpected {tree!r}")
        kind: str = tree.data
        children: list[Any] = tree.children
        if kind == "expansions":
            return _alt([self.tree_ir(c, by_raw, rule) for c in children])
        if kind == "expansion":
            return _seq([self.tree_ir(c, by_raw, rule) for c in children])
        if kind in ("alias", "value"):  # an alias names the tree node; it does not change the language
            return self.tree_ir(children[0], by_raw, rule)
        if kind == "maybe":
            return _Rep(self.tree_ir(children[0], by_raw, rule), 0, 1)
        if kind == "expr":
            item, op, *bounds = children
            low: int
            high: int | None
            if op == "~":
                low, high = (int(bounds[0]),) * 2 if len(bounds) == 1 else map(int, bounds)
            else:
                low, high = {"?": (0, 1), "*": (0, None), "+": (1, None)}[op]
            return _repeat(self.tree_ir(item, by_raw, rule), low, high)
        if kind == "literal":
            terminal = by_raw.get(children[0].value)
            if terminal is None:
                raise GrammarExportError(f"rule {rule}: cannot find the terminal Lark made for {children[0].value}")
            pattern = terminal.pattern
            return _Lit(pattern.value) if isinstance(pattern, PatternStr) and not pattern.flags else _Ref(terminal.name)
        raise GrammarExportError(f"rule {rule}: the construct {kind!r} is not supported")

    # -- analysis

    def is_rule(self, node: _IR) -> TypeGuard[_Ref]:
        return isinstance(node, _Ref) and node.name in self.rules

    def analyse(self) -> None:
        """Nullability and the kinds ("w" word, "n" other) of the first and last characters, to a fixpoint."""
        self.term_nullable = {n: self.nullable(ir) for n, ir in self.term_ir.items()}
        self.term_edges = {n: (self.edge(ir, 0), self.edge(ir, -1)) for n, ir in self.term_ir.items()}
        for name, nullable in self.term_nullable.items():
            if nullable:
                raise GrammarExportError(f"terminal {name} matches the empty string")
        self.rule_nullable = dict.fromkeys(self.rules, False)
        self.rule_edges: dict[str, tuple[frozenset[str], frozenset[str]]] = {
            name: (frozenset(), frozenset()) for name in self.rules}
        changed = True
        while changed:
            changed = False
            for name, body in self.rules.items():
                facts = self.nullable(body), (self.edge(body, 0), self.edge(body, -1))
                if facts != (self.rule_nullable[name], self.rule_edges[name]):
                    self.rule_nullable[name], self.rule_edges[name] = facts
                    changed = True

    def nullable(self, node: _IR) -> bool:
        if isinstance(node, _Lit | _Chars):
            return False
        if isinstance(node, _Ref):
            return self.rule_nullable[node.name] if node.name in self.rules else self.term_nullable[node.name]
        if isinstance(node, _Seq):
            return all(self.nullable(i) for i in node.items)
        if isinstance(node, _Alt):
            return any(self.nullable(i) for i in node.items)
        return node.min == 0 or self.nullable(node.item)

    def edge(self, node: _IR, side: int) -> frozenset[str]:
        """Kinds of the character a match can start (side 0) or end (side -1) with."""
        if isinstance(node, _Lit):
            return frozenset(_char_kind(node.text[side]))
        if isinstance(node, _Chars):
            return _chars_kinds(node)
        if isinstance(node, _Ref):
            return (self.rule_edges if node.name in self.rules else self.term_edges)[node.name][side]
        if isinstance(node, _Seq):
            kinds: frozenset[str] = frozenset()
            for item in node.items if side == 0 else reversed(node.items):
                kinds |= self.edge(item, side)
                if not self.nullable(item):
                    break
            return kinds
        if isinstance(node, _Alt):
            return frozenset[str]().union(*(self.edge(i, side) for i in node.items))
        return self.edge(node.item, side)

    def leftmost_rules(self, node: _IR) -> set[str]:
        """Rules that can start a match of `node` (after nullable prefixes)."""
        if self.is_rule(node):
            return {node.name}
        if isinstance(node, _Seq):
            found: set[str] = set()
            for item in node.items:
                found |= self.leftmost_rules(item)
                if not self.nullable(item):
                    break
            return found
        if isinstance(node, _Alt):
            return set[str]().union(*(self.leftmost_rules(i) for i in node.items))
        if isinstance(node, _Rep):
            return self.leftmost_rules(node.item)
        return set()

    def check_left_recursion(self) -> None:
        """Refuse indirect left recursion, which llama.cpp rejects and `_remove_left_recursion` does not undo."""
        graph = {name: self.leftmost_rules(body) for name, body in self.rules.items()}
        done: set[str] = set()

        def visit(name: str, path: list[str]) -> None:
            if name in path:
                cycle = path[path.index(name):] + [name]
                raise GrammarExportError(f"left recursion through {' -> '.join(cycle)} cannot be written in GBNF")
            if name not in done:
                for nxt in sorted(graph[name]):
                    visit(nxt, path + [name])
                done.add(name)

        for name in self.rules:
            visit(name, [])

    # -- names

    def name_map(self) -> dict[str, str]:
        """Lark name → GBNF name (GBNF names are [a-z0-9-])."""
        names = {name: name.strip("_").replace("_", "-").lower() for name in self.rules}
        names |= {name: "t-" + name.strip("_").replace("_", "-").lower() for name in self.terminals}
        taken = ["root", "ws", "ws1", "ws-end", "ws-item"]
        taken += list(names.values()) + [names[n] + "-after-word" for n in self.rules]
        clashes = sorted({n for n in taken if taken.count(n) > 1})
        if clashes:
            raise GrammarExportError(f"grammar names clash once written as GBNF names: {', '.join(clashes)}")
        return names

    # -- emission

    def hoistable(self, name: str) -> bool:
        """Whether callers can write the separator before the rule's first token.

        So they can when the rule never matches nothing, its first tokens are all
        words or all not, and no optional part comes before them; the other rules
        get a variant for use after a word instead.
        """
        if name not in self.hoistable_memo:
            self.hoistable_memo[name] = False  # recursion only reaches here through a left-recursive cycle
            self.hoistable_memo[name] = (not self.rule_nullable[name] and len(self.rule_edges[name][0]) == 1
                                         and self.clean_start(self.rules[name]))
        return self.hoistable_memo[name]

    def clean_start(self, node: _IR) -> bool:
        if self.is_rule(node):
            return self.hoistable(node.name)
        if isinstance(node, _Seq):
            return bool(node.items) and not self.nullable(node.items[0]) and self.clean_start(node.items[0])
        if isinstance(node, _Alt):
            return all(self.clean_start(i) for i in node.items)
        if isinstance(node, _Rep):
            return node.min > 0 and not self.nullable(node.item) and self.clean_start(node.item)
        return True

    @staticmethod
    def merge(states: set[_State]) -> _State:
        """One state standing for several: after a word if any might be (a conservative choice)."""
        if len(states) == 1:
            return next(iter(states))
        if _HOIST in states:
            raise GrammarExportError("internal error: a hoisted rule starts with an optional part")
        return max(s for s in states if isinstance(s, int))

    @staticmethod
    def separator(state: _State, starts_with_word: bool) -> _G:
        if state == _HOIST:
            return _G_EMPTY
        return _G("ws1" if state == _AFTER_WORD and starts_with_word else "ws")

    def emit(self, node: _IR, state: _State) -> tuple[_G, _State]:
        """GBNF for `node` entered in `state`, and the state it leaves."""
        if self.is_rule(node):
            return self.call(node.name, state)
        if isinstance(node, _Lit | _Ref):
            starts, ends = self.edge(node, 0), self.edge(node, -1)
            token = _render(node, self.names)
            if isinstance(node, _Ref):
                self.used_terminals.add(node.name)
            return _g_seq([self.separator(state, "w" in starts), token]), _AFTER_WORD if "w" in ends else _FREE
        if isinstance(node, _Seq):
            parts: list[_G] = []
            for item in node.items:
                part, state = self.emit(item, state)
                parts.append(part)
            return _g_seq(parts), state
        if isinstance(node, _Alt):
            results = [self.emit(i, state) for i in node.items]
            return _g_alt([g for g, _ in results]), self.merge({s for _, s in results})
        assert isinstance(node, _Rep), node  # character classes occur only inside terminals, which are rendered
        if node.max == 1:
            return self.emit(_Alt((node.item, _EMPTY)), state)
        first, after_first = self.emit(node.item, state)
        later_state = after_first  # later iterations follow an earlier one
        while True:
            later, after_later = self.emit(node.item, later_state)
            merged = self.merge({later_state, after_later})
            if merged == later_state:
                break
            later_state = merged
        body = _g_rep(first, "+") if first == later else _g_seq([first, _g_rep(later, "*")])
        if node.min == 0:
            body = _g_rep(first, "*") if first == later else _g_rep(body, "?")
            return body, self.merge({state, later_state})
        return body, later_state

    def call(self, name: str, state: _State) -> tuple[_G, _State]:
        """A reference to a rule (or to its after-word variant), with the separator it needs."""
        first, last = self.rule_edges[name]
        leaves = _AFTER_WORD if "w" in last else _FREE
        if self.hoistable(name):
            return _g_seq([self.separator(state, "w" in first), self.use(name, _HOIST)]), leaves
        if state == _HOIST:
            raise GrammarExportError(f"internal error: rule {name} reached at the start of a hoisted rule")
        variant = state if "w" in first else _FREE  # the variants only differ before a leading word
        return self.use(name, variant), self.merge({leaves, state}) if self.rule_nullable[name] else leaves

    def use(self, name: str, variant: _State) -> _G:
        gbnf_name = self.names[name] + ("-after-word" if variant == _AFTER_WORD else "")
        if gbnf_name not in self.bodies:
            self.bodies[gbnf_name] = _G_EMPTY  # reserved; filled below, after recursive uses
            self.pending.append((gbnf_name, name, variant))
        return _G(gbnf_name)

    def whitespace(self) -> list[str]:
        """The `ws` rules, from the `%ignore`d terminals."""
        if not self.ignored:
            raise GrammarExportError("the grammar ignores nothing, so nothing can separate two words")
        items: list[_G] = []
        trailing: list[_G] = []
        for name in self.ignored:
            ir = self.term_ir[name]
            if isinstance(ir, _Rep) and ir.min == 1 and ir.max is None:
                items.append(_render(ir.item, self.names))  # `ws` repeats anyway; `(x+)*` would be ambiguous
                continue
            tail = ir.items[-1] if isinstance(ir, _Seq) else None
            if isinstance(tail, _Rep) and tail.max is None and isinstance(tail.item, _Chars) and tail.item.negated:
                # A comment-like terminal runs greedily to the first character it excludes (a line comment
                # to the end of its line), so one must follow it, or the end of the text.
                stop = _Chars(tail.item.ranges)
                for a, b in stop.ranges:
                    for code in range(a, b + 1):
                        if not any(re.fullmatch(self.terminals[o].pattern.to_regexp(), chr(code))
                                   for o in self.ignored if o != name):
                            raise GrammarExportError(f"ignored terminal {name} ends before {chr(code)!r}, "
                                                     "which is not ignored itself")
                items.append(_g_seq([_G(self.names[name]), _render(stop, self.names)]))
                trailing.append(_G(self.names[name]))
                self.used_terminals.add(name)
            else:
                items.append(_render(ir, self.names))
        end = _g_seq([_G("ws"), _g_rep(_g_alt(trailing), "?")]) if trailing else _G("ws")
        return ["ws ::= ws-item*", "ws1 ::= ws-item+", f"ws-item ::= {_g_alt(items).text}", f"ws-end ::= {end.text}"]

    def convert(self) -> str:
        start, _ = self.call(self.start, _FREE)
        root = _g_seq([start, _G("ws-end")])
        rules = [f"root ::= {root.text}"]
        while self.pending:
            gbnf_name, name, variant = self.pending.pop(0)
            self.bodies[gbnf_name], _ = self.emit(self.rules[name], variant)
            rules.append(f"{gbnf_name} ::= {self.bodies[gbnf_name].text}")
        whitespace = self.whitespace()
        terminals = [f"{self.names[n]} ::= {_render(ir, self.names).text}"
                     for n, ir in self.term_ir.items() if n in self.used_terminals]
        return _LEGEND + "\n" + "\n".join(rules + [""] + whitespace + [""] + terminals) + "\n"


def _remove_left_recursion(name: str, body: _IR) -> _IR:
    """`a: a x | a y | b | c` as `a: (b | c) (x | y)*`, the form GBNF accepts."""
    recursive: list[_IR] = []
    base: list[_IR] = []
    for choice in body.items if isinstance(body, _Alt) else (body,):
        items = choice.items if isinstance(choice, _Seq) else (choice,)
        if items and items[0] == _Ref(name):
            if len(items) > 1:  # `a: a` adds nothing
                recursive.append(_seq(items[1:]))
        else:
            base.append(choice)
    if not recursive:
        return body
    if not base:
        raise GrammarExportError(f"rule {name} is left-recursive with no other choice")
    return _seq([_alt(base), _Rep(_alt(recursive), 0, None)])


def _left_factor(node: _IR) -> _IR:
    """`a b | a c | d` as `a (b | c) | d`: the same language, with fewer parses for llama.cpp to follow."""
    if isinstance(node, _Seq):
        return _seq(_left_factor(i) for i in node.items)
    if isinstance(node, _Rep):
        return _Rep(_left_factor(node.item), node.min, node.max)
    if not isinstance(node, _Alt):
        return node
    groups: dict[_IR, list[_IR]] = {}
    for choice in map(_left_factor, node.items):
        items = choice.items if isinstance(choice, _Seq) else (choice,)
        groups.setdefault(items[0] if items else _EMPTY, []).append(_seq(items[1:]))
    choices: list[_IR] = []
    for head, tails in groups.items():
        rests = [t for t in tails if t != _EMPTY]
        if len(tails) == 1 or not rests:
            choices.append(_seq([head, tails[0]]))
            continue
        rest = _left_factor(_alt(rests))
        choices.append(_seq([head, rest if len(rests) == len(tails) else _Rep(rest, 0, 1)]))
    return _alt(choices)
