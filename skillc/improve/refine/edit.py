"""Edits on a copy: grow the machine's `.skm` AST so that it performs what the aligned traces did.

The edit reads *observations*: for every aligned trace (the current one and every accepted one), each step
from an aligned state to the next aligned state — or to the trace's end, with its outcome — together with the
values the replay will know there (what aligned states wrote, read through their bindings; the trace's inputs;
initial values — never a native run's closing evidence, which the replay does not have). From them:

- a **new state** (an event no state performs) becomes a `tool` or `model` state: its call is the event's,
  with any argument value that equals a known variable turned into a quoted binding
  (`"cat " ++ quote(answer_path)`); a tool state writes each result to a new variable `STATE_RESULT`; its
  `doc` is the event's text and its `from` the nearest clause of the skill document (by word overlap); a
  tool the interface lacks is declared from the event; a trace that begins with a new state starts there;
- a step the machine does not take is added as an edge. When the edge that fires under the observed values
  leads elsewhere and the step goes to a new state, the new state is **inserted** on that edge (the edge is
  retargeted, the new state continues to the old target); an edge only these steps take is retargeted;
  otherwise a guarded edge is added before it;
- **guards** come from the values (see `separate`): the first predicate that holds on every observation
  going one way and on none going another; never over inputs or counters;
- where no predicate separates two successors, a **judge** is inserted that splits on labels;
- an edge that closes a **cycle** gets a counter bounded by the most passages any trace made (`{ c += 1 }`
  and `c < N` in its guard).

Nothing here decides acceptance: the printed candidate goes through `skillc check` and replay (accept.py).
Unevaluable guards (a variable no event wrote) are taken not to fire — the replay decides for real.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence

import attrs

from skillc.check import shellctx
from skillc.check.graph import reachable
from skillc.improve.edits import Edit, EditOp, Patch, apply_edits, machine_of
from skillc.improve.events import Alignment, DevTrace, Event
from skillc.improve.refine.align import PROTOCOL_KEYS, similarity, unobserved_ahead, words
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.evaluate import EvalError, evaluate, text
from skillc.ir.machine import FALLBACK, OUTCOMES, Machine, Tool
from skillc.syntax import nodes as n
from skillc.syntax.grammar import is_name
from skillc.syntax.printer import expr, print_module, print_node

#: Where a step went: a state's name, or `END` with the trace's outcome.
END = "<end>"


@attrs.frozen
class Step:
    """One observed transition: from `source` to `target` (or to the end, with `outcome`) under `values`."""

    source: str
    target: str
    values: Mapping[str, object]
    trace: str  # the trace id
    outcome: str | None = None  # for target END: the trace's outcome


@attrs.frozen
class Change:
    """One edit, for the report: what was added or changed, where, and why."""

    kind: str  # state, edge, guard, retarget, counter, variable, terminal, judge
    where: str
    text: str


@attrs.frozen
class Candidate:
    """The edited machine text and the changes that made it (no change: `text` is the input)."""

    text: str
    changes: tuple[Change, ...]
    problems: tuple[str, ...] = ()  # edits that could not be made (a successor no guard separates, …)
    # the edits that made `text`, in the one machine-edit language (frozen, so one shared default is safe)
    patch: Patch = Patch()  # noqa: RUF009


@attrs.frozen
class _Var:
    """A variable of the candidate: its name and IR type (new variables are typed from their tool results)."""

    name: str
    type: T.Type


def known_values(machine: Machine, trace: DevTrace, alignment: Alignment,
                 new_writes: Mapping[str, Sequence[tuple[str, str]]]) -> list[dict[str, object]]:
    """The values known after each event (cumulative): bindings of aligned tool states, model outputs."""
    env: dict[str, object] = {}
    out = []
    for event, state in zip(trace.events, alignment.states):
        env = {**env, **_written(machine, event, state, new_writes)}
        out.append(env)
    return out


def _written(machine: Machine, event: Event, state: str | None,
             new_writes: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, object]:
    """What one event wrote, as variable values — as the replay sees it (replay.py): nothing for an event aligned
    to no state, and a model state's values only when its event gives all of them."""
    if state is None:
        return {}
    st = machine.states.get(state)
    if event.kind == "tool":
        if not isinstance(event.result, dict):
            return {}
        pairs = st.bindings if st is not None else new_writes.get(state, ())
        return {var: event.result[res] for var, res in pairs if res in event.result}
    output = event.output or {}
    names = st.writes if st is not None else tuple(var for var, _ in new_writes.get(state, ()))
    return {w: output[w] for w in names} if all(w in output for w in names) else {}


