"""The trace format (`skillc-trace/1`): one JSON object per line, one run per object.

A trace records an `Episode`, a run of an agent in an environment: its header (id,
the environment, the game it was played in, entity names and types, action
templates, whether it succeeded) and its steps, each a `Transition` (observation,
action, next observation, the actions available before the action, score, done).
`read_traces` validates every line and never raises on user error.

The names are the distiller's own: an environment's episodes are not skillc's run
traces (`skillc.runtime.record.RunTrace`, whose records are `Step`s).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.files import MAX_JSON_DEPTH, depth_exceeds, read_bytes
from skillc.diagnostics.source import SourceFile, Span
from skillc.frontends.distill import codes
from skillc.runtime.trace import Redactor, env_redactor

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Object, Value

FORMAT = "skillc-trace/1"


@attrs.frozen
class Transition:
    """One action of an episode and what the environment showed around it."""

    observation: str
    action: str
    next_observation: str
    available_actions: tuple[str, ...]
    score: float
    done: bool


@attrs.frozen
class Episode:
    """A whole run in an environment: header fields and transitions; `span` is its line in the file it was read from."""

    id: str
    steps: tuple[Transition, ...]
    success: bool
    env: str = "generic"
    objective: str = ""
    entities: dict[str, str] | None = attrs.field(default=None, eq=False)
    templates: tuple[str, ...] = ()
    game: Object | None = attrs.field(default=None, eq=False)
    profile: Object | str | None = attrs.field(default=None, eq=False)  # the environment's profile (or its file)
    score: float | None = None
    max_score: float | None = None
    span: Span | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def actions(self) -> tuple[str, ...]:
        """The actions of the run, in order."""
        return tuple(s.action for s in self.steps)

    def to_json(self) -> Object:
        """The trace as one `skillc-trace/1` object."""
        out: Object = {"format": FORMAT, "id": self.id, "env": self.env, "success": self.success}
        if self.objective:
            out["objective"] = self.objective
        if self.game is not None:
            out["game"] = self.game
        if self.entities is not None:
            out["entities"] = self.entities
        if self.templates:
            out["templates"] = list(self.templates)
        if self.profile is not None:
            out["profile"] = self.profile
        if self.score is not None:
            out["score"] = self.score
        if self.max_score is not None:
            out["max_score"] = self.max_score
        out["steps"] = [attrs.asdict(s, value_serializer=lambda _i, _a, v: list(v) if isinstance(v, tuple) else v)
                        for s in self.steps]
        return out


def dumps(traces: Iterable[Episode]) -> str:
    """JSONL text of traces, one per line."""
    redact = env_redactor()
    return "".join(json.dumps(redact(t.to_json()), ensure_ascii=False) + "\n" for t in traces)


class _Bad(Exception):
    """A field of a trace line is missing or has the wrong type."""


_STEP_FIELDS: dict[str, type | tuple[type, ...]] = {"observation": str,
 "action": str, "next_observation": str, "available_actions": list,
                "score": (int, float), "done": bool}


def _field(obj: Object, name: str, kind: type | tuple[type, ...], where: str, required: bool = True) -> Value:
    """`obj[name]` checked to be of `kind` (a bool is not a number); None when absent and not `required`."""
    if name not in obj:
        if required:
            raise _Bad(f"{where} has no `{name}`")
        return None
    value = obj[name]
    if (kind in (int, float, (int, float)) and isinstance(value, bool)) or not isinstance(value, kind):
        want = {str: "a string", list: "a list", bool: "true or false", dict: "an object",
                (int, float): "a number"}.get(kind, str(kind))
        raise _Bad(f"`{name}` of {where} is {type(value).__name__}, not {want}")
    return value


def _step(obj: Value, index: int) -> Transition:
    where = f"step {index}"
    if not isinstance(obj, dict):
        raise _Bad(f"{where} is {type(obj).__name__}, not an object")
    values = {name: _field(obj, name, kind, where) for name, kind in _STEP_FIELDS.items()}
    if not values["action"].strip():
        raise _Bad(f"the action of {where} is empty")
    if not all(isinstance(a, str) for a in values["available_actions"]):
        raise _Bad(f"`available_actions` of {where} holds something that is not a string")
    values["available_actions"] = tuple(values["available_actions"])
    return Transition(**values)


def _trace(obj: Value, span: Span) -> Episode:
    if not isinstance(obj, dict):
        raise _Bad(f"the line is {type(obj).__name__}, not a trace object")
    fmt = obj.get("format", FORMAT)
    if fmt != FORMAT:
        raise _Bad(f"the format is {fmt!r}, not {FORMAT!r}")
    ident = _field(obj, "id", str, "the trace")
    steps = _field(obj, "steps", list, "the trace")
    success = _field(obj, "success", bool, "the trace")
    entities = _field(obj, "entities", dict, "the trace", required=False)
    if entities is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in entities.items()):
        raise _Bad("`entities` must map entity names to type names (strings)")
    templates = _field(obj, "templates", list, "the trace", required=False) or []
    if not all(isinstance(t, str) for t in templates):
        raise _Bad("`templates` must be a list of strings")
    game = _field(obj, "game", dict, "the trace", required=False)
    profile = obj.get("profile")
    if profile is not None and not isinstance(profile, (dict, str)):
        raise _Bad(f"`profile` of the trace is {type(profile).__name__}, not an object or a file name")
    return Episode(
        id=ident, steps=tuple(_step(s, i + 1) for i, s in enumerate(steps)), success=success,
        env=_field(obj, "env", str, "the trace", required=False) or "generic",
        objective=_field(obj, "objective", str, "the trace", required=False) or "",
        entities=entities, templates=tuple(templates), game=game, profile=profile,
        score=_field(obj, "score", (int, float), "the trace", required=False),
        max_score=_field(obj, "max_score", (int, float), "the trace", required=False),
        span=span)


def parse_traces(text: str, path: str = "<traces>", redact: Redactor | None = None
                 ) -> tuple[list[Episode], list[Diagnostic]]:
    """Every trace of a JSONL text, and an SKM401 error for each line that is not one; `redact`: secrets in the
    traces replaced as they are read (what distill writes is made from them)."""
    source = SourceFile(path, text)
    traces: list[Episode] = []
    diagnostics: list[Diagnostic] = []
    seen: dict[str, str] = {}
    for number, (start, line) in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        span = Span(source, start, start + len(line))
        where = f"{path}:{number}"
        try:
            obj = json.loads(line)
            if depth_exceeds(obj, MAX_JSON_DEPTH):
                raise RecursionError
            if redact is not None:
                obj = redact(obj)
        except RecursionError:
            diagnostics.append(make(codes.BAD_TRACE, f"line {number} nests too deeply to be a trace (more than "
                                    f"{MAX_JSON_DEPTH} levels)", span,
                                    hint="each line of a trace file is one JSON object"))
            continue
        except json.JSONDecodeError as exc:
            diagnostics.append(make(codes.BAD_TRACE, f"line {number} is not JSON: {exc.msg} (column {exc.colno})",
                                    Span(source, start + exc.pos, start + min(exc.pos + 1, len(line))),
                                    hint="each line of a trace file is one JSON object"))
            continue
        try:
            trace = _trace(obj, span)
        except _Bad as exc:
            diagnostics.append(make(codes.BAD_TRACE, f"line {number} is not a valid trace: {exc}", span,
                                    hint="see the `skillc-trace/1` format in docs/distill.md"))
            continue
        if trace.id in seen:
            diagnostics.append(make(codes.BAD_TRACE, f"trace id `{trace.id}` is used twice (first at {seen[trace.id]})",
                                    span, hint="give every trace its own id"))
            continue
        seen[trace.id] = where
        traces.append(trace)
    return traces, diagnostics


def _lines(text: str) -> Iterator[tuple[int, str]]:
    """Each line of `text` with the offset where it starts."""
    start = 0
    for line in text.split("\n"):
        yield start, line
        start += len(line) + 1


def read_traces(paths: Iterable[str | Path]) -> tuple[list[Episode], list[Diagnostic]]:
    """Read JSONL trace files; unreadable files and bad lines are SKM401 errors, never exceptions."""
    traces: list[Episode] = []
    diagnostics: list[Diagnostic] = []
    ids: set[str] = set()
    redact = env_redactor()  # the one redactor: a secret in a trace reaches no library, report or machine
    for path in paths:
        data, problem = read_bytes(path, folder="a folder, not a trace file", code=codes.BAD_TRACE)
        if data is None:
            diagnostics += [problem] if problem is not None else []
            continue
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            diagnostics.append(make(codes.BAD_TRACE, f"{path} is not UTF-8 text",
                                    hint="trace files are JSONL in UTF-8"))
            continue
        found, problems = parse_traces(text, str(path), redact)
        diagnostics += problems
        for trace in found:
            if trace.id in ids:
                diagnostics.append(make(codes.BAD_TRACE, f"trace id `{trace.id}` appears in more than one file",
                                        trace.span, hint="give every trace its own id"))
                continue
            ids.add(trace.id)
            traces.append(trace)
    return traces, diagnostics


def successful(traces: Iterable[Episode]) -> tuple[list[Episode], list[Diagnostic]]:
    """The traces that succeeded, and an SKM402 warning for each one left out."""
    kept: list[Episode] = []
    diagnostics: list[Diagnostic] = []
    for trace in traces:
        reason = None
        if not trace.steps:
            reason = "it has no steps"
        elif not trace.success:
            reason = "its `success` is false"
        elif not trace.steps[-1].done:
            reason = "its last step is not `done`"
        if reason:
            diagnostics.append(make(codes.FAILED_TRACE, f"trace `{trace.id}` is left out: {reason}", trace.span))
        else:
            kept.append(trace)
    return kept, diagnostics
