"""The run record: one typed schema for a run's trace — header, steps, footer — and its JSON Lines form.

Every writer (the interpreter, the baselines) builds these records and every
reader (replay, score, the overlay of `skillc dot --trace`, `skillc test`)
gets them from `read_run`; no other module knows the on-disk key names.

The on-disk names are those of format version 1 (skillc 0.1.0), which follow
the OpenTelemetry GenAI conventions where they fit (`gen_ai.operation.name`,
`gen_ai.request.model`, `gen_ai.usage.input_tokens`, ...) and use `skillc.`
for the rest. Version 2 adds `skillc.trace_version` to the header, writes step
errors as objects with a `kind`, and gives the footer of a run that ended in
the fallback a typed `skillc.reason`. Readers accept every version up to
`TRACE_VERSION`; a newer one is refused with SKM524, never misread. Keys this
version does not know are kept in `extra` and written back unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final, Literal, TypeAlias, cast, get_args

import attrs

from skillc.diagnostics.code import Code
from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.diagnostics.files import FileProblem, JSONProblem, loads, open_input
from skillc.diagnostics.source import SourceFile, Span
from skillc.ir.machine import OUTCOMES
from skillc.ir.machine import Outcome as Outcome  # re-exported: the footer's outcome
from skillc.runtime import codes
from skillc.runtime.jsonvalue import Object, Value
from skillc.version import __version__

#: The newest trace format this module reads, and the one it writes.
TRACE_VERSION: Final = 2

#: Why a step failed. `other`: a version-1 message that names none of the kinds below.
ErrorKind: TypeAlias = Literal["executor", "invalid_output", "tool", "arguments", "divergence", "deadline",
                               "counter", "assignment", "no_edge", "step_limit", "needs_user", "predicate",
                               "other"]
#: Why a run ended in the fallback: a step error's kind, or `edge` (an edge that leads to the fallback fired).
#: `needs_user`: `ask_user` had nobody to answer; `predicate`: a terminal's predicate did not hold on arrival.
EndKind: TypeAlias = Literal[ErrorKind, "edge"]
StepKind: TypeAlias = Literal["model", "judge", "tool", "turn"]
Mode: TypeAlias = Literal["machine", "native", "prompt-only"]
JSONObject: TypeAlias = Mapping[str, Value]

ERROR_KINDS: Final[tuple[str, ...]] = get_args(ErrorKind)
END_KINDS: Final[tuple[str, ...]] = (*ERROR_KINDS, "edge")
STEP_KINDS: Final[tuple[str, ...]] = get_args(StepKind)
MODES: Final[tuple[str, ...]] = get_args(Mode)


class RecordError(ValueError):
    """A record that does not fit the schema (a missing or wrong-typed field); the message says which."""


class TraceError(ValueError):
    """A trace file is missing, unreadable or malformed; `diagnostic` is the coded finding when there is one."""

    code: Code | None = None

    def __init__(self, message: str, diagnostic: Diagnostic | None = None) -> None:
        super().__init__(message)
        self.diagnostic = diagnostic
        if diagnostic is not None:
            self.code = diagnostic.code


# ---------------------------------------------------------------- field readers


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int(obj: JSONObject, key: str) -> int | None:
    value = obj.get(key)
    if value is None or _is_int(value):
        return cast("int | None", value)
    raise RecordError(f"`{key}` is {_kind(value)}, not an integer")


def _float(obj: JSONObject, key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise RecordError(f"`{key}` is {_kind(value)}, not a number")


def _str(obj: JSONObject, key: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise RecordError(f"`{key}` is {_kind(value)}, not a string")


def _obj(obj: JSONObject, key: str) -> JSONObject | None:
    value = obj.get(key)
    if value is None or isinstance(value, dict):
        return cast("JSONObject | None", value)
    raise RecordError(f"`{key}` is {_kind(value)}, not an object")


def _choice(obj: JSONObject, key: str, allowed: tuple[str, ...]) -> str | None:
    value = _str(obj, key)
    if value is None or value in allowed:
        return value
    raise RecordError(f"`{key}` is {value!r}, not one of " + ", ".join(allowed))


def _texts(obj: JSONObject, key: str) -> tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise RecordError(f"`{key}` must be a list of strings")


def _kind(value: object) -> str:
    return {bool: "a Boolean", int: "an integer", float: "a number", str: "a string", list: "a list",
            dict: "an object"}.get(type(value), type(value).__name__)


def _put(out: Object, key: str, value: object) -> None:
    """Set a key only when it has a value (absent and null read back the same)."""
    if value is not None:
        out[key] = value


# ---------------------------------------------------------------- records


@attrs.frozen
class StepError:
    """One failure inside a step: its kind and the message shown to people."""

    kind: ErrorKind
    message: str

    def to_json(self) -> Object:
        """The error as written in a version-2 trace."""
        return {"kind": self.kind, "message": self.message}

    @classmethod
    def from_json(cls, value: object) -> StepError:
        """An error as written: an object (version 2) or a bare message (version 1, kind inferred)."""
        if isinstance(value, str):
            return cls(legacy_kind(value), value)
        if not isinstance(value, dict):
            raise RecordError(f"an error is {_kind(value)}, not an object or a message")
        message = _str(value, "message")
        kind = _choice(value, "kind", ERROR_KINDS)
        if message is None or kind is None:
            raise RecordError("an error needs a `kind` and a `message`")
        return cls(cast(ErrorKind, kind), message)


#: Version-1 messages began with these words; the kind is read back from them (version 2 writes it).
_LEGACY_PREFIXES: Final[tuple[tuple[str, ErrorKind], ...]] = (
    ("invalid output", "invalid_output"), ("no valid output", "invalid_output"), ("tool `", "tool"),
    ("cannot build the arguments", "arguments"), ("assignment to", "assignment"), ("counter `", "counter"),
    ("no edge fired", "no_edge"), ("step limit", "step_limit"))


def legacy_kind(message: str) -> ErrorKind:
    """The kind of a version-1 error message (which carried no kind)."""
    if "within the step deadline" in message:
        return "deadline"
    if ": the trace recorded `" in message or ": the machine entered `" in message:
        return "divergence"
    if message.startswith(("executor:", "the executor failed")):
        return "executor"
    return next((kind for prefix, kind in _LEGACY_PREFIXES if message.startswith(prefix)), "other")


@attrs.frozen
class EndReason:
    """Why a run ended in the fallback: the kind, a message, and the step, state and edge it happened at."""

    kind: EndKind
    message: str
    step: int | None = None
    state: str | None = None
    edge: int | None = None

    def to_json(self) -> Object:
        """The reason as written in the footer."""
        out: Object = {"kind": self.kind, "message": self.message}
        _put(out, "step", self.step)
        _put(out, "state", self.state)
        _put(out, "edge", self.edge)
        return out

    @classmethod
    def from_json(cls, value: object) -> EndReason:
        """A reason as written."""
        if not isinstance(value, dict):
            raise RecordError(f"`skillc.reason` is {_kind(value)}, not an object")
        kind = _choice(value, "kind", END_KINDS)
        message = _str(value, "message")
        if kind is None or message is None:
            raise RecordError("`skillc.reason` needs a `kind` and a `message`")
        return cls(cast(EndKind, kind), message, _int(value, "step"), _str(value, "state"), _int(value, "edge"))

    @classmethod
    def of(cls, error: StepError, step: int | None = None, state: str | None = None) -> EndReason:
        """The reason a step error gives for the fallback."""
        return cls(error.kind, error.message, step, state)


@attrs.frozen
class ToolCall:
    """A tool called with arguments, and what the call did to the world.

    `effects`: one JSON object per effect of a kit call (`{"op": "write", "path": "r.md", "bytes": 12,
    "sha256": "..."}`, `{"op": "bash", "exit_code": 0, "duration_ms": 8.1, "cwd": "."}`, ...); None when the
    tool reports none (a Python tool, a script's or a replayed result, a trace written before effects were
    recorded). An optional key inside `tool_call`: older readers ignore it, so the format version stays.
    """

    tool: str
    args: JSONObject
    effects: tuple[JSONObject, ...] | None = None

    def to_json(self) -> Object:
        """The call as written."""
        out: Object = {"tool": self.tool, "args": dict(self.args)}
        if self.effects is not None:
            out["effects"] = [dict(e) for e in self.effects]
        return out

    @classmethod
    def from_json(cls, value: object) -> ToolCall:
        """A call as written (with or without `effects`)."""
        if not isinstance(value, dict):
            raise RecordError(f"`tool_call` is {_kind(value)}, not an object")
        tool = _str(value, "tool")
        if tool is None:
            raise RecordError("`tool_call` names no `tool`")
        effects = value.get("effects")
        if effects is not None and not (isinstance(effects, list) and all(isinstance(e, dict) for e in effects)):
            raise RecordError("`tool_call.effects` must be a list of objects")
        return cls(tool, _obj(value, "args") or {},
                   None if effects is None else tuple(cast("list[JSONObject]", effects)))


_HEADER_KEYS: Final = frozenset({"type", "skillc.trace_version", "skillc.version", "skillc.machine",
                                 "skillc.machine_hash", "skillc.run_id", "skillc.mode", "skillc.executor", "inputs",
                                 "started", "skillc.resumed_at_step", "skillc.workdir"})


@attrs.frozen(kw_only=True)
class RunHeader:
    """The first record of a run (and of each resumption): what ran, how, with which inputs."""

    version: int = TRACE_VERSION
    skillc_version: str | None = None
    machine: str | None = None
    machine_hash: str | None = None
    run_id: str | None = None
    mode: Mode = "machine"
    executor: str | None = None
    inputs: JSONObject | None = None
    started: str | None = None
    resumed_at_step: int | None = None
    workdir: str | None = None  # the folder the run's tools ran in (absolute), so its files can be judged later
    extra: JSONObject = attrs.field(factory=dict)

    def to_json(self) -> Object:
        """The header as one JSON object (`type` first: refusing to overwrite a non-trace file looks for it)."""
        out: Object = {"type": "header", "skillc.trace_version": self.version}
        _put(out, "skillc.version", self.skillc_version)
        _put(out, "skillc.machine", self.machine)
        _put(out, "skillc.machine_hash", self.machine_hash)
        _put(out, "skillc.run_id", self.run_id)
        out["skillc.mode"] = self.mode
        _put(out, "skillc.executor", self.executor)
        _put(out, "inputs", None if self.inputs is None else dict(self.inputs))
        _put(out, "started", self.started)
        _put(out, "skillc.resumed_at_step", self.resumed_at_step)
        _put(out, "skillc.workdir", self.workdir)
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: JSONObject) -> RunHeader:
        """A header as written (any version up to TRACE_VERSION; check `version_problem` first)."""
        return cls(version=_int(obj, "skillc.trace_version") or 1, skillc_version=_str(obj, "skillc.version"),
                   machine=_str(obj, "skillc.machine"), machine_hash=_str(obj, "skillc.machine_hash"),
                   run_id=_str(obj, "skillc.run_id"),
                   mode=cast(Mode, _choice(obj, "skillc.mode", MODES) or "machine"),
                   executor=_str(obj, "skillc.executor"), inputs=_obj(obj, "inputs"), started=_str(obj, "started"),
                   resumed_at_step=_int(obj, "skillc.resumed_at_step"), workdir=_str(obj, "skillc.workdir"),
                   extra={k: v for k, v in obj.items() if k not in _HEADER_KEYS})


def new_header(machine: str, mode: Mode, executor: str | None, inputs: JSONObject, *, machine_hash: str | None = None,
               run_id: str | None = None, resumed_at_step: int | None = None,
               workdir: str | None = None) -> RunHeader:
    """The header of a run starting now (the one place headers are made, for every mode)."""
    return RunHeader(skillc_version=__version__, machine=machine, machine_hash=machine_hash, run_id=run_id, mode=mode,
                     executor=executor, inputs=inputs, started=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     resumed_at_step=resumed_at_step, workdir=workdir)


def version_problem(obj: JSONObject) -> str | None:
    """Why a header's format version cannot be read by this module, or None."""
    version = obj.get("skillc.trace_version", 1)
    if not _is_int(version) or version < 1:
        return f"`skillc.trace_version` is {version!r}, not a positive integer"
    if version > TRACE_VERSION:
        written = obj.get("skillc.version")
        by = f" by skillc {written}" if isinstance(written, str) else ""
        return (f"the trace was written{by} in trace format version {version}; this skillc reads versions 1 to "
                f"{TRACE_VERSION}")
    return None