def observe(machine: Machine, traces: Iterable[tuple[DevTrace, Alignment]],
            new_writes: Mapping[str, Sequence[tuple[str, str]]]) -> list[Step]:
    """Every transition the aligned traces made, with the values the replay will know at it.

    Only what aligned events wrote and the trace's inputs: a native run's closing evidence is not a value
    the replay has (its reasoning states are unobserved), so a guard read from it could never be replayed.
    """
    steps = []
    for trace, alignment in traces:
        seed = {**initial_values(machine), **{k: v for k, v in trace.inputs.items() if k in machine.variables}}
        envs = [{**seed, **env} for env in known_values(machine, trace, alignment, new_writes)]
        path = [(i, s) for i, s in enumerate(alignment.states) if s is not None]
        for (i, a), (_, b) in itertools.pairwise(path):
            steps.append(Step(a, b, envs[i], trace.id))
        if path and trace.outcome != "unfinished":
            steps.append(Step(path[-1][1], END, envs[path[-1][0]], trace.id, trace.outcome))
    return steps


# ---------------------------------------------------------------- guards from values


def _literal(value: object, t: T.Type) -> n.Expr | None:
    """A literal of the variable's type for a value, or None when it has no literal form."""
    t = T.strip_optional(t)
    if isinstance(t, T.EnumT) and isinstance(value, str) and value in t.labels:
        return n.Name(value)
    if isinstance(t, T.BoolT) and isinstance(value, bool):
        return n.BoolLit(value)
    if isinstance(t, T.IntT) and isinstance(value, int) and not isinstance(value, bool):
        return n.IntLit(value)
    if isinstance(t, T.FloatT) and isinstance(value, (int, float)) and not isinstance(value, bool):
        return n.FloatLit(float(value))
    if isinstance(t, T.StrT) and isinstance(value, str):
        return n.StrLit(value)
    return None


def _same(a: object, b: object) -> bool:
    """Equality as a guard `x == str(y)` sees it (scalars by their text)."""
    return a == b if type(a) is type(b) else text(a) == text(b)


def _pair(x: _Var, y: _Var, op: str) -> n.Expr | None:
    """`x == y` (same type) or `x == str(y)` (x a string), or None when they cannot be compared."""
    if T.strip_optional(x.type) == T.strip_optional(y.type) and T.is_scalar(T.strip_optional(x.type)):
        return n.BinOp(op, n.Name(x.name), n.Name(y.name))
    if isinstance(T.strip_optional(x.type), T.StrT) and T.is_scalar(T.strip_optional(y.type)):
        return n.BinOp(op, n.Name(x.name), n.CallExpr("str", (n.Name(y.name),)))
    return None


def separate(pos: Sequence[Mapping[str, object]], neg: Sequence[Mapping[str, object]], variables: Sequence[_Var]) \
        -> n.Expr | None:
    """The first predicate true on every `pos` and false on every `neg`, or None.

    In order: a string variable against another string or enum one (`x == str(y)`, `x != str(y)`), then per
    variable as given (the source's own writes first) its length (`len(x) != k`, `len(x) == k`) and its value
    (`x != v`, `x == v`): `!=` the value the other way always saw reads "anything but the usual".
    """
    everywhere = [v for v in variables if all(v.name in env for env in (*pos, *neg))]
    strings = [v for v in everywhere if isinstance(T.strip_optional(v.type), (T.StrT, T.EnumT))]
    for x in (v for v in strings if isinstance(T.strip_optional(v.type), T.StrT)):
        for y in (v for v in strings if v.name != x.name):
            for op, holds in (("==", True), ("!=", False)):
                if all(_same(e[x.name], e[y.name]) == holds for e in pos) and \
                        all(_same(e[x.name], e[y.name]) != holds for e in neg):
                    found = _pair(x, y, op)
                    if found is not None:
                        return found
    for x in everywhere:
        found = _feature(x, [e[x.name] for e in pos], [e[x.name] for e in neg])
        if found is not None:
            return found
    return None


