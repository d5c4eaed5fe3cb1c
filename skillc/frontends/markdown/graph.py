"""Graph: units → states and edges.

Steps become `model` states (or `tool` states when they run a command with a
declared tool, `ask_user` when the user answers); conditions become `judge`
states whose labels route the edges; verifications become a judge with a
bounded revise loop; "repeat until" and "… again" become counted back edges;
stop clauses end in terminals (the targets of condition arms are made by
`arms`). Each unit kind has one handler (`HANDLERS`);
a handler returns the unit's entry state and its open exits, which the next
unit's entry closes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from skillc.frontends.markdown import codes
from skillc.frontends.markdown.arms import NEXT, Arms, Forward
from skillc.frontends.markdown.clauses import Clause, strip_markup
from skillc.frontends.markdown.document import Document
from skillc.frontends.markdown.draft import DEdge, DMachine, DState, Options, Part, below, bump, eq, failed
from skillc.frontends.markdown.names import Namer, content_stems, label_slug, slug
from skillc.frontends.markdown.phrases import (ASK, DIFFERS, EXACTLY, FAILS, FORM, FORWARD, LETTER, NOT_BASH, OPTIONAL,
                                               RUN_FORMED, again, if_parts, inline_command, lead_condition,
                                               letter_range, max_times, quote, stop_clause, unbold)
from skillc.frontends.markdown.tree import TreeNode, parse_tree
from skillc.frontends.markdown.units import Sections, Unit, UnitKind
from skillc.syntax import nodes as n

Piece = tuple[str, list[DEdge]]  # a unit's entry state and its exits (edges to whatever comes next)
Handler = Callable[["GraphBuilder", Unit, "Unit | None"], Piece]


@attrs.frozen
class Template:
    """A command a step forms: `template` with `hole` replaced by `var`, which state `maker` writes."""

    template: str
    hole: str
    var: str
    maker: str
    clause: Clause  # the sentence saying so


def build_graph(doc: Document, clauses: list[Clause], options: Options, draft: DMachine, sections: Sections,
                units: list[Unit]) -> bool:
    """Make every state and edge of `units` into `draft`; False when the document had no procedure."""
    return GraphBuilder(doc, clauses, options, draft, sections).build(units)


class GraphBuilder:
    """Turns units into states and edges, one handler per unit kind."""

    def __init__(self, doc: Document, clauses: list[Clause], options: Options, draft: DMachine,
                 sections: Sections) -> None:
        """A builder of the graph of one document into `draft`."""
        self.doc = doc
        self.clauses = clauses
        self.options = options
        self.d = draft
        self.arms = Arms(draft, clauses, options, sections)
        self.templates: list[Template] = []
        self.compared: tuple[str, str] | None = None  # (command output, held value) of the latest comparison

    def build(self, units: list[Unit]) -> bool:
        """Chain the units' pieces; every open exit at the end goes to `done`."""
        procedure = bool(units)
        if not procedure:
            units = [Unit("whole", ())]
        pending: list[DEdge] = []
        last_tool: DState | None = None
        for i, unit in enumerate(units):
            nxt = units[i + 1] if i + 1 < len(units) else None
            extra = self._tool_failure(last_tool, unit) if unit.kind == "branch" and last_tool else None
            if extra is not None:  # a condition on the command just run: guards of its tool state
                pending = pending + extra
                continue
            entry, exits = HANDLERS[unit.kind](self, unit, nxt)
            for e in pending:
                e.target = entry
            pending = exits
            last_tool = self._last_bash()
            for c in unit.clauses:
                if c.ordinal is not None and c.ordinal not in self.d.entries:
                    self.d.entries[c.ordinal] = entry
        done = self.d.terminal("done", "success")
        for e in pending:
            e.target = done
        self._resolve_forward(done)
        self._retries()
        return procedure

    def _last_bash(self) -> DState | None:
        """The latest state made, when it runs a `bash` command."""
        last = self.d.states.get(self.d.order[-1]) if self.d.order else None
        return last if last is not None and last.kind == "tool" and last.tool == "bash" else None

    def _retries(self) -> None:
        """Commands retried until out of rounds fail; a command a loop runs again loses its automatic failure edge."""
        looped = {e.target for st in self.d.states.values() for e in st.edges if e.assigns}
        for s in self.d.states.values():
            if s.failure == "retry":  # out of retries with the command still failing
                s.edges.insert(len(s.edges) - 1, DEdge(failed(s), "fallback"))
            if s.name in looped:  # a command a loop runs again ("until the tests pass") may fail on the way
                s.edges = [e for e in s.edges if not e.auto]

    def _resolve_forward(self, done: str) -> None:
        """Point each "continue to step N" edge at step N's state (SKM316 and the end when there is no step N)."""
        for f in self.arms.forward:
            f.edge.target = self.d.entries.get(f.number)
            if f.edge.target is None:
                f.edge.target = done
                self.d.problem(codes.MISSING_STEP_REFERENCE, f"the document refers to step {f.number}, which does not exist", f.clause)

    def _tool_failure(self, tool: DState, unit: Unit) -> list[DEdge] | None:
        """A condition on the failure of the command just run, as guarded edges of its tool state; the new exits."""
        if len(unit.arms) != 1 or unit.otherwise is not None or not any(r == "exit_code" for _, r in tool.writes):
            return None
        clause = unit.arms[0]
        said = if_parts(clause.text)
        if not FAILS.search(said.condition) or not said.action:
            return None
        default = tool.edges.pop()  # the default edge, still waiting for its target
        exits: list[DEdge] = []
        self.d.land(clause, tool.name)
        tool.end = max(tool.end, clause.end)
        plain = strip_markup(said.action).rstrip(".")
        if again(plain) and stop_clause(plain) is None:
            self._retry(tool, clause, plain)
        else:
            self.arms.arm(tool, failed(tool), said.action, clause, exits, said.condition)
            tool.failure = "handled"
        tool.edges.append(default)
        return exits

    def _retry(self, tool: DState, clause: Clause, plain: str) -> None:
        """"If it fails, fix it and retry": a counted edge back to the command, through the fix when one is said."""
        limit = max_times(clause.text) or self.options.max_repeats
        counter = self.d.counter(f"{tool.name}_retries", limit)
        wait = re.sub(r"(?:,?\s*(?:and|then)\s+)?\b(?:retry|try again|rerun|re-run|run it again)\b.*$", "", plain,
                      flags=re.I).strip(" ,;.")
        target = tool.name
        if wait:
            s = self.d.state("model", slug(wait), (clause.start, clause.end), wait)
            s.text.append(wait[0].upper() + wait[1:] + ".")
            s.writes = [(self.d.var(f"{s.name}_result", n.NamedType("str")), None)]
            s.edges = [DEdge(None, tool.name)]
            target = s.name
        tool.edges.append(DEdge(n.BinOp("and", failed(tool), below(counter, limit)), target, bump(counter)))
        tool.failure = tool.failure or "retry"

    # ------------------------------------------------------------ steps

    @staticmethod
    def _step_text(unit: Unit) -> tuple[str, int, int]:
        """The step's sentence (markup removed; '' for a bare command) and its lines."""
        lead = unit.clauses[0] if unit.clauses else unit.command
        assert lead is not None, "a step has a sentence or a command"
        return strip_markup(lead.text) if unit.clauses else "", lead.start, lead.end

    def unit_step(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A step: optional work behind a judge, else the step itself."""
        text, _, _ = self._step_text(unit)
        if unit.clauses and OPTIONAL.search(text) and unit.clauses[0].kind == "step":
            return self._optional(unit, nxt, text)
        return self._step(unit, nxt)

    def _optional(self, unit: Unit, nxt: Unit | None, text: str) -> Piece:
        """Work the document makes optional ("only when", "if needed", "optionally"): a judge that can skip it."""
        lead = unit.clauses[0]
        j, var = self.d.judge(f"whether_{slug(text)}", slug(text, default="step") + "_needed", ["yes", "no"], lead,
                             f"Decide whether this optional step applies now: {text} Answer `yes` or `no`.")
        j.topic |= content_stems(text)
        entry, exits = self._step(unit, nxt)
        skip = DEdge(None, NEXT)
        j.edges = [DEdge(eq(var, "yes"), entry), skip]
        return j.name, exits + [skip]

    def _tool_state(self, base: str, lines: tuple[int, int], topic: str, tool: str, parts: list[Part]) -> DState:
        """A tool state calling `tool` with the argument `parts`; writes its output (and bash's exit status)."""
        s = self.d.state("tool", base, lines, topic)
        s.tool, s.parts = tool, parts
        self.d.steps.append(s.name)
        if tool == "ask_user":
            s.writes = [(self.d.var(f"{s.name}_answer", n.NamedType("str")), "answer")]
        else:
            out = self.d.var(f"{s.name}_output", n.NamedType("str"))
            status = self.d.var(f"{s.name}_status", n.NamedType("int"))
            s.writes = [(out, "stdout"), (status, "exit_code")]
        return s

    def _step(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A step that runs a command, asks the user, or is done by a model."""
        said = " ".join(c.text for c in unit.clauses)
        parts = self._command_parts(unit, said)
        if parts is not None:
            return self._command_step(unit, nxt, said, parts)
        if unit.clauses and ASK.search(strip_markup(said)):
            return self._ask_step(unit)
        return self._model_step(unit)

    def _command_parts(self, unit: Unit, said: str) -> list[Part] | None:
        """The argument of the `bash` call a step makes: its fence, an inline command or a formed one; else None."""
        command = unit.command
        inline = inline_command(said)
        parts = self._formed_command() if self.d.bash and RUN_FORMED.search(strip_markup(said)) else None
        if parts is None and inline is not None and self.d.bash and command is None:
            parts = [inline]
        if command is not None and command.block is not None and command.block.info in NOT_BASH:
            self.d.problem(codes.COMMANDS_NOT_SHELL, f"the commands are `{command.block.info}`, which `bash` cannot run: kept "
                                     "as instructions", command)
        elif command is not None and self.d.bash:
            parts = [command.text.strip()]
        return parts

    def _command_step(self, unit: Unit, nxt: Unit | None, said: str, parts: list[Part]) -> Piece:
        """A `bash` tool state; a failed command goes to fallback unless a condition follows that handles it."""
        text, start, end = self._step_text(unit)
        command = unit.command
        s = self._tool_state(slug(text or (command.text if command else "run").split("\n")[0], default="run"),
                             (start, command.end if command else end), text or said, "bash", parts)
        for t in self.templates[-1:]:
            if ("quote", t.var) in parts:  # the command is built from what that step produced
                self.d.rules.append(n.Rule("reads", (s.name, t.maker), quote(t.clause),
                                           self.d.where(t.clause.start, t.clause.end)))
        if unit.clauses:
            s.text.append(text)
        for c in [*unit.clauses, *([command] if command else []), *unit.notes]:
            self.d.land(c, s.name)
        s.notes += [strip_markup(c.text) for c in unit.notes]
        exits = [DEdge(None, NEXT)]
        if nxt is None or nxt.kind not in ("branch", "loop", "verify", "tree"):
            s.edges.append(DEdge(failed(s), "fallback", auto=True))
        s.edges.extend(exits)
        return s.name, exits

    def _ask_step(self, unit: Unit) -> Piece:
        """A question the user answers: an `ask_user` tool state."""
        text, start, end = self._step_text(unit)
        s = self._tool_state(slug(text, default="ask_user"), (start, end), text, "ask_user", [text])
        s.text.append(text)
        for c in [*unit.clauses, *unit.notes]:
            self.d.land(c, s.name)
        s.notes += [strip_markup(c.text) for c in unit.notes]
        exits = [DEdge(None, NEXT)]
        s.edges = list(exits)
        return s.name, exits

    def _model_step(self, unit: Unit) -> Piece:
        """A model state doing the step, with its commands, referenced section and notes."""
        text, start, end = self._step_text(unit)
        command = unit.command
        s = self.d.state("model", slug(text or "run the commands"), (start, end), text)
        self.d.steps.append(s.name)
        s.text.append(text or "Run the commands below.")
        for c in unit.clauses:
            self.d.land(c, s.name)
        for c in self.arms.reference(text):  # "following the branch rules (below)": that section constrains this step
            s.constraints.append(strip_markup(c.text))
            self.d.land(c, s.name)
        if command is not None:
            s.text.append("Commands:\n" + command.text.strip())
            s.topic |= content_stems(command.text)
            self.d.land(command, s.name)
        self._step_writes(s, unit)
        for c in unit.notes:
            s.notes.append(strip_markup(c.text))
            self.d.land(c, s.name)
        exits = [DEdge(None, NEXT)]
        s.edges = exits
        return s.name, exits

    def _step_writes(self, s: DState, unit: Unit) -> None:
        """What a model step writes: its result, or only the value filling a command's hole."""
        said = [*unit.clauses, *unit.notes]
        form = next((m for m in (FORM.search(unbold(c.text)) for c in said) if m), None)
        if form is None or not self.d.bash:
            s.writes = [(self.d.var(f"{s.name}_result", n.NamedType("str")), None)]
            return
        # The model gives only the part that needs judgement.
        template, hole, meaning = form.group(1), form.group(2), form.group(3).strip()
        letters = letter_range(" ".join(c.text for c in self.clauses)) if LETTER.search(meaning) else None
        var = self.d.var(slug(meaning, 3, "value"), n.EnumType(letters) if letters else n.NamedType("str"))
        s.writes = [(var, None)]
        s.text.append(f"Give only {meaning}: the value that replaces `{hole}` in the command `{template}`. "
                      f"Answer with that value alone, no other text.")
        self.templates.append(Template(template, hole, var, s.name,
                                       next(c for c in said if FORM.search(unbold(c.text)))))

    def _formed_command(self) -> list[Part] | None:
        """The argument of "Run the command": the latest template with its hole filled, else the latest command made."""
        if self.templates:
            t = self.templates[-1]
            parts: list[Part] = []
            for i, piece in enumerate(t.template.split(t.hole)):
                if i:
                    parts.append(("quote", t.var))
                if piece:
                    parts.append(piece)
            return parts
        made = next((self.d.states[name] for name in reversed(self.d.steps)
                     if "command" in " ".join(self.d.states[name].text).lower()
                     and self.d.states[name].kind == "model"), None)
        return [("var", made.writes[0][0])] if made is not None else None

    # ------------------------------------------------------------ arms

    # ------------------------------------------------------------ conditions

    def unit_branch(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A condition: a yes/no judge for one arm, a judge with a label per arm when there is an `Otherwise`."""
        if len(unit.arms) == 1:
            return self._yes_no(unit, nxt)
        return self._cases(unit)

    def _yes_no(self, unit: Unit, nxt: Unit | None) -> Piece:
        """`If C, A` (with `Otherwise`, and a loop that sends it again): a yes/no judge."""
        exits: list[DEdge] = []
        first = unit.arms[0]
        said = if_parts(first.text)
        cond = lead_condition(unit.lead, said.condition)
        j, var = self.d.judge(f"if_{slug(cond)}", slug(cond, default="answer"), ["yes", "no"], first,
                             f"Decide whether this holds: {cond}. Answer `yes` or `no`.")
        j.topic |= content_stems(cond)
        self.d.land(first, j.name)
        self._take_lead(j, unit)
        repeats = max_times(unit.loop.text) if unit.loop is not None else None
        yes = self.arms.arm(j, self._checked(eq(var, "yes"), cond), said.action, first, exits, cond, repeats)
        if unit.loop is not None:
            self._until(j, unit.loop, yes, nxt, exits)
        if unit.otherwise is not None:
            self.arms.otherwise(j, unit.otherwise, exits, "not " + cond)
        else:
            e = DEdge(None, NEXT)
            j.edges.append(e)
            exits.append(e)
        return j.name, exits

    def _until(self, j: DState, loop: Clause, yes: str, nxt: Unit | None, exits: list[DEdge]) -> None:
        """The "repeat until" of a condition whose arm goes again: out of rounds, the loop fails or goes on."""
        self.d.land(loop, j.name)
        j.end = max(j.end, loop.end)
        j.text.append(strip_markup(loop.text))
        ahead = FORWARD.search(strip_markup(loop.text))
        onward = ahead is not None or re.search(r"\b(?:continue|proceed|go on|move on)\b", loop.text, re.I) is not None
        if yes not in self.d.states or (nxt is not None and nxt.kind == "branch"):
            return
        # Out of rounds with the condition still true: the loop failed, unless the document goes on.
        for e in self.d.states[yes].edges:
            if e.guard is None and e in exits:
                if not onward:
                    e.target = "fallback"
                    exits.remove(e)
                elif ahead is not None and int(ahead.group(1)) not in self.d.entries:
                    exits.remove(e)
                    self.arms.forward.append(Forward(e, int(ahead.group(1)), loop))

    def _cases(self, unit: Unit) -> Piece:
        """Several conditions and an `Otherwise`: one judge with a label per condition."""
        assert unit.otherwise is not None, "conditions without `Otherwise` were split into yes/no questions"
        exits: list[DEdge] = []
        first = unit.arms[0]
        labels: list[str] = []
        namer = Namer()
        parts = []
        for arm in unit.arms:
            said = if_parts(arm.text)
            cond = lead_condition(unit.lead, said.condition)
            labels.append(namer.fresh(slug(cond, default="case")))  # conditions are sentences: skip filler words
            parts.append((cond, said.action, arm))
        labels.append(namer.fresh("otherwise"))
        cases = "; ".join(f"`{label}` when {cond}" for label, (cond, _, _) in zip(labels, parts))
        j, var = self.d.judge(f"decide_{slug(first.text.split(',')[0], 2)}", slug(parts[0][0], 2, "case") + "_case",
                             labels, first, f"Decide which case holds: {cases}; `{labels[-1]}` when none of these.")
        self._take_lead(j, unit)
        for label, (cond, action, arm) in zip(labels, parts):
            self.d.land(arm, j.name)
            j.topic |= content_stems(cond)
            self.arms.arm(j, eq(var, label), action, arm, exits, cond)
        self.arms.otherwise(j, unit.otherwise, exits)
        return j.name, exits

    def _checked(self, said: n.Expr, cond: str) -> n.Expr:
        """A judge's `yes` guard, tied to the comparison it names when a guard can decide it.

        "the content is exactly the chosen letter" compares the latest command output with a
        value the machine holds: the arm needs the judge's yes *and* equality; "the content
        differs" takes the arm on the judge's yes *or* inequality. So no verdict of the model can
        take a run past a mismatch the machine can see.
        """
        out = self.d.latest_output()
        same = EXACTLY.match(cond)
        if out is not None and same is not None:
            held = slug(same.group(1), 3, "value")
            if held in self.d.vars and held != out:
                self.compared = (out, held)
                return n.BinOp("and", said, self._same(out, held, "=="))
        if out is not None and DIFFERS.match(cond) and self.compared and self.compared[0] == out:
            return n.BinOp("or", said, self._same(out, self.compared[1], "!="))
        return said

    def _same(self, out: str, held: str, op: str) -> n.Expr:
        """`out == held` (or `!=`), comparing an enum by its text."""
        value: n.Expr = n.Name(held)
        if not isinstance(self.d.vars[held], n.NamedType):
            value = n.CallExpr("str", (value,))
        return n.BinOp(op, n.Name(out), value)

    def _take_lead(self, j: DState, unit: Unit) -> None:
        """The judge of a branch with a lead asks the lead's question and keeps its notes."""
        if unit.lead is None:
            return
        j.start = min(j.start, unit.lead.start)
        j.text.insert(0, strip_markup(unit.lead.text))
        self.d.land(unit.lead, j.name)
        for c in unit.notes:
            j.notes.append(strip_markup(c.text))
            self.d.land(c, j.name)

    # ------------------------------------------------------------ loops, verifications, trees

    def unit_loop(self, unit: Unit, nxt: Unit | None) -> Piece:
        """"Repeat … until C": a judge of C whose `no` goes back, counted."""
        c = unit.clauses[0]
        plain = strip_markup(c.text)
        m = re.search(r"\buntil\b\s*(.*?)(?:[,;]|\bbut\b|\bat most\b|$)", plain, re.I)
        cond = (m.group(1) if m else plain).strip().rstrip(".") or "the work is complete"
        limit = max_times(plain) or self.options.max_repeats
        j, var = self.d.judge(f"until_{slug(cond)}", slug(cond, default="goal") + "_reached", ["yes", "no"], c,
                             f"{plain} Decide whether this now holds: {cond}. Answer `yes` or `no`.")
        self.d.land(c, j.name)
        j.topic |= content_stems(cond)
        target = self._loop_target(c)
        exits = [DEdge(eq(var, "yes"), NEXT)]
        j.edges.append(exits[0])
        if target is not None:
            counter = self.d.counter(f"{j.name}_rounds", limit)
            j.edges.append(DEdge(below(counter, limit), target, bump(counter)))
            j.edges.append(DEdge(None, "fallback"))
        else:
            e = DEdge(None, NEXT)
            j.edges.append(e)
            exits.append(e)
        return j.name, exits

    def _loop_target(self, c: Clause) -> str | None:
        """Where a "repeat" goes back to: a step number, this numbered item's first state, or the previous state."""
        m = re.search(r"\bsteps?\s+(\d+)", c.text, re.I)
        if m and int(m.group(1)) in self.d.entries:
            return self.d.entries[int(m.group(1))]
        if c.ordinal is not None and c.ordinal in self.d.entries:
            return self.d.entries[c.ordinal]
        return self.d.best_match(c.text) or (self.d.order[-1] if self.d.order else None)

    def unit_verify(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A verification: a judge of the checks, and a revise state that fixes the work, counted."""
        first = unit.clauses[0]
        items = [strip_markup(c.text) for c in unit.clauses]
        checklist = first.block is not None and first.block.checkbox
        title = first.section[-1] if (checklist or len(items) > 1) and first.section else items[0]
        title = re.sub(r"^(?:verify|check|make sure|ensure|confirm|validate|double-check)\b\s*(?:that\s+)?", "",
                       title, flags=re.I) or title
        previous = self.d.order[-1] if self.d.order else None
        prompt = ("Check every item below against the work so far. Answer `passed` only when all of them hold, "
                  "otherwise `failed`.\n" + "\n".join(f"- {t}" for t in items)) if len(items) > 1 else \
            f"{items[0]} Answer `passed` if it holds, otherwise `failed`."
        j, var = self.d.judge(f"verify_{slug(title, 2)}", slug(title, 2, "check") + "_verdict", ["passed", "failed"],
                             first, prompt)
        j.end = unit.clauses[-1].end
        for c in unit.clauses:
            self.d.land(c, j.name)
            j.topic |= content_stems(c.text)
        limit = self.options.max_revisions
        revise = self.d.state("model", f"revise_{slug(title, 2)}", (first.start, unit.clauses[-1].end), title)
        counter = self.d.counter(f"{revise.name}_rounds", limit)
        exits = [DEdge(eq(var, "passed"), NEXT)]
        j.edges = [exits[0], DEdge(n.BinOp("and", eq(var, "failed"), below(counter, limit)),
                                   revise.name, bump(counter)), DEdge(None, "fallback")]
        revise.text.append("The check below failed. Fix the work so that it holds, changing only what is needed:\n"
                           + "\n".join(f"- {t}" for t in items))
        prev = self.d.states.get(previous) if previous else None
        self._revise(revise, prev, j)
        j.wants.extend(v for v, _ in (prev.writes if prev is not None else []))
        return j.name, exits

    def _revise(self, revise: DState, prev: DState | None, j: DState) -> None:
        """What the revise state of a verification writes and where it goes: it redoes the state before."""
        if prev is not None and prev.kind == "model" and prev.writes[0][0] in {t.var for t in self.templates}:
            # A command's hole stays the step's own output: the revise state says what to fix (starting
            # empty, so the step can read it on its first run too) and the step gives the value again.
            feedback = self.d.var(f"{revise.name}_feedback", n.NamedType("str"))
            self.d.inits[feedback] = n.StrLit("")
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
            revise.writes = [(self.d.var(f"{revise.name}_result", n.NamedType("str")), None)]
            revise.edges = [DEdge(None, prev.name)]  # run the command again after the fix
        else:
            revise.writes = [(self.d.var(f"{revise.name}_result", n.NamedType("str")), None)]
            revise.edges = [DEdge(None, j.name)]

    def unit_tree(self, unit: Unit, nxt: Unit | None) -> Piece:
        """An ASCII decision tree: a judge per question, an action per leaf."""
        c = unit.clauses[0]
        root = parse_tree(c.text)
        exits: list[DEdge] = []
        if root is None:  # drawn like a tree but not one: keep it as an instruction step
            return self.unit_step(Unit("step", (c,)), nxt)
        entry = self._tree_node(root, c, exits)
        assert isinstance(entry, str), "the root of a tree has branches"
        self.d.land(c, entry)
        return entry, exits

    def _tree_node(self, node: TreeNode, c: Clause, exits: list[DEdge]) -> str | Forward:
        """The state of a tree node: a judge of its question, or its leaf action."""
        line = c.start + 1 + node.line
        if not node.children:
            before = len(exits)
            fake = attrs.evolve(c, start=line, end=line)
            target = self.arms.action(node.text, fake, exits)
            return target or self._pass_through(exits, before, fake)
        namer = Namer()
        labels = [namer.fresh(label_slug(ch.label)) for ch in node.children]
        question = node.text.strip()
        question += "" if question[-1:] in ".?!:" else "."
        options = ", ".join(f"`{lab}` ({ch.label})" for lab, ch in zip(labels, node.children))
        s, var = self.d.judge(slug(question, 3, "question"), slug(question, 3, "answer") + "_answer", labels,
                             attrs.evolve(c, start=line, end=line), f"{question} Answer one of: {options}.")
        s.topic |= content_stems(question)
        for i, (lab, child) in enumerate(zip(labels, node.children)):
            target = self._tree_node(child, c, exits)
            last = i == len(labels) - 1  # the last label takes the default edge: the labels cover every case
            guard = None if last else eq(var, lab)
            if isinstance(target, Forward):  # "continue to step N" from a leaf: its edge is the branch
                target.edge.guard = guard
                s.edges.append(target.edge)
            else:
                s.edges.append(DEdge(guard, target))
        return s.name

    def _pass_through(self, exits: list[DEdge], before: int, c: Clause) -> str:
        """A leaf that only continues: a small model state that records the decision and goes on."""
        s = self.d.state("model", "note_decision", (c.start, c.end))
        s.text.append("Record the decision reached in the tree and continue.")
        s.writes = [(self.d.var(f"{s.name}_result", n.NamedType("str")), None)]
        e = exits.pop(before)
        e.guard = None
        s.edges.append(e)
        exits.append(e)
        return s.name

    def unit_whole(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A document without a procedure: one model state that applies it."""
        title = self.doc.front.name or next((b.text for b in self.doc.blocks if b.kind == "heading"), "the task")
        s = self.d.state("model", "apply_" + slug(title, 2, "skill"), (1, len(self.doc.lines)), "")
        s.text.append(f"Carry out the task, applying the guidance of \"{title}\" below.")
        s.writes = [(self.d.var("result", n.NamedType("str")), None)]
        exits = [DEdge(None, NEXT)]
        s.edges = exits
        return s.name, exits


HANDLERS: dict[UnitKind, Handler] = {
    "step": GraphBuilder.unit_step,
    "branch": GraphBuilder.unit_branch,
    "loop": GraphBuilder.unit_loop,
    "verify": GraphBuilder.unit_verify,
    "tree": GraphBuilder.unit_tree,
    "whole": GraphBuilder.unit_whole,
}
