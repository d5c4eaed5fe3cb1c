"""Run-time values: validation against IR types, JSON merge patches, output contracts.

Values are JSON data: `str`, `int`, `float`, `bool`, `None`, lists and dicts;
enum labels are strings and records are dicts. Records and maps are written as
JSON merge patches (RFC 7386: a `null` deletes a key), validated as a whole
after merging; a patch that breaks the type is rejected and the state retried.
"""

from __future__ import annotations

import copy
import functools
import json
import math

import jsonschema

from skillc.ir import types as T
from skillc.ir.machine import Machine, State
from skillc.runtime.jsonvalue import Env, Value


def check_value(value: Value, t: T.Type, where: str = "value") -> list[str]:
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
        # JSON Schema's "integer" (the contract sent to models) is any number with a zero fraction: 3.0 too.
        ok = not isinstance(value, bool) and (isinstance(value, int)
                                              or (isinstance(value, float) and value.is_integer()))
        return [] if ok else [f"{where} must be an integer"]
    if isinstance(t, T.FloatT):
        # An int past the range of a float (which coerce could not convert) is no float either.
        ok = not isinstance(value, bool) and ((isinstance(value, float) and math.isfinite(value))
                                              or (isinstance(value, int) and abs(value) < 2**1023))
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


def merge_patch(target: Value, patch: Value) -> Value:
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


def coerce(value: Value, t: T.Type) -> Value:
    """Numbers as their type, also inside lists, maps and records (a float given `3` stores `3.0`, an int
    given `3.0` stores `3`); anything else unchanged."""
    base = T.strip_optional(t)
    if isinstance(base, T.FloatT) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(base, T.IntT) and isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(base, T.ListT) and isinstance(value, list):
        return [coerce(v, base.item) for v in value]
    if isinstance(base, T.MapT) and isinstance(value, dict):
        return {k: coerce(v, base.value) for k, v in value.items()}
    if isinstance(base, T.RecordT) and isinstance(value, dict):
        return {k: coerce(v, ft) if (ft := base.field(k)) is not None else v for k, v in value.items()}
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
    """The schema of a merge patch of `t`: nested records and maps are patches too (RFC 7386 merges them)."""
    if isinstance(t, T.RecordT):
        return {
            "type": "object",
            "properties": {name: {"anyOf": [_member_schema(ft), {"type": "null"}]} for name, ft in t.fields},
            "additionalProperties": False,
        }
    if isinstance(t, T.MapT):
        return {"type": "object", "additionalProperties": {"anyOf": [_member_schema(t.value), {"type": "null"}]}}
    return T.json_schema(t)


def _member_schema(t: T.Type) -> dict:
    """A field or map value inside a patch: a patch itself when structured, else its type's schema."""
    return _patch_schema(T.strip_optional(t)) if is_structured(t) else T.json_schema(t)


@functools.lru_cache(maxsize=512)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    """A JSON Schema (2020-12) validator, built once per distinct schema."""
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def schema_errors(value: Value, schema: dict) -> list[jsonschema.ValidationError]:
    """Where `value` breaks `schema`, as judged by `jsonschema` (the same schema a model is sent)."""
    return sorted(_validator(json.dumps(schema, sort_keys=True)).iter_errors(value), key=lambda e: list(e.path))


def _finite(value: Value, where: str) -> list[str]:
    """NaN and infinities are not JSON (RFC 8259), though Python's parser lets them through."""
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where} is {value}, which is not a JSON number"]
    if isinstance(value, list):
        return [e for i, v in enumerate(value) for e in _finite(v, f"{where}[{i}]")]
    if isinstance(value, dict):
        return [e for k, v in value.items() for e in _finite(v, f"{where}[{k!r}]")]
    return []


