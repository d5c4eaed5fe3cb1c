"""The structural compiler: classified clauses → a `.skm` module, without any model.

Steps become `model` states (or `tool` states when they run a command with a
declared tool); conditions become `judge` states whose labels route the edges;
verifications become a judge with a bounded revise loop; "repeat until" and
"… again" become counted back edges; requirements and prohibitions become rules
carrying their sentence; knowledge lands in the instructions of the state it
concerns most. Every state and rule records the lines it came from.

Reads are inferred after the graph is built: a state reads the task and the
outputs of its predecessors that are assigned on every path into it, so the
machine satisfies definite assignment by construction.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable

import attrs

from skillc.frontends.markdown.clauses import _REQUIRE, _STEP_HEADING, Clause, first_word, strip_markup
from skillc.frontends.markdown.document import Document
from skillc.frontends.markdown.names import Namer, content_stems, label_slug, slug
from skillc.frontends.markdown.tree import TreeNode, parse_tree
from skillc.syntax import nodes as n

NEXT = None  # an edge target filled in when the following unit is known
FORWARD = "\0forward"  # an arm whose edge goes to a step further down, resolved once every step has a state
TASK = "task"
DEFAULT_MAX_REVISIONS = 2
DEFAULT_MAX_REPEATS = 3
NUMBER_WORDS = {"once": 1, "twice": 2, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
                "seven": 7, "eight": 8, "nine": 9, "ten": 10}

# Tools a front matter `allowed-tools` list can declare, by the name skill authors use.
KNOWN_TOOLS = {"bash": "bash", "shell": "bash", "terminal": "bash", "sh": "bash"}
BASH = n.ToolDecl("bash", (n.Param("command", n.NamedType("str")),),
                  (n.Param("stdout", n.NamedType("str")), n.Param("exit_code", n.NamedType("int"))))
ASK_USER = n.ToolDecl("ask_user", (n.Param("question", n.NamedType("str")),), (n.Param("answer", n.NamedType("str")),))

# Fences that `bash` cannot run as they are (Windows shells).
_NOT_BASH = frozenset({"powershell", "ps1", "cmd", "bat"})
# A condition about a command's failure: answered by its exit status, not by a model.
_FAILS = re.compile(r"\b(?:fails?|failed|failing|does not (?:apply|succeed|work|exist)|doesn't (?:apply|work)|cannot be|"
                    r"can't be|non-zero|errors? out|exits? with an error)\b", re.I)
# A stop clause: the verb that ends the run, and the outcome words after it.
_STOP = re.compile(r"(?:,?\s*(?:and|then)\s+)?\b(stop|abort|give up|halt|end the (?:procedure|run)|exit|finish)\b"
                   r"(?![-\w])(.*)$", re.I)
# Inline commands a step says to run: "Run `pytest -q`", "Build it with `python -m build`".
_RUN_INLINE = re.compile(r"\b(?:run|execute|invoke|with|using|via)\s+`([^`]+)`", re.I)
# A step that runs a command formed by an earlier step.
_RUN_FORMED = re.compile(r"\b(?:run|execute)\s+(?:the|that|this)\s+command\b", re.I)
# A step that forms a command from a template: "Form the command `printf %s X > f`, replacing `X` with the letter".
_FORM = re.compile(r"\b(?:form|build|compose|construct|prepare|write)\s+the\s+command\s+`([^`]+)`.*?\breplacing\s+`([^`]+)`"
                   r"\s+with\s+(?:the\s+)?([^.,;]+)", re.I)
# A value to choose among lettered options: "one letter from A–E", "options A to E".
_LETTER = re.compile(r"\bletter\b", re.I)
_RANGE = re.compile(r"\b([A-Z])\s*(?:–|—|-|to)\s*([A-Z])\b")
# Comparisons of the latest command output with a held value, which a guard can decide.
_EXACTLY = re.compile(r"^(?:the\s+)?(?:file\s+)?(?:content|contents|output)\b.*?\b(?:is|equals|matches)\s+"
                      r"(?:exactly\s+)?(?:the\s+)?(.+?)\s*$", re.I)
_DIFFERS = re.compile(r"^(?:the\s+)?(?:file\s+)?(?:content|contents|output)\b.*?\b(?:differs|does\s+not\s+match)\b",
                      re.I)
# User interaction: the answer must come from the user.
_ASK = re.compile(r"^(?:ask|prompt|consult)\s+(?:the\s+)?user\b|\b(?:with|from|by)\s+the\s+user\b|"
                  r"\bwait\s+for\s+(?:the\s+)?user|\bthe\s+user'?s\s+(?:choice|answer|confirmation|approval|decision)\b|"
                  r"^confirm\b.*\buser\b", re.I)
# Optional work without an "If".
_OPTIONAL = re.compile(r"\b(?:only (?:when|if)|if needed|if necessary|if applicable|if required|where relevant|"
                       r"optionally|when asked|if asked|if you want|as needed)\b", re.I)
# A reference to a section further down (or up): "as described under Spam handling (below)".
_REFERENCE = re.compile(r"\b(?:as described (?:under|in)|described (?:under|in)|see|following|per|as in|according to|"
                        r"under)\s+(?:the\s+)?(.+?)\s*\((?:below|above)\)", re.I)
_BACK = re.compile(r"\b(?:go back|return to|start over|restart (?:from|at|with))\b", re.I)
# "continue to step N", "go to step N", "proceed with step N".
_FORWARD = re.compile(r"\b(?:continue|go|proceed|skip|jump|move on)\s+(?:on\s+)?(?:to|with)\s+step\s+(\d+)\b", re.I)


@attrs.frozen
class Options:
    """Choices of the structural compiler."""

    tools: frozenset[str] = frozenset()  # tools steps may call (`bash`), on top of the front matter's
    max_revisions: int = DEFAULT_MAX_REVISIONS
    max_repeats: int = DEFAULT_MAX_REPEATS
    source: str = "SKILL.md"  # how the machine names the document (relative to the machine file)


@attrs.define
class DEdge:
    """An edge under construction; `target` None means "whatever comes next"."""

    guard: n.Expr | None
    target: str | None
    assigns: tuple[n.Assign, ...] = ()
    auto: bool = False  # the compiler's own "a failed command goes to fallback", not a sentence of the document


@attrs.define
class DState:
    """A state under construction."""

    name: str
    kind: str
    start: int
    end: int
    text: list[str] = attrs.field(factory=list)
    notes: list[str] = attrs.field(factory=list)
    constraints: list[str] = attrs.field(factory=list)
    writes: list[tuple[str, str | None]] = attrs.field(factory=list)
    call: str | None = None
    edges: list[DEdge] = attrs.field(factory=list)
    reads: list[str] = attrs.field(factory=list)
    wants: list[str] = attrs.field(factory=list)  # variables it should read when they are assigned
    topic: set[str] = attrs.field(factory=set)  # stems for matching knowledge and rules
    tool: str = "bash"  # the tool a tool state calls
    parts: list[str | tuple[str, str]] = attrs.field(factory=list)  # the argument: text and ("var"|"quote", name)
    failure: str = ""  # a tool state's stated failure handling: "", "retry" or "handled"


@attrs.define
class Unit:
    """A piece of control flow: a step, a condition, a loop, a verification or a tree."""

    kind: str
    clauses: list[Clause]
    command: Clause | None = None
    notes: list[Clause] = attrs.field(factory=list)
    otherwise: Clause | None = None
    arms: list[Clause] = attrs.field(factory=list)  # the `If` sentences of a multi-way condition
    loop: Clause | None = None  # a "repeat until" merged into a branch that goes "again"
    lead: Clause | None = None  # "Decide whether C." whose bullets are the branch's arms: the judge asks it


@attrs.define
class Compiled:
    """The structural draft, and whether the document had a procedure at all."""

    module: n.Module
    procedure: bool
    problems: tuple[tuple[str, str, int, int], ...] = ()  # (code, message, first line, last line)
    bash_added: bool = False  # `bash` declared for the document's commands, not by its front matter


def bash_declared(doc: Document, options: Options) -> bool:
    """True when steps may run shell commands through `bash`."""
    allowed = {KNOWN_TOOLS.get(t.lower()) for t in doc.front.allowed_tools}
    return "bash" in allowed or "bash" in options.tools


def has_commands(clauses: list[Clause]) -> bool:
    """True when the document has shell fences or steps that say to run an inline command."""
    return any(c.kind == "command" or (c.kind in ("step", "knowledge") and _inline_command(c.text) is not None)
               for c in clauses)


class StructuralCompiler:
    """Builds one machine from a document's clauses."""

    def __init__(self, doc: Document, clauses: list[Clause], options: Options) -> None:
        self.doc = doc
        self.clauses = clauses
        self.options = options
        self.states: dict[str, DState] = {}
        self.vars: dict[str, n.TypeExpr] = {}
        self.counters: dict[str, int] = {}
        self.inits: dict[str, n.Expr] = {}  # variables with an initial value
        self.terminals: dict[str, tuple[str, list[str], int | None, int | None]] = {}
        self.rules: list[n.Rule] = []
        self.landings: dict[int, str] = {}
        self.state_names = Namer({"fallback", "done"})
        self.var_names = Namer({TASK})
        self.tool_names = Namer({"bash"})
        self.bash_declared = bash_declared(doc, options)
        # Commands to run make `bash` available even when the front matter does not declare it.
        self.bash = self.bash_declared or has_commands(clauses)
        self.entries: dict[int, str] = {}  # step ordinal -> entry state
        self.order: list[str] = []  # states in the order they were made
        self._heading_blocks = [b for b in doc.blocks if b.kind == "heading"]
        self._headings = [b.start for b in self._heading_blocks]
        self._index: dict[str, list[str]] | None = None
        self._prompted_states: list[str] | None = None
        self.steps: list[str] = []  # states made from steps, in order
        self.forward: list[tuple[DEdge, int, Clause]] = []  # "continue to step N" edges to resolve at the end
        self._pending_arm: DEdge | None = None
        self._compared: tuple[str, str] | None = None  # (command output, held value) of the latest comparison
        # (command template, its hole, the variable filling it, the state writing it, the sentence saying so)
        self.templates: list[tuple[str, str, str, str, Clause]] = []
        self.problems: list[tuple[str, str, Clause]] = []  # (code, message, clause) for the front end's diagnostics

    # ------------------------------------------------------------ building blocks

    def _state(self, kind: str, base: str, clause_lines: tuple[int, int], topic: str = "") -> DState:
        s = DState(self.state_names.fresh(base), kind, *clause_lines)
        s.topic = content_stems(topic)
        self.states[s.name] = s
        self.order.append(s.name)
        return s

    def _var(self, base: str, type_: n.TypeExpr) -> str:
        name = self.var_names.fresh(base)
        self.vars[name] = type_
        return name

    def _counter(self, base: str, limit: int) -> str:
        name = self.var_names.fresh(base)
        self.counters[name] = max(1, limit)
        return name

    def _land(self, clause: Clause, where: str) -> None:
        self.landings.setdefault(clause.index, where)

    def _terminal(self, name: str, outcome: str, clause: Clause | None = None) -> str:
        if name not in self.terminals:
            self.state_names.taken.add(name)
            self.terminals[name] = (outcome, [], None, None)
        if clause is not None:
            docs = self.terminals[name][1]
            text = strip_markup(clause.text)
            if text not in docs:
                docs.append(text)
        return name

    def _where(self, start: int, end: int) -> n.Provenance:
        """`from "SKILL.md":START-END` (just START for one line)."""
        return n.Provenance(self.options.source, start, end if end != start else None)

    @staticmethod
    def _eq(var: str, label: str) -> n.Expr:
        return n.BinOp("==", n.Name(var), n.Name(label))

    @staticmethod
    def _below(counter: str, limit: int) -> n.Expr:
        return n.BinOp("<", n.Name(counter), n.IntLit(limit))

    @staticmethod
    def _bump(counter: str) -> tuple[n.Assign, ...]:
        return (n.Assign(counter, "+=", n.IntLit(1)),)

    # ------------------------------------------------------------ units

    def units(self) -> list[Unit]:
        """Group the control clauses into units, attaching commands, notes, `Otherwise` and loops."""
        out: list[Unit] = []
        for c in self.clauses:
            prev = out[-1] if out else None
            if c.kind == "step":
                out.append(Unit("step", [c]))
            elif c.kind == "command":
                if prev is not None and prev.kind == "step" and prev.command is None and _near(prev, c):
                    prev.command = c
                else:
                    out.append(Unit("step", [], command=c))
            elif c.kind == "branch" and c.block is not None and c.block.kind == "code":
                out.append(Unit("tree", [c]))
            elif c.kind == "branch" and re.match(r"^(?:otherwise|else)\b", strip_markup(c.text), re.I):
                if prev is not None and prev.kind == "branch" and prev.otherwise is None:
                    prev.otherwise = c
                else:
                    out.append(Unit("step", [c]))  # an `Otherwise` with nothing before it is just a step
            elif c.kind == "branch":
                if prev is not None and prev.kind == "branch" and prev.otherwise is None and _same_block(prev, c):
                    prev.arms.append(c)
                else:
                    out.append(Unit("branch", [c], arms=[c]))
            elif c.kind == "loop":
                if prev is not None and prev.kind == "branch" and prev.loop is None and (
                        _again(prev.arms[-1].text) or _BACK.search(strip_markup(prev.arms[-1].text))):
                    prev.loop = c
                else:
                    out.append(Unit("loop", [c]))
            elif c.kind == "verify":
                if prev is not None and prev.kind == "verify" and prev.clauses[-1].section == c.section \
                        and prev.clauses[-1].block.checkbox == c.block.checkbox:
                    prev.clauses.append(c)
                else:
                    out.append(Unit("verify", [c]))
        # Multi-way conditions without `Otherwise` are sequential yes/no questions.
        split: list[Unit] = []
        for u in out:
            if u.kind == "branch" and len(u.arms) > 1 and u.otherwise is None:
                for i, arm in enumerate(u.arms):
                    split.append(Unit("branch", [arm], arms=[arm], loop=u.loop if i == len(u.arms) - 1 else None))
            else:
                split.append(u)
        # Bullets and later sentences of a numbered item detail that item's step.
        by_item: dict[int, Unit] = {}
        for u in split:
            if u.kind == "step" and u.clauses and u.clauses[0].block is not None and u.clauses[0].block.item is not None:
                by_item.setdefault(u.clauses[0].block.item, u)
        for c in self.clauses:
            if c.kind == "knowledge" and c.block is not None:
                owner = by_item.get(c.block.item) or by_item.get(c.block.parent_item)
                if owner is not None:
                    owner.notes.append(c)
        return _decisions(split)

    def compile(self) -> Compiled:
        """The machine as an AST module."""
        units = self.units()
        procedure = bool(units)
        if not procedure:
            units = [Unit("whole", [])]
        pending: list[DEdge] = []
        last_tool: DState | None = None
        for i, unit in enumerate(units):
            nxt = units[i + 1] if i + 1 < len(units) else None
            extra = self._tool_failure(last_tool, unit) if unit.kind == "branch" and last_tool else None
            if extra is not None:  # a condition on the command just run: guards of its tool state
                pending = pending + extra
                continue
            entry, exits = getattr(self, f"_unit_{unit.kind}")(unit, nxt)
            for e in pending:
                e.target = entry
            pending = exits
            last = self.states.get(self.order[-1]) if self.order else None
            last_tool = last if last is not None and last.kind == "tool" and last.tool == "bash" else None
            for c in unit.clauses:
                if c.ordinal is not None and c.ordinal not in self.entries:
                    self.entries[c.ordinal] = entry
        done = self._terminal("done", "success")
        for e in pending:
            e.target = done
        self._resolve_forward(done)
        looped = {e.target for st in self.states.values() for e in st.edges if e.assigns}
        for s in self.states.values():
            if s.failure == "retry":  # out of retries with the command still failing
                s.edges.insert(len(s.edges) - 1, DEdge(self._failed(s), "fallback"))
            if s.name in looped:  # a command a loop runs again ("until the tests pass") may fail on the way
                s.edges = [e for e in s.edges if not e.auto]
        self._place_rules()
        self._contradictions()
        self._foreign_code()
        self._place_knowledge()
        self._infer_reads()
        module = self._module()
        added = not self.bash_declared and any(st.kind == "tool" and st.tool == "bash" for st in self.states.values())
        return Compiled(module, procedure, tuple((code, msg, c.start, c.end) for code, msg, c in self.problems), added)

    def _resolve_forward(self, done: str) -> None:
        """Point each "continue to step N" edge at step N's state (SKM316 and the end when there is no step N)."""
        for edge, number, clause in self.forward:
            edge.target = self.entries.get(number)
            if edge.target is None:
                edge.target = done
                self.problems.append(("SKM316", f"the document refers to step {number}, which does not exist",
                                      clause))

    @staticmethod
    def _failed(tool: DState) -> n.Expr:
        status = next(v for v, r in tool.writes if r in ("exit_code",))
        return n.BinOp("!=", n.Name(status), n.IntLit(0))

    def _tool_failure(self, tool: DState, unit: Unit) -> list[DEdge] | None:
        """A condition on the failure of the command just run, as guarded edges of its tool state; the new exits."""
        if len(unit.arms) != 1 or unit.otherwise is not None or not any(r == "exit_code" for _, r in tool.writes):
            return None
        clause = unit.arms[0]
        cond, action = _if_parts(clause.text)
        if not _FAILS.search(cond) or not action:
            return None
        failed = self._failed(tool)
        default = tool.edges.pop()  # the default edge, still waiting for its target
        exits: list[DEdge] = []
        self._land(clause, tool.name)
        tool.end = max(tool.end, clause.end)
        plain = strip_markup(action).rstrip(".")
        if _again(plain) and _stop_clause(plain) is None:
            limit = _max_times(clause.text) or self.options.max_repeats
            counter = self._counter(f"{tool.name}_retries", limit)
            wait = re.sub(r"(?:,?\s*(?:and|then)\s+)?\b(?:retry|try again|rerun|re-run|run it again)\b.*$", "", plain,
                          flags=re.I).strip(" ,;.")
            target = tool.name
            if wait:
                s = self._state("model", slug(wait), (clause.start, clause.end), wait)
                s.text.append(wait[0].upper() + wait[1:] + ".")
                s.writes = [(self._var(f"{s.name}_result", n.NamedType("str")), None)]
                s.edges = [DEdge(None, tool.name)]
                target = s.name
            tool.edges.append(DEdge(n.BinOp("and", failed, self._below(counter, limit)), target, self._bump(counter)))
            tool.failure = tool.failure or "retry"
        else:
            self._arm(tool, failed, action, clause, exits, cond)
            tool.failure = "handled"
        tool.edges.append(default)
        return exits

    def _step_text(self, unit: Unit) -> tuple[str, int, int]:
        lead = unit.clauses[0] if unit.clauses else unit.command
        return strip_markup(lead.text) if unit.clauses else "", lead.start, lead.end

    def _unit_step(self, unit: Unit, nxt: Unit | None) -> tuple[str, list[DEdge]]:
        text, start, end = self._step_text(unit)
        if unit.clauses and _OPTIONAL.search(text) and unit.clauses[0].kind == "step":
            return self._optional(unit, nxt, text)
        return self._step(unit, nxt)

    def _optional(self, unit: Unit, nxt: Unit | None, text: str) -> tuple[str, list[DEdge]]:
        """Work the document makes optional ("only when", "if needed", "optionally"): a judge that can skip it."""
        lead = unit.clauses[0]
        j, var = self._judge(f"whether_{slug(text)}", slug(text, default="step") + "_needed", ["yes", "no"], lead,
                             f"Decide whether this optional step applies now: {text} Answer `yes` or `no`.")
        j.topic |= content_stems(text)
        entry, exits = self._step(unit, nxt)
        skip = DEdge(None, NEXT)
        j.edges = [DEdge(self._eq(var, "yes"), entry), skip]
        return j.name, exits + [skip]

    def _tool_state(self, base: str, lines: tuple[int, int], topic: str, tool: str,
                    parts: list[str | tuple[str, str]]) -> DState:
        """A tool state calling `tool` with the argument `parts`; writes its output (and bash's exit status)."""
        s = self._state("tool", base, lines, topic)
        s.tool, s.parts = tool, parts
        self.steps.append(s.name)
        if tool == "ask_user":
            s.writes = [(self._var(f"{s.name}_answer", n.NamedType("str")), "answer")]
        else:
            out = self._var(f"{s.name}_output", n.NamedType("str"))
            status = self._var(f"{s.name}_status", n.NamedType("int"))
            s.writes = [(out, "stdout"), (status, "exit_code")]
        return s

    def _step(self, unit: Unit, nxt: Unit | None) -> tuple[str, list[DEdge]]:
        text, start, end = self._step_text(unit)
        command = unit.command
        said = " ".join(c.text for c in unit.clauses)
        inline = _inline_command(said)
        parts = self._formed_command(said) if self.bash and _RUN_FORMED.search(strip_markup(said)) else None
        if parts is None and inline is not None and self.bash and command is None:
            parts = [inline]
        if command is not None and command.block is not None and command.block.info in _NOT_BASH:
            self.problems.append(("SKM319", f"the commands are `{command.block.info}`, which `bash` cannot run: kept "
                                            "as instructions", command))
            command_runs = False
        else:
            command_runs = command is not None
        if command_runs and self.bash:
            parts = [command.text.strip()]
        if parts is not None:
            s = self._tool_state(slug(text or (command.text if command else "run").split("\n")[0], default="run"),
                                 (start, command.end if command else end), text or said, "bash", parts)
            for _, _, var, maker, form in self.templates[-1:]:
                if ("quote", var) in parts:  # the command is built from what that step produced
                    self.rules.append(n.Rule("reads", (s.name, maker), _quote(form),
                                             self._where(form.start, form.end)))
            if unit.clauses:
                s.text.append(text)
            for c in [*unit.clauses, *([command] if command else []), *unit.notes]:
                self._land(c, s.name)
            s.notes += [strip_markup(c.text) for c in unit.notes]
            exits = [DEdge(None, NEXT)]
            if nxt is None or nxt.kind not in ("branch", "loop", "verify", "tree"):
                s.edges.append(DEdge(self._failed(s), "fallback", auto=True))
            s.edges.extend(exits)
            return s.name, exits
        if unit.clauses and _ASK.search(strip_markup(said)):
            s = self._tool_state(slug(text, default="ask_user"), (start, end), text, "ask_user", [text])
            s.text.append(text)
            for c in [*unit.clauses, *unit.notes]:
                self._land(c, s.name)
            s.notes += [strip_markup(c.text) for c in unit.notes]
            exits = [DEdge(None, NEXT)]
            s.edges = list(exits)
            return s.name, exits
        s = self._state("model", slug(text or "run the commands"), (start, end), text)
        self.steps.append(s.name)
        s.text.append(text or "Run the commands below.")
        for c in unit.clauses:
            self._land(c, s.name)
        for c in self._reference(text):  # "following the branch rules (below)": that section constrains this step
            s.constraints.append(strip_markup(c.text))
            self._land(c, s.name)
        if command is not None:
            s.text.append("Commands:\n" + command.text.strip())
            s.topic |= content_stems(command.text)
            self._land(command, s.name)
        form = next((m for m in (_FORM.search(_unbold(c.text)) for c in [*unit.clauses, *unit.notes]) if m), None)
        if form is not None and self.bash:  # the model gives only the part that needs judgement
            template, hole, meaning = form.group(1), form.group(2), form.group(3).strip()
            letters = _letter_range(" ".join(c.text for c in self.clauses)) if _LETTER.search(meaning) else None
            var = self._var(slug(meaning, 3, "value"), n.EnumType(letters) if letters else n.NamedType("str"))
            s.writes = [(var, None)]
            s.text.append(f"Give only {meaning}: the value that replaces `{hole}` in the command `{template}`. "
                          f"Answer with that value alone, no other text.")
            self.templates.append((template, hole, var, s.name, next(c for c in [*unit.clauses, *unit.notes]
                                                                      if _FORM.search(_unbold(c.text)))))
        else:
            s.writes = [(self._var(f"{s.name}_result", n.NamedType("str")), None)]
        for c in unit.notes:
            s.notes.append(strip_markup(c.text))
            self._land(c, s.name)
        exits = [DEdge(None, NEXT)]
        s.edges = exits
        return s.name, exits

    def _formed_command(self, said: str) -> list[str | tuple[str, str]] | None:
        """The argument of "Run the command": the latest template with its hole filled, else the latest command made."""
        if self.templates:
            template, hole, var, _, _ = self.templates[-1]
            pieces = template.split(hole)
            parts: list[str | tuple[str, str]] = []
            for i, piece in enumerate(pieces):
                if i:
                    parts.append(("quote", var))
                if piece:
                    parts.append(piece)
            return parts
        made = next((self.states[name] for name in reversed(self.steps)
                     if "command" in " ".join(self.states[name].text).lower() and self.states[name].kind == "model"),
                    None)
        return [("var", made.writes[0][0])] if made is not None else None

    def _action(self, text: str, clause: Clause, exits: list[DEdge], condition: str = "",
                repeats: int | None = None) -> str:
        """The target of a branch arm: a state doing `text`, a terminal, or NEXT (an edge in `exits`).

        An arm that goes back ("… again", "return to step N") may do so `repeats` times (default `--max-repeats`).
        """
        plain = strip_markup(text).strip().rstrip(".")
        stop = _stop_clause(plain)
        terminal = None
        if stop is not None:
            plain, name, outcome = stop
            terminal = self._terminal(name, outcome, clause)
        forward = _FORWARD.search(plain)
        if forward is not None and int(forward.group(1)) not in self.entries:
            plain = plain[: forward.start()].strip(" ,;").removesuffix(" and").removesuffix(" then").strip(" ,;")
        # A jump back, not an action that merely sounds like one ("restart the service").
        back = re.search(r"\b(?:go back|return to|start over|restart (?:from|at|with)|continue (?:to|with) step)\b.*$",
                         plain, re.I)
        back_target = None
        if back is None and _again(plain):
            phrase = next((p for p in re.split(r",|\band\b|\bthen\b", plain) if _again(p)), plain)
            phrase = re.sub(r"\b(?:again|retry|rerun|re-run)\b", "", phrase)
            # "… again" repeats a step made before (not another arm's action), the latest that fits best.
            back_target = self._best_match(phrase, ("model", "tool"), keep_verbs=True, among=self.steps) \
                or self._best_match(plain + " " + condition, ("model", "tool"), among=self.steps)
        if back and not re.match(r"^(?:return|go back)\s+(?:the|it)\b", plain[back.start():], re.I):
            back_target = self._back_target(plain[back.start():], condition)
            plain = plain[: back.start()].strip(" ,;").removesuffix(" and").removesuffix(" then").strip(" ,;")
        if back_target is not None and not plain:
            plain = strip_markup(text[back.start():] if back else text).strip().rstrip(".")
        if re.fullmatch(r"(?:please\s+)?(?:continue|proceed|skip|move on|go on)\b.*", plain, re.I) or not plain:
            if terminal is not None:
                return terminal
            e = DEdge(None, NEXT)
            if forward is not None and int(forward.group(1)) not in self.entries:
                self.forward.append((e, int(forward.group(1)), clause))
                return self._placeholder(e)
            exits.append(e)
            return ""  # resolved through the edge placed in `exits`
        lines = (clause.start, clause.end)
        referred = self._reference(plain)
        if referred and self._actionable(referred):  # "treat it as described under X (below)": do what X says
            plain = " ".join(strip_markup(c.text).rstrip(".") + "." for c in referred).rstrip(".")
            lines = (referred[0].start, referred[-1].end)
        s = self._state("model", slug(plain), lines, plain + " " + condition)
        s.text.append(plain[0].upper() + plain[1:] + ".")
        s.writes = [(self._var(f"{s.name}_result", n.NamedType("str")), None)]
        for c in referred:
            self._land(c, s.name)
            if not self._actionable(referred):
                s.constraints.append(strip_markup(c.text))
        if terminal is not None:
            s.edges.append(DEdge(None, terminal))
            if clause.block is None or clause.block.kind != "code":  # the stop clause, as a rule the checker proves
                self.rules.append(n.Rule("ends", (s.name,), _quote(clause), self._where(clause.start, clause.end),
                                         self.terminals[terminal][0]))
        elif back_target is not None:
            limit = repeats or _max_times(text) or self.options.max_repeats
            counter = self._counter(f"{s.name}_rounds", limit)
            s.edges.append(DEdge(self._below(counter, limit), back_target, self._bump(counter)))
            e = DEdge(None, NEXT)
            s.edges.append(e)
            exits.append(e)
        else:
            e = DEdge(None, NEXT)
            s.edges.append(e)
            if forward is not None and int(forward.group(1)) not in self.entries:
                self.forward.append((e, int(forward.group(1)), clause))
            else:
                exits.append(e)
        return s.name

    def _reference(self, text: str) -> list[Clause]:
        """The clauses of the section a "(below)" / "(above)" reference names, best title match; [] when none."""
        m = _REFERENCE.search(text) or re.search(r"(\w[\w ]{2,40}?)\s*\((?:below|above)\)", text)
        if m is None:
            return []
        want = content_stems(m.group(1))
        best, score = None, 0
        for h in self._heading_blocks:
            overlap = len(want & content_stems(h.text))
            if overlap > score:
                best, score = h, overlap
        if best is None:
            return []
        start, end = self._section(best.start)
        return [c for c in self.clauses if start < c.start < end and c.kind not in ("command",)
                and c.index not in self.landings]

    @staticmethod
    def _actionable(clauses: list[Clause]) -> bool:
        """A referenced section says what to do (imperative sentences), rather than rules or background."""
        from skillc.frontends.markdown.clauses import _section_role, is_imperative

        return bool(clauses) and _section_role(clauses[0].section) not in ("rules", "knowledge") \
            and all(is_imperative(c.text) for c in clauses)

    def _placeholder(self, edge: DEdge) -> str:
        """A target for an arm whose edge is resolved later (a forward "continue to step N")."""
        self._pending_arm = edge
        return FORWARD

    def _back_target(self, phrase: str, condition: str) -> str | None:
        """The state a "go back to …" phrase names: a step number, the top, or the best match."""
        m = re.search(r"\bsteps?\s+(\d+)", phrase, re.I)
        if m and int(m.group(1)) in self.entries:
            return self.entries[int(m.group(1))]
        if re.search(r"\b(?:top|start|beginning|first step)\b", phrase, re.I) and self.order:
            return self.order[0]  # terminals are not in `order`: this is the start state
        return self._best_match(phrase + " " + condition) or (self.order[0] if self.order else None)

    def _best_match(self, text: str, kinds: Iterable[str] = ("model", "tool", "judge"), keep_verbs: bool = False,
                    among: list[str] | None = None) -> str | None:
        """The state sharing most content words with `text`: the first made, or with `among`, the latest of those."""
        want = content_stems(text) - ({"again", "repeat"} if keep_verbs else {"again", "repeat", "run", "go", "back"})
        best, score = None, 0
        for name in (self.order if among is None else reversed(among)):
            s = self.states[name]
            if s.kind not in kinds:
                continue
            overlap = len(want & s.topic)
            if overlap > score:
                best, score = name, overlap
        return best

    def _judge(self, base: str, var_base: str, labels: list[str], clause: Clause, prompt: str) -> tuple[DState, str]:
        s = self._state("judge", base, (clause.start, clause.end), prompt)
        var = self._var(var_base, n.EnumType(tuple(labels)))
        s.writes = [(var, None)]
        s.text.append(prompt)
        return s, var

    def _unit_branch(self, unit: Unit, nxt: Unit | None) -> tuple[str, list[DEdge]]:
        exits: list[DEdge] = []
        if len(unit.arms) == 1:
            cond, action = _if_parts(unit.arms[0].text)
            first = unit.arms[0]
            cond = self._lead_condition(unit, cond)
            j, var = self._judge(f"if_{slug(cond)}", slug(cond, default="answer"), ["yes", "no"], first,
                                 f"Decide whether this holds: {cond}. Answer `yes` or `no`.")
            j.topic |= content_stems(cond)
            self._land(first, j.name)
            self._take_lead(j, unit)
            repeats = _max_times(unit.loop.text) if unit.loop is not None else None
            yes = self._arm(j, self._checked(self._eq(var, "yes"), cond), action, first, exits, cond, repeats)
            if unit.loop is not None:
                self._land(unit.loop, j.name)
                j.end = max(j.end, unit.loop.end)
                j.text.append(strip_markup(unit.loop.text))
                onward = _FORWARD.search(strip_markup(unit.loop.text)) or re.search(
                    r"\b(?:continue|proceed|go on|move on)\b", unit.loop.text, re.I)
                if yes in self.states and (nxt is None or nxt.kind != "branch"):
                    # Out of rounds with the condition still true: the loop failed, unless the document goes on.
                    for e in self.states[yes].edges:
                        if e.guard is None and e in exits:
                            if onward is None:
                                e.target = "fallback"
                                exits.remove(e)
                            elif isinstance(onward.re, re.Pattern) and onward.re is _FORWARD \
                                    and int(onward.group(1)) not in self.entries:
                                exits.remove(e)
                                self.forward.append((e, int(onward.group(1)), unit.loop))
            if unit.otherwise is not None:
                self._otherwise(j, unit.otherwise, exits, "not " + cond)
            else:
                e = DEdge(None, NEXT)
                j.edges.append(e)
                exits.append(e)
            return j.name, exits
        # Several conditions and an `Otherwise`: one judge with a label per condition.
        first = unit.arms[0]
        labels: list[str] = []
        namer = Namer()
        parts = []
        for arm in unit.arms:
            cond, action = _if_parts(arm.text)
            cond = self._lead_condition(unit, cond)
            labels.append(namer.fresh(slug(cond, default="case")))  # conditions are sentences: skip filler words
            parts.append((cond, action, arm))
        labels.append(namer.fresh("otherwise"))
        cases = "; ".join(f"`{label}` when {cond}" for label, (cond, _, _) in zip(labels, parts))
        j, var = self._judge(f"decide_{slug(first.text.split(',')[0], 2)}", slug(parts[0][0], 2, "case") + "_case",
                             labels, first, f"Decide which case holds: {cases}; `{labels[-1]}` when none of these.")
        self._take_lead(j, unit)
        for label, (cond, action, arm) in zip(labels, parts):
            self._land(arm, j.name)
            j.topic |= content_stems(cond)
            self._arm(j, self._eq(var, label), action, arm, exits, cond)
        self._otherwise(j, unit.otherwise, exits)
        return j.name, exits

    @staticmethod
    def _lead_condition(unit: Unit, cond: str) -> str:
        """The condition an arm like "If it does" stands for: the lead's "whether …"."""
        if unit.lead is None or not _ANAPHORIC.match(cond.strip()):
            return cond
        asked = _DECIDE.match(strip_markup(unit.lead.text)).group(1)
        return asked if not re.search(r"\bnot\b", cond) else f"not ({asked})"

    def _checked(self, said: n.Expr, cond: str) -> n.Expr:
        """A judge's `yes` guard, tied to the comparison it names when a guard can decide it.

        "the content is exactly the chosen letter" compares the latest command output with a
        value the machine holds: the arm needs the judge's yes *and* equality; "the content
        differs" takes the arm on the judge's yes *or* inequality. So no verdict of the model can
        take a run past a mismatch the machine can see.
        """
        out = self._latest_output()
        same = _EXACTLY.match(cond)
        if out is not None and same is not None:
            held = slug(same.group(1), 3, "value")
            if held in self.vars and held != out:
                self._compared = (out, held)
                return n.BinOp("and", said, self._same(out, held, "=="))
        if out is not None and _DIFFERS.match(cond) and self._compared and self._compared[0] == out:
            return n.BinOp("or", said, self._same(out, self._compared[1], "!="))
        return said

    def _latest_output(self) -> str | None:
        """The variable holding the standard output of the latest command made so far."""
        for name in reversed(self.order):
            s = self.states[name]
            if s.kind == "tool":
                return next((v for v, r in s.writes if r == "stdout"), None)
        return None

    def _same(self, out: str, held: str, op: str) -> n.Expr:
        """`out == held` (or `!=`), comparing an enum by its text."""
        value: n.Expr = n.Name(held)
        if not isinstance(self.vars[held], n.NamedType):
            value = n.CallExpr("str", (value,))
        return n.BinOp(op, n.Name(out), value)

    def _take_lead(self, j: DState, unit: Unit) -> None:
        """The judge of a branch with a lead asks the lead's question and keeps its notes."""
        if unit.lead is None:
            return
        j.start = min(j.start, unit.lead.start)
        j.text.insert(0, strip_markup(unit.lead.text))
        self._land(unit.lead, j.name)
        for c in unit.notes:
            j.notes.append(strip_markup(c.text))
            self._land(c, j.name)

    def _arm(self, j: DState, guard: n.Expr | None, action: str, clause: Clause, exits: list[DEdge],
             condition: str = "", repeats: int | None = None) -> str:
        """Route `guard` of judge `j` to the arm's action; returns its state ('' when the arm just goes on)."""
        before = len(exits)
        target = self._action(action, clause, exits, condition, repeats)
        if target == FORWARD:
            self._pending_arm.guard = guard
            j.edges.append(self._pending_arm)
            return ""
        if target:
            j.edges.append(DEdge(guard, target))
        else:  # the arm continues with whatever comes next: the edge is one of the exits
            exits[before].guard = guard
            j.edges.append(exits[before])
        return target

    def _otherwise(self, j: DState, clause: Clause, exits: list[DEdge], condition: str = "") -> None:
        """The default edge of a condition's judge: the `Otherwise, …` arm."""
        self._land(clause, j.name)
        j.end = max(j.end, clause.end)
        other = re.sub(r"^(?:otherwise|else)\b,?\s*", "", strip_markup(clause.text), flags=re.I)
        self._arm(j, None, other, clause, exits, condition)

    def _unit_loop(self, unit: Unit, nxt: Unit | None) -> tuple[str, list[DEdge]]:
        c = unit.clauses[0]
        plain = strip_markup(c.text)
        m = re.search(r"\buntil\b\s*(.*?)(?:[,;]|\bbut\b|\bat most\b|$)", plain, re.I)
        cond = (m.group(1) if m else plain).strip().rstrip(".") or "the work is complete"
        limit = _max_times(plain) or self.options.max_repeats
        j, var = self._judge(f"until_{slug(cond)}", slug(cond, default="goal") + "_reached", ["yes", "no"], c,
                             f"{plain} Decide whether this now holds: {cond}. Answer `yes` or `no`.")
        self._land(c, j.name)
        j.topic |= content_stems(cond)
        target = self._loop_target(c)
        exits = [DEdge(self._eq(var, "yes"), NEXT)]
        j.edges.append(exits[0])
        if target is not None:
            counter = self._counter(f"{j.name}_rounds", limit)
            j.edges.append(DEdge(self._below(counter, limit), target, self._bump(counter)))
            j.edges.append(DEdge(None, "fallback"))
        else:
            e = DEdge(None, NEXT)
            j.edges.append(e)
            exits.append(e)
        return j.name, exits

    def _loop_target(self, c: Clause) -> str | None:
        """Where a "repeat" goes back to: a step number, this numbered item's first state, or the previous state."""
        m = re.search(r"\bsteps?\s+(\d+)", c.text, re.I)
        if m and int(m.group(1)) in self.entries:
            return self.entries[int(m.group(1))]
        if c.ordinal is not None and c.ordinal in self.entries:
            return self.entries[c.ordinal]
        return self._best_match(c.text) or (self.order[-1] if self.order else None)

    def _unit_verify(self, unit: Unit, nxt: Unit | None) -> tuple[str, list[DEdge]]:
        first = unit.clauses[0]
        items = [strip_markup(c.text) for c in unit.clauses]
        checklist = first.block is not None and first.block.checkbox
        title = first.section[-1] if (checklist or len(items) > 1) and first.section else items[0]
        title = re.sub(r"^(?:verify|check|make sure|ensure|confirm|validate|double-check)\b\s*(?:that\s+)?", "",
                       title, flags=re.I) or title
        previous = self.order[-1] if self.order else None
        prompt = ("Check every item below against the work so far. Answer `passed` only when all of them hold, "
                  "otherwise `failed`.\n" + "\n".join(f"- {t}" for t in items)) if len(items) > 1 else \
            f"{items[0]} Answer `passed` if it holds, otherwise `failed`."
        j, var = self._judge(f"verify_{slug(title, 2)}", slug(title, 2, "check") + "_verdict", ["passed", "failed"],
                             first, prompt)
        j.end = unit.clauses[-1].end
        for c in unit.clauses:
            self._land(c, j.name)
            j.topic |= content_stems(c.text)
        limit = self.options.max_revisions
        revise = self._state("model", f"revise_{slug(title, 2)}", (first.start, unit.clauses[-1].end), title)
        counter = self._counter(f"{revise.name}_rounds", limit)
        exits = [DEdge(self._eq(var, "passed"), NEXT)]
        j.edges = [exits[0], DEdge(n.BinOp("and", self._eq(var, "failed"), self._below(counter, limit)),
                                   revise.name, self._bump(counter)), DEdge(None, "fallback")]
        revise.text.append("The check below failed. Fix the work so that it holds, changing only what is needed:\n"
                           + "\n".join(f"- {t}" for t in items))
        prev = self.states.get(previous) if previous else None
        if prev is not None and prev.kind == "model" and prev.writes[0][0] in {t[2] for t in self.templates}:
            # A command's hole stays the step's own output: the revise state says what to fix (starting
            # empty, so the step can read it on its first run too) and the step gives the value again.
            feedback = self._var(f"{revise.name}_feedback", n.NamedType("str"))
            self.inits[feedback] = n.StrLit("")
            revise.writes = [(feedback, None)]
            revise.wants.append(prev.writes[0][0])
            revise.text.append("Say in one sentence what is wrong with the value and how to correct it.")
            revise.edges = [DEdge(None, prev.name)]
            prev.wants.append(feedback)
            prev.text.append(f"If `{feedback}` is not empty, the previous value was rejected for that reason.")
        elif prev is not None and prev.kind == "model":
            revise.start = min(revise.start, prev.start)  # it redoes that step: it comes from the step's lines too
            revise.writes = [prev.writes[0]]
            revise.wants.append(prev.writes[0][0])
            revise.edges = [DEdge(None, j.name)]
        elif prev is not None and prev.kind == "tool":
            revise.writes = [(self._var(f"{revise.name}_result", n.NamedType("str")), None)]
            revise.edges = [DEdge(None, prev.name)]  # run the command again after the fix
        else:
            revise.writes = [(self._var(f"{revise.name}_result", n.NamedType("str")), None)]
            revise.edges = [DEdge(None, j.name)]
        j.wants.extend(v for v, _ in (prev.writes if prev is not None else []))
        return j.name, exits

    def _unit_tree(self, unit: Unit, nxt: Unit | None) -> tuple[str, list[DEdge]]:
        c = unit.clauses[0]
        root = parse_tree(c.text)
        exits: list[DEdge] = []
        if root is None:  # drawn like a tree but not one: keep it as an instruction step
            return self._unit_step(Unit("step", [c]), nxt)
        entry = self._tree_node(root, c, exits)
        self._land(c, entry)
        return entry, exits

    def _tree_node(self, node: TreeNode, c: Clause, exits: list[DEdge]) -> str:
        line = c.start + 1 + node.line
        if not node.children:
            before = len(exits)
            fake = attrs.evolve(c, start=line, end=line)
            target = self._action(node.text, fake, exits)
            return target or self._pass_through(exits, before, fake)
        namer = Namer()
        labels = [namer.fresh(label_slug(ch.label)) for ch in node.children]
        question = node.text.strip()
        question += "" if question[-1:] in ".?!:" else "."
        options = ", ".join(f"`{lab}` ({ch.label})" for lab, ch in zip(labels, node.children))
        s, var = self._judge(slug(question, 3, "question"), slug(question, 3, "answer") + "_answer", labels,
                             attrs.evolve(c, start=line, end=line), f"{question} Answer one of: {options}.")
        s.topic |= content_stems(question)
        for i, (lab, child) in enumerate(zip(labels, node.children)):
            target = self._tree_node(child, c, exits)
            last = i == len(labels) - 1  # the last label takes the default edge: the labels cover every case
            s.edges.append(DEdge(None if last else self._eq(var, lab), target))
        return s.name

    def _pass_through(self, exits: list[DEdge], before: int, c: Clause) -> str:
        """A leaf that only continues: a small model state that records the decision and goes on."""
        s = self._state("model", "note_decision", (c.start, c.end))
        s.text.append("Record the decision reached in the tree and continue.")
        s.writes = [(self._var(f"{s.name}_result", n.NamedType("str")), None)]
        e = exits.pop(before)
        e.guard = None
        s.edges.append(e)
        exits.append(e)
        return s.name

    def _unit_whole(self, unit: Unit, nxt: Unit | None) -> tuple[str, list[DEdge]]:
        title = self.doc.front.name or next((b.text for b in self.doc.blocks if b.kind == "heading"), "the task")
        s = self._state("model", "apply_" + slug(title, 2, "skill"), (1, len(self.doc.lines)), "")
        s.text.append(f"Carry out the task, applying the guidance of \"{title}\" below.")
        s.writes = [(self._var("result", n.NamedType("str")), None)]
        exits = [DEdge(None, NEXT)]
        s.edges = exits
        return s.name, exits

    # ------------------------------------------------------------ rules, knowledge, reads

    def _place_rules(self) -> None:
        """Requirements and prohibitions become rules where they name an operation, and instructions everywhere."""
        for c in self.clauses:
            if c.kind == "terminate":
                outcome, docs, start, end = self.terminals["done"]
                docs.append(strip_markup(c.text))
                self.terminals["done"] = (outcome, docs, start or c.start, c.end if start is None else end)
                self._land(c, "done")
            quote = re.sub(r"\s+", " ", c.text).strip()
            where = self._where(c.start, c.end)
            if c.kind == "step" and _REQUIRE.search(strip_markup(c.text)) and self.landings.get(c.index) in self.states:
                self.rules.append(n.Rule("required", (self.landings[c.index],), quote, where))
            if c.kind not in ("require", "forbid"):
                continue
            text = strip_markup(c.text)
            if c.kind == "forbid":
                # A prohibition constrains the prompts of the states it concerns; "never A before B" is
                # also the order B before A. No operation is invented for it to forbid.
                targets = self._concerned(c)
                m = re.search(r"^(.*?)\b(?:before|until)\b(.+)$", _prohibited_action(text), re.I)
                pair = _order_pair(f"{m.group(2)} before {m.group(1)}", self) if m else None
                if pair is not None:
                    self.rules.append(n.Rule("order", pair, quote, where))
                    self._land(c, f"rule order {pair[0]} before {pair[1]}")
            else:
                targets = self._concerned(c)
                pair = _order_pair(text, self)
                ops = self._operations(text)
                if pair is not None:
                    self.rules.append(n.Rule("order", pair, quote, where))
                    self._land(c, f"rule order {pair[0]} before {pair[1]}")
                elif len(ops) == 1:
                    self.rules.append(n.Rule("required", (ops[0],), quote, where))
                    self._land(c, f"rule required {ops[0]}")
            for t in targets or self._section_states(c) or self._prompted():
                self.states[t].constraints.append(text)
                self._land(c, t)

    def _contradictions(self) -> None:
        """Two stated orders A before B and B before A: neither can be a rule (SKM318); both stay instructions."""
        orders = {r.ops: r for r in self.rules if r.kind == "order"}
        clash = {ops for ops in orders if ops[::-1] in orders}
        for ops in sorted(clash):
            r = orders[ops]
            if ops < ops[::-1]:
                other = orders[ops[::-1]]
                c = next(c for c in self.clauses if _quote(c) == other.quote)
                first, second = sorted((r.quote, other.quote), key=lambda q: next(
                    k.start for k in self.clauses if _quote(k) == q))
                self.problems.append(("SKM318", f"\"{first}\" and \"{second}\" state opposite orders of "
                                                f"`{ops[0]}` and `{ops[1]}`: neither is kept as a rule", c))
        self.rules = [r for r in self.rules if not (r.kind == "order" and r.ops in clash)]

    def _foreign_code(self) -> None:
        """A step that says to run code in a language other than shell: the code stays an instruction (SKM319)."""
        for prev, c in zip(self.clauses, self.clauses[1:]):
            info = c.block.info if c.block is not None else ""
            if c.block is not None and c.block.kind == "code" and c.kind == "knowledge" and info \
                    and info not in _NOT_BASH and prev.kind == "step" and re.search(r"\b(?:run|execute)\b",
                                                                                  prev.text, re.I):
                self.problems.append(("SKM319", f"the step runs `{info}` code, which `bash` does not run as it is: "
                                                "kept as instructions", c))

    def _prompted(self) -> list[str]:
        """The states with local instructions (model and judge), in order; asked only once the graph is built."""
        if self._prompted_states is None:
            self._prompted_states = [s for s in self.order if self.states[s].kind in ("model", "judge")]
        return self._prompted_states

    def _section(self, line: int) -> tuple[int, int]:
        """The lines [start, end) of the section holding a line: from its nearest heading above to the next."""
        heads = self._headings
        i = bisect.bisect_right(heads, line)
        return (heads[i - 1] if i else 0), (heads[i] if i < len(heads) else len(self.doc.lines) + 1)

    def _procedure(self, line: int) -> int:
        """The heading line of the procedure holding a line: its section, or the parent of `Phase N` sections."""
        heads = self._heading_blocks
        i = bisect.bisect_right(self._headings, line) - 1
        while i >= 0 and _STEP_HEADING.match(heads[i].text):
            level = heads[i].level
            i = next((k for k in range(i - 1, -1, -1) if heads[k].level < level), -1)
        return heads[i].start if i >= 0 else 0

    def _section_states(self, c: Clause, among: Iterable[str] | None = None) -> list[str]:
        """The prompted states (or those of `among`) made from the same section as a clause.

        A rule that names no state applies to its section's states; only one that stands
        in a section without states (a `## Rules` section, the introduction) applies to
        every state, so prompts do not grow with the length of the document.
        """
        start, end = self._section(c.start)
        return [s for s in (self._prompted() if among is None else among) if start <= self.states[s].start < end]

    def _topic_index(self) -> dict[str, list[str]]:
        """Stem -> prompted states whose topic has it, in order; built once the graph (and topics) are final."""
        if self._index is None:
            self._index = {}
            for name in self._prompted():
                for stem in self.states[name].topic:
                    self._index.setdefault(stem, []).append(name)
        return self._index

    def _overlaps(self, text: str) -> dict[str, int]:
        """How many content words each prompted state shares with a text (states sharing none are left out)."""
        index = self._topic_index()
        counts: dict[str, int] = {}
        for stem in content_stems(text):
            for name in index.get(stem, ()):
                counts[name] = counts.get(name, 0) + 1
        return counts

    def _concerned(self, c: Clause) -> list[str]:
        """The model and judge states a sentence is about: most shared words (at least two), its section's first."""
        counts = self._overlaps(strip_markup(c.text))
        top = max(counts.values(), default=0)
        best = [s for s in self._prompted() if top >= 2 and counts.get(s) == top]
        return self._section_states(c, best) or best

    def _operations(self, text: str) -> list[str]:
        """The steps (model or tool) a requirement names: most shared content words, at least two; a tool on a tie."""
        want = content_stems(text)
        scores = {name: len(want & self.states[name].topic) for name in self.steps}
        top = max(scores.values(), default=0)
        best = [name for name, k in scores.items() if k == top and top >= 2]
        tools = [name for name in best if self.states[name].kind == "tool"]
        return tools if len(best) > 1 and len(tools) == 1 else best

    def _place_knowledge(self) -> None:
        """Each knowledge clause goes to the instructions of the state it concerns most (else the nearest one).

        Ties go to the state nearest the clause, then to the earliest made.
        """
        # A machine of tool states only keeps its knowledge in their docs (no model reads it, a person does).
        prompted = self._prompted() or [s for s in self.order if self.states[s].kind == "tool"]
        position = {name: i for i, name in enumerate(prompted)}
        by_start = sorted((self.states[s].start, position[s], s) for s in prompted)
        starts = [start for start, _, _ in by_start]
        for c in self.clauses:
            if c.kind not in ("knowledge", "command", "step", "verify", "branch", "loop") or c.index in self.landings:
                continue
            if not prompted:
                break
            counts = self._overlaps(c.text)
            top = max(counts.values(), default=0)
            if top >= 2:
                best = min((s for s, k in counts.items() if k == top),
                           key=lambda s: (abs(self.states[s].start - c.start), position[s]))
            else:  # the nearest state; between two equally near, the one above
                i = bisect.bisect_left(starts, c.start)
                near = [by_start[j] for j in (i - 1, i) if 0 <= j < len(by_start)]
                distance = min(abs(start - c.start) for start, _, _ in near)
                first = min(start for start, _, _ in near if abs(start - c.start) == distance)
                j = bisect.bisect_left(starts, first)
                best = by_start[j][2]  # by_start sorts equal starts by position: the earliest made
            self.states[best].notes.append(c.text.strip() if c.kind == "command" else strip_markup(c.text))
            self._land(c, best)

    def _infer_reads(self) -> None:
        """Reads: the task, plus predecessors' outputs (and wanted variables) assigned on every path in."""
        preds: dict[str, set[str]] = {s: set() for s in self.states}
        for name, s in self.states.items():
            for e in s.edges:
                if e.target in self.states:
                    preds[e.target].add(name)
        start = self.order[0]
        # Sets of variables as bit masks: the fixpoint runs over every state and variable.
        self.bit = {v: 1 << i for i, v in enumerate(self.vars)}
        self.writes = writes = {name: sum(self.bit[v] for v in {v for v, _ in s.writes})
                                for name, s in self.states.items()}
        full = (1 << len(self.bit)) - 1
        must: dict[str, int] = {s: (0 if s == start else full) for s in self.states}
        changed = True
        while changed:
            changed = False
            for name in self.order:
                new = full if preds[name] and name != start else 0
                for p in preds[name]:
                    new &= must[p] | writes[p]
                if new != must[name]:
                    must[name], changed = new, True
        initial = sum(self.bit[v] for v in self.inits)  # variables with an initial value are always assigned
        self.must = must = {name: mask | initial for name, mask in must.items()}
        position = {name: i for i, name in enumerate(self.order)}
        section_of = {name: self._procedure(self.states[name].start) for name in self.steps}
        for name, s in self.states.items():
            if s.kind == "tool":
                if s.tool == "ask_user":  # the question shows what the step before produced
                    context = [v for p in sorted(preds[name], key=position.__getitem__)
                               for v, r in self.states[p].writes if r in (None, "stdout", "answer")
                               and must[name] & self.bit[v]]
                    if context:
                        s.parts = [*s.parts, "\n\n", ("var", context[-1])]
                s.reads = list(dict.fromkeys(p[1] for p in s.parts if isinstance(p, tuple)))
                continue
            candidates: list[str] = []
            for p in sorted(preds[name], key=position.__getitem__):
                ps = self.states[p]
                if ps.kind == "judge":  # what the decision was made on, and the label when it says more than yes/no
                    candidates += [v for v in ps.reads if v != TASK]
                    labels = self.vars[ps.writes[0][0]]
                    if isinstance(labels, n.EnumType) and len(labels.labels) > 2:
                        candidates.append(ps.writes[0][0])
                else:
                    candidates += [v for v, _ in ps.writes]
            candidates += s.wants
            # The results of the earlier steps of the same procedure (section), when they are sure to exist.
            here = self._procedure(s.start)
            candidates += [v for step in self.steps if section_of[step] == here and step != name
                           for v, r in self.states[step].writes if r in (None, "stdout", "answer")]
            seen: list[str] = []
            for v in candidates:
                if must[name] & self.bit[v] and v not in seen and v not in self.counters:
                    seen.append(v)
            s.reads = [TASK] + seen

    # ------------------------------------------------------------ printing

    def _module(self) -> n.Module:
        items: list[n.Stmt] = []
        front = self.doc.front
        title = front.description or next((strip_markup(b.text) for b in self.doc.blocks if b.kind == "heading"), "")
        if title:
            items.append(n.Doc(title))
        items.append(n.SourceDecl(self.options.source))
        if any(s.kind == "tool" and s.tool == "bash" for s in self.states.values()):
            items.append(attrs.evolve(BASH, leading=(
                "# Declared because the skill has commands to run; runs in the run's working directory.",))
                if not self.bash_declared else BASH)
        if any(s.kind == "tool" and s.tool == "ask_user" for s in self.states.values()):
            items.append(attrs.evolve(ASK_USER, leading=("# The user answers these questions, not a model.",)))
        items.append(n.VarDecl("input", TASK, n.NamedType("str"), leading=("# What the user asked for.",),
                               blank_before=True))
        for v, t in self.vars.items():
            items.append(n.VarDecl("var", v, t, self.inits.get(v)))
        for c, limit in self.counters.items():
            items.append(n.CounterDecl(c, limit))
        items.append(n.Start(self.order[0], blank_before=True))
        for name in self.order:
            items.append(self._state_node(self.states[name]))
        for name, (outcome, docs, start, end) in self.terminals.items():
            evidence = self._evidence(name) if outcome != "failed" else []
            body: list[n.Stmt] = []
            if docs:
                body.append(n.Doc(" ".join(docs)))
            if start is not None:
                body.append(n.From(self._where(start, end)))
            if evidence:
                body.append(n.Requires(tuple(evidence)))
            items.append(n.Terminal(name, outcome, tuple(body), blank_before=True))
        items.append(n.Fallback(blank_before=True))
        for i, r in enumerate(self.rules):
            items.append(attrs.evolve(r, blank_before=i == 0))
        machine_name = slug(front.name or title or "skill", 4, "skill")
        return n.Module((n.Machine(machine_name, tuple(items)),))

    def _evidence(self, terminal: str) -> list[str]:
        """What a success or partial terminal requires: the deliverable when a command produced it.

        The latest command output (or user answer) sure to exist on arrival, beside the latest other
        result; without command outputs, the last two results made on every path.
        """
        order = list(self.vars)
        sure = sorted(self.must_at(terminal), key=order.index)
        produced = {v for s in self.states.values() if s.kind == "tool" for v, r in s.writes if r in ("stdout", "answer")}
        delivered = [v for v in sure if v in produced]
        if not delivered:
            return sure[-2:]
        rest = [v for v in sure if v not in produced and not any(v == w for st in self.states.values()
                                                                   if st.kind == "tool" for w, _ in st.writes)]
        return sorted({delivered[-1], *rest[-1:]}, key=order.index)

    def must_at(self, terminal: str) -> set[str]:
        """Variables assigned on every path into a terminal."""
        masks = [self.must[s] | self.writes[s] for s in self.states for e in self.states[s].edges if e.target == terminal]
        if not masks:
            return set()
        mask = masks[0]
        for m in masks[1:]:
            mask &= m
        return {v for v, b in self.bit.items() if mask & b}

    def _state_node(self, s: DState) -> n.State:
        body: list[n.Stmt] = [n.From(self._where(s.start, s.end))]
        if s.kind == "tool" and (s.text or s.notes):
            body.append(n.Doc(" ".join(s.text + s.notes)))
        if s.reads:
            body.append(n.Reads(tuple(s.reads)))
        if s.kind == "tool":
            param = "question" if s.tool == "ask_user" else "command"
            body.append(n.Call(s.tool, (n.Arg(param, _concat(s.parts)),)))
        body.append(n.Writes(tuple(n.WriteItem(v, r) for v, r in s.writes)))
        if s.kind != "tool":
            body.append(n.Prompt(self._prompt(s)))
        for e in s.edges:
            body.append(n.Edge(e.guard, e.target or "fallback", e.assigns))
        return n.State(s.kind, s.name, tuple(body), blank_before=True)

    @staticmethod
    def _prompt(s: DState) -> str:
        parts = ["\n".join(s.text)]
        if s.notes:
            parts.append("Notes:\n" + "\n".join(f"- {t}" for t in s.notes))
        if s.constraints:
            parts.append("Constraints:\n" + "\n".join(f"- {t}" for t in s.constraints))
        return "\n\n".join(p for p in parts if p.strip())


