"""The machine as JSON: the published JSON Schema of the IR, and conversions both ways.

Models draft machines as JSON that conforms to `MACHINE_SCHEMA` (every backend
can constrain output to a JSON Schema). Types, guards and assignments are
`.skm` source strings, so the schema stays small and the project parser remains
the one judge of syntax. `to_json` turns an AST module (the structural draft)
into the same shape; `to_skm` prints a JSON draft as `.skm` text, or explains
why it cannot.
"""

from __future__ import annotations

import json
import re
from typing import TypeVar

from skillc.ir.toolkit import KIT_NAMES
from skillc.runtime.jsonvalue import Object, Value
from skillc.syntax import nodes as n
from skillc.syntax.printer import expr, type_text

T = TypeVar("T")

_NAME = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"}
_LINES = {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1, "maxItems": 2,
          "description": "the 1-based line range of the skill document this came from"}
_TYPED = {"type": "object", "additionalProperties": False, "required": ["name", "type"],
          "properties": {"name": _NAME, "type": {"type": "string", "description": ".skm type, e.g. str, int, "
                                                                                   "enum { yes, no }, list[str]"}}}

MACHINE_SCHEMA: Object = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://skillc.dev/schema/machine.json",
    "title": "skillc machine",
    "description": "An extended finite-state machine compiled from an agent skill (the .skm IR).",
    "type": "object",
    "additionalProperties": False,
    "required": ["name", "inputs", "vars", "start", "states", "terminals", "rules"],
    "properties": {
        "name": _NAME,
        "doc": {"type": "string"},
        "tools": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["name", "params", "results"],
            "properties": {"name": _NAME, "params": {"type": "array", "items": _TYPED},
                           "results": {"type": "array", "items": _TYPED}}}},
        "kit": {"type": "array", "items": {"enum": list(KIT_NAMES)}, "uniqueItems": True,
                "description": "tools taken from the agent tool kit (`use tools std(read, bash)`); "
                               "declare them here instead of in `tools`"},
        "allow": {"type": "array", "items": {"type": "string"},
                  "description": "the capability set in allowed-tools spelling, e.g. `Read`, `Bash(git diff:*)`"},
        "inputs": {"type": "array", "items": _TYPED},
        "vars": {"type": "array", "items": _TYPED},
        "counters": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["name", "max"],
            "properties": {"name": _NAME, "max": {"type": "integer", "minimum": 1}}}},
        "start": _NAME,
        "states": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["kind", "name", "writes", "edges"],
            "properties": {
                "kind": {"enum": ["model", "judge", "tool"]},
                "name": _NAME,
                "from": _LINES,
                "doc": {"type": "string"},
                "reads": {"type": "array", "items": _NAME},
                "writes": {"type": "array", "items": {
                    "type": "object", "additionalProperties": False, "required": ["var"],
                    "properties": {"var": _NAME, "result": _NAME}}},
                "prompt": {"type": "string", "description": "local instructions (model and judge states)"},
                "call": {"type": "object", "additionalProperties": False, "required": ["tool", "args"],
                         "properties": {"tool": _NAME, "args": {"type": "array", "items": {
                             "type": "object", "additionalProperties": False, "required": ["name", "value"],
                             "properties": {"name": _NAME, "value": {"type": "string",
                                                                     "description": ".skm expression"}}}}}},
                "edges": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "additionalProperties": False, "required": ["to"],
                    "properties": {
                        "when": {"type": "string", "description": ".skm guard; omit for the default edge"},
                        "to": _NAME,
                        "assign": {"type": "array", "items": {"type": "string", "pattern": r"^\s*\w+\s*(\+=|-=|=)"},
                                   "description": "e.g. `repairs += 1`"}}}},
            }}},
        "terminals": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "required": ["name", "outcome"],
            "properties": {"name": _NAME, "outcome": {"enum": ["success", "partial", "failed"]},
                           "doc": {"type": "string"}, "from": _LINES,
                           "requires": {"type": "array", "items": {
                               "type": "string", "description": "evidence: a variable, or a Boolean .skm predicate "
                               "such as `status == 0` or `exists(\"report.md\")`"}}}}},
        "rules": {"type": "array", "items": {
            "type": "object", "additionalProperties": False, "required": ["kind", "ops", "quote"],
            "properties": {"kind": {"enum": ["required", "order", "forbid", "ends", "reads"]},
                           "ops": {"type": "array", "items": _NAME, "minItems": 1, "maxItems": 2,
                                   "description": "order: [A, B] for A before B; reads: [B, A] for B reads from A"},
                           "outcome": {"enum": ["success", "partial", "failed"],
                                       "description": "ends only: every run through the operation ends so"},
                           "quote": {"type": "string", "description": "the sentence of the skill, verbatim"},
                           "from": _LINES}}},
    },
}