def apply_outputs(machine: Machine, state: State, env: Env, output: Value) -> tuple[dict, list[str]]:
    """The writes of a model/judge output applied to a copy of `env`, or the reasons the output is invalid.

    Validity is decided by `jsonschema` against `output_schema(machine, state)`, the exact schema a model is
    sent, so what is asked for and what is accepted cannot drift; merged records and maps are then validated
    against their type's schema. Nothing is applied unless every write is valid (state is never half-written).
    """
    if not isinstance(output, dict):
        return env, ["the output must be a JSON object with the keys " + ", ".join(state.writes)]
    errors = [f"unexpected key `{k}`" for k in output if k not in state.writes]
    errors += [f"missing key `{w}`" for w in state.writes if w not in output]
    if errors:
        return env, errors
    errors = _finite(output, "output")
    problems = schema_errors(output, output_schema(machine, state))
    if problems or errors:
        return env, errors + _nice(machine, problems, output)
    new = dict(env)
    for name in state.writes:
        t = machine.variables[name].type
        value = output[name]
        if is_structured(t) and isinstance(value, dict):
            value = merge_patch(env.get(name), value)
            errors += _nice_value(name, t, schema_errors(value, T.json_schema(t)))
        new[name] = coerce(value, t)
    return (env, errors) if errors else (new, [])


def _nice(machine: Machine, problems: list[jsonschema.ValidationError], output: dict) -> list[str]:
    """Schema errors of a whole output, each in the words of the variable it concerns."""
    out: list[str] = []
    for e in map(_deepest, problems):
        path = list(e.absolute_path)
        if not path or path[0] not in machine.variables:
            out.append(f"output: {e.message}")
            continue
        t = machine.variables[path[0]].type
        out += _words(path[0], t, path[1:], e, patch=is_structured(t))
    return list(dict.fromkeys(out))


def _nice_value(name: str, t: T.Type, problems: list[jsonschema.ValidationError]) -> list[str]:
    """Schema errors of one merged value, in the words of that variable."""
    return list(dict.fromkeys(m for e in map(_deepest, problems) for m in _words(name, t, list(e.absolute_path), e)))


def _deepest(e: jsonschema.ValidationError) -> jsonschema.ValidationError:
    """Inside `anyOf` (optional values, patches) the alternative that got furthest explains the failure."""
    if e.validator in ("anyOf", "oneOf") and e.context:
        leaves = [_deepest(c) for c in e.context]
        return max(leaves, key=lambda x: (len(x.absolute_path), x.validator_value != "null"))
    return e


def _words(name: str, t: T.Type, path: list, e: jsonschema.ValidationError, patch: bool = False) -> list[str]:
    """One schema error in the type checker's words (`x.f must be an integer`), jsonschema's as a fallback."""
    where = _where(name, path, t)
    sub = _type_at(t, path, patch=patch)
    words = check_value(e.instance, sub, where) if sub is not None else []
    # Every problem of the value at once (each missing field, not the first): a model told one at a time spends
    # its retries finding the next.
    return words or [f"{where}: {e.message}"]


def _type_at(t: T.Type, path: list, patch: bool = False) -> T.Type | None:
    """The IR type at a JSON path inside a value of type `t` (None when the path leaves the type)."""
    for part in path:
        base = T.strip_optional(t)
        if isinstance(base, T.ListT) and isinstance(part, int):
            t = base.item
        elif isinstance(base, T.MapT) and isinstance(part, str):
            t = T.OptionalT(base.value) if patch else base.value
        elif isinstance(base, T.RecordT) and isinstance(part, str) and (ft := base.field(part)) is not None:
            t = T.OptionalT(ft) if patch else ft
        else:
            return None
        patch = False
    return t


def _where(name: str, path: list, t: T.Type) -> str:
    """A path as check_value writes it: `x.field`, `x['key']`, `x[0]`."""
    where = name
    for part in path:
        base = T.strip_optional(t)
        if isinstance(base, T.RecordT) and isinstance(part, str):
            where += f".{part}"
            t = base.field(part) or T.NoneT()
        elif isinstance(base, T.ListT):
            where += f"[{part}]"
            t = base.item
        else:
            where += f"[{part!r}]"
            t = base.value if isinstance(base, T.MapT) else T.NoneT()
    return where
