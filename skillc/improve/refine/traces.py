"""Trace import: development traces from skillc runs, chat transcripts and Claude Code logs, as `DevTrace`s.

`load_traces(path, format=None)` reads one file (the format detected from its
first record unless given) and returns the traces and the coded problems; it
never raises on bad input. A damaged line is reported at its line and column
and left out; the other lines are still read. The formats (docs/refine.md has
the details and examples/refine/traces/ one committed example of each):

- `skillc`: a run trace of any mode (`runtime.record.read_run`). Machine mode:
  model and judge steps become model events (state, parsed output, raw text),
  tool steps tool events (the call and its result). Native and prompt-only:
  each turn is a model event (raw text, the parsed action as its output) and the
  tool it called a tool event. The outcome is the footer's (`unfinished` without
  one); the header's inputs and the footer's evidence are kept.
- `chat`: JSON Lines, one transcript per line: `{"messages": [...], "outcome":
  "success", "inputs": {...}, "evidence": {...}}` (inputs and evidence optional)
  with OpenAI-style messages. Assistant text is a
  model event; each of its `tool_calls` a tool event, whose result is the `tool`
  message with the same `tool_call_id`.
- `claude-code`: a Claude Code `stream-json` log: `assistant` messages' text
  (and thinking) blocks are model events, their `tool_use` blocks tool events
  paired by id with the `tool_result` blocks of `user` messages; a `result`
  event ends the trace (`subtype` success and not `is_error`: success, else
  failed). Subagent traffic (records with a `parent_tool_use_id`) and the todo
  tools (`TodoWrite`, `TodoRead`) are left out. A file may hold several logs one
  after another: each `result` ends one trace. A session file of Claude Code
  (`~/.claude/projects/…/SESSION.jsonl`: `sessionId` on each record, maybe a
  `summary` or `file-history-snapshot` record first) is read the same way, its
  sidechain (subagent) records left out, along the `parentUuid` chain of its
  last record (a rewind leaves an abandoned branch in the file); it has no
  `result`, so its trace is unfinished.
- `codex`: a Codex CLI session file (`~/.codex/sessions/…/rollout-….jsonl`:
  `{"type": "response_item" | "event_msg" | "session_meta" | "turn_context",
  "payload": {...}}` records): an assistant `message` (and a `reasoning`
  summary) is a model event; a `function_call`, `custom_tool_call` or
  `local_shell_call` is a tool event, paired by `call_id` with its `…_output`
  (a shell's argv `["bash", "-lc", CMD]` is the command CMD). The file is one
  trace: success when its last turn ended with `task_complete`, failed when
  with `turn_aborted`, else unfinished. The plan tool (`update_plan`) is left
  out, as are the user's and the harness's messages.

A tool result that is JSON text of an object is read as that object (what a
machine's tool returns); any other result is kept as it was (text); a Claude
Code result marked `is_error` becomes `{"error": RESULT}`.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Final, cast, get_args

import attrs

from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.diagnostics.files import FileProblem, JSONProblem, loads, open_input, scrub
from skillc.diagnostics.source import SourceFile, Span
from skillc.improve import codes
from skillc.improve.events import DevTrace, Event, TraceFormat, TraceOutcome
from skillc.runtime.record import RunTrace, Step, parse_run

FORMATS: Final[tuple[str, ...]] = get_args(TraceFormat)
#: Claude Code tools whose calls are bookkeeping, not work: left out of the trace.
NOISE_TOOLS: Final = frozenset({"TodoWrite", "TodoRead", "update_plan"})
_CLAUDE_TYPES: Final = frozenset({"system", "assistant", "user", "result"})
#: Records only a Claude Code session file (`~/.claude/projects/PROJECT/SESSION.jsonl`) holds, which may come first.
_SESSION_TYPES: Final = frozenset({"summary", "file-history-snapshot", "queue-operation"})
#: The record types of a Codex session file, each with a `payload` object.
_CODEX_TYPES: Final = frozenset({"session_meta", "response_item", "event_msg", "turn_context", "compacted"})


@attrs.frozen
class _Line:
    """One non-blank line of a JSONL file: its number, span and parsed value (None when it did not parse)."""

    number: int
    span: Span
    value: object


def load_traces(path: str | Path, format: str | None = None) -> tuple[list[DevTrace], list[Diagnostic]]:
    """The development traces of one file and the problems found (each at its file:line:col); never raises."""
    try:
        # A byte-order mark (files saved by some Windows tools) is not part of the first record.
        text = open_input(path, folder="a folder, not a trace").decode("utf-8").removeprefix("\ufeff")
    except FileProblem as exc:
        return [], [make(codes.UNREADABLE_DEV_TRACE, str(exc))]
    except UnicodeDecodeError as exc:
        return [], [make(codes.UNREADABLE_DEV_TRACE, f"cannot read {path}: not UTF-8 text (invalid byte at "
                                                    f"offset {exc.start})")]
    traces, problems = parse_traces(text, str(path), format)
    return [cleaned(t) for t in traces], problems


def cleaned(trace: DevTrace, redact: Callable[[dict[str, object]], object] | None = None) -> DevTrace:
    """`trace` with lone surrogates (not valid Unicode) as U+FFFD and, given `redact`, secrets replaced; call ids
    and lines kept. Unchanged traces are returned as they are."""
    raw = trace.to_json()
    fixed = scrub(raw) if redact is None else scrub(redact(raw))
    if fixed == raw:
        return trace
    new = DevTrace.from_json(fixed)
    events = tuple(attrs.evolve(e, call_id=old.call_id) for e, old in zip(new.events, trace.events))
    return attrs.evolve(new, events=events)


def parse_traces(text: str, path: str = "<traces>", format: str | None = None
                 ) -> tuple[list[DevTrace], list[Diagnostic]]:
    """The development traces in a file's text (see `load_traces`)."""
    source = SourceFile(path, text)
    if format is not None and format not in FORMATS:
        return [], [make(codes.UNKNOWN_TRACE_FORMAT, f"`{format}` is not a trace format (" + ", ".join(FORMATS)
                         + ")")]
    if format == "skillc" or (format is None and _first_type(text) == "header"):
        return _skillc(text, path)
    problems: list[Diagnostic] = []
    lines = list(_lines(source, problems))
    fmt = format or _detect(lines)
    if fmt is None:
        if not lines and not problems:  # nothing to recognise a format by
            return [], [make(codes.UNKNOWN_TRACE_FORMAT, f"{path} is empty: it holds no record to recognise a "
                             "trace format by")]
        where = lines[0].span if lines else None
        return [], problems + [make(codes.UNKNOWN_TRACE_FORMAT, "the first record is neither a skillc run header, "
                                    "a chat transcript (`messages`), a Claude Code event (`type`) nor a Codex "
                                    "session record (`type` and `payload`)", where)]
    reader = {"chat": _chat, "codex": _codex}.get(fmt, _claude)
    traces = reader(lines, path, problems)
    if not traces and not any(p.is_error for p in problems):
        problems.append(make(codes.NO_DEV_TRACES, f"{path} holds no trace", Span(source, 0, 0)))
    return traces, problems