# ---------------------------------------------------------------- sentence helpers


_DECIDE = re.compile(r"^(?:decide|determine|judge|check|assess|establish|find out)\s+(?:whether|if)\s+(.+?)\.?$", re.I)
_ANAPHORIC = re.compile(r"^(?:it|they|this|that|so|yes|no|not)(?:\s+(?:does|do|is|are|holds?|is the case|is so|"
                        r"isn't|doesn't|does not|is not))?(?:\s+not)?$", re.I)


def _decisions(units: list[Unit]) -> list[Unit]:
    """A step "Decide whether C." followed by its own If/Otherwise bullets becomes the lead of that branch."""
    out: list[Unit] = []
    for u in units:
        prev = out[-1] if out else None
        if u.kind == "branch" and prev is not None and prev.kind == "step" and prev.command is None \
                and len(prev.clauses) == 1 and _DECIDE.match(strip_markup(prev.clauses[0].text)) \
                and prev.clauses[0].ordinal is not None and all(a.ordinal == prev.clauses[0].ordinal for a in u.arms):
            u.lead, u.notes = prev.clauses[0], prev.notes
            u.clauses = [prev.clauses[0], *u.clauses]
            out[-1] = u
            continue
        out.append(u)
    return out


def _near(unit: Unit, command: Clause) -> bool:
    """A fence right after a step (or inside its list item) is that step's command."""
    lead = unit.clauses[-1]
    same_item = lead.block is not None and command.block is not None and command.block.item is not None \
        and command.block.item == lead.block.item
    return same_item or 0 < command.start - lead.end <= 3


