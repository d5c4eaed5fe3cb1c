"""JSONPath in Amazon States Language: syntax by `jsonpath-ng`, and the reference-path subset.

ASL uses full JSONPath in `InputPath`, `OutputPath`, `ItemsPath` and the `.$`
fields of `Parameters`, and *reference paths* (a single node: only `.name`,
`['name']` and `[n]` steps) in `ResultPath`, a Choice rule's `Variable` and
the `…Path` fields. A path that starts with `$$` reads the context object.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import attrs
from jsonpath_ng import jsonpath as jp
from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
from jsonpath_ng.ext import parser as _ext

# Spelled `ExtentedJsonPathParser` before jsonpath-ng 1.7.
ExtendedJsonPathParser = getattr(_ext, "ExtendedJsonPathParser", None) or getattr(_ext, "ExtentedJsonPathParser")  # noqa: B009 - the old spelling is not in the stubs

# The intrinsic functions ASL accepts where a path may stand (`States.Format('…', $.x)`).
INTRINSICS = frozenset({
    "Format", "StringToJson", "JsonToString", "Array", "ArrayPartition", "ArrayContains", "ArrayRange",
    "ArrayGetItem", "ArrayLength", "ArrayUnique", "Base64Encode", "Base64Decode", "Hash", "JsonMerge",
    "MathRandom", "MathAdd", "StringSplit", "UUID",
})
_INTRINSIC = re.compile(r"States\.(\w+)\((.*)\)\s*\Z", re.S)
_ARG_PATH = re.compile(r"(?<![\w'])\$\$?(?:\.[A-Za-z_][\w-]*|\[\d+\]|\['[^']*'\])*")


#: `$.a.[?(@.x > 0)]`: a filter after a dot, which Jayway (the JSONPath of Step Functions) reads as `$.a[?(…)]`.
_DOT_FILTER = re.compile(r"(?<=[\w\]$])\.(?=\[\?)")
#: `${Name}`: a placeholder that SAM's and CloudFormation's DefinitionSubstitutions fill before deployment.
PLACEHOLDER = re.compile(r"\$\{\w+\}")

Steps = tuple[str | int, ...]  # the field names and indices of a single-node path


@attrs.frozen
class Path:
    """A parsed path: `steps` are the field names and indices of its single-node prefix (all of it when `exact`)."""

    text: str
    context: bool
    steps: Steps
    exact: bool

    @property
    def is_reference(self) -> bool:
        return self.exact


_PARSER: Any = None  # jsonpath-ng has no type information


def _parse(body: str) -> Any:
    """Parse with one shared parser: building jsonpath-ng's parser (ply tables) costs milliseconds each time."""
    global _PARSER
    if _PARSER is None:
        _PARSER = ExtendedJsonPathParser()
    return _PARSER.parse(body)


@functools.lru_cache(maxsize=4096)
def parse_path(text: str) -> tuple[Path | None, str | None]:
    """A path, or None and why it is not one."""
    if not text.startswith("$"):
        return None, "a path starts with `$`"
    context = text.startswith("$$")
    body = text[1:] if context else text
    try:
        tree = _parse(_DOT_FILTER.sub("", body))
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # noqa: BLE001 - ply raises plain errors too
        why = str(exc).strip() or type(exc).__name__
        if PLACEHOLDER.search(text):
            why += " (`${…}` is a template placeholder: substitute it first, as DefinitionSubstitutions does)"
        return None, why
    steps, exact = _steps(tree)
    return Path(text, context, steps, exact), None


def _steps(tree: Any) -> tuple[Steps, bool]:
    """The single-node prefix of a path, and whether it is the whole path (no wildcard, filter, slice or `..`)."""
    if isinstance(tree, jp.Root):
        return (), True
    if isinstance(tree, jp.Child):
        left, exact = _steps(tree.left)
        if not exact:
            return left, False
        right, exact = _steps(tree.right)
        return left + right, exact
    if isinstance(tree, jp.Fields) and len(tree.fields) == 1 and tree.fields[0] != "*":
        return (tree.fields[0],), True
    if isinstance(tree, jp.Index) and len(tree.indices) == 1:
        return (tree.indices[0],), True
    if isinstance(tree, jp.Descendants):
        return _steps(tree.left)[0], False
    return (), False


def intrinsic(text: str) -> tuple[str | None, list[str]]:
    """For `States.NAME(args)`: the name and the paths its arguments read; (None, []) if it is no call."""
    m = _INTRINSIC.match(text)
    if m is None:
        return None, []
    args = re.sub(r"'(?:\\.|[^'\\])*'", "''", m.group(2))  # paths inside string literals are text
    return m.group(1), _ARG_PATH.findall(args)
