"""The interpreter: run a checked machine step by step.

After each state's operation the first edge whose guard holds is taken, its
assignments are applied left to right, and counters are kept within their
maximum (an overflow goes to the fallback). Model and judge outputs are parsed
and type-checked against the write set and retried with the validation error
a bounded number of times; a failed tool call, an executor that cannot answer
or an output that stays invalid goes to the fallback. State is replaced only
when a step's writes are all valid, and each step is committed to the journal
before the next begins.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

import attrs

from skillc.ir import types as T
from skillc.ir.evaluate import EvalError, evaluate
from skillc.ir.machine import FALLBACK, Machine, State
from skillc.runtime.executors.base import Executor, ExecutorError
from skillc.runtime.journal import Journal, JournalError
from skillc.runtime.prompts import Prompts
from skillc.runtime.tools import ToolBox, ToolError
from skillc.runtime.trace import TraceWriter, secrets_from_env
from skillc.runtime.values import apply_outputs, check_value, coerce
from skillc.version import __version__


class RunError(Exception):
    """The run cannot start: bad inputs, missing tool implementations, an unknown run to resume."""


class _Failed(Exception):
    """An operation failed for good; the run goes to the fallback."""


@attrs.define
class RunOptions:
    """Knobs of one run."""

    retries: int = 2
    max_steps: int = 1000
    trace: Path | None = None
    journal: Journal | None = None
    secrets: list[str] = attrs.Factory(list)
    executor_spec: str = ""
    machine_path: str = "<string>"


@attrs.frozen
class RunResult:
    """How a run ended."""

    run_id: str | None
    outcome: str
    terminal: str
    evidence: dict
    steps: int
    trace: str | None
    error: str | None = None
    visited: tuple[str, ...] = ()
    edges: tuple[tuple[str, int], ...] = ()
    missing_evidence: tuple[str, ...] = ()


def machine_hash(text: str) -> str:
    """A content hash that identifies the machine a trace or journal was made with."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode("utf-8")).hexdigest()[:16]


def parse_inputs(machine: Machine, given: dict[str, Any]) -> dict[str, Any]:
    """Validated input values (defaults applied); RunError lists every problem."""
    problems = [f"`{k}` is not an input of `{machine.name}`" for k in given
                if k not in machine.variables or not machine.variables[k].is_input]
    values: dict[str, Any] = {}
    for v in machine.variables.values():
        if not v.is_input:
            continue
        if v.name in given:
            value = given[v.name]
        elif v.init is not None:
            value = evaluate(v.init, {})
        elif isinstance(v.type, T.OptionalT):
            value = None
        else:
            problems.append(f"input `{v.name}` ({T.show(v.type)}) is required")
            continue
        problems += check_value(value, v.type, f"input `{v.name}`")
        values[v.name] = coerce(value, v.type)
    if problems:
        raise RunError("; ".join(problems))
    return values


def initial_env(machine: Machine, inputs: dict[str, Any]) -> dict[str, Any]:
    """Inputs, counters at 0 and initialised variables: everything defined before the first state."""
    env = dict(inputs)
    for v in machine.variables.values():
        if v.is_counter:
            env[v.name] = 0
        elif not v.is_input and v.init is not None:
            env[v.name] = coerce(evaluate(v.init, {}), v.type)
    return env


def _json_answer(text: str) -> Any:
    """Parse a model's answer as JSON, tolerating a Markdown code fence around it."""
    stripped = text.strip()
    fence = re.match(r"^```(?:json)?\s*\n(.*)\n```$", stripped, re.S)
    if fence:
        stripped = fence.group(1)
    return json.loads(stripped)


