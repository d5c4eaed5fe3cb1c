"""Baselines for honest comparison: the skill run natively, and the machine rendered as prose.

- `native`: a genuine agent loop. The system text is the whole skill document,
  the tool list and the reply protocol; the user turns are the inputs, then one
  observation per tool call. Every prompt holds the whole transcript so far, and
  the model picks the next tool call (or `finish`) at every turn.
- `prompt-only`: the same loop, but the instructions are the machine rendered
  as prose (states, their instructions and where each leads), so the model is
  told the control flow instead of being driven by it.

Both get the tool kit a real agent harness has (`harness_tools`): every tool of
the kit — read, write, edit, glob, grep, bash, fetch, ask_user — with its
signature and what it does, or only the kit tools the machine's `allow` list
names, plus the machine's own tools that are not kit tools; their calls go
through the same tool box as machine mode's (the same places, confinement and
capability checks; `session.run_tools` builds it for `harness_machine`). They
use the machine's step budget (`max_steps`, one step per
turn), retry a reply that breaks the protocol like machine mode retries an
invalid output (and a failed model call after the server's Retry-After, capped
and within the step's deadline, with machine mode's `wait_to_retry`), and write
traces in the same format as machine mode (the header's `mode` says which) with
the tool call of every turn, so `skillc score` compares them on the same terms. \
docs/runtime.md says exactly what is sent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

import attrs
import yaml

from skillc.diagnostics.files import load_front_matter, scrub
from skillc.ir import types as T
from skillc.ir.machine import Machine, Tool
from skillc.ir.printexpr import show_expr
from skillc.ir.toolkit import KIT, Capability, parse_capability, split_allowed
from skillc.runtime.executors.base import Executor, ExecutorError, count
from skillc.runtime.executors.replay import Cursor
from skillc.runtime.interaction import NeedsUser
from skillc.runtime.interpreter import (
    RunError,
    RunOptions,
    RunResult,
    complete_within,
    json_answer,
    parse_inputs,
    wait_to_retry,
)
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.prompts import Request
from skillc.runtime.record import EndReason, Footer, Outcome, Step, StepError, ToolCall, new_header
from skillc.runtime.tools import ToolError
from skillc.runtime.toolsource import ToolSource, tools_for
from skillc.runtime.trace import TraceWriter, secrets_from_env
from skillc.runtime.values import check_value

Mode = Literal["native", "prompt-only"]
OUTCOMES: tuple[Outcome, ...] = ("success", "partial", "failed")

PROTOCOL = (
    "You work through the procedure above by calling tools. At every turn reply with one JSON object and nothing "
    'else: {"action": TOOL, "args": {ARGUMENT: VALUE, …}} to call one tool (its result comes back as the next '
    'message), or {"action": "finish", "outcome": "success" | "partial" | "failed", "evidence": {NAME: VALUE, …}} '
    "when the procedure is complete."
)

#: The kit's `bash`, as every baseline is offered it (unless the machine's `allow` list leaves it out).
BASH = KIT["bash"]
#: Names skill authors give the shell in `allowed-tools` (as the markdown front end reads them).
SHELL_NAMES = frozenset({"bash", "shell", "terminal", "sh"})

#: What each kit tool does, as the harness describes it beside its signature.
KIT_HELP: dict[str, str] = {
    "read": "read a text file (a relative path is in the work folder); `offset`/`limit` pick lines",
    "write": "create or overwrite a file with `content`",
    "edit": "replace the text `old` by `new` in a file (it must occur once, unless `all`)",
    "glob": "the files matching a glob pattern such as `**/*.md`, under `path` (default: the work folder)",
    "grep": "the lines matching a regular expression in the files under `path` (`glob` filters them)",
    "bash": "run a shell `command` (or an argument vector `argv`) in the work folder",
    "fetch": "GET a web page or file by URL: its status, content type and text",
    "ask_user": "ask the user a question (with `options`: a menu to pick from) and get the answer",
}


def harness_tools(m: Machine) -> dict[str, Tool]:
    """The tools a baseline's harness offers: the kit (all of it, or the kit tools the machine's `allow` list
    names), with the kit's signatures, then the machine's own tools that are not kit tools."""
    names = [name for name in KIT if not m.allowed or any(c.tool == name for c in m.allowed)]
    tools = {name: KIT[name] for name in names}
    tools.update((name, t) for name, t in m.tools.items() if name not in KIT)
    return tools


def harness_machine(m: Machine) -> Machine:
    """The machine with the harness's tools as its interface table: what a baseline's tool box is built for."""
    return attrs.evolve(m, tools=harness_tools(m))


def render_prose(m: Machine) -> str:
    """The machine as numbered prose instructions (the prompt-only baseline)."""
    lines = [f"Procedure `{m.name}`" + (f": {m.doc}" if m.doc else ""), f"Begin at step `{m.start}`.", ""]
    for st in m.states.values():
        if st.is_terminal:
            if st.kind == "terminal":
                req = f" Report {', '.join(st.requires)}." if st.requires else ""
                lines.append(f"- `{st.name}`: finish with outcome {st.outcome}.{req}")
            continue
        what = st.prompt or (f"call the tool `{st.call.tool}`" if st.call else "")
        lines.append(f"- `{st.name}` ({st.kind}): {what}")
        if st.call is not None:
            args = ", ".join(f"{k} = {show_expr(v)}" for k, v in st.call.args)
            lines.append(f"  Call `{st.call.tool}({args})`.")
        elif st.writes:
            lines.append(f"  Work out {', '.join(f'`{w}`' for w in st.writes)} yourself (no tool).")
        for e in st.edges:
            cond = f"if {show_expr(e.guard)}" if e.guard is not None else "otherwise"
            sets = "; then set " + ", ".join(f"{a.var} {a.op} {show_expr(a.value)}" for a in e.assigns) \
                if e.assigns else ""
            lines.append(f"  {cond}, continue with `{e.target}`{sets}.")
    lines += ["", "Rules:"] + [f"- {r.quote}" for r in m.rules]
    return "\n".join(lines)


def skill_tools(skill_text: str | None) -> tuple[str, ...]:
    """The tools a skill document's front matter allows (`allowed-tools`): kit names for the harness's spellings
    (`Read` → `read`, `WebFetch(domain:x)` → `fetch`, a shell's names → `bash`), other names lower-cased."""
    if not skill_text or not skill_text.startswith("---"):
        return ()
    head, sep, _ = skill_text[3:].partition("\n---")
    try:  # `description: Review a PR: read the diff` is read as the build reads it (SKM307)
        front = load_front_matter(head)[0] if sep else None
    except yaml.YAMLError:
        return ()
    names = front.get("allowed-tools", front.get("allowed_tools")) if isinstance(front, dict) else None
    entries = [names] if isinstance(names, str) else [str(n) for n in names or () if n is not None] \
        if isinstance(names, list) else []
    found: list[str] = []
    for entry in (e for raw in entries for e in split_allowed(raw)):
        cap = parse_capability(entry)
        name = cap.tool.lower() if isinstance(cap, Capability) else entry.partition("(")[0].strip().lower()
        name = "bash" if name in SHELL_NAMES else name
        if name and name not in found:
            found.append(name)
    return tuple(found)


@attrs.frozen
class Offer:
    """The tools a baseline offers (`harness_tools`), and those the skill names but this run lacks."""

    tools: Mapping[str, Tool]
    lacking: tuple[str, ...] = ()


def offered_tools(m: Machine, mode: Mode, skill_text: str | None) -> Offer:
    """The harness's tools, the same in both baselines; a native run is also told which tools the skill's
    `allowed-tools` names that this run does not provide."""
    tools = harness_tools(m)
    if mode != "native":
        return Offer(tools)

    return Offer(tools, tuple(n for n in skill_tools(skill_text) if n not in tools))


def tool_line(t: Tool) -> str:
    """One tool of the list: its parameters and results with their types (`?`: optional), and for a kit tool
    what it does."""
    params = ", ".join(f"{k}: {T.show(v)}" for k, v in t.params)
    line = f"- {t.name}({params}) -> " + ", ".join(f"{k}: {T.show(v)}" for k, v in t.results)
    return line + (f" — {KIT_HELP[t.name]}" if t.name in KIT_HELP and KIT.get(t.name) == t else "")


def evidence_line(m: Machine) -> str:
    """Which evidence names a finish reports, per outcome (the machine's terminals' `requires`)."""
    by_outcome: dict[str, list[str]] = {}
    for st in m.states.values():
        if st.kind == "terminal" and st.outcome is not None:
            names = by_outcome.setdefault(st.outcome, [])
            names += [r for r in st.requires if r not in names]
    parts = [f"{o}: {', '.join(names)}" for o, names in by_outcome.items() if names]
    return ("Evidence to report when you finish (by outcome) — " + "; ".join(parts) + ".") if parts else ""


def places_line(workdir: str | None, skill_dir: str | None) -> str:
    """Where the run's tools work, as a harness tells its model: the work folder and the skill folder."""
    if workdir is None:
        return ""
    line = f"Work folder: {workdir} (relative paths are taken from here; you may read and write in it)."
    if skill_dir is not None:
        line += f" Skill folder: {skill_dir} (read-only: the skill's own files, e.g. scripts/ and references/)."
    return line


def system_text(m: Machine, mode: Mode, skill_text: str | None, offer: Offer, *, places: str = "") -> str:
    """The system message: the skill (native) or the prose machine, the tool list, the places, the protocol."""
    if mode == "native":
        if not skill_text:
            raise RunError("native mode needs the skill document (the machine's `source`), and it cannot be read")
        instructions = skill_text.rstrip()
    else:
        instructions = render_prose(m)
    parts = [instructions, "Tools:\n" + "\n".join(tool_line(t) for t in offer.tools.values())]
    if offer.lacking:
        parts.append("Not available in this run: " + ", ".join(offer.lacking) + ".")
    parts += [places, PROTOCOL, evidence_line(m)]
    return "\n\n".join(p for p in parts if p)


def first_messages(m: Machine, mode: Mode, skill_text: str | None, offer: Offer,
                   values: Mapping[str, Value], *, places: str = "") -> list[dict]:
    """The conversation a baseline starts with: the system text, then the inputs as JSON."""
    return [{"role": "system", "content": system_text(m, mode, skill_text, offer, places=places)},
            {"role": "user", "content": "Inputs:\n" + json.dumps(dict(values), ensure_ascii=False, indent=2)}]


def reply_schema(tools: Mapping[str, Tool]) -> dict:
    """The JSON Schema of a reply (executors that constrain output use it; the loop validates it itself)."""
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": [*tools, "finish"]},
            "args": {"type": "object"},
            "outcome": {"type": "string", "enum": list(OUTCOMES)},
            "evidence": {"type": "object"},
        },
        "required": ["action"],
    }


