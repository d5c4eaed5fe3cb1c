"""The LLM compiler, the front door of `skillc build`: a complete request, `.skm` replies, redrafts from findings.

1. **Request.** The system message is the language card (`card.py`: the grammar, the reference, the tool kit,
   built-ins, rule kinds, the standard library, conventions, a checked example); it is the same for every
   skill. The user message is the skill folder (`folder.py`: front matter and `allow`, the files, each
   script's usage read statically, each reference's title) and the numbered `SKILL.md` (the offline draft as
   a starting point only on request: `LLMOptions.offline_draft`; by default the model starts from the skill). The model drafts the machine first and its rules over its own states,
   in one reply: `{"skm": "<the .skm text>"}` (a fenced `skm` block or bare `.skm` text is accepted too,
   and so is a JSON draft of `schema.MACHINE_SCHEMA`).
2. **Check.** Rules whose quotation is not in the document (SKM312) or whose operation the machine does not
   have (SKM313) are dropped (blank lines keep the draft's line numbers); the text is checked. A draft that
   checks clean is kept; the build's own smells (`smells.py`, SKM340–SKM345,
   SKM348–SKM354) and the clauses of the skill
   that landed nowhere (SKM305) are computed on it.
3. **Redraft.** Every finding goes back (no cap): the checker's errors grouped by code, most important
   first, then its warnings, the smells, the dropped rules and the uncovered clauses, each with its line of
   the draft. The model answers with the whole corrected text, for at most `rounds` drafts. The build keeps
   the clean draft with the fewest findings; none clean is SKM310 and nothing is written.

**Large skills** (more than `section_tokens` of document) are drafted section by section so that no reply
exceeds its budget: an outline reply gives the machine (declarations, one fragment instance per section,
terminals, cross-section rules) and each section's fragment signature; one reply per section gives the
fragment and the section's rules; the parts are assembled into one module and checked as a whole. Redrafts
go to the parts whose lines hold findings.

Backends are the runtime's executors (`openai:`, `anthropic:`, `local`, and `recorded:DIR` to replay an
exchange recorded with `tools/standin.py`), with budgets for whole machines (`max_tokens`, default 16,384).
"""  # noqa: E501 - docstring text kept verbatim

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Final, cast

import attrs

from skillc.check import codes as check_codes
from skillc.check.context import undecided
from skillc.check.provenance import normalise
from skillc.diagnostics import Code, Diagnostic, Severity, make
from skillc.diagnostics.files import scrub
from skillc.frontends.markdown import Draft, check_text, codes, source_name
from skillc.frontends.markdown.card import Level, card
from skillc.frontends.markdown.clauses import Clause
from skillc.frontends.markdown.document import Document
from skillc.frontends.markdown.folder import Folder, describe, read_folder, wider_allow
from skillc.frontends.markdown.report import landings
from skillc.frontends.markdown.schema import DraftError, to_skm
from skillc.frontends.markdown.smells import smells
from skillc.ir.toolkit import KITS
from skillc.runtime.executors import Budget, Executor, ExecutorError, make_executor
from skillc.runtime.executors.base import BaseExecutor
from skillc.runtime.executors.recorded import NoRecording
from skillc.runtime.jsonvalue import Object
from skillc.runtime.prompts import Request
from skillc.syntax import nodes as n
from skillc.syntax.format import format_source
from skillc.syntax.parser import parse as parse_text
from skillc.syntax.printer import print_module

if TYPE_CHECKING:
    from skillc.check.source import CheckResult

#: Reply tokens of one request: the corpus's largest recorded replies take 15–16.6k (docs/build.md).
DEFAULT_MAX_TOKENS: Final = 16_384
#: Document tokens (about 4 characters each) one reply may cover; larger skills are drafted in sections.
DEFAULT_SECTION_TOKENS: Final = 5_000
#: Document tokens below which a whole draft cut at the reply budget is not drafted again in sections.
MIN_SPLIT_TOKENS: Final = 250
#: Executors whose context is smaller than this get the brief card (the local model).
FULL_CARD_CONTEXT: Final = 32_768

SYSTEM = """You compile agent skills (a folder: SKILL.md with front matter, bundled scripts and references) into \
skillc machines written in the .skm language below: extended finite-state machines with typed variables, \
model, judge and tool states that declare what they read and write, ordered guarded edges, counted loops, \
terminals with evidence, and rules that quote the skill. The skillc checker proves every machine you write; \
its findings come back to you until the machine is clean and faithful to the skill.

Reply with one JSON object, as the user message says, and nothing else. `.skm` text goes in JSON strings \
(escape its quotes and line breaks as JSON requires)."""


@attrs.frozen
class LLMOptions:
    """Budgets of the LLM compiler: drafts, reply tokens, the document size one reply covers."""

    rounds: int = 3
    max_tokens: int = DEFAULT_MAX_TOKENS
    section_tokens: int = DEFAULT_SECTION_TOKENS
    offline_draft: bool = False  # also show the offline draft as a starting point (whole-document requests only)
    card: Level | None = None  # None: the full card, or the brief one for an executor with a small context
    timeout_s: float = 600.0  # seconds one model request may take (a whole machine is a long reply)


