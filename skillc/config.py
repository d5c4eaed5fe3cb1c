"""Project configuration: `[tool.skillc]` in pyproject.toml, or a skillc.toml, read beside `skillc.registry`.

    [tool.skillc]
    strict = false               # warnings fail the check (also: --strict)
    smt-timeout-ms = 2000        # per solver question
    quote-min-words = 3          # shortest quotation checked against the skill
    model = "openai:gpt-4.1"     # `skillc build` drafts with this model (also: --model, SKILLC_MODEL)
    [tool.skillc.severity]
    SKM241 = "error"             # raise a warning ...
    unreachable-state = "off"    # ... or lower / silence it (codes or slugs)
    [tool.skillc.mcp.docs]       # an MCP server a machine's `tool search(…) -> (…) from mcp "docs"` names
    command = ["python", "docs_server.py"]

The nearest folder above the checked file holding either file is used. Codes
whose default is an error cannot be lowered: they are the checker's promise.

A severity table, `--select` and `--ignore` may name any stage's code, so reading them needs every code:
this module sits at the package root beside the registry, and hands the checker plain values (`Config`,
`Selection`, defined in `skillc.check.config`). The registry is imported inside the functions that need it,
so that `skillc check` on a project without a severity table does not load every stage's table.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from skillc.check import codes
from skillc.check.config import LEVELS, Config, Selection
from skillc.check.context import DEFAULT_QUOTE_MIN_WORDS, DEFAULT_SMT_TIMEOUT_MS
from skillc.diagnostics import Diagnostic, Severity, SourceFile, Span, make
from skillc.ir.loader import project_root

__all__ = ["LEVELS", "Config", "Selection", "Where", "config_schema", "find_config", "parse_config",
           "parse_selection", "read_config"]


def find_config(start: Path) -> tuple[Config, list[Diagnostic]]:
    """The configuration governing `start` (a file or folder): the project root's, if it has one."""
    root = project_root(start if not start.is_dir() else start / "_")
    if (root / "skillc.toml").is_file():
        return _read(root / "skillc.toml", lambda data: data)
    if (root / "pyproject.toml").is_file():
        return _read(root / "pyproject.toml", _tool_section)
    return Config(), []


def _tool_section(data: dict[str, Any]) -> Any:
    """`[tool.skillc]` of a pyproject.toml, `{}` when absent, or the bad value for parse_config to report."""
    tool = data.get("tool", {})
    return tool.get("skillc", {}) if isinstance(tool, dict) else tool


def read_config(path: Path) -> tuple[Config, list[Diagnostic]]:
    """The configuration in one file (`--config`): `[tool.skillc]` of a pyproject.toml, else the whole file."""
    if path.name == "pyproject.toml":
        return _read(path, _tool_section)
    return _read(path, lambda data: data)


@attrs.frozen
class Where:
    """The file a configuration came from, so that each problem points at its key."""

    path: Path
    source: SourceFile | None = None
    table: tuple[str, ...] = ()  # the configuration's own table: ("tool", "skillc") in a pyproject.toml

    def span(self, keys: tuple[str, ...]) -> Span | None:
        """The span of the key at `keys` below the table (best effort: TOML parsers keep no positions)."""
        if self.source is None:
            return None
        text = self.source.text
        full = self.table + keys
        for depth in range(len(full) - 1, -1, -1):
            section = _section(text, full[:depth])
            if section is None:
                continue
            start, end = section
            found = _find_keys(text, start, end, full[depth:])
            if found is not None:
                return Span(self.source, *found)
            if depth and depth >= len(self.table):
                return Span(self.source, *_header(text, full[:depth]))
        return Span(self.source, 0, 0)


def _key_pattern(key: str) -> str:
    return rf"(?:{re.escape(key)}|\"{re.escape(key)}\"|'{re.escape(key)}')"


def _header(text: str, table: tuple[str, ...]) -> tuple[int, int]:
    """Offsets of a `[a.b]` header line's name (the caller knows it exists)."""
    m = re.search(_header_pattern(table), text)
    return (m.start(1), m.end(1)) if m else (0, 0)


def _header_pattern(table: tuple[str, ...]) -> str:
    return (r"(?m)^[ \t]*\[[ \t]*(" + r"[ \t]*\.[ \t]*".join(_key_pattern(k) for k in table)
            + r")[ \t]*\][ \t]*(?:#.*)?$")


def _section(text: str, table: tuple[str, ...]) -> tuple[int, int] | None:
    """Offsets of the body of table `[a.b]` (the top level for `()`), None when it has no header."""
    if table:
        m = re.search(_header_pattern(table), text)
        if m is None:
            return None
        start = m.end()
    else:
        start = 0
    nxt = re.compile(r"(?m)^[ \t]*\[").search(text, start)
    return start, nxt.start() if nxt else len(text)