@attrs.frozen
class Action:
    """A reply that follows the protocol: a tool call with checked arguments, or `finish`."""

    name: str
    args: Mapping[str, Value] = attrs.field(factory=dict)
    outcome: Outcome | None = None
    evidence: Mapping[str, Value] = attrs.field(factory=dict)

    def as_reply(self) -> Object:
        """The action in the protocol's own shape (what the trace records as the turn's `output`)."""
        if self.name == "finish":
            return {"action": "finish", "outcome": self.outcome, "evidence": dict(self.evidence)}
        return {"action": self.name, "args": dict(self.args)}


def parse_action(text: str, tools: Mapping[str, Tool]) -> tuple[Action | None, list[str]]:
    """The reply as an action, or what is wrong with it (the words sent back on a retry)."""
    try:
        reply = json_answer(text)
    except json.JSONDecodeError as exc:
        return None, [f"the reply is not JSON ({exc.msg})"]
    if not isinstance(reply, dict) or not isinstance(reply.get("action"), str):
        return None, ['the reply must be one JSON object with a string `action`']
    name = reply["action"]
    if name == "finish":
        outcome, evidence = reply.get("outcome"), reply.get("evidence", {})
        problems = [] if outcome in OUTCOMES else ["`outcome` must be one of success, partial, failed"]
        problems += [] if isinstance(evidence, dict) else ["`evidence` must be an object"]
        return (None, problems) if problems else (Action(name, outcome=outcome, evidence=evidence), [])
    tool = tools.get(name)
    if tool is None:
        return None, [f"no tool `{name}` (the tools are {', '.join(tools) or 'none'}; or `finish`)"]
    args = reply.get("args", {})
    if not isinstance(args, dict):
        return None, ["`args` must be an object"]
    problems = [f"unknown argument `{k}` of `{name}`" for k in args if tool.param(k) is None]
    problems += [e for k, t in tool.params for e in check_value(args.get(k), t, f"argument `{k}`")]
    return (None, problems) if problems else (Action(name, args), [])


