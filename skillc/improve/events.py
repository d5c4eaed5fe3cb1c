"""Development traces as typed event sequences: the seam between trace import and alignment.

Every importer (skillc's own runs in any mode, OpenAI-style chat transcripts,
Claude Code `stream-json` logs) produces a `DevTrace`; alignment, editing,
acceptance and the archive read nothing else. A trace's `id` is the SHA-256 of
its canonical JSON (events and outcome, not where it was read from), so the
archive is content-addressed and one run imported twice is one trace.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from typing import Literal, cast, get_args

import attrs

#: What an event realises: a tool call (with its result) or a model turn (text and, maybe, a structured output).
EventKind = Literal["tool", "model"]
#: How the run ended; "unfinished" is a run that never reached its end.
TraceOutcome = Literal["success", "partial", "failed", "unfinished"]
#: Where a trace came from.
TraceFormat = Literal["skillc", "chat", "claude-code", "codex"]


@attrs.frozen
class Event:
    """One step of a development trace."""

    kind: EventKind
    tool: str | None = None  # the tool called (kind "tool")
    args: Mapping[str, object] = attrs.field(factory=dict)  # its arguments, as JSON values
    result: object = None  # the tool's result (a JSON value), or None
    text: str = ""  # the model's text at this step: instructions, reasoning, or the reply
    output: Mapping[str, object] | None = None  # a model step's structured output (the values it wrote)
    state: str | None = None  # the machine state that performed it, when the trace says (skillc machine mode)
    line: int = 0  # the line of the source file it was read from (1-based; 0 when not from a file)
    call_id: str | None = None  # the id that paired a tool call with its result (chat and Claude Code logs)
    inputs: Mapping[str, object] = attrs.field(factory=dict)  # the values the step read (skillc machine mode)

    def to_json(self) -> dict[str, object]:
        """The event as canonical JSON (the source line and call id are not part of its identity)."""
        out: dict[str, object] = {"kind": self.kind, "tool": self.tool, "args": dict(self.args),
                                  "result": self.result, "text": self.text,
                                  "output": None if self.output is None else dict(self.output), "state": self.state}
        if self.inputs:  # only when present, so that events without inputs keep the identity they always had
            out["inputs"] = dict(self.inputs)
        return out

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> Event:
        """An event as `DevTrace.to_json` wrote it (the archive's form; raises ValueError when it is not one)."""
        kind = obj.get("kind")
        if kind not in ("tool", "model"):
            raise ValueError(f"an event's `kind` is {kind!r}, not tool or model")
        tool, text, state, line = obj.get("tool"), obj.get("text", ""), obj.get("state"), obj.get("line", 0)
        args, output, inputs = obj.get("args") or {}, obj.get("output"), obj.get("inputs") or {}
        if not (isinstance(tool, (str, type(None))) and isinstance(text, str) and isinstance(state, (str, type(None)))
                and isinstance(line, int) and isinstance(args, dict) and isinstance(output, (dict, type(None)))
                and isinstance(inputs, dict)):
            raise ValueError("an event field has the wrong type")
        return cls("tool" if kind == "tool" else "model", tool, args, obj.get("result"), text, output, state, line,
                   inputs=inputs)


@attrs.frozen
class DevTrace:
    """A development trace: its events in order and the recorded outcome."""

    events: tuple[Event, ...]
    outcome: TraceOutcome
    format: TraceFormat
    source: str = ""  # the file it was read from
    mode: str | None = None  # machine, native, prompt-only for skillc runs
    inputs: Mapping[str, object] = attrs.field(factory=dict)  # the run's inputs, when the trace records them
    evidence: Mapping[str, object] = attrs.field(factory=dict)  # the values the run reported at its end (footer)

    @functools.cached_property
    def id(self) -> str:
        """The content address: SHA-256 over the canonical JSON of the events, the outcome and any inputs (once)."""
        identity: dict[str, object] = {"outcome": self.outcome, "events": [e.to_json() for e in self.events]}
        for key, value in (("inputs", self.inputs), ("evidence", self.evidence)):
            if value:  # only when present, so that traces without them keep the address they always had
                identity[key] = dict(value)
        body = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def to_json(self) -> dict[str, object]:
        """The trace as JSON (what the archive stores)."""
        return {"format": self.format, "mode": self.mode, "outcome": self.outcome, "source": self.source,
                "inputs": dict(self.inputs), "evidence": dict(self.evidence),
                "events": [e.to_json() | {"line": e.line} for e in self.events]}

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> DevTrace:
        """A trace as `to_json` wrote it (raises ValueError when it is not one)."""
        events, outcome, fmt = obj.get("events"), obj.get("outcome"), obj.get("format")
        source, mode, inputs = obj.get("source", ""), obj.get("mode"), obj.get("inputs") or {}
        evidence = obj.get("evidence") or {}
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise ValueError("a trace's `events` must be a list of objects")
        if outcome not in get_args(TraceOutcome) or fmt not in get_args(TraceFormat):
            raise ValueError(f"a trace's outcome {outcome!r} or format {fmt!r} is not known")
        if not (isinstance(source, str) and isinstance(mode, (str, type(None))) and isinstance(inputs, dict)
                and isinstance(evidence, dict)):
            raise ValueError("a trace's `source`, `mode`, `inputs` or `evidence` has the wrong type")
        return cls(tuple(Event.from_json(e) for e in events), cast(TraceOutcome, outcome), cast(TraceFormat, fmt),
                   source, mode, inputs, evidence)


@attrs.frozen
class Alignment:
    """Which state realised each event of a trace: a state's name, or None for an event that realises no operation."""

    trace: str  # the DevTrace id
    states: tuple[str | None, ...]  # one entry per event, in order

    def to_json(self) -> dict[str, object]:
        """The alignment as JSON (stored in the archive beside its trace)."""
        return {"trace": self.trace, "states": list(self.states)}

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> Alignment:
        """An alignment as `to_json` wrote it (raises ValueError when it is not one)."""
        trace, states = obj.get("trace"), obj.get("states")
        if not isinstance(trace, str) or not isinstance(states, list) \
                or not all(isinstance(s, (str, type(None))) for s in states):
            raise ValueError("an alignment needs a `trace` id and a list of `states` (names or null)")
        return cls(trace, tuple(states))
