"""JSON and YAML documents as trees of values with source spans.

Both formats are composed by PyYAML, whose nodes carry the character offset of
their start and end, so every value (and every mapping key) of the tree knows
where it is written. A `.json` file is validated by the standard `json` module
first, so a JSON error is reported as JSON, not as YAML, and JSON scalars get
JSON meanings (`1e3` is a number, `yes` would not be a boolean).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Literal

import attrs
import yaml

from skillc.diagnostics import Diagnostic, SourceFile, Span, make
from skillc.diagnostics.files import scrub
from skillc.frontends.importers import codes

NodeKind = Literal["map", "seq", "scalar"]


@attrs.frozen
class Node:
    """A value of the document: `kind` is map, seq or scalar; maps keep their keys in order, duplicates included."""

    kind: NodeKind
    span: Span
    value: object = None
    pairs: tuple[tuple[str, Span, Node], ...] = ()
    items: tuple[Node, ...] = ()

    @property
    def is_map(self) -> bool:
        return self.kind == "map"

    @property
    def is_seq(self) -> bool:
        return self.kind == "seq"

    def get(self, key: str) -> Node | None:
        """The value of the first `key` of a map (None when absent or not a map)."""
        for k, _, v in self.pairs:
            if k == key:
                return v
        return None

    def at(self, key: str) -> Node:
        """The value of `key`, which the caller has already checked is present (KeyError otherwise)."""
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def key_span(self, key: str) -> Span | None:
        """Where `key` is written in this map."""
        for k, span, _ in self.pairs:
            if k == key:
                return span
        return None

    def keys(self) -> Iterator[str]:
        return (k for k, _, _ in self.pairs)

    @property
    def text(self) -> str | None:
        """The value when it is a string, else None."""
        return self.value if self.kind == "scalar" and isinstance(self.value, str) else None

    def plain(self) -> object:
        """The Python value of the subtree (last duplicate key wins, as in `json.loads`)."""
        if self.is_map:
            return {k: v.plain() for k, _, v in self.pairs}
        if self.is_seq:
            return [i.plain() for i in self.items]
        return self.value


class _TooLarge(ValueError):
    """The document cannot be turned into a finite tree of reasonable size."""


# libyaml's loader when PyYAML was built with it: the same nodes and character offsets, several times faster.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Builder:
    """Turns PyYAML nodes into `Node`s over one source file."""

    LIMIT = 1_000_000  # nodes, aliases expanded: a YAML alias bomb stops here

    def __init__(self, source: SourceFile, json_scalars: bool) -> None:
        self.source = source
        self.json_scalars = json_scalars
        self.constructor = yaml.SafeLoader("")
        self.open: set[int] = set()  # the nodes being built: meeting one again is a recursive alias
        self.count = 0

    def span(self, node: yaml.Node) -> Span:
        return Span(self.source, node.start_mark.index, node.end_mark.index)

    def build(self, node: yaml.Node) -> Node:
        self.count += 1
        if self.count > self.LIMIT:
            raise _TooLarge(f"more than {self.LIMIT:,} values once aliases are expanded")
        if id(node) in self.open:
            raise _TooLarge("an alias refers to a value that contains it")
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                pairs = tuple((self.key(k), self.span(k), self.build(v)) for k, v in node.value)
                return Node("map", self.span(node), pairs=pairs)
            if isinstance(node, yaml.SequenceNode):
                return Node("seq", self.span(node), items=tuple(self.build(i) for i in node.value))
            if isinstance(node, yaml.ScalarNode):
                return Node("scalar", self.span(node), value=self.scalar(node))
            raise yaml.YAMLError(f"unexpected YAML node {node.tag}")  # compose makes only the three kinds above
        finally:
            self.open.discard(id(node))

    def key(self, node: yaml.Node) -> str:
        value = self.scalar(node) if isinstance(node, yaml.ScalarNode) else None
        return value if isinstance(value, str) else str(value)

    def scalar(self, node: yaml.ScalarNode) -> object:
        if self.json_scalars:
            # Quoted JSON strings are already decoded; bare tokens are JSON numbers, true, false or null.
            return node.value if node.style else json.loads(node.value)
        return self.constructor.construct_object(node, deep=True)


_LONE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")  # where a surrogate escape starts


def read_document(source: SourceFile, *, as_json: bool) -> tuple[Node | None, list[Diagnostic]]:
    """Parse a JSON or YAML document into a positioned tree; syntax errors are SKM600 with their position."""
    text = source.text
    if as_json:
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            return None, [make(codes.INVALID_DOCUMENT, f"invalid JSON: {exc.msg}", Span(source, exc.pos, exc.pos + 1),
                               label="here")]
        except RecursionError:
            return None, [make(codes.INVALID_DOCUMENT, "invalid JSON: nested too deeply", Span(source, 0, 0))]
        if scrub(value) != value:  # `"\ud800"` is valid JSON syntax but not Unicode text (nor YAML)
            found = _LONE_ESCAPE.search(text)
            at = found.start() if found else 0
            return None, [make(codes.INVALID_DOCUMENT, "invalid JSON: a lone surrogate escape (`\\ud800`–`\\udfff` "
                               "without its pair) is not Unicode text", Span(source, at, at + 6), label="here")]
        # JSON allows tabs where YAML does not; a tab outside a string is whitespace, so a space keeps offsets.
        text = text.replace("\t", " ")
    try:
        root = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at = mark.index if mark is not None else 0
        return None, [make(codes.INVALID_DOCUMENT, f"invalid YAML: {exc.problem or exc}", Span(source, at, at + 1),
                           label="here")]
    except (yaml.YAMLError, RecursionError) as exc:
        return None, [make(codes.INVALID_DOCUMENT, f"invalid document: {exc}", Span(source, 0, 0))]
    if root is None:
        return None, [make(codes.INVALID_DOCUMENT, "the document is empty", Span(source, 0, 0))]
    try:
        return _Builder(source, as_json).build(root), []
    except yaml.YAMLError as exc:  # a YAML tag or value that SafeLoader refuses
        return None, [make(codes.INVALID_DOCUMENT, f"invalid YAML value: {exc}", Span(source, 0, 0))]
    except _TooLarge as exc:
        return None, [make(codes.INVALID_DOCUMENT, f"invalid document: {exc}", Span(source, 0, 0))]
    except RecursionError:
        return None, [make(codes.INVALID_DOCUMENT, "invalid document: nested too deeply", Span(source, 0, 0))]