class TurnReplay:
    """Tool results of a replayed baseline: a turn's result is in the same recorded step as its reply (the replay
    executor's cursor has just passed it), not in a step of its own as in machine mode."""

    def __init__(self, cursor: Cursor) -> None:
        self.cursor = cursor

    def missing(self, machine: Machine) -> list[str]:
        """Nothing runs, so nothing is missing."""
        return []

    def result(self, state: str, tool: Tool, args: Object) -> Object:
        """The recorded observation of the turn just replayed (a recorded tool failure fails again)."""
        step = self.cursor.steps[self.cursor.position - 1]
        if step.tool_result is None and any(e.kind == "needs_user" for e in step.errors):
            raise NeedsUser(str(args.get("question", "")), args.get("options"),
                            "nobody answered it in the recorded run")
        failed = next((e.message for e in step.errors if e.kind == "tool"), None)
        if failed is not None:
            raise ToolError(failed.removeprefix(f"tool `{tool.name}` failed: "))
        if step.tool_result is None:
            raise ToolError(f"step {step.index}: the trace has no result for tool `{tool.name}`")
        return dict(step.tool_result)


def tool_source(executor: Executor, tools: ToolSource) -> ToolSource:
    """Where a baseline's tool results come from: a replayed trace's turns, a script's results, or real tools."""
    cursor = getattr(executor, "cursor", None)
    return TurnReplay(cursor) if isinstance(cursor, Cursor) else tools_for(executor, tools)