def _first_type(text: str) -> object:
    """The `type` of the first non-blank line, when it is a JSON object (cheap detection of skillc traces)."""
    first = next((line for line in text.split("\n") if line.strip()), "")
    try:
        value = loads(first)
    except JSONProblem:
        return None
    return value.get("type") if isinstance(value, dict) else None


def _lines(source: SourceFile, problems: list[Diagnostic]) -> Iterator[_Line]:
    """The non-blank lines of a JSONL file, parsed; a line that is not JSON is reported (at its column) and skipped."""
    offset = 0
    for number, line in enumerate(source.text.split("\n"), 1):
        start, offset = offset, offset + len(line) + 1
        if not line.strip():
            continue
        span = Span(source, start, start + len(line))
        try:
            yield _Line(number, span, loads(line))
        except JSONProblem as exc:
            column = _error_offset(line)
            problems.append(make(codes.MALFORMED_DEV_TRACE_LINE, f"the line is {exc}",
                                 Span(source, start + column, start + len(line))))


def _error_offset(line: str) -> int:
    """Where in a line JSON decoding fails (0 when it is not a plain decoding error)."""
    try:
        json.loads(line)
    except json.JSONDecodeError as exc:
        return min(exc.pos, max(len(line) - 1, 0))
    except (RecursionError, ValueError):
        pass
    return 0


