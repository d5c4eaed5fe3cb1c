"""String literals: decoding what the lexer matched, and encoding values for the printer."""

from __future__ import annotations

import re
import textwrap

_ESCAPE = re.compile(r"\\(u\{[0-9A-Fa-f]{1,6}\}|.)", re.S)
_SIMPLE = {"\\": "\\", '"': '"', "n": "\n", "r": "\r", "t": "\t"}


def decode_plain(body: str) -> tuple[str, list[tuple[int, int, str]]]:
    """Decode the inside of a `"…"` literal; also return (start, end, text) of bad escapes."""
    bad: list[tuple[int, int, str]] = []

    def repl(m: re.Match[str]) -> str:
        esc: str = m.group(1)
        if esc in _SIMPLE:
            return _SIMPLE[esc]
        if esc.startswith("u{"):
            cp = int(esc[2:-1], 16)
            if cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)
        bad.append((m.start(), m.end(), m.group(0)))
        return esc

    return _ESCAPE.sub(repl, body), bad


def decode_triple(body: str) -> str:
    """Decode the inside of a `\"\"\"…\"\"\"` literal.

    Triple-quoted strings are raw. When the opening quotes end their line the
    string is a *block*: the first and a blank last line are dropped and the
    common indentation is removed, so prompts can be indented with the code.
    """
    first, sep, rest = body.partition("\n")
    if not sep or first.strip():
        return body
    last_nl = rest.rfind("\n")
    if rest[last_nl + 1 :].strip() == "":
        rest = rest[: last_nl if last_nl != -1 else 0]
    return textwrap.dedent(rest)


def _escape_char(ch: str) -> str:
    if ch == "\\":
        return "\\\\"
    if ch == '"':
        return '\\"'
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    if ord(ch) < 0x20 or ord(ch) == 0x7F or 0x80 <= ord(ch) < 0xA0 or ch in "\u2028\u2029\ufeff":
        return f"\\u{{{ord(ch):x}}}"
    return ch


_NEEDS_ESCAPE = re.compile(r'[\\"\x00-\x1f\x7f-\x9f\u2028\u2029\ufeff]')


def encode_plain(value: str) -> str:
    """The canonical `"…"` literal for a value."""
    if not _NEEDS_ESCAPE.search(value):
        return f'"{value}"'
    return '"' + "".join(_escape_char(c) for c in value) + '"'


#: Characters a raw block string cannot hold: a carriage return (read back as a line break), and the controls and
#: invisible separators a plain string escapes (a NUL would make the file unreadable: SKM001).
_RAW_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def encode_block(value: str, indent: str) -> str | None:
    """A triple-quoted block literal for a multi-line value, or None when it cannot round-trip."""
    if '"""' in value or _RAW_UNSAFE.search(value):
        return None
    lines = value.split("\n")
    body = "\n".join(f"{indent}{line}" if line else "" for line in lines)
    literal = f'"""\n{body}\n{indent}"""'
    if decode_triple(literal[3:-3]) != value:
        return None
    return literal
