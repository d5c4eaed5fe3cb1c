"""Reflection and the self-verifier backed by a model: any skillc executor (`local`, `openai:`, `anthropic:`,
`scripted:` for tests) asked for one JSON object with a schema.

Both prompts are kept small enough for the embedded Gemma 3 270M (`local`, a 2048-token context): the
version's machine (the states the run visited when the whole text is long), a one-line-per-step
summary of the run's trace, the work folder's small files, the hypotheses and the evidence, and the
edit operations with one worked example. The schema is built per request so that grammar-constrained
decoding (llama.cpp turns it into a grammar) can only produce a usable reply: operations, edits and
children are typed edits only (no whole machine text), state names and edge targets are enums of the
machine's own names, ranks and indices are small enums, a SKILL.md edit's `find` is one of the
document's lines that occur once, and every array and string is bounded so a reply fits the model's
`max_tokens` instead of being cut off. SKILL.md edits are offered only when the node's machine is the
offline build of its SKILL.md (otherwise a rebuild would throw a hand-written machine away).

The reply is parsed by the same shape checks as a role script (roles.py). An unusable reply is sent
back once with the problem (the runtime's `Request.retry`, the bad reply shortened); a second one
makes that round empty, with SKM845. An executor that fails outright (unreachable, past its
deadline, a prompt past its context) is a RoleError: the search stops.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import jsonschema

from skillc.diagnostics import Diagnostic, make
from skillc.improve.edits import EDIT_FIELDS, EDIT_OPS, PatchError
from skillc.improve.evolve import codes
from skillc.improve.evolve.cases import Proposal, VerifyRequest
from skillc.improve.evolve.patch import build_skill
from skillc.improve.evolve.roles import (
    Reflection,
    ReflectRequest,
    RoleError,
    ShapeError,
    drafts_from_json,
    reflection_from_json,
)
from skillc.improve.evolve.state import Node, Output
from skillc.runtime.executors.base import ExecutorError
from skillc.runtime.interpreter import json_answer
from skillc.runtime.prompts import Request
from skillc.syntax import nodes as n
from skillc.syntax.parser import parse
from skillc.syntax.printer import print_module

if TYPE_CHECKING:
    from skillc.runtime.executors.base import Executor

#: How much of a run the prompt shows: the trace summary, one step's line, each small file, the files listed.
TRACE_CHARS = 1200
STEP_CHARS = 200
FILE_CHARS = 120
MAX_FILES = 8
#: A machine longer than this is shown as the blocks of the states its run visited (cut at this length).
MACHINE_CHARS = 2000
#: At most this many hypotheses (active first) and test cases are listed.
MAX_LISTED = 6
#: Bounds on a reply, enforced by the schema: hypotheses operations, children, edits per child, cases.
MAX_OPERATIONS = 2
MAX_CHILDREN = 3
MAX_EDITS = 2
MAX_CASES = 3
#: Bounds on a reply's strings: ids and names, prose (descriptions, predictions), code (prompts, snippets, cases).
WORD_CHARS = 40
PROSE_CHARS = 160
CODE_CHARS = 240
#: How much of an unusable reply is sent back with its problem (a cut-off reply can be the whole budget).
ECHO_CHARS = 400
#: Each edit op's fields (patch.py has the semantics) and which of the version's names its `state` may take; an op
#: missing here (added to patch.py later) is offered with every field of EDIT_FIELDS, none required.
OPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "add_state": ("blocks", ("state", "text")), "remove_state": ("blocks", ("state",)),
    "set_prompt": ("prompted", ("state", "text")), "add_edge": ("states", ("state", "text", "target", "assigns")),
    "remove_edge": ("edged", ("state", "index")), "retarget": ("edged", ("state", "target", "index")),
    "set_guard": ("edged", ("state", "text", "index")), "set_assigns": ("edged", ("state", "index", "assigns")),
    "add_assigns": ("edged", ("state", "index", "assigns")), "add_read": ("states", ("state", "name")),
    "remove_read": ("states", ("state", "name")), "add_write": ("states", ("state", "text", "name")),
    "remove_write": ("states", ("state", "name")), "set_call": ("tools", ("state", "text")),
    "set_arg": ("tools", ("state", "text", "name")), "set_outcome": ("terminals", ("state", "text")),
    "set_requires": ("terminals", ("state", "text")), "set_counter": ("", ("name", "max")),
    "set_type": ("", ("text", "name")), "add_statement": ("", ("text",)), "remove_statement": ("", ("find",)),
    "replace_statement": ("", ("text", "find")), "start": ("", ("target",)),
}
#: What a field of an op means where the name alone does not say, for the prompt.
NOTES: dict[tuple[str, str], str] = {
    ("add_state", "state"): "after it", ("add_state", "text"): "the block's .skm source",
    ("add_edge", "text"): 'the guard, "" for the default edge', ("add_write", "text"): "the tool result",
    ("set_call", "text"): "the call", ("set_arg", "text"): "the expression", ("set_arg", "name"): "the argument",
    ("set_type", "text"): "the type", ("add_statement", "text"): "e.g. a var or a rule",
    ("remove_statement", "find"): "its source", ("replace_statement", "find"): "its source",
}

T = TypeVar("T")
#: A shell case and a Python case: one line (a one-line `check` for Python) with no double quotes or backslashes,
#: so its JSON string needs no escapes.
SHELL_CASE = r'^[^"\\]{1,%d}$' % CODE_CHARS  # noqa: UP031 - an f-string would double the regex's braces
# UP031 suppressed below: an f-string would double the regex's braces
PYTHON_CASE = r'^def check\(workdir, outputs, trace\): return [^"\\]{1,%d}$' % CODE_CHARS  # noqa: UP031


# ---------------------------------------------------------------- what the prompts show


def describe_output(output: Output) -> str:
    """What a run left, for a prompt: the reward, the work folder's small files and a summary of the trace."""
    lines = [f"reward: {output.reward}", "files in the work folder:"]
    files = sorted(p for p in output.workdir.rglob("*") if p.is_file()) if output.workdir.is_dir() else []
    for path in files[:MAX_FILES]:
        relative = path.relative_to(output.workdir).as_posix()
        try:
            head = path.read_bytes()[:FILE_CHARS].decode("utf-8", errors="replace")
        except OSError:
            head = "(unreadable)"
        lines.append(f"- {relative}: {json.dumps(head, ensure_ascii=False)}")
    if len(files) > MAX_FILES:
        lines.append(f"- … and {len(files) - MAX_FILES} more")
    if not files:
        lines.append("- (none)")
    return "\n".join([*lines, "the run, step by step:", trace_summary(output)])


