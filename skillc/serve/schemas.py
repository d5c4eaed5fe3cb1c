"""A machine's MCP tool against the schemas its server lists: what does not fit, and the results of a call.

Shared by `skillc check` (against the live server or the lock file) and the runtime (against the server it
starts), so the two judge a tool the same way. No MCP SDK here: schemas and results are plain JSON.

The tool's declaration (`tool search(query: str, limit: int?) -> (text: str) from mcp "docs"`) must fit the
server's `inputSchema`: every parameter is a property the schema has (unless it admits any), every property the
schema requires is a parameter that is not optional, and each parameter's type can be the property's JSON type
(an enum's labels among the property's `enum`, when it has one). Results: with an `outputSchema` each declared
result is one of its properties of a fitting type; without one, the tool's text is the result (a single `str`
result, or one named `text`), or, when the text is a JSON object, its members.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from skillc.ir import types as T
from skillc.ir.machine import Tool
from skillc.runtime.jsonvalue import Object, Value

_JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}


def _json_types(schema: Mapping[str, Value]) -> set[str] | None:
    """The JSON types a property schema allows (None: any)."""
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    for combinator in ("anyOf", "oneOf"):
        options = schema.get(combinator)
        if isinstance(options, list):
            for option in options:
                inner = _json_types(option) if isinstance(option, Mapping) else None
                if inner is None:
                    return None
                found |= inner
    if "enum" in schema and not found:
        values = schema["enum"] if isinstance(schema["enum"], list) else []
        found |= {"string" if isinstance(v, str) else "boolean" if isinstance(v, bool) else
                  "integer" if isinstance(v, int) else "number" if isinstance(v, float) else "null" for v in values}
    if "const" in schema and not found:
        return None
    return found & _JSON_TYPES or None


def _fits(t: T.Type, schema: Mapping[str, Value]) -> str | None:
    """Why a value of `t` may not validate against a property schema (None: it fits, as far as can be told)."""
    allowed = _json_types(schema)
    inner = T.strip_optional(t)
    if allowed is None:
        return None
    wanted = {T.StrT: {"string"}, T.IntT: {"integer", "number"}, T.FloatT: {"number"}, T.BoolT: {"boolean"},
              T.EnumT: {"string"}, T.ListT: {"array"}, T.MapT: {"object"}, T.RecordT: {"object"}}
    for cls, kinds in wanted.items():
        if isinstance(inner, cls):
            if not kinds & allowed:
                return f"{T.show(t)} is not {' or '.join(sorted(allowed))}"
            if isinstance(inner, T.EnumT) and isinstance(schema.get("enum"), list):
                extra = [label for label in inner.labels if label not in schema["enum"]]
                if extra:
                    return f"the labels {', '.join(extra)} are not among {schema['enum']}"
            if isinstance(inner, T.FloatT) and allowed == {"integer"}:
                return "a float is not an integer"
            return None
    return None


def input_problems(tool: Tool, schema: Mapping[str, Value]) -> list[str]:
    """What keeps the declared parameters of `tool` from fitting the server's `inputSchema`."""
    problems: list[str] = []
    properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    assert isinstance(properties, Mapping)
    open_schema = schema.get("additionalProperties", True) is not False and not properties
    required = [r for r in schema.get("required", []) if isinstance(r, str)] \
        if isinstance(schema.get("required"), list) else []
    declared = dict(tool.params)
    for name, t in tool.params:
        prop = properties.get(name)
        if prop is None:
            if not open_schema:
                known = ", ".join(f"`{p}`" for p in properties) or "none"
                problems.append(f"parameter `{name}` is not in the server's input schema (its properties: {known})")
            continue
        if isinstance(prop, Mapping) and (why := _fits(t, prop)) is not None:
            problems.append(f"parameter `{name}`: {why} (the schema's `{name}`)")
    for name in required:
        if name not in declared:
            problems.append(f"the server requires `{name}`, which the declaration does not have")
        elif isinstance(declared[name], T.OptionalT):
            problems.append(f"the server requires `{name}`, which the declaration makes optional "
                            f"({T.show(declared[name])})")
    return problems


def output_problems(tool: Tool, schema: Mapping[str, Value] | None) -> list[str]:
    """What keeps the declared results of `tool` from being read from the server's results."""
    if schema is None:
        names = [n for n, _ in tool.results]
        if len(tool.results) == 1 and isinstance(T.strip_optional(tool.results[0][1]), T.StrT):
            return []
        if "text" in names and not isinstance(T.strip_optional(dict(tool.results)["text"]), T.StrT):
            return ["result `text` (the tool's text) must be a str"]
        if len(tool.results) > 1:
            return []  # read from the text when it is a JSON object; a call that does not give them fails
        return [] if not tool.results else [f"result `{names[0]}` must be a str: the server declares no output "
                                            "schema, so the tool's text is its result"]
    properties = schema.get("properties") if isinstance(schema.get("properties"), Mapping) else {}
    assert isinstance(properties, Mapping)
    problems = []
    for name, t in tool.results:
        prop = properties.get(name)
        if prop is None:
            if name == "text" and isinstance(T.strip_optional(t), T.StrT):
                continue
            problems.append(f"result `{name}` is not in the server's output schema (its properties: "
                            f"{', '.join(f'`{p}`' for p in properties) or 'none'})")
        elif isinstance(prop, Mapping) and (why := _fits(t, prop)) is not None:
            problems.append(f"result `{name}`: {why}")
    return problems


def results(tool: Tool, structured: Value, texts: list[str]) -> Object:
    """The declared results of a call, from its structured content (an object) or its text content."""
    text = "\n".join(texts)
    names = [n for n, _ in tool.results]
    out: Object = {}
    if isinstance(structured, Mapping):
        out.update((n, structured[n]) for n in names if n in structured)
        if "text" in names and "text" not in out:
            out["text"] = text
        if len(names) == 1 and names[0] not in out and "result" in structured:
            out[names[0]] = structured["result"]  # a server that wraps a single value as {"result": …}
        return out
    if len(names) == 1 and isinstance(T.strip_optional(tool.results[0][1]), T.StrT):
        return {names[0]: text}
    if "text" in names:
        out["text"] = text
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if isinstance(value, Mapping):
        out.update((n, value[n]) for n in names if n in value and n not in out)
    return out
