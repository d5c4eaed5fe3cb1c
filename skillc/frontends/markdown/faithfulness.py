"""Faithfulness: does a machine encode the control its skill document states?

A *requirements file* lists a document's control requirements, written from the
document alone. Each line is one requirement; phrases in double quotes are
*anchors*: text of the document (markdown and whitespace ignored), located to
the line where it first occurs. The states *at* an anchor are the states whose
`from` range holds that line, the narrowest first ("main" states: all of the
narrowest width). An anchor on a line that no state's range holds, when that
line opens a block, stands for the block: a markdown heading for its section
(down to the next heading of the same or a higher level), a list item for its
nested lines (a step for its sub-steps), a paragraph ending in a colon for the
code and lists it leads in (to the next paragraph or heading). Its states are
those whose ranges lie inside the block, all of them main. An anchor that still has no state stands for the `bash`
states whose command runs a program its line names (in command position, as a whole word): on a line of shell code or
in a code span, a script by its file name and subcommand, or a command's leading words up to the first option,
placeholder or quoted argument; a script the prose names. Among the states at a line, those running such a program
are the main ones. Every requirement is a graph or dataflow query over the IR:

| line | holds when |
|---|---|
| `order "A" before "B"` | no run reaches B's states without passing A's (A's narrowest states, a decision among them included, of those some successful run passes where any do: a handler made from A's line is not A, and deciding a conditional step is reaching it) |
| `reads "B" from "A"` | B (its narrowest states, or another state holding its line) reads a variable A writes or one derived from it (A: the states at A's line and those made inside the block it opens, its sub-steps; derived: written by a state after A reading A's product, and so on), and no other definition of it reaches B without being written again by A or a deriving state |
| `branch "C" to "X"` | a state at C (where none there chooses on the way to X, also one made inside the block C opens, which must then pass the dependence test) has two or more successors and X (of the states at X, those not at C, where any are) depends on which it takes: an edge goes to X's state (or to an arm state of C going on to X, or, from a judge, through further judges only while another arm skips X; where C's states are all X's own, a decision's edge into X), or, C reached without X, every path from one arm passes X before success or a return to C while another arm reaches success without X |
| `ends "C" OUTCOME` | a state at C has an edge after which every terminal has that outcome, one of them a named terminal |
| `goto "C" "X"` | a state at C has an edge to X's state |
| `optional "X"` | a run can reach success without X, and a run through X can too (where only questions, judges or `ask_user`, are narrowest at X, X is the narrowest act beside them: the decision whether to do X is not X) |
| `loop "C" max N` | a cycle through C's state is paid for by a counter whose maximum is N |
| `once "X"` | X's states are on no cycle |
| `required "X"` | no run reaches a success terminal without X |
| `success requires "X"` | every success terminal requires a variable X writes |
| `tool "X" TOOL` | a state at X, or made from inside the block X opens (a step's code), or running a program X's line names, is a tool state calling TOOL, or one at X leads straight to one whose call reads a value it wrote |
| `ask "X"` | a state at X asks the user: a tool state calling `ask_user` |
| `prohibit "Q"` | no rule quoting Q forbids an invented operation (a tool without parameters no state calls), and Q constrains a real operation in a rule or stands in a state's prompt |
| `knowledge "X"` | no state was made from X alone, and X's text is in some state's instructions |

`#` starts a comment. A malformed line or an anchor that is not in the
document is a `RequirementsError` (the requirements file is wrong, not the machine).
"""  # noqa: E501 - a markdown table, kept one row a line

from __future__ import annotations

import hashlib
import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from skillc.check.graph import reachable, sccs, shortest_path, successors
from skillc.check.provenance import normalise
from skillc.check.requirements import _other_definition
from skillc.frontends.markdown.document import Document, parse_document
from skillc.ir.expr import Const, walk
from skillc.ir.machine import Machine

KINDS = ("order", "reads", "branch", "ends", "goto", "optional", "loop", "once", "required", "success", "tool",
         "ask", "prohibit", "knowledge")


class RequirementsError(ValueError):
    """A requirements file that cannot be read against its document."""


