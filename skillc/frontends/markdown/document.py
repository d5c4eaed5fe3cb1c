"""Read a skill document: validate the bytes, split off front matter, walk the markdown blocks.

The document structure comes from markdown-it-py (CommonMark plus tables and
the front-matter plugin); this module only flattens its token stream into
`Block`s that know their source lines, their section and their list context.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import attrs
import yaml
from markdown_it import MarkdownIt
from markdown_it.token import Token
from mdit_py_plugins.front_matter import front_matter_plugin

from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.files import load_front_matter, read_bytes
from skillc.diagnostics.source import SourceFile, Span
from skillc.frontends.markdown import codes
from skillc.ir.toolkit import split_allowed

MAX_BYTES = 1 << 20  # 1 MiB: far beyond any real skill, small enough to build in about a second


@attrs.frozen
class FrontMatter:
    """The YAML header of a skill: name, description, allowed tools and everything else."""

    name: str | None = None
    description: str | None = None
    allowed_tools: tuple[str, ...] = ()
    start: int = 0
    end: int = 0
    raw: dict[str, object] = attrs.field(factory=dict, eq=False)


@attrs.frozen
class Block:
    """One leaf of the document: a heading, a paragraph, a list item's paragraph, a code fence or a table row.

    `start`/`end` are 1-based, inclusive source lines. `item` identifies the list
    item a paragraph belongs to (the same for every paragraph of one item);
    `depth` is the list nesting (0 outside lists); `ordered` tells numbered lists.
    """

    kind: str
    text: str
    start: int
    end: int
    section: tuple[str, ...] = ()
    level: int = 0
    depth: int = 0
    ordered: bool = False
    item: int | None = None
    parent_item: int | None = None
    info: str = ""
    checkbox: bool = False
    first_in_item: bool = False


@attrs.frozen
class Document:
    """A parsed skill document."""

    path: str
    text: str
    lines: tuple[str, ...]
    front: FrontMatter
    blocks: tuple[Block, ...]
    source: SourceFile

    def span(self, start: int, end: int | None = None) -> Span:
        """The span of whole lines `start`..`end` (1-based, inclusive)."""
        return lines_span(self.source, start, end)


def lines_span(source: SourceFile, start: int, end: int | None = None) -> Span:
    """The span of whole lines `start`..`end` (1-based, inclusive) of a source."""
    starts = source.line_starts
    start = max(1, min(start, len(starts)))
    end = max(start, min(end or start, len(starts)))
    last = starts[end] - 1 if end < len(starts) else len(source.text)
    return Span(source, starts[start - 1], max(starts[start - 1], last))


_PARSER = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")
_CHECKBOX = re.compile(r"^\[([ xX])\]\s+")


def read_document(path: str | Path, *, max_bytes: int = MAX_BYTES) -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse a skill file; None with diagnostics when it is not a usable text document."""
    data, problem = read_bytes(path, folder="a folder, not a skill document")
    if data is None:
        return None, [problem] if problem is not None else []
    return parse_document(data, str(path), max_bytes=max_bytes)


