"""Reflection and the self-verifier backed by a model: any skillc executor (`local`, `openai:`, `anthropic:`,
`scripted:` for tests) asked for one JSON object with a schema.

The prompt shows the version (its machine text), what its run left (the work folder's files, the
trace's tail), the hypotheses and the evidence on that version; the reply is parsed by the same
shape checks as a role script (roles.py), without `machine_file`. An unusable reply is sent back once
with the problem (the runtime's `Request.retry`); a second one makes that round empty, with SKM845.
An executor that fails outright (unreachable, past its deadline) is a RoleError: the search stops.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import attrs

from skillc.diagnostics import Diagnostic, make
from skillc.evolve import codes
from skillc.evolve.cases import Proposal, VerifyRequest
from skillc.evolve.patch import EDIT_OPS
from skillc.evolve.roles import (
    ReflectRequest,
    Reflection,
    RoleError,
    ShapeError,
    drafts_from_json,
    reflection_from_json,
)
from skillc.evolve.state import Output

if TYPE_CHECKING:
    from skillc.runtime.executors.base import Executor

#: How much of a run's trace, and of each small file, the prompt shows.
TRACE_CHARS = 4000
FILE_CHARS = 400
#: At most this many files of the work folder are listed.
MAX_FILES = 40

_OPERATION = {"type": "object", "required": ["op", "id"],
              "properties": {"op": {"type": "string", "enum": ["add", "refine", "refute"]}, "id": {"type": "string"},
                             "description": {"type": "string"}, "prediction": {"type": "string"},
                             "new_id": {"type": "string"}}}
_EDIT = {"type": "object", "required": ["op"],
         "properties": {"op": {"type": "string", "enum": list(EDIT_OPS)}, "state": {"type": "string"},
                        "text": {"type": "string"}, "target": {"type": "string"}, "index": {"type": "integer"},
                        "name": {"type": "string"}, "max": {"type": "integer"}, "assigns": {"type": "string"}}}
# A child is the whole revised text (`machine`) or typed edits of its parent (`patch`, see patch.py).
_CHILD = {"type": "object", "required": ["name", "rank"],
          "properties": {"name": {"type": "string"}, "rank": {"type": "integer", "minimum": 1},
                         "machine": {"type": "string"},
                         "patch": {"type": "object", "required": ["machine"],
                                   "properties": {"machine": {"type": "array", "items": _EDIT}}}}}
REFLECT_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["operations", "children"],
    "properties": {"operations": {"type": "array", "items": _OPERATION},
                   "children": {"type": "array", "items": _CHILD}}}
_CASE = {"type": "object", "required": ["id", "kind", "source", "strength"],
         "properties": {"id": {"type": "string"}, "kind": {"type": "string", "enum": ["python", "shell"]},
                        "source": {"type": "string"}, "strength": {"type": "string", "enum": ["hard", "semantic"]},
                        "description": {"type": "string"}}}
VERIFY_SCHEMA: dict[str, Any] = {"type": "object", "required": ["cases"],
                                 "properties": {"cases": {"type": "array", "items": _CASE}}}

T = TypeVar("T")


def describe_output(output: Output) -> str:
    """What a run left, for a prompt: the reward, the work folder's files (small ones quoted) and the trace's tail."""
    lines = [f"reward: {output.reward}", "files in the work folder:"]
    files = sorted(p for p in output.workdir.rglob("*") if p.is_file()) if output.workdir.is_dir() else []
    for path in files[:MAX_FILES]:
        relative = path.relative_to(output.workdir).as_posix()
        try:
            head = path.read_bytes()[:FILE_CHARS].decode("utf-8", errors="replace")
        except OSError:
            head = "(unreadable)"
        lines.append(f"- {relative}: {json.dumps(head, ensure_ascii=False)}")
    if not files:
        lines.append("- (none)")
    try:
        trace = output.trace.read_text(encoding="utf-8", errors="replace")[-TRACE_CHARS:]
    except OSError:
        trace = "(no trace)"
    return "\n".join([*lines, "the end of the run's trace:", trace])


def _ask(executor: Executor, state: str, prompt: str, schema: dict[str, Any],
         parse: Callable[[Any], T]) -> T | Diagnostic:
    """One request with one retry on an unusable reply; the parsed reply, or SKM845; RoleError if the model fails."""
    from skillc.runtime.executors.base import ExecutorError
    from skillc.runtime.interpreter import json_answer
    from skillc.runtime.prompts import Request

    request = Request(state, "model", ({"role": "user", "content": prompt},), schema)
    problem = ""
    for _ in range(2):
        try:
            reply = executor.complete(request)
        except ExecutorError as exc:
            raise RoleError(f"{state}: the model failed: {exc}") from None
        try:
            return parse(json_answer(reply.text))
        except (ValueError, ShapeError) as exc:  # json.JSONDecodeError is a ValueError
            problem = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)  # not "…: line 1 column 1"
            request = request.retry(reply.text, [problem])
    return make(codes.UNUSABLE_ROLE_REPLY, f"{state}: {problem}")


@attrs.define
class ModelReflector:
    """Reflection by a model: hypotheses operations and up to B ranked revised machines per round."""

    executor: Executor
    branching: int = 5

    def reflect(self, request: ReflectRequest) -> Reflection:
        """Ask the model about the request's version; an unusable reply is an empty round with SKM845."""
        answer = _ask(self.executor, "evolve.reflect", self.prompt(request), REFLECT_SCHEMA, reflection_from_json)
        return Reflection(diagnostics=(answer,)) if isinstance(answer, Diagnostic) else answer

    def prompt(self, request: ReflectRequest) -> str:
        """The reflection prompt."""
        node, k = request.node, request.knowledge
        hypotheses = [f"- {h.id} ({h.state}): {h.description}; predicts: {h.prediction}" for h in k.store.hypotheses]
        evidence = [f"- {c.id} ({c.strength}, for {', '.join(sorted(c.owners))}): "
                    f"{'holds' if k.evidence.value(node.id, c.id) else 'does not hold'} — {c.description}"
                    for c in k.bank.cases if c.id in k.evidence.columns]
        must = ("You must propose at least one revised machine in this round." if request.must_emit_patch else
                "Propose revised machines only when the evidence supports a diagnosis; otherwise add hypotheses.")
        output = "" if node.output is None else describe_output(node.output)
        return "\n".join([
            "A skill, compiled to a checked state machine in the .skm language, failed its task. Diagnose why with "
            "falsifiable hypotheses (each predicts something observable in the run's files or trace), refine or "
            "refute earlier ones from the evidence, and propose revised machines.",
            f"Version `{node.name or node.id}`:", "```skm", node.machine.rstrip(), "```",
            "What its run left:", output,
            "Hypotheses so far:", *(hypotheses or ["- (none)"]),
            "Test cases on this version:", *(evidence or ["- (none)"]),
            f"Round {request.round}. {must}",
            f"Reply with one JSON object {{\"operations\": [...], \"children\": [...]}}: an operation is "
            f"{{\"op\": \"add\"|\"refine\"|\"refute\", \"id\", \"description\", \"prediction\", \"new_id\" (refine)}}; "
            f"a child is {{\"name\", \"rank\" (1 = most promising), \"machine\" (the whole revised .skm text)}} "
            f"or {{\"name\", \"rank\", \"patch\": {{\"machine\": [edit, ...]}}}} with edits {{\"op\": "
            f"{'|'.join(EDIT_OPS)}, \"state\", \"text\", \"target\", \"index\", \"name\", \"max\", \"assigns\"}}, "
            f"at most {self.branching}.",
        ])