@attrs.frozen
class Requirement:
    """One control requirement: its kind, anchors (document lines), extra words and source line."""

    kind: str
    anchors: tuple[str, ...]
    lines: tuple[int, ...]
    words: tuple[str, ...]
    line: int
    text: str
    sections: tuple[tuple[int, int] | None, ...]  # per anchor: the block its line opens (first, last), or None
    # per anchor: the programs its line names (a script file, the command of a code line), normalised
    commands: tuple[tuple[str, ...], ...] = ()


@attrs.frozen
class Verdict:
    """Whether a machine meets one requirement, and why not."""

    requirement: Requirement
    ok: bool
    why: str = ""


@attrs.frozen
class Score:
    """Verdicts of one machine against one requirements file."""

    verdicts: tuple[Verdict, ...]

    @property
    def correct(self) -> int:
        return sum(v.ok for v in self.verdicts)

    @property
    def total(self) -> int:
        return len(self.verdicts)


def _doc_index(text: str) -> tuple[str, list[int]]:
    """The document normalised, and for each character of it the line it came from."""
    out: list[str] = []
    where: list[int] = []
    for i, raw in enumerate(text.split("\n"), start=1):
        piece = normalise(raw)
        if not piece:
            continue
        if out:
            out.append(" ")
            where.append(i)
        out.append(piece)
        where.extend([i] * len(piece))
    return "".join(out), where


def _sections(doc: Document | None) -> dict[int, tuple[int, int]]:
    """The blocks lines open (first line → (first, last)), read from the document's markdown structure: a heading's
    section, to the line before the next heading of its level or higher; a list item with nested lines, to its last
    line (its sub-items included)."""
    if doc is None:
        return {}
    out: dict[int, tuple[int, int]] = {}
    heads = [b for b in doc.blocks if b.kind == "heading"]
    for k, h in enumerate(heads):
        out[h.start] = (h.start, next((o.start - 1 for o in heads[k + 1:] if o.level <= h.level), len(doc.lines)))
    parent = {b.item: b.parent_item for b in doc.blocks if b.item is not None}
    extent: dict[int, tuple[int, int]] = {}
    for b in doc.blocks:
        item = b.item
        while item is not None:  # a block extends its item and every item it is nested in
            first, last = extent.get(item, (b.start, b.end))
            extent[item] = (min(first, b.start), max(last, b.end))
            item = parent.get(item)
    for first, last in extent.values():
        if last > first:
            out.setdefault(first, (first, last))
    for k, b in enumerate(doc.blocks):  # a paragraph ending in a colon leads in the code and lists after it
        if b.kind != "para" or not _LEAD_IN.search(b.text):
            continue
        last = b.end
        for o in doc.blocks[k + 1:]:
            if o.kind in ("heading", "para", "row", "html") and o.depth <= b.depth:
                break
            last = o.end
        if last > b.end:
            out.setdefault(b.start, (b.start, last))
    return out


_LEAD_IN = re.compile(r":[*_`\s]*$")
_SCRIPT = re.compile(r"(?<![\w.-])(?:[\w.-]+/)*([\w-]+(?:\.[\w-]+)*\.(?:py|sh|bash|js|mjs|cjs|ts|rb|pl))(?![\w-])")
_PROMPT = re.compile(r"^\s*[$>]\s+")
_WORD = re.compile(r"[a-z][\w.-]*$")
_SUBCOMMAND = re.compile(r"[a-z][a-z0-9_-]*$")
_SEGMENT = re.compile(r"&&|\|\||[;|]")
# Words that run what follows them: a command ending on one names no program of its own (`uv run`, `npm run`).
_RUNNERS = frozenset({"uv", "run", "npm", "npx", "pnpm", "yarn", "bun", "bunx", "python", "python3", "node", "bash",
                      "sh", "zsh", "exec", "sudo", "env", "deno", "tsx", "time", "nohup", "cd"})
