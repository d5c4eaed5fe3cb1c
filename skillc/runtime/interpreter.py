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
import os
import re
import time
from pathlib import Path
from typing import Any

import attrs

from skillc.diagnostics.files import JSONProblem, loads, scrub
from skillc.ir import types as T
from skillc.ir.evaluate import EvalError, evaluate
from skillc.ir.machine import FALLBACK, Machine, State
from skillc.runtime.executors.base import Executor, ExecutorError, count
from skillc.runtime.journal import Journal, JournalError, Lease
from skillc.runtime.prompts import Prompts
from skillc.runtime.tools import ToolBox, ToolError
from skillc.runtime.trace import (REDACTED, Redactor, TraceError, TraceWriteError, TraceWriter, named_secrets,
                                  read_trace)
from skillc.runtime.values import apply_outputs, check_value, coerce
from skillc.version import __version__


class RunError(Exception):
    """The run cannot start: bad inputs, missing tool implementations, an unknown run to resume."""

    code = "SKM501"


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
    #: Seconds one model/judge step may spend on its requests, retries and Retry-After waits included.
    step_deadline_s: float | None = None
    #: Longest Retry-After wait honoured between two attempts (a server asking for more is not waited for).
    max_retry_wait_s: float = 60.0


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
    """Parse a model's answer as JSON, tolerating a Markdown code fence around it (depth-limited)."""
    stripped = text.strip()
    fence = re.match(r"^```(?:json)?\s*\n(.*)\n```$", stripped, re.S)
    if fence:
        stripped = fence.group(1)
    try:
        return scrub(loads(stripped))  # JSON escapes can spell lone surrogates too
    except JSONProblem as exc:
        raise json.JSONDecodeError(str(exc), stripped, 0) from None


def _journal_placeholder(name: str) -> str:
    return f"[redacted:${name}]"


_PLACEHOLDER = re.compile(r"\[redacted:\$([A-Za-z_][A-Za-z0-9_]*)\]")


def restore_secrets(value: Any, run_id: str) -> Any:
    """Put the environment's secrets back where the journal stored `[redacted:$NAME]` placeholders."""
    if isinstance(value, str):
        def back(m: re.Match) -> str:
            if m.group(1) not in os.environ:
                raise RunError(f"run `{run_id}` needs the secret ${m.group(1)}, which is not set in this "
                               "environment (the journal never stores secrets; set it and resume again)")
            return os.environ[m.group(1)]
        return _PLACEHOLDER.sub(back, value)
    if isinstance(value, list):
        return [restore_secrets(v, run_id) for v in value]
    if isinstance(value, dict):
        return {restore_secrets(k, run_id): restore_secrets(v, run_id) for k, v in value.items()}
    return value