def parse_document(data: bytes | str, path: str = "SKILL.md", *,
                   max_bytes: int = MAX_BYTES) -> tuple[Document | None, list[Diagnostic]]:
    """Parse skill text (bytes are decoded as UTF-8); None with diagnostics on unusable input."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    whole = SourceFile.from_text(path, "")
    if len(data) > max_bytes:
        return None, [make(codes.SKILL_TOO_LARGE,
                           f"{path} is {len(data):,} bytes; skill documents are limited to {max_bytes:,}",
                           Span(whole, 0, 0), hint="split the document, or raise the limit with --max-bytes")]
    if b"\0" in data[:8192] or _binary(data):
        return None, [make(codes.BINARY_SKILL, f"{path} is not a text document (it contains binary data)",
                           Span(whole, 0, 0), hint="pass the markdown file of the skill")]
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return None, [make(codes.BINARY_SKILL, f"{path} is not UTF-8 text (invalid byte at offset {exc.start})",
                           Span(whole, 0, 0), hint="save the skill as UTF-8")]
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    source = SourceFile.from_text(path, text)
    if not text.strip():
        return None, [make(codes.EMPTY_SKILL, f"{path} is empty", Span(source, 0, 0),
                           hint="write the procedure in the skill document first")]
    front, diags = _front_matter(text, source)
    if front is None:
        return None, diags
    blocks = tuple(_blocks(_PARSER.parse(text)))
    doc = Document(path, text, tuple(text.split("\n")), front, blocks, source)
    if not blocks:
        diags.append(make(codes.EMPTY_SKILL, f"{path} has front matter but no body", Span(source, 0, 0),
                          hint="write the procedure below the front matter"))
        return None, diags
    return doc, diags


def _binary(data: bytes) -> bool:
    """Control bytes other than whitespace in the first 8 KiB mark a binary file."""
    head = data[:8192]
    controls = sum(b < 9 or 13 < b < 32 for b in head)
    return controls > max(2, len(head) // 100)


def _front_matter(text: str, source: SourceFile) -> tuple[FrontMatter | None, list[Diagnostic]]:
    """The YAML header, an empty one when there is none, or None with a diagnostic when it is broken."""
    if not text.startswith("---\n"):
        return FrontMatter(), []
    lines = text.split("\n")
    close = next((i for i in range(1, len(lines)) if lines[i].rstrip() in ("---", "...")), None)
    if close is None:
        return None, [make(codes.BAD_FRONT_MATTER, "the front matter opened on line 1 is never closed",
                           lines_span(source, 1), label="opened here",
                           hint="end the YAML header with a line holding only `---`")]
    body = "\n".join(lines[1:close])
    header = lines_span(source, 1, close + 1)
    try:
        raw, repaired = load_front_matter(body) if body.strip() else ({}, ())
    except yaml.YAMLError as exc:
        return None, [_yaml_problem(exc, source, header)]
    if not isinstance(raw, dict):
        return None, [make(codes.BAD_FRONT_MATTER,
                           f"the front matter must be a mapping of keys to values, not a {type(raw).__name__}",
                           header, hint="write `name: ...`, `description: ...` lines")]
    diags: list[Diagnostic] = [
        make(codes.FRONT_MATTER_COLON, f"front matter `{key}` holds `: ` in a value without quotes, which is not "
             "valid YAML; read as the whole line", lines_span(source, line + 2), label="here",
             hint=f"quote the value: `{key}: \"…\"`") for line, key in repaired]
    fields = {}
    for key in ("name", "description"):
        value = raw.get(key)
        if value is not None and not isinstance(value, (str, int, float)):
            diags.append(make(codes.BAD_FRONT_MATTER, f"front matter `{key}` must be a string", header,
                              hint=f"write `{key}: some text`"))
            return None, diags
        fields[key] = str(value).strip() if value is not None else None
    tools = raw.get("allowed-tools", raw.get("allowed_tools", raw.get("tools")))
    if isinstance(tools, str):
        names = tuple(split_allowed(tools))  # `Bash(git diff:*)` is one entry
    elif isinstance(tools, list) and all(isinstance(t, str) for t in tools):
        names = tuple(t.strip() for t in tools if t.strip())
    elif tools is None:
        names = ()
    else:
        return None, [make(codes.BAD_FRONT_MATTER, "front matter `allowed-tools` must be a list of tool names", header,
                           hint="write `allowed-tools: Bash, Read` or a YAML list")]
    return FrontMatter(fields["name"], fields["description"], names, 1, close + 1, raw), diags


def _yaml_problem(exc: yaml.YAMLError, source: SourceFile, header: Span) -> Diagnostic:
    """SKM303 for a front matter YAML refuses: at the line of the problem, or for a bound `load_yaml` keeps."""
    if type(exc) is yaml.YAMLError:  # `load_yaml`'s bounds (an alias bomb, nesting), not the syntax
        return make(codes.BAD_FRONT_MATTER, f"the front matter is too large to read: {exc}", header,
                    label="here", hint="write the values out: a front matter needs no anchors or aliases")
    mark = getattr(exc, "problem_mark", None)
    where = header if mark is None else lines_span(source, mark.line + 2)  # the YAML starts on line 2
    problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
    return make(codes.BAD_FRONT_MATTER, f"the front matter is not valid YAML: {problem}", where,
                label="here", hint="fix the YAML between the `---` lines (quote values with `:`)")


def _blocks(tokens: Sequence[Token]) -> Iterator[Block]:
    """Flatten markdown-it tokens into `Block`s with section and list context."""
    section: list[tuple[int, str]] = []
    lists: list[bool] = []  # ordered? per open list
    items: list[int] = []
    next_item = 0
    item_has_para: dict[int, bool] = {}
    i = 0
    while i < len(tokens):
        t = tokens[i]
        kind = t.type
        if kind == "heading_open":
            level = int(t.tag[1:])
            text = tokens[i + 1].content.strip()
            section = [(lv, s) for lv, s in section if lv < level] + [(level, text)]
            start, end = _lines(t)
            yield Block("heading", text, start + 1, end, tuple(s for _, s in section), level=level)
            i += 3
            continue
        if kind in ("bullet_list_open", "ordered_list_open"):
            lists.append(kind == "ordered_list_open")
        elif kind in ("bullet_list_close", "ordered_list_close"):
            lists.pop()
        elif kind == "list_item_open":
            items.append(next_item)
            item_has_para[next_item] = False
            next_item += 1
        elif kind == "list_item_close":
            items.pop()
        elif kind == "paragraph_open":
            inline = tokens[i + 1]
            start, end = _lines(t)
            text = inline.content
            checkbox = False
            m = _CHECKBOX.match(text)
            if items and m:
                checkbox, text = True, text[m.end():]
            item = items[-1] if items else None
            first = item is not None and not item_has_para[item]
            if item is not None:
                item_has_para[item] = True
            yield Block("para" if item is None else "item", text, start + 1, end, _names(section),
                        depth=len(lists), ordered=bool(lists and lists[-1]), item=item,
                        parent_item=items[-2] if len(items) > 1 else None, checkbox=checkbox, first_in_item=first)
            i += 3
            continue
        elif kind in ("fence", "code_block"):
            start, end = _lines(t)
            yield Block("code", t.content, start + 1, end, _names(section), depth=len(lists),
                        item=items[-1] if items else None, info=(t.info or "").strip().split(" ")[0].lower())
        elif kind == "tr_open" and t.map:
            cells = []
            j = i + 1
            while tokens[j].type != "tr_close":
                if tokens[j].type == "inline":
                    cells.append(tokens[j].content.strip())
                j += 1
            start, end = _lines(t)
            header = tokens[i - 1].type == "thead_open"
            yield Block("row", " | ".join(cells), start + 1, end, _names(section), info="header" if header else "")
            i = j
        elif kind == "html_block":
            start, end = _lines(t)
            yield Block("html", t.content, start + 1, end, _names(section))
        i += 1


def _lines(t: Token) -> tuple[int, int]:
    """The 0-based [start, end) source lines of a block token (markdown-it maps every block token)."""
    assert t.map is not None, "block tokens carry their source lines"
    return t.map[0], t.map[1]


def _names(section: list[tuple[int, str]]) -> tuple[str, ...]:
    """The titles of a section path, outermost first."""
    return tuple(s for _, s in section)