def _same_block(unit: Unit, c: Clause) -> bool:
    last = unit.arms[-1]
    return last.block is c.block or (last.ordinal is not None and last.ordinal == c.ordinal)


def _again(text: str) -> bool:
    return bool(re.search(r"\b(?:again|retry|rerun|re-run|repeat)\b", text, re.I))


def _letter_range(text: str) -> tuple[str, ...] | None:
    """The letters of the first range a document names ("A–E", "A to E"), for a letter to choose."""
    for m in _RANGE.finditer(text):
        a, b = ord(m.group(1)), ord(m.group(2))
        if 0 < b - a < 26:
            return tuple(chr(c) for c in range(a, b + 1))
    return None


def _quote(c: Clause) -> str:
    """A clause's text as a rule quotes it."""
    return re.sub(r"\s+", " ", c.text).strip()


def _unbold(text: str) -> str:
    """Text on one line without bold or italic markers, code ticks kept."""
    return re.sub(r"\s+", " ", re.sub(r"\*\*|__|(?<!\w)\*(?=\w)|(?<=\w)\*(?!\w)", "", text)).strip()


def _concat(parts: list[str | tuple[str, str]]) -> n.Expr:
    """Text and variables joined with `++`; `("quote", v)` quotes the value for the shell."""
    exprs: list[n.Expr] = []
    for p in parts:
        if isinstance(p, str):
            exprs.append(n.StrLit(p))
        elif p[0] == "quote":
            exprs.append(n.CallExpr("quote", (n.Name(p[1]),)))
        else:
            exprs.append(n.Name(p[1]))
    out = exprs[0] if exprs else n.StrLit("")
    for e in exprs[1:]:
        out = n.BinOp("++", out, e)
    return out