@attrs.frozen
class Finding:
    """One problem sent back to the model: a checker diagnostic, a smell, a dropped rule, an uncovered clause."""

    code: Code
    severity: str  # "error" or "warning"
    message: str
    line: int | None = None  # in the draft (`where == "draft"`) or in SKILL.md (`where == "skill"`)
    where: str = "draft"
    excerpt: str = ""
    hint: str | None = None
    fragment: str | None = None  # the fragment an instantiation finding is about (reported at its `use` line)

    def render(self) -> str:
        at = "" if self.line is None else f"SKILL.md line {self.line}" if self.where == "skill" else f"line {self.line}"
        text = f"{at} `{self.excerpt}`: " if at and self.excerpt else f"{at}: " if at else ""
        return f"{text}{self.message}"


@attrs.frozen
class Round:
    """One draft: what the checker said (`errors`), whether it checked clean, and everything sent back."""

    number: int
    errors: list[str]
    ok: bool
    findings: tuple[Finding, ...] = ()
    parts: tuple[str, ...] = ("machine",)  # what was drafted this round: the machine, or sections' fragments


# ---------------------------------------------------------------- executors and the model spec


def make_build_executor(spec: str, base_url: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS,
                        timeout_s: float = 600.0) -> Executor:
    """An executor for `--model SPEC` with token budgets sized for whole machines."""
    budget = Budget(max_tokens=max_tokens, local_max_tokens=min(max_tokens, 4096), local_n_ctx=16_384)
    return make_executor(spec, base_url=base_url, timeout_s=timeout_s, budget=budget, models_only=True)


# ---------------------------------------------------------------- replies

_SKM_STRING: Final = {"type": "string", "description": "the .skm text"}
DRAFT_SCHEMA: Final[Object] = {
    "type": "object", "additionalProperties": False, "required": ["skm"],
    "properties": {"skm": {**_SKM_STRING, "description": "the whole module: imports, fragments and the machine"}},
}
OUTLINE_SCHEMA: Final[Object] = {
    "type": "object", "additionalProperties": False, "required": ["skm", "signatures"],
    "properties": {"skm": {**_SKM_STRING, "description": "the machine, with one `use` per section"},
                   "signatures": {"type": "array", "items": {"type": "string"},
                                  "description": "one `fragment NAME(PARAM: TYPE, …) -> (EXIT, …)` per section"}},
}
SECTION_SCHEMA: Final[Object] = {
    "type": "object", "additionalProperties": False, "required": ["skm", "rules"],
    "properties": {"skm": {**_SKM_STRING, "description": "the section's fragment"},
                   "rules": {"type": "array", "items": {"type": "string"},
                             "description": "`rule …` lines over INSTANCE.state, placed in the machine"}},
}


@attrs.frozen
class Reply:
    """A model reply read as `.skm` text (and, for sections, rules and signatures), or what was wrong with it."""

    raw: str
    skm: str | None = None
    rules: tuple[str, ...] = ()
    signatures: tuple[str, ...] = ()
    problem: str | None = None
    cut: bool = False  # the backend stopped it at the reply budget


_FENCE = re.compile(r"```(?:skm|json|text)?[ \t]*\n(.*?)```", re.S)


def read_reply(raw: str, source: str) -> Reply:
    """The `.skm` text of a reply: `{"skm": …}`, a JSON draft of MACHINE_SCHEMA, a fenced block or bare text. Lone
    surrogates (a JSON escape such as `\\ud800`, no Unicode character) become U+FFFD, so a draft is always text a
    file can hold."""
    raw = cast(str, scrub(raw))
    text = raw.strip()
    fenced = _FENCE.search(text)
    candidates = [text] + ([fenced.group(1).strip()] if fenced else [])
    for candidate in candidates:
        try:
            data = scrub(json.loads(candidate))
        except json.JSONDecodeError:
            continue
        if not isinstance(data, dict):
            return Reply(raw, problem=f"the reply is a JSON {type(data).__name__}, not an object with `skm`")
        rules = tuple(x for x in data.get("rules", []) or [] if isinstance(x, str)) \
            if isinstance(data.get("rules"), list) and all(isinstance(x, str) for x in data["rules"]) else ()
        signatures = tuple(x for x in data.get("signatures", []) or [] if isinstance(x, str))
        if isinstance(data.get("skm"), str):
            return Reply(raw, data["skm"], rules, signatures)
        if "states" in data or "start" in data:  # a JSON draft of the IR schema
            try:
                return Reply(raw, to_skm(data, source))
            except DraftError as exc:
                return Reply(raw, problem=str(exc))
        return Reply(raw, problem="the reply is a JSON object without `skm` (the .skm text as a string)")
    if fenced and re.match(r"(import|machine|fragment|record|enum|#)\b", fenced.group(1).strip()):
        return Reply(raw, fenced.group(1))
    if re.match(r"(import|machine|fragment|record|enum)\b", text):
        return Reply(raw, raw)
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if text.startswith("{") and (exc.pos >= len(text) - 2 or exc.msg.startswith("Unterminated string")):
            return Reply(raw, problem=f"the reply is not JSON: it ends before the object does ({exc.msg}); was it cut "
                                      "off at the reply budget? (--max-tokens)")
        return Reply(raw, problem=f"the reply is not JSON ({exc.msg} at character {exc.pos})")
    return Reply(raw, problem="the reply holds no .skm text")


def _relocated(text: str, name: str, real: str) -> str:
    """`.skm` text with `source "NAME"` and `from "NAME":…` pointing at the document's real path."""
    if name == real:
        return text
    pattern = re.compile(r'\b(source|from)(\s+)"' + re.escape(name) + '"')
    return pattern.sub(lambda m: f'{m.group(1)}{m.group(2)}"{real}"', text)