_SHELL_CODE = frozenset({"", "bash", "sh", "shell", "zsh", "console", "shell-session", "terminal"})
# Where a program runs in a command: at its start or a pipeline's, or as the script a runner is given (after the
# runner and the script's folder).
_AT_COMMAND = (r"(?:^|[;&|(\n]|\$\()\s*(?:(?:sudo|env|exec|time|nohup)\s+)*"
               r"(?:(?:uv\s+run(?:\s+python3?)?|python3?(?:\s+-u)?|node|bash|sh|zsh|npx|bunx?|bun\s+run|ruby|perl|"
               r"deno\s+run|tsx|pnpm\s+exec|npm\s+exec)\s+)?(?:[^\s;&|'\"]*/)?")


def _shell_lines(doc: Document | None) -> set[int]:
    """The lines of the document's shell code blocks (a fence marked `bash`, `sh`, `console`, … or not marked)."""
    return {n for b in (doc.blocks if doc is not None else ()) if b.kind == "code" and b.info in _SHELL_CODE
            for n in range(b.start, b.end + 1)}


def _commands(raw: str, code: bool) -> tuple[str, ...]:
    """The programs a document line names, lower case: on a line of shell code, or in a code span of prose, each
    command's script by its file name with its subcommand (`tool.py build`), or else its leading words up to the
    first option, placeholder or quoted argument (two at least, not ending on a runner: `helm dependency update`,
    `make test`, not `uv run`); and a script the prose names outside code (`generate_image.py`)."""
    found: list[str] = []
    spans = re.findall(r"`([^`\n]+)`", raw)
    for piece in [raw] if code else spans:
        for segment in _SEGMENT.split(_PROMPT.sub("", piece)):
            tokens = segment.split()
            scripts = [(i, m) for i, t in enumerate(tokens) if (m := _SCRIPT.fullmatch(t.strip("\"'"))) is not None]
            if scripts:
                i, m = scripts[0]
                run = [m.group(1)]
                for t in tokens[i + 1:i + 3]:  # its subcommand
                    if not _SUBCOMMAND.match(t):
                        break
                    run.append(t)
                found.append(" ".join(run).lower())
                continue
            words: list[str] = []
            for token in tokens:
                if not _WORD.match(token) or len(words) == 4:
                    break
                words.append(token.lower())
            while words and words[-1] in _RUNNERS:
                words.pop()
            if len(words) >= 2 and words[0] != "cd":
                found.append(" ".join(words))
    if not code:
        prose = re.sub(r"`[^`\n]+`", " ", raw)
        found += [m.group(1).lower() for m in _SCRIPT.finditer(prose)]
    return tuple(dict.fromkeys(found))