def _find_keys(text: str, start: int, end: int, keys: tuple[str, ...]) -> tuple[int, int] | None:
    """Offsets of the last of `keys`, each found after the previous one (dotted keys and inline tables)."""
    if not keys:
        return None
    first = re.compile(r"(?m)^[ \t]*(" + _key_pattern(keys[0]) + r")[ \t]*[=.]").search(text, start, end)
    if first is None:
        return None
    span = first.start(1), first.end(1)
    for key in keys[1:]:
        m = re.compile(r"(?<![\w-])(" + _key_pattern(key) + r")[ \t]*=").search(text, span[1], end)
        if m is None:
            return span
        span = m.start(1), m.end(1)
    return span


def _bad(where: Where | Path, message: str, keys: tuple[str, ...] = ()) -> Diagnostic:
    """A SKM290 diagnostic at the offending key (or the file's start when it cannot be found)."""
    if isinstance(where, Path):
        where = Where(where)
    span = where.span(keys)
    text = message if span is not None else f"{where.path}: {message}"
    return make(codes.INVALID_CONFIG, text, span, hint="see docs/diagnostics.md#skm290")


_DECODE_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def _read(path: Path, section: Callable[[dict[str, Any]], Any]) -> tuple[Config, list[Diagnostic]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Config(path=path), [_bad(path, f"cannot read the configuration: {exc}")]
    source = SourceFile.from_text(str(path), text)
    table = ("tool", "skillc") if section is _tool_section else ()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _DECODE_POSITION.search(str(exc))
        offset = source.line_starts[min(int(m.group(1)), len(source.line_starts)) - 1] + int(m.group(2)) - 1 \
            if m else 0
        span = Span(source, min(offset, len(source.text)), min(offset + 1, len(source.text)))
        return Config(path=path), [make(codes.INVALID_CONFIG, f"cannot read the configuration: {exc}", span,
                                        hint="see docs/diagnostics.md#skm290")]
    return parse_config(section(data), Where(path, source, table))


def parse_config(table: dict[str, Any], path: Path | Where | None = None) -> tuple[Config, list[Diagnostic]]:
    """Validate a configuration table; every problem is a SKM290 diagnostic."""
    where = path if isinstance(path, Where) else Where(path or Path("<config>"))
    config = Config(path=where.path if path is not None else None)
    problems: list[Diagnostic] = []
    if not isinstance(table, dict):
        return config, [_bad(where, "[tool.skillc] must be a table")]
    for key, value in table.items():
        if key == "strict":
            if not isinstance(value, bool):
                problems.append(_bad(where, "`strict` must be true or false", (key,)))
            else:
                config.strict = value
        elif key == "smt-timeout-ms":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 600_000:
                problems.append(_bad(where, "`smt-timeout-ms` must be an integer between 1 and 600000", (key,)))
            else:
                config.smt_timeout_ms = value
        elif key == "quote-min-words":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 100:
                problems.append(_bad(where, "`quote-min-words` must be an integer between 1 and 100", (key,)))
            else:
                config.quote_min_words = value
        elif key == "model":
            if not isinstance(value, str) or not value.strip():
                problems.append(_bad(where, "`model` must be a model spec such as \"openai:gpt-4.1\" (or \"offline\")",
                                     (key,)))
            else:
                config.model = value.strip()
        elif key == "mcp":
            from skillc.serve.mcpconfig import parse_servers  # a leaf: no MCP SDK

            servers, bad = parse_servers(value, where.path.parent if path is not None else Path.cwd())
            config.mcp = dict(servers)
            problems += [_bad(where, message, (key, *keys)) for keys, message in bad]
        elif key == "severity":
            if not isinstance(value, dict):
                problems.append(_bad(where, "`severity` must be a table of CODE = \"error|warning|note|off\"", (key,)))
                continue
            problems += _severities(config, value, where)
        else:
            problems.append(_bad(where, f"unknown setting `{key}` (known: strict, smt-timeout-ms, quote-min-words, "
                                 "model, mcp, severity)", (key,)))
    return config, problems


def _severities(config: Config, table: dict[str, Any], where: Where) -> list[Diagnostic]:
    """Fill config.severity from `[tool.skillc.severity]`; the problems found."""
    from skillc.registry import lookup  # deferred: the registry imports every stage's code table

    problems = []
    for code, level in table.items():
        keys = ("severity", code)
        try:
            entry = lookup(code)
        except KeyError:
            problems.append(_bad(where, f"unknown diagnostic code `{code}` in `severity`", keys))
            continue
        if not isinstance(level, str) or level not in LEVELS:
            problems.append(_bad(where, f"severity of {entry.code} must be error, warning, note or off, "
                                 f"not {level!r}", keys))
            continue
        if entry.severity is Severity.ERROR and LEVELS[level] is not Severity.ERROR:
            problems.append(_bad(where, f"{entry.code} ({entry.slug}) is an error and cannot be lowered", keys))
            continue
        config.severity[entry.code] = LEVELS[level]
    return problems


def parse_selection(select: str | None, ignore: str | None) -> tuple[Selection, list[str]]:
    """Comma-separated codes (SKM241), code prefixes (SKM2, SKM24), slugs or ALL; the problems found."""
    from skillc.registry import lookup  # deferred: the registry imports every stage's code table

    problems: list[str] = []

    def prefixes(raw: str | None, flag: str) -> tuple[str, ...]:
        out = []
        for token in (t.strip() for t in (raw or "").split(",")):
            if not token:
                continue
            if token.upper() == "ALL":
                out.append("SKM")
                continue
            code = re.fullmatch(r"(?i)skm\d{1,3}", token) is not None
            if code and len(token) < 6:  # a prefix such as SKM2 or SKM24
                out.append(token.upper())
                continue
            try:
                entry = lookup(token.upper() if code else token)
            except KeyError:
                problems.append(f"{flag}: unknown diagnostic code {token!r}" if code
                                else f"{flag}: {token!r} is not a diagnostic code, prefix (SKM2) or slug")
                continue
            if flag == "--ignore" and entry.severity is Severity.ERROR:
                problems.append(f"--ignore: {entry.code} ({entry.slug}) is an error and cannot be ignored")
                continue
            out.append(entry.code)
        return tuple(out)

    selection = Selection(prefixes(select, "--select"), prefixes(ignore, "--ignore"))
    return selection, problems


def config_schema() -> dict[str, Any]:
    """The JSON Schema of `[tool.skillc]` / skillc.toml (shipped as skillc/_schema/config.schema.json).

    Every code and slug is listed, and codes whose default is an error only accept "error": the
    schema rejects exactly what `parse_config` reports as SKM290, so editors can check it as you type.
    The codes are those of `skillc.registry`.
    """
    from skillc.registry import ALL

    severity: dict[str, Any] = {}
    for entry in ALL:
        allowed = ["error"] if entry.severity is Severity.ERROR else list(LEVELS)
        value = {"enum": allowed, "description": f"{entry.slug}: {entry.summary}"}
        severity[entry.code] = value
        severity[entry.slug] = {**value, "description": f"{entry.code}: {entry.summary}"}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/skillc/skillc/blob/main/skillc/_schema/config.schema.json",
        "title": "skillc configuration ([tool.skillc] in pyproject.toml, or skillc.toml)",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "strict": {"type": "boolean", "default": False, "description": "Warnings fail the check (--strict)."},
            "smt-timeout-ms": {"type": "integer", "minimum": 1, "maximum": 600_000,
                               "default": DEFAULT_SMT_TIMEOUT_MS, "description": "Milliseconds per solver question."},
            "quote-min-words": {"type": "integer", "minimum": 1, "maximum": 100, "default": DEFAULT_QUOTE_MIN_WORDS,
                                "description": "Shortest quotation checked against the skill (SKM225)."},
            "model": {"type": "string", "minLength": 1,
                      "description": "The model `skillc build` drafts with (openai:MODEL, anthropic:MODEL, local, "
                                     "recorded:DIR; \"offline\" for none). --model and SKILLC_MODEL come first."},
            "mcp": {"type": "object", "description": "MCP servers that machines' `tool … from mcp \"NAME\"` name: "
                                                     "[tool.skillc.mcp.NAME] command = [\"prog\", …].",
                    "additionalProperties": {
                        "type": "object", "required": ["command"], "additionalProperties": False,
                        "properties": {
                            "command": {"type": "array", "minItems": 1, "items": {"type": "string", "minLength": 1},
                                        "description": "The server and its arguments (MCP over stdin/stdout)."},
                            "cwd": {"type": "string", "description": "Its folder, relative to this file's."},
                            "env": {"type": "object", "additionalProperties": {"type": "string"},
                                    "description": "Extra environment variables."},
                            "pass-env": {"type": "array", "items": {"type": "string"},
                                         "description": "Variables passed on from skillc's environment."},
                            "start-timeout": {"type": "number", "exclusiveMinimum": 0, "maximum": 3600,
                                              "description": "Seconds to start, finish the handshake and list "
                                                             "the tools (default 30)."}}}},
            "severity": {"type": "object", "additionalProperties": False, "properties": severity,
                         "description": "Raise, lower or silence (off) diagnostics by code or slug; "
                                        "errors cannot be lowered."},
        },
    }
