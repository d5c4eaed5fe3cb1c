"""Clause extraction: split a skill document into sentences with line ranges and classify each.

Classes (`Clause.kind`):

- `step` — an action of the procedure (a numbered item, a `Step N` heading, an
  imperative sentence of a procedure section, a checklist item to carry out);
- `branch` — a condition with an action: "If …, …", "Otherwise, …", a decision tree line;
- `loop` — "Repeat until …", "… until …", "try at most N times";
- `verify` — "Verify that …", "Check that …", "Make sure …", checklist items;
- `require` — "must", "always", "required", "CRITICAL";
- `forbid` — "never", "do not", "must not";
- `terminate` — "Stop when …", "You are done when …";
- `command` — a fenced block of shell commands (attached to the step before it);
- `knowledge` — everything else: background, definitions, tips, table rows.

The classes are decided by cue words and by where a sentence stands (its list,
its section heading); `procedure_present` tells whether the document has a
procedure at all.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence

import attrs

from skillc.frontends.markdown.document import Block, Document
from skillc.frontends.markdown.names import content_stems

KINDS = ("step", "branch", "loop", "verify", "require", "forbid", "terminate", "command", "knowledge")


@attrs.frozen
class Clause:
    """One classified sentence (or fence, or table row) with its 1-based inclusive line range."""

    index: int
    kind: str
    text: str
    start: int
    end: int
    section: tuple[str, ...] = ()
    block: Block | None = attrs.field(default=None, eq=False, repr=False)
    ordinal: int | None = None  # the number of the step it belongs to (numbered lists, Step N headings)
    lead: str = ""  # a word its list's heading says of it ("Avoid", under "❌ Don't"), kept where it is said

    @property
    def said(self) -> str:
        """The text as a prompt says it: with its lead ("Avoid: Deploy without testing")."""
        return f"{self.lead}: {self.text}" if self.lead else self.text

    @property
    def lines(self) -> str:
        """`12` or `12-14`."""
        return str(self.start) if self.start == self.end else f"{self.start}-{self.end}"


# Cue words. Matching is case-insensitive on the text with markdown emphasis removed.
_FORBID = re.compile(r"^(?:\w+:\s*)?(?:never|do not|don't|must not|mustn't|shall not|should not|avoid|"
                     r"under no circumstances|not allowed)\b|\b(?:you|we|agents?)\s+(?:must|should|shall|may|"
                     r"can)\s*(?:not|never)\b|\b(?:must never|mustn't|is forbidden|are forbidden|is prohibited|"
                     r"are prohibited|not allowed to|do not|don't)\b", re.I)
_REQUIRE = re.compile(r"\b(?:must|always|required|mandatory|shall|critical|important|be sure to|"
                      r"it is essential)\b", re.I)
# "required" naming a thing, not demanding it: "a summary of what would be required to apply a fix".
_WHAT_IS_REQUIRED = re.compile(r"\bwhat (?:would|will|is|are|might|may) be required\b", re.I)
_BRANCH = re.compile(r"^(?:if|in case|unless|should|otherwise|else|when(?=.*,\s*(?:then\s+)?\w))\b", re.I)
_LOOP = re.compile(r"^(?:repeat|retry|keep \w+ing)\b|\buntil\b|"
                   r"\b(?:try|attempt|retry|repeat)\b.*\b(?:at most|up to)\b", re.I)
_VERIFY = re.compile(r"^(?:verify|check|make sure|ensure|confirm|validate|double-check|test that|assert)\b", re.I)
_TERMINATE = re.compile(r"^(?:stop|you are done|you're done|finish|the task is (?:done|complete)|"
                        r"done when|end the|terminate|exit)\b|\b(?:you are done when|stop when)\b", re.I)
# An all-caps label opening a step: "RED - write a failing test", "CHECKPOINT: summarize progress".
_CAPS_LABEL = re.compile(r"^(?:\*\*)?[A-Z][A-Z-]{2,}(?:\s+[A-Z][A-Z-]+)?(?:\*\*)?\s*[-–—:]\s+\S")
# A stop with its condition after it: "Stop and report if …", "Abort when …".
_STOP_IF = re.compile(r"^(?:stop|abort|halt|give up)\b[^.;]*?\b(?:if|unless)\b", re.I)
# A section after the procedure that says what to deliver: producing it is the last step.
_DELIVERABLE = re.compile(r"^(?:output|output format|report|report format|final (?:summary|report|output|deliverable)|"
                          r"deliverables?|summary report|response format|final review)$", re.I)
# The first column of a workflow table whose rows are steps.
_STEP_COLUMN = re.compile(r"^(?:step|#|no\.?|phase|stage)$", re.I)
# "Step 3:" opening a paragraph or an item: the step numbered so.
_STEP_LABEL = re.compile(r"^step\s*(\d+)\s*[:.)\-–—]\s*\S", re.I)
# "For each group (starting with the largest):": a loop over the list that follows.
FOREACH = re.compile(r"^(?:then\s+)?for (?:each|every)\b(.*?):$", re.I)
# A paragraph that says what to do before the procedure.
_PREREQ = re.compile(r"^(?:prereq(?:uisite)?s?|before you (?:begin|start)|first(?: of all)?|setup)\s*:", re.I)
_TRIGGER = re.compile(r"^(?:use this skill|this skill|apply this skill|invoke this skill)\b", re.I)
# `Step 1: …`, `Phase 2 - …`, `GATE 1: …`, and plainly numbered headings `1. …`, `2) …`.
_STEP_HEADING = re.compile(r"^(?:(?:step|phase|stage|gate)\s*(?=\d)|(?=\d+\s*[.)]\s))(\d+)\s*[:.)\-–—]?\s*(.*)$",
                           re.I)
_PROCEDURE = re.compile(r"\b(?:procedure|steps?|workflow|process|instructions|checklist|runbook|playbook|"
                        r"recipe|what to do|method)\b", re.I)
_RULES = re.compile(r"\b(?:rules?|polic(?:y|ies)|constraints?|guidelines?|principles|requirements|"
                    r"(?:best )?practices|conventions|"
                    r"prohibitions|don'?ts|never)\b", re.I)
_DONE = re.compile(r"\b(?:done|termination|finish(?:ing)?|completion|exit criteria|when to stop|"
                   r"deliverables?)\b", re.I)
_KNOWLEDGE = re.compile(r"^context$|\b(?:background|overview|reference|definitions?|glossary|tips?|notes?|faq|about|"
                        r"examples?|useful|tools|commands|reading|concepts?|terminology|appendix|"
                        r"exceptions|see also|common errors|troubleshooting|options|why|when (?:not )?to use|"
                        r"bundled|scripts|script|resources|helpers|utilities)\b|^[\w./-]+\.(?:py|sh|js|ts|rb|md)$",
                        re.I)
# Sections of examples, samples and output formats: knowledge wherever they stand, whatever they look like.
_EXAMPLE = re.compile(r"\b(?:examples?|samples?|demos?|illustrations?|use cases?|usage patterns?|"
                      r"(?:output|report|response) (?:format|template)|templates?)\b", re.I)
_SHELL = {"bash", "sh", "shell", "console", "zsh", "shell-session", "powershell", "ps1", "cmd", "bat", "fish"}
_TREE = re.compile(r"[├└│]|^\s*[|`+\\]--|→|->")
_EMPH = re.compile(r"\*\*|__|(?<!\w)[*_]|[*_](?!\w)|`")
_ABBREV = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|no|fig|min|max|incl)|\b[A-Z])\.$", re.I)
_SPLIT = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9`*_\"(\[])|;\s+(?=if\s)")  # "Search first; if …" too

# Imperative verbs that commonly open a step. A sentence outside numbered lists is a step
# only when its first word is one of these (nouns and pronouns open knowledge).
VERBS = frozenset([
    "add", "analyse", "analyze", "announce", "answer", "apply", "approve", "archive", "ask", "assign", "attach",
    "avoid", "back", "build", "bump", "calculate", "call", "cancel", "capture", "change", "check", "choose",
    "clean", "clear", "clone", "close", "collect", "commit", "compare", "compile", "compute", "configure",
    "confirm", "connect", "copy", "count", "create", "cut", "decide", "declare", "decline", "define", "delete",
    "deploy", "describe", "design", "determine", "diff", "disable", "document", "download", "draft", "drop",
    "edit", "email", "enable", "enter", "escalate", "estimate", "evaluate", "examine", "execute", "explain",
    "export", "extract", "fetch", "file", "fill", "find", "fix", "flag", "follow", "force", "format", "gather",
    "generate", "go", "grant", "grep", "identify", "implement", "import", "inform", "inspect", "install",
    "investigate", "keep", "label", "launch", "list", "load", "locate", "log", "look", "make", "mark", "measure",
    "merge", "migrate", "move", "name", "navigate", "note", "notify", "open", "outline", "page", "parse", "paste",
    "patch", "pick", "ping", "place", "plan", "post", "prepare", "print", "prioritize", "produce", "profile",
    "provide", "publish", "pull", "purge", "push", "put", "query", "read", "rebase", "rebuild", "record", "redact",
    "refactor", "refresh", "register", "reject", "release", "reload", "remove", "rename", "render", "reopen",
    "reorder", "repeat", "replace", "reply", "report", "reproduce", "request", "rerun", "reset", "resolve",
    "restart", "restore", "resume", "retry", "return", "review", "revert", "rewrite", "roll", "rotate", "route",
    "run", "save", "scan", "schedule", "search", "select", "send", "set", "share", "ship", "sign", "skim", "sort",
    "specify", "split", "stage", "start", "state", "submit", "summarize", "summarise", "switch", "tag", "take",
    "tell", "test", "trace", "track", "translate", "trigger", "triage", "try", "turn", "type", "undo", "uninstall",
    "unpack", "update", "upgrade", "upload", "use", "validate", "verify", "view", "visit", "wait", "walk", "watch",
    "write", "assess", "audit", "bring", "categorize", "classify", "compose", "consult", "convert", "craft",
    "deliver", "derive", "detect", "display", "draft", "ensure", "explain", "group", "invoke", "iterate", "lint",
    "map", "mirror", "number", "offer", "optimize", "pause", "present", "propose", "refine", "reinstall",
    "scaffold", "scope", "score", "show", "suggest", "understand", "wire",
])


def strip_markup(text: str) -> str:
    """Text without emphasis markers and code ticks, on one line."""
    return re.sub(r"\s+", " ", _EMPH.sub("", text)).strip()


def shorten(text: str, limit: int) -> str:
    """Text on one line, cut to `limit` characters with `…` when longer."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