def trace_summary(output: Output) -> str:
    """One line per step of the run's trace (state, call or output, next state) and its end, at most TRACE_CHARS."""
    try:
        text = output.trace.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no trace)"
    lines = [line for line in map(_trace_line, text.splitlines()) if line]
    if not lines:
        return "(an empty trace)"
    kept: list[str] = []
    budget = TRACE_CHARS
    for line in reversed(lines):  # the end of a run says most about its failure
        if len(line) + 1 > budget:
            kept.append("…")
            break
        kept.append(line)
        budget -= len(line) + 1
    return "\n".join(reversed(kept))


def _trace_line(raw: str) -> str:
    """A trace record as one short line ("" for the header and for records this summary does not show)."""
    try:
        record = json.loads(raw)
    except ValueError:
        return _short(raw)
    if not isinstance(record, dict):
        return ""
    if record.get("type") == "step":
        action = record.get("tool_call") or {"output": record.get("output")}
        line = f"{record.get('step')} {record.get('state')} ({record.get('kind')}): {_compact(action)}"
        if "tool_result" in record:
            line += f" => {_compact(record['tool_result'])}"
        return _short(f"{line} -> {record.get('target')}")
    if record.get("type") == "footer":
        reason = record.get("skillc.reason") or {}
        why = reason.get("message", "") if isinstance(reason, dict) else ""
        error = record.get("skillc.error")
        return _short(f"end: {record.get('skillc.outcome')} at {record.get('skillc.terminal')}"
                      + (f"; {why}" if why else "") + (f"; error: {error}" if error else ""))
    return ""


def _compact(value: object) -> str:
    """JSON without spaces after separators."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _short(line: str) -> str:
    """A line cut to STEP_CHARS."""
    return line if len(line) <= STEP_CHARS else line[:STEP_CHARS - 1] + "…"


def _parsed(machine: str) -> n.Machine | None:
    """The version's parsed machine (None when it does not parse: the prompt then names no states)."""
    module, _ = parse(machine, "<version>")
    found = [item for item in module.items if isinstance(item, n.Machine)] if module is not None else []
    return found[0] if len(found) == 1 else None