# ---------------------------------------------------------------- rules the document does not back


def _interface(module: n.Module) -> set[str]:
    """Names a rule may start with: states, terminals, instances, tools (declared or taken from a kit)."""
    names: set[str] = set()
    for block in module.items:
        if not isinstance(block, (n.Machine, n.Fragment)):
            continue
        for item in block.items:
            if isinstance(item, (n.State, n.Terminal, n.ToolDecl, n.Use)):
                names.add(item.name)
            elif isinstance(item, n.UseTools):
                names.update(item.tools or KITS.get(item.kit, ()))
    return names


def drop_unbacked_rules(text: str, doc: Document) -> tuple[str, list[Diagnostic]]:
    """The draft without rules whose quotation is not in the document (SKM312) or that name an operation the
    module lacks (SKM313); each dropped rule's lines become blank lines, so line numbers stay the model's."""
    module, _ = parse_text(text)
    if module is None:
        return text, []
    machine = next((x for x in module.items if isinstance(x, n.Machine)), None)
    if machine is None:
        return text, []
    known = _interface(module)
    document = normalise(doc.text)
    cuts: list[tuple[int, int]] = []
    dropped: list[Diagnostic] = []
    for item in machine.items:
        if not isinstance(item, n.Rule) or item.span is None:
            continue
        quote = normalise(item.quote)
        unknown = [o for o in item.ops if o.split(".")[0] not in known]
        if not quote or quote not in document:
            dropped.append(make(codes.QUOTATION_NOT_IN_SKILL, f"dropped `rule {item.kind} {' '.join(item.ops)}`: its "
                                f"quotation is not in {doc.path}: \"{item.quote[:80]}\"",
                                hint="quote the sentence exactly as the skill writes it"))
        elif unknown:
            dropped.append(make(codes.RULE_OUTSIDE_INTERFACE, f"dropped `rule {item.kind} {' '.join(item.ops)}`: "
                                f"`{unknown[0]}` is not a state, instance or tool of the machine",
                                hint="name a state or a declared tool"))
        else:
            continue
        cuts.append((item.span.start, item.span.end))
    for start, end in sorted(cuts, reverse=True):
        text = text[:start] + "\n" * text.count("\n", start, end) + text[end:]
    return text, dropped


# ---------------------------------------------------------------- findings

#: Warnings newer than the corpus's recorded exchanges (corpus/llm), left out of what the model is told until the
#: corpus is recorded again (a request that tells them would no longer match its recorded reply): `skillc check`
#: and the build's own check still report them for the machine that is written.
NOT_SENT_YET: frozenset[Code] = frozenset()



#: The order findings are reported in: syntax, names and types, the checker, injection, the build's own.
def _rank(f: Finding) -> tuple[int, int, str]:
    family = {"0": 0, "1": 1, "2": 2, "5": 3}.get(f.code.code[3:4], 4)
    if f.code == codes.UNCOVERED_CLAUSE:
        family = 6
    elif f.code in (codes.QUOTATION_NOT_IN_SKILL, codes.RULE_OUTSIDE_INTERFACE):
        family = 5
    return (0 if f.severity == "error" else 1, family, f.code.code)


def _solver_dependent(d: Diagnostic) -> bool:
    """A warning that says how the solver fared, not what is wrong with the draft: one that stands on a question it
    gave up on (`undecided`), or an opaque value in a guard (SKM242), reported with the questions it leaves open."""
    return not d.is_error and (undecided(d) or d.code == check_codes.OPAQUE_IN_GUARD)


def _finding(d: Diagnostic, draft_path: str, doc: Document, lines: Sequence[str]) -> Finding:
    line = excerpt = None
    where = "draft"
    if d.span is not None:
        line = d.span.start_pos[0]
        if d.span.source.path == str(doc.path):
            where = "skill"
            excerpt = ""
        elif d.span.source.path == draft_path and 1 <= line <= len(lines):
            excerpt = lines[line - 1].strip()
        else:
            where = d.span.source.path
    if excerpt and len(excerpt) > 90:
        excerpt = excerpt[:89] + "…"
    # The document by its file name, as the request names it: a finding never depends on where the build runs
    # (recorded exchanges replay anywhere).
    name = Path(doc.path).name
    local = re.compile(r"[^\s`'\"]*/" + re.escape(name) + r"\b")
    message = local.sub(name, d.message)
    hint = local.sub(name, d.hint) if d.hint else d.hint
    return Finding(d.code, "error" if d.is_error else "warning", message, line, where, excerpt or "", hint,
                   dict(d.data).get("fragment"))


def feedback(findings: Sequence[Finding], what: str = "draft") -> str:
    """Every finding, grouped by code, most important first, each with its line."""
    groups: dict[Code, list[Finding]] = {}
    for f in sorted(findings, key=_rank):
        groups.setdefault(f.code, []).append(f)
    errors = sum(f.severity == "error" for f in findings)
    head = (f"Your {what} has {errors} error{'s' * (errors != 1)} and {len(findings) - errors} other finding"
            f"{'s' * (len(findings) - errors != 1)} (line numbers are your {what}'s; \"SKILL.md line\" the skill's).")
    out = [head]
    for code, items in groups.items():
        about = f" {code.slug}: {code.summary}"
        hint = next((f.hint for f in items if f.hint), None)
        out.append(f"\n{code}{about} ({items[0].severity}, {len(items)}×)" + (f". Fix: {hint}" if hint else ""))
        out += [f"  - {f.render()}" for f in items]
    return "\n".join(out)