RULES_SCHEMA: Object = {
    "type": "object", "additionalProperties": False, "required": ["rules"],
    "properties": {"rules": MACHINE_SCHEMA["properties"]["rules"]},
}


class DraftError(ValueError):
    """A JSON draft that does not describe a machine; the message says what is wrong, for the model to fix."""


def _lines(p: n.Provenance | None) -> list[int] | None:
    if p is None:
        return None
    return [p.start] if p.end is None else [p.start, p.end]


def to_json(module: n.Module) -> Object:
    """The JSON form of the machine in an AST module."""
    m = next(x for x in module.items if isinstance(x, n.Machine))
    out: Object = {"name": m.name, "tools": [], "inputs": [], "vars": [], "counters": [], "states": [],
                           "terminals": [], "rules": []}
    for item in m.items:
        if isinstance(item, n.Doc):
            out["doc"] = item.text
        elif isinstance(item, n.ToolDecl):
            out["tools"].append({"name": item.name,
                                 "params": [{"name": p.name, "type": type_text(p.type)} for p in item.params],
                                 "results": [{"name": p.name, "type": type_text(p.type)} for p in item.results]})
        elif isinstance(item, n.UseTools):
            out.setdefault("kit", []).extend(t for t in (item.tools or KIT_NAMES) if t not in out.get("kit", []))
        elif isinstance(item, n.Allow):
            out.setdefault("allow", []).extend(item.entries)
        elif isinstance(item, n.VarDecl):
            out["inputs" if item.kind == "input" else "vars"].append({"name": item.name, "type": type_text(item.type)})
        elif isinstance(item, n.CounterDecl):
            out["counters"].append({"name": item.name, "max": item.max})
        elif isinstance(item, n.Start):
            out["start"] = item.target
        elif isinstance(item, n.State):
            out["states"].append(_state_json(item))
        elif isinstance(item, n.Terminal):
            t: Object = {"name": item.name, "outcome": item.outcome}
            for x in item.items:
                if isinstance(x, n.Doc):
                    t["doc"] = x.text
                elif isinstance(x, n.From):
                    t["from"] = _lines(x.where)
                elif isinstance(x, n.Requires):
                    t["requires"] = [expr(e) for e in x.evidence]
            out["terminals"].append(t)
        elif isinstance(item, n.Rule):
            r: Object = {"kind": item.kind, "ops": list(item.ops), "quote": item.quote}
            if item.outcome is not None:
                r["outcome"] = item.outcome
            if item.where is not None:
                r["from"] = _lines(item.where)
            out["rules"].append(r)
    return out


def _state_json(s: n.State) -> Object:
    out: Object = {"kind": s.kind, "name": s.name, "writes": [], "edges": []}
    for x in s.items:
        if isinstance(x, n.From):
            out["from"] = _lines(x.where)
        elif isinstance(x, n.Doc):
            out["doc"] = x.text
        elif isinstance(x, n.Reads):
            out["reads"] = list(x.names)
        elif isinstance(x, n.Writes):
            out["writes"] = [{"var": w.var, **({"result": w.result} if w.result else {})} for w in x.items]
        elif isinstance(x, n.Prompt):
            out["prompt"] = x.text
        elif isinstance(x, n.Call):
            out["call"] = {"tool": x.tool, "args": [{"name": a.name, "value": expr(a.value)} for a in x.args]}
        elif isinstance(x, n.Edge):
            e: Object = {"to": x.target}
            if x.guard is not None:
                e["when"] = expr(x.guard)
            if x.assigns:
                e["assign"] = [f"{a.target} {a.op} {expr(a.value)}" for a in x.assigns]
            out["edges"].append(e)
    return out