@attrs.frozen
class Names:
    """The names an edit may use in one version: its blocks by kind, its edge targets, its widest state."""

    blocks: tuple[str, ...] = ()  # states and terminals
    states: tuple[str, ...] = ()
    prompted: tuple[str, ...] = ()  # states with a prompt
    tools: tuple[str, ...] = ()
    terminals: tuple[str, ...] = ()
    edged: tuple[str, ...] = ()  # states with an edge
    targets: tuple[str, ...] = ()  # blocks and the fallback
    edges: int = 0  # the most edges of any state (an edge index is below it; add_edge may use it)

    @classmethod
    def of(cls, machine: str) -> Names:
        """The names of a machine text (none when it does not parse)."""
        parsed = _parsed(machine)
        if parsed is None:
            return cls()
        blocks = tuple(it for it in parsed.items if isinstance(it, (n.State, n.Terminal)))
        states = tuple(b for b in blocks if isinstance(b, n.State))
        fallback = ("fallback",) if any(isinstance(it, n.Fallback) for it in parsed.items) else ()
        edges = {s.name: sum(isinstance(x, n.Edge) for x in s.items) for s in states}
        return cls(tuple(b.name for b in blocks), tuple(edges),
                   tuple(s.name for s in states if any(isinstance(x, n.Prompt) for x in s.items)),
                   tuple(s.name for s in states if s.kind == "tool"),
                   tuple(b.name for b in blocks if isinstance(b, n.Terminal)),
                   tuple(name for name, count in edges.items() if count),
                   tuple(b.name for b in blocks) + fallback, max(edges.values(), default=0))


def shown_machine(node: Node) -> str:
    """The machine text for a prompt: whole when short, else its statements and the states its run visited."""
    if len(node.machine) <= MACHINE_CHARS or node.output is None:
        return node.machine.rstrip()
    parsed = _parsed(node.machine)
    if parsed is None:
        return node.machine[:MACHINE_CHARS].rstrip() + "\n…"
    visited = _visited(node.output)
    items = tuple(it for it in parsed.items
                  if not isinstance(it, (n.State, n.Terminal)) or it.name in visited)
    text = print_module(n.Module((attrs.evolve(parsed, items=items),))).rstrip()
    return text if len(text) <= MACHINE_CHARS else text[:MACHINE_CHARS].rstrip() + "\n…"


def _visited(output: Output) -> set[str]:
    """The states and the terminal a run's trace went through."""
    try:
        text = output.trace.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return set()
    names: set[str] = set()
    for raw in text.splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict):
            names.update(str(record[k]) for k in ("state", "target", "skillc.terminal") if record.get(k))
    return names


def skill_lines(node: Node) -> tuple[str, ...]:
    """The SKILL.md lines a `skill` edit may replace: none unless the machine is the offline build of the SKILL.md;
    else each non-blank line (stripped) that occurs exactly once in the document."""
    if node.skill is None:
        return ()
    try:
        if build_skill(node.skill).strip() != node.machine.strip():
            return ()
    except PatchError:
        return ()
    lines = dict.fromkeys(line.strip() for line in node.skill.splitlines() if line.strip())
    return tuple(line for line in lines if node.skill.count(line) == 1)


# ---------------------------------------------------------------- the schemas


def _string(limit: int) -> dict[str, object]:
    """A bounded string."""
    return {"type": "string", "maxLength": limit}


def _choice(values: Sequence[object], otherwise: dict[str, object]) -> dict[str, object]:
    """One of `values` (a free `otherwise` when there are none: a grammar cannot have an empty choice)."""
    return {"enum": list(values)} if values else otherwise


def _array(item: dict[str, object], most: int, least: int = 0) -> dict[str, object]:
    """A bounded array."""
    return {"type": "array", "items": item, "minItems": least, "maxItems": most}


def _object(properties: Mapping[str, object], required: Iterable[str] | None = None) -> dict[str, object]:
    """An object with exactly these properties (all required unless `required` names fewer)."""
    return {"type": "object", "properties": properties,
            "required": list(properties if required is None else required), "additionalProperties": False}


