"""`skillc export langgraph`: a checked machine as a Python module that builds a LangGraph `StateGraph`.

The module is plain LangGraph: a `State` TypedDict with one channel per variable of the machine (inputs,
variables, counters), one node per state, `START -> start`, after each state a conditional edge whose path map
lists the state's edge targets in order (and the fallback, where a failed operation goes), and an edge to `END`
after each terminal. Every node function hands its state to skillc's runtime (`skillc.export.runtime.Steps`):
`Interpreter.step` does the operation and picks the first edge whose guard holds, with its assignments and
counters, so the graph takes the same path as `skillc run` with the same answers. The module keeps the machine's
`.skm` text (`MACHINE`: imports of project files inlined, see `source.py`), which the steps run and from which
`skillc import langgraph MODULE:builder` reads the machine back (`readback.py`). Each node's metadata names its
state and kind; each node's docstring shows what the state reads, writes and where its edges lead.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Iterable
from pathlib import Path

from skillc.diagnostics.diagnostic import Diagnostic, make
from skillc.diagnostics.files import FileProblem, read_text
from skillc.export import codes
from skillc.export.compare import differences
from skillc.export.source import standalone
from skillc.ir import types as T
from skillc.ir.loader import load
from skillc.ir.machine import FALLBACK, Machine, State
from skillc.ir.printexpr import show_expr
from skillc.runtime.interpreter import machine_hash
from skillc.version import __version__

#: Bookkeeping channel names (`skillc.export.runtime`); a machine name must not take one.
RESERVED_PREFIX = "__skillc"


def python_type(t: T.Type) -> str:
    """A machine type as a Python annotation of the graph's state."""
    if isinstance(t, T.StrT):
        return "str"
    if isinstance(t, T.IntT):
        return "int"
    if isinstance(t, T.FloatT):
        return "float"
    if isinstance(t, T.BoolT):
        return "bool"
    if isinstance(t, T.EnumT):
        return "Literal[" + ", ".join(json.dumps(label) for label in t.labels) + "]"
    if isinstance(t, T.ListT):
        return f"list[{python_type(t.item)}]"
    if isinstance(t, T.MapT):
        return f"dict[str, {python_type(t.value)}]"
    if isinstance(t, T.OptionalT):
        return f"{python_type(t.inner)} | None"
    return "dict[str, Any]"  # a record: its fields as a JSON object


def function_name(prefix: str, state: str) -> str:
    """A Python function name for a state's node or router (`step_save__write` for `save.write`)."""
    name = f"{prefix}_{re.sub(r'[^0-9A-Za-z_]', '__', state)}"
    return name + "_" if keyword.iskeyword(name) else name


def reserved_names(machine: Machine) -> list[str]:
    """Names of the machine that collide with the graph's bookkeeping channels."""
    return sorted(n for n in [*machine.states, *machine.variables] if n.startswith(RESERVED_PREFIX))


def _literal(text: str) -> str:
    """A Python string literal for the machine's text: raw triple-quoted when that is exact, else repr."""
    if "'''" not in text and not text.endswith("\\") and "\r" not in text:
        return "r'''\n" + text + "'''[1:]"  # the newline after the opening quotes is dropped
    return repr(text)