def _q(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _need(obj: Value, key: str, kind: type[T], where: str) -> T:
    if not isinstance(obj, dict) or key not in obj:
        raise DraftError(f"{where} has no `{key}`")
    value = obj[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise DraftError(f"`{key}` of {where} must be {kind.__name__}, not {type(value).__name__}")
    return value


def _ident(value: object, where: str) -> str:
    if not isinstance(value, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", value):
        raise DraftError(f"{where} must be a name (letters, digits, `_`), not {value!r}")
    return value


def _from(obj: Object, source: str, indent: str) -> list[str]:
    lines = obj.get("from")
    if not lines:
        return []
    if not isinstance(lines, list) or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in lines):
        raise DraftError(f"`from` must be a list of one or two line numbers, not {lines!r}")
    span = str(lines[0]) if len(lines) == 1 or lines[1] == lines[0] else f"{lines[0]}-{lines[1]}"
    return [f"{indent}from {_q(source)}:{span}"]


def to_skm(draft: Value, source: str) -> str:
    """`.skm` text for a JSON draft; DraftError says what is missing or malformed."""
    if not isinstance(draft, dict):
        raise DraftError(f"the draft must be a JSON object, not {type(draft).__name__}")
    name = _ident(_need(draft, "name", str, "the machine"), "the machine's `name`")
    out = [f"machine {name} {{"]
    if isinstance(draft.get("doc"), str) and draft["doc"].strip():
        out.append(f"  doc {_q(draft['doc'])}")
    out.append(f"  source {_q(source)}")
    for t in draft.get("tools") or []:
        tname = _ident(_need(t, "name", str, "a tool"), "a tool name")
        params = ", ".join(f"{_ident(p['name'], 'a parameter')}: {p['type']}" for p in _need(t, "params", list, tname))
        results = ", ".join(f"{_ident(p['name'], 'a result')}: {p['type']}" for p in _need(t, "results", list, tname))
        out.append(f"  tool {tname}({params})" + (f" -> ({results})" if results else ""))
    kit = draft.get("kit") or []
    if kit:
        if not isinstance(kit, list) or not all(isinstance(t, str) for t in kit):
            raise DraftError("`kit` must be a list of tool names of the kit")
        names = [_ident(t, "a kit tool") for t in kit]
        out.append("  use tools std" + ("" if set(names) == set(KIT_NAMES) else f"({', '.join(names)})"))
    allowed = draft.get("allow") or []
    if allowed:
        if not isinstance(allowed, list) or not all(isinstance(a, str) for a in allowed):
            raise DraftError("`allow` must be a list of strings")
        out.append("  allow " + ", ".join(_q(a) for a in allowed))
    for key, word in (("inputs", "input"), ("vars", "var")):
        for v in _need(draft, key, list, "the machine"):
            out.append(f"  {word} {_ident(_need(v, 'name', str, key), f'a name in `{key}`')}: "
                       f"{_need(v, 'type', str, v.get('name', key))}")
    for c in draft.get("counters") or []:
        out.append(f"  counter {_ident(_need(c, 'name', str, 'a counter'), 'a counter name')} "
                   f"max {_need(c, 'max', int, c.get('name', 'a counter'))}")
    out.append(f"  start {_ident(_need(draft, 'start', str, 'the machine'), '`start`')}")
    for s in _need(draft, "states", list, "the machine"):
        out += _state_skm(s, source)
    for t in _need(draft, "terminals", list, "the machine"):
        tname = _ident(_need(t, "name", str, "a terminal"), "a terminal name")
        out.append(f"  terminal {tname}: {_need(t, 'outcome', str, tname)} {{")
        if isinstance(t.get("doc"), str) and t["doc"].strip():
            out.append(f"    doc {_q(t['doc'])}")
        out += _from(t, source, "    ")
        if t.get("requires"):
            evidence = t["requires"]
            if not isinstance(evidence, list) or not all(isinstance(r, str) and r.strip() for r in evidence):
                raise DraftError("`requires` must be a list of variables or predicates, as .skm text")
            out.append("    requires " + ", ".join(evidence))
        out.append("  }")
    out.append("  fallback")
    for r in _need(draft, "rules", list, "the machine"):
        out.append("  " + rule_skm(r, source))
    out.append("}")
    return "\n".join(out) + "\n"


def rule_skm(r: Value, source: str) -> str:
    """One rule as a `.skm` line."""
    kind = _need(r, "kind", str, "a rule")
    ops = [_ident(o, "a rule operation") for o in _need(r, "ops", list, "a rule")]
    quote = _need(r, "quote", str, "a rule")
    two = {"order": " before ", "reads": " from "}
    if kind in two:
        if len(ops) != 2:
            raise DraftError(f"an `{kind}` rule names exactly two operations")
        head = f"rule {kind} {ops[0]}{two[kind]}{ops[1]}"
    elif kind in ("required", "forbid", "ends"):
        if len(ops) != 1:
            raise DraftError(f"a `{kind}` rule names exactly one operation")
        head = f"rule {kind} {ops[0]}"
        if kind == "ends":
            outcome = r.get("outcome") if isinstance(r, dict) else None
            if outcome not in ("success", "partial", "failed"):
                raise DraftError("an `ends` rule needs `outcome`: success, partial or failed")
            head += f" in {outcome}"
    else:
        raise DraftError(f"unknown rule kind {kind!r} (required, order, forbid, ends or reads)")
    tail = _from(r, source, "")
    return f"{head} {_q(quote)}" + (f" {tail[0]}" if tail else "")


def _state_skm(s: Value, source: str) -> list[str]:
    kind = _need(s, "kind", str, "a state")
    if kind not in ("model", "judge", "tool"):
        raise DraftError(f"state kind must be model, judge or tool, not {kind!r}")
    name = _ident(_need(s, "name", str, "a state"), "a state name")
    out = [f"  {kind} {name} {{"]
    out += _from(s, source, "    ")
    if isinstance(s.get("doc"), str) and s["doc"].strip():
        out.append(f"    doc {_q(s['doc'])}")
    if s.get("reads"):
        out.append("    reads " + ", ".join(_ident(r, f"a read of `{name}`") for r in s["reads"]))
    if s.get("call"):
        call = s["call"]
        args = ", ".join(f"{_ident(a['name'], 'an argument')}: {a['value']}" for a in _need(call, "args", list, name))
        out.append(f"    call {_ident(_need(call, 'tool', str, name), 'a tool name')}({args})")
    writes = _need(s, "writes", list, f"state `{name}`")
    if writes:
        items = []
        for w in writes:
            var = _ident(_need(w, "var", str, f"a write of `{name}`"), "a written variable")
            items.append(var + (f" = {_ident(w['result'], 'a tool result')}" if w.get("result") else ""))
        out.append("    writes " + ", ".join(items))
    if isinstance(s.get("prompt"), str) and s["prompt"].strip():
        out.append(f"    prompt {_q(s['prompt'])}")
    for e in _need(s, "edges", list, f"state `{name}`"):
        target = _ident(_need(e, "to", str, f"an edge of `{name}`"), "an edge target")
        guard = e.get("when")
        assigns = e.get("assign") or []
        line = (f"when {guard} " if isinstance(guard, str) and guard.strip() else "") + f"-> {target}"
        if assigns:
            line += " { " + ", ".join(str(a) for a in assigns) + " }"
        out.append(f"    {line}")
    out.append("  }")
    return out