def with_fragment_states(module: n.Module) -> n.Module:
    """The module with its fragments' states and terminals added to the machine, for clause coverage."""
    machine = next((x for x in module.items if isinstance(x, n.Machine)), None)
    if machine is None:
        return module
    extra = tuple(item for f in module.items if isinstance(f, n.Fragment) for item in f.items
                  if isinstance(item, n.State))
    if not extra:
        return module
    merged = attrs.evolve(machine, items=machine.items + extra)
    return attrs.evolve(module, items=tuple(merged if x is machine else x for x in module.items))


@attrs.frozen
class Evaluation:
    """A draft's text as checked, the result, and every finding."""

    text: str
    checked: CheckResult
    findings: tuple[Finding, ...]
    errors: list[Diagnostic]
    dropped: tuple[Diagnostic, ...] = ()  # rules the document does not back, taken out before the check

    @property
    def clean(self) -> bool:
        return not self.errors


# ---------------------------------------------------------------- sections of a large skill


@attrs.frozen
class Section:
    """Lines `start`..`end` of the document, drafted as the fragment `name`."""

    name: str
    title: str
    start: int
    end: int


def _tokens(lines: Sequence[str]) -> int:
    return sum(len(x) + 1 for x in lines) // 4


def _slug(text: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())[:4]
    return "_".join(words) or "part"


def split_sections(doc: Document, budget: int) -> list[Section]:
    """The document in consecutive sections of at most `budget` tokens: pieces cut at every heading (a piece
    still too large at blank lines), merged greedily in order up to the budget."""
    heads = [blk for blk in doc.blocks if blk.kind == "heading"]
    cuts = sorted({1, *(blk.start for blk in heads)}) + [len(doc.lines) + 1]
    pieces = [(cuts[i], cuts[i + 1] - 1) for i in range(len(cuts) - 1) if cuts[i] <= cuts[i + 1] - 1]
    refined: list[tuple[int, int]] = []
    for first, last in pieces:
        while _tokens(doc.lines[first - 1:last]) > budget:
            cut = first
            for i in range(first, last + 1):
                if _tokens(doc.lines[first - 1:i]) > budget:
                    break
                if not doc.lines[i - 1].strip():
                    cut = i
            if cut <= first:  # no blank line early enough: cut where the budget runs out
                cut = next((i - 1 for i in range(first + 1, last + 1) if _tokens(doc.lines[first - 1:i]) > budget),
                           last)
                cut = max(cut, first)
            refined.append((first, cut))
            first = cut + 1
        if first <= last:
            refined.append((first, last))
    groups: list[list[int]] = []
    for first, last in refined:
        if groups and _tokens(doc.lines[groups[-1][0] - 1:last]) <= budget:
            groups[-1][1] = last
        else:
            groups.append([first, last])
    titles = {blk.start: blk.text for blk in heads}
    out: list[Section] = []
    used: set[str] = set()
    for i, (first, last) in enumerate(groups, 1):
        title = next((titles[x] for x in range(first, last + 1) if x in titles), f"lines {first}-{last}")
        name = f"part{i}_{_slug(title)}"
        while name in used:
            name += "_"
        used.add(name)
        out.append(Section(name, title, first, last))
    return out


def outline(doc: Document) -> str:
    """The document's headings with their lines."""
    return "\n".join(f"{'  ' * (b.level - 1)}- line {b.start}: {b.text}" for b in doc.blocks if b.kind == "heading")


# ---------------------------------------------------------------- the compiler


@attrs.define
class Part:
    """One reply's share of the module: the machine (whole, or the outline) or one section's fragment."""

    name: str
    request: str  # the user message that asked for it
    state: str  # the request's state name (`build_draft`, `build_outline`, `build_section:NAME`)
    schema: Object
    reply: Reply | None = None
    section: Section | None = None
    signature: str = ""
    lines: tuple[int, int] = (0, 0)  # where its text sits in the assembled module
    rule_lines: tuple[int, int] = (0, 0)  # where its rules sit (sections)


def numbered(doc: Document, start: int = 1, end: int | None = None) -> str:
    """Lines of the document with their numbers, so the model can cite line ranges."""
    last = len(doc.lines) if end is None else end
    return "\n".join(f"{i:>4} | {doc.lines[i - 1]}" for i in range(start, last + 1))