#: A defined term leading a sentence: "**build fits intent** — …", "**Counts:** …".
_TERM_LEAD = re.compile(r"^\s*(?:\*\*|__)[^*_]+(?:\*\*|__)\s*[—–:-]\s*")


def split_sentences(text: str) -> list[tuple[str, int, int]]:
    """Sentences of a paragraph with their first and last line offsets inside the paragraph."""
    out: list[tuple[str, int, int]] = []
    pos = 0
    for m in _SPLIT.finditer(text):
        if _ABBREV.search(text[pos:m.start()].rstrip("\"')]")):
            continue
        if m.group().startswith(";") and (text[:m.start()].count("`") % 2
                                          or not is_imperative(_TERM_LEAD.sub("", text[pos:m.start()].strip()))):
            continue  # "Flags may change; if …" is one remark, `a; if …` code; "Search first; if …" two steps
        out.append((text[pos:m.start()], pos, m.start()))
        pos = m.end()
    out.append((text[pos:], pos, len(text)))
    return [(s.strip(), text.count("\n", 0, a), text.count("\n", 0, max(a, b - 1))) for s, a, b in out if s.strip()]


def first_word(text: str) -> str:
    """The first word, lower-cased, after emphasis and a `Label:` prefix are removed."""
    plain = strip_markup(text)
    for _ in range(2):  # "Step 5: Check: …"
        plain = re.sub(r"^(?:[A-Z][\w ]{0,20}:)\s+", "", plain)
    m = re.match(r"[A-Za-z][A-Za-z'-]*", plain)
    return m.group(0).lower() if m else ""