@attrs.define
class ModelVerifier:
    """The self-verifier by a model: executable cases that test one hypothesis on a run's cached output."""

    executor: Executor
    max_cases: int = 10

    def propose(self, request: VerifyRequest) -> Proposal:
        """Ask the model for cases (or repairs); an unusable reply is no drafts with SKM845."""
        answer = _ask(self.executor, "evolve.verify", self.prompt(request), VERIFY_SCHEMA, drafts_from_json)
        return Proposal(diagnostics=(answer,)) if isinstance(answer, Diagnostic) else Proposal(answer)

    def prompt(self, request: VerifyRequest) -> str:
        """The self-verifier prompt."""
        h = request.hypothesis
        repairs = [f"- case {case_id} was rejected: {problem}" for case_id, problem in request.feedback]
        return "\n".join([
            "Write executable test cases for a failure hypothesis about a run of a skill. A case is either Python "
            "defining `check(workdir, outputs, trace)` (workdir and trace are pathlib.Path, outputs a dict) that "
            "returns a bool or (bool, reason), or a shell command run in the work folder that exits 0 when the "
            "property holds and 1 when it does not. Tag each case `hard` (a file exists, a format parses) or "
            "`semantic` (the content is right).",
            f"Hypothesis {h.id}: {h.description}", f"It predicts: {h.prediction}",
            "What the run left:", describe_output(request.output),
            *(["Repair these cases (same ids):", *repairs] if repairs else []),
            f"Reply with one JSON object {{\"cases\": [{{\"id\", \"kind\": \"python\"|\"shell\", \"source\", "
            f"\"strength\": \"hard\"|\"semantic\", \"description\"}}]}}, at most {self.max_cases} cases.",
        ])


def model_roles(executor: Executor, *, branching: int = 5, max_cases: int = 10) -> tuple[ModelReflector,
                                                                                        ModelVerifier]:
    """Reflection and the self-verifier on one executor (the issue's default: the same model for both)."""
    return ModelReflector(executor, branching), ModelVerifier(executor, max_cases)