def _docstring(lines: Iterable[str], indent: str = "    ") -> str:
    body = [line.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') for line in lines]
    if len(body) == 1:
        return f'{indent}"""{body[0]}"""\n'
    return f'{indent}"""' + body[0] + "\n" + "".join(f"{indent}{b}\n" if b else "\n" for b in body[1:]) + \
        f'{indent}"""\n'


def _edge_text(st: State) -> list[str]:
    out = []
    for e in st.edges:
        guard = f"when {show_expr(e.guard)} " if e.guard is not None else ""
        assigns = ", ".join(f"{a.var} {a.op} {show_expr(a.value)}" for a in e.assigns)
        out.append(f"{e.index + 1}. {guard}-> {e.target}" + (f" {{ {assigns} }}" if assigns else ""))
    return out


def targets(st: State) -> list[str]:
    """Where the conditional edge after a state may go: its edge targets in order, then the fallback."""
    return list(dict.fromkeys([*(e.target for e in st.edges), FALLBACK]))


def _state_doc(st: State) -> list[str]:
    head = f"{st.kind} `{st.name}`" + (f" ({st.provenance})" if st.provenance else "")
    what = []
    if st.reads:
        what.append("reads " + ", ".join(st.reads))
    if st.call is not None:
        what.append(f"calls {st.call.tool}(" + ", ".join(f"{a}: {show_expr(v)}" for a, v in st.call.args) + ")")
    if st.kind == "tool" and st.bindings:
        what.append("writes " + ", ".join(f"{v} = {r}" for v, r in st.bindings))
    elif st.writes:
        what.append("writes " + ", ".join(st.writes))
    lines = [head + (": " + "; ".join(what) if what else "") + "."]
    edges = _edge_text(st)
    if edges:
        lines += ["", "Edges, in order (the first whose guard holds is taken):", *(f"  {e}" for e in edges)]
    return lines


def _terminal_doc(st: State) -> list[str]:
    if st.kind == "fallback":
        return ["The fallback (failed): where a failed operation, an exhausted retry or the step limit ends a run."]
    evidence = [*st.requires, *(show_expr(p) for p in st.predicates)]
    return [f"terminal `{st.name}` ({st.outcome})" + (": requires " + ", ".join(evidence) if evidence else "") + "."]


def module_text(machine: Machine, text: str, name: str, machine_hash: str) -> str:
    """The Python module: `MACHINE`, `STEPS`, `State`, the node and router functions, `builder`, `graph`, `run`."""
    ops = [st for st in machine.states.values() if not st.is_terminal]
    ends = [st for st in machine.states.values() if st.is_terminal]
    out: list[str] = []
    out.append(f'''"""The skillc machine `{machine.name}` as a LangGraph `StateGraph` \
(written by `skillc export langgraph`).

Exported from {name} (machine hash {machine_hash}) by skillc {__version__}. One node per state; each node runs its
state with skillc's runtime (`skillc.export.runtime`): a model or judge state asks the executor, a tool state
calls the machine's tool, then the state's edges are tried in order and the first whose guard holds is taken,
with its assignments, exactly as `skillc run` takes a step. The conditional edge after each node goes where that
step chose; a terminal records the outcome and evidence, then END.

    import graph as exported                 # this module, wherever it was written
    result = exported.run({{...inputs...}}, executor="scripted:answers.json", trace="run.jsonl")
    result.outcome, result.terminal, result.evidence

or `STEPS.configure(executor, ...)` then `graph.invoke(inputs, {{"recursion_limit": STEPS.recursion_limit}})`.
Edit the machine, not this file: `skillc import langgraph MODULE:builder` gives the machine back only while the
graph still matches `MACHINE`.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from langgraph.graph import END, START, StateGraph

from skillc.export.runtime import CHANNELS, Steps

MACHINE = {_literal(text)}

STEPS = Steps(MACHINE, name={json.dumps(name)}, folder=__import__("os").path.dirname(__file__),
              machine_hash={json.dumps(machine_hash)})

''')
    fields = [f"    {json.dumps(v.name)}: {python_type(v.type)}," for v in machine.variables.values()]
    out.append("# One channel per variable of the machine, and skillc's bookkeeping (`__skillc_*`).\n")
    out.append('State = TypedDict("State", {\n' + "\n".join(fields) + ("\n" if fields else "")
               + "    **CHANNELS,  # type: ignore[dict-item]\n}, total=False)\n\n")
    for st in ops:
        out.append(f"\ndef {function_name('step', st.name)}(state: State) -> dict[str, Any]:\n")
        out.append(_docstring(_state_doc(st)))
        out.append(f"    return STEPS.step({json.dumps(st.name)}, state)\n\n")
        choices = ", ".join(json.dumps(t) for t in targets(st))
        out.append(f"\ndef {function_name('after', st.name)}(state: State) -> Literal[{choices}]:\n")
        out.append(_docstring([f"Where `{st.name}`'s step went: its edges' targets, or the fallback."]))
        out.append("    return STEPS.next(state)  # type: ignore[return-value]\n\n")
    for st in ends:
        out.append(f"\ndef {function_name('end', st.name)}(state: State) -> dict[str, Any]:\n")
        out.append(_docstring(_terminal_doc(st)))
        out.append(f"    return STEPS.finish({json.dumps(st.name)}, state)\n\n")
    out.append("\nbuilder = StateGraph(State)\n")
    for st in ops:
        meta = json.dumps({"skillc": {"state": st.name, "kind": st.kind}})
        out.append(f"builder.add_node({json.dumps(st.name)}, {function_name('step', st.name)}, metadata={meta})\n")
    for st in ends:
        meta = json.dumps({"skillc": {"state": st.name, "kind": st.kind}})
        out.append(f"builder.add_node({json.dumps(st.name)}, {function_name('end', st.name)}, metadata={meta})\n")
    out.append(f"builder.add_edge(START, {json.dumps(machine.start)})\n")
    for st in ops:
        paths = "{" + ", ".join(f"{json.dumps(t)}: {json.dumps(t)}" for t in targets(st)) + "}"
        out.append(f"builder.add_conditional_edges({json.dumps(st.name)}, {function_name('after', st.name)}, "
                   f"{paths})\n")
    for st in ends:
        out.append(f"builder.add_edge({json.dumps(st.name)}, END)\n")
    out.append('''
graph = builder.compile()


def run(inputs: dict[str, Any], **options: Any) -> Any:
    """Run the graph on `inputs` and return skillc's `RunResult` (outcome, terminal, evidence, steps, ...).

    `options` are `Steps.configure`'s: `executor` (required: a `--executor` spec or an Executor), `tools`,
    `workdir`, `skill_dir`, `max_steps`, `retries`, `trace`, `base_url`, the timeouts.
    """
    return STEPS.run(graph, inputs, **options)
''')
    return "".join(out)


def export(machine: Machine, path: str) -> tuple[str | None, list[Diagnostic]]:
    """The module text for the checked `machine` loaded from `path`, or None with why (SKM870, SKM873)."""

    clash = reserved_names(machine)
    if clash:
        return None, [make(codes.RESERVED_EXPORT_NAME, f"`{clash[0]}` begins with `{RESERVED_PREFIX}`, which the "
                           "exported graph keeps for its own channels", machine.states[clash[0]].span
                           if clash[0] in machine.states else machine.variables[clash[0]].span)]
    text, problems = standalone(path)
    if text is None:
        return None, [make(codes.EXPORT_NOT_STANDALONE, f"the imports of {path} could not be inlined",
                           notes=[f"{d.code}: {d.message}" for d in problems if d.is_error][:3])]
    loaded = load(text, path=path)
    found = differences(machine, loaded.machine) if loaded.machine is not None else ["it does not load"]
    if found:
        return None, [make(codes.EXPORT_NOT_STANDALONE,
                           f"the inlined text of {path} does not load into the same machine", notes=found[:5])]

    try:
        original = read_text(path, what=".skm file")
    except FileProblem as exc:
        return None, [make(codes.EXPORT_NOT_STANDALONE, str(exc))]
    return module_text(machine, text, Path(path).name, machine_hash(original)), []
