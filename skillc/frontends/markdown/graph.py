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
from pathlib import Path

import attrs

from skillc.check import shellctx
from skillc.check.graph import reachable
from skillc.frontends.markdown import codes
from skillc.frontends.markdown.arms import NEXT, Arms, Forward
from skillc.frontends.markdown.clauses import FOREACH, Clause, first_word, is_imperative, shorten, strip_markup
from skillc.frontends.markdown.commands import Part, alternatives, cut, script_command, skill_documents, skill_files
from skillc.frontends.markdown.diagram import is_diagram, parse_diagram
from skillc.frontends.markdown.document import Document
from skillc.frontends.markdown.draft import TASK, DEdge, DMachine, DState, Options, below, bump, eq, failed
from skillc.frontends.markdown.names import content_stems, label_slug, slug
from skillc.frontends.markdown.phrases import (
    ANY_POINT,
    APPROVAL,
    ASK_AFTER,
    BY_TASK,
    DIFFERS,
    EDIT_TOOL,
    EXACTLY,
    EXIT_FAILS,
    FAILS,
    FINDS_FAILURES,
    FORM,
    FORWARD,
    HANDS_BACK,
    HOOK,
    LETTER,
    NOT_BASH,
    OPTIONAL,
    REPORTS_IN_OUTPUT,
    REPORTS_ONLY,
    RUN_FORMED,
    UNNAMED_FILE,
    Case,
    again,
    asks_user,
    exits_on_findings,
    if_parts,
    inline_command,
    lead_condition,
    letter_range,
    max_times,
    named_script,
    quote,
    read_file,
    script_mention,
    script_usage,
    stop_clause,
    trailing_case,
    unbold,
    written_file,
    written_pattern,
    written_unnamed,
)
from skillc.frontends.markdown.tree import TreeNode, parse_tree
from skillc.frontends.markdown.units import Sections, Unit, UnitKind
from skillc.ir.toolkit import parse_allowed, path_allowed
from skillc.syntax import nodes as n

# Verbs of a step that reads a bundled document or a file of the work folder.
READ_VERBS = frozenset({"read", "load", "consult", "open", "review", "study", "see", "follow", "reread", "re-read"})


def _unsequenced(said: str) -> str:
    """A step's text without markup and without the "first", "then", "next" or "now" it opens with."""
    return re.sub(r"^(?:first|then|next|now)\b,?\s*", "", strip_markup(said), flags=re.I)


def _says_to_read(said: str) -> bool:
    """The step's first word, past "first", "then", "next" or "now", is one of READ_VERBS."""
    return first_word(_unsequenced(said)) in READ_VERBS


# A condition on the failure of the command or script run shortly before.
SCRIPT_FAILS = re.compile(r"^(?:\w+:\s*)?if\s+(?:the\s+)?(?:script|command|scan|scanner|tool|it|this|that)\s+"
                          r"(?:run\s+)?fails\b", re.I)
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


