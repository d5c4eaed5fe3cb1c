"""Run-time values: validation against IR types, JSON merge patches, output contracts.

Values are JSON data: `str`, `int`, `float`, `bool`, `None`, lists and dicts;
enum labels are strings and records are dicts. Records and maps are written as
JSON merge patches (RFC 7386: a `null` deletes a key), validated as a whole
after merging; a patch that breaks the type is rejected and the state retried.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from skillc.ir import types as T
from skillc.ir.machine import Machine, State


def check_value(value: Any, t: T.Type, where: str = "value") -> list[str]:
    """Type errors of a value (empty when it fits), each naming the path to the bad part."""
    if isinstance(t, T.OptionalT):
        return [] if value is None else check_value(value, t.inner, where)
    if value is None:
        return [f"{where} is null, but it must be {T.show(t)}"]
    if isinstance(t, T.StrT):
        return [] if isinstance(value, str) else [f"{where} must be a string"]
    if isinstance(t, T.BoolT):
        return [] if isinstance(value, bool) else [f"{where} must be true or false"]
    if isinstance(t, T.IntT):
        ok = isinstance(value, int) and not isinstance(value, bool)
        return [] if ok else [f"{where} must be an integer"]
    if isinstance(t, T.FloatT):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        return [] if ok else [f"{where} must be a number"]
    if isinstance(t, T.EnumT):
        if value in t.labels:
            return []
        return [f"{where} must be one of {', '.join(t.labels)} (got {value!r})"]
    if isinstance(t, T.ListT):
        if not isinstance(value, list):
            return [f"{where} must be a list"]
        return [e for i, item in enumerate(value) for e in check_value(item, t.item, f"{where}[{i}]")]
    if isinstance(t, T.MapT):
        if not isinstance(value, dict):
            return [f"{where} must be an object"]
        return [e for k, v in value.items() for e in check_value(v, t.value, f"{where}[{k!r}]")]
    if isinstance(t, T.RecordT):
        if not isinstance(value, dict):
            return [f"{where} must be an object with fields {', '.join(f for f, _ in t.fields)}"]
        errors = [f"{where} has no field `{k}`" for k in value if t.field(k) is None]
        for name, ft in t.fields:
            if name not in value:
                if not isinstance(ft, T.OptionalT):
                    errors.append(f"{where} is missing field `{name}`")
                continue
            errors += check_value(value[name], ft, f"{where}.{name}")
        return errors
    return []


def is_structured(t: T.Type) -> bool:
    """Records and maps are written by merge patch."""
    return isinstance(T.strip_optional(t), (T.RecordT, T.MapT))


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, `null` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def coerce(value: Any, t: T.Type) -> Any:
    """Numbers as their type (a float variable given `3` stores `3.0`)."""
    base = T.strip_optional(t)
    if isinstance(base, T.FloatT) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def output_schema(machine: Machine, state: State) -> dict:
    """The JSON Schema of a model or judge state's output: one property per written variable.

    Records and maps are described as merge patches: any subset of their fields,
    with `null` allowed to delete a key.
    """
    props = {}
    for name in state.writes:
        t = machine.variables[name].type
        schema = T.json_schema(t)
        if is_structured(t):
            schema = _patch_schema(T.strip_optional(t))
        props[name] = schema
    return {"type": "object", "properties": props, "required": list(state.writes), "additionalProperties": False}


def _patch_schema(t: T.Type) -> dict:
    if isinstance(t, T.RecordT):
        return {
            "type": "object",
            "properties": {name: {"anyOf": [T.json_schema(ft), {"type": "null"}]} for name, ft in t.fields},
            "additionalProperties": False,
        }
    if isinstance(t, T.MapT):
        return {"type": "object", "additionalProperties": {"anyOf": [T.json_schema(t.value), {"type": "null"}]}}
    return T.json_schema(t)


def apply_outputs(machine: Machine, state: State, env: dict[str, Any], output: Any) -> tuple[dict, list[str]]:
    """The writes of a model/judge output applied to a copy of `env`, or the reasons the output is invalid.

    Nothing is applied unless every write is valid (state is never half-written).
    """
    if not isinstance(output, dict):
        return env, ["the output must be a JSON object with the keys " + ", ".join(state.writes)]
    errors = [f"unexpected key `{k}`" for k in output if k not in state.writes]
    errors += [f"missing key `{w}`" for w in state.writes if w not in output]
    if errors:
        return env, errors
    new = dict(env)
    for name in state.writes:
        t = machine.variables[name].type
        value = output[name]
        if is_structured(t) and isinstance(value, dict):
            value = merge_patch(env.get(name), value)
        errors += check_value(value, t, name)
        new[name] = coerce(value, t)
    return (env, errors) if errors else (new, [])
