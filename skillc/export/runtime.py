"""What an exported LangGraph module runs: one node = one step of skillc's own interpreter.

A module written by `skillc export langgraph` holds the machine's `.skm` text and builds a `StateGraph` with one
node per state. It makes one `Steps` for its machine; each node calls it:

- `Steps.step(state_name, values)` for a model, judge or tool state: `Interpreter.step` runs the state's
  operation (the executor for a model or judge state, retried on invalid output; the tool for a tool state),
  then takes the first edge whose guard holds and applies its assignments — the step `skillc run` takes. The
  node returns the variables that changed and the state the step chose (`__skillc_next`), which the conditional
  edge after the node follows. A failed operation chooses the fallback, as in `skillc run`.
- `Steps.finish(terminal_name, values)` for a terminal or the fallback: the terminal's predicates are judged
  (one that fails ends the run in the fallback, as `skillc run` does), and the outcome and evidence recorded.

The first step takes the graph's input as the machine's inputs (validated, defaults applied, counters at 0,
places set), so `graph.invoke({"question": …})` starts a run as `skillc run --input question=…` does. A step
beyond `max_steps` goes to the fallback (reason `step_limit`). With `trace=PATH`, the run is written as a skillc
trace (header, one record per step, footer), so `skillc replay`, `skillc conform` and `--otel` read LangGraph
runs like any other. The bookkeeping lives in channels whose names start with `__skillc_` (LangGraph's state,
so concurrent runs of one graph do not mix); the importer leaves such channels out.
"""

from __future__ import annotations

import operator
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final

import attrs

from skillc.check.source import check_source
from skillc.ir.machine import FALLBACK
from skillc.runtime.executors import make_executor
from skillc.runtime.interpreter import (
    Interpreter,
    RunOptions,
    RunResult,
    initial_env,
    machine_hash,
    parse_inputs,
    place_values,
)
from skillc.runtime.jsonvalue import Object, Value
from skillc.runtime.record import EndReason, Footer, Verdict, new_header
from skillc.runtime.session import run_tools
from skillc.runtime.trace import TraceWriter, named_secrets

if TYPE_CHECKING:
    from skillc.ir.machine import Machine
    from skillc.runtime.executors.base import Executor

#: The channels an exported graph keeps its bookkeeping in (the importer skips names starting with `__`).
NEXT: Final = "__skillc_next"
STEP: Final = "__skillc_step"
RUN: Final = "__skillc_run"
LOG: Final = "__skillc_log"
TERMINAL: Final = "__skillc_terminal"
OUTCOME: Final = "__skillc_outcome"
EVIDENCE: Final = "__skillc_evidence"
REASON: Final = "__skillc_reason"
#: The bookkeeping channels and their types, as the generated `State` declares them (the log accumulates).
CHANNELS: Final[dict[str, object]] = {NEXT: str, STEP: int, RUN: str, LOG: Annotated[list, operator.add],
                                      TERMINAL: str, OUTCOME: str, EVIDENCE: dict, REASON: dict}


class ExportError(RuntimeError):
    """The exported machine cannot run: its text does not check, or the run was not configured."""


@attrs.define
class _Config:
    """How the next runs are made (`Steps.configure`)."""

    interpreter: Interpreter
    workdir: str | None
    max_steps: int
    trace: str | None
    executor_spec: str