def _feature(x: _Var, pos: Sequence[object], neg: Sequence[object]) -> n.Expr | None:
    """`len(x) == k`, `len(x) != k` (strings), then `x == literal`, `x != literal`: the first that separates."""
    subject: n.Expr = n.Name(x.name)
    tries: list[tuple[n.Expr, Sequence[object], Sequence[object], T.Type]] = []
    if isinstance(T.strip_optional(x.type), T.StrT) and all(isinstance(v, str) for v in (*pos, *neg)):
        tries.append((n.CallExpr("len", (subject,)), [len(v) for v in pos if isinstance(v, str)],
                      [len(v) for v in neg if isinstance(v, str)], T.IntT()))
    tries.append((subject, pos, neg, x.type))
    for lhs, p, q, t in tries:
        seen_pos, seen_neg = {repr(v) for v in p}, {repr(v) for v in q}
        if seen_pos & seen_neg:
            continue
        # `!=` the value the other way always saw first: the new branch is "anything but the usual".
        if q and len(seen_neg) == 1 and (lit := _literal(q[0], t)) is not None:
            return n.BinOp("!=", lhs, lit)
        if len(seen_pos) == 1 and (lit := _literal(p[0], t)) is not None:
            return n.BinOp("==", lhs, lit)
    return None


def fired(machine: Machine, state: str, values: Mapping[str, object]) -> int | None:
    """The index of the edge the machine takes from `state` under `values` (unevaluable guards do not fire)."""
    for e in machine.states[state].edges:
        if e.guard is None:
            return e.index
        try:
            if evaluate(e.guard, values) is True:
                return e.index
        except EvalError:
            continue
    return None


# ---------------------------------------------------------------- new states


def nearest_clause(machine: Machine, text: str) -> tuple[int, str] | None:
    """The line of the skill document (1-based) whose words overlap `text` most, with its text."""
    if machine.source_path is None:
        return None
    try:
        lines = machine.source_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    want = words(text)
    scored = [(similarity(words(line), want), i + 1, line.strip()) for i, line in enumerate(lines) if line.strip()]
    best = max(scored, default=None, key=lambda x: (x[0], -x[1]))
    if not best or best[0] <= 0:
        return None
    return best[1], re.sub(r"^(?:[-*]|\d+\.)\s+|\*\*", "", best[2]).strip()  # list markers and bold dropped


def _bound(value: str, known: Mapping[str, object], variables: Mapping[str, _Var],
           shell: shellctx.State | None = None) -> n.Expr:
    """A string argument with each known variable's value (3+ characters, a whole token) turned into a binding,
    shell-quoted (`quote(x)`): a value spliced into a command must not be able to inject one (SKM510). In a bash
    command (`shell`: the quoting context where `value` starts) a value is bound only where `quote()` protects it
    (SKM511: not inside `"…"`, a here-document, …); elsewhere it stays literal text."""
    for name, v in known.items():
        var = variables.get(name)
        if var is None or not isinstance(T.strip_optional(var.type), T.StrT) or not isinstance(v, str) or len(v) < 3:
            continue
        found = re.search(r"(?<![\w.])" + re.escape(v) + r"(?![\w.])", value)
        before = None if shell is None or not found else shellctx.feed(shell, value[:found.start()])
        if before is not None and shellctx.quoted_context(before) is not None:
            continue
        if found:
            parts: list[n.Expr] = []
            if found.start():
                parts.append(n.StrLit(value[:found.start()]))
            parts.append(n.CallExpr("quote", (n.Name(name),)))
            rest = value[found.end():]
            expr: n.Expr = parts[0] if len(parts) == 1 else n.BinOp("++", parts[0], parts[1])
            after = None if before is None else shellctx.feed(before, shellctx.QUOTED)
            return n.BinOp("++", expr, _bound(rest, known, variables, after)) if rest else expr
    return n.StrLit(value)


def _py_type(value: object) -> T.Type:
    """The IR type of a model output's value (strings for anything structured)."""
    if isinstance(value, bool):
        return T.BoolT()
    if isinstance(value, int):
        return T.IntT()
    if isinstance(value, float):
        return T.FloatT()
    return T.StrT()


