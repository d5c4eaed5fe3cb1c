"""Project configuration: `[tool.skillc]` in pyproject.toml, or a skillc.toml.

    [tool.skillc]
    strict = false               # warnings fail the check (also: --strict)
    smt-timeout-ms = 2000        # per solver question
    [tool.skillc.severity]
    SKM241 = "error"             # raise a warning ...
    unreachable-state = "off"    # ... or lower / silence it (codes or slugs)

The nearest folder above the checked file holding either file is used. Codes
whose default is an error cannot be lowered: they are the checker's promise.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path

import attrs

from skillc.check.context import DEFAULT_SMT_TIMEOUT_MS
from skillc.diagnostics import Diagnostic, Severity, make
from skillc.diagnostics.codes import lookup
from skillc.ir.loader import project_root

LEVELS: dict[str, Severity | None] = {
    "error": Severity.ERROR, "warning": Severity.WARNING, "note": Severity.NOTE, "off": None,
}


@attrs.define
class Config:
    """Severity overrides and options for one project."""

    severity: dict[str, Severity | None] = attrs.Factory(dict)
    strict: bool = False
    smt_timeout_ms: int = DEFAULT_SMT_TIMEOUT_MS
    path: Path | None = None

    def apply(self, diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
        """Diagnostics with the configured severities; silenced ones dropped."""
        out = []
        for d in diagnostics:
            if d.code in self.severity:
                level = self.severity[d.code]
                if level is None:
                    continue
                d = d.with_severity(level)
            out.append(d)
        return out


def find_config(start: Path) -> tuple[Config, list[Diagnostic]]:
    """The configuration governing `start` (a file or folder): the project root's, if it has one."""
    root = project_root(start if not start.is_dir() else start / "_")
    if (root / "skillc.toml").is_file():
        return _read(root / "skillc.toml", lambda data: data)
    if (root / "pyproject.toml").is_file():
        return _read(root / "pyproject.toml", _tool_section)
    return Config(), []


def _tool_section(data: dict):
    """`[tool.skillc]` of a pyproject.toml, `{}` when absent, or the bad value for parse_config to report."""
    tool = data.get("tool", {})
    return tool.get("skillc", {}) if isinstance(tool, dict) else tool


def _bad(path: Path, message: str) -> Diagnostic:
    return make("SKM290", f"{path}: {message}", hint="see docs/diagnostics.md#skm290")


def _read(path: Path, section) -> tuple[Config, list[Diagnostic]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Config(path=path), [_bad(path, f"cannot read the configuration: {exc}")]
    return parse_config(section(data), path)


def parse_config(table: dict, path: Path | None = None) -> tuple[Config, list[Diagnostic]]:
    """Validate a configuration table; every problem is a SKM290 diagnostic."""
    config = Config(path=path)
    problems: list[Diagnostic] = []
    where = path or Path("<config>")
    if not isinstance(table, dict):
        return config, [_bad(where, "[tool.skillc] must be a table")]
    for key, value in table.items():
        if key == "strict":
            if not isinstance(value, bool):
                problems.append(_bad(where, "`strict` must be true or false"))
            else:
                config.strict = value
        elif key == "smt-timeout-ms":
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 600_000:
                problems.append(_bad(where, "`smt-timeout-ms` must be an integer between 1 and 600000"))
            else:
                config.smt_timeout_ms = value
        elif key == "severity":
            if not isinstance(value, dict):
                problems.append(_bad(where, "`severity` must be a table of CODE = \"error|warning|note|off\""))
                continue
            for code, level in value.items():
                try:
                    entry = lookup(code)
                except KeyError:
                    problems.append(_bad(where, f"unknown diagnostic code `{code}` in `severity`"))
                    continue
                if not isinstance(level, str) or level not in LEVELS:
                    problems.append(_bad(where, f"severity of {entry.code} must be error, warning, note or off, "
                                         f"not {level!r}"))
                    continue
                if entry.severity is Severity.ERROR and LEVELS[level] is not Severity.ERROR:
                    problems.append(_bad(where, f"{entry.code} ({entry.slug}) is an error and cannot be lowered"))
                    continue
                config.severity[entry.code] = LEVELS[level]
        else:
            problems.append(_bad(where, f"unknown setting `{key}` (known: strict, smt-timeout-ms, severity)"))
    return config, problems