def _as_trace_redaction(value: Any) -> Any:
    """A journal record made fit for the trace: `[redacted:$NAME]` becomes `[redacted]`."""
    if isinstance(value, str):
        return _PLACEHOLDER.sub(REDACTED, value)
    if isinstance(value, list):
        return [_as_trace_redaction(v) for v in value]
    if isinstance(value, dict):
        return {_as_trace_redaction(k): _as_trace_redaction(v) for k, v in value.items()}
    return value


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
        self._journal_redactor: Redactor | None = None
        stood_in = {s.call.tool for s in machine.states.values() if s.call is not None and executor.stands_in(s.name)}
        needed = {s.call.tool for s in machine.states.values() if s.call is not None and not executor.stands_in(s.name)}
        missing = sorted(t for t in tools.missing(machine) if t in needed or t not in stood_in)
        if missing:
            raise RunError("no implementation for tool" + ("s " if len(missing) > 1 else " ")
                           + ", ".join(f"`{t}`" for t in missing) + " (register it with --tools MODULE.py)")

    # ------------------------------------------------------------ entry points

    def run(self, inputs: dict[str, Any]) -> RunResult:
        """Start a new run."""
        values = parse_inputs(self.machine, scrub(inputs))
        env = initial_env(self.machine, values)
        journal = self.options.journal
        run_id = journal.start(self.options.machine_path, self.hash, self._private(values),
                               self.options.executor_spec,
                               str(self.options.trace) if self.options.trace else None) if journal else None
        lease = journal.lease(run_id) if journal and run_id else None
        try:
            writer = TraceWriter(self.options.trace, self._secrets())
            writer.write(self._header(run_id, values, resumed_from=None))
        except BaseException:
            if lease is not None:
                lease.release()
            raise
        return self._loop(run_id, env, self.machine.start, 0, writer, lease)

    def _secrets(self) -> dict[str, str]:
        return named_secrets(self.options.secrets)

    def _private(self, value: Any) -> Any:
        """A value as the journal stores it: secrets replaced by placeholders that name them."""
        if self._journal_redactor is None:
            self._journal_redactor = Redactor(self._secrets(), _journal_placeholder)
        return self._journal_redactor(value)

    def resume(self, run_id: str) -> RunResult:
        """Continue a run after its last committed step."""
        journal = self.options.journal
        if journal is None:
            raise RunError("resuming needs the run journal")
        journal.info(run_id)  # an unknown run is refused before anything is created for it
        lease = journal.lease(run_id)  # LeaseError: another process runs it
        try:
            info = journal.info(run_id)  # read again under the lease: the holder may just have finished it
            if info.machine_hash != self.hash:
                raise RunError(f"run `{run_id}` was made with another version of the machine (hash "
                               f"{info.machine_hash}, now {self.hash})")
            if info.status == "done":
                raise RunError(f"run `{run_id}` already finished ({info.outcome})")
            point = journal.checkpoint(run_id)
            inputs = restore_secrets(info.inputs, run_id)
            if point is None:
                env, state, step = initial_env(self.machine, parse_inputs(self.machine, inputs)), self.machine.start, 0
            else:
                env, state, step = restore_secrets(point.env, run_id), point.state, point.step + 1
            self._check_resumed(run_id, env, state)
            writer = TraceWriter(info.trace_path, self._secrets(), append=True)
            self._fill_trace(writer, info.trace_path, journal.steps(run_id))
            writer.write(self._header(run_id, inputs, resumed_from=step))
        except BaseException:
            lease.release()
            raise
        return self._loop(run_id, env, state, step, writer, lease)

    def _check_resumed(self, run_id: str, env: dict, state: str) -> None:
        """A journal's state must fit the machine: known state, every value of its declared type."""
        if state not in self.machine.states:
            raise JournalError(f"run `{run_id}` is damaged: its next state `{state}` is not in the machine")
        problems = [f"`{k}` is not a variable of `{self.machine.name}`" for k in env if k not in self.machine.variables]
        for name, value in env.items():
            if name in self.machine.variables:
                problems += check_value(value, self.machine.variables[name].type, f"`{name}`")
        if problems:
            raise JournalError(f"run `{run_id}` is damaged: its saved state does not fit the machine ("
                               + "; ".join(problems[:3]) + ")")

    def _fill_trace(self, writer: TraceWriter, trace_path: str | None, committed: list[dict]) -> None:
        """Append committed steps that a crash kept out of the trace (committed before written), in order."""
        if not trace_path or writer.path is None:
            return
        try:
            _, recorded, _ = read_trace(trace_path)
            last = max((s["step"] for s in recorded), default=-1)
        except TraceError:
            last = -1 if not os.path.exists(trace_path) or os.path.getsize(trace_path) == 0 else None
        if last is None:
            return  # an unreadable trace is not repaired; the resumed part is still appended
        for record in committed:
            if isinstance(record, dict) and isinstance(record.get("step"), int) and record["step"] > last:
                writer.write(_as_trace_redaction(record))

    # ------------------------------------------------------------ the loop

    def _header(self, run_id, inputs, resumed_from) -> dict:
        header = {"type": "header", "skillc.version": __version__, "skillc.machine": self.machine.name,
                  "skillc.machine_hash": self.hash, "skillc.run_id": run_id, "skillc.mode": "machine",
                  "skillc.executor": self.options.executor_spec, "inputs": inputs,
                  "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        if resumed_from is not None:
            header["skillc.resumed_at_step"] = resumed_from
        return header

    def _loop(self, run_id, env: dict, state: str, step: int, writer: TraceWriter,
              lease: Lease | None = None) -> RunResult:
        visited: list[str] = []
        taken: list[tuple[str, int]] = []
        error = None
        tokens = [0, 0]
        journal = self.options.journal if run_id is not None else None
        finished = False
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
                if journal is not None:
                    journal.commit_step(run_id, step, st.name, state, self._private(env), self._private(record))
                writer.write(record)
                step += 1
            terminal = self.machine.states[state]
            evidence = {r: env.get(r) for r in terminal.requires}
            outcome = terminal.outcome or "failed"
            writer.write({"type": "footer", "skillc.terminal": terminal.name, "skillc.outcome": outcome,
                          "skillc.evidence": evidence, "skillc.steps": step, "skillc.error": error,
                          "gen_ai.usage.input_tokens": tokens[0], "gen_ai.usage.output_tokens": tokens[1]})
            if journal is not None:
                journal.finish(run_id, outcome)
            finished = True
        except TraceWriteError as exc:
            raise TraceWriteError(f"{exc}; the run stopped at step {step}"
                                  + (f" and resumes with --resume {run_id}" if journal is not None else "")) from None
        except BaseException:
            if journal is not None:
                journal.interrupt(run_id)  # still resumable; `interrupted` says it did not simply crash
            raise
        finally:
            writer.close()
            if lease is not None:
                lease.release(remove=finished)
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
        deadline = None if self.options.step_deadline_s is None else time.monotonic() + self.options.step_deadline_s
        for attempt in range(self.options.retries + 1):
            try:
                response = self._complete(request, deadline)
            except ExecutorError as exc:
                record.setdefault("skillc.errors", []).append(f"executor: {exc}")
                record["skillc.retries"] = attempt
                if attempt == self.options.retries or not self._wait_to_retry(exc, deadline):
                    raise _Failed(f"the executor failed: {exc}") from None
                continue
            tokens_in += count(response.input_tokens) or 0
            tokens_out += count(response.output_tokens) or 0
            record["gen_ai.request.model"] = response.model if isinstance(response.model, str) else None
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

    def _complete(self, request, deadline: float | None):
        """One request within the step's deadline; a reply that is not text is an executor failure."""
        if deadline is not None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ExecutorError(f"no answer within the step deadline of {self.options.step_deadline_s:g} s")
            limit = getattr(self.executor, "limit_time", None)
            if limit is not None:
                limit(remaining)
        response = self.executor.complete(request)
        if not isinstance(response.text, str):
            raise ExecutorError(f"the reply's content is {type(response.text).__name__}, not text")
        return attrs.evolve(response, text=scrub(response.text))

    def _wait_to_retry(self, exc: ExecutorError, deadline: float | None) -> bool:
        """Honour a server's Retry-After before the next attempt; False when that wait would pass the deadline."""
        wait = getattr(exc, "retry_after", None)
        if not wait:
            return deadline is None or time.monotonic() < deadline
        if wait > self.options.max_retry_wait_s:
            return False
        if deadline is not None and time.monotonic() + wait >= deadline:
            return False
        time.sleep(wait)
        return True

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
        if not isinstance(result, dict):
            raise _Failed(f"tool `{tool.name}` returned {type(result).__name__}, not its results")
        result = scrub(result)
        errors = [e for name, t in tool.results for e in check_value(result.get(name), t, f"result `{name}`")]
        if errors:
            raise _Failed(f"tool `{tool.name}` returned invalid results: " + "; ".join(errors))
        record["tool_result"] = result
        new_env = dict(env)
        for var, res in st.bindings:
            # An optional result the tool left out is none (check_value accepted its absence above).
            new_env[var] = coerce(result.get(res), self.machine.variables[var].type)
        record["output"] = {var: new_env[var] for var, _ in st.bindings}
        return new_env