# ---------------------------------------------------------------- the editor


def _type_node(t: T.Type) -> n.TypeExpr:
    """The written form of a scalar IR type."""
    if isinstance(t, T.EnumT):
        return n.NamedType(t.name) if t.name else n.EnumType(t.labels)
    return n.NamedType(T.show(t))


class _Editor:
    """One candidate in the making: the AST's edges as lists, new states, declarations and the changes."""

    def __init__(self, module: n.Module, machine: Machine) -> None:
        self.module, self.machine = module, machine
        self.node = next(m for m in module.machines if m.name == machine.name)
        self.variables = {v.name: _Var(v.name, v.type) for v in machine.variables.values()}
        self.states = {s.name: s for s in self.node.items if isinstance(s, n.State)}
        self.edges = {name: [e for e in s.items if isinstance(e, n.Edge)] for name, s in self.states.items()}
        self.new: dict[str, list[n.StateItem]] = {}
        self.kinds: dict[str, str] = {}
        self.new_writes: dict[str, list[tuple[str, str]]] = {}
        self.decls: list[n.Stmt] = []
        self.tools: list[n.ToolDecl] = []
        self.new_tools: dict[str, Tool] = {}
        self.start: str | None = None  # a new start state
        self.terminals: list[n.Terminal] = []
        self.inherit: dict[str, str] = {}
        self.added: list[tuple[str, n.Edge]] = []
        self.changes: list[Change] = []
        self.problems: list[str] = []
        self.edits: list[Edit] = []  # the edits of existing states' edges, in the order they were made

    def edit(self, source: str, edit: Edit) -> None:
        """Record an edit of an existing state's edges (a new state is written whole at the end)."""
        if source not in self.new:
            self.edits.append(edit)

    def note(self, kind: str, where: str, text: str) -> None:
        """Record a change for the report."""
        self.changes.append(Change(kind, where, text))

    def declare(self, name: str, t: T.Type, why: str) -> None:
        """A new variable (once)."""
        if name in self.variables:
            return
        self.variables[name] = _Var(name, t)
        self.decls.append(n.VarDecl("var", name, _type_node(t)))
        self.note("variable", name, f"var {name}: {T.show(t)} ({why})")

    # -- new states

    def add_state(self, name: str, event: Event, index: int, known: Mapping[str, object]) -> None:
        """A new tool or model state performing `event`, with its writes, doc/prompt and provenance."""
        clause = nearest_clause(self.machine, " ".join([event.text, *map(str, event.args.values())]))
        items: list[n.StateItem] = []
        if clause is not None and self.machine.source:
            items.append(n.From(n.Provenance(self.machine.source, clause[0])))
        text = event.text.strip() or (clause[1] if clause else "")
        if event.kind == "tool" and event.tool:
            self._tool_state(name, event, known, items, text)
        else:
            self._model_state(name, event, items, text, clause)
        self.new[name] = items
        self.edges[name] = []
        where = f" (nearest clause: {self.machine.source}:{clause[0]})" if clause else ""
        line = f", line {event.line}" if event.line else ""
        self.note("state", name, f"{self.kinds[name]} state `{name}` for event {index}{line}{where}")

    def _tool_state(self, name: str, event: Event, known: Mapping[str, object], items: list[n.StateItem],
                    text: str) -> None:
        """The call with bindings, and one new variable per result of the tool."""
        tool = self.tool(event)
        args = tuple(n.Arg(k, _bound(v, known, self.variables, shellctx.START if (tool.name, k) == ("bash", "command")
                                     else None) if isinstance(v, str) else
                           _literal(v, tool.param(k) or T.StrT()) or n.StrLit(str(v)))
                     for k, v in event.args.items())
        reads = sorted({x.id for a in args for x in _names(a.value)})
        if text:
            items.insert(0, n.Doc(text))
        if reads:
            items.append(n.Reads(tuple(reads)))
        items.append(n.Call(tool.name, args))
        pairs = [(f"{name}_{res}", res) for res, _ in tool.results]
        for (var, res), (_, t) in zip(pairs, tool.results):
            self.declare(var, t, f"result `{res}` of `{name}`")
        items.append(n.Writes(tuple(n.WriteItem(v, r) for v, r in pairs)))
        self.new_writes[name], self.kinds[name] = pairs, "tool"

    def tool(self, event: Event) -> Tool:
        """The event's tool from the interface table, or a new declaration typed from the event (once)."""
        name = event.tool or "tool"
        declared = {t.casefold(): tool for t, tool in self.machine.tools.items()}
        if name.casefold() in declared:  # `Bash` in a Claude Code log is the machine's `bash`
            return declared[name.casefold()]
        if name in self.new_tools:
            return self.new_tools[name]
        results = event.result if isinstance(event.result, dict) and event.result else {"result": event.result}
        tool = Tool(name, tuple((k, _py_type(v)) for k, v in event.args.items()),
                    tuple((k, _py_type(v)) for k, v in results.items()))
        self.new_tools[name] = tool
        self.tools.append(n.ToolDecl(name, tuple(n.Param(k, _type_node(t)) for k, t in tool.params),
                                     tuple(n.Param(k, _type_node(t)) for k, t in tool.results)))
        shown = ", ".join(f"{k}: {T.show(t)}" for k, t in tool.params)
        self.note("tool", name, f"tool {name}({shown}) declared from the trace (types from its values)")
        return tool

    def _model_state(self, name: str, event: Event, items: list[n.StateItem], text: str,
                     clause: tuple[int, str] | None) -> None:
        """A model state writing the event's output keys, prompted by its text and the nearest clause."""
        out = {k: v for k, v in (event.output or {}).items() if k not in PROTOCOL_KEYS}
        for k, v in out.items():
            self.declare(k, self.variables[k].type if k in self.variables else _py_type(v), f"written by `{name}`")
        if out:
            items.append(n.Writes(tuple(n.WriteItem(k) for k in out)))
        prompt = "\n".join(p for p in (text, clause[1] if clause and clause[1] != text else "") if p)
        items.append(n.Prompt(prompt or f"Produce {', '.join(out)}."))
        self.new_writes[name] = [(k, k) for k in out]
        self.kinds[name] = "model"

    # -- edges

    def category(self, name: str) -> str | None:
        """The outcome category of a terminal (the fallback's is `failed`), None for other states."""
        st = self.machine.states.get(name)
        return st.outcome if st is not None and st.kind == "terminal" else None  # the replay refuses the fallback

    def terminal_for(self, outcome: str | None, hint: str | None) -> str:
        """A terminal of the outcome's category: the hinted one if it fits, an existing one, else a new one."""
        if hint is not None and self.category(hint) == outcome:
            return hint
        for st in self.machine.states.values():
            if st.kind == "terminal" and st.outcome == outcome:
                return st.name
        made = next((t.name for t in self.terminals if t.outcome == outcome), None)
        if made is not None:
            return made
        name = f"{outcome}_end"
        self.terminals.append(n.Terminal(name, outcome or "failed", (n.Doc(f"Added by refinement: a development "
                                                                           f"trace ended {outcome} here."),)))
        self.note("terminal", name, f"terminal `{name}`: {outcome}")
        return name

    def consistent(self, step: Step, edge: int | None) -> bool:
        """Does the fired edge lead where the step went, through model and judge states only (unobserved turns)?"""
        if edge is None:
            return False
        target = self.machine.states[step.source].edges[edge].target
        ahead = unobserved_ahead(self.machine, [target], step.target)
        if step.target == END:
            return any(self.category(s) == step.outcome for s in ahead)
        return step.target in ahead

    def fix_existing(self, source: str, steps: Sequence[Step]) -> None:
        """Retarget or guard the edges of an existing state so that every observed step is taken."""
        taken = [(s, fired(self.machine, source, s.values)) for s in steps]
        wrong = [(s, k) for s, k in taken if not self.consistent(s, k)]
        for target, outcome in dict.fromkeys((s.target, s.outcome) for s, _ in wrong):
            mine = [(s, k) for s, k in wrong if (s.target, s.outcome) == (target, outcome)]
            k = mine[0][1]
            dest = self.terminal_for(mine[0][0].outcome, None) if target == END else target
            others = {j for s, j in taken if (s.target, s.outcome) != (target, outcome)}
            if k is not None and (target in self.new or k not in others) and all(j == k for _, j in mine):
                self.retarget(source, k, dest)
                continue
            pos = [s.values for s, _ in mine]
            neg = [s.values for s in steps if (s.target, s.outcome) != (target, outcome)]
            self.guarded(source, dest, pos, neg, before=k if k is not None else len(self.edges[source]))

    def retarget(self, source: str, k: int, dest: str) -> None:
        """Edge `k` of `source` now leads to `dest`; a new state there continues to the edge's old target."""
        edge = self.edges[source][k]
        if dest in self.new:
            self.inherit[dest] = edge.target
        self.edges[source][k] = attrs.evolve(edge, target=dest)
        self.edit(source, Edit("retarget", state=source, index=k, target=dest))
        self.added.append((source, self.edges[source][k]))
        then = f", which continues to `{edge.target}`" if dest in self.new else f" instead of `{edge.target}`"
        self.note("retarget", source, f"edge {k} of `{source}` now leads to `{dest}`{then}")

    def guarded(self, source: str, dest: str, pos: Sequence[Mapping[str, object]], neg: Sequence[Mapping[str, object]],
                before: int) -> None:
        """A guarded edge `source -> dest` before edge `before`, or a judge when no guard separates the values."""
        guard = separate(pos, neg, self._ordered(source)) if neg else None
        if guard is None and neg:
            self.problems.append(f"no guard over the known values separates `{source} -> {dest}` from the other "
                                 f"steps of `{source}`; a judge decides instead")
            self.judge(source, dest, before)
            return
        edge = n.Edge(guard, dest)
        self.edit(source, Edit("add_edge", state=source, text="" if guard is None else _show(guard), target=dest,
                               index=min(before, len(self.edges[source]))))
        self.edges[source].insert(before, edge)
        self.added.append((source, edge))
        shown = "default" if guard is None else "when " + _show(guard)
        self.note("edge" if guard is None else "guard", source, f"{source} -> {dest} ({shown})")

    def judge(self, source: str, dest: str, before: int) -> None:
        """Insert a judge after `source` that splits on labels between `dest` and where the edge went before."""
        old = self.edges[source][min(before, len(self.edges[source]) - 1)]
        name = f"{source}_route"
        labels = (f"to_{dest}", f"to_{old.target}") if dest != old.target else (f"to_{dest}", "other")
        self.declare(f"{name}_way", T.EnumT(tuple(labels)), f"the label `{name}` decides")
        reads = tuple(v for v, _ in self.new_writes.get(source, ()))
        if not reads and source in self.machine.states:
            reads = self.machine.states[source].writes
        items: list[n.StateItem] = [n.Reads(reads)] if reads else []
        items += [n.Writes((n.WriteItem(f"{name}_way"),)),
                  n.Prompt(f"Decide how to continue after `{source}`: `{labels[0]}` or `{labels[1]}`.")]
        self.new[name], self.kinds[name] = items, "judge"
        # The new step is the default: a judge the trace shows no event for is passed with its label unknown.
        self.edges[name] = [n.Edge(n.BinOp("==", n.Name(f"{name}_way"), n.Name(labels[1])), old.target),
                            n.Edge(None, dest)]
        at = self.edges[source].index(old)
        self.edges[source][at] = attrs.evolve(old, target=name)
        self.edit(source, Edit("retarget", state=source, index=at, target=name))
        self.note("judge", name, f"judge `{name}` splits `{source}` on {labels[0]} -> {dest} / {labels[1]} -> "
                                 f"{old.target}")

    def fix_new(self, source: str, steps: Sequence[Step]) -> None:
        """The edges of a new state, from the steps that left it."""
        groups: dict[tuple[str, str | None], list[Step]] = {}
        for s in steps:
            groups.setdefault((s.target, s.outcome if s.target == END else None), []).append(s)
        dests = {key: self.terminal_for(key[1], self.inherit.get(source)) if key[0] == END else key[0]
                 for key in groups}
        default = next((k for k, d in dests.items() if d == self.inherit.get(source)), None) \
            or max(groups, key=lambda k: len(groups[k]))
        self.guarded(source, dests[default], [], [], before=0)  # first, so that a judge has an edge to split
        for key, group in groups.items():
            if key != default:
                neg = [s.values for k, g in groups.items() if k != key for s in g]
                self.guarded(source, dests[key], [s.values for s in group], neg, before=len(self.edges[source]) - 1)

    def _ordered(self, source: str) -> list[_Var]:
        """Variables to build guards from: what `source` wrote first (the values written just before), then what
        other operations wrote. Never inputs or counters: every trace has its own inputs, and a guard that tells
        traces apart by their question would fit the traces, not the procedure."""
        own = [v for v, _ in self.new_writes.get(source, ())] + list(
            self.machine.states[source].writes if source in self.machine.states else ())
        written = [v for vs in self.new_writes.values() for v, _ in vs] + [
            v for st in self.machine.states.values() for v in st.writes]
        return [self.variables[v] for v in dict.fromkeys([*own, *written]) if v in self.variables]


