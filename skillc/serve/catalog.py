"""Machines as MCP tools: the name, description and JSON Schemas a client lists (`tools/list`).

Each checked machine is one tool: its name is the machine's, its description the machine's `doc`, its input
schema the JSON Schema of its inputs (`skillc.ir.types.json_schema`; an input with a default or of an optional
type is not required, a default is shown), and every tool shares one output schema: the structured result of a
call (`RESULT_SCHEMA`). A machine that names the place `workdir` also takes an optional `workdir` argument: a
folder under the server's root to run in instead of a fresh one (so a second call can work on what the first
left). The server's own tool, `skillc_resume`, continues a run that waits for its user.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import attrs

from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.ir import types as T
from skillc.ir.evaluate import EvalError, evaluate
from skillc.ir.machine import Machine
from skillc.runtime.jsonvalue import Object
from skillc.serve import codes

#: The server's own tool: a waiting run continued with the user's answer.
RESUME: Final = "skillc_resume"
#: The optional argument of a machine that names the place `workdir`.
WORKDIR_ARG: Final = "workdir"

_FILE: Final = {"type": "object", "properties": {"path": {"type": "string"}, "bytes": {"type": "integer"},
                                                 "sha256": {"type": "string"}},
                "required": ["path", "bytes", "sha256"]}

#: The structured result of every call: a finished run, or one that waits for its user (with a resume token).
RESULT_SCHEMA: Final[Object] = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["finished", "waiting"],
                   "description": "finished: the run reached a terminal; waiting: it asks the user (see question)"},
        "machine": {"type": "string"},
        "run_id": {"type": ["string", "null"], "description": "the run in the server's journal"},
        "outcome": {"type": "string", "enum": ["success", "partial", "failed"]},
        "terminal": {"type": "string"},
        "steps": {"type": "integer"},
        "evidence": {"type": "object", "description": "the terminal's `requires` values and predicate verdicts"},
        "error": {"type": ["string", "null"], "description": "why the run went to the fallback, if it did"},
        "files": {"type": "array", "items": _FILE,
                  "description": "files of the work folder the run wrote or changed, with their SHA-256"},
        "workdir": {"type": "string", "description": "the run's work folder (absolute)"},
        "trace": {"type": ["string", "null"], "description": "the run's JSON Lines trace (absolute)"},
        "question": {"type": "string"},
        "options": {"type": ["array", "null"], "items": {"type": "string"}},
        "resume_token": {"type": "string",
                         "description": "with status waiting: give it to skillc_resume with the answer (once)"},
    },
    "required": ["status", "machine", "workdir"],
}

RESUME_INPUT: Final[Object] = {
    "type": "object",
    "properties": {"token": {"type": "string", "description": "the resume_token of a call that waits"},
                   "answer": {"type": "string", "description": "the user's answer (one of the options, if any)"}},
    "required": ["token", "answer"],
    "additionalProperties": False,
}
RESUME_DESCRIPTION: Final = ("Continue a run that waits for its user: give the resume_token a call returned with "
                             "status `waiting` and the user's answer. Each token answers once.")


@attrs.frozen
class Entry:
    """One served machine: the tool a client sees and what runs it."""

    name: str
    machine: Machine
    text: str
    path: str
    description: str
    input_schema: Object
    #: The machine names the place `workdir`: its tool takes an optional `workdir` argument.
    takes_workdir: bool = False


def input_schema(machine: Machine) -> Object:
    """The JSON Schema of a machine's inputs, as the MCP tool's `inputSchema`."""
    properties: Object = {}
    required: list[str] = []
    for v in machine.variables.values():
        if not v.is_input:
            continue
        schema = dict(T.json_schema(v.type))
        schema["description"] = f"input `{v.name}`: {T.show(v.type)}"
        if v.init is not None:
            try:
                schema["default"] = evaluate(v.init, {})
            except EvalError:
                pass
        elif not isinstance(v.type, T.OptionalT):
            required.append(v.name)
        properties[v.name] = schema
    if uses_workdir(machine):
        properties[WORKDIR_ARG] = {"type": "string", "description": "run in this folder (under the server's root) "
                                                                    "instead of a fresh one"}
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def uses_workdir(machine: Machine) -> bool:
    """Whether the machine names the place `workdir` (it is then among its variables, kind `place`)."""
    v = machine.variables.get("workdir")
    return v is not None and v.kind == "place"


def describe(machine: Machine) -> str:
    """The tool's description: the machine's `doc`, or a line naming it."""
    doc = (machine.doc or "").strip()
    return doc or f"Run the checked skillc machine `{machine.name}`."


def entries(machines: Sequence[tuple[str, Machine, str]]) -> tuple[list[Entry], list[Diagnostic]]:
    """The served tools of `(path, machine, text)` triples; SKM891 for two machines of one name (or `skillc_resume`)."""
    found: list[Entry] = []
    problems: list[Diagnostic] = []
    seen: dict[str, str] = {}
    for path, machine, text in machines:
        name = machine.name
        if name == RESUME:
            problems.append(make(codes.MCP_TOOL_NAME_CLASH, f"{path}: the machine `{name}` would take the name of the "
                                 "server's own tool"))
            continue
        if name in seen:
            problems.append(make(codes.MCP_TOOL_NAME_CLASH, f"{path}: the machine `{name}` is served already, from "
                                 f"{seen[name]}: two tools cannot share a name"))
            continue
        seen[name] = path
        found.append(Entry(name, machine, text, path, describe(machine), input_schema(machine),
                           uses_workdir(machine)))
    return found, problems