_STEP_KEYS: Final = frozenset({"type", "step", "state", "kind", "inputs", "gen_ai.operation.name",
                               "skillc.prompt_chars", "gen_ai.request.model", "gen_ai.usage.input_tokens",
                               "gen_ai.usage.output_tokens", "gen_ai.tool.name", "tool_call", "skillc.raw_output",
                               "skillc.retries", "skillc.errors", "output", "label", "skillc.warnings",
                               "skillc.latency_ms", "edge", "assignments", "target", "tool_result",
                               "skillc.answered_by"})


@attrs.frozen(kw_only=True)
class Step:
    """One committed step: the state, what it saw and answered, the tool call, the edge taken, the costs.

    `inputs`: the values of the state's reads (machine mode). `output`: the answer as parsed (records and maps
    as their merge patches) or a tool's bound results. `edge`/`target`: the edge that fired and the state entered
    next (the fallback when the step failed). `retries`: the attempts after the first. Tokens are this step's.
    """

    index: int
    state: str
    kind: StepKind | None = None
    inputs: JSONObject | None = None
    operation: str | None = None
    prompt_chars: int | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tool_name: str | None = None
    tool_call: ToolCall | None = None
    raw_output: str | None = None
    retries: int | None = None
    errors: tuple[StepError, ...] = ()
    output: JSONObject | None = None
    label: str | None = None
    warnings: tuple[str, ...] = ()
    latency_ms: float | None = None
    edge: int | None = None
    assignments: JSONObject | None = None
    target: str | None = None
    tool_result: JSONObject | None = None
    #: An `ask_user` step: who answered (`user`: a person, on the terminal or by `--resume --answer`;
    #: `callback`: the API's answer function; `prepared`: an answer given in advance, as a bench task's).
    answered_by: str | None = None
    extra: JSONObject = attrs.field(factory=dict)

    def to_json(self) -> Object:
        """The step as one JSON object; a chat step always states its model and token counts (null: unknown)."""
        out: Object = {"type": "step", "step": self.index, "state": self.state}
        _put(out, "kind", self.kind)
        _put(out, "inputs", None if self.inputs is None else dict(self.inputs))
        _put(out, "gen_ai.operation.name", self.operation)
        _put(out, "skillc.prompt_chars", self.prompt_chars)
        if self.operation == "chat":
            out["gen_ai.request.model"] = self.model
            out["gen_ai.usage.input_tokens"] = self.input_tokens
            out["gen_ai.usage.output_tokens"] = self.output_tokens
        else:
            _put(out, "gen_ai.request.model", self.model)
            _put(out, "gen_ai.usage.input_tokens", self.input_tokens)
            _put(out, "gen_ai.usage.output_tokens", self.output_tokens)
        _put(out, "gen_ai.tool.name", self.tool_name)
        _put(out, "tool_call", None if self.tool_call is None else self.tool_call.to_json())
        _put(out, "skillc.raw_output", self.raw_output)
        _put(out, "skillc.retries", self.retries)
        if self.errors:
            out["skillc.errors"] = [e.to_json() for e in self.errors]
        _put(out, "output", None if self.output is None else dict(self.output))
        _put(out, "label", self.label)
        if self.warnings:
            out["skillc.warnings"] = list(self.warnings)
        _put(out, "skillc.latency_ms", self.latency_ms)
        _put(out, "edge", self.edge)
        _put(out, "assignments", None if self.assignments is None else dict(self.assignments))
        _put(out, "target", self.target)
        _put(out, "tool_result", None if self.tool_result is None else dict(self.tool_result))
        _put(out, "skillc.answered_by", self.answered_by)
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: JSONObject) -> Step:
        """A step as written (version 1 or 2)."""
        index, state = obj.get("step"), obj.get("state")
        if not _is_int(index) or not isinstance(state, str):
            raise RecordError("a step record lacks `state` or `step`")
        errors = obj.get("skillc.errors")
        if errors is not None and not isinstance(errors, list):
            raise RecordError(f"`skillc.errors` is {_kind(errors)}, not a list")
        call = obj.get("tool_call")
        return cls(index=cast(int, index), state=state, kind=cast("StepKind | None", _choice(obj, "kind", STEP_KINDS)),
                   inputs=_obj(obj, "inputs"), operation=_str(obj, "gen_ai.operation.name"),
                   prompt_chars=_int(obj, "skillc.prompt_chars"), model=_str(obj, "gen_ai.request.model"),
                   input_tokens=_int(obj, "gen_ai.usage.input_tokens"),
                   output_tokens=_int(obj, "gen_ai.usage.output_tokens"), tool_name=_str(obj, "gen_ai.tool.name"),
                   tool_call=None if call is None else ToolCall.from_json(call),
                   raw_output=_str(obj, "skillc.raw_output"), retries=_int(obj, "skillc.retries"),
                   errors=tuple(StepError.from_json(e) for e in errors or ()), output=_obj(obj, "output"),
                   label=_str(obj, "label"), warnings=_texts(obj, "skillc.warnings"),
                   latency_ms=_float(obj, "skillc.latency_ms"), edge=_int(obj, "edge"),
                   assignments=_obj(obj, "assignments"), target=_str(obj, "target"),
                   tool_result=_obj(obj, "tool_result"), answered_by=_str(obj, "skillc.answered_by"),
                   extra={k: v for k, v in obj.items() if k not in _STEP_KEYS})