class Interpreter:
    """Runs one machine with one executor and one toolbox."""

    def __init__(self, machine: Machine, executor: Executor, tools: ToolBox, options: RunOptions,
                 source_text: str = "") -> None:
        self.machine = machine
        self.executor = executor
        self.tools = tools
        self.options = options
        self.hash = machine_hash(source_text)
        self.prompts = Prompts(machine)
        stood_in = {s.call.tool for s in machine.states.values() if s.call is not None and executor.stands_in(s.name)}
        needed = {s.call.tool for s in machine.states.values() if s.call is not None and not executor.stands_in(s.name)}
        missing = sorted(t for t in tools.missing(machine) if t in needed or t not in stood_in)
        if missing:
            raise RunError("no implementation for tool" + ("s " if len(missing) > 1 else " ")
                           + ", ".join(f"`{t}`" for t in missing) + " (register it with --tools MODULE.py)")

    # ------------------------------------------------------------ entry points

    def run(self, inputs: dict[str, Any]) -> RunResult:
        """Start a new run."""
        values = parse_inputs(self.machine, inputs)
        env = initial_env(self.machine, values)
        journal = self.options.journal
        run_id = journal.start(self.options.machine_path, self.hash, values, self.options.executor_spec,
                               str(self.options.trace) if self.options.trace else None) if journal else None
        writer = TraceWriter(self.options.trace, self.options.secrets or secrets_from_env())
        writer.write(self._header(run_id, values, resumed_from=None))
        return self._loop(run_id, env, self.machine.start, 0, writer)

    def resume(self, run_id: str) -> RunResult:
        """Continue a run after its last committed step."""
        journal = self.options.journal
        if journal is None:
            raise RunError("resuming needs the run journal")
        try:
            info = journal.info(run_id)
        except JournalError as exc:
            raise RunError(str(exc)) from None
        if info.machine_hash != self.hash:
            raise RunError(f"run `{run_id}` was made with another version of the machine (hash "
                           f"{info.machine_hash}, now {self.hash})")
        if info.status == "done":
            raise RunError(f"run `{run_id}` already finished ({info.outcome})")
        point = journal.checkpoint(run_id)
        env, state, step = (point.env, point.state, point.step + 1) if point else \
            (initial_env(self.machine, info.inputs), self.machine.start, 0)
        writer = TraceWriter(info.trace_path, self.options.secrets or secrets_from_env(), append=True)
        writer.write(self._header(run_id, info.inputs, resumed_from=step))
        return self._loop(run_id, env, state, step, writer)

    # ------------------------------------------------------------ the loop

    def _header(self, run_id, inputs, resumed_from) -> dict:
        header = {"type": "header", "skillc.version": __version__, "skillc.machine": self.machine.name,
                  "skillc.machine_hash": self.hash, "skillc.run_id": run_id, "skillc.mode": "machine",
                  "skillc.executor": self.options.executor_spec, "inputs": inputs,
                  "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if resumed_from is not None:
            header["skillc.resumed_at_step"] = resumed_from
        return header

    def _loop(self, run_id, env: dict, state: str, step: int, writer: TraceWriter) -> RunResult:
        visited: list[str] = []
        taken: list[tuple[str, int]] = []
        error = None
        tokens = [0, 0]
        try:
            while True:
                st = self.machine.states[state]
                if st.is_terminal:
                    break
                visited.append(state)
                if step >= self.options.max_steps:
                    error = f"step limit {self.options.max_steps} reached"
                    state = FALLBACK
                    break
                record, env, state = self._step(st, env, step)
                if record.get("edge") is not None:
                    taken.append((st.name, record["edge"]))
                tokens[0] += record.get("gen_ai.usage.input_tokens") or 0
                tokens[1] += record.get("gen_ai.usage.output_tokens") or 0
                if record.get("skillc.errors") and state == FALLBACK:
                    error = record["skillc.errors"][-1]
                if self.options.journal is not None and run_id is not None:
                    self.options.journal.commit_step(run_id, step, st.name, state, env, record)
                writer.write(record)
                step += 1
            terminal = self.machine.states[state]
            evidence = {r: env.get(r) for r in terminal.requires}
            outcome = terminal.outcome or "failed"
            writer.write({"type": "footer", "skillc.terminal": terminal.name, "skillc.outcome": outcome,
                          "skillc.evidence": evidence, "skillc.steps": step, "skillc.error": error,
                          "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1]})
            if self.options.journal is not None and run_id is not None:
                self.options.journal.finish(run_id, outcome)
        finally:
            writer.close()
        missing = tuple(r for r in terminal.requires if r not in env)
        return RunResult(run_id, outcome, terminal.name, evidence, step,
                         str(writer.path) if writer.path else None, error, tuple(visited), tuple(taken), missing)

    def _step(self, st: State, env: dict, step: int) -> tuple[dict, dict, str]:
        """Run one state: its operation, then the first edge whose guard holds. Returns (record, env, next)."""
        record: dict[str, Any] = {"type": "step", "step": step, "state": st.name, "kind": st.kind,
                                  "inputs": {r: env.get(r) for r in st.reads}}
        started = time.perf_counter()
        try:
            if st.kind == "tool":
                new_env = self._tool(st, env, record)
            else:
                new_env = self._ask(st, env, record)
        except _Failed as exc:
            record.setdefault("skillc.errors", []).append(str(exc))
            record["skillc.latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
            record["edge"] = None
            record["target"] = FALLBACK
            return record, env, FALLBACK
        record["skillc.latency_ms"] = round((time.perf_counter() - started) * 1000, 3)
        for e in st.edges:
            try:
                fires = e.guard is None or bool(evaluate(e.guard, new_env))
            except EvalError as exc:
                record.setdefault("skillc.warnings", []).append(f"guard of edge {e.index + 1}: {exc}")
                fires = False
            if not fires:
                continue
            record["edge"] = e.index
            assigned = {}
            for a in e.assigns:
                try:
                    value = evaluate(a.value, new_env)
                except EvalError as exc:
                    record.setdefault("skillc.errors", []).append(f"assignment to `{a.var}`: {exc}")
                    record["target"] = FALLBACK
                    return record, env, FALLBACK
                var = self.machine.variables[a.var]
                if a.op == "+=":
                    value = new_env[a.var] + value
                elif a.op == "-=":
                    value = new_env[a.var] - value
                if var.is_counter and not 0 <= value <= (var.max or 0):
                    record.setdefault("skillc.errors", []).append(
                        f"counter `{a.var}` would reach {value}, past its maximum {var.max}")
                    record["target"] = FALLBACK
                    return record, env, FALLBACK
                new_env[a.var] = coerce(value, var.type)
                assigned[a.var] = new_env[a.var]
            record["assignments"] = assigned
            record["target"] = e.target
            return record, new_env, e.target
        record.setdefault("skillc.errors", []).append("no edge fired")
        record["target"] = FALLBACK
        return record, env, FALLBACK

    def _ask(self, st: State, env: dict, record: dict) -> dict:
        request = self.prompts.request(st, env)
        record["gen_ai.operation.name"] = "chat"
        tokens_in = tokens_out = 0
        for attempt in range(self.options.retries + 1):
            try:
                response = self.executor.complete(request)
            except ExecutorError as exc:
                record.setdefault("skillc.errors", []).append(f"executor: {exc}")
                record["skillc.retries"] = attempt
                if attempt == self.options.retries:
                    raise _Failed(f"the executor failed: {exc}") from None
                continue
            tokens_in += response.input_tokens or 0
            tokens_out += response.output_tokens or 0
            record["gen_ai.request.model"] = response.model
            record["gen_ai.usage.input_tokens"] = tokens_in
            record["gen_ai.usage.output_tokens"] = tokens_out
            record["skillc.raw_output"] = response.text
            record["skillc.retries"] = attempt
            try:
                output = _json_answer(response.text)
            except json.JSONDecodeError as exc:
                errors = [f"the reply is not JSON ({exc.msg})"]
            else:
                new_env, errors = apply_outputs(self.machine, st, env, output)
                if not errors:
                    record["output"] = output  # as answered: records and maps as their merge patches
                    if st.kind == "judge":
                        record["label"] = new_env[st.writes[0]]
                    return new_env
            record.setdefault("skillc.errors", []).append("invalid output: " + "; ".join(errors))
            request = request.retry(response.text, errors)
        raise _Failed(f"no valid output after {self.options.retries + 1} attempts: {record['skillc.errors'][-1]}")

    def _tool(self, st: State, env: dict, record: dict) -> dict:
        call = st.call
        assert call is not None
        tool = self.machine.tools[call.tool]
        try:
            args = {name: evaluate(value, env) for name, value in call.args}
        except EvalError as exc:
            raise _Failed(f"cannot build the arguments of `{tool.name}`: {exc}") from None
        record["gen_ai.operation.name"] = "execute_tool"
        record["gen_ai.tool.name"] = tool.name
        record["tool_call"] = {"tool": tool.name, "args": args}
        try:
            result = self.executor.tool_result(st.name, tool.name, args)
            if result is None:
                result = self.tools.call(tool, args)
        except (ToolError, ExecutorError) as exc:
            raise _Failed(f"tool `{tool.name}` failed: {exc}") from None
        errors = [e for name, t in tool.results for e in check_value(result.get(name), t, f"result `{name}`")]
        if errors:
            raise _Failed(f"tool `{tool.name}` returned invalid results: " + "; ".join(errors))
        record["tool_result"] = result
        new_env = dict(env)
        for var, res in st.bindings:
            new_env[var] = coerce(result[res], self.machine.variables[var].type)
        record["output"] = {var: new_env[var] for var, _ in st.bindings}
        return new_env