def edit_schema(names: Names) -> dict[str, object]:
    """One machine edit: one variant per op of EDIT_OPS with its fields of EDIT_FIELDS, each `state` one the op can
    change (a prompt only of a state that has one, a call only of a tool state), names and small numbers as enums."""
    def field(name: str, kind: str, op_states: tuple[str, ...] | None) -> dict[str, object]:
        if name == "state":
            return _choice(op_states if op_states is not None else names.blocks, _string(WORD_CHARS))
        special: dict[str, dict[str, object]] = {
            "target": _choice(names.targets, _string(WORD_CHARS)), "name": _string(WORD_CHARS),
            "index": {"enum": list(range(names.edges + 1))}, "max": {"enum": list(range(1, 10))}}
        return special.get(name) or (_string(CODE_CHARS) if kind == "string" else {"type": kind})

    variants = []
    for op in EDIT_OPS:
        kind, used = OPS.get(op, ("", tuple(f for f, _ in EDIT_FIELDS)))
        op_states: tuple[str, ...] | None = getattr(names, kind) if kind else None
        if op_states == () and names.blocks:
            continue  # no state this op could change (e.g. set_call in a machine without tool states)
        properties = {"op": {"const": op}} | {f: field(f, t, op_states) for f, t in EDIT_FIELDS if f in used}
        variants.append(_object(properties, None if op in OPS else ["op"]))
    return {"anyOf": variants}


def fresh_ids(taken: Iterable[str], count: int = MAX_OPERATIONS) -> tuple[str, ...]:
    """The next `count` hypothesis ids h1, h2, … not taken (a new hypothesis never reuses one: SKM842)."""
    used = set(taken)
    return tuple(itertools.islice((f"h{i}" for i in itertools.count(1) if f"h{i}" not in used), count))


def operation_schema(active: Sequence[str], taken: Iterable[str] = ()) -> dict[str, object]:
    """A hypothesis operation: `add` a new one under a fresh id, or `refine`/`refute` one of the active ones."""
    prose = _string(PROSE_CHARS)
    fresh = {"enum": list(fresh_ids([*taken, *active]))}
    add = _object({"op": {"const": "add"}, "id": fresh, "description": prose, "prediction": prose})
    if not active:
        return add
    refine = _object({"op": {"const": "refine"}, "id": {"enum": list(active)}, "new_id": fresh,
                      "description": prose, "prediction": prose})
    refute = _object({"op": {"const": "refute"}, "id": {"enum": list(active)}})
    return {"anyOf": [add, refine, refute]}


def reflect_schema(node: Node, active: Sequence[str], *, children: int, must: bool,
                   taken: Iterable[str] = ()) -> dict[str, object]:
    """The reply schema for reflection on `node`: operations and up to `children` ranked patches."""
    machine = _object({"machine": _array(edit_schema(Names.of(node.machine)), MAX_EDITS, 1)})
    lines = skill_lines(node)
    patch: dict[str, object] = machine
    if lines:
        edit = _object({"find": {"enum": list(lines)}, "replace": _string(CODE_CHARS)})
        patch = {"anyOf": [machine, _object({"skill": _array(edit, MAX_EDITS, 1)})]}
    child = _object({"name": _string(WORD_CHARS), "rank": {"enum": list(range(1, children + 1))}, "patch": patch})
    return _object({"operations": _array(operation_schema(active, taken), MAX_OPERATIONS),
                    "children": _array(child, children, 1 if must else 0)})


def verify_schema(cases: int) -> dict[str, object]:
    """The reply schema for the self-verifier: up to `cases` one-line shell or Python cases."""
    common = {"id": _string(WORD_CHARS), "strength": {"enum": ["hard", "semantic"]},
              "description": _string(PROSE_CHARS)}
    shell = _object({"kind": {"const": "shell"}, "source": {"type": "string", "pattern": SHELL_CASE}, **common})
    python = _object({"kind": {"const": "python"}, "source": {"type": "string", "pattern": PYTHON_CASE}, **common})
    return _object({"cases": _array({"anyOf": [shell, python]}, cases, 1)})


# ---------------------------------------------------------------- asking


