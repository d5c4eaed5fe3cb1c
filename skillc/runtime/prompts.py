"""Prompts for model and judge states: local instructions, declared inputs, output contract.

A state sees only its own instructions and the values of its `reads`. Nothing
else of the machine, the skill or the run history enters the prompt, so its
size does not grow with the number of steps taken.
"""

from __future__ import annotations

import json

import attrs

from skillc.ir import types as T
from skillc.ir.machine import Machine, State
from skillc.runtime.jsonvalue import Env
from skillc.runtime.values import is_structured, output_schema

SYSTEM = (
    "You carry out one step of a procedure. Follow the step's instructions using only the inputs given. "
    "Reply with a single JSON object that matches the output contract exactly, and nothing else."
)


@attrs.frozen
class Request:
    """One call to a model: chat messages plus the JSON Schema the answer must satisfy."""

    state: str
    kind: str
    messages: tuple[dict, ...]
    schema: dict

    @property
    def schema_name(self) -> str:
        return f"{self.state.replace('.', '_')}_output"

    def retry(self, bad_output: str, errors: list[str]) -> Request:
        """The same request with the invalid answer and what was wrong with it appended."""
        feedback = "Your reply was not valid: " + "; ".join(errors) + ". Reply again with a corrected JSON object."
        return attrs.evolve(self, messages=self.messages + (
            {"role": "assistant", "content": bad_output},
            {"role": "user", "content": feedback},
        ))


def _named(t: T.Type, out: dict[str, T.Type]) -> None:
    """Records and named enums inside a type, in the order they are first met (into `out`, by name)."""
    if isinstance(t, (T.OptionalT, T.ListT)):
        _named(t.inner if isinstance(t, T.OptionalT) else t.item, out)
    elif isinstance(t, T.MapT):
        _named(t.value, out)
    elif isinstance(t, T.EnumT) and t.name is not None:
        out.setdefault(t.name, t)
    elif isinstance(t, T.RecordT) and t.name not in out:
        out[t.name] = t
        for _, ft in t.fields:
            _named(ft, out)


def _labels(t: T.EnumT) -> str:
    """An enum's labels as the contract writes them: `exactly one of "a", "b"`."""
    return f"exactly one of {', '.join(json.dumps(x) for x in t.labels)}"


def _definition(name: str, t: T.Type) -> str:
    """What a record or a named enum of the contract is, in one line."""
    if isinstance(t, T.EnumT):
        return f"- `{name}` is {_labels(t)}"
    assert isinstance(t, T.RecordT)
    fields = "; ".join(f"`{f}`: {T.show(ft)}" + (" (may be null)" if isinstance(ft, T.OptionalT) else "")
                       for f, ft in t.fields)
    return f"- `{name}` is an object with exactly these keys: {fields}"


def _contract(machine: Machine, state: State) -> str:
    lines = []
    named: dict[str, T.Type] = {}
    for name in state.writes:
        t = machine.variables[name].type
        if isinstance(t, T.EnumT):
            lines.append(f"- `{name}`: {_labels(t)}")
        elif is_structured(t):
            lines.append(f"- `{name}`: a JSON merge patch of {T.show(t)} (only the keys that change; null deletes)")
        else:
            lines.append(f"- `{name}`: {T.show(t)}")
        if not isinstance(t, T.EnumT):  # its labels are on its own line already
            _named(t, named)
    if named:
        # A state sees nothing of the machine but its own request: the records and enums its output holds are
        # spelled out, or a model can only guess their keys and labels.
        lines.append("Where:")
        lines += [_definition(n, t) for n, t in named.items()]
    return "\n".join(lines)


class Prompts:
    """Builds requests; the parts that do not depend on values are computed once per state."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self._static: dict[str, tuple[str, str, dict]] = {}

    def request(self, state: State, env: Env) -> Request:
        """The request for a model or judge state, from its prompt and the values of its reads only."""
        static = self._static.get(state.name)
        if static is None:
            contract = "Output contract: a JSON object with exactly these keys:\n" + _contract(self.machine, state)
            static = self._static[state.name] = (state.prompt or "", contract, output_schema(self.machine, state))
        prompt, contract, schema = static
        inputs = {name: env[name] for name in state.reads}
        parts = [prompt]
        if inputs:
            parts.append("Inputs:\n" + json.dumps(inputs, ensure_ascii=False, sort_keys=True))
        parts.append(contract)
        messages = ({"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)})
        return Request(state.name, state.kind, messages, schema)


def build_request(machine: Machine, state: State, env: Env) -> Request:
    """One request without a cache (tools and tests)."""
    return Prompts(machine).request(state, env)