#: A time clause opening a sentence before its instruction: "After the build, ", "For each file, ".
WHEN_FIRST = re.compile(r"^(?:after|before|once|for each|for every)\b[^,]{0,60},\s*", re.I)


def is_imperative(text: str) -> bool:
    """True when a sentence opens with an imperative verb ("Run …", "Then open …", "First, read …"); a sentence opening
    with a name in backticks ("`convert_file` takes …") is about that name."""
    if re.match(r"^\s*(?:\*\*|__)?`", text):
        return False
    plain = re.sub(r"^(?:then|first|next|finally|now|also|afterwards|and)\b,?\s*", "", strip_markup(text), flags=re.I)
    plain = WHEN_FIRST.sub("", plain)
    return first_word(plain) in VERBS and not _USE_THIS.match(plain)


#: A sentence about how to read the document itself ("Use this to guide your review, not as a pass/fail checklist",
#: "Use these tables as a reference"): guidance, not a step.
_USE_THIS = re.compile(r"^(?:use|read)\s+(?:this|these|the\s+(?:above|following))"
                       r"(?:\s+(?:checklist|list|guide|table|tables|section|reference|framework|rubric|questions))?"
                       r"\s+(?:to\s+guide|as\s+(?:a\s+)?(?:guide|guidance|reference|starting point))\b", re.I)