TASK = """Draft the machine first, then its rules over its own states, in the same reply:

1. States in the skill's order, one per action, each with `from "{source}":A-B` over the lines of its own step \
(a sub-step's lines, not its whole section) and a `doc` saying what it does. Every numbered step, checklist item \
and step heading of the skill is at least one state whose `from` starts at its line. A state reads what the step \
before it produced when the skill uses it ("the failures", "the selected comments"). What the user asked for is \
`input task: str`; the skill's named inputs and `$ARGUMENTS` are inputs too.
2. Decisions stay where the skill makes them: an "if …"/"otherwise", a menu of options or "based on the task" is \
a judge, guard or `ask_user` whose `from` holds the condition's own line (the "If …", "Otherwise" or "When …" \
line, the menu's line), with one edge per arm to that arm's own state; "if X fails, run Y" is an edge from X's \
state to Y's; optional steps ("if needed", "optionally", "suggest") have a path around them; "stop" or "report \
and stop" ends at a terminal with the skill's outcome. Every other step is on every path, in the skill's order: \
a run skips a step only on an edge that one of the skill's own conditions guards.
3. Tool states for everything the skill runs, reads, writes, fetches or asks (bundled scripts from `skill_dir`, \
references read into the states that need them, a `read` state for each file the skill says to read and for \
each input file the user's request names ("the findings are in FINDINGS.md": a model state takes the path from \
`task`), `ask_user` for every question to the user); model and judge states only produce text and labels.
4. Knowledge goes word for word: at run time a state sees only its own prompt and doc, so copy the skill's \
facts, defaults, caveats and prohibitions ("do not …", "never …") verbatim into the prompt or doc of each state \
they govern.
5. Terminals with the skill's outcomes; success requires what tool states produced (or a world predicate). The \
user's request may name files for the results ("write the review to REVIEW.md", "save the prompt to prompt.md and \
the notes to NOTES.md"): where the skill's results are a report, plan, review or other text, a model state reads \
`task` for each path ("" when it names none), a `write` state saves each result where one is named, and that \
success terminal requires `exists(saved)` for each, `saved` being the path its `write` returned.
6. Then the rules: every requirement, order, stop clause and data dependency of the skill that one of the rule \
kinds can prove, over the states you drafted, each quoting its sentence of SKILL.md exactly, with `from`. \
Content prohibitions stay in prompts.
7. Before replying, check against what the build reports: a model state told to act, an unbound placeholder \
or a shell variable carried across calls, an example command run as a step, an output nobody reads, success \
evidence made only by model text, a rule that holds trivially, a numbered step with no state, a condition that no \
state made from its line decides, a sentence of SKILL.md that landed nowhere \
(put it in the prompt or doc of the state it governs rather than widening a `from` past its step)."""