def _inline_command(text: str) -> str | None:
    """The shell command a sentence says to run in backticks ("Run `pytest -q`"), if it looks like one."""
    for m in _RUN_INLINE.finditer(text):
        cmd = m.group(1).strip()
        if re.match(r"^(?:\./|[a-z][\w.-]*\s)", cmd) and not re.match(r"^[\w-]+\.(?:md|txt|toml|json|ya?ml)$", cmd):
            return cmd
    return None


def _stop_clause(plain: str) -> tuple[str, str, str] | None:
    """(the action before it, terminal name, outcome) of an arm that ends the run, else None.

    "stop with failure", "give up and report failure" end `failed`; "finish as
    **unverified** (partial)" ends in a terminal named by the document; a plain
    "stop" ends `success` (the procedure says the work is over, not that it failed).
    """
    for m in _STOP.finditer(plain):
        verb, rest = m.group(1).lower(), m.group(2)
        if not re.match(r"^\s*(?:here|now|immediately|the (?:procedure|run|task))?\s*"
                        r"(?:[,;:(]?\s*(?:with|as|and|reporting|without|in|\()\b.*)?$", rest, re.I):
            continue
        named = re.search(r"\bas\s+(?:an?\s+|the\s+)?([A-Za-z][\w-]*)", rest)
        stated = re.search(r"\b(success|successful|partial|failure|failed)\b", rest, re.I)
        if stated is not None:
            outcome = {"success": "success", "successful": "success", "partial": "partial"}.get(
                stated.group(1).lower(), "failed")
        elif verb in ("abort", "give up") or re.search(r"\b(?:fail\w*|errors?)\b", rest, re.I):
            outcome = "failed"
        elif re.search(r"\b(?:unverified|incomplete|partially)\b", rest, re.I):
            outcome = "partial"
        else:
            outcome = "success"
        if named is not None and named.group(1).lower() not in ("a", "an", "the", "failure", "success"):
            name = slug(named.group(1), 1, "stopped")
        else:
            name = {"failed": "aborted" if verb in ("abort", "give up") else "failure", "partial": "incomplete",
                    "success": "stopped"}[outcome]
        return plain[: m.start()].strip(" ,;"), name, outcome
    return None


