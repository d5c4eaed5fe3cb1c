"""The LLM compiler: rules with verbatim quotations, JSON drafts, redrafting from the checker.

1. **Rules.** The model lists the document's requirements, orders and
   prohibitions as rules over the structural draft's operations. A rule is kept
   only if its quotation occurs in the document (SKM312 otherwise) and every
   operation it names is in the interface table (SKM313 otherwise).
2. **Draft.** The model returns the machine as JSON conforming to
   `MACHINE_SCHEMA`, starting from the structural draft and the kept rules.
   The draft is printed as `.skm` and checked by the project checker.
3. **Redraft.** While the checker reports errors, their concise text goes back
   to the model with the draft, for at most `rounds` drafts. A build that never
   checks clean fails with the last draft's errors (SKM310); nothing is written.

Backends are the runtime's executors (`openai:`, `anthropic:`, `local`), given
larger token budgets than a single state needs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from skillc.syntax.format import format_source
from skillc.check.provenance import normalise
from skillc.diagnostics import Diagnostic, make
from skillc.frontends.markdown import codes
from skillc.frontends.markdown.clauses import Clause
from skillc.frontends.markdown.document import Document
from skillc.frontends.markdown.schema import MACHINE_SCHEMA, RULES_SCHEMA, DraftError, to_json, to_skm
from skillc.runtime.executors import Budget, Executor, ExecutorError, make_executor
from skillc.runtime.prompts import Request
from skillc.syntax import nodes as n

if TYPE_CHECKING:
    from skillc.frontends.markdown import Draft

SYSTEM = ("You compile agent skills (markdown procedures) into skillc machines: extended finite-state machines "
          "with typed variables, model/judge/tool states that declare what they read and write, ordered guarded "
          "edges, bounded counters, terminals and rules. Reply with one JSON object that matches the schema, and "
          "nothing else.")

LANGUAGE = """Semantics you must respect:
- A state may only read variables assigned on every path into it (inputs are always assigned).
- A judge writes exactly one enum variable; its edges route on the labels, e.g. `verdict == passed`.
- Every state ends with a default edge (no `when`). Edge targets are states, terminals or `fallback`.
- Every cycle increments a counter on an edge whose guard keeps it below its max, e.g.
  `{"when": "verdict == failed and rounds < 2", "to": "revise", "assign": ["rounds += 1"]}`.
- Rules: `required OP` (every successful run performs OP), `order A before B`, `forbid OP`, `ends OP` with
  `outcome` (every run through OP ends in a terminal with that outcome: stop clauses), `reads B from A` (what B
  reads was produced by A); OP is a state or a tool name. `quote` is the exact sentence of the skill. `from` is
  its line range in the skill. Never forbid a tool that no state calls and that has no parameters."""


@attrs.frozen
class Round:
    """One draft: what the model returned and what the checker said about it."""

    number: int
    errors: list[str]
    ok: bool


# Whole machines need larger replies (and more time) than a single state.
BUILD_BUDGET = Budget(max_tokens=8192, local_max_tokens=3072, local_n_ctx=8192)


def make_build_executor(spec: str, base_url: str | None = None) -> Executor:
    """An executor for `--model SPEC` with token budgets sized for whole machines."""
    return make_executor(spec, base_url=base_url, timeout_s=600.0, budget=BUILD_BUDGET, models_only=True)


def numbered(doc: Document) -> str:
    """The document with line numbers, so the model can cite line ranges."""
    return "\n".join(f"{i:>4} | {line}" for i, line in enumerate(doc.lines, 1))


def _ask(executor: Executor, state: str, prompt: str, schema: dict[str, Any]) -> tuple[object | None, str | None]:
    """One call: the decoded JSON, or None and what was wrong with the reply."""
    request = Request(state, "model", ({"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}),
                      schema)
    reply = executor.complete(request)
    try:
        return json.loads(reply.text), None
    except json.JSONDecodeError as exc:
        return None, f"the reply is not JSON ({exc.msg} at character {exc.pos})"


def interface(draft: dict[str, Any]) -> set[str]:
    """Operations a rule may name: the draft's states and tools."""
    names = {s.get("name") for s in draft.get("states", []) if isinstance(s, dict)}
    names |= {t.get("name") for t in draft.get("tools", []) or [] if isinstance(t, dict)}
    return {x for x in names if isinstance(x, str)}


def filter_rules(rules: object, doc: Document, ops: set[str]) -> tuple[list[dict[str, Any]], list[Diagnostic]]:
    """Rules whose quotation occurs in the document and whose operations are in the interface."""
    kept: list[dict[str, Any]] = []
    dropped: list[Diagnostic] = []
    text = normalise(doc.text)
    for r in rules if isinstance(rules, list) else []:
        if not isinstance(r, dict) or not isinstance(r.get("quote"), str) or not isinstance(r.get("ops"), list):
            continue
        quote = normalise(r["quote"])
        if not quote or quote not in text:
            dropped.append(make(codes.QUOTATION_NOT_IN_SKILL, f"dropped a rule whose quotation is not in {doc.path}: \"{r['quote'][:80]}\"",
                                hint="quote the sentence exactly as the skill writes it"))
            continue
        unknown = [o for o in r["ops"] if o not in ops]
        if unknown:
            dropped.append(make(codes.RULE_OUTSIDE_INTERFACE, f"dropped a rule naming `{unknown[0]}`, which is not a state or tool of "
                                          "the machine", hint="name a state or a declared tool"))
            continue
        lines = r.get("from")
        if not (isinstance(lines, list) and 1 <= len(lines) <= 2
                and all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= len(doc.lines) for x in lines)):
            r = {k: v for k, v in r.items() if k != "from"}  # a line range outside the document is noise
        kept.append(r)
    return kept, dropped