# A check on the agent's own reasoning ("If you catch yourself thinking any of these, STOP"): a prohibition.
_SELF_CHECK = re.compile(r"^(?:if|when(?:ever)?)\s+you\s+(?:catch|find|notice)\s+yourself\b", re.I)


def classify(text: str) -> str:
    """The cue-word class of one sentence: branch, loop, verify, require, forbid, terminate or ''."""
    plain = strip_markup(text)
    if _SELF_CHECK.match(plain):
        return "forbid"  # "If you catch yourself thinking any of these, STOP": a thought to reject, not a run's end
    if _STOP_IF.match(plain):
        return "branch"  # "Stop and report if the PR is no longer ready": a condition that ends the run
    if _FORBID.search(plain) and not re.match(r"^(?:if|unless)\b", plain, re.I):
        return "forbid"
    if _TERMINATE.search(plain):
        return "terminate"
    if re.match(r"^(?:repeat|retry|keep (?:going|trying|\w+ing\b))", plain, re.I) or (
            _LOOP.search(plain) and not _BRANCH.match(plain)):
        return "loop"
    if _BRANCH.match(plain) or _BRANCH.match(re.sub(r"^[A-Z][\w ]{0,20}:\s+", "", plain)):
        return "branch"  # "Fallback: If the script fails, …"
    if _VERIFY.match(re.sub(r"^(?:then|finally|also)\b,?\s*", "", plain, flags=re.I)):
        return "verify"
    if _REQUIRE.search(_WHAT_IS_REQUIRED.sub("", plain)):
        return "require"
    return ""


def looks_like_tree(text: str) -> bool:
    """A code fence that draws a decision tree with box characters or arrows (not a folder's layout)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    branches = [ln for ln in lines if re.search(r"[├└]|^\s*[|`+]--", ln)]
    return len(lines) >= 3 and len(branches) >= 2 and not _file_layout(branches)


#: A branch of a folder's layout: `├── raw/  # Per-scan raw output`, `└── recording_g0_t0.imec0.ap.bin`, `│ └── ...`.
_PATH_BRANCH = re.compile(r"^[\s│|`+\\├└─-]*(?:\.?[\w$<>{}*@][\w$<>{}*@.-]*/)*"
                          r"(?:\.?[\w$<>{}*@][\w$<>{}*@.-]*(?:/|\.[A-Za-z]\w{0,5})|\.[\w][\w.-]*/?|\.\.\.)"
                          r"\s*(?:(?:#|←|<-|--|—)\s.*|\(.*\))?$")


def _file_layout(branches: list[str]) -> bool:
    """Branches that are mostly files and folders (a name ending in `/` or in an extension): a layout, not choices."""
    return sum(bool(_PATH_BRANCH.match(b)) for b in branches) * 3 >= len(branches) * 2


#: A heading whose list says what not to do: "❌ Don't", "Avoid", "Never", "Anti-patterns", "Common mistakes",
#: "Pitfalls". Its items are prohibitions whatever their mood ("Deploy without testing"), and keep the heading's word.
_DONT_HEADING = re.compile(r"^\W*(?:don'?t|do not|avoid|never|anti-?patterns?|common (?:mistakes|pitfalls)|pitfalls"
                           r"|what not to do)\b", re.I)


# A section summing up the procedure ("## Quick start", "## TL;DR"): knowledge where the document has the procedure.
_SUMMARY = re.compile(r"^\W*(?:quick\s*-?\s*start|tl;?\s*dr|at a glance|in short|cheat\s*-?\s*sheet)\b", re.I)
# A sentence introducing samples: the list or table right after it shows examples, not things to do.
_SAMPLE_LEAD = re.compile(r"(?:\bexamples?\b|\be\.g\.|\bfor (?:example|instance)\b|\bsamples?\b|\bsuch as\b|"
                          r"\b(?:output|print|display|show|present|respond|reply|say|format|report)\b.*\b(?:as follows|"
                          r"like this|looks? like|(?:in|using) (?:this|the following) (?:format|template|structure)|"
                          r"as a (?:markdown )?table)\b)[^:]*:$", re.I)
# A paragraph that only introduces examples: "**Examples:**", "Example - find server signatures:", "For example:".
_EXAMPLES_LEAD = re.compile(r"^(?:(?:more |some |usage )?examples?|for (?:example|instance)|e\.g\.)\b[^.:]{0,60}:$",
                            re.I)
_QUOTES = re.compile(r'^\s*(?:"""|\'\'\')')