@attrs.frozen
class Verdict:
    """A terminal's predicate judged on arrival: its text, whether it held, and why not (a message)."""

    terminal: str
    predicate: str
    holds: bool
    reason: str | None = None

    def to_json(self) -> Object:
        """The verdict as written in the footer's `skillc.predicates`."""
        out: Object = {"terminal": self.terminal, "predicate": self.predicate, "holds": self.holds}
        _put(out, "reason", self.reason)
        return out

    @classmethod
    def from_json(cls, value: object) -> Verdict:
        """A verdict as written."""
        if not isinstance(value, dict):
            raise RecordError(f"a predicate verdict is {_kind(value)}, not an object")
        terminal, predicate, holds = _str(value, "terminal"), _str(value, "predicate"), value.get("holds")
        if terminal is None or predicate is None or not isinstance(holds, bool):
            raise RecordError("a predicate verdict needs `terminal`, `predicate` and a Boolean `holds`")
        return cls(terminal, predicate, holds, _str(value, "reason"))


_FOOTER_KEYS: Final = frozenset({"type", "skillc.terminal", "skillc.outcome", "skillc.evidence", "skillc.steps",
                                 "skillc.error", "skillc.reason", "gen_ai.usage.input_tokens",
                                 "gen_ai.usage.output_tokens", "skillc.latency_ms", "skillc.predicates"})