class Compiler:
    """One LLM build: the requests, the replies, the rounds."""

    def __init__(self, executor: Executor, doc: Document, folder: Folder, clauses: list[Clause],
                 structural: n.Module, *, skill: Path, output: Path | None, options: LLMOptions) -> None:
        self.executor, self.doc, self.folder, self.clauses = executor, doc, folder, clauses
        self.structural, self.skill, self.output, self.options = structural, skill, output, options
        # The request names the document by its file name alone, and drafts are checked as if they stood beside
        # it, so no request (nor its recording) depends on where the machine is written; only the kept draft's
        # `source`/`from` paths are rewritten to the output's (`finish`).
        self.source = Path(skill).name
        self.real_source = source_name(skill, output)
        self.draft_at = Path(skill).parent / "draft.skm"
        self.draft_path = str(self.draft_at)
        level = options.card
        if level is None:
            context = getattr(executor, "n_ctx", None)
            level = "brief" if isinstance(context, int) and context < FULL_CARD_CONTEXT else "full"
        self.system = SYSTEM + "\n\n" + card(level)
        self.diags: list[Diagnostic] = []
        self.history: list[Round] = []

    # ------------------------------------------------------------ requests

    def ask(self, part: Part, messages: list[dict[str, str]]) -> Reply:
        reply = self.executor.complete(Request(part.state, "model", tuple(messages), part.schema))
        read = read_reply(reply.text, self.source)
        return attrs.evolve(read, cut=True) if reply.cut else read

    def messages(self, part: Part, findings: Sequence[Finding] | None, extra: str = "") -> list[dict[str, str]]:
        out = [{"role": "system", "content": self.system}, {"role": "user", "content": part.request}]
        if findings is not None and part.reply is not None:
            what = "machine" if part.section is None else f"fragment `{part.section.name}`"
            out += [{"role": "assistant", "content": part.reply.raw},
                    {"role": "user", "content": (extra + "\n\n" if extra else "") + feedback(findings, what)
                     + "\n\nReply with the whole corrected text, in the same JSON form."}]
        return out

    def context(self) -> str:
        return (f"{describe(self.folder)}\n\nSKILL.md (`source \"{self.source}\"`; line numbers on the left, for "
                f"`from` ranges):\n{numbered(self.doc)}")

    def whole_request(self) -> str:
        parts = [self.context()]
        if self.options.offline_draft:
            parts.append("The offline compiler's draft (mechanical: its names, line ranges and prompts may help; "
                         "restructure it freely, keep nothing that is wrong):\n```skm\n"
                         + print_module(self.structural) + "```")
        parts.append(TASK.format(source=self.source))
        parts.append('Reply with {"skm": "<the whole .skm module: imports, fragments, the machine>"}.')
        return "\n\n".join(parts)

    # ------------------------------------------------------------ evaluation

    def evaluate(self, text: str) -> Evaluation:
        text, dropped = drop_unbacked_rules(text, self.doc)
        checked = check_text(text, self.skill, self.draft_at)
        wider = wider_allow(checked.machine, self.folder) if checked.machine is not None else []
        errors = [d for d in checked.diagnostics if d.is_error] + wider
        found = [d for d in checked.diagnostics
                 if d.is_error or (d.severity is Severity.WARNING and d.code not in NOT_SENT_YET)] + wider
        if not errors and checked.machine is not None:
            found += smells(checked.machine, self.doc, scripts=len(self.folder.scripts))
        found += dropped
        if not errors and checked.module is not None:
            for row in landings(with_fragment_states(checked.module), self.clauses):
                if not row.covered:
                    found.append(make(codes.UNCOVERED_CLAUSE,
                                      f"this clause landed nowhere: \"{row.clause.text[:100]}\"",
                                      self.doc.span(row.clause.start, row.clause.end),
                                      hint="copy it into the prompt or doc of the state it governs, quote it in a "
                                           "rule, or cover its line with the `from` of the state made from its step"))
        lines = text.splitlines()
        # Whether a question near its budget is decided depends on the solver's luck (`skillc.check.context.
        # UNDECIDED`), not on the draft: such warnings are not sent back, so a request does not depend on it.
        findings = tuple(_finding(d, self.draft_path, self.doc, lines) for d in found if not _solver_dependent(d))
        return Evaluation(text, checked, findings, errors, tuple(dropped))

    def record(self, number: int, ev: Evaluation | None, problems: Sequence[str], parts: Sequence[str]) -> None:
        if ev is None:
            self.history.append(Round(number, list(problems), False,
                                      tuple(Finding(codes.DRAFT_NOT_VALID, "error", p) for p in problems),
                                      tuple(parts)))
            return
        errors = [f"{d.code} {d.message}" + (f" (line {d.span.start_pos[0]})" if d.span else "")
                  + (f"; hint: {d.hint}" if d.hint else "") for d in ev.errors]
        self.history.append(Round(number, errors, ev.clean, ev.findings, tuple(parts)))

    def invalid(self, number: int, what: str, problem: str) -> None:
        self.diags.append(make(codes.DRAFT_NOT_VALID, f"draft {number} was not a valid machine: {what}{problem}",
                               hint="the next round tells the model what was wrong"))

    # ------------------------------------------------------------ the two shapes

    def run(self) -> Draft | None:
        if _tokens(self.doc.lines) > self.options.section_tokens:
            sections = split_sections(self.doc, self.options.section_tokens)
            if len(sections) > 1:
                return self.sectioned(sections)
        return self.whole()

    def whole(self) -> Draft | None:
        part = Part("machine", self.whole_request(), "build_draft", DRAFT_SCHEMA)
        best: Evaluation | None = None
        last: Sequence[Finding] | None = None
        for number in range(1, self.options.rounds + 1):
            reply = self.ask(part, self.messages(part, last))
            part.reply = reply
            if reply.cut and (sections := self.halves()):
                self.invalid(number, "", f"it was cut off at the reply budget (--max-tokens {self.options.max_tokens})"
                                         f"; the skill is drafted in {len(sections)} sections instead")
                self.record(number, None, ["cut off at the reply budget"], ["machine"])
                return self.sectioned(sections)
            if reply.cut:
                reply = part.reply = attrs.evolve(reply, skm=None, problem=(
                    f"the reply was cut off at the reply budget ({self.options.max_tokens} tokens): write a shorter "
                    "machine (broader states, the skill's text copied once)"))
            if reply.skm is None:
                problem = reply.problem or "no .skm text"
                self.invalid(number, "", problem)
                self.record(number, None, [problem], ["machine"])
                last = [Finding(codes.DRAFT_NOT_VALID, "error", problem)]
                continue
            ev = self.evaluate(reply.skm)
            self.record(number, ev, [], ["machine"])
            if ev.clean and (best is None or len(ev.findings) <= len(best.findings)):
                best = ev
            if ev.clean and not ev.findings:
                break
            last = ev.findings
        return self.finish(best)

    def halves(self) -> list[Section]:
        """Sections of at most half the document, for a whole draft that did not fit its reply budget (none when the
        document does not split)."""
        size = _tokens(self.doc.lines)
        if size < MIN_SPLIT_TOKENS:
            return []  # a few lines that overflow a reply are a runaway reply, told back to the model
        sections = split_sections(self.doc, size // 2)
        return sections if len(sections) > 1 else []

    def sectioned(self, sections: list[Section]) -> Draft | None:
        machine = Part("machine", self.outline_request(sections), "build_outline", OUTLINE_SCHEMA)
        parts = [Part(s.name, "", f"build_section:{s.name}", SECTION_SCHEMA, section=s) for s in sections]
        best: Evaluation | None = None
        findings: dict[str, list[Finding]] = {}
        redo = {"machine", *(p.name for p in parts)}
        for number in range(1, self.options.rounds + 1):
            drafted: list[str] = []
            problems: list[str] = []
            if "machine" in redo:
                reply = self.ask(machine, self.messages(machine, findings.get("machine") if number > 1 else None))
                machine.reply = reply
                drafted.append("machine")
                if reply.skm is not None and len(reply.signatures) != len(sections):
                    reply = attrs.evolve(reply, problem=f"`signatures` must hold {len(sections)} fragment signatures, "
                                                        f"one per section, not {len(reply.signatures)}")
                    machine.reply = reply
                if reply.skm is None or reply.problem:
                    problem = reply.problem or "no .skm text"
                    self.invalid(number, "the outline: ", problem)
                    problems.append(f"outline: {problem}")
                    findings = {"machine": [Finding(codes.DRAFT_NOT_VALID, "error", problem)]}
                    self.record(number, None, problems, drafted)
                    continue
                for p, signature in zip(parts, reply.signatures):
                    if signature.strip() != p.signature:
                        p.signature = signature.strip()
                        redo.add(p.name)
            instances = self.instances(machine.reply.skm if machine.reply and machine.reply.skm else "")
            for p in parts:
                if p.name not in redo:
                    continue
                p.request = self.section_request(p, instances.get(p.name, p.name), machine)
                told = findings.get(p.name, [] if p.reply is not None else None)
                extra = "" if p.name in findings else "The machine or this section's signature changed."
                reply = self.ask(p, self.messages(p, told, extra))
                p.reply = reply
                drafted.append(p.name)
                if reply.skm is None:
                    problem = reply.problem or "no .skm text"
                    self.invalid(number, f"section {p.name}: ", problem)
                    problems.append(f"{p.name}: {problem}")
            if problems:
                self.record(number, None, problems, drafted)
                findings = {}
                for x in problems:
                    name, _, problem = x.partition(": ")
                    findings.setdefault("machine" if name == "outline" else name, []).append(
                        Finding(codes.DRAFT_NOT_VALID, "error", problem))
                redo = set(findings)
                continue
            text = self.assemble(machine, parts)
            ev = self.evaluate(text)
            self.record(number, ev, [], drafted)
            if ev.clean and (best is None or len(ev.findings) <= len(best.findings)):
                best = ev
            if ev.clean and not ev.findings:
                break
            findings = self.distribute(ev.findings, machine, parts)
            redo = set(findings)
        return self.finish(best)

    # ------------------------------------------------------------ sections

    def outline_request(self, sections: list[Section]) -> str:
        listing = "\n".join(f"- `{s.name}`: lines {s.start}-{s.end} ({s.title})" for s in sections)
        return (f"{self.context()}\n\nDocument outline:\n{outline(self.doc)}\n\n"
                f"This skill is drafted in {len(sections)} sections, one fragment each, so that no reply grows too "
                f"large:\n{listing}\n\n"
                "First, the outline: write the machine — `source`, `use tools`, `allow`, the inputs and the "
                "variables the sections share, one `use FRAGMENT as INSTANCE(PARAM: VAR, …) -> (EXIT: TARGET, …)` per "
                "section in this order (the fragment names above; the first instance is `start`), the terminals, "
                "`fallback`, and the rules that span sections (over `INSTANCE.state` names the sections will define, "
                "or over instances). No fragment bodies yet: give each section's signature, "
                "`fragment NAME(PARAM: TYPE, …) -> (EXIT, …)`, whose parameters are the shared variables it reads or "
                "writes (bound to machine variables of the same type) and whose exits are where it can end.\n\n"
                + TASK.format(source=self.source) + "\n\n"
                'Reply with {"skm": "<the machine>", "signatures": ["fragment …", …]} (signatures in section order).')

    def section_request(self, part: Part, instance: str, machine: Part) -> str:
        s = part.section
        assert s is not None, "a section part has its section"
        return (f"{describe(self.folder)}\n\nDocument outline:\n{outline(self.doc)}\n\n"
                f"The machine (the outline, already written):\n"
                f"```skm\n{machine.reply.skm if machine.reply and machine.reply.skm else ''}\n```\n\n"
                f"Now write section `{s.name}`: SKILL.md lines {s.start}-{s.end} (`source \"{self.source}\"`):\n"
                f"{numbered(self.doc, s.start, s.end)}\n\n"
                f"as the fragment with exactly this signature:\n  {part.signature} {{ … }}\n"
                f"It is used as `{instance}`. It has its own `start`, states, private `var`s and `counter`s, and "
                "the tools it calls (`use tools std(…)` with the tools the machine took); no terminal, fallback, "
                "`source` or `allow`. Its edges leave through its exits. Give each state `from` with its lines.\n\n"
                f"{TASK.format(source=self.source)}\n\nThe section's rules go in `rules`, as whole `rule` lines over "
                f"`{instance}.STATE` (they are placed in the machine; rules inside a fragment do not count).\n\n"
                'Reply with {"skm": "<the fragment>", "rules": ["rule …", …]}.')

    @staticmethod
    def instances(machine_text: str) -> dict[str, str]:
        """Fragment name → instance name, from the outline's `use` lines."""
        return {m.group(1): m.group(2) for m in re.finditer(r"\buse\s+(\w+)\s+as\s+(\w+)\s*\(", machine_text)}

    @staticmethod
    def assemble(machine: Part, parts: list[Part]) -> str:
        """The module: the fragments, then the machine with the sections' rules before its closing brace."""
        out: list[str] = []
        line = 1
        for p in parts:
            text = (p.reply.skm if p.reply and p.reply.skm else "").strip("\n") + "\n"
            p.lines = (line, line + text.count("\n") - 1)
            out.append(text + "\n")
            line += text.count("\n") + 1
        body = (machine.reply.skm if machine.reply and machine.reply.skm else "").rstrip()
        close = body.rfind("}")
        head, tail = (body[:close].rstrip("\n") + "\n", body[close:]) if close >= 0 else (body + "\n", "")
        machine_start = line
        line += head.count("\n")
        rules_text = ""
        for p in parts:
            rules = [r.strip() for r in (p.reply.rules if p.reply else ()) if r.strip()]
            p.rule_lines = (line, line + len(rules) - 1) if rules else (0, 0)
            rules_text += "".join(f"  {r}\n" for r in rules)
            line += len(rules)
        machine.lines = (machine_start, line + tail.count("\n"))
        return "".join(out) + head + rules_text + tail + "\n"

    def distribute(self, findings: Sequence[Finding], machine: Part, parts: list[Part]) -> dict[str, list[Finding]]:
        """Each finding to the part that holds its line (clauses to the section that holds them)."""
        out: dict[str, list[Finding]] = {}
        for f in findings:
            owner = "machine"
            line = f.line
            if line is not None and f.where == "skill":
                owner = next((p.name for p in parts if p.section and p.section.start <= line <= p.section.end),
                             "machine")
            elif line is not None and f.where == "draft":
                for p in parts:
                    if p.lines[0] <= line <= p.lines[1]:
                        owner = p.name
                        f = attrs.evolve(f, line=line - p.lines[0] + 1)
                        break
                    if p.rule_lines[0] and p.rule_lines[0] <= line <= p.rule_lines[1]:
                        owner = p.name
                        f = attrs.evolve(f, line=None, message=f"(rule {line - p.rule_lines[0] + 1} of your "
                                                                 f"`rules`) {f.message}")
                        break
                else:
                    f = attrs.evolve(f, line=line - machine.lines[0] + 1)
                    # A finding the instantiation of a fragment reports at its `use` line (a tool it calls that the
                    # machine does not declare, a parameter it writes that is an input) may be the section's to
                    # fix: it goes to that section too.
                    section = next((p for p in parts if p.name == f.fragment), None) if f.fragment else None
                    if section is not None:
                        out.setdefault(section.name, []).append(
                            attrs.evolve(f, line=None, message=f"(reported at the machine's `use` line of this "
                                                               f"fragment) {f.message}"))
            out.setdefault(owner, []).append(f)
        return out

    # ------------------------------------------------------------ the result

    def finish(self, best: Evaluation | None) -> Draft | None:
        if best is None:
            last = self.history[-1] if self.history else None
            rounds = self.options.rounds
            self.diags.append(make(codes.DRAFT_NEVER_CHECKED, f"no draft checked clean in {rounds} "
                                   f"round{'s' * (rounds != 1)}; the last one had {len(last.errors) if last else 0} "
                                   f"error{'s' * (not last or len(last.errors) != 1)}",
                                   notes=list(last.errors[:10]) if last else [],
                                   hint="raise --rounds, use a stronger model, or build offline (no --model)"))
            return None
        text = _relocated(best.text, self.source, self.real_source)
        checked = check_text(text, self.skill, self.output) if text != best.text else best.checked
        formatted, _ = format_source(text)
        if formatted is not None and formatted != text:
            again = check_text(formatted, self.skill, self.output)
            if not any(d.is_error for d in again.diagnostics):
                text, checked = formatted, again
        if checked.machine is not None:  # the smells of the machine kept, as warnings on its text
            self.diags += smells(checked.machine, self.doc, scripts=len(self.folder.scripts))
        self.diags += best.dropped
        return Draft(text, checked)


def llm_build(doc: Document, clauses: list[Clause], structural: n.Module, *, skill: Path, output: Path | None,
              model: str | None, executor: Executor | None = None, rounds: int = 3,
              base_url: str | None = None, options: LLMOptions | None = None,
              ) -> tuple[Draft | None, list[Diagnostic], list[Round]]:
    """Draft and redraft a machine with a model; the formatted, checked draft, or None with the reasons."""
    options = attrs.evolve(options, rounds=rounds) if options is not None else LLMOptions(rounds=rounds)
    own = executor is None
    if executor is None:
        try:
            executor = make_build_executor(model or "", base_url, options.max_tokens, options.timeout_s)
        except ExecutorError as exc:
            code = codes.NO_RECORDED_REPLY if isinstance(exc, NoRecording) else codes.MODEL_FAILED
            return None, [make(code, f"cannot use model {model!r}: {exc}")], []
    compiler = Compiler(executor, doc, read_folder(skill, doc.front), clauses, structural, skill=skill, output=output,
                        options=options)
    try:
        draft = compiler.run()
        return draft, compiler.diags, compiler.history
    except NoRecording as exc:
        compiler.diags.append(make(codes.NO_RECORDED_REPLY, str(exc),
                                   hint="record the exchange again (docs/build.md, \"Recording real replies\")"))
        return None, compiler.diags, compiler.history
    except ExecutorError as exc:
        compiler.diags.append(make(codes.MODEL_FAILED, f"the model backend failed: {exc}",
                                   hint="check the endpoint and model name, or build offline (no --model)"))
        return None, compiler.diags, compiler.history
    finally:
        if own:
            executor.close()


def rounds_report(rounds: Sequence[Round]) -> str:
    """The report's section on the LLM rounds: each draft, what it was, and every finding sent back."""
    out = ["LLM rounds:"]
    for r in rounds:
        status = "checked clean" if r.ok else f"{len(r.errors)} error{'s' * (len(r.errors) != 1)}"
        drafted = ", ".join(r.parts)
        out.append(f"  round {r.number} ({drafted}): {status}, {len(r.findings)} finding"
                   f"{'s' * (len(r.findings) != 1)}")
        for f in sorted(r.findings, key=_rank):
            out.append(f"    {f.code} {f.render()}")
    return "\n".join(out)


def request_size(doc: Document, skill: Path, output: Path | None, structural: n.Module,
                 options: LLMOptions | None = None) -> dict[str, int]:
    """Characters of the first request for a skill (system and user message), without calling a model."""
    compiler = Compiler(cast(Executor, BaseExecutor()), doc, read_folder(skill, doc.front), [], structural, skill=skill,
                        output=output, options=options or LLMOptions())
    if _tokens(doc.lines) > compiler.options.section_tokens:
        sections = split_sections(doc, compiler.options.section_tokens)
        if len(sections) > 1:
            return {"system": len(compiler.system), "user": len(compiler.outline_request(sections)),
                    "sections": len(sections)}
    return {"system": len(compiler.system), "user": len(compiler.whole_request()), "sections": 1}


__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_SECTION_TOKENS", "Finding", "LLMOptions", "Round",
           "feedback", "llm_build", "make_build_executor", "read_reply", "rounds_report",
           "split_sections", "with_fragment_states"]