def _samples(doc: Document) -> set[int]:
    """Lines of sample content: the list or table right after a sentence introducing examples or an output's shape
    ("Example assessments:", "Display results as a markdown table:"), and text between lines of triple quotes."""
    out: set[int] = set()
    quoted = [i + 1 for i, line in enumerate(doc.lines) if _QUOTES.match(line)]
    for a, z in zip(quoted[::2], quoted[1::2]):
        out |= set(range(a + 1, z))
    blocks = doc.blocks
    for i, b in enumerate(blocks):
        if b.kind not in ("para", "item") or not _SAMPLE_LEAD.search(strip_markup(b.text).strip()):
            continue
        for x in _shown(b, blocks[i + 1:]):
            out |= set(range(x.start, x.end + 1))
    return out


def _shown(lead: Block, after: Sequence[Block]) -> Iterator[Block]:
    """The list, the table or the fence right after a lead: one list (numbered or not, with its nested items), one
    table, or (after a paragraph) one code block."""
    first = after[0] if after else None
    if first is not None and first.kind == "code":  # "**Examples:**" and a fence: only a lead naming examples
        if lead.kind == "para" and _EXAMPLES_LEAD.match(strip_markup(lead.text).strip()):
            yield first
        return
    if first is None or first.kind not in ("row", "item") or (first.kind == "item" and first.depth <= lead.depth):
        return
    for x in after:
        if x.kind != first.kind or (x.kind == "item" and (x.depth <= lead.depth or (
                x.depth <= first.depth and x.ordered != first.ordered))):
            return
        yield x


#: A defined term opening a list item: "**Start/End nodes**: rounded rectangles", "**Counts:** X true positives".
_TERM = re.compile(r"^\s*(?:\*\*|__)[^*_:]{1,60}(?::(?:\*\*|__)|(?:\*\*|__):)\s*(?P<said>\S.*)$", re.S)


def _definitions(doc: Document) -> set[int]:
    """Lines of numbered lists that define terms rather than order work, where the document has a procedure
    elsewhere: two or more sibling items outside a procedure section, every one `**Term**: description`, no
    description an instruction or a question ("1. **Start/End nodes**: rounded rectangles" under `## Components`)."""
    if not _has_procedure_section(doc):
        return set()
    out: set[int] = set()
    for found, blocks in _numbered_lists(doc):
        terms = [_TERM.match(b.text) for b in found]
        if len(found) < 2 or _section_role(found[0].section) == "procedure" or not all(terms) \
                or any(is_imperative(m.group("said")) or "?" in m.group("said") for m in terms if m is not None):
            continue
        out |= {x for b in blocks for x in range(b.start, b.end + 1)}
    return out


def _numbered_lists(doc: Document) -> Iterator[tuple[list[Block], list[Block]]]:
    """Each numbered list of the document: its items' first blocks, and every block of it (their paragraphs and
    nested lists); a list ends at the first block outside it."""
    heads: list[Block] = []
    blocks: list[Block] = []
    for b in doc.blocks:
        lead = heads[0] if heads else None
        if b.kind == "item" and b.ordered and b.first_in_item and lead is not None and b.depth == lead.depth \
                and b.parent_item == lead.parent_item and b.section == lead.section:
            heads.append(b)
        elif lead is not None and b.kind != "heading" and (
                b.depth > lead.depth or (b.item is not None and b.item in {h.item for h in heads})):
            pass  # a paragraph, a fence or a nested list of one of its items
        else:
            if heads:
                yield heads, blocks
            heads, blocks = ([b], []) if b.kind == "item" and b.ordered and b.first_in_item else ([], [])
            if not heads:
                continue
        blocks.append(b)
    if heads:
        yield heads, blocks


#: A case and its action in a list of cases: "Simple change → use `quick-plan.md`", "**K > 32** -> offer to save".
CASE_ARROW = re.compile(r"^([^→>]{2,80}?)\s*(?:→|->|=>)\s*(\S.*)$")


