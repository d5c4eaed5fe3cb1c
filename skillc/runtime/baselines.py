"""Baselines for honest comparison: the skill run natively, and the machine rendered as prose.

- `native`: the whole skill document and the full transcript are in every
  prompt; the model picks the next tool call (or `finish`) at every turn.
- `prompt-only`: the same loop, but the instructions are the machine rendered
  as prose (states, their instructions and where each leads), so the model is
  told the control flow instead of being driven by it.

Both write traces in the same format as machine mode (the header's `mode` says
which), so `skillc score` compares them on the same terms.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Literal

from skillc.diagnostics.files import scrub
from skillc.ir import types as T
from skillc.ir.machine import Machine
from skillc.ir.printexpr import show_expr
from skillc.runtime.executors.base import Executor, ExecutorError, count
from skillc.runtime.interpreter import RunOptions, RunResult, json_answer, parse_inputs
from skillc.runtime.prompts import Request
from skillc.runtime.record import EndReason, Footer, Outcome, Step, StepError, ToolCall, new_header
from skillc.runtime.tools import ToolError
from skillc.runtime.toolsource import ToolSource
from skillc.runtime.trace import TraceWriter, secrets_from_env
from skillc.runtime.values import check_value

PROTOCOL = (
    "You work through the procedure above by calling tools. At every turn reply with one JSON object: "
    '{"action": TOOL, "args": {…}} to call a tool, or {"action": "finish", "outcome": "success" | "partial" | '
    '"failed", "evidence": {NAME: VALUE, …}} when the procedure is complete.'
)


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
        for e in st.edges:
            cond = f"if {show_expr(e.guard)}" if e.guard is not None else "otherwise"
            sets = "; then set " + ", ".join(f"{a.var} {a.op} {show_expr(a.value)}" for a in e.assigns) \
                if e.assigns else ""
            lines.append(f"  {cond}, continue with `{e.target}`{sets}.")
    lines += ["", "Rules:"] + [f"- {r.quote}" for r in m.rules]
    return "\n".join(lines)


def _schema(m: Machine) -> dict:
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": [*m.tools, "finish"]},
            "args": {"type": "object"},
            "outcome": {"type": "string", "enum": ["success", "partial", "failed"]},
            "evidence": {"type": "object"},
        },
        "required": ["action"],
    }


def run_baseline(m: Machine, mode: Literal["native", "prompt-only"], executor: Executor, tools: ToolSource,
                 options: RunOptions, inputs: dict[str, Any], skill_text: str | None) -> RunResult:
    """Run the native or prompt-only baseline; returns the same RunResult as machine mode."""
    if mode == "native":
        if not skill_text:
            raise ValueError("native mode needs the skill document (the machine's `source`)")
        instructions = skill_text
    else:
        instructions = render_prose(m)
    values = parse_inputs(m, inputs)
    tool_lines = [f"- {t.name}(" + ", ".join(f"{k}: {T.show(v)}" for k, v in t.params) + ") -> "
                  + ", ".join(f"{k}: {T.show(v)}" for k, v in t.results) for t in m.tools.values()]
    system = instructions + "\n\nTools:\n" + "\n".join(tool_lines) + "\n\n" + PROTOCOL
    messages: list[dict] = [{"role": "system", "content": system},
                            {"role": "user", "content": "Inputs:\n" + json.dumps(values, ensure_ascii=False, indent=2)}]
    writer = TraceWriter(options.trace, options.secrets or secrets_from_env())
    writer.write_record(new_header(m.name, mode, options.executor_spec, values))
    schema = _schema(m)
    outcome: Outcome = "failed"
    evidence: dict[str, Any] = {}
    failure: StepError | None = None
    step = 0
    totals = [0, 0]
    latency = 0.0
    try:
        while step < options.max_steps:
            fields: dict[str, Any] = {"index": step, "state": mode, "kind": "turn", "operation": "chat",
                                      "prompt_chars": sum(len(x["content"]) for x in messages)}
            started = time.perf_counter()
            try:
                response = executor.complete(Request(mode, "model", tuple(messages), schema))
            except ExecutorError as exc:
                failure = StepError(exc.kind, f"executor: {exc}")
                break
            if not isinstance(response.text, str):
                failure = StepError("executor", f"executor: the reply's content is {type(response.text).__name__}, "
                                                "not text")
                break
            fields.update(model=response.model if isinstance(response.model, str) else None,
                          input_tokens=count(response.input_tokens), output_tokens=count(response.output_tokens),
                          raw_output=response.text)
            totals[0] += count(response.input_tokens) or 0
            totals[1] += count(response.output_tokens) or 0
            messages.append({"role": "assistant", "content": response.text})
            try:
                action = json_answer(response.text)
                name = action["action"]
            except (ValueError, KeyError, TypeError):
                observation = {"error": "reply with one JSON object as described"}
            else:
                if name == "finish":
                    declared = action.get("outcome")
                    outcome = declared if declared in ("success", "partial", "failed") else "failed"
                    evidence = action.get("evidence") if isinstance(action.get("evidence"), dict) else {}
                    fields["output"] = action
                    fields["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
                    latency += fields["latency_ms"]
                    writer.write_record(Step(**fields))
                    step += 1
                    break
                observation = _call(m, tools, name, action.get("args"), fields)
            fields["tool_result"] = observation
            fields["latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
            latency += fields["latency_ms"]
            writer.write_record(Step(**fields))
            messages.append({"role": "user", "content": "Observation:\n" + json.dumps(observation, ensure_ascii=False)})
            step += 1
        else:
            failure = StepError("step_limit", f"step limit {options.max_steps} reached")
        error = failure.message if failure is not None else None
        reason = None if failure is None else EndReason.of(failure, step, mode)
        writer.write_record(Footer(terminal=mode, outcome=outcome, evidence=evidence, steps=step, error=error,
                                   reason=reason,
                                   input_tokens=totals[0], output_tokens=totals[1], latency_ms=round(latency, 3)))
    finally:
        writer.close()
    return RunResult(None, outcome, mode, evidence, step, str(writer.path) if writer.path else None, error, (),
                     reason=reason)


def _call(m: Machine, tools: ToolSource, name: str, args: Any, fields: dict[str, Any]) -> dict:
    tool = m.tools.get(name)
    if tool is None:
        return {"error": f"no tool `{name}`"}
    if not isinstance(args, dict):
        return {"error": "`args` must be an object"}
    problems = [f"unknown argument `{k}`" for k in args if tool.param(k) is None]
    problems += [e for k, t in tool.params for e in check_value(args.get(k), t, f"argument `{k}`")]
    if problems:
        return {"error": "; ".join(problems)}
    fields["tool_call"] = ToolCall(name, args)
    try:
        return scrub(tools.result(fields["state"], tool, args))  # the baseline's one "state" is its mode
    except ToolError as exc:
        return {"error": str(exc)}


def skill_document(m: Machine) -> str | None:
    """The text of the machine's `source`, when it can be read."""
    if not (m.source and m.path):
        return None
    try:
        return (Path(m.path).parent / m.source).read_text(encoding="utf-8")
    except OSError:
        return None