def _names(e: n.Expr) -> Iterable[n.Name]:
    """The variable names an AST expression reads."""
    if isinstance(e, n.Name):
        yield e
    for child in e.children():
        if isinstance(child, n.Expr):
            yield from _names(child)


def _show(e: n.Expr) -> str:
    """An AST expression as `.skm` text."""
    return expr(e)


def _counters(ed: _Editor, steps: Sequence[Step]) -> None:
    """Bound every added edge that closes a cycle with a new counter (its maximum: the most passages seen)."""
    succ = {name: [e.target for e in edges] for name, edges in ed.edges.items()}
    for source, edge in list(ed.added):
        k = next((i for i, e in enumerate(ed.edges[source]) if e is edge), None)
        if k is None or source not in reachable(succ, [edge.target]):
            continue  # (k None: the same edge was added twice, and is bounded already)
        per_trace: dict[str, int] = {}
        for s in steps:
            if s.source == source and s.target in (edge.target, END):
                per_trace[s.trace] = per_trace.get(s.trace, 0) + (s.target == edge.target)
        bound = max([1, *per_trace.values()])
        name, i = f"{edge.target}_passes", 2
        while name in ed.variables:
            name, i = f"{edge.target}_passes_{i}", i + 1
        ed.variables[name] = _Var(name, T.IntT())
        ed.decls.append(n.CounterDecl(name, bound))
        below = n.BinOp("<", n.Name(name), n.IntLit(bound))
        guard = below if edge.guard is None else n.BinOp("and", edge.guard, below)
        bounded = attrs.evolve(edge, guard=guard, assigns=(*edge.assigns, n.Assign(name, "+=", n.IntLit(1))))
        ed.edges[source][k] = bounded
        ed.edit(source, Edit("set_guard", state=source, index=k, text=_show(guard)))
        ed.edit(source, Edit("add_assigns", state=source, index=k, assigns=f"{name} += 1"))
        if edge.guard is None:  # the bounded edge is no longer a default: the state needs one after it
            default = n.Edge(None, ed.terminal_for("failed", None))
            ed.edit(source, Edit("add_edge", state=source, target=default.target, index=len(ed.edges[source])))
            ed.edges[source].append(default)
        ed.note("counter", source, f"counter {name} max {bound} on {source} -> {edge.target} (the most passages "
                                   "one trace made)")


