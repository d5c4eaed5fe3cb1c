"""`skillc import langgraph MODULE:ATTR` inside the box: the user's module is imported, read and translated in a
confined child (`python -I -m skillc.frontends.importers._graph_box FOLDER SPEC`), never in skillc's own process.

The child answers with one JSON object on a private copy of its stdout (the module's own prints go to stderr):
{"text": the .skm text or null, "diagnostics": [...], "sources": {path: text}}. Diagnostics travel as plain JSON
(code, message, severity, data, spans as offsets into the sources sent along), never pickled: the parent must not run
anything the child could forge. `to_json`/`from_json` are the two halves; `main` is the child.
"""

from __future__ import annotations

import json
import os
import sys

from skillc.diagnostics import Diagnostic, Label, Span
from skillc.diagnostics.code import Severity
from skillc.diagnostics.source import SourceFile
from skillc.runtime.jsonvalue import Object


def _span_json(span: Span | None, sources: dict[str, str]) -> Object | None:
    """A span as {path, start, end}; its source's text goes to `sources`."""
    if span is None:
        return None
    sources.setdefault(span.source.path, span.source.text)
    return {"path": span.source.path, "start": span.start, "end": span.end}


def to_json(text: str | None, diagnostics: list[Diagnostic]) -> Object:
    """The child's answer."""
    sources: dict[str, str] = {}
    found = [{"code": str(d.code), "message": d.message, "severity": d.severity.name, "label": d.label,
              "notes": list(d.notes), "hint": d.hint, "witness": list(d.witness), "data": dict(d.data),
              "span": _span_json(d.span, sources),
              "secondary": [{"span": _span_json(s.span, sources), "message": s.message} for s in d.secondary]}
             for d in diagnostics]
    return {"text": text, "diagnostics": found, "sources": sources}


def _span(raw: object, files: dict[str, SourceFile]) -> Span | None:
    """A span back from JSON (None for anything malformed)."""
    if not isinstance(raw, dict) or raw.get("path") not in files:
        return None
    start, end = raw.get("start"), raw.get("end")
    if not isinstance(start, int) or not isinstance(end, int):
        return None
    return Span(files[raw["path"]], start, end)


def from_json(answer: Object) -> tuple[str | None, list[Diagnostic]]:
    """The parent's half: the text and diagnostics of a child's answer (ValueError when it is malformed).

    A code travels as its string and comes back as the registry's `Code` (the child may report any stage's:
    `read_back` checks an exported graph's machine); one that is not a code makes the answer malformed."""
    from skillc.registry import BY_CODE  # deferred: only a boxed import needs every stage's table

    sources = answer.get("sources") or {}
    if not isinstance(sources, dict):
        raise ValueError("sources is not an object")
    files = {str(p): SourceFile(str(p), str(t)) for p, t in sources.items()}
    text = answer.get("text")
    out: list[Diagnostic] = []
    for d in answer.get("diagnostics") or []:
        secondary = tuple(Label(span, str(s.get("message", ""))) for s in d.get("secondary") or ()
                          if (span := _span(s.get("span"), files)) is not None)
        code = BY_CODE.get(str(d["code"]))
        if code is None:
            raise ValueError(f"unknown diagnostic code {d['code']!r}")
        data = d.get("data") or {}
        if not isinstance(data, dict):
            raise ValueError("data is not an object")
        out.append(Diagnostic(code, str(d["message"]), _span(d.get("span"), files),
                              Severity[str(d.get("severity", "ERROR"))], str(d.get("label") or ""), secondary,
                              tuple(map(str, d.get("notes") or ())), d.get("hint"),
                              tuple(map(str, d.get("witness") or ())),
                              tuple(sorted((str(k), str(v)) for k, v in data.items()))))
    if text is not None and not isinstance(text, str):
        raise ValueError("text is not a string")
    return text, out


def translate(spec: str, folder: str) -> tuple[str | None, list[Diagnostic]]:
    """In the child: what `skillc import langgraph` makes of `spec`, the module found in `folder`."""
    from skillc.export.readback import read_back  # a graph `skillc export langgraph` wrote comes back as its machine
    from skillc.frontends.importers.langgraph import to_skm  # cycle: langgraph imports this module

    if folder not in sys.path:
        sys.path.insert(0, folder)
    exported = read_back(spec)
    if exported is not None:
        return exported
    return to_skm(spec)


def main() -> None:
    """The child: translate, answer on a private stdout, and leave without waiting for the module's threads."""
    answer_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    folder, spec = sys.argv[1:3]
    try:
        answer = to_json(*translate(spec, folder))
    except Exception as exc:  # noqa: BLE001 - a bug of skillc's, reported as the parent reports one
        answer = {"internal": f"{type(exc).__name__}: {exc}"}
    os.write(answer_fd, json.dumps(answer).encode())
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