@attrs.frozen
class Clock:
    """Where the loop reads the time for a step's deadline and sleeps a Retry-After wait (tests pass fakes).

    `now` is on `time.monotonic`'s scale: `complete_within` bounds each call by the deadline with that clock.
    """

    now: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep


class _Failed(Exception):
    """A turn that ends the run (the executor failed, or no reply followed the protocol)."""

    def __init__(self, error: StepError) -> None:
        super().__init__(error.message)
        self.error = error


class _Loop:
    """One baseline run: the transcript, the offered tools, the trace and the totals."""

    def __init__(self, m: Machine, mode: Mode, executor: Executor, tools: ToolSource, options: RunOptions,
                 offer: Offer, messages: list[dict], clock: Clock) -> None:
        self.m, self.mode, self.executor, self.options, self.offer = m, mode, executor, options, offer
        self.clock = clock
        self.tools = tools
        self.messages = messages
        self.schema = reply_schema(offer.tools)
        self.tokens = [0, 0]
        self.latency = 0.0
        self.calls = 0  # tool calls that returned results (a run without one cannot succeed)

    def turn(self, step: int) -> tuple[Object, Action | None, StepError | None]:
        """One step: ask until a reply follows the protocol (retries as in machine mode), then act on it."""
        fields: Object = {"index": step, "state": self.mode, "kind": "turn", "operation": "chat",
                                  "prompt_chars": sum(len(x["content"]) for x in self.messages)}
        errors: list[StepError] = []
        started = time.perf_counter()
        try:
            action = self._ask(fields, errors)
        except _Failed as exc:
            errors.append(exc.error)
            return self._close(fields, errors, started), None, exc.error
        fields["output"] = action.as_reply()
        failure = None if action.name == "finish" else self._act(action, fields, errors)
        return self._close(fields, errors, started), action, failure

    def _close(self, fields: Object, errors: list[StepError], started: float) -> Object:
        fields["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        self.latency += fields["latency_ms"]
        if errors:
            fields["errors"] = tuple(errors)
        return fields

    def _ask(self, fields: Object, errors: list[StepError]) -> Action:
        """Replies until one follows the protocol; each bad reply and the reason stay in the transcript.

        A failed call is retried as in machine mode: after the server's Retry-After (at most
        `max_retry_wait_s`), and not once the wait or the attempt would pass the step's deadline.
        """
        deadline = None if self.options.step_deadline_s is None else self.clock.now() + self.options.step_deadline_s
        for attempt in range(self.options.retries + 1):
            fields["retries"] = attempt
            try:
                text = self._complete(fields, deadline)
            except ExecutorError as exc:
                errors.append(StepError(exc.kind, f"executor: {exc}"))
                if exc.kind == "divergence" or attempt == self.options.retries or not wait_to_retry(
                        exc, deadline, self.options.max_retry_wait_s, now=self.clock.now, sleep=self.clock.sleep):
                    raise _Failed(StepError(exc.kind, f"the executor failed: {exc}")) from None
                continue
            self.messages.append({"role": "assistant", "content": text})
            action, problems = parse_action(text, self.offer.tools)
            if action is not None:
                return action
            errors.append(StepError("invalid_output", "invalid reply: " + "; ".join(problems)))
            self.messages.append({"role": "user", "content": "Your reply was not valid: " + "; ".join(problems)
                                  + ". Reply again with one JSON object as described."})
        raise _Failed(StepError("invalid_output", f"no reply followed the protocol after {self.options.retries + 1} "
                                                  f"attempts: {errors[-1].message}"))

    def _complete(self, fields: Object, deadline: float | None) -> str:
        """One call with the whole transcript; its tokens are added to the step's and the run's."""
        response = complete_within(self.executor, Request(self.mode, "model", tuple(self.messages), self.schema),
                                   deadline, self.options.step_deadline_s)
        used = [count(response.input_tokens) or 0, count(response.output_tokens) or 0]
        self.tokens = [self.tokens[0] + used[0], self.tokens[1] + used[1]]
        fields["model"] = response.model if isinstance(response.model, str) else None
        fields["input_tokens"] = (fields.get("input_tokens") or 0) + used[0]
        fields["output_tokens"] = (fields.get("output_tokens") or 0) + used[1]
        fields["raw_output"] = text = scrub(response.text)
        return text

    def _act(self, action: Action, fields: Object, errors: list[StepError]) -> StepError | None:
        """Call the tool; its results (or its failure) are the observation of the next turn."""
        tool = self.offer.tools[action.name]
        fields.update(tool_name=tool.name, tool_call=ToolCall(tool.name, dict(action.args)))
        user = self.options.user if tool.name == "ask_user" else None
        if user is not None:
            user.last_source = None
        try:
            observation = self._result(tool, dict(action.args))
            self.calls += 1
            if user is not None and user.last_source is not None:
                fields["answered_by"] = user.last_source
        except ExecutorError as exc:  # a replayed run that left its trace cannot go on
            errors.append(StepError(exc.kind, str(exc)))
            return errors[-1]
        except NeedsUser as exc:  # nobody to answer: the run ends failed, the model never answers for the user
            errors.append(StepError("needs_user", str(exc)))
            return errors[-1]
        except ToolError as exc:
            errors.append(StepError("tool", f"tool `{tool.name}` failed: {exc}"))
            observation = {"error": f"tool `{tool.name}` failed: {exc}"}
        fields["tool_result"] = observation
        self.messages.append({"role": "user", "content": "Observation:\n" + json.dumps(observation,
                                                                                      ensure_ascii=False)})
        return None

    def _result(self, tool: Tool, args: Object) -> Object:
        """The tool's results, checked against its declared types as in machine mode."""
        result = self.tools.result(self.mode, tool, args)  # the baseline's one "state" is its mode
        if not isinstance(result, dict):
            raise ToolError(f"returned {type(result).__name__}, not its results")
        result = scrub(result)
        problems = [e for name, t in tool.results for e in check_value(result.get(name), t, f"result `{name}`")]
        if problems:
            raise ToolError("invalid results: " + "; ".join(problems))
        return result


def _ending(loop: _Loop, action: Action | None, step: int, mode: Mode) -> tuple[Outcome, EndReason | None]:
    """The run's outcome: the declared one, unless no tool call ever returned results (then it is not believed)."""
    if action is None:
        return "failed", None
    declared = action.outcome or "failed"
    if declared != "failed" and loop.calls == 0 and loop.m.tools:  # a machine with tools delivers through them
        return "failed", EndReason("invalid_output",
                                   f"the model finished `{declared}` without any tool call that returned results",
                                   step - 1, mode)
    return declared, None


def run_baseline(m: Machine, mode: Mode, executor: Executor, tools: ToolSource, options: RunOptions,
                 inputs: Object, skill_text: str | None, *, clock: Clock = Clock()) -> RunResult:
    """Run the native or prompt-only baseline; returns the same RunResult as machine mode."""
    values = parse_inputs(m, scrub(inputs))
    offer = offered_tools(m, mode, skill_text)
    tools = tool_source(executor, tools)
    missing = [t for t in tools.missing(m) if t in offer.tools]
    if missing:
        raise RunError("no implementation for tool" + ("s " if len(missing) > 1 else " ")
                       + ", ".join(f"`{t}`" for t in missing) + " (register it with --tools MODULE.py)")
    places = places_line(options.workdir, None if options.skill_dir is None else str(Path(options.skill_dir).resolve()))
    loop = _Loop(m, mode, executor, tools, options, offer,
                 first_messages(m, mode, skill_text, offer, values, places=places), clock)
    writer = TraceWriter(options.trace, options.secrets or secrets_from_env())
    writer.write_record(new_header(m.name, mode, options.executor_spec, values, workdir=options.workdir))
    action: Action | None = None
    failure: StepError | None = None
    step = 0
    try:
        while step < options.max_steps:
            fields, action, failure = loop.turn(step)
            writer.write_record(Step(**fields))
            step += 1
            if failure is not None or (action is not None and action.name == "finish"):
                break
        else:
            failure = StepError("step_limit", f"step limit {options.max_steps} reached")
        finished = action if action is not None and action.name == "finish" and failure is None else None
        outcome, doubt = _ending(loop, finished, step, mode)
        at = step if failure is None or failure.kind == "step_limit" else step - 1  # the failing step's index
        reason = EndReason.of(failure, at, mode) if failure is not None else doubt
        evidence = dict(finished.evidence) if finished is not None else {}
        extra = {"skillc.declared_outcome": finished.outcome} if finished is not None else {}
        writer.write_record(Footer(terminal=mode, outcome=outcome, evidence=evidence, steps=step,
                                   error=reason.message if reason is not None else None, reason=reason,
                                   input_tokens=loop.tokens[0], output_tokens=loop.tokens[1],
                                   latency_ms=round(loop.latency, 3), extra=extra))
    finally:
        writer.close()
    return RunResult(None, outcome, mode, evidence, step, str(writer.path) if writer.path else None,
                     reason.message if reason is not None else None, (), reason=reason)


def skill_document(m: Machine) -> str | None:
    """The text of the machine's `source`, when it can be read."""
    if m.source_path is None:
        return None
    try:
        return m.source_path.read_text(encoding="utf-8")
    except OSError:
        return None
