"""A Pygments lexer for `.skm` (`pygmentize -l skm FILE`), registered through the `pygments.lexers` entry point."""

from __future__ import annotations

from pygments.lexer import RegexLexer, bygroups, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Text, Whitespace

# Keep in sync with grammar/skm.lark (a test compares these groups with the grammar's keywords).
DECLARATIONS = ("import", "machine", "fragment", "record", "enum", "doc", "source", "tool", "tools", "allow", "mcp",
                "input", "var", "counter", "max", "start", "terminal", "fallback", "rule", "use", "as")
STATE_KINDS = ("model", "judge")
STATE_ITEMS = ("reads", "writes", "prompt", "call", "from", "when", "requires")
RULE_WORDS = ("required", "order", "before", "forbid", "ends")
TYPES = ("list", "map")
OPERATOR_WORDS = ("and", "or", "not", "in")
CONSTANTS = ("true", "false", "none")
BUILTIN_TYPES = ("str", "int", "float", "bool")
OUTCOMES = ("success", "partial", "failed")
# Not keywords: the predeclared places and the functions (the world's only in `requires`).
PLACES = ("skill_dir", "workdir")
FUNCTIONS = ("len", "str", "contains", "quote", "trusted", "exists", "file")


class SkmLexer(RegexLexer):
    """Lexer for skillc state machines."""

    name = "skm"
    aliases = ["skm", "skillc"]  # noqa: RUF012 - pygments' Lexer API: a class attribute
    filenames = ["*.skm"]  # noqa: RUF012 - pygments' Lexer API: a class attribute
    mimetypes = ["text/x-skm"]  # noqa: RUF012 - pygments' Lexer API: a class attribute

    tokens = {  # noqa: RUF012 - pygments' RegexLexer API: compiled by its metaclass
        "root": [
            (r"\s+", Whitespace),
            (r"#.*$", Comment.Single),
            (r'"""', String.Double, "triple"),
            (r'"', String.Double, "string"),
            (r"(model|judge|tool)(\s+)([A-Za-z_]\w*)(\s*)(\{)",
             bygroups(Keyword.Declaration, Whitespace, Name.Function, Whitespace, Punctuation)),
            (r"(terminal)(\s+)([A-Za-z_]\w*)", bygroups(Keyword.Declaration, Whitespace, Name.Function)),
            (r"(->)(\s*)([A-Za-z_][\w.]*)", bygroups(Operator, Whitespace, Name.Label)),
            (words(DECLARATIONS, suffix=r"\b"), Keyword.Declaration),
            (words(STATE_KINDS, suffix=r"\b"), Keyword.Declaration),
            (words(STATE_ITEMS, suffix=r"\b"), Keyword),
            (words(RULE_WORDS, suffix=r"\b"), Keyword.Reserved),
            (words(TYPES + BUILTIN_TYPES, suffix=r"\b"), Keyword.Type),
            (words(OPERATOR_WORDS, suffix=r"\b"), Operator.Word),
            (words(CONSTANTS, suffix=r"\b"), Keyword.Constant),
            (words(OUTCOMES, suffix=r"\b"), Name.Constant),
            (words(PLACES, suffix=r"\b"), Name.Builtin.Pseudo),
            (words(FUNCTIONS, suffix=r"(?=\s*\()"), Name.Builtin),
            (r"[0-9]+(\.[0-9]+([eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)", Number.Float),
            (r"[0-9]+", Number.Integer),
            (r"\+\+|\+=|-=|==|!=|<=|>=|->|[-+*/%<>=?]", Operator),
            (r"[{}()\[\],:.]", Punctuation),
            (r"[A-Za-z_]\w*", Name),
            (r".", Text),
        ],
        "string": [
            (r'\\(u\{[0-9A-Fa-f]{1,6}\}|.)', String.Escape),
            (r'[^"\\\n]+', String.Double),
            (r'"', String.Double, "#pop"),
            (r"\n", String.Double, "#pop"),
        ],
        "triple": [
            (r'"""', String.Double, "#pop"),
            (r'[^"]+', String.Doc),
            (r'"', String.Doc),
        ],
    }