def parse_requirements(text: str, document: str) -> list[Requirement]:
    """The requirements of a file, anchored in the document's text."""
    flat, where = _doc_index(document)
    parsed, _ = parse_document(document)
    sections = _sections(parsed)
    raw_lines, code = document.split("\n"), _shell_lines(parsed)
    out: list[Requirement] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.split(" #")[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        try:
            parts = shlex.split(line)
        except ValueError as exc:
            raise RequirementsError(f"line {number}: {exc}") from None
        kind = parts[0]
        if kind not in KINDS:
            raise RequirementsError(f"line {number}: unknown requirement `{kind}` (one of {', '.join(KINDS)})")
        quoted = re.findall(r'"([^"]+)"', line)
        words = tuple(p for p in parts[1:] if p not in quoted and p not in ("before", "from", "to", "max",
                                                                              "requires"))
        lines = []
        for anchor in quoted:
            at = flat.find(normalise(anchor))
            if at < 0:
                raise RequirementsError(f"line {number}: anchor \"{anchor}\" is not in the document")
            lines.append(where[at])
        out.append(Requirement(kind, tuple(quoted), tuple(lines), words, number, line,
                               tuple(sections.get(n) for n in lines),
                               tuple(_commands(raw_lines[n - 1], n in code) for n in lines)))
        _arity(out[-1])
    return out


def _arity(r: Requirement) -> None:
    need = {"order": 2, "reads": 2, "branch": 2, "goto": 2}.get(r.kind, 1)
    if len(r.anchors) != need:
        raise RequirementsError(f"line {r.line}: `{r.kind}` takes {need} quoted anchor(s)")
    if r.kind in ("ends", "tool", "loop") and not r.words:
        raise RequirementsError(f"line {r.line}: `{r.kind}` needs its "
                                f"{'outcome' if r.kind == 'ends' else 'tool' if r.kind == 'tool' else 'bound N'}")


class Query:
    """Graph and dataflow facts of one machine, answered per requirement."""

    def __init__(self, m: Machine) -> None:
        self.m = m
        self.succ = successors(m)
        self.success = {n for n, s in m.states.items() if s.kind == "terminal" and s.outcome == "success"}
        # States on some successful run: reached from the start and reaching success.
        self.live = reachable(self.succ, [m.start]) & {n for n in m.states
                                                       if reachable(self.succ, [n]) & self.success}
        self.prompts = {n: normalise(" ".join(x for x in (s.prompt, s.doc) if x)) for n, s in m.states.items()}
        # What each `bash` state runs: its command's string constants, joined (the values between them unseen).
        self.runs = {n: " ".join(str(e.value) for _, a in s.call.args for e in walk(a)
                                 if isinstance(e, Const) and isinstance(e.value, str)).lower()
                     for n, s in m.states.items() if s.call is not None and s.call.tool == "bash"}

    def at(self, line: int, section: tuple[int, int] | None = None) -> list[str]:
        """States whose `from` range holds a line, narrowest first; none there, those inside the block it opens."""
        found = [n for n, s in self.m.states.items()
                 if s.provenance is not None and s.provenance.start <= line <= s.provenance.end]
        if not found:
            found = self.within(section)
        return sorted(found, key=lambda n: (self._width(n), n))

    def within(self, block: tuple[int, int] | None) -> list[str]:
        """The states whose `from` ranges lie inside a block (none without a block)."""
        if block is None:
            return []
        return [n for n, s in self.m.states.items()
                if s.provenance is not None and block[0] <= s.provenance.start and s.provenance.end <= block[1]]

    def anchor(self, r: Requirement, i: int) -> list[str]:
        """The states at a requirement's i-th anchor; where none is there, the tool states running a program its line
        names."""
        return self.at(r.lines[i], r.sections[i]) or self.running(r, i)

    def running(self, r: Requirement, i: int) -> list[str]:
        """The tool states whose call runs a program named on the line of a requirement's i-th anchor."""
        names = r.commands[i] if i < len(r.commands) else ()
        if not names:
            return []
        # A name counts where a program runs, as a whole word: `run.py` is not `prerun.py`, `make test` not `make
        # tests`, and `cat scripts/gen.py` or `test -f scripts/gen.py` does not run `gen.py`.
        named = re.compile(_AT_COMMAND + "(?:" + "|".join(re.escape(x).replace(r"\ ", r"\s+") for x in names)
                           + r")(?![\w:-]|\.\w)", re.M)
        return sorted(n for n, text in self.runs.items() if named.search(text))

    def around(self, r: Requirement, i: int) -> set[str]:
        """The states at a requirement's i-th anchor and those made inside the block it opens (a step's sub-steps
        and code, a heading's section)."""
        return {*self.anchor(r, i), *self.within(r.sections[i])}

    def main_of(self, r: Requirement, i: int, live: bool = False, besides: frozenset[str] = frozenset()) -> set[str]:
        """The main states at a requirement's i-th anchor (a section's: all of its states); `live`: of those some
        successful run passes, where there are any (a handler made from the step's line is not the step);
        `besides`: of the states not in it, where there are any. Where states there run a program the line names,
        they are the main states."""
        here = self.at(r.lines[i])
        if here:
            # The states there running the program the line names are the step, however narrow the others are.
            runners = [n for n in self.running(r, i) if n in here and n not in besides]
            if runners:
                return {n for n in runners if n in self.live} if live and set(runners) & self.live else set(runners)
            return self.main(r.lines[i], live, besides)
        return set(self.anchor(r, i))

    def _width(self, state: str) -> int:
        """How many lines past its first a state's `from` range covers (0 without one)."""
        p = self.m.states[state].provenance
        return p.end - p.start if p is not None else 0

    def _calls(self, state: str, tool: str) -> bool:
        """The state calls `tool`."""
        call = self.m.states[state].call
        return call is not None and call.tool == tool

    def main(self, line: int, live: bool = False, besides: frozenset[str] = frozenset()) -> set[str]:
        """The narrowest states at a line; the actions among them when a decision shares the line with its arm.

        `besides`: of the states not in it, where any are. `live` (an order's first step): of the states some
        successful run passes, where any are, and the decisions among the narrowest kept beside the actions (deciding
        a conditional step is reaching it)."""
        found = self.at(line)
        found = [n for n in found if n not in besides] or found
        if live:
            found = [n for n in found if n in self.live] or found
        if not found:
            return set()
        narrow = {n for n in found if self._width(n) == self._width(found[0])}
        if live:
            return narrow
        actions = {n for n in narrow if self.m.states[n].kind != "judge"}
        return actions or narrow

    def _decides(self, state: str) -> bool:
        """The state chooses where a run goes: two or more successors, or a judge."""
        return len(self.succ[state]) >= 2 or self.m.states[state].kind == "judge"

    def _chooses(self, state: str) -> bool:
        """The state chooses between ways on: a judge, or two of its successors lead on to success (not a tool's
        failure handler)."""
        return self.m.states[state].kind == "judge" or sum(
            bool(reachable(self.succ, [t]) & self.success) for t in self.succ[state]) >= 2

    def _asks(self, state: str) -> bool:
        """The state is a question: a judge, or a tool state asking the user."""
        return self.m.states[state].kind == "judge" or self._calls(state, "ask_user")

    def outcome(self, state: str) -> str | None:
        s = self.m.states[state]
        return "failed" if s.kind == "fallback" else s.outcome

    def terminals_after(self, state: str) -> set[str]:
        return {s for s in reachable(self.succ, [state]) if self.m.states[s].is_terminal}

    # ------------------------------------------------------------ one method per kind

    def order(self, r: Requirement) -> str:
        a, b = self.main_of(r, 0, live=True), self.main_of(r, 1)
        if not a or not b:
            return "no state at " + ("the first" if not a else "the second") + " anchor"
        path = shortest_path(self.succ, self.m.start, lambda s: s in b and s not in a, blocked=a)
        return f"{' -> '.join(path)} skips it" if path else ""

    def reads(self, r: Requirement) -> str:
        # The producer is every state made from the anchor's line (a step and the states that revise it) or from
        # inside the block it opens (the step's sub-steps).
        b, a = self.main_of(r, 0), self.around(r, 1)
        if not a or not b:
            return "no state at an anchor"
        # The readers: the narrowest states at B, then any other state whose range holds B's line (a narrow helper
        # there, a state saving the result, is not the step that uses A's product).
        readers = [*sorted(b), *(n for n in self.anchor(r, 0) if n not in b)]
        makers, produced = self._derived(a, set(readers))
        for reader in readers:
            for v in self.m.states[reader].reads:
                # another definition of it is killed only where A or a maker writes it again
                killers = {*a, *(k for k in makers if v in self.m.states[k].writes)}
                if v in produced and _other_definition(self.m, v, reader, killers, self.succ) is None:
                    return ""
        return f"{', '.join(sorted(b))} reads nothing only {', '.join(sorted(a))} produced"

    def _derived(self, producers: set[str], readers: set[str]) -> tuple[set[str], set[str]]:
        """The states making A's product or what is derived from it (a state after A reading a variable they wrote, not
        one of the readers), and the variables they write."""
        makers = set(producers)
        produced = {v for p in makers for v in self.m.states[p].writes}
        after = reachable(self.succ, [t for p in producers for t in self.succ[p]])
        grown = True
        while grown:
            grown = False
            for n, st in self.m.states.items():
                if n in after and n not in makers and n not in readers and produced.intersection(st.reads):
                    makers.add(n)
                    produced.update(st.writes)
                    grown = True
        return makers, produced

    def _arm_targets(self, r: Requirement, x: set[str]) -> list[tuple[str, str, bool]]:
        """(state at the condition, edge target, made inside C's block) of the states with two or more successors at
        C's line; where none there chooses on the way to X (a heading or lead-in held by a state that only notes,
        reports, handles its own failure or decides something else), also those made inside the block C opens (its
        section, its sub-steps): where a state at C's line decides something else, they lead to X only where X
        depends on them."""
        at = self.anchor(r, 0)
        deciding = [(d, False) for d in at if self._decides(d)]
        if not any(self._chooses(d) and reachable(self.succ, [d]) & x for d, _ in deciding):
            strict = bool(deciding)  # beside a decision at C's line (of something else), one inside must be X's
            deciding += [(d, strict) for d in sorted(self.within(r.sections[0])) if d not in at and self._decides(d)]
        return [(d, t, inside) for d, inside in deciding for t in self.succ[d]]

    def _depends(self, d: str, arm: str, x: set[str]) -> bool:
        """X is control dependent on decision `d` through `arm`: a run reaches `d` without X; from the arm, every
        path passes X before it reaches success or comes back to `d` (and one reaches X); and another arm of `d`
        reaches success without X."""
        if shortest_path(self.succ, self.m.start, {d}.__contains__, blocked=x) is None:
            return False  # X runs before the decision is ever made
        if shortest_path(self.succ, arm, x.__contains__, blocked={d}) is None:
            return False
        if shortest_path(self.succ, arm, lambda s: s in self.success or s == d, blocked=x) is not None:
            return False
        return any(other != arm and other not in x
                   and shortest_path(self.succ, other, self.success.__contains__, blocked=x) is not None
                   for other in self.succ[d])

    def _skips(self, d: str, arm: str, x: set[str]) -> bool:
        """Another arm of `d` than `arm` reaches success, or comes back to `d`, without X."""
        return any(other != arm and shortest_path(self.succ, other, lambda s: s in self.success or s == d,
                                                  blocked=x) is not None
                   for other in self.succ[d])

    def _checked_into(self, arm: str, x: set[str]) -> bool:
        """The arm of a question goes on to X through further questions only: judges, one with an edge into X."""
        acts = {s for s, st in self.m.states.items() if st.kind != "judge" and s not in x}
        return arm not in x and arm not in acts and shortest_path(self.succ, arm, x.__contains__, acts) is not None

    def branch(self, r: Requirement) -> str:
        x = self.main_of(r, 1, besides=frozenset(self.anchor(r, 0)))  # the target is not the state deciding it
        if not x:
            return "no state at the target anchor"
        cond = self.m.states
        for d, t, strict in self._arm_targets(r, x):
            if self._depends(d, t, x):
                return ""
            if strict:
                continue
            if t in x or (cond[d].kind == "judge" and self._checked_into(t, x) and self._skips(d, t, x)):
                return ""
            p = cond[t].provenance
            if p is not None and p.start <= r.lines[0] <= p.end and any(u in x for u in self.succ[t]):
                return ""
        at_condition = set(self.anchor(r, 0))
        if at_condition and at_condition <= x:
            # The arm's own state holds the condition ("If the script fails, run manually:" and the command, one
            # state): the branch is the decision whose edge goes into it.
            for d in self.m.states:
                if self._decides(d) and d not in x and any(t in x and self._depends(d, t, x) for t in self.succ[d]):
                    return ""
        return "no decision at the condition leads there"

    def ends(self, r: Requirement) -> str:
        want = r.words[0]
        starts = [(d, t) for d in self.anchor(r, 0) for t in self.succ[d]]
        starts += [(d, d) for d in self.anchor(r, 0) if self.m.states[d].is_terminal]
        for _, t in starts:
            ends = self.terminals_after(t)
            named = [e for e in ends if self.m.states[e].kind == "terminal"]
            if ends and all(self.outcome(e) == want for e in ends) and named:
                return ""
        return f"no edge at the clause leads only to `{want}` terminals"

    def goto(self, r: Requirement) -> str:
        x = self.main_of(r, 1)
        if any(t in x for d in self.anchor(r, 0) for t in self.succ[d]):
            return ""
        return "no edge from the clause to the referenced step"

    def optional(self, r: Requirement) -> str:
        x = self.main_of(r, 0)
        if not x:
            return "no state for it"
        if all(self._asks(n) for n in x):
            # A decision whether to do X, made from X's line: X is the act made from the line beside it.
            acts = [n for n in self.anchor(r, 0) if not self._asks(n)]
            x = {n for n in acts if self._width(n) == self._width(acts[0])} or x
        if shortest_path(self.succ, self.m.start, self.success.__contains__, blocked=x) is None:
            return "every successful run performs it"
        through = reachable(self.succ, [self.m.start]) & x
        if not any(reachable(self.succ, [s]) & self.success for s in through):
            return "no successful run performs it"
        return ""

    def loop(self, r: Requirement) -> str:
        bound = int(r.words[0])
        x = set(self.anchor(r, 0))
        for comp in sccs(self.m.states, self.succ):
            inside = set(comp)
            if not inside & x or (len(comp) == 1 and comp[0] not in self.succ[comp[0]]):
                continue
            counters = {a.var for s in comp for e in self.m.states[s].edges if e.target in inside
                        for a in e.assigns if a.op == "+=" and self.m.variables[a.var].is_counter}
            maxima = {top for c in counters if (top := self.m.variables[c].max) is not None}
            if bound in maxima:
                return ""
            return f"the loop is bounded by {sorted(maxima)}, not {bound}"
        return "no loop through the clause"

    def once(self, r: Requirement) -> str:
        x = self.main_of(r, 0)
        if not x:
            return "no state for it"
        for comp in sccs(self.m.states, self.succ):
            if set(comp) & x and (len(comp) > 1 or comp[0] in self.succ[comp[0]]):
                return "it can run twice"
        return ""

    def required(self, r: Requirement) -> str:
        x = self.main_of(r, 0)
        if not x:
            return "no state for it"
        path = shortest_path(self.succ, self.m.start, self.success.__contains__, blocked=x)
        return f"{' -> '.join(path)} never performs it" if path else ""

    def success_(self, r: Requirement) -> str:
        x = self.main_of(r, 0)
        made = {v for s in x for v in self.m.states[s].writes}
        if not self.success:
            return "no success terminal"
        missing = [t for t in sorted(self.success) if not set(self.m.states[t].requires) & made]
        return f"{', '.join(missing)} does not require what it produced" if missing else ""

    def tool(self, r: Requirement) -> str:
        want = r.words[0]
        here = self.around(r, 0)
        if any(self._calls(s, want) for s in {*here, *self.running(r, 0)}) or self._prepared(here, want):
            return ""
        return f"no tool state calls `{want}` there"

    def _prepared(self, states: set[str], tool: str) -> bool:
        """A state at the step prepares a call that the state after it makes: an edge goes from it to a state calling
        `tool` that reads a value it wrote (a model state drafts the arguments or the content, the tool state runs
        or saves it)."""
        return any(self._calls(caller, tool) and set(self.m.states[caller].reads) & set(self.m.states[n].writes)
                   for n in states for caller in self.succ[n] if caller not in states)

    def ask(self, r: Requirement) -> str:
        if any(self._calls(s, "ask_user") for s in self.anchor(r, 0)):
            return ""
        return "the answer does not come from the user"

    def prohibit(self, r: Requirement) -> str:
        want = normalise(r.anchors[0])
        quoting = [rule for rule in self.m.rules if want in normalise(rule.quote)]
        for rule in quoting:
            for op in rule.ops:
                tool = self.m.tools.get(op)
                if rule.kind == "forbid" and tool is not None and not tool.params and not any(rule.performers):
                    return f"`rule forbid {op}` forbids an invented operation nobody can call"
        if quoting or any(want in p for p in self.prompts.values()):
            return ""
        return "neither a rule nor any state's instructions carry it"

    def knowledge(self, r: Requirement) -> str:
        line = r.lines[0]
        own = [s for s in self.main(line) if not self.m.states[s].is_terminal and self._width(s) <= 1]
        if own:
            return f"it became state {', '.join(sorted(own))}"
        want = normalise(r.anchors[0])
        return "" if any(want in p for p in self.prompts.values()) else "it is in no state's instructions"


# The query answering each kind of requirement: '' when the machine meets it, else why not.
QUERIES: dict[str, Callable[[Query, Requirement], str]] = {
    "order": Query.order, "reads": Query.reads, "branch": Query.branch, "ends": Query.ends, "goto": Query.goto,
    "optional": Query.optional, "loop": Query.loop, "once": Query.once, "required": Query.required,
    "success": Query.success_, "tool": Query.tool, "ask": Query.ask, "prohibit": Query.prohibit,
    "knowledge": Query.knowledge,
}


def score(m: Machine, requirements: list[Requirement]) -> Score:
    """The verdict of each requirement on a machine."""
    q = Query(m)
    verdicts = []
    for r in requirements:
        why = QUERIES[r.kind](q, r)
        verdicts.append(Verdict(r, not why, why))
    return Score(tuple(verdicts))


def machine_key(text: str) -> str:
    """A short hash of a built machine's text, its `from`/`source` paths to the skill document made `SKILL.md` (the
    text names them relative to where it is written): a review of its failures holds while the key is the same."""
    plain = re.sub(r'"[^"\n]*SKILL\.md"', '"SKILL.md"', text)
    return hashlib.sha256(plain.encode("utf-8")).hexdigest()[:16]


@attrs.frozen
class Reviewed:
    """A second look at one failed requirement of one machine: `Q` (the machine does it; the query missed it), `R`
    (another reasonable reading), `X` (the requirement is wrong) or `M` (the machine does not do it)."""

    skill: str
    machine: str  # the machine_key of the machine reviewed
    requirement: str  # the requirement's line, as written
    verdict: str
    why: str


def load_review(path: str | Path) -> list[Reviewed]:
    """The rows of a review table (tools/review_packets.py collect)."""
    rows = Path(path).read_text(encoding="utf-8").splitlines()[1:]
    out = []
    for row in rows:
        skill, machine, _, requirement, _, verdict, why = row.split("\t")
        out.append(Reviewed(skill, machine, requirement, verdict, why))
    return out


def reviewed_failures(skill: str, key: str, verdicts: Sequence[Verdict], review: Sequence[Reviewed],
                      verdict: str | None = None) -> list[Verdict]:
    """The failed verdicts of a machine that its review saw (with `verdict`: judged so): the same skill, the same
    machine text (`key`), the same requirement."""
    seen = {r.requirement for r in review if r.skill == skill and r.machine == key and verdict in (None, r.verdict)}
    return [v for v in verdicts if not v.ok and v.requirement.text in seen]


def accepted(skill: str, key: str, verdicts: Sequence[Verdict], review: Sequence[Reviewed]) -> list[Verdict]:
    """The failed verdicts of a machine that its review judged met (`Q`). A failure the review did not see, or saw
    on another machine, is not accepted."""
    return reviewed_failures(skill, key, verdicts, review, "Q")


@attrs.frozen
class Judged:
    """A blind judgement of one requirement of one machine, passed or failed by the measure: `Y` (the machine does
    it), `N` (it does not) or `X` (the requirement is wrong); the judge saw neither the measure's verdict nor which
    compiler built the machine."""

    skill: str
    build: str  # llm or offline
    machine: str  # the machine_key of the machine judged
    requirement: str  # the requirement's line, as written
    answer: str
    why: str


def load_judged(path: str | Path) -> list[Judged]:
    """The rows of a blind judgement table (tools/review_packets.py collect-blind)."""
    out = []
    for row in Path(path).read_text(encoding="utf-8").splitlines()[1:]:
        skill, build, machine, _, requirement, answer, why = row.split("\t")
        out.append(Judged(skill, build, machine, requirement, answer, why))
    return out


def judged_answers(skill: str, key: str, verdicts: Sequence[Verdict], judged: Sequence[Judged]) -> list[str]:
    """The judges' answer to each verdict of a machine, in order; none where they judged another machine (or none)."""
    said = {j.requirement: j.answer for j in judged if j.skill == skill and j.machine == key}
    return [said.get(v.requirement.text, "-") for v in verdicts] if said else []


def load(requirements: str | Path, document: str | Path) -> list[Requirement]:
    """Read a requirements file against its document."""
    return parse_requirements(Path(requirements).read_text(encoding="utf-8"),
                              Path(document).read_text(encoding="utf-8"))


__all__ = [
    "Judged",
    "Requirement",
    "RequirementsError",
    "Reviewed",
    "Score",
    "Verdict",
    "accepted",
    "judged_answers",
    "load",
    "load_judged",
    "load_review",
    "machine_key",
    "parse_requirements",
    "reviewed_failures",
    "score",
]