def _cases(doc: Document) -> set[int]:
    """The items of lists of cases, each `CASE → ACTION` ("Simple change → use the quick plan", "K > 32 → offer to
    save"): two or more sibling bullets, every one a case, most of their actions imperative. Each is a condition."""
    out: set[int] = set()
    run: list[Block] = []

    def close() -> None:
        cased = [(b, CASE_ARROW.match(strip_markup(b.text).strip())) for b in run]
        for arrow, group in itertools.groupby(cased, key=lambda x: x[1] is not None):  # runs of `→` bullets
            found = list(group)
            acting = [is_imperative(m.group(2)) for _, m in found if m is not None]
            if arrow and len(found) >= 2 and 2 * sum(acting) > len(acting):
                out.update(b.start for b, _ in found)
        run.clear()

    for b in doc.blocks:
        if b.kind == "item" and b.first_in_item and not b.ordered and not b.checkbox:
            if run and not (b.depth == run[-1].depth and b.parent_item == run[-1].parent_item
                            and b.section == run[-1].section):
                close()
            run.append(b)
        elif not (b.kind == "item" and run and b.depth > run[-1].depth):
            close()
    close()
    return out


_CODE_ONLY = re.compile(r"^`([a-z][\w.-]*(?: [^`]+)+)`\.?$")


def _shown_commands(doc: Document) -> dict[int, str]:
    """The bullets that only show a numbered step's command ("1. Add the Notion MCP:" and, under it, only
    `` - `codex mcp add notion --url …` ``): the command, by the bullet's first line; one such bullet a step."""
    leads = {b.item: b for b in doc.blocks if b.kind == "item" and b.ordered and b.depth == 1 and b.first_in_item
             and strip_markup(b.text).rstrip().endswith(":")}
    found: dict[int, list[tuple[int, str]]] = {}
    for b in doc.blocks:
        m = _CODE_ONLY.match(b.text.strip()) if b.kind == "item" and b.parent_item in leads else None
        if m is not None and b.first_in_item:
            found.setdefault(b.parent_item, []).append((b.start, m.group(1)))  # type: ignore[arg-type]
    return {start: code for shown in found.values() if len(shown) == 1 for start, code in shown}


def _dont_item(b: Block) -> bool:
    """An unordered list item right under a heading of what not to do."""
    return b.kind == "item" and not b.ordered and b.parent_item is None and bool(b.section) \
        and _DONT_HEADING.match(strip_markup(b.section[-1])) is not None


def _section_role(section: tuple[str, ...]) -> str:
    """procedure, rules, done, knowledge or '' for the innermost heading that says which.

    Examples, samples and output formats are knowledge wherever they stand (an example
    workflow is not the workflow), unless the title is itself a numbered step.
    """
    if any(_EXAMPLE.search(title) and not _STEP_HEADING.match(title) for title in section):
        return "knowledge"
    for i in range(len(section) - 1, -1, -1):
        title = section[i]
        if _STEP_HEADING.match(title):  # a numbered heading is a step, unless it numbers reference material
            return "knowledge" if _section_role(section[:i]) == "knowledge" else "procedure"
        if _PROCEDURE.search(title):
            return "procedure"
        if re.match(r"^how (?:to|do)\b", title, re.I):
            return "howto"
        if _RULES.search(title):
            return "rules"
        if _KNOWLEDGE.search(title):
            return "knowledge"
        if _DONE.search(title):
            return "done"
    return ""


def procedure_present(doc: Document) -> bool:
    """True when the document has numbered steps, step headings, a procedure section, a checklist or a tree."""
    for b in doc.blocks:
        role = _section_role(b.section)
        if b.kind == "heading" and step_heading(b) is not None:
            return True
        if b.kind == "item" and (b.ordered or b.checkbox) and role not in ("knowledge", "rules"):
            return True
        if b.kind == "code" and looks_like_tree(b.text):
            return True
        if b.kind == "row" and b.info == "header" and _STEP_COLUMN.match(b.text.split(" | ")[0].strip()) \
                and role != "knowledge":
            return True  # a workflow table
        if b.kind in ("para", "item") and role == "procedure" and is_imperative(b.text):
            return True
    return False