def _last(items: Sequence[n.Stmt], kinds: tuple[type[n.Stmt], ...], default: int) -> int:
    """The position of the machine's last statement of one of `kinds` (`default` when none)."""
    return max((i for i, x in enumerate(items) if isinstance(x, kinds)), default=default)


def _patch(ed: _Editor) -> tuple[n.Module, Patch]:
    """The candidate as one patch of the machine-edit language (skillc.improve.edits), and the module it makes:
    the new start, the edges of existing states as they were edited, then declarations after the last `var` or
    counter, tools after the last tool, new states before the first terminal and new terminals after the last."""
    edits = [*([Edit("start", target=ed.start)] if ed.start is not None else []), *ed.edits]
    module = apply_edits(ed.module, edits, ed.node.name)

    def place(op: EditOp, node: n.Stmt, where: Callable[[Sequence[n.Stmt]], int]) -> None:
        """Add one statement or block where `where` says, in the machine as edited so far."""
        nonlocal module
        edit = Edit(op, text=print_node(node), index=where(machine_of(module, ed.node.name)[1].items))
        module = apply_edits(module, [edit], ed.node.name)
        edits.append(edit)

    for decl in ed.decls:
        place("add_statement", decl, lambda items: _last(items, (n.VarDecl, n.CounterDecl), -1) + 1)
    for tool in ed.tools:
        place("add_statement", tool, lambda items: _last(items, (n.ToolDecl,), -1) + 1)
    for name, body in ed.new.items():
        place("add_state", n.State(ed.kinds[name], name, (*body, *ed.edges[name])),
              lambda items: next((i for i, x in enumerate(items) if isinstance(x, (n.Terminal, n.Fallback))),
                                 len(items)))
    for terminal in ed.terminals:
        place("add_state", terminal, lambda items: _last(items, (n.Terminal,), len(items) - 1) + 1)
    return module, Patch(machine=tuple(edits))