def _ask(executor: Executor, state: str, prompt: str, schema: dict[str, object],
         parse: Callable[[object], T]) -> T | Diagnostic:
    """One request with one retry on an unusable reply; the parsed reply, or SKM845; RoleError if the model fails."""
    request = Request(state, "model", ({"role": "user", "content": prompt},), schema)
    problem = ""
    for _ in range(2):
        try:
            reply = executor.complete(request)
        except ExecutorError as exc:
            raise RoleError(f"{state}: the model failed: {exc}") from None
        try:
            value = json_answer(reply.text)
            _conform(value, schema)
            return parse(value)
        except (ValueError, ShapeError) as exc:  # json.JSONDecodeError is a ValueError
            problem = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)  # not "…: line 1 column 1"
            # Only the local executor says its reply budget; a reply that used all of it was cut off.
            if (reply.output_tokens or 0) >= (getattr(executor, "max_tokens", None) or 1 << 30):
                problem += f" (the reply was cut off at {reply.output_tokens} tokens)"
            echo = reply.text if len(reply.text) <= ECHO_CHARS else reply.text[:ECHO_CHARS] + "…"
            request = request.retry(echo, [problem])
    return make(codes.UNUSABLE_ROLE_REPLY, f"{state}: {problem}")


def _conform(value: object, schema: dict[str, object]) -> None:
    """ShapeError naming where `value` breaks the schema (a backend without constrained decoding may stray)."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(schema).iter_errors(value))
    if error is not None:
        error = _variant_error(error)
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
        raise ShapeError(f"the reply{where}: {_short(error.message)}")


def _variant_error(error: Any) -> Any:
    """For a value matching none of the `op` variants, the error inside the variant its `op` names (if any)."""
    while error.validator == "anyOf" and isinstance(error.instance, dict):
        ops = [variant.get("properties", {}).get("op", {}).get("const") for variant in error.validator_value]
        if error.instance.get("op") not in ops:
            return error
        chosen = ops.index(error.instance.get("op"))
        inner = [e for e in error.context if e.schema_path and e.schema_path[0] == chosen]
        if not inner:
            return error
        error = jsonschema.exceptions.best_match(inner)
    return error


#: A worked reply for another machine: it shows the shape; a small model tends to copy it, and its content is
#: unrelated to every shipped task on purpose, so a copied diagnosis is recognisable as one.
EXAMPLE = json.dumps({
    "operations": [{"op": "add", "id": "h1", "description": "the distance is given in miles",
                    "prediction": "distance.txt holds a number followed by mi"}],
    "children": [{"name": "kilometres", "rank": 1,
                  "patch": {"machine": [{"op": "set_prompt", "state": "measure",
                                         "text": "Give the distance in kilometres."}]}}]})
#: The same child as a SKILL.md patch, shown when the version's SKILL.md may be edited.
SKILL_EXAMPLE = json.dumps({"name": "kilometres", "rank": 1, "patch": {"skill": [
    {"find": "Measure the distance.", "replace": "Measure the distance in kilometres."}]}})


@attrs.define
class ModelReflector:
    """Reflection by a model: hypotheses operations and up to min(B, MAX_CHILDREN) ranked patches per round."""

    executor: Executor
    branching: int = 5

    def reflect(self, request: ReflectRequest) -> Reflection:
        """Ask the model about the request's version; an unusable reply is an empty round with SKM845."""
        answer = _ask(self.executor, "evolve.reflect", self.prompt(request), self.schema(request),
                      reflection_from_json)
        return Reflection(diagnostics=(answer,)) if isinstance(answer, Diagnostic) else answer

    def schema(self, request: ReflectRequest) -> dict[str, object]:
        """The reply's schema for this request."""
        return reflect_schema(request.node, _active(request), children=min(self.branching, MAX_CHILDREN),
                              must=request.must_emit_patch, taken=(h.id for h in request.knowledge.store.hypotheses))

    def prompt(self, request: ReflectRequest) -> str:
        """The reflection prompt."""
        node, k = request.node, request.knowledge
        ordered = sorted(k.store.hypotheses, key=lambda h: h.state != "active")  # active ones first, else in order
        hypotheses = _listed([f"- {h.id} ({h.state}): {h.description}; predicts: {h.prediction}" for h in ordered])
        evidence = _listed([f"- {c.id} ({c.strength}, for {', '.join(sorted(c.owners))}): "
                            f"{'holds' if k.evidence.value(node.id, c.id) else 'does not hold'} — {c.description}"
                            for c in k.bank.cases if c.id in k.evidence.columns])
        must = ("You must propose at least one fixed version in this round." if request.must_emit_patch else
                "Propose fixed versions when the run shows what is wrong; otherwise only add hypotheses.")
        lines = skill_lines(node)
        ops = "; ".join(_signature(op) for op in EDIT_OPS)
        skill = (["The machine is built from its SKILL.md; a child's patch may instead be `skill` edits, each "
                  "replacing one of these lines (`find`) by new text (`replace`):", *(f"- {line}" for line in lines),
                  f"For example, a child {SKILL_EXAMPLE}"] if lines else [])
        return "\n".join([
            "A skill, compiled to a state machine in the .skm language, failed its task. Say why as hypotheses "
            "(each predicts something visible in the run's files or steps) and propose fixed versions as edits.",
            f"The machine `{node.name or node.id}`:", "```skm", shown_machine(node), "```",
            "What its run left:", "(it has not run)" if node.output is None else describe_output(node.output),
            "Hypotheses so far:", *(hypotheses or ["- (none)"]),
            "Test cases on this version:", *(evidence or ["- (none)"]),
            *skill,
            f"A `machine` edit is {{\"op\", ...its fields}}, one of: {ops}.",
            f"Reply with one JSON object, at most {MAX_OPERATIONS} operations and {min(self.branching, MAX_CHILDREN)} "
            "children (rank 1 = most promising). For a different machine, whose `measure` state gave miles, a "
            f"reply was: {EXAMPLE}",
            f"Round {request.round}. {must}",
        ])