def extract_clauses(doc: Document) -> list[Clause]:
    """Every clause of the document, in order, classified."""
    structured = procedure_present(doc)
    explicit = _has_procedure_section(doc) or any(b.kind == "item" and b.ordered for b in doc.blocks)
    out: list[Clause] = []
    ordinal = 0
    step_of_item: dict[int, int] = {}
    after_step_heading = False  # sentences under `### Step N` headings are steps too
    header: list[str] = []  # the header cells of the table being read
    step_level = 0  # the heading level of the latest step heading

    def add(kind: str, text: str, start: int, end: int, block: Block, num: int | None = None, lead: str = "") -> None:
        out.append(Clause(len(out), kind, text, start, end, block.section, block, num, lead))

    # Paragraphs directly followed by a shell fence (outside reference sections).
    summary = _has_procedure_section(doc)  # a quick start beside the workflow sums it up: knowledge

    def role_of(section: tuple[str, ...]) -> str:
        return "knowledge" if summary and any(_SUMMARY.match(strip_markup(t)) for t in section) \
            else _section_role(section)

    fence_next = {id(a): nb.kind == "code" and nb.info in _SHELL and role_of(nb.section) != "knowledge"
                  for a, nb in zip(doc.blocks, doc.blocks[1:])}
    samples = _samples(doc) | _definitions(doc)
    cases = _cases(doc)
    shown = _shown_commands(doc)
    for b in doc.blocks:
        role = role_of(b.section)
        if b.start in shown and role not in ("knowledge", "rules"):
            add("command", shown[b.start], b.start, b.end, b)  # the step's command, as a fence would show it
            continue
        if b.kind != "heading" and b.start in samples:  # a paragraph or item by sentences, a row or fence whole
            whole = [(b.text, 0, b.end - b.start)]
            for sentence, a, z in split_sentences(b.text) if b.kind in ("para", "item") else whole:
                add("knowledge", sentence.strip(), b.start + a, b.start + z, b)
            continue
        if b.kind == "heading":
            m = step_heading(b)
            if m:
                ordinal = int(m.group(1))
                step_level = b.level
                add("step", m.group(2) or b.text, b.start, b.end, b, num=ordinal)
                after_step_heading = True
            elif _DELIVERABLE.match(strip_markup(b.text)) and any(c.kind == "step" for c in out) \
                    and b.level <= (step_level or 2) and not _delivered(b.text, out):
                # "## Output Format" after the procedure: producing it is the last step.
                add("step", f"Produce the {strip_markup(b.text).lower()} as described below", b.start, b.end, b)
            continue
        if b.kind == "code":
            if looks_like_tree(b.text):
                add("branch", b.text.rstrip("\n"), b.start, b.end, b)
            elif role != "knowledge" and not _only_options(b.text) and (b.info in _SHELL or (
                    not b.info and out and out[-1].kind == "step" and _looks_like_commands(b.text))):
                add("command", b.text.rstrip("\n"), b.start, b.end, b)
            else:
                add("knowledge", b.text.rstrip("\n"), b.start, b.end, b)
            continue
        if b.kind == "row":
            cells = [x.strip() for x in b.text.split(" | ")]
            if b.info == "header":
                header = cells
            elif header and _STEP_COLUMN.match(header[0]) and cells and re.fullmatch(r"\d+\.?", cells[0]) \
                    and role != "knowledge" and structured:
                # A workflow table (| Step | Action | Gate |): each numbered row is that step.
                ordinal = int(cells[0].rstrip("."))
                said = " — ".join(x for x in cells[1:] if x and not re.fullmatch(r"[-—–]+", x))
                add("step", said or b.text.strip(), b.start, b.end, b, num=ordinal)
                continue
            add("knowledge", b.text.strip(), b.start, b.end, b)
            continue
        header = []
        if b.kind == "html":
            add("knowledge", b.text.strip(), b.start, b.end, b)
            continue
        # paragraphs and list items: sentence by sentence
        num = None
        # An "item" block always has its item (a paragraph outside lists is a "para").
        if b.kind == "item" and b.item is not None and b.ordered and role not in ("knowledge", "rules", "done"):
            if b.first_in_item:
                if b.depth == 1:
                    ordinal += 1
                    step_of_item[b.item] = ordinal
                else:
                    parent = step_of_item.get(b.parent_item) if b.parent_item is not None else None
                    step_of_item[b.item] = ordinal if parent is None else parent
            num = step_of_item.get(b.item, ordinal)
        elif b.kind == "item":
            num = step_of_item.get(b.parent_item) if b.parent_item is not None else None
        labelled = _STEP_LABEL.match(strip_markup(b.text)) if role not in ("knowledge", "rules") else None
        if labelled is not None:  # "**Step 5:** Check …", "- [ ] Step 2: Identify …": a numbered step
            ordinal = int(labelled.group(1))
            num = ordinal
            if b.item is not None:
                step_of_item[b.item] = ordinal
        guidance = role == "knowledge" or (role == "howto" and explicit)  # only rules keep their class here
        sentences = split_sentences(b.text)
        if _dont_item(b) and sentences:  # "- Deploy without testing" under "### ❌ Don't": a prohibition, said so
            sentence, a, z = sentences[0]
            add("forbid", sentence, b.start + a, b.start + z, b, lead="Avoid")
            sentences = sentences[1:]
        elif b.start in cases and sentences and role not in ("knowledge", "rules") and structured:
            sentence, a, z = sentences[0]  # "- Simple change → use the quick plan": one case of a choice
            add("branch", sentence, b.start + a, b.start + z, b, num=num)
            sentences = sentences[1:]
        last = len(sentences) - 1
        for i, (sentence, a, z) in enumerate(sentences):
            start, end = b.start + a, b.start + z
            cue = classify(sentence)
            if guidance:
                cue = cue if cue in ("forbid", "require", "terminate") else ""
            numbered_lead = (b.kind == "item" and b.ordered and b.first_in_item and i == 0 and num is not None) \
                or (labelled is not None and i == 0)
            if FOREACH.match(strip_markup(sentence)) and not guidance:
                kind = "loop"  # "For each group:" and the list of what to do with each
            elif b.checkbox and i == 0 and labelled is None:
                # A checklist: things to do are steps, statements to tick are checks.
                kind = "step" if is_imperative(sentence) and cue != "verify" and not guidance else "verify"
            elif numbered_lead and (cue not in ("forbid", "branch", "loop") or _CAPS_LABEL.match(sentence)
                                    or (cue == "forbid" and is_imperative(sentence))):
                kind = "step"  # "Read each file fully (do not skip any)": a step with its constraint
            elif cue == "forbid" and not guidance and role != "rules" and is_imperative(sentence) \
                    and first_word(sentence) != "avoid" and (b.ordered or after_step_heading or role == "procedure"):
                kind = "step"
            elif cue:
                kind = cue
            elif _TRIGGER.match(strip_markup(sentence)) or not structured:
                kind = "knowledge"
            elif role == "rules" and is_imperative(sentence):
                kind = "require"
            elif role == "done":
                kind = "terminate"
            elif guidance:
                kind = "knowledge"
            elif b.kind == "item" and not b.ordered and b.parent_item is not None and num is not None:
                # A bullet under a numbered step details that step, unless it runs a command or asks the user.
                kind = "step" if is_imperative(sentence) and _acts(sentence) else "knowledge"
            elif _PREREQ.match(strip_markup(sentence)) and is_imperative(sentence):
                kind = "step"  # "Prereq: ensure … then run `…`": something to do before the procedure
            elif is_imperative(sentence) and (role == "procedure" or b.ordered or after_step_heading
                                              or not explicit):
                kind = "step"
            elif is_imperative(sentence) and strip_markup(sentence).endswith(":") and i == last \
                    and fence_next.get(id(b), False):
                kind = "step"  # "Validate it with the CLI:" and the shell fence that follows: a command to run
            else:
                kind = "knowledge"
            add(kind, sentence, start, end, b, num=num)
    return out