STR = n.NamedType("str")  # the type of a command's hole


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
        self.scripts = skill_files(str(Path(doc.path).parent))  # the bundled scripts of the skill's folder
        self.documents = skill_documents(str(Path(doc.path).parent))  # its references, templates, …
        self.arms.acting = self._acting
        self.compared: tuple[str, str] | None = None  # (command output, held value) of the latest comparison
        # Bundled scripts the document says exit non-zero on a finding ("Exits non-zero when failures remain").
        self.finding_exits = frozenset(p for p in self.scripts if exits_on_findings(doc.text, p))
        self.parents = frozenset(b.parent_item for b in doc.blocks)  # the list items that have sub-items
        self.revisers: dict[str, str] = {}  # a verification's revise state → its check
        # The holes some shell fence puts where quoting cannot make a model's text safe: the user gives each of them,
        # wherever it is used first (a later fence sourcing `$PROJECT_DIR/.env` makes it an input for the earlier
        # `cd $PROJECT_DIR` too, as one variable cannot be both).
        self.unsafe: dict[str, str] = {}
        for c in clauses:
            if c.kind == "command" and (c.block is None or c.block.info not in NOT_BASH):
                fence = self._fence_parts(c.text)
                draft.holes.update(p[1] for p in fence if isinstance(p, tuple) and p[0] == "quote")
                for h, where in self._unsafe_holes(fence).items():
                    self.unsafe.setdefault(h, f"the command on line {c.start} has it {where}, where a model's "
                                              "text would not be safe even quoted")

    def build(self, units: list[Unit]) -> bool:
        """Chain the units' pieces; every open exit at the end goes to `done`."""
        procedure = bool(units)
        if not procedure:
            units = [Unit("whole", ())]
        elif all(u.kind == "verify" for u in units):
            units = [Unit("whole", ()), *units]  # checks with no work before them check the task, done first
        entry, pending = self._chain(units)
        if entry in self.d.order and self.d.order[0] != entry:  # a menu makes its options before its question
            self.d.order.remove(entry)
            self.d.order.insert(0, entry)
        done = self.d.terminal("done", "success")
        for e in pending:
            e.target = done
        self._resolve_forward(done)
        self._diagrams()
        self._any_point()
        self._hooks()
        self._retries()
        self._through_fills()
        return procedure

    def _through_fills(self) -> None:
        """An edge into a command whose values a model state gives, from a state a run may reach without passing that
        model state, goes to it: a run that comes back to the command around its step ("re-run against …") must be
        given the values to run it with. A revise state there goes back to its check instead: the step it would
        redo was skipped on that run, as the document made it conditional."""
        only_into = self._only_into()
        fills: dict[str, str] = {}
        for name, st in self.d.states.items():
            giver = self.d.states.get(only_into.get(name, name)) if st.kind == "tool" and st.tool == "bash" else None
            holes = {p[1] for p in st.parts if isinstance(p, tuple) and p[0] in ("quote", "var")}
            if giver is not None and giver.name != name and giver.kind == "model" \
                    and any(v in holes for v, _ in giver.writes):
                fills[name] = giver.name
        succ = {name: [e.target for e in st.edges if isinstance(e.target, str)] for name, st in self.d.states.items()}
        for tool, fill in fills.items():
            around = reachable(succ, self.d.order[:1], blocked={fill}) & self.d.states.keys()
            for name in around - {tool, fill}:
                for e in self.d.states[name].edges:
                    if e.target == tool:
                        e.target = self.revisers.get(name, fill)

    def _hooks(self) -> None:
        """"After installing a skill, tell the user …", said apart from the steps it follows: a model state doing it
        right after each step of that verb ("install_curated_list", "install_another_repo"), where it stands in no
        state yet."""
        for c in self.clauses:
            m = HOOK.match(strip_markup(c.text)) if c.kind == "knowledge" and c.index not in self.d.landings else None
            if m is None or not is_imperative(m.group("act")):
                continue
            verb = m.group("verb").lower()
            stem = verb[:-1] if len(verb) > 3 and verb[-1] == verb[-2] else verb  # "running" → "run"
            after = [name for name, st in self.d.states.items() if st.kind in ("tool", "model")  # the verb whole:
                     and re.match(rf"{stem}{stem[-1]}?e?(?:_|$)", name)  # `check_…` for "checking", not `checkout_…`
                     and not st.start <= c.start <= st.end]
            act = m.group("act").rstrip(".")
            for name in after:
                st = self.d.states[name]
                default = st.edges[-1] if st.edges and st.edges[-1].guard is None else None
                if default is None or default.target is None:
                    continue
                h = self.d.state("model", slug(act), (c.start, c.end), act)
                h.text.append(act[0].upper() + act[1:] + ("" if act[-1] in "\"'”!?" else "."))
                h.writes = [(self.d.var(f"{h.name}_result", n.NamedType("str")), None)]
                h.edges = [DEdge(None, default.target)]
                default.target = h.name
                self.d.land(c, h.name)

    # ------------------------------------------------------------ "at any point, if C, return to phase N"

    def _any_point(self) -> None:
        """"At any point (during phase M), if C, return to phase N": a judge after each state of the scope whose
        `yes` goes back to phase N (counted, one counter for the clause), whose `no` goes on."""
        for c in self.clauses:
            m = ANY_POINT.search(strip_markup(c.text))
            if m is None or (c.index in self.d.landings and c.kind != "knowledge"):
                continue
            number = int(m.group("target"))
            target = self.d.entries.get(number)
            said = if_parts(re.sub(r"^(?:at any (?:point|time|stage)|whenever)\b[^,]*,\s*", "", strip_markup(c.text),
                                   flags=re.I))
            cond = said.condition if said.action else m.group("cond") or strip_markup(c.text)
            scope = self._scope(c, m, target)
            if target is None:
                if scope:
                    self.d.unencoded(scope[0], c, f"\"{strip_markup(c.text)}\": there is no phase or step {number}")
                continue
            if not scope:
                continue
            limit = max_times(c.text) or self.options.max_repeats
            counter = self.d.counter(f"back_to_{number}_rounds", limit)
            for name in scope:
                s = self.d.states[name]
                default = s.edges[-1] if s.edges and s.edges[-1].guard is None else None
                if default is None or default.target is None:
                    continue
                j, var = self.d.holds(cond, c, now="now")
                j.wants.extend(v for v, _ in s.writes)
                j.edges = [DEdge(n.BinOp("and", eq(var, "yes"), below(counter, limit)), target, bump(counter)),
                           DEdge(None, default.target)]
                default.target = j.name
            self.d.land(c, self.d.order[-1])

    def _scope(self, c: Clause, m: re.Match[str], target: str | None) -> list[str]:
        """The non-judge states an "at any point" clause watches: phase M's when it names one, else its own
        section's, else every state after the phase it returns to."""
        position = {name: i for i, name in enumerate(self.d.order)}
        candidates = [name for name in self.d.order if self.d.states[name].kind != "judge"]
        during = m.group("during")
        if during is not None and int(during) in self.d.entries:
            first = position[self.d.entries[int(during)]]
            after = self.d.entries.get(int(during) + 1)
            last = position[after] if after in position else len(position)
            return [s for s in candidates if first <= position[s] < last]
        here = self.arms.sections.procedure(c.start)
        own = [s for s in candidates if self.arms.sections.procedure(self.d.states[s].start) == here
               and self.d.states[s].start != c.start] if here else []
        if own and target is not None and position[own[0]] > position[target]:
            return own
        start = position[target] if target is not None else 0
        return [s for s in candidates if position[s] >= start]

    # ------------------------------------------------------------ flow diagrams

    def _diagrams(self) -> None:
        """Flow diagrams in fences (```dot, ```mermaid): the edges they draw between steps, where the order lacks them.

        A node names a step by its number ("4 · Strangle screens") or its words. A step that the
        diagram sends somewhere the document order does not gets a judge after it, with a label per
        drawn edge (its label, or the node it goes to); an edge back up is counted.
        """
        for c in self.clauses:
            b = c.block
            if b is None or b.kind != "code" or c.kind not in ("knowledge", "command") \
                    or not is_diagram(b.info, c.text):
                continue
            drawn = parse_diagram(b.info, c.text)
            if drawn is None:
                continue
            places = {nid: self._node_states(node.label) for nid, node in drawn.nodes.items() if not node.decision}
            mapped = [p for p in places.values() if p is not None]
            lost = [a for a in drawn.arrows if (a.source in places and places[a.source] is None)
                    or (a.target in places and places[a.target] is None)]
            if mapped and lost:  # the diagram is about these steps, but some of its flow names none of them
                names = sorted({drawn.nodes[x].label for a in lost for x in (a.source, a.target)
                                if x in places and places[x] is None})
                shown = ", ".join(f'"{x}"' for x in names[:3]) + (" …" if len(names) > 3 else "")
                self.d.unencoded(mapped[0][0], c, "the flow diagram's edges at " + shown)
            outs: dict[str, list[tuple[str, str, str, int]]] = {}
            for a in drawn.arrows:
                src, dst = drawn.nodes.get(a.source), drawn.nodes.get(a.target)
                if src is None or dst is None or src.decision:
                    continue
                if dst.decision:  # a drawn question: its answers are the source's edges
                    outs.setdefault(a.source, []).extend((x.target, x.label, dst.label, x.line)
                                                         for x in drawn.arrows if x.source == dst.id)
                else:
                    outs.setdefault(a.source, []).append((a.target, a.label, "", a.line))
            for src_id, edges in outs.items():
                src_place = places.get(src_id)
                if src_place is None:
                    continue
                wanted = [(p[0], label, question, line) for t, label, question, line in edges
                          if (p := places.get(t)) is not None]
                self._drawn_edges(c, drawn.nodes[src_id].label, src_place, wanted)

    def _node_states(self, label: str) -> tuple[str, str] | None:
        """(entry, what follows) of the step a diagram node names: by its number, else by its words."""
        m = re.match(r"^\s*(?:step|phase)?\s*(\d+)\b", label, re.I)
        if m is not None and int(m.group(1)) in self.d.entries:
            number = int(m.group(1))
            return self.d.entries[number], self.d.entries.get(number + 1, "done")
        name = self.d.best_match(label, among=self.d.steps)
        if name is None or len(content_stems(label) & self.d.states[name].topic) < 2:
            return None
        after = next((e.target for e in reversed(self.d.states[name].edges) if e.guard is None), None)
        return (name, after) if after is not None else None

    def _drawn_edges(self, c: Clause, source: str, place: tuple[str, str],
                     wanted: list[tuple[str, str, str, int]]) -> None:
        """A judge between a step and what follows it, taking the drawn edges the graph lacks (counted back up).

        The step's states are those made from its entry up to what follows; the edges from them to
        what follows go through the judge.
        """
        entry, after = place
        position = {name: i for i, name in enumerate(self.d.order)}
        end = position.get(after, len(position))
        mine = [name for name in self.d.order[position[entry]:end]] or [entry]
        leaving = [e for name in mine for e in self.d.states[name].edges if e.target == after]
        extra = [w for w in wanted if w[0] != after and not any(e.target == w[0] for name in mine
                                                                   for e in self.d.states[name].edges)]
        if not leaving or not extra:
            return
        exit_name = mine[-1]
        s = self.d.states[exit_name]
        namer = self.d.label_namer()
        labels = [namer.fresh(label_slug(label) if label else slug(self.d.states[t].text[0] if self.d.states[t].text
                                                                    else t, 2, "next")) for t, label, _, _ in extra]
        labels.append(namer.fresh("go_on"))
        question = next((q for _, _, q, _ in extra if q), "") or f"After \"{source}\", where does the work go next?"
        line = c.start + 1 + extra[0][3]
        options = ", ".join(f"`{lab}` ({w[1] or 'to ' + w[0]})" for lab, w in zip(labels, extra))
        j, var = self.d.judge(f"after_{slug(source, 3)}", f"after_{slug(source, 3, 'step')}", labels,
                             attrs.evolve(c, start=line, end=line),
                             f"{question} Answer one of: {options}, or `{labels[-1]}` to go on as the document orders.")
        j.wants.extend(v for v, _ in s.writes)
        self.d.land(c, j.name)
        for lab, (target, _, _, _) in zip(labels, extra):
            guard = eq(var, lab)
            if position.get(target, len(position)) <= position[exit_name]:  # back up the document: a counted loop
                counter = self.d.counter(f"{j.name}_rounds", self.options.max_repeats)
                j.edges.append(DEdge(n.BinOp("and", guard, below(counter, self.options.max_repeats)), target,
                                     bump(counter)))
            else:
                j.edges.append(DEdge(guard, target))
        j.edges.append(DEdge(None, after))
        for e in leaving:
            e.target = j.name

    def _chain(self, units: list[Unit] | tuple[Unit, ...], after: Unit | None = None) -> tuple[str | None, list[DEdge]]:
        """The units' pieces one after the other: the first one's entry and the open exits of the last."""
        pending: list[DEdge] = []
        first: str | None = None
        last_tool: DState | None = None
        recent: tuple[DState, int] | None = None  # the latest command of this chain, and the units since
        for i, unit in enumerate(units):
            nxt = units[i + 1] if i + 1 < len(units) else after
            if last_tool is None and recent is not None and recent[1] <= 2 and unit.kind == "branch" \
                    and unit.arms and SCRIPT_FAILS.search(strip_markup(unit.arms[0].text)) \
                    and self.arms.sections.section(recent[0].start) == self.arms.sections.section(unit.arms[0].start):
                last_tool = recent[0]  # "If the script fails, …" a step or two after running it
            extra = self._tool_failure(last_tool, unit) if unit.kind == "branch" and last_tool else None
            if extra is not None:  # a condition on the command just run: guards of its tool state
                pending = pending + extra
                continue
            self.arms.commands.update(dict(unit.commands))
            entry, exits = HANDLERS[unit.kind](self, unit, nxt)
            first = first or entry
            for e in pending:
                e.target = entry
            pending = exits
            last_tool = self._last_bash()
            recent = (last_tool, 0) if last_tool is not None else (recent[0], recent[1] + 1) if recent else None
            for c in [*unit.clauses, *([unit.title] if unit.title else [])]:
                if c.ordinal is not None and c.ordinal not in self.d.entries:
                    self.d.entries[c.ordinal] = entry
        return first, pending

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
                self.d.problem(codes.MISSING_STEP_REFERENCE,
                               f"the document refers to step {f.number}, which does not exist", f.clause)
                owner = next((name for name, s in self.d.states.items() if any(e is f.edge for e in s.edges)), None)
                if owner is not None:
                    self.d.unencoded(owner, f.clause, f"a jump to step {f.number}, which does not exist")

    def _tool_failure(self, tool: DState, unit: Unit) -> list[DEdge] | None:
        """A condition on the failure of the command just run, as guarded edges of its tool state; the new exits."""
        if len(unit.arms) != 1 or unit.otherwise is not None or not any(r == "exit_code" for _, r in tool.writes):
            return None
        clause = unit.arms[0]
        said = if_parts(clause.text)
        if not FAILS.search(said.condition) or not said.action:
            return None
        command = "".join(p for p in tool.parts if isinstance(p, str))
        if REPORTS_IN_OUTPUT.search(command) and not EXIT_FAILS.search(said.condition):
            return None  # "If it's not available" after `… --json`: the answer is in what it printed
        default = tool.edges.pop()  # the default edge, still waiting for its target
        tool.edges = [e for e in tool.edges if not e.auto]  # the document says what a failure does
        exits: list[DEdge] = []
        self.d.land(clause, tool.name)
        tool.end = max(tool.end, clause.end)
        plain = strip_markup(said.action).rstrip(".")
        action = said.action
        if REPORTS_ONLY.match(plain) and stop_clause(plain) is None:
            action = f"{plain} and stop"  # "If it fails, report the error": nothing after it can go on
        if again(plain) and stop_clause(plain) is None:
            self._retry(tool, clause, plain)
        else:
            self.arms.arm(tool, failed(tool), action, clause, exits, said.condition)
            tool.failure = "handled"
        tool.edges.append(default)
        return exits

    def _retry(self, tool: DState, clause: Clause, plain: str) -> None:
        """"If it fails, fix it and retry": a counted edge back to the command, through the fix when one is said."""
        limit = max_times(clause.text) or self.options.max_repeats
        counter = self.d.counter(f"{tool.name}_retries", limit)
        wait = re.sub(r"(?:,?\s*(?:and|then|before)\s+)?\b(?:retry(?:ing)?|try again|rerun(?:ning)?|re-run(?:ning)?|"
                      r"run it again)\b.*$", "", plain,
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
        case = trailing_case(text) if unit.clauses and unit.clauses[0].kind == "step" and is_imperative(text) else None
        if unit.clauses and OPTIONAL.search(text) and unit.clauses[0].kind == "step":
            entry, exits = self._optional(unit, nxt, text)
        elif case is not None:
            entry, exits = self._in_case(unit, nxt, case)
        else:
            entry, exits = self._step(unit, nxt)
        self._titled(unit, entry)
        return entry, exits

    def _titled(self, unit: Unit, entry: str) -> None:
        """A step state made from a heading covers its section; the first step under a heading carries its title."""
        s = self.d.states[entry]
        title = unit.title
        lead = unit.clauses[0] if unit.clauses else None
        if title is not None:
            s.start = min(s.start, title.start)
            s.text.append(f"(This is part of: {strip_markup(title.text)}.)")
            s.topic |= content_stems(title.text)
            self.d.land(title, s.name)
        elif lead is not None and lead.block is not None and lead.block.kind == "heading" and len(unit.clauses) == 1 \
                and s.kind == "model" and unit.command is None:
            # A heading step alone in its section: the section's prose is about it.
            _, end = self.arms.sections.section(lead.start + 1)
            end -= 1
            while end > lead.end and not self.doc.lines[end - 1].strip():
                end -= 1
            s.end = max(s.end, end)

    def _optional(self, unit: Unit, nxt: Unit | None, text: str) -> Piece:
        """Work the document makes optional ("only when", "if needed", "optionally"): a judge that can skip it."""
        lead = unit.clauses[0]
        j, var = self.d.judge(f"whether_{slug(text)}", slug(text, default="step") + "_needed", ["yes", "no"], lead,
                             f"Decide whether this optional step applies now: {text} Answer `yes` or `no`.")
        return self._behind(j, var, "yes", text, unit, nxt)

    def _in_case(self, unit: Unit, nxt: Unit | None, case: Case) -> Piece:
        """A step done only in the case its sentence ends with (or, "skip if C", only outside it): a judge of the case
        that does the step or skips it."""
        lead = unit.clauses[0]
        j, var = self.d.holds(case.condition, lead)
        return self._behind(j, var, "no" if case.skip else "yes", case.condition, unit, nxt)

    def _behind(self, j: DState, var: str, does: str, topic: str, unit: Unit, nxt: Unit | None) -> Piece:
        """The step behind judge `j`: done when `var` is `does`, skipped otherwise."""
        j.topic |= content_stems(topic)
        entry, exits = self._step(unit, nxt)
        skip = DEdge(None, NEXT)
        j.edges = [DEdge(eq(var, does), entry), skip]
        return j.name, exits + [skip]

    def _tool_state(self, base: str, lines: tuple[int, int], topic: str, tool: str, parts: list[Part]) -> DState:
        """A tool state calling `tool` with the argument `parts`; writes its output (and bash's exit status)."""
        s = self.d.state("tool", base, lines, topic)
        s.tool, s.parts = tool, parts
        self.d.steps.append(s.name)
        if tool == "ask_user":
            s.writes = [(self.d.var(f"{s.name}_answer", n.NamedType("str")), "answer")]
        elif tool == "read":
            s.writes = [(self.d.var(f"{s.name}_content", n.NamedType("str")), "content")]
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
        if unit.clauses and asks_user(strip_markup(said)):
            return self._ask_step(unit)
        document = self._bundled_document(unit, said)
        if document is not None:
            return self._read_step(unit, document)
        work_file = self._work_file(unit, said)
        if work_file is not None:
            return self._read_work_file(unit, work_file)
        if self._reads_unnamed_file(unit, said):
            return self._find_and_read(unit)
        target = self._written_file(unit, said)
        if target is not None:
            return self._write_step(unit, target)
        named = self._named_later(unit)
        if named is not None:
            return self._name_and_write(unit, named)
        if self._edits(unit):
            return self._edit_step(unit)
        entry, exits = self._model_step(unit)
        fence = unit.command
        if fence is not None and fence.block is not None and fence.block.info in NOT_BASH:
            self.d.unencoded(entry, fence, f"`{fence.block.info}` commands, which `bash` cannot run")
        return entry, exits

    def _command_parts(self, unit: Unit, said: str) -> list[Part] | None:
        """The argument of the `bash` call a step makes: its fence, an inline command, a bundled script it says to
        run or a formed one; else None. Placeholders are holes (`quote(hole)`), scripts run from `skill_dir`."""
        command = unit.command
        inline = inline_command(said)
        script = script_mention(said) if unit.clauses else None
        parts = self._formed_command() if self.d.bash and RUN_FORMED.search(strip_markup(said)) else None
        if parts is None and inline is not None and self.d.bash and command is None:
            parts = list(cut(inline, self.scripts).parts)
        elif parts is None and script is not None and self.d.bash and command is None:
            parts = list(cut(script_command(script), self.scripts | {script}).parts)
        elif parts is None and self.d.bash and command is None and unit.clauses:
            parts = self._named_script(said)
        if command is not None and command.block is not None and command.block.info in NOT_BASH:
            self.d.problem(codes.COMMANDS_NOT_SHELL,
                           f"the commands are `{command.block.info}`, which `bash` cannot run: kept as instructions",
                           command)
        elif command is not None and self.d.bash:  # sample invocations: the first, its sample values holes
            parts = self._fence_parts(command.text)
        return parts

    def _fence_parts(self, text: str) -> list[Part]:
        """The argument of the `bash` call a shell fence makes: its first invocation, cut into parts."""
        return list(cut(alternatives(text) or text.strip(), self.scripts).parts)

    def _named_script(self, said: str) -> list[Part] | None:
        """The `bash` call of the bundled script a step names by its words, as the document shows it run."""
        script = named_script(said, self.scripts)
        if script is None:
            return None
        usage = script_usage(self.doc.text, script)
        if not usage or usage.split()[0].strip("\"'").endswith(script):  # run by its interpreter
            usage = script_command(script, " ".join(usage.split()[1:]))
        return list(cut(usage, self.scripts).parts)

    def _command_step(self, unit: Unit, nxt: Unit | None, said: str, parts: list[Part]) -> Piece:
        """A `bash` tool state; a failed command goes to fallback unless a condition follows that handles it."""
        text, start, end = self._step_text(unit)
        command = unit.command
        lines = (start, command.end if command else end)
        fill = self._fill(parts, text or said, lines)
        s = self._tool_state(slug(text or (command.text if command else "run").split("\n")[0], default="run"),
                             lines, text or said, "bash", parts)
        if fill is not None:
            fill.edges = [DEdge(None, s.name)]
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
        if (nxt is None or nxt.kind not in ("branch", "loop", "verify", "tree")) \
                and not FINDS_FAILURES.search(strip_markup(text or said)) \
                and not any(isinstance(p, tuple) and p[0] == "path" and p[1] in self.finding_exits for p in parts):
            s.edges.append(DEdge(failed(s), "fallback", auto=True))
        s.edges.extend(exits)
        return (fill or s).name, exits

    def _acting(self, plain: str, raw: str, clause: Clause, lines: tuple[int, int]) -> tuple[str, DState] | None:
        """The state of a condition's arm that runs a command (its fence, an inline command, a bundled script) or
        asks the user: (entry, the state whose edges go on); None when a model does it."""
        fence = self.arms.commands.get(clause.index)
        if fence is not None and fence.block is not None and fence.block.kind != "code":
            message = strip_markup(fence.text)  # "…, ask:" and the question in the next paragraph
            if re.match(r"^(?:ask|prompt|confirm)\b", plain, re.I) or message.rstrip().endswith("?"):
                lines = (lines[0], max(lines[1], fence.end))
                s = self._tool_state(slug(message, default="ask_user"), lines, message, "ask_user", [message])
                s.text.append(message)
                self.d.land(fence, s.name)
                return s.name, s
            return None
        parts: list[Part] | None = None
        if fence is not None and self.d.bash and (fence.block is None or fence.block.info not in NOT_BASH):
            parts = list(cut(fence.text.strip(), self.scripts).parts)
            lines = (lines[0], max(lines[1], fence.end))
        elif fence is None and self.d.bash and (inline := inline_command(raw)) is not None:
            parts = list(cut(inline, self.scripts).parts)
        elif fence is None and self.d.bash and (script := script_mention(raw)) is not None:
            parts = list(cut(script_command(script), self.scripts | {script}).parts)
        elif fence is None and self.d.bash:
            parts = self._named_script(raw)
        if parts is not None:
            fill = self._fill(parts, plain, lines)
            s = self._tool_state(slug(plain, default="run"), lines, plain, "bash", parts)
            s.text.append(plain)
            if fence is not None:
                self.d.land(fence, s.name)
            s.edges.append(DEdge(failed(s), "fallback", auto=True))
            if fill is not None:
                fill.edges = [DEdge(None, s.name)]
            return (fill or s).name, s
        if asks_user(plain):  # the user answers, not a model
            s = self._tool_state(slug(plain, default="ask_user"), lines, plain, "ask_user", [plain])
            s.text.append(plain)
            return s.name, s
        path = self._writable(plain)
        if fence is None and path is not None:  # "If C, write REPORT.md with …": the arm saves the file
            compose, save = self._compose_and_save(plain, path, lines)
            return compose.name, save
        return None

    def _unsafe_holes(self, parts: list[Part]) -> dict[str, str]:
        """The holes of a command where a quoted model's text would still not be safe (the program, a here-document):
        each with where it lands, as the injection check reads the command."""
        out: dict[str, str] = {}
        state = shellctx.START
        for p in parts:
            if isinstance(p, str):
                state = shellctx.feed(state, p)
                continue
            if p[0] == "quote" and (where := shellctx.quoted_context(state)) is not None:
                out.setdefault(p[1], where)
            state = shellctx.feed(state, shellctx.QUOTED if p[0] in ("quote", "path") else shellctx.OPAQUE)
        return out

    def _fill(self, parts: list[Part], said: str, lines: tuple[int, int]) -> DState | None:
        """A model state giving the values of a command's holes (None when it has none); each is a `str` variable.
        A hole where quoting cannot make a model's text safe is the user's to give instead (an `input`)."""
        given = {TASK, "workdir", *(t.var for t in self.templates)}  # values the run itself supplies
        renamed: dict[str, str] = {}
        for k, p in enumerate(parts):  # a hole named like a question's answer (`feature_branch`) is a value of its own
            if isinstance(p, tuple) and p[0] == "quote" and p[1] not in given \
                    and self.d.vars.get(p[1], STR) != STR:
                if p[1] not in renamed:
                    renamed[p[1]] = self.d.var_names.fresh(p[1])
                    self.d.holes.add(renamed[p[1]])
                parts[k] = ("quote", renamed[p[1]])
        step = shorten(strip_markup(said).replace('"', "'"), 60)
        unsafe = {h: f"the command of \"{step}\" has it {where}, where a model's text would not be safe even quoted"
                  for h, where in self._unsafe_holes(parts).items()}
        unsafe |= {p[1]: self.unsafe[p[1]] for p in parts
                   if isinstance(p, tuple) and p[0] == "quote" and p[1] in self.unsafe and p[1] not in unsafe}
        for h, why in unsafe.items():
            if h not in self.d.vars and h not in given:
                self.d.inputs.setdefault(h, why)
                self.d.var_names.taken.add(h)
        holes = [p[1] for p in parts if isinstance(p, tuple) and p[0] == "quote" and p[1] not in given
                 and p[1] not in self.d.inputs]
        if not holes:
            return None
        shown = "".join(p if isinstance(p, str) else "<skill folder>" if p[0] == "path" else "{" + p[1] + "}"
                        for p in parts)
        s = self.d.state("model", "fill_" + slug(said, 3, "command"), lines, said)
        names = list(dict.fromkeys(holes))
        for h in names:
            if h not in self.d.vars:
                self.d.vars[h] = n.NamedType("str")
                self.d.var_names.taken.add(h)
        s.writes = [(h, None) for h in names]
        s.text.append(f"Give the value of each placeholder of the command below, from the task and the work so far: "
                      f"{', '.join('`' + h + '`' for h in names)}. Each value alone, as it goes into the command "
                      f"(it is quoted for the shell).\nCommand: {shown}")
        if said:
            s.text.append(f"The step: {said}")
        return s

    def _bundled_document(self, unit: Unit, said: str) -> str | None:
        """The file of the skill's folder a step says to read ("Read `references/model-notes.md`"), if any."""
        if not unit.clauses or unit.command is not None or not self.documents or not _says_to_read(said):
            return None
        return next((p for p in self.documents if p in said), None)

    def _work_file(self, unit: Unit, said: str) -> str | None:
        """The work-folder file a step says to read ("Read `package.json` to find the version"), where the skill may
        read it: not a file of its own folder (those are `skill_dir`'s), and allowed by a `Read` entry when the skill
        lists allowed tools."""
        if not unit.clauses or unit.command is not None or not _says_to_read(said):
            return None
        return self._in_work_folder(read_file(unit.clauses[0].text), "read")

    def _in_work_folder(self, path: str | None, tool: str) -> str | None:
        """`path` where the skill may `read` or `write` it in the work folder: not a file of its own folder (those are
        `skill_dir`'s), and allowed by an entry of that tool when the skill lists allowed tools; else None."""
        if path is None or path in self.documents or path in self.scripts \
                or (Path(self.doc.path).parent / path).exists():
            return None
        return path if self._may(tool, path) else None

    def _may(self, tool: str, path: str = "any/file") -> bool:
        """The skill may use `tool` on `path` (on any file of the work folder by default): it lists no allowed tools,
        or an entry of that tool allows the path."""
        allowed = self.doc.front.allowed_tools
        return not allowed or path_allowed(parse_allowed(allowed)[0], tool, path)

    def _read_work_file(self, unit: Unit, path: str) -> Piece:
        """A step that reads a file of the work folder: a `read` tool state gives its content to the model state
        that does the rest of the step (a model cannot open files; it would invent them)."""
        text, start, end = self._step_text(unit)
        s = self._tool_state(f"load_{slug(path, default='file')}", (start, end), text, "read", [path])
        s.text.append(f"Reads `{path}` from the work folder for the step after it.")
        entry, exits = self._model_step(unit)
        content = next(v for v, r in s.writes if r == "content")
        self.d.states[entry].text.append(f"The content of `{path}` is in `{content}`, read for you.")
        s.edges = [DEdge(None, entry)]
        return s.name, exits

    def _reads_unnamed_file(self, unit: Unit, said: str) -> bool:
        """A step that says to read a file without naming its path, where the skill may read any file."""
        return bool(unit.clauses) and unit.command is None and UNNAMED_FILE.match(_unsequenced(said)) is not None \
            and read_file(unit.clauses[0].text) is None and self._may("read")

    def _path_state(self, name: str, text: str, lines: tuple[int, int], what: str) -> tuple[DState, str]:
        """A model state giving the path, relative to the work folder, of the file a step `what` says it handles
        ("reads: …", "writes (`[process].html`)."): the state and the variable it writes."""
        s = self.d.state("model", name, lines, text)
        self.d.steps.append(s.name)
        path = self.d.var(f"{s.name}_path", n.NamedType("str"))
        s.writes = [(path, None)]
        s.text.append(f"Give the path, relative to the work folder, of the file this step {what}\n"
                      f"Reply with the path alone.")
        return s, path

    def _found_and_loaded(self, text: str, lines: tuple[int, int], verb: str) -> tuple[DState, DState, str]:
        """A model state naming the file a step `verb`s ("reads", "changes") and the `read` state reading it: both,
        and the path's variable."""
        find, path = self._path_state(f"find_{slug(text, 3, 'file')}", text, lines, f"{verb}: {text}")
        load = self._tool_state(f"load_{slug(text, 3, 'file')}", lines, text, "read", [("var", path)])
        find.edges = [DEdge(None, load.name)]
        return find, load, path

    def _find_and_read(self, unit: Unit) -> Piece:
        """A step reading a file it does not name the path of: a model state gives the path from the task and the
        work so far, a `read` state reads it, and the model state doing the step gets its content (a model cannot
        open files; it would invent them)."""
        text, start, end = self._step_text(unit)
        find, s, _ = self._found_and_loaded(text, (start, end), "reads")
        s.text.append("Reads the file at the path given, for the step after it.")
        entry, exits = self._model_step(unit)
        content = next(v for v, r in s.writes if r == "content")
        self.d.states[entry].text.append(f"The content of the file is in `{content}`, read for you.")
        s.edges = [DEdge(None, entry)]
        return find.name, exits

    def _read_step(self, unit: Unit, path: str) -> Piece:
        """A step that reads a file the skill bundles: a `read` tool state on `skill_dir`; the states after it read
        its content (the reference is loaded only where the procedure says so)."""
        text, start, end = self._step_text(unit)
        s = self._tool_state(slug(text, default="read"), (start, end), text, "read", [("file", path)])
        s.text.append(text)
        for c in [*unit.clauses, *unit.notes]:
            self.d.land(c, s.name)
        s.notes += [strip_markup(c.text) for c in unit.notes]
        exits = [DEdge(None, NEXT)]
        s.edges = list(exits)
        return s.name, exits

    def _written_file(self, unit: Unit, said: str) -> str | None:
        """The file a step says to write in the work folder ("Write `NOTES.md` with …"), where the skill may write:
        not a file of its own folder, not a step with sub-steps, and `Write` among its allowed tools when it lists
        any."""
        if not unit.clauses or unit.command is not None or self._has_substeps(unit):
            return None  # its sub-steps may add to the file: the save would come before them
        return self._writable(unit.clauses[0].text)

    def _has_substeps(self, unit: Unit) -> bool:
        """The step is a list item with items under it."""
        lead = unit.clauses[0].block if unit.clauses else None
        return lead is not None and lead.kind == "item" and lead.item in self.parents

    def _writable(self, text: str) -> str | None:
        """The file a sentence says to write, where this skill may write it (`_in_work_folder`)."""
        return self._in_work_folder(written_file(text), "write")

    def _write_step(self, unit: Unit, path: str) -> Piece:
        """A step that writes a file: a model state composes its content, and a `write` tool state saves it there
        (the file is the step's effect, and success requires the write's result)."""
        text, start, end = self._step_text(unit)
        s, save = self._compose_and_save(text, path, (start, end))
        self._composes(s, unit, text)
        exits = [DEdge(None, NEXT)]
        save.edges = list(exits)
        return s.name, exits

    def _composes(self, s: DState, unit: Unit, text: str) -> None:
        """The composing state of a write step holds the step: its sentences, the section it refers to, its notes."""
        for c in unit.clauses:
            self.d.land(c, s.name)
        for c in self.arms.reference(text):
            s.constraints.append(strip_markup(c.said))
            self.d.land(c, s.name)
        for c in unit.notes:
            s.notes.append(strip_markup(c.text))
            self.d.land(c, s.name)

    def _named_later(self, unit: Unit) -> str | None:
        """How a step names the file it writes where the run must choose the name: a name holding a placeholder
        ("Write to `[process]-flowchart.html`" → the name, in backticks) or words ("write state to handoff document"
        → "handoff document"); where the skill may write any file of the work folder, and not a step with
        sub-steps."""
        if not unit.clauses or unit.command is not None or not self._may("write") or self._has_substeps(unit):
            return None
        pattern = written_pattern(unit.clauses[0].text)
        if pattern is not None:
            return f"`{pattern}`"
        return written_unnamed(unit.clauses[0].text)

    def _name_and_write(self, unit: Unit, named: str) -> Piece:
        """A step writing a file whose name the run chooses: a model state names the file from the task, the step's
        model state composes its content, and a `write` state saves it at that name (a model cannot write files)."""
        text, start, end = self._step_text(unit)
        fill = ", each placeholder filled in from the task" if named.startswith("`") else ""
        name, path = self._path_state(f"name_{slug(named, 3, 'file')}", text, (start, end),
                                      f"writes ({named}){fill}.")
        entry, save = self._compose_and_save(text, named, (start, end))
        entry.text[:] = [text, f"Compose the content of the file this step writes ({named}), named in `{path}`.\n"
                               f"Reply with the content alone: it is saved there as you write it."]
        save.parts = [("var", path)]
        save.text[:] = [f"Saves the content to the file named in `{path}`."]
        name.edges = [DEdge(None, entry.name)]
        self._composes(entry, unit, text)
        exits = [DEdge(None, NEXT)]
        save.edges = list(exits)
        return name.name, exits

    def _compose_and_save(self, text: str, path: str, lines: tuple[int, int]) -> tuple[DState, DState]:
        """The model state composing a file's content as `text` says, then the `write` state saving it to `path`."""
        s = self.d.state("model", slug(text), lines, text)
        self.d.steps.append(s.name)
        s.text.append(f"Compose the content of `{path}` as this step says: {text}\nReply with the content alone: it "
                      f"is saved to `{path}` as you write it.")
        content = self.d.var(f"{s.name}_content", n.NamedType("str"))
        s.writes = [(content, None)]
        save = self.d.state("tool", f"save_{slug(path, default='file')}", lines, text)
        self.d.steps.append(save.name)
        save.tool, save.parts, save.content = "write", [path], content
        save.text.append(f"Saves the content to `{path}`.")
        save.writes = [(self.d.var(f"{save.name}_sha256", n.NamedType("str")), "sha256")]
        s.edges = [DEdge(None, save.name)]
        return s, save

    def _ask_step(self, unit: Unit) -> Piece:
        """A question the user answers: an `ask_user` tool state; work the step says to do first ("Draft a plan
        and request approval") is a model state before it, whose result the question shows."""
        text, start, end = self._step_text(unit)
        split = ASK_AFTER.search(text)
        if split is not None and not asks_user(text[:split.start()]) and len(text[:split.start()].split()) >= 2:
            work, question = text[:split.start()].strip(" ,;"), text[split.end():].strip()
            s = self.d.state("model", slug(work), (start, end), work)
            self.d.steps.append(s.name)
            s.text.append(work[0].upper() + work[1:] + ".")
            s.writes = [(self.d.var(f"{s.name}_result", n.NamedType("str")), None)]
            for c in unit.clauses:
                self.d.land(c, s.name)
            s.notes += [strip_markup(c.text) for c in unit.notes]
            for c in unit.notes:
                self.d.land(c, s.name)
            q = self._tool_state(slug(question, default="ask_user"), (start, end), question, "ask_user",
                                 [question[0].upper() + question[1:]])
            q.text.append(question)
            s.edges = [DEdge(None, q.name)]
            return s.name, self._approved(q, question, unit.clauses[0])
        s = self._tool_state(slug(text, default="ask_user"), (start, end), text, "ask_user", [text])
        s.text.append(text)
        for c in [*unit.clauses, *unit.notes]:
            self.d.land(c, s.name)
        s.notes += [strip_markup(c.text) for c in unit.notes]
        return s.name, self._approved(s, text, unit.clauses[0])

    def _approved(self, ask: DState, question: str, clause: Clause) -> list[DEdge]:
        """The exits of a question: where it asks for approval ("get explicit approval", "confirm with the user"),
        a judge of the answer goes on only when the user approved and ends the run `declined` (partial) otherwise;
        any other answer just goes on."""
        if not APPROVAL.search(strip_markup(question)):
            exits = [DEdge(None, NEXT)]
            ask.edges = list(exits)
            return exits
        answer = ask.writes[0][0]
        j, var = self.d.judge(f"approved_{slug(question, 2, 'plan')}", "approved", ["yes", "no"], clause,
                             f"Did the user approve? Their answer is in `{answer}`. Answer `yes` only for a clear "
                             "approval, `no` otherwise.")
        approved = DEdge(eq(var, "yes"), NEXT)
        ask.edges = [DEdge(None, j.name)]
        j.edges = [approved, DEdge(None, self.d.terminal("declined", "partial", clause))]
        return [approved]

    def _edits(self, unit: Unit) -> bool:
        """A step the document says to do with the Edit tool ("Use **Edit** when …", "- Use Edit tool for code
        changes"), where the skill may read and edit any file of the work folder (the change is made on what it
        read)."""
        return unit.command is None and any(EDIT_TOOL.search(c.text) for c in [*unit.clauses, *unit.notes]) \
            and self._may("read") and self._may("edit")

    def _edit_step(self, unit: Unit) -> Piece:
        """A step done with the Edit tool: a model state names the file to change, a `read` state reads it, the step's
        model state gives the change (the exact text to replace, as the file has it, and the new text) and an `edit`
        state makes it (a model can neither see nor change files)."""
        text, start, end = self._step_text(unit)
        find, load, path = self._found_and_loaded(text, (start, end), "changes")
        load.text.append("Reads the file to change, for the step after it.")
        entry, _ = self._model_step(unit)
        s = self.d.states[entry]
        load.edges = [DEdge(None, s.name)]
        content = next(v for v, r in load.writes if r == "content")
        old, new = (self.d.var(f"{s.name}_{f}", n.NamedType("str")) for f in ("old", "new"))
        s.writes = [(old, None), (new, None)]
        s.text.append(f"The file `{path}` names is in `{content}`, read for you. Give the change as `{old}` (the exact "
                      f"text to replace, as it stands in the file) and `{new}` (the text that replaces it).")
        e = self.d.state("tool", f"edit_{slug(s.name, 2, 'file')}", (start, end), text)
        e.tool, e.args = "edit", [("path", path), ("old", old), ("new", new)]
        self.d.steps.append(e.name)
        e.text.append("Makes the change in the file.")
        e.writes = [(self.d.var(f"{e.name}_sha256", n.NamedType("str")), "sha256")]
        s.edges = [DEdge(None, e.name)]
        exits = [DEdge(None, NEXT)]
        e.edges = list(exits)
        return find.name, exits

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
            s.constraints.append(strip_markup(c.said))
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
        entry, exits = self._yes_no(unit, nxt) if len(unit.arms) == 1 else self._cases(unit)
        if unit.title is not None:
            self._titled(unit, entry)
        return entry, exits

    def _yes_no(self, unit: Unit, nxt: Unit | None) -> Piece:
        """`If C, A` (with `Otherwise`, and a loop that sends it again): a yes/no judge."""
        exits: list[DEdge] = []
        first = unit.arms[0]
        said = if_parts(first.text)
        before = self.clauses[first.index - 1] if first.index else None  # "Confirm X. If not, stop.": one block
        cond = lead_condition(unit.lead, said.condition, before if before and before.block is first.block else None)
        j, var = self.d.holds(cond, first)
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
        """Several conditions and an `Otherwise` (or the cases a lead introduces): one judge with a label per
        condition; without an `Otherwise`, none of them goes on."""
        exits: list[DEdge] = []
        first = unit.arms[0]
        labels: list[str] = []
        namer = self.d.label_namer()
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
        if unit.otherwise is not None:
            self.arms.otherwise(j, unit.otherwise, exits)
        else:
            e = DEdge(None, NEXT)
            j.edges.append(e)
            exits.append(e)
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
        self.revisers[revise.name] = j.name
        j.wants.extend(v for v, _ in (prev.writes if prev is not None else []))
        return j.name, exits

    def _revise(self, revise: DState, prev: DState | None, j: DState) -> None:
        """What the revise state of a verification writes and where it goes: it redoes the state before."""
        if prev is not None and prev.kind == "model" and prev.writes[0][0] in {t.var for t in self.templates}:
            # A command's hole stays the step's own output: the revise state says what to fix (starting
            # empty, so the step can read it on its first run too) and the step gives the value again.
            revise.wants.append(prev.writes[0][0])
            self._tells_why(revise, prev, prev.name, "value", "the previous value was rejected")
        elif prev is not None and prev.kind == "model":
            if prev.end <= revise.end:  # it redoes that step: it comes from the step's lines too (unless the step
                revise.start = min(revise.start, prev.start)  # is a heading whose section holds this check)
            revise.writes = [prev.writes[0]]
            revise.wants.append(prev.writes[0][0])
            revise.edges = [DEdge(None, j.name)]
        elif prev is not None and prev.kind == "tool" and prev.tool in ("write", "edit") \
                and self._before(prev.name) != prev.name:
            # Compose the content, or read the file and give the change, again, told why the check failed.
            composer = self._before(prev.name)
            again = self._before(composer) if prev.tool == "edit" else composer
            self._tells_why(revise, self.d.states[composer], again, "file", "the last attempt failed its check")
        elif prev is not None and prev.kind == "tool":
            revise.writes = [(self.d.var(f"{revise.name}_result", n.NamedType("str")), None)]
            revise.edges = [DEdge(None, prev.name)]  # run the command again after the fix (its values given again)
        else:
            revise.writes = [(self.d.var(f"{revise.name}_result", n.NamedType("str")), None)]
            revise.edges = [DEdge(None, j.name)]

    def _tells_why(self, revise: DState, reader: DState, again: str, thing: str, rejected: str) -> None:
        """The revise state says in one sentence why the check failed, in a variable starting empty (so `reader` can
        read it on its first run too), and the run goes back to `again`."""
        feedback = self.d.var(f"{revise.name}_feedback", n.NamedType("str"))
        self.d.inits[feedback] = n.StrLit("")
        revise.writes = [(feedback, None)]
        revise.text.append(f"Say in one sentence what is wrong with the {thing} and how to correct it.")
        revise.edges = [DEdge(None, again)]
        reader.wants.append(feedback)
        reader.text.append(f"If `{feedback}` is not empty, {rejected} for that reason.")

    def _before(self, name: str) -> str:
        """The state whose only edge leads to `name` (the state made just before it in a chain), else `name`."""
        return self._only_into().get(name, name)

    def _only_into(self) -> dict[str, str]:
        """Each state that some state's only edge leads to → the first such state (`_before` of every state at once)."""
        out: dict[str, str] = {}
        for name, st in self.d.states.items():
            if len(st.edges) == 1 and isinstance(st.edges[0].target, str):
                out.setdefault(st.edges[0].target, name)
        return out

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
        namer = self.d.label_namer()
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

    def unit_gate(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A heading that is a condition ("## 3) If the user chooses comments"): a judge that does its section or
        skips it."""
        h = unit.clauses[0]
        said = if_parts(h.text)
        cond = said.condition.rstrip(":")
        j, var = self.d.holds(cond, h)
        j.topic |= content_stems(cond)
        self.d.land(h, j.name)
        skip = DEdge(None, NEXT)
        exits = [skip]
        entry, body_exits = self._chain(unit.body, nxt)
        if entry is None:  # a condition heading over nothing to do: its own action is the arm
            self.arms.arm(j, eq(var, "yes"), said.action, h, exits, cond)
        else:
            j.edges.append(DEdge(eq(var, "yes"), entry))
            start, end = self.arms.sections.section(h.start)
            back = next((c for c in self.clauses if start <= c.start < end and HANDS_BACK.search(strip_markup(c.text))),
                        None)
            if back is not None:  # "… the user will have to restart. Finish your answer and tell them so": it ends
                done = self.d.terminal("handed_back", "partial", back)
                self.d.land(back, done)
                for e in body_exits:
                    e.target = done
            else:
                exits += body_exits
        j.edges.append(skip)
        return j.name, exits

    def unit_menu(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A menu of options: the user picks one (`ask_user` with the options), or, when the task decides
        ("based on the task:"), a judge with a label per option; each option is a branch of its own."""
        lead = unit.clauses[0]
        said = strip_markup(lead.text).rstrip(":")
        labels = _option_labels([o.clauses[0] for o in unit.body])
        exits: list[DEdge] = []
        entries = []
        for option in unit.body:
            entry, out = self._chain([option])
            assert entry is not None, "an option is a step"
            entries.append(entry)
            exits += out
        if BY_TASK.search(said):
            j, var = self.d.judge(f"choose_{slug(said, 2)}", slug(said, 2, "option") + "_choice",
                                 [slug(lab, 3, "option") for lab in labels], lead,
                                 f"{said}. Which option applies? Answer one of: " +
                                 ", ".join(f"`{slug(lab, 3, 'option')}` ({lab})" for lab in labels) + ".")
            self.d.land(lead, j.name)
            j.topic |= content_stems(said)
            names = [slug(lab, 3, "option") for lab in labels]
            for i, (name, entry) in enumerate(zip(names, entries)):
                j.edges.append(DEdge(None if i == len(names) - 1 else eq(var, name), entry))
            return j.name, exits
        s = self._tool_state(slug(said, default="ask_user"), (lead.start, lead.end), said, "ask_user", [said])
        s.text.append(said)
        s.options = labels
        self.d.land(lead, s.name)
        answer = s.writes[0][0]
        for i, (label, entry) in enumerate(zip(labels, entries)):
            guard = None if i == len(labels) - 1 else n.BinOp("==", n.Name(answer), n.StrLit(label))
            s.edges.append(DEdge(guard, entry))
        return s.name, exits

    def unit_chain(self, unit: Unit, nxt: Unit | None) -> Piece:
        """Units one after the other (one alternative of several)."""
        entry, exits = self._chain(unit.body, nxt)
        assert entry is not None, "a chain has units"
        return entry, exits

    def unit_alternatives(self, unit: Unit, nxt: Unit | None) -> Piece:
        """Sibling sections that are alternatives: a judge picks the one that applies (or none: go on)."""
        first = unit.clauses[0]
        parent = first.section[:-1]
        heads = self.arms.sections.headings
        top = next((h for h in reversed(heads) if h.start <= first.start and h.section == parent), None)
        titles = [c.body[0].clauses[0].section[len(parent)] if c.body[0].clauses else "" for c in unit.body]
        siblings = [h.text for h in heads if h.section[:-1] == parent and top is not None and h.start > top.start
                    and len(h.section) == len(parent) + 1]
        namer = self.d.label_namer()
        labels = [namer.fresh(slug(t, 3, "case")) for t in titles]
        idle = [t for t in siblings if t not in titles]  # sections with nothing to do: that case goes on
        labels_idle = [namer.fresh(slug(t, 3, "case")) for t in idle]
        line = top.start if top is not None else first.start
        options = "; ".join(f"`{lab}`: {t}" for lab, t in [*zip(labels, titles), *zip(labels_idle, idle)])
        fake = attrs.evolve(first, start=line, end=line)
        j, var = self.d.judge(f"which_{slug(parent[-1] if parent else 'case', 2)}", slug(parent[-1] if parent else
                              "case", 2, "case") + "_case", [*labels, *labels_idle, namer.fresh("none")], fake,
                              f"Which of these applies now? {options}. Answer `none` when none of them does.")
        exits: list[DEdge] = []
        for lab, chain in zip(labels, unit.body):
            entry, out = self._chain([chain], nxt)
            assert entry is not None, "an alternative has steps"
            j.edges.append(DEdge(eq(var, lab), entry))
            exits += out
        e = DEdge(None, NEXT)
        j.edges.append(e)
        exits.append(e)
        return j.name, exits

    def unit_foreach(self, unit: Unit, nxt: Unit | None) -> Piece:
        """"For each X:" and a list: the list, then a judge that goes back for the next X (counted) or goes on."""
        c = unit.clauses[0]
        m = FOREACH.match(strip_markup(c.text))
        items = re.sub(r"\s*\(.*?\)", "", m.group(1) if m else "").strip() or "item"
        entry, body_exits = self._chain(unit.body)
        limit = max_times(c.text) or self.options.max_repeats
        said = strip_markup(unit.loop.text) if unit.loop is not None else f"Go on with the next {items}."
        lines = (unit.loop.start, unit.loop.end) if unit.loop is not None else (c.start, c.end)
        at = unit.loop or c
        j, var = self.d.judge(f"next_{slug(items, 2)}", f"another_{slug(items, 2, 'item')}", ["yes", "no"],
                             attrs.evolve(at, start=lines[0], end=lines[1]),
                             f"{strip_markup(c.text)} {said} Decide whether another {items} is left to do. "
                             f"Answer `yes` or `no`.")
        self.d.land(c, j.name)
        if unit.loop is not None:
            self.d.land(unit.loop, j.name)
        for e in body_exits:
            e.target = j.name
        counter = self.d.counter(f"{j.name}_rounds", limit)
        assert entry is not None, "a loop has a body"
        j.edges.append(DEdge(n.BinOp("and", eq(var, "yes"), below(counter, limit)), entry, bump(counter)))
        out = DEdge(None, NEXT)
        j.edges.append(out)
        # The loop is entered at its body; the clause "For each X:" is the judge's.
        return entry, [out]

    def unit_whole(self, unit: Unit, nxt: Unit | None) -> Piece:
        """A document without a procedure: one model state that applies it."""
        title = self.doc.front.name or next((b.text for b in self.doc.blocks if b.kind == "heading"), "the task")
        s = self.d.state("model", "apply_" + slug(title, 2, "skill"), (1, len(self.doc.lines)), "")
        s.text.append(f"Carry out the task, applying the guidance of \"{title}\" below.")
        s.topic |= content_stems(self.doc.text)  # the guidance is for the work, not for the checks after it
        s.writes = [(self.d.var("result", n.NamedType("str")), None)]
        exits = [DEdge(None, NEXT)]
        s.edges = exits
        return s.name, exits


def _option_labels(leads: list[Clause]) -> list[str]:
    """What the user answers to pick each option: its bold label, the words before its dash or colon, or its first
    words; unique."""
    out: list[str] = []
    for c in leads:
        raw = c.text.strip()
        bold = re.match(r"^\*\*(.+?)\*\*", raw)
        plain = strip_markup(raw)
        head = re.split(r"\s+[-–—]\s+|:\s|\.\s|\(", plain, maxsplit=1)[0]
        label = strip_markup(bold.group(1)) if bold else head if len(head.split()) <= 6 else " ".join(head.split()[:6])
        label = label.strip(" .:") or plain[:40]
        while label in out:
            label += "'"
        out.append(label)
    return out


HANDLERS: dict[UnitKind, Handler] = {
    "step": GraphBuilder.unit_step,
    "branch": GraphBuilder.unit_branch,
    "loop": GraphBuilder.unit_loop,
    "verify": GraphBuilder.unit_verify,
    "tree": GraphBuilder.unit_tree,
    "whole": GraphBuilder.unit_whole,
    "gate": GraphBuilder.unit_gate,
    "foreach": GraphBuilder.unit_foreach,
    "menu": GraphBuilder.unit_menu,
    "chain": GraphBuilder.unit_chain,
    "alternatives": GraphBuilder.unit_alternatives,
}