def initial_values(machine: Machine) -> dict[str, object]:
    """The values variables have before the first state: initialised inputs and variables, counters at 0."""
    out: dict[str, object] = {v.name: 0 for v in machine.variables.values() if v.is_counter}
    out.update({v.name: v.init.value for v in machine.variables.values() if isinstance(v.init, ir.Const)})
    return out


def unwritable_names(machine: Machine, trace: DevTrace) -> list[tuple[str, str]]:
    """(name, what it names) for each name of the trace that an edit would write and `.skm` cannot (`is_name`):
    a new tool's name and results, any call's arguments, the values a model step writes."""
    declared = {t.casefold() for t in machine.tools}
    found: list[tuple[str, str]] = []
    for e in trace.events:
        if e.kind == "tool" and e.tool:
            new = e.tool.casefold() not in declared
            found += [(e.tool, "a tool")] if new else []
            found += [(k, f"an argument of `{e.tool}`") for k in e.args]
            if new and isinstance(e.result, dict):
                found += [(k, f"a result of `{e.tool}`") for k in e.result]
        else:
            found += [(k, "a value a model step writes") for k in (e.output or {}) if k not in PROTOCOL_KEYS]
    return [(name, what) for name, what in dict.fromkeys(found) if not is_name(name)]


def propose(module: n.Module, machine: Machine, trace: DevTrace, alignment: Alignment,
            archive: Sequence[tuple[DevTrace, Alignment]] = ()) -> Candidate:
    """Edit a copy of the machine so that it performs the aligned trace (and keeps what the archive needs)."""
    ed = _Editor(module, machine)
    # An archived alignment naming a state the machine lacks (an archive gone stale by a hand edit) is no
    # evidence for an edit; the replay refuses such a trace on its own.
    archive = [(t, a) for t, a in archive if all(s is None or s in machine.states for s in a.states)]
    seed = {**initial_values(machine), **{k: v for k, v in trace.inputs.items() if k in machine.variables}}
    known = dict(seed)  # what earlier events wrote, new states' results included: their values become bindings
    for i, (event, state) in enumerate(zip(trace.events, alignment.states)):
        if state is not None and state not in machine.states and state not in ed.new:
            ed.add_state(state, event, i, known)
        known.update(_written(machine, event, state, ed.new_writes))
    first = next((st for st in alignment.states if st is not None), None)
    if first is not None and first in ed.new:  # the trace begins with a new operation: it becomes the start
        ed.start, ed.inherit[first] = first, machine.start
        ed.note("start", first, f"the machine now starts at new `{first}`, which continues to `{machine.start}`")
    steps = observe(machine, [(trace, alignment), *archive], ed.new_writes)
    sources = list(dict.fromkeys(s.source for s in steps))
    for source in (s for s in sources if s not in ed.new):
        ed.fix_existing(source, [s for s in steps if s.source == source])
    for source in list(ed.new):
        if ed.kinds[source] == "judge":
            continue
        mine = [s for s in steps if s.source == source]
        if mine:
            ed.fix_new(source, mine)
        else:  # the trace stopped here (unfinished): continue where the old edge went, or stop in the fallback
            end = ed.terminal_for(trace.outcome, None) if trace.outcome in OUTCOMES else FALLBACK
            ed.guarded(source, ed.inherit.get(source) or end, [], [], 0)
    _counters(ed, steps)
    if not ed.changes:
        return Candidate(print_module(module), ())
    edited, patch = _patch(ed)
    return Candidate(print_module(edited), tuple(ed.changes), tuple(ed.problems), patch)