@attrs.frozen(kw_only=True)
class Footer:
    """The last record of a finished run: where it ended, with what evidence, why (a fallback), and the totals.

    `error`: the message of the failure that sent the run to the fallback (None for an edge that leads there);
    `reason`: the typed cause of any fallback, that edge included. Totals: steps, tokens, latency of the run.
    """

    terminal: str | None = None
    outcome: Outcome | None = None
    evidence: JSONObject = attrs.field(factory=dict)
    steps: int | None = None
    error: str | None = None
    reason: EndReason | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_ms: float | None = None
    #: The predicates of the terminal the run arrived at, judged over the world (a failing one sent it to the
    #: fallback); replay reads them from here instead of looking at the world again.
    predicates: tuple[Verdict, ...] = ()
    extra: JSONObject = attrs.field(factory=dict)

    def to_json(self) -> Object:
        """The footer as one JSON object."""
        out: Object = {"type": "footer", "skillc.terminal": self.terminal, "skillc.outcome": self.outcome,
                               "skillc.evidence": dict(self.evidence), "skillc.steps": self.steps,
                               "skillc.error": self.error}
        _put(out, "skillc.reason", None if self.reason is None else self.reason.to_json())
        out["gen_ai.usage.input_tokens"] = self.input_tokens
        out["gen_ai.usage.output_tokens"] = self.output_tokens
        _put(out, "skillc.latency_ms", self.latency_ms)
        if self.predicates:
            out["skillc.predicates"] = [v.to_json() for v in self.predicates]
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: JSONObject) -> Footer:
        """A footer as written (version 1 has no `skillc.reason`)."""
        reason = obj.get("skillc.reason")
        verdicts = obj.get("skillc.predicates")
        if verdicts is not None and not isinstance(verdicts, list):
            raise RecordError(f"`skillc.predicates` is {_kind(verdicts)}, not a list")
        return cls(terminal=_str(obj, "skillc.terminal"),
                   outcome=cast("Outcome | None", _choice(obj, "skillc.outcome", OUTCOMES)),
                   evidence=_obj(obj, "skillc.evidence") or {}, steps=_int(obj, "skillc.steps"),
                   error=_str(obj, "skillc.error"), reason=None if reason is None else EndReason.from_json(reason),
                   input_tokens=_int(obj, "gen_ai.usage.input_tokens"),
                   output_tokens=_int(obj, "gen_ai.usage.output_tokens"), latency_ms=_float(obj, "skillc.latency_ms"),
                   predicates=tuple(Verdict.from_json(v) for v in verdicts or ()),
                   extra={k: v for k, v in obj.items() if k not in _FOOTER_KEYS})


