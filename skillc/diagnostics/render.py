"""Render diagnostics: rustc-style `full`, one-line `concise`, `json` lines, GitHub annotations."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO
from urllib.parse import quote

from skillc.diagnostics.diagnostic import Diagnostic, Label, Severity
from skillc.version import __version__

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object

FORMATS = ("full", "concise", "json", "github", "sarif")

_COLOURS = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.NOTE: "\x1b[1;36m",
}
_BOLD, _BLUE, _RESET = "\x1b[1m", "\x1b[1;34m", "\x1b[0m"
_MAX_LINE = 150
_WINDOWS_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return hasattr(stream, "isatty") and stream.isatty()


class _Paint:
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, code: str) -> str:
        return f"{code}{text}{_RESET}" if self.enabled and text else text


def _location(d: Diagnostic) -> tuple[str, int, int, int, int]:
    if d.span is None:
        return ("", 0, 0, 0, 0)
    (line, col), (end_line, end_col) = d.span.start_pos, d.span.end_pos
    return (d.span.source.display_path, line, col, end_line, end_col)


def render_full(d: Diagnostic, colour: bool = False) -> str:
    """Render one diagnostic with a source excerpt and labelled underlines."""
    paint = _Paint(colour)
    sev = _COLOURS[d.severity]
    out = [paint(f"{d.severity}[{d.code}]", sev) + paint(f": {d.message}", _BOLD)]
    if d.span is not None:
        path, line, col, _, _ = _location(d)
        labelled = [(d.span, d.label, True)] + [(s.span, s.message, False) for s in d.secondary
                                                 if s.span.source is d.span.source]
        lines = sorted({sp.start_pos[0] for sp, _, _ in labelled})
        width = len(str(max(lines)))
        gutter = " " * width
        out.append(f"{gutter}{paint('-->', _BLUE)} {path}:{line}:{col}")
        out.append(f"{gutter} {paint('|', _BLUE)}")
        previous = None
        for ln in lines:
            if previous is not None and ln > previous + 1:
                out.append(paint("...", _BLUE))
            previous = ln
            text = d.span.source.line_text(ln)
            here = [(sp, msg, primary) for sp, msg, primary in labelled if sp.start_pos[0] == ln]
            shift = 0
            if len(text) > _MAX_LINE:
                # Show a window around the first label on very long lines (minified or generated input).
                shift = max(0, min(sp.start_pos[1] for sp, _, _ in here) - 1 - _MAX_LINE // 3)
                tail = "…" if shift + _MAX_LINE < len(text) else ""
                text = ("…" if shift else "") + text[shift : shift + _MAX_LINE] + tail
                shift -= 1 if shift else 0
            out.append(f"{paint(str(ln).rjust(width), _BLUE)} {paint('|', _BLUE)} {text}")
            for sp, msg, primary in here:
                start_col = sp.start_pos[1] - shift
                end_line, end_col = sp.end_pos
                stop = min(end_col - shift if end_line == ln else len(text) + 1, len(text) + 1)
                marks = ("^" if primary else "-") * max(1, stop - start_col)
                underline = " " * (start_col - 1) + marks + (f" {msg}" if msg else "")
                out.append(f"{gutter} {paint('|', _BLUE)} {paint(underline, sev if primary else _BLUE)}")
        for sec in d.secondary:
            if sec.span.source is not d.span.source:
                sline, scol = sec.span.start_pos
                out.append(f"{gutter} {paint('=', _BLUE)} note: {sec.message} "
                           f"({sec.span.source.display_path}:{sline}:{scol})")
        pad = gutter
    else:
        pad = ""
    for note in d.notes:
        out.append(f"{pad} {paint('=', _BLUE)} {paint('note', _BOLD)}: {note}")
    if d.witness:
        out.append(f"{pad} {paint('=', _BLUE)} {paint('witness', _BOLD)}: {d.witness[0]}")
        out.extend(f"{pad}            {w}" for w in d.witness[1:])
    if d.hint:
        out.append(f"{pad} {paint('=', _BLUE)} {paint('help', _BOLD)}: {d.hint}")
    return "\n".join(out)


def flat_text(d: Diagnostic) -> str:
    """The message with its hint, witness and notes as plain lines: for formats without structure (SARIF, LSP)."""
    return (d.message + (f"\nhelp: {d.hint}" if d.hint else "") + "".join(f"\nwitness: {w}" for w in d.witness)
            + "".join(f"\nnote: {n}" for n in d.notes))


def render_concise(d: Diagnostic) -> str:
    """`file:line:col: severity[CODE]: message` on one line."""
    path, line, col, _, _ = _location(d)
    where = f"{path}:{line}:{col}: " if path else ""
    return f"{where}{d.severity}[{d.code}]: {d.message}"


def to_json(d: Diagnostic) -> Object:
    """The JSON object for one diagnostic (the `json` format writes one per line)."""
    path, line, col, end_line, end_col = _location(d)
    obj: Object = {
        "file": path or None,
        "line": line or None,
        "column": col or None,
        "end_line": end_line or None,
        "end_column": end_col or None,
        "code": str(d.code),
        "severity": str(d.severity),
        "message": d.message,
        "hint": d.hint,
    }
    if d.label:
        obj["label"] = d.label
    if d.secondary:
        obj["related"] = [_json_label(s) for s in d.secondary]
    if d.witness:
        obj["witness"] = list(d.witness)
    if d.notes:
        obj["notes"] = list(d.notes)
    return obj


def _json_label(label: Label) -> dict[str, str | int]:
    """A secondary span as JSON: where it is and what it says."""
    (line, col), (end_line, end_col) = label.span.start_pos, label.span.end_pos
    return {"file": label.span.source.display_path, "line": line, "column": col, "end_line": end_line,
            "end_column": end_col, "message": label.message}


def sarif_uri(path: str) -> str:
    """A path as a SARIF `uri-reference`: forward slashes, percent-encoded; absolute paths as file: URIs."""
    windows = os.sep == "\\" or bool(_WINDOWS_DRIVE.match(path))
    posix = path.replace("\\", "/") if windows else path
    if _WINDOWS_DRIVE.match(posix):
        return "file:///" + posix[0] + "%3A" + quote(posix[2:])
    if posix.startswith("/"):
        return "file://" + quote(posix)
    return quote(posix)


def _github_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def render_github(d: Diagnostic) -> str:
    """A GitHub Actions workflow command (`::error file=…::message`)."""
    kind = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}[d.severity]
    path, line, col, end_line, end_col = _location(d)
    props = [f"title={_github_escape(str(d.code), True)}"]
    if path:
        props = [f"file={_github_escape(path, True)}", f"line={line}", f"col={col}",
                 f"endLine={end_line}", f"endColumn={end_col}"] + props
    message = d.message + (f" (help: {d.hint})" if d.hint else "")
    return f"::{kind} {','.join(props)}::{_github_escape(message)}"


#: The folder SARIF paths are written relative to (`%SRCROOT%`): `skillc check --sarif-root DIR`; None: as the
#: paths were given (relative to the current folder).
_SARIF_ROOT: list[Path] = []


@contextlib.contextmanager
def sarif_root(folder: str | os.PathLike[str] | None) -> Iterator[None]:
    """Within the block, SARIF artifact paths are relative to `folder` (the repository root code scanning maps
    `%SRCROOT%` to), and the log names it in `originalUriBaseIds`; a file outside it keeps its absolute URI."""
    if folder is None:
        yield
        return
    _SARIF_ROOT.append(Path(folder).absolute())
    try:
        yield
    finally:
        _SARIF_ROOT.pop()


def _artifact(path: str) -> dict[str, str]:
    """A SARIF artifactLocation; relative paths are relative to the checkout (`%SRCROOT%`)."""
    if _SARIF_ROOT and path and not path.startswith("<"):
        relative = os.path.relpath(Path(path).absolute(), _SARIF_ROOT[-1])
        path = str(Path(path).absolute()) if relative == ".." or relative.startswith(".." + os.sep) else relative
    uri = sarif_uri(path)
    return {"uri": uri} if uri.startswith("file:") else {"uri": uri, "uriBaseId": "%SRCROOT%"}


_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def to_sarif(diagnostics: Iterable[Diagnostic]) -> Object:
    """A SARIF 2.1.0 log with one run: the rules used and one result per diagnostic."""
    items = list(diagnostics)
    codes = sorted({d.code for d in items}, key=lambda c: c.code)
    rules = []
    for entry in codes:
        rules.append({
            "id": entry.code,
            "name": entry.slug,
            "shortDescription": {"text": entry.summary},
            "fullDescription": {"text": entry.explanation},
            "defaultConfiguration": {"level": _SARIF_LEVEL[entry.severity]},
            "help": {"text": entry.hint or entry.summary},
        })
    index = {code: i for i, code in enumerate(codes)}
    results = []
    for d in items:
        result: Object = {"ruleId": d.code.code, "ruleIndex": index[d.code], "level": _SARIF_LEVEL[d.severity],
                        "message": {"text": flat_text(d)}}
        if d.span is not None:
            path, line, col, end_line, end_col = _location(d)
            result["locations"] = [{"physicalLocation": {
                "artifactLocation": _artifact(path),
                "region": {"startLine": line, "startColumn": col, "endLine": end_line, "endColumn": end_col},
            }}]
            related = [{"id": i, "message": {"text": s.message}, "physicalLocation": {
                "artifactLocation": _artifact(s.span.source.display_path),
                "region": dict(zip(("startLine", "startColumn"), s.span.start_pos)),
            }} for i, s in enumerate(d.secondary)]
            if related:
                result["relatedLocations"] = related
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "skillc", "version": __version__, "rules": rules}},
            **({"originalUriBaseIds": {"%SRCROOT%": {"uri": sarif_uri(str(_SARIF_ROOT[-1])).rstrip("/") + "/"}}}
               if _SARIF_ROOT else {}),
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    }


def render(diagnostics: Iterable[Diagnostic], fmt: str = "full", stream: TextIO | None = None) -> str:
    """Render diagnostics in one of FORMATS; colour is decided from the target stream."""
    stream = stream or sys.stdout
    items = list(diagnostics)
    if fmt == "full":
        colour = use_colour(stream)
        return "\n\n".join(render_full(d, colour) for d in items)
    if fmt == "concise":
        return "\n".join(render_concise(d) for d in items)
    if fmt == "json":
        return "\n".join(json.dumps(to_json(d), ensure_ascii=False) for d in items)
    if fmt == "github":
        return "\n".join(render_github(d) for d in items)
    if fmt == "sarif":
        return json.dumps(to_sarif(items), indent=2, ensure_ascii=False)
    raise ValueError(f"unknown diagnostic format {fmt!r}")