def llm_build(doc: Document, clauses: list[Clause], structural: n.Module, *, skill: Path, output: Path | None,
              model: str | None, executor: Executor | None = None, rounds: int = 3,
              base_url: str | None = None) -> tuple[Draft | None, list[Diagnostic], list[Round]]:
    """Draft and redraft a machine with a model; the formatted, checked draft, or None with the reasons."""
    from skillc.frontends.markdown import Draft, check_text, source_name  # noqa: F811 (a cycle at import time)

    source = source_name(skill, output)
    own = executor is None
    if executor is None:
        try:
            executor = make_build_executor(model or "", base_url)
        except ExecutorError as exc:
            return None, [make(codes.MODEL_FAILED, f"cannot use model {model!r}: {exc}")], []
    diags: list[Diagnostic] = []
    history: list[Round] = []
    try:
        draft = to_json(structural)
        ops = interface(draft)
        # (a) rules with verbatim quotations
        reply, problem = _ask(executor, "build_rules", (
            f"Skill document {doc.path} (line numbers on the left):\n{numbered(doc)}\n\n"
            f"Operations of the machine (states and tools): {', '.join(sorted(ops))}\n\n{LANGUAGE}\n\n"
            "List every requirement, ordering and prohibition of the skill as a rule over these operations, "
            "quoting the sentence exactly."), RULES_SCHEMA)
        rules = reply.get("rules") if isinstance(reply, dict) else None
        kept, dropped = filter_rules(rules, doc, ops)
        diags += dropped
        if problem:
            diags.append(make(codes.DRAFT_NOT_VALID, f"the rule list was not valid: {problem}"))
        known = {r["quote"] for r in draft["rules"]}
        draft["rules"] += [r for r in kept if r["quote"] not in known]
        # (b) draft, (c) redraft from the checker
        feedback = ""
        last_errors: list[Diagnostic] = []
        for number in range(1, rounds + 1):
            reply, problem = _ask(executor, "build_draft", (
                f"Skill document {doc.path} (line numbers on the left):\n{numbered(doc)}\n\n{LANGUAGE}\n\n"
                "Current draft of the machine (JSON). Improve it so that it follows the skill faithfully, every "
                "sentence of the skill lands in a state's prompt or a rule, and it passes the checker:\n"
                f"{json.dumps(draft, ensure_ascii=False)}\n\n{feedback}"
                "Return the whole corrected machine as JSON."), MACHINE_SCHEMA)
            errors: list[str]
            text = None
            if problem is None:
                try:
                    if isinstance(reply, dict):
                        reply["rules"], dropped = filter_rules(reply.get("rules"), doc, interface(reply))
                        diags += dropped
                    text = to_skm(reply, source)
                except DraftError as exc:
                    problem = str(exc)
            if text is not None:
                formatted, _ = format_source(text)
                if formatted is None:  # the draft's strings or guards do not parse: the checker will say where
                    formatted = text
                text = formatted
            if problem is not None:
                diags.append(make(codes.DRAFT_NOT_VALID, f"draft {number} was not a valid machine: {problem}",
                                  hint="the next round tells the model what was wrong"))
                errors = [problem]
                last_errors = [make(codes.DRAFT_NOT_VALID, f"draft {number} was not a valid machine: {problem}")]
            else:
                assert text is not None and isinstance(reply, dict), "a draft without a problem was printed"
                checked = check_text(text, skill, output)
                last_errors = [d for d in checked.diagnostics if d.is_error]
                errors = [f"{d.code} {d.message}" + (f" (line {d.span.start_pos[0]})" if d.span else "")
                          + (f"; hint: {d.hint}" if d.hint else "") for d in last_errors]
                draft = reply  # the next round improves on the newest draft
                if not last_errors:
                    history.append(Round(number, [], True))
                    return Draft(text, checked), diags, history
            history.append(Round(number, errors, False))
            feedback = ("The checker rejected the previous draft:\n" + "\n".join(f"- {e}" for e in errors[:20])
                        + "\n\n")
        diags.append(make(codes.DRAFT_NEVER_CHECKED, f"no draft checked clean in {rounds} round{'s' * (rounds != 1)}; "
                                    f"the last one had {len(last_errors)} error{'s' * (len(last_errors) != 1)}",
                          notes=[e.message for e in last_errors[:10]],
                          hint="raise --rounds, use a stronger model, or build offline (no --model)"))
        return None, diags, history
    except ExecutorError as exc:
        diags.append(make(codes.MODEL_FAILED, f"the model backend failed: {exc}",
                          hint="check the endpoint and model name, or build offline (no --model)"))
        return None, diags, history
    finally:
        if own and executor is not None:
            executor.close()