def _if_parts(text: str) -> tuple[str, str]:
    """`If C, A` → (C, A); the action is '' when the sentence has none."""
    plain = strip_markup(text).rstrip(".")
    plain = re.sub(r"^(?:[A-Z][A-Za-z ]{0,20}:)\s+", "", plain)
    # Commas and colons inside parentheses do not end the condition: "(non-zero exit, permission error)".
    masked = re.sub(r"\([^()]*\)", lambda p: p.group(0).replace(",", "\x01").replace(":", "\x02"), plain)
    m = re.match(r"^(?:if|in case|unless|should|when)\s+(.*?)(?:,\s*(?:then\s+)?|\s+then\s+|:\s+)(.+)$", masked, re.I)
    if not m:
        return re.sub(r"^(?:if|in case|unless|should|when)\s+", "", plain, flags=re.I), ""
    return plain[m.start(1):m.end(1)].strip(), plain[m.start(2):m.end(2)].strip()


def _max_times(text: str) -> int | None:
    """N from "at most N times", "up to N attempts", "N times", "twice"."""
    number = r"(\d+|once|twice|one|two|three|four|five|six|seven|eight|nine|ten)"
    m = re.search(r"\b(?:at most|up to|no more than|maximum of|max(?:imum)?)?\s*" + number +
                  r"\s+(?:times|attempts|tries|rounds|iterations)\b", text, re.I) \
        or re.search(r"\b(?:at most|up to|no more than|maximum of)\s+" + number + r"\s+\w+", text, re.I)
    if not m:
        return None
    word = m.group(1).lower()
    return int(word) if word.isdigit() else NUMBER_WORDS.get(word)


