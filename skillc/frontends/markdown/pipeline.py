"""The markdown front end's pipeline (`build`), re-exported by the package."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from skillc.check import codes as check_codes
from skillc.check.source import CheckResult, check_source
from skillc.diagnostics import Diagnostic, make
from skillc.diagnostics.diagnostic import HasDiagnostics
from skillc.frontends.markdown import codes
from skillc.frontends.markdown.clauses import Clause, extract_clauses
from skillc.frontends.markdown.document import MAX_BYTES, Document, read_document
from skillc.frontends.markdown.report import Row, RuleReport, coverage, landings
from skillc.frontends.markdown.structural import Options, allowed_tool, bash_declared, compile_document, runs_command
from skillc.ir import machine as ir
from skillc.ir.machine import Machine
from skillc.syntax import nodes as n
from skillc.syntax.printer import print_module

if TYPE_CHECKING:
    from skillc.frontends.markdown.llm import LLMOptions, Round
    from skillc.runtime.executors import Executor

RULE_CODES = {check_codes.REQUIRED_OPERATION_BYPASSED, check_codes.ORDER_VIOLATED,
              check_codes.FORBIDDEN_OPERATION_REACHABLE, check_codes.TERMINATION_RULE_VIOLATED,
              check_codes.DATA_RULE_VIOLATED}
#: What makes the offline draft drop a rule (its sentence stays an instruction): it does not hold, or its quotation is
#: too short to locate.
DROPPED_RULE_CODES = RULE_CODES | {check_codes.QUOTATION_TOO_SHORT}
#: Notes about the offline draft itself, dropped when the LLM compiler drafts the machine instead.
OFFLINE_ONLY = {codes.NO_PROCEDURE, codes.UNKNOWN_ALLOWED_TOOL, codes.BASH_DECLARED_FOR_COMMANDS,
                codes.RULE_NOT_PROVED, codes.COMMANDS_NOT_SHELL, codes.CONSTRUCT_NOT_ENCODED}


@attrs.define
class BuildResult(HasDiagnostics):
    """The built `.skm` text (None when the build failed), its machine, the clause table and every finding."""

    text: str | None
    machine: Machine | None
    diagnostics: list[Diagnostic]
    clauses: list[Clause] = attrs.field(factory=list)
    rows: list[Row] = attrs.field(factory=list)
    rounds: list[Round] = attrs.field(factory=list)  # LLM rounds: what each draft got from the checker
    rules: RuleReport = attrs.field(factory=RuleReport)  # the extracted rules: proved, or dropped as unproven

    @property
    def coverage(self) -> float:
        return coverage(self.rows)

    @property
    def ok(self) -> bool:
        return self.text is not None and not any(d.is_error for d in self.diagnostics)


def source_name(skill: Path, output: Path | None) -> str:
    """How the machine names its skill document: relative to the machine file's folder."""
    base = output.parent if output is not None else Path.cwd()
    try:
        return Path(os.path.relpath(skill.resolve(), base.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return skill.resolve().as_posix()


def check_text(text: str, skill: Path, output: Path | None) -> CheckResult:
    """Check built text as if it were the output file (its `source` resolves against the skill)."""
    where = output if output is not None else Path.cwd() / "built.skm"
    return check_source(text, path=str(where), skill=skill)


@attrs.frozen
class Draft:
    """Built text with its check result (whose `module` is the text parsed, spans included)."""

    text: str
    checked: CheckResult


def structural_draft(doc: Document, skill: Path, output: Path | None,
                     options: Options) -> tuple[Draft, list[Clause], list[Diagnostic]]:
    """The offline draft, with rules that do not hold on its graph turned into instructions."""
    clauses = extract_clauses(doc)
    compiled = compile_document(doc, clauses, attrs.evolve(options, source=source_name(skill, output)))
    notes: list[Diagnostic] = []
    if not compiled.procedure:
        notes.append(make(codes.NO_PROCEDURE, f"{doc.path} has no procedure: built a one-state machine that applies it",
                          doc.span(1), hint="number the steps, or add a `## Procedure` section"))
    if compiled.bash_added:
        notes.append(make(codes.BASH_DECLARED_FOR_COMMANDS,
                          "the skill has commands to run: declared `bash` (runs in the run's working directory)",
                          doc.span(doc.front.start or 1),
                          hint="list `Bash` under `allowed-tools` to say so in the skill itself"))
    hints = {codes.MISSING_STEP_REFERENCE: "number the reference after a step that exists",
             codes.CONTRADICTORY_ORDER: "keep the order the procedure follows",
             codes.COMMANDS_NOT_SHELL: "give the command as a shell command, "
                                       "or run it with an interpreter (`python3 script.py`)"}
    for code, message, start, end in compiled.problems:
        notes.append(make(code, message, doc.span(start, end), hint=hints[code]))
    for u in compiled.unencoded:
        notes.append(make(codes.CONSTRUCT_NOT_ENCODED, f"not encoded: {u.what}; every run through `{u.state}` ends in "
                                                       "`review_required` (partial), never in success",
                          doc.span(u.start, u.end), label="not encoded",
                          hint="say it so that it can be encoded, build with a model, or edit the machine by hand",
                          data={"construct": u.what, "state": u.state}))
    text = print_module(compiled.module)
    checked = check_text(text, skill, output)
    for _ in range(3):
        broken = {d.span.start_pos[0]: d for d in checked.diagnostics if d.code in DROPPED_RULE_CODES
                  and d.span is not None}
        if not broken or checked.module is None:
            break
        for rule, line in _rules_at(checked.module, set(broken)):
            d = broken[line]
            where = rule.where.start if rule.where is not None else 1
            unproved = f"{rule_head(rule)} ({d.code}: {d.message})"
            notes.append(make(codes.RULE_NOT_PROVED, f"not proved, kept as an instruction: {unproved}",
                              doc.span(where, rule.where.end if rule.where else None),
                              label=rule.kind, hint="restate the requirement so that it names one step, or edit "
                                                    "the machine by hand", data={"rule": unproved}))
        text = print_module(_drop_rules(checked.module, set(broken)))
        checked = check_text(text, skill, output)
    return Draft(text, checked), clauses, notes


def rule_head(rule: n.Rule | ir.Rule) -> str:
    """`rule order a before b`, `rule ends s in failed`: a rule without its quotation."""
    ops = {"order": " before ", "reads": " from "}.get(rule.kind, " ").join(rule.ops)
    return f"rule {rule.kind} {ops}" + (f" in {rule.outcome}" if rule.outcome else "")


def _machine(module: n.Module) -> n.Machine:
    """The machine of a built module (its last item)."""
    machine = module.items[-1]
    assert isinstance(machine, n.Machine), "a built module ends with its machine"
    return machine


def _rules_at(module: n.Module, lines: set[int]) -> list[tuple[n.Rule, int]]:
    """The rules of the parsed module that start on `lines`, with that line."""
    return [(item, item.span.start_pos[0]) for item in _machine(module).items
            if isinstance(item, n.Rule) and item.span is not None and item.span.start_pos[0] in lines]


def _drop_rules(module: n.Module, lines: set[int]) -> n.Module:
    """The parsed module without the rules that start on `lines` (their sentences stay in the instructions)."""
    machine = _machine(module)
    keep = tuple(item for item in machine.items
                 if not (isinstance(item, n.Rule) and item.span is not None and item.span.start_pos[0] in lines))
    return attrs.evolve(module, items=module.items[:-1] + (attrs.evolve(machine, items=keep),))


def build(skill: str | os.PathLike[str], *, output: str | os.PathLike[str] | None = None,
          options: Options | None = None, model: str | None = None, executor: Executor | None = None,
          rounds: int = 3, max_bytes: int = MAX_BYTES,
          base_url: str | None = None, llm: LLMOptions | None = None) -> BuildResult:
    """Compile a skill (its document, or its folder holding `SKILL.md`) into a checked machine.

    Structural, or LLM when `model`/`executor` is given (`llm`: its budgets, see `llm.LLMOptions`).
    """
    skill = Path(skill)
    if skill.is_dir() and (skill / "SKILL.md").is_file():  # the compile unit is the folder
        skill = skill / "SKILL.md"
    out = Path(output) if output is not None else None
    doc, diags = read_document(skill, max_bytes=max_bytes)
    if doc is None:
        return BuildResult(None, None, diags)
    options = options or Options()
    draft, clauses, notes = structural_draft(doc, skill, out, options)
    diags += notes
    unencoded = [d for d in notes if d.code == codes.CONSTRUCT_NOT_ENCODED]
    if options.strict and unencoded and model is None and executor is None:
        diags.append(make(codes.STRICT_UNENCODED, f"--strict: {len(unencoded)} construct(s) of {doc.path} could not be "
                                                  "encoded (SKM320); nothing is written",
                          unencoded[0].span if unencoded[0].span is not None else doc.span(1),
                          hint="fix each SKM320, or build without --strict and review the runs that end "
                               "`review_required`"))
        return BuildResult(None, None, diags, clauses)
    if (model is None and executor is None and doc.front.allowed_tools and not bash_declared(doc, options)
            and any(d.code == codes.BASH_DECLARED_FOR_COMMANDS for d in notes)):
        listed = ", ".join(doc.front.allowed_tools)
        for c in [c for c in clauses if runs_command(c)][:5]:
            diags.append(make(codes.STEP_OUTSIDE_ALLOWED_TOOLS, f"this step runs a command, but the skill's "
                              f"allowed-tools ({listed}) do not include Bash: nothing is written",
                              doc.span(c.start, c.end),
                              label="needs `bash`",
                              hint="list `Bash` (or a pattern such as `Bash(pytest:*)`) under `allowed-tools`, "
                                   "or build with `--allow-tool bash`"))
        return BuildResult(None, None, diags, clauses)
    for name in doc.front.allowed_tools:
        if allowed_tool(name) is None:
            diags.append(make(codes.UNKNOWN_ALLOWED_TOOL,
                              f"allowed tool `{name}` has no skillc interface; steps that use it stay model states",
                              doc.span(doc.front.start, doc.front.end),
                              hint="declare it in the machine by hand, or register an implementation"))
    history: list[Round] = []
    if model is not None or executor is not None:
        # deferred: an offline build never loads the LLM compiler
        from skillc.frontends.markdown.llm import llm_build, with_fragment_states

        assert draft.checked.module is not None, "the structural draft is printed by the project printer: it parses"
        llm_draft, llm_diags, history = llm_build(doc, clauses, draft.checked.module, skill=skill, output=out,
                                                  model=model, executor=executor, rounds=rounds, base_url=base_url,
                                                  options=llm)
        diags = [d for d in diags if d.code not in OFFLINE_ONLY] + llm_diags
        if llm_draft is None:
            return BuildResult(None, None, diags, clauses, [], history)
        draft = llm_draft
    text, result = draft.text, draft.checked
    module = result.module
    if history and module is not None:  # a sectioned LLM draft: its fragments' states hold clauses too
        module = with_fragment_states(module)
    rows = landings(module, clauses) if module is not None else []
    for r in rows:
        if not r.covered:
            diags.append(make(codes.UNCOVERED_CLAUSE, f"clause on line {r.clause.lines} landed nowhere in the machine",
                              doc.span(r.clause.start, r.clause.end), label=r.clause.kind,
                              hint="add it to a state's prompt, or make it a rule"))
    diags += result.diagnostics
    summary = rule_report(result.machine, rows, diags,
                          bash_added=any(d.code == codes.BASH_DECLARED_FOR_COMMANDS for d in diags))
    if any(d.is_error for d in result.diagnostics):
        return BuildResult(None, result.machine, diags, clauses, rows, history, summary)
    return BuildResult(text, result.machine, diags, clauses, rows, history, summary)


def rule_report(machine: Machine | None, rows: list[Row], diags: list[Diagnostic], bash_added: bool) -> RuleReport:
    """What the build proved: the machine's own rules, the dropped ones, and the prohibitions left as constraints."""
    proved = tuple(f"{rule_head(r)}  \"{r.quote}\"" for r in (machine.rules if machine else ()) if not r.fragment)
    unproved = tuple(d.datum("rule") or "" for d in diags if d.code == codes.RULE_NOT_PROVED)
    prohibitions = tuple((r.clause.text, r.landed) for r in rows if r.clause.kind == "forbid")
    unencoded = tuple((f"line {d.span.start_pos[0]}: " if d.span is not None else "")
                      + (d.datum("construct") or "") + f" (at `{d.datum('state')}`)"
                      for d in diags if d.code == codes.CONSTRUCT_NOT_ENCODED)
    return RuleReport(proved, unproved, prohibitions, bash_added, unencoded)


__all__ = ["BuildResult", "Options", "build"]