class Steps:
    """The machine of an exported graph and the skillc runtime that runs its states, one node at a time.

    `text`: the machine's `.skm` (imports of the standard library only); `name`: the file it was exported from
    (messages and the trace header name it); `folder`: where relative paths of the text (its `source`) are
    resolved; `machine_hash`: the hash of that file, written into traces. The machine is loaded and checked on
    first use; a text that does not check raises ExportError.
    """

    def __init__(self, text: str, *, name: str = "machine.skm", folder: str | os.PathLike[str] | None = None,
                 machine_hash: str | None = None) -> None:
        self.text = text
        self.name = name
        self.folder = Path(folder) if folder is not None else Path.cwd()
        self._hash = machine_hash
        self._machine: Machine | None = None
        self._config: _Config | None = None
        self._writers: dict[str, TraceWriter] = {}

    # ------------------------------------------------------------ the machine

    @property
    def path(self) -> str:
        """Where the machine's text stands (for its relative paths): `folder/name`."""
        return str(self.folder / Path(self.name).name)

    @property
    def machine(self) -> Machine:
        """The checked machine (loaded once)."""
        if self._machine is None:

            result = check_source(self.text, path=self.path)
            errors = [d for d in result.diagnostics if d.is_error]
            if result.machine is None or errors:
                first = errors[0] if errors else None
                raise ExportError(f"the machine exported from {self.name} does not check"
                                  + (f": {first.code} {first.message}" if first else ""))
            self._machine = result.machine
        return self._machine

    @property
    def hash(self) -> str:
        """The content hash of the machine's file as it was exported (what `skillc run` of that file writes into its
        traces, so `skillc replay` of the file accepts the graph's traces); the text's own when none was given."""

        return self._hash or machine_hash(self.text)

    # ------------------------------------------------------------ configuration

    def configure(self, executor: str | Executor, *, tools: Sequence[str | os.PathLike[str]] = (),
                  workdir: str | os.PathLike[str] | None = None, skill_dir: str | os.PathLike[str] | None = None,
                  max_steps: int = 1000, retries: int = 2, trace: str | os.PathLike[str] | None = None,
                  base_url: str | None = None, tool_timeout_s: float = 60.0, model_timeout_s: float = 120.0,
                  step_deadline_s: float | None = 600.0) -> None:
        """How the next runs are made: the executor (a `--executor` spec or an Executor), the tool modules and
        folders, the limits, and where to write the trace (None: no trace) — `skillc run`'s options."""

        machine = self.machine
        spec = executor if isinstance(executor, str) else getattr(executor, "name", type(executor).__name__)
        made = make_executor(executor, base_url=base_url, timeout_s=model_timeout_s) if isinstance(executor, str) \
            else executor
        folder = str(Path(workdir).resolve()) if workdir is not None else None
        box = run_tools(machine, "machine", workdir=folder or os.getcwd(),
                        skill_dir=str(skill_dir) if skill_dir is not None else None,
                        modules=[str(t) for t in tools], timeout_s=tool_timeout_s)
        options = RunOptions(retries=retries, max_steps=max_steps, executor_spec=spec, machine_path=self.name,
                             step_deadline_s=step_deadline_s, workdir=folder,
                             skill_dir=str(skill_dir) if skill_dir is not None else None)
        self._config = _Config(Interpreter(machine, made, box, options, self.text), folder, max_steps,
                               str(trace) if trace is not None else None, spec)

    @property
    def config(self) -> _Config:
        if self._config is None:
            raise ExportError("configure the run first: STEPS.configure(executor, …) (or call the module's run())")
        return self._config

    @property
    def recursion_limit(self) -> int:
        """The LangGraph recursion limit a run needs: every step and the terminal are one superstep each."""
        return (self._config.max_steps if self._config is not None else 1000) + 5

    # ------------------------------------------------------------ nodes

    def _env(self, values: Mapping[str, Value]) -> Object:
        variables = self.machine.variables
        return {k: v for k, v in values.items() if k in variables}

    def _start(self, values: Mapping[str, Value]) -> tuple[Object, str]:
        """The first step: the graph's input as the machine's inputs, the run's id, the trace's header."""

        config = self.config
        given = {k: v for k, v in values.items() if not k.startswith("__skillc_")}
        inputs = parse_inputs(self.machine, given)
        env = initial_env(self.machine, inputs)
        options = config.interpreter.options
        env.update(place_values(self.machine, options.workdir, options.skill_dir))
        run = uuid.uuid4().hex[:12]
        if config.trace is not None:
            writer = TraceWriter(config.trace, named_secrets())
            writer.write_record(new_header(self.machine.name, "machine", config.executor_spec, inputs,
                                           machine_hash=self.hash, workdir=config.workdir))
            self._writers[run] = writer
        return env, run

    def step(self, name: str, values: Mapping[str, Value]) -> Object:
        """Run state `name` from the graph's values; the update: changed variables, the next state, the log."""

        config = self.config
        update: Object = {}
        if STEP not in values:
            env, run = self._start(values)
            update.update(env)
            update[RUN] = run
        else:
            env, run = self._env(values), str(values.get(RUN, ""))
        index = int(values.get(STEP, 0))
        if index >= config.max_steps:
            reason = EndReason("step_limit", f"step limit {config.max_steps} reached", index, name)
            return update | {NEXT: FALLBACK, STEP: index, REASON: reason.to_json()}
        moved = config.interpreter.step(name, env, index)
        update.update({k: v for k, v in moved.env.items() if k not in env or env[k] != v})
        record = moved.record()
        writer = self._writers.get(run)
        if writer is not None:
            writer.write_record(record)
        update.update({NEXT: moved.target, STEP: index + 1, LOG: [record.to_json()]})
        if moved.target == FALLBACK:
            reason = EndReason.of(moved.failure, index, name) if moved.failure is not None else EndReason(
                "edge", f"edge {(moved.edge or 0) + 1} of `{name}` leads to the fallback", index, name, moved.edge)
            update[REASON] = reason.to_json()
        return update

    def next(self, values: Mapping[str, Value]) -> str:
        """The state the last step chose (what each conditional edge follows)."""
        return str(values[NEXT])

    def finish(self, name: str, values: Mapping[str, Value]) -> Object:
        """Arrive at terminal `name` (or the fallback): judge its predicates, record the outcome and evidence."""

        config = self.config
        env = self._env(values)
        terminal = self.machine.states[name]
        reason = EndReason.from_json(values[REASON]) if isinstance(values.get(REASON), dict) else None
        verdicts: tuple[Verdict, ...] = ()
        if terminal.predicates:
            verdicts = tuple(config.interpreter.judge(terminal, env))
            failed = next((v for v in verdicts if not v.holds), None)
            if failed is not None:
                last = int(values.get(STEP, 0)) - 1
                reason = EndReason("predicate", f"requires {failed.predicate}: {failed.reason or 'false'}",
                                   last if last >= 0 else None, name)
                terminal = self.machine.states[FALLBACK]
        evidence: Object = {r: env.get(r) for r in terminal.requires}
        evidence.update((v.predicate, v.holds) for v in verdicts)
        outcome = terminal.outcome or "failed"
        steps = list(values.get(LOG) or [])
        run = str(values.get(RUN, ""))
        writer = self._writers.pop(run, None)
        if writer is not None:
            try:
                error = reason.message if reason is not None and reason.kind != "edge" else None
                writer.write_record(Footer(
                    terminal=terminal.name, outcome=outcome, evidence=evidence, steps=int(values.get(STEP, 0)),
                    error=error, reason=reason,
                    input_tokens=sum(s.get("gen_ai.usage.input_tokens") or 0 for s in steps),
                    output_tokens=sum(s.get("gen_ai.usage.output_tokens") or 0 for s in steps),
                    latency_ms=round(sum(s.get("skillc.latency_ms") or 0.0 for s in steps), 3), predicates=verdicts))
            finally:
                writer.close()
        return {TERMINAL: terminal.name, OUTCOME: outcome, EVIDENCE: evidence,
                **({REASON: reason.to_json()} if reason is not None else {})}

    # ------------------------------------------------------------ results

    def result(self, final: Mapping[str, Value]) -> RunResult:
        """What the graph's final values say about the run, as `skillc run` reports it (`RunResult`)."""

        steps = list(final.get(LOG) or [])
        reason = EndReason.from_json(final[REASON]) if isinstance(final.get(REASON), dict) else None
        terminal = str(final.get(TERMINAL, ""))
        evidence = dict(final.get(EVIDENCE) or {})
        requires = self.machine.states[terminal].requires if terminal in self.machine.states else ()
        return RunResult(str(final.get(RUN)) if final.get(RUN) else None, str(final.get(OUTCOME, "failed")), terminal,
                         evidence, int(final.get(STEP, 0)), self.config.trace,
                         reason.message if reason is not None and reason.kind != "edge" else None,
                         tuple(s["state"] for s in steps),
                         tuple((s["state"], s["edge"]) for s in steps if s.get("edge") is not None),
                         tuple(r for r in requires if evidence.get(r) is None), reason)

    def run(self, graph: Any, inputs: Mapping[str, Value], **options: Any) -> RunResult:
        """Configure with `options` (see `configure`), run the compiled `graph` on `inputs`, and report."""
        executor = options.pop("executor")
        self.configure(executor, **options)
        final = graph.invoke(dict(inputs), {"recursion_limit": self.recursion_limit})
        return self.result(final)