def _prohibited_action(text: str) -> str:
    """The action a prohibition forbids: "NEVER paste X into Y" → "paste X into Y"."""
    m = re.search(r"\b(?:never|do not|don't|must not|mustn't|shall not|should not|may not|cannot|avoid)\b\s*(.*)$",
                  text, re.I)
    return m.group(1) if m and m.group(1) else text


def _names_state(phrase: str, s: DState) -> bool:
    """A phrase names a state: two content words in common, or its leading verb ("choosing" for "Choose …")."""
    shared = content_stems(phrase) & s.topic
    verb = next(iter(content_stems(first_word(s.text[0]))), None) if s.text else None
    return len(shared) >= 2 or (verb is not None and verb in shared)


def _order_pair(text: str, comp: StructuralCompiler) -> tuple[str, str] | None:
    """`A before B` / `B after A` between two different states, in the order the graph already has them."""
    m = re.search(r"^(.*?)\b(before|after|prior to|first)\b(.*)$", text, re.I)
    if not m or not m.group(3).strip():
        return None
    left, word, right = m.group(1), m.group(2).lower(), m.group(3)
    a = comp._best_match(left, ("model", "tool", "judge"))
    b = comp._best_match(right, ("model", "tool", "judge"))
    if a is None or b is None or a == b:
        return None
    if not (_names_state(left, comp.states[a]) and _names_state(right, comp.states[b])):
        return None
    if word == "after":
        a, b = b, a
    return a, b


def compile_document(doc: Document, clauses: list[Clause], options: Options | None = None) -> Compiled:
    """The structural draft of a document."""
    return StructuralCompiler(doc, clauses, options or Options()).compile()


__all__ = ["Compiled", "Options", "compile_document"]