Record: TypeAlias = RunHeader | Step | Footer
_PARSERS: Final[dict[str, Callable[[JSONObject], Record]]] = {
    "header": RunHeader.from_json, "step": Step.from_json, "footer": Footer.from_json}


@attrs.frozen
class RunTrace:
    """A whole trace: its header (the last one: a resumed run appends another), steps, and footer if it finished."""

    header: RunHeader
    steps: tuple[Step, ...]
    footer: Footer | None
    headers: tuple[RunHeader, ...] = ()
    #: The last record is the footer (a resumed run's header or steps after it say the footer is not its end).
    ended: bool = False

    @property
    def states(self) -> tuple[str, ...]:
        """The states of the steps, in order."""
        return tuple(s.state for s in self.steps)

    def records(self) -> Iterator[Record]:
        """Every record: the headers, the steps, the footer (a resumption's header is not put back between steps)."""
        yield from self.headers or (self.header,)
        yield from self.steps
        if self.footer is not None:
            yield self.footer


# ---------------------------------------------------------------- reading whole traces

#: At most this many problems are reported for one file (the first is what stops a reader).
_MAX_PROBLEMS: Final = 20


def parse_run(text: str, path: str = "<trace>") -> tuple[RunTrace | None, list[Diagnostic]]:
    """The run in a trace's text, or None and the coded problems (each at its line); never raises on bad input."""
    source = SourceFile(path, text)
    problems: list[Diagnostic] = []
    records: list[Record] = []
    lines = text.split("\n")
    offset = 0
    for number, line in enumerate(lines, 1):
        span = Span(source, offset, offset + len(line))
        offset += len(line) + 1
        if not line.strip() or len(problems) >= _MAX_PROBLEMS:
            continue
        try:
            obj = loads(line)
        except JSONProblem as exc:
            if number == len(lines) and records and not problems:
                break  # a last line torn by a crash: the record was never completed
            problems.append(make(codes.MALFORMED_TRACE_LINE, f"the line is {exc}", span))
            continue
        kind = obj.get("type") if isinstance(obj, dict) else None
        parse = _PARSERS.get(kind) if isinstance(kind, str) else None
        if parse is None:
            problems.append(make(codes.NOT_A_TRACE, "not a trace record (expected type header, step or "
                                     "footer)", span))
            continue
        if kind == "header" and (why := version_problem(obj)) is not None:
            problems.append(make(codes.UNSUPPORTED_TRACE_VERSION, why, span))
            return None, problems  # nothing after a header this reader does not know can be trusted
        try:
            records.append(parse(obj))
        except RecordError as exc:
            problems.append(make(codes.INVALID_TRACE_RECORD, str(exc), span))
    if problems:
        return None, problems
    if not records or not isinstance(records[0], RunHeader):
        where = Span(source, 0, len(lines[0])) if text else None
        return None, [make(codes.NOT_A_TRACE, "the first record must be the header", where)]
    headers = tuple(r for r in records if isinstance(r, RunHeader))
    footers = [r for r in records if isinstance(r, Footer)]
    steps = tuple(r for r in records if isinstance(r, Step))
    return RunTrace(headers[-1], steps, footers[-1] if footers else None, headers, isinstance(records[-1], Footer)), []


def read_run(path: str | Path) -> tuple[RunTrace | None, list[Diagnostic]]:
    """The run in a trace file, or None and coded problems (SKM520 for a file that cannot be read as text)."""
    try:
        text = open_input(path, folder="a folder, not a trace").decode("utf-8")
    except FileProblem as exc:
        return None, [make(codes.UNREADABLE_TRACE, str(exc))]
    except UnicodeDecodeError as exc:
        return None, [make(codes.UNREADABLE_TRACE, f"cannot read trace {path}: not UTF-8 text (invalid byte at "
                                                   f"offset {exc.start})")]
    return parse_run(text, str(path))


def load_run(path: str | Path) -> RunTrace:
    """The run in a trace file; TraceError carries the first problem (its code and line) otherwise."""
    run, problems = read_run(path)
    if run is None:
        first = problems[0]
        where = f"{path}:{first.span.start_pos[0]}: " if first.span is not None and first.span.text() else \
            (f"{path}: " if first.code != codes.UNREADABLE_TRACE else "")
        raise TraceError(where + first.message, first)
    return run