def _listed(lines: list[str]) -> list[str]:
    """At most MAX_LISTED lines, then how many were left out."""
    rest = len(lines) - MAX_LISTED
    return lines[:MAX_LISTED] + ([f"- … and {rest} more"] if rest > 0 else [])


def _signature(op: str) -> str:
    """An edit op with its fields for the prompt, e.g. `set_arg(state, text: the expression, name: the argument)`."""
    if op not in OPS:
        return op
    return f"{op}({', '.join(f + (f': {NOTES[op, f]}' if (op, f) in NOTES else '') for f in OPS[op][1])})"


def _active(request: ReflectRequest) -> tuple[str, ...]:
    """The ids of the hypotheses an operation may refine or refute."""
    return tuple(h.id for h in request.knowledge.store.hypotheses if h.state == "active")


@attrs.define
class ModelVerifier:
    """The self-verifier by a model: executable one-line cases that test one hypothesis on a run's cached output."""

    executor: Executor
    max_cases: int = 10

    def propose(self, request: VerifyRequest) -> Proposal:
        """Ask the model for cases (or repairs); an unusable reply is no drafts with SKM845."""
        schema = verify_schema(min(self.max_cases, MAX_CASES))
        answer = _ask(self.executor, "evolve.verify", self.prompt(request), schema, drafts_from_json)
        return Proposal(diagnostics=(answer,)) if isinstance(answer, Diagnostic) else Proposal(answer)

    def prompt(self, request: VerifyRequest) -> str:
        """The self-verifier prompt."""
        h = request.hypothesis
        repairs = [f"- case {case_id} was rejected: {problem}" for case_id, problem in request.feedback]
        example = {"cases": [{"kind": "shell", "source": "test -s distance.txt", "id": "distance-exists",
                              "strength": "hard", "description": "distance.txt exists and is not empty"},
                             {"kind": "python", "source": "def check(workdir, outputs, trace): return "
                              "(workdir / 'distance.txt').read_text().strip().endswith('km')", "id": "in-km",
                              "strength": "semantic", "description": "the distance is in kilometres"}]}
        return "\n".join([
            "Write test cases for a hypothesis about why a run of a skill failed. A case is one line: a shell "
            "command run in the run's work folder (exit 0: the property holds), or a Python "
            "`def check(workdir, outputs, trace): return ...` (workdir and trace are pathlib.Path, outputs a dict). "
            "Use single quotes only. Tag each `hard` (a file exists, a format parses) or `semantic` (the content).",
            f"Hypothesis {h.id}: {h.description}", f"It predicts: {h.prediction}",
            "What the run left:", describe_output(request.output),
            *(["Repair these cases (same ids):", *repairs] if repairs else []),
            f"Reply with one JSON object, at most {min(self.max_cases, MAX_CASES)} cases. For a different run, "
            f"whose hypothesis was that the distance is given in miles, a reply was: {json.dumps(example)}",
        ])


def model_roles(executor: Executor, *, branching: int = 5, max_cases: int = 10) -> tuple[ModelReflector,
                                                                                        ModelVerifier]:
    """Reflection and the self-verifier on one executor (the issue's default: the same model for both)."""
    return ModelReflector(executor, branching), ModelVerifier(executor, max_cases)