def _detect(lines: list[_Line]) -> str | None:
    """The format of a JSONL file from its first record."""
    first = next((ln.value for ln in lines), None)
    if not isinstance(first, dict):
        return None
    if "messages" in first:
        return "chat"
    kind = first.get("type")
    if not isinstance(kind, str):  # `{"type": {}}` is no type
        return None
    if kind in _CODEX_TYPES and isinstance(first.get("payload"), dict):
        return "codex"
    if kind in _CLAUDE_TYPES | _SESSION_TYPES:
        return "claude-code"
    return None


def _json_result(value: object) -> object:
    """A tool result: JSON text of an object becomes the object; anything else stays as it was."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            parsed = loads(value)
        except JSONProblem:
            return value
        return parsed if isinstance(parsed, dict) else value
    return value


class _Refused(ValueError):
    """A record that does not fit its format; the message names the field."""


# ---------------------------------------------------------------- skillc run traces


def _skillc(text: str, path: str) -> tuple[list[DevTrace], list[Diagnostic]]:
    """A skillc run trace of any mode as one development trace (its problems are the run record's codes)."""
    run, problems = parse_run(text, path)
    if run is None:
        return [], problems
    return [load_run_trace(run, path, _step_lines(text))], []


def _step_lines(text: str) -> dict[int, int]:
    """The line of each step record, by step index (the last one wins: a resumed run repeats none)."""
    out: dict[int, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        if '"step"' not in line:
            continue
        try:
            value = loads(line)
        except JSONProblem:
            continue
        if isinstance(value, dict) and value.get("type") == "step" and isinstance(value.get("step"), int):
            out[value["step"]] = number
    return out


def _step_events(step: Step, line: int, mode: str) -> list[Event]:
    """The events of one step: a model event, a tool event, or (a baseline turn) a model event and its tool call."""
    if mode == "machine" and (step.kind == "tool" or step.tool_call is not None):  # version 1 may lack `kind`
        call = step.tool_call
        return [Event("tool", call.tool if call else step.tool_name, dict(call.args) if call else {},
                      _plain(step.tool_result), state=step.state, line=line, inputs=dict(step.inputs or {}))]
    if mode == "machine":
        return [Event("model", text=step.raw_output or "", output=_plain(step.output), state=step.state, line=line,
                      inputs=dict(step.inputs or {}))]
    turn = Event("model", text=step.raw_output or "", output=_action(step), line=line)
    if step.tool_call is None:
        return [turn]
    return [turn, Event("tool", step.tool_call.tool, dict(step.tool_call.args), _plain(step.tool_result), line=line)]


def _plain(value: Mapping[str, object] | None) -> dict[str, object] | None:
    """A record's mapping as a plain dict (None stays None)."""
    return None if value is None else dict(value)


def _action(step: Step) -> dict[str, object] | None:
    """A baseline turn's parsed action: the recorded output (finish), else the raw text when it is a JSON object."""
    if step.output is not None:
        return dict(step.output)
    parsed = _json_result(step.raw_output)
    return parsed if isinstance(parsed, dict) else None


def load_run_trace(run: RunTrace, source: str = "", lines: Mapping[int, int] | None = None) -> DevTrace:
    """A run already read (`runtime.record`) as a development trace; `lines`: each step's line, by step index."""
    events = [e for step in run.steps for e in _step_events(step, (lines or {}).get(step.index, 0), run.header.mode)]
    outcome: TraceOutcome = run.footer.outcome if run.footer is not None and run.footer.outcome else "unfinished"
    evidence = dict(run.footer.evidence) if run.footer is not None else {}
    return DevTrace(tuple(events), outcome, "skillc", source, run.header.mode, dict(run.header.inputs or {}),
                    evidence)


# ---------------------------------------------------------------- chat transcripts


def _chat(lines: list[_Line], path: str, problems: list[Diagnostic]) -> list[DevTrace]:
    """One trace per transcript line."""
    traces = []
    for line in lines:
        try:
            traces.append(_transcript(line, path, problems))
        except _Refused as exc:
            problems.append(make(codes.INVALID_DEV_TRACE_RECORD, str(exc), line.span))
    return traces


def _transcript(line: _Line, path: str, problems: list[Diagnostic]) -> DevTrace:
    """The trace of one transcript object."""
    obj = line.value
    if not isinstance(obj, dict):
        raise _Refused("a transcript is a JSON object with `messages` and `outcome`")
    messages, outcome = obj.get("messages"), obj.get("outcome")
    inputs, evidence = obj.get("inputs", {}), obj.get("evidence", {})
    if not isinstance(messages, list):
        raise _Refused("`messages` must be a list of messages")
    if outcome not in get_args(TraceOutcome):
        raise _Refused(f"`outcome` is {outcome!r}, not one of " + ", ".join(get_args(TraceOutcome)))
    if not isinstance(inputs, dict) or not isinstance(evidence, dict):
        raise _Refused("`inputs` and `evidence` must be objects")
    pairing = _Pairing()
    for i, message in enumerate(messages):
        _message(message, i, line.number, pairing)
    problems += pairing.unpaired(line.span, "tool_call_id")
    return DevTrace(pairing.done(), cast(TraceOutcome, outcome), "chat", path, None, inputs, evidence)


def _message(message: object, i: int, line: int, pairing: _Pairing) -> None:
    """Add one chat message's events."""
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise _Refused(f"message {i} needs a `role`")
    role: str = message["role"]
    content = message.get("content")
    if role == "assistant":
        text = _text(content, f"message {i}")
        if text:
            pairing.add(Event("model", text=text, line=line))
        calls = message.get("tool_calls") or []
        if not isinstance(calls, list):
            raise _Refused(f"message {i}: `tool_calls` must be a list")
        for j, call in enumerate(calls):
            call_id, name, args = _call(call, f"message {i}, tool call {j}")
            pairing.call(call_id, Event("tool", name, args, line=line, call_id=call_id))
    elif role == "tool":
        answers = message.get("tool_call_id")
        if not isinstance(answers, str):
            raise _Refused(f"message {i}: a tool message needs its `tool_call_id`")
        pairing.result(answers, _json_result(_text(content, f"message {i}")), line)


def _text(content: object, where: str) -> str:
    """A message's content as text: a string, a list of text parts, or nothing."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) and isinstance(p.get("text", ""), str) else ""
                       for p in content)
    raise _Refused(f"{where}: `content` must be text or a list of parts")


def _call(call: object, where: str) -> tuple[str, str, dict[str, object]]:
    """An OpenAI-style tool call's id, function name and arguments (a JSON object, given as text or as one)."""
    fn = call.get("function") if isinstance(call, dict) else None
    if not isinstance(call, dict) or not isinstance(call.get("id"), str) or not isinstance(fn, dict) \
            or not isinstance(fn.get("name"), str):
        raise _Refused(f"{where} needs an `id` and a `function` with a `name`")
    return call["id"], fn["name"], _arguments(fn.get("arguments", "{}"), where)


def _arguments(raw: object, where: str) -> dict[str, object]:
    """A tool call's arguments: a JSON object, given as its text or as one."""
    try:
        args = loads(raw) if isinstance(raw, str) else raw
    except JSONProblem as exc:
        raise _Refused(f"{where}: `arguments` is {exc}") from None
    if not isinstance(args, dict):
        raise _Refused(f"{where}: `arguments` must be a JSON object")
    return dict(args)


# ---------------------------------------------------------------- Codex session files


def _codex(lines: list[_Line], path: str, problems: list[Diagnostic]) -> list[DevTrace]:
    """The trace of a Codex session file: one per file, its outcome from how the last turn ended."""
    pairing = _Pairing()
    noise: set[str] = set()
    outcome: TraceOutcome = "unfinished"
    last: _Line | None = None
    for line in lines:
        obj = line.value
        payload = obj.get("payload") if isinstance(obj, dict) else None
        if not isinstance(obj, dict) or not isinstance(payload, dict) or not isinstance(obj.get("type"), str):
            problems.append(make(codes.INVALID_DEV_TRACE_RECORD, "a Codex record is a JSON object with a `type` and "
                                 "a `payload` object", line.span))
            continue
        last = line
        kind = payload.get("type")
        if obj["type"] == "event_msg":
            if kind in ("task_complete", "turn_aborted"):
                outcome = "success" if kind == "task_complete" else "failed"
            elif kind in ("task_started", "user_message"):
                outcome = "unfinished"  # a new turn: how it ends is what counts
            continue
        if obj["type"] != "response_item":
            continue
        try:
            _codex_item(payload, line.number, pairing, noise)
        except _Refused as exc:
            problems.append(make(codes.INVALID_DEV_TRACE_RECORD, str(exc), line.span))
    if last is None or not pairing.events:
        return []
    problems += pairing.unpaired(last.span, "call_id")
    if outcome == "unfinished":
        problems.append(make(codes.NO_TRACE_OUTCOME, "the Codex session ends without `task_complete` or "
                             "`turn_aborted`; the trace is kept as unfinished", last.span))
    return [DevTrace(pairing.done(), outcome, "codex", path)]


def _codex_item(item: dict, line: int, pairing: _Pairing, noise: set[str]) -> None:
    """Add the events of one `response_item` payload."""
    kind = item.get("type")
    if kind == "message" and item.get("role") == "assistant":
        text = _text(item.get("content"), "an assistant message")
        if text.strip():
            pairing.add(Event("model", text=text, line=line))
    elif kind == "reasoning":
        summary = item.get("summary")
        text = _text(summary, "a reasoning summary") if isinstance(summary, list) else ""
        if text.strip():
            pairing.add(Event("model", text=text, line=line))
    elif kind in ("function_call", "custom_tool_call", "local_shell_call"):
        call_id, name, args = _codex_call(item)
        if name in NOISE_TOOLS:
            noise.add(call_id)
        else:
            pairing.call(call_id, Event("tool", name, args, line=line, call_id=call_id))
    elif kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
        answers = item.get("call_id")
        if not isinstance(answers, str):
            raise _Refused(f"a `{kind}` needs its `call_id`")
        if answers not in noise:
            output = item.get("output")
            pairing.result(answers, _json_result(output if isinstance(output, str) else _text(output, kind)), line)


def _codex_call(item: dict) -> tuple[str, str, dict[str, object]]:
    """A Codex tool call's id, tool name and arguments, a shell's argv as one command."""
    kind = item["type"]
    call_id: object = item.get("call_id") or item.get("id")
    name: object = item.get("name")
    if kind == "local_shell_call":
        action = item.get("action")
        name, args = "local_shell", dict(action) if isinstance(action, dict) else {}
        args.pop("type", None)
    elif kind == "custom_tool_call":
        args = {"input": item.get("input")}
    else:
        args = _arguments(item.get("arguments", "{}"), f"a `{kind}`")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise _Refused(f"a `{kind}` needs a `call_id` and a `name`")
    argv = args.get("command")
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        shell = len(argv) == 3 and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and argv[1] in ("-lc", "-c")
        args["command"] = argv[2] if shell else shlex.join(argv)
    return call_id, name, args


class _Pairing:
    """Events in order, with tool calls waiting for the result that names their id."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.open: dict[str, int] = {}  # call id -> index of its event
        self.stray: list[tuple[str, int]] = []  # results naming no call: (id, line)

    def add(self, event: Event) -> None:
        self.events.append(event)

    def call(self, call_id: str, event: Event) -> None:
        self.open[call_id] = len(self.events)
        self.events.append(event)

    def result(self, call_id: str, result: object, line: int) -> None:
        index = self.open.pop(call_id, None)
        if index is None:
            self.stray.append((call_id, line))
        else:
            self.events[index] = attrs.evolve(self.events[index], result=result)

    def unpaired(self, span: Span, key: str) -> list[Diagnostic]:
        """Warnings for calls left without a result and results that answer no call."""
        out = [make(codes.UNPAIRED_TOOL_CALL, f"tool call `{cid}` ({self.events[i].tool}) has no result", span)
               for cid, i in self.open.items()]
        out += [make(codes.UNPAIRED_TOOL_CALL, f"a result's `{key}` `{cid}` (line {ln}) names no tool call; it "
                     "is left out", span) for cid, ln in self.stray]
        return out

    def done(self) -> tuple[Event, ...]:
        return tuple(self.events)


# ---------------------------------------------------------------- Claude Code stream-json


def _claude(lines: list[_Line], path: str, problems: list[Diagnostic]) -> list[DevTrace]:
    """The traces of a Claude Code log: each `result` event ends one."""
    traces: list[DevTrace] = []
    log = _ClaudeLog()
    for line in _active_branch(lines):
        try:
            ended = log.read(line)
        except _Refused as exc:
            problems.append(make(codes.INVALID_DEV_TRACE_RECORD, str(exc), line.span))
            continue
        if ended is not None:
            problems += log.pairing.unpaired(line.span, "tool_use_id")
            traces.append(DevTrace(log.pairing.done(), ended, "claude-code", path))
            log = _ClaudeLog()
    if log.seen is not None and log.pairing.events:  # a session that did nothing yet (an init record) is none
        problems += log.pairing.unpaired(log.seen.span, "tool_use_id")
        if _session_file(lines):
            problems.append(make(codes.NO_TRACE_OUTCOME, "a Claude Code session file records no outcome (a "
                                 "`stream-json` log ends with a `result` event); the trace is kept as unfinished",
                                 log.seen.span, hint="to judge the outcome too, record the run with `claude -p "
                                 "--output-format stream-json --verbose`"))
        else:
            problems.append(make(codes.NO_TRACE_OUTCOME, "the log ends without a `result` event; the trace is "
                                 "kept as unfinished", log.seen.span))
        traces.append(DevTrace(log.pairing.done(), "unfinished", "claude-code", path))
    return traces


def _session_file(lines: list[_Line]) -> bool:
    """Whether a Claude Code log is a session file (`~/.claude/projects/…/SESSION.jsonl`: `sessionId` and
    `parentUuid` on its records, maybe a `summary` first), not a `stream-json` log, which ends with a `result`."""
    return any(isinstance(ln.value, dict) and ("parentUuid" in ln.value or "sessionId" in ln.value
                                                or ln.value.get("type") in _SESSION_TYPES) for ln in lines)


def _active_branch(lines: list[_Line]) -> list[_Line]:
    """A Claude Code session file's records along the conversation as it stands: the chain of `parentUuid` (across a
    compaction, `logicalParentUuid`) from its last record back to the first, each record once. A rewind leaves the
    records of the branch it abandoned in the file, and a branched session repeats records; a `stream-json` log
    (no `parentUuid`) is read as it is."""
    records = [ln.value for ln in lines if isinstance(ln.value, dict)]
    if not any("parentUuid" in r for r in records):
        return lines
    by_uuid: dict[str, dict] = {}
    for r in records:
        if isinstance(r.get("uuid"), str):
            by_uuid.setdefault(r["uuid"], r)
    leaf = next((r["uuid"] for r in reversed(records) if isinstance(r.get("uuid"), str)
                 and r.get("isSidechain") is not True), None)
    chain: set[str] = set()
    while isinstance(leaf, str) and leaf in by_uuid and leaf not in chain:
        chain.add(leaf)
        leaf = by_uuid[leaf].get("parentUuid") or by_uuid[leaf].get("logicalParentUuid")
    kept: list[_Line] = []
    for ln in lines:
        uuid = ln.value.get("uuid") if isinstance(ln.value, dict) else None
        if not isinstance(uuid, str):
            kept.append(ln)  # a summary or a snapshot: no event, and a damaged line keeps its diagnostic
        elif uuid in chain:
            chain.discard(uuid)  # its first copy only
            kept.append(ln)
    return kept


class _ClaudeLog:
    """The events of one Claude Code session, read record by record."""

    def __init__(self) -> None:
        self.pairing = _Pairing()
        self.noise: set[str] = set()  # ids of todo-tool calls, whose results are dropped too
        self.seen: _Line | None = None  # the last record read (for a log that never ends)

    def read(self, line: _Line) -> TraceOutcome | None:
        """Read one record; the trace's outcome when it is the `result` that ends the session."""
        obj = line.value
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise _Refused("a Claude Code record is a JSON object with a `type`")
        self.seen = line
        if obj.get("parent_tool_use_id") is not None or obj.get("isSidechain") is True:
            return None  # a subagent's traffic: its parent's Task call and result stand for it
        kind = obj["type"]
        if kind == "result":
            return "success" if obj.get("subtype") == "success" and not obj.get("is_error") else "failed"
        reader: Callable[[dict, int], None] | None = {"assistant": self._assistant, "user": self._user}.get(kind)
        if reader is not None:
            reader(obj, line.number)
        return None

    def _blocks(self, obj: dict) -> list[dict]:
        message = obj.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if not isinstance(content, list) or not all(isinstance(b, dict) for b in content):
            raise _Refused("`message.content` must be a list of blocks")
        return content

    def _assistant(self, obj: dict, line: int) -> None:
        text: list[str] = []
        for block in self._blocks(obj):
            kind = block.get("type")
            if kind in ("text", "thinking"):
                part = block.get(kind)
                if isinstance(part, str) and part.strip():
                    text.append(part)
            elif kind == "tool_use":
                self._flush(text, line)
                self._tool_use(block, line)
        self._flush(text, line)

    def _flush(self, text: list[str], line: int) -> None:
        """Text and thinking read so far as one model event."""
        if text:
            self.pairing.add(Event("model", text="\n".join(text), line=line))
            text.clear()

    def _tool_use(self, block: dict, line: int) -> None:
        call_id, name, args = block.get("id"), block.get("name"), block.get("input", {})
        if not isinstance(call_id, str) or not isinstance(name, str) or not isinstance(args, dict):
            raise _Refused("a `tool_use` block needs an `id`, a `name` and an object `input`")
        if name in NOISE_TOOLS:
            self.noise.add(call_id)
            return
        self.pairing.call(call_id, Event("tool", name, args, line=line, call_id=call_id))

    def _user(self, obj: dict, line: int) -> None:
        message = obj.get("message")
        if isinstance(message, dict) and isinstance(message.get("content"), str):
            return  # the prompt (or a user's reply): not an event of the agent
        for block in self._blocks(obj):
            if block.get("type") != "tool_result":
                continue
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str):
                raise _Refused("a `tool_result` block needs its `tool_use_id`")
            if call_id in self.noise:
                continue
            content = block.get("content")
            result = _json_result(content if isinstance(content, str) else _text(content, "tool_result"))
            self.pairing.result(call_id, {"error": result} if block.get("is_error") else result, line)