def _delivered(title: str, clauses: list[Clause]) -> bool:
    """The last step already produces what a deliverable heading names ("Write the report", "## Report format")."""
    last = next((c for c in reversed(clauses) if c.kind == "step"), None)
    wanted = content_stems(re.sub(r"\b(?:format|final)\b", "", title, flags=re.I))
    return last is not None and bool(wanted & content_stems(last.text))


def _acts(sentence: str) -> bool:
    """A sentence that runs a command or a bundled script, or asks the user: more than a detail of its step."""
    from skillc.frontends.markdown.phrases import asks_user, inline_command, script_mention  # cycle: phrases imports

    plain = strip_markup(sentence)
    return inline_command(sentence) is not None or script_mention(sentence) is not None or asks_user(plain)


def _only_options(text: str) -> bool:
    """A fence whose every line (comments aside) is an option (`--name "…"  # why`): arguments shown, not commands."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return bool(lines) and all(ln.startswith("-") for ln in lines)


def _looks_like_commands(text: str) -> bool:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return bool(lines) and all(re.match(r"^(?:\$ )?[a-z.\/][\w.\/-]*(?:\s|$)", ln) for ln in lines[:3])


def _has_procedure_section(doc: Document) -> bool:
    return any(b.kind == "heading" and _section_role(b.section) == "procedure" and (
        _PROCEDURE.search(b.text) or _STEP_HEADING.match(b.text)) for b in doc.blocks)


def step_heading(b: Block) -> re.Match[str] | None:
    """The match of a numbered step heading (`### Step 2: …`, `## 3) …`), unless it numbers reference material."""
    m = _STEP_HEADING.match(b.text)
    return m if m is not None and _section_role(b.section) == "procedure" else None
