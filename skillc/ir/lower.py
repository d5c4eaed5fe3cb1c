"""Lower a parsed module to the machine IR: declarations first, then fragment instances, then bodies.

`lower_module` never raises on user error; everything it finds is a diagnostic.
Each machine or fragment body is lowered in three passes: `symbols.declare`
reads its declarations into a frozen table, `instantiate` checks and expands
its `use`s, and `_Body` lowers its states, edges and rules against both.
Fragments are lowered once, standalone (their parameters act as variables and
their exits as states), so an error inside a fragment is reported once, at the
fragment.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, cast

import attrs

from skillc.diagnostics import Diagnostic, Label, Span, codes, make
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.exprs import ExprLowerer
from skillc.ir.instantiate import Expansion, broken, counter_problem, instantiate
from skillc.ir.machine import (
    FALLBACK,
    OUTCOMES,
    Assignment,
    Edge,
    Machine,
    OperationKind,
    Outcome,
    Provenance,
    Rule,
    State,
    Tool,
    ToolCall,
    Variable,
)
from skillc.ir.names import RESERVED_VARIABLES
from skillc.ir.suggest import did_you_mean
from skillc.ir.symbols import (
    FragmentDef,
    Report,
    Scope,
    StateDecl,
    Symbols,
    declare,
    declare_types,
    duplicate,
    resolve_type,
)
from skillc.ir.toolkit import PLACE_VARIABLES, PLACES, Capability, parse_capability, places_in, split_allowed
from skillc.syntax import nodes as n

_S = TypeVar("_S", bound=n.Stmt)


@attrs.frozen(hash=False)
class Lowered:
    """The result of lowering one file."""

    machine: Machine | None
    fragments: dict[str, FragmentDef]
    types: dict[str, T.Type]


def lower_module(module: n.Module, imported: Scope, path: str | None, report: Report) -> Lowered:
    """Lower a module whose imports have been resolved into `imported`."""
    scope = Scope(dict(imported.types), dict(imported.type_spans), dict(imported.fragments))
    declare_types(module.items, scope, report)
    fragments = _FragmentTable(scope, report)
    for frag in module.fragments:
        fragments.declare(frag)
    for frag in module.fragments:
        fragments.get(frag.name)
    machines = module.machines
    if not any(isinstance(i, (n.Machine, n.Fragment, n.RecordDecl, n.EnumDecl)) for i in module.items):
        report(make(codes.NO_MACHINE, "this file declares no machine, fragment or type",
                    Span(module.span.source, 0, 0) if module.span else None))
    for extra in machines[1:]:
        report(make(codes.MULTIPLE_MACHINES, f"a second machine `{extra.name}` in one file", extra.span,
                    label="second machine", secondary=_labels(machines[0].span, "first machine")))
    machine = _lower_machine(machines[0], path, scope, fragments, report) if machines else None
    own_types = {k: v for k, v in scope.types.items() if k not in imported.types}
    return Lowered(machine, fragments.own, own_types)


class _FragmentTable:
    """The fragments a body may `use`: lowered on first use, so order in the file does not matter."""

    def __init__(self, scope: Scope, report: Report) -> None:
        self.done: dict[str, FragmentDef] = dict(scope.fragments)
        self.scope = scope
        self.report = report
        self.pending: dict[str, n.Fragment] = {}
        self.active: list[str] = []
        self.own: dict[str, FragmentDef] = {}

    def declare(self, frag: n.Fragment) -> None:
        """Register a fragment of this file (a name may be defined once, imports included)."""
        first = self.pending.get(frag.name) or self.done.get(frag.name)
        if first is not None:
            duplicate(self.report, "fragment", frag.name, frag.span, first.span)
            return
        self.pending[frag.name] = frag

    def __iter__(self) -> Iterator[str]:
        return iter({**self.done, **self.pending})

    def get(self, name: str) -> FragmentDef | None:
        """The lowered fragment, lowering it now if needed; a cycle is reported as SKM129."""
        if name in self.done:
            return self.done[name]
        frag = self.pending.get(name)
        if frag is None:
            return None
        if name in self.active:
            cycle = self.active[self.active.index(name):] + [name]
            self.report(make(codes.RECURSIVE_FRAGMENT, "fragment instantiates itself: " + " -> ".join(cycle), frag.span,
                             label="recursive fragment", hint="unfold the repetition into a counted loop"))
            return broken(frag)
        self.active.append(name)
        try:
            fdef = _lower_fragment(frag, self.scope, self, self.report)
        finally:
            self.active.pop()
        self.done[name] = fdef
        self.own[name] = fdef
        return fdef


class _Sink:
    """Passes diagnostics on and remembers whether any was an error."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.ok = True

    def __call__(self, d: Diagnostic) -> None:
        if d.is_error:
            self.ok = False
        self.report(d)


# ------------------------------------------------------------------ machine / fragment

def _lower_machine(m: n.Machine, path: str | None, scope: Scope, fragments: _FragmentTable,
                   report: Report) -> Machine:
    """A machine: its body plus `doc`, `source` and exactly one `fallback`."""
    body = _Body.build(m, m.items, (), (), scope, fragments, report)
    fallbacks = _all(m.items, n.Fallback)
    if not fallbacks:
        report(make(codes.MISSING_FALLBACK, f"machine `{m.name}` has no fallback terminal", _head(m),
                    label="declare `fallback` in this machine"))
    for extra in fallbacks[1:]:
        report(make(codes.DUPLICATE_FALLBACK, "a second `fallback`", extra.span, label="second fallback",
                    secondary=_labels(fallbacks[0].span, "first fallback")))
    states = body.states()
    start = body.start(m)
    docs, sources = _all(m.items, n.Doc), _all(m.items, n.SourceDecl)
    repeated: list[n.Stmt] = [*docs[1:], *sources[1:]]
    for again in repeated:
        report(make(codes.MISPLACED_ITEM, "a machine has one `doc` and one `source`", again.span, label="repeated"))
    # Places join the variables only when the machine names them, so other machines stay as they were.
    variables = {**body.variables, **{p: PLACE_VARIABLES[p] for p in places_in(states.values())}}
    return Machine(
        name=m.name, doc=docs[0].text if docs else None, source=sources[0].path if sources else None,
        tools=body.symbols.tools, types=dict(body.symbols.scope.types), variables=variables,
        start=start or "", states=states, rules=body.rules(m.items, states), path=path,
        instances=body.entries(), allowed=body.allowed(_all(m.items, n.Allow)), kit=body.symbols.kit,
        allow_spans=tuple(a.span for a in _all(m.items, n.Allow) if a.span is not None), span=m.span,
        source_span=sources[0].span if sources else None,
    )


_NOT_IN_FRAGMENT = {n.Terminal: "terminal", n.Fallback: "fallback", n.SourceDecl: "source", n.Allow: "allow"}


def _lower_fragment(f: n.Fragment, scope: Scope, fragments: _FragmentTable, report: Report) -> FragmentDef:
    """A fragment, standalone: its parameters act as variables and its exits as states."""
    sink = _Sink(report)
    for item in f.items:
        what = _NOT_IN_FRAGMENT.get(type(item))
        if what is not None:
            if isinstance(item, n.Allow):
                sink(make(codes.MISPLACED_ITEM, "a fragment has no `allow`; the capability set of the machine that "
                          "uses it bounds it", item.span, label="`allow` in a fragment",
                          hint="move the entries to the machine's `allow`"))
                continue
            sink(make(codes.MISPLACED_ITEM, f"a fragment has no `{what}`; it ends through its exits", item.span,
                      label=f"`{what}` in a fragment",
                      hint="declare exits `fragment NAME(…) -> (done, failed)` and route edges to them"))
    body = _Body.build(f, f.items, f.params, f.exits, scope, fragments, sink)
    states = body.states()
    start = body.start(f)
    rules = body.rules(f.items, states)
    symbols = body.symbols
    params = tuple((name, v.type) for name, v in symbols.variables.items() if v.kind == "param")
    return FragmentDef(f.name, params, symbols.exits, symbols.tools,
                       {k: v for k, v in body.variables.items() if v.kind != "param"},
                       start, states, rules, sink.ok, span=f.span, instances=body.entries())


def _label_from_text(result: T.Type, var_type: T.Type) -> bool:
    """A `str` result may be bound to an enum variable (`writes decision = answer` after `ask_user(…, options: …)`):
    the runtime checks that the text is one of the labels, as it checks a judge's, and routes to the fallback if not."""
    return isinstance(result, T.StrT) and isinstance(T.strip_optional(var_type), T.EnumT)


def _all(items: Sequence[n.Stmt], cls: type[_S]) -> list[_S]:
    """The items of one kind, in order."""
    return [i for i in items if isinstance(i, cls)]


class _Kinds:
    """A block's items sorted by their exact class once (a state's items are asked for by kind seven times)."""

    def __init__(self, items: Sequence[n.Stmt]) -> None:
        self.by: dict[type, list[n.Stmt]] = {}
        for i in items:
            self.by.setdefault(type(i), []).append(i)

    def __call__(self, cls: type[_S]) -> list[_S]:
        return self.by.get(cls, [])  # type: ignore[return-value]


def _labels(span: Span | None, text: str) -> list[Label]:
    """A secondary label at `span`, or none when the node has no span."""
    return [Label(span, text)] if span is not None else []


def _head(node: n.Block) -> Span | None:
    """The span of a block's header line (`model analyze {`), for 'missing item' diagnostics."""
    span = node.span
    if span is None:
        return None
    text = span.source.text
    end = text.find("{", span.start, span.end)
    end = text.find("\n", span.start, span.end) if end == -1 else end
    return Span(span.source, span.start, end if end != -1 else span.end)


# ------------------------------------------------------------------ a body

@attrs.frozen(hash=False)
class _Body:
    """What one body's states, edges and rules are lowered against; nothing in it changes while lowering."""

    symbols: Symbols
    expansion: Expansion
    var_types: dict[str, T.Type]
    report: Report

    @classmethod
    def build(cls, owner: n.Block, items: Sequence[n.Stmt], params: Sequence[n.Param], exits: Sequence[str],
              scope: Scope, fragments: _FragmentTable, report: Report) -> _Body:
        """Declare the body's names, then expand its fragment instances."""
        symbols = declare(items, params, exits, owner, scope, report)
        expansion = instantiate(symbols, fragments, report)
        # Expressions may name the places (read-only strings); a variable cannot take their names (SKM134).
        var_types = {**{p: v.type for p, v in PLACE_VARIABLES.items()},
                     **{name: v.type for name, v in expansion.variables.items()}}
        return cls(symbols, expansion, var_types, report)

    @property
    def variables(self) -> dict[str, Variable]:
        """Every variable of the body, the instances' private ones included."""
        return self.expansion.variables

    def expressions(self, world: bool = False) -> ExprLowerer:
        """A lowerer for expressions over the body's variables and the places (`world`: with `exists` and `file`)."""
        return ExprLowerer(self.var_types, self.report, world)

    def _place_written(self, name: str, span: Span | None) -> bool:
        """Report a write to a place (SKM134); True when `name` is one."""
        if name not in PLACES or name in self.variables:
            return False
        self.report(make(codes.RESERVED_NAME, f"`{name}` is a place the runtime sets; it cannot be written", span,
                         label="read-only place",
                         hint=f"write a `var` of your own (e.g. `var out_dir: str`, assigned `{name} ++ \"/…\"`)"))
        return True

    def allowed(self, statements: Sequence[n.Allow]) -> tuple[Capability, ...]:
        """The capability set of `allow` lines: malformed entries are SKM142, entries for tools skillc does not
        have (and the machine does not declare) SKM143 notes; several lines add up."""
        caps: list[Capability] = []
        for stmt in statements:
            for i, text in enumerate(stmt.entries):
                span = stmt.entry_spans[i] if i < len(stmt.entry_spans) else stmt.span
                entries = split_allowed(text)
                if not entries:
                    self.report(make(codes.INVALID_ALLOW_ENTRY, "an empty `allow` entry", span, label="no tool named",
                                     hint="write `Tool` or `Tool(pattern)`, e.g. `\"Read\"`"))
                for entry in entries:
                    cap = parse_capability(entry)
                    if isinstance(cap, str):
                        self.report(make(codes.INVALID_ALLOW_ENTRY, f"invalid `allow` entry: {cap}", span,
                                         label="malformed entry",
                                         hint="write `Tool` or `Tool(pattern)`: `Bash(git diff:*)`, `Read(docs/**)`, "
                                         "`WebFetch(domain:example.com)`"))
                        continue
                    if not cap.known and cap.tool not in self.symbols.tools:
                        self.report(make(codes.UNIMPLEMENTED_ALLOWED_TOOL, f"skillc has no tool `{entry}`: this entry "
                                         "allows nothing here", span, label="no such tool in skillc",
                                         hint=did_you_mean(cap.tool, [*self.symbols.tools, "Read", "Write", "Edit",
                                                                      "Glob", "Grep", "Bash", "WebFetch",
                                                                      "AskUserQuestion"])
                                         or "the kit: Read, Write, Edit, Glob, Grep, Bash, WebFetch, AskUserQuestion"))
                    caps.append(cap)
        return tuple(caps)

    # -------------------------------------------------------------- names

    def target(self, name: str, span: Span | None) -> str:
        """Resolve an edge/start/exit target: a state, an exit, `fallback` or an instance (its entry)."""
        if name in self.expansion.instances:
            return self.expansion.landings.get(name, name)
        if name in self.symbols.names or name in self.expansion.names or name == FALLBACK:
            return name
        self.report(make(codes.UNDEFINED_STATE, f"undefined state `{name}`", span, label="no such state",
                         hint=did_you_mean(name, [*self.symbols.names, *self.expansion.names, FALLBACK])))
        return name

    def start(self, owner: n.Machine | n.Fragment) -> str | None:
        """The `start` target (exactly one)."""
        starts = _all(owner.items, n.Start)
        if not starts:
            self.report(make(codes.MISSING_START, f"`{owner.name}` has no `start`", _head(owner),
                             label="add `start STATE`"))
            return None
        for extra in starts[1:]:
            self.report(make(codes.DUPLICATE_START, "a second `start`", extra.span, label="second start",
                             secondary=_labels(starts[0].span, "first start")))
        return self.target(starts[0].target, starts[0].span)

    def entries(self) -> dict[str, str]:
        """Instance name → entry state, for this body's instances and the ones nested in them."""
        entries = dict(self.expansion.nested)
        entries.update({name: inst.entry for name, inst in self.expansion.instances.items() if inst.entry is not None})
        # An entry that names another instance (a pass-through fragment) is where that instance lands.
        return {name: self.expansion.landings.get(entry, entry) for name, entry in entries.items()}

    # -------------------------------------------------------------- states

    def states(self) -> dict[str, State]:
        """The instances' states followed by the declared ones, edges into instances led to their entries."""
        for target, span in self.expansion.exit_targets:
            self.target(target, span)
        declared = {name: self._state_of(d) for name, d in self.symbols.states.items()}
        return self._enter_instances({**self.expansion.states, **declared})

    def _state_of(self, d: StateDecl) -> State:
        """Lower one state declaration."""
        if isinstance(d, n.State):
            return self._state(d)
        if isinstance(d, n.Terminal):
            return self._terminal(d)
        return self._fallback(d)

    def _enter_instances(self, states: dict[str, State]) -> dict[str, State]:
        """Edges that name a fragment instance lead to the instance's entry state."""
        landings = self.expansion.landings
        if not landings:
            return states
        for name, state in states.items():
            if any(e.target in landings for e in state.edges):
                edges = tuple(attrs.evolve(e, target=landings.get(e.target, e.target)) for e in state.edges)
                states[name] = attrs.evolve(state, edges=edges)
        return states

    def _state(self, d: n.State) -> State:
        """A model, judge or tool state."""
        kinds = _Kinds(d.items)
        reads_d, writes_d = kinds(n.Reads), kinds(n.Writes)
        item_spans: dict[str, Span] = {}
        reads = self._lookup_vars(reads_d, "reads", item_spans)
        for what, repeated in (("reads", reads_d[1:]), ("writes", writes_d[1:])):
            for r in repeated:
                self.report(make(codes.MISPLACED_ITEM, f"`{what}` appears more than once in this state", r.span,
                                 label="repeated", hint=f"list every variable in one `{what}`"))
        prompt, call = self._once(kinds(n.Prompt), "prompt"), self._once(kinds(n.Call), "call")
        doc, provenance = self._annotations(kinds)
        tool_call = self._contents(d, prompt, call)
        tool = self.symbols.tools.get(call.tool) if d.kind == "tool" and call is not None else None
        writes: list[str] = []
        bindings: list[tuple[str, str]] = []
        for item in (i for w in writes_d for i in w.items):
            binding = self._write_item(d, item, tool)
            if binding is not None:
                writes.append(item.var)
                if binding[1] is not None:
                    bindings.append((binding[0], binding[1]))
        edges = tuple([self._edge(d.name, i, e) for i, e in enumerate(kinds(n.Edge))])
        for key, found in (("reads", reads_d[0] if reads_d else None), ("writes", writes_d[0] if writes_d else None),
                           ("prompt", prompt), ("call", call)):
            if found is not None and found.span is not None:
                item_spans[key] = found.span
        return State(
            name=d.name, kind=cast(OperationKind, d.kind), reads=reads, writes=tuple(dict.fromkeys(writes)),
            prompt=prompt.text if prompt else None, doc=doc, call=tool_call,
            bindings=tuple(bindings), edges=edges, provenance=provenance,
            span=d.span, item_spans=item_spans,
        )

    def _contents(self, d: n.State, prompt: n.Prompt | None, call: n.Call | None) -> ToolCall | None:
        """A tool state has a `call` and no `prompt`; a model or judge state the other way round."""
        if d.kind == "tool":
            if prompt is not None:
                self.report(make(codes.MISPLACED_ITEM, "a tool state has no `prompt`", prompt.span,
                                 label="not allowed here", hint="use `doc` to describe a tool state"))
            if call is None:
                self.report(make(codes.MISSING_ITEM, f"tool state `{d.name}` has no `call`", _head(d),
                                 label="needs `call TOOL(…)`"))
                return None
            return self._call(call)
        if call is not None:
            self.report(make(codes.MISPLACED_ITEM, f"a {d.kind} state has no `call`", call.span,
                             label="not allowed here", hint="make it a `tool` state to call a tool"))
        if prompt is None:
            self.report(make(codes.MISSING_ITEM, f"{d.kind} state `{d.name}` has no `prompt`", _head(d),
                             label="needs local instructions"))
        return None

    def _write_item(self, d: n.State, item: n.WriteItem, tool: Tool | None) -> tuple[str, str | None] | None:
        """Check one `writes` entry; return (variable, bound result or None), or None when it is unusable."""
        if self._place_written(item.var, item.span):
            return None
        v = self.variables.get(item.var)
        if v is None:
            self.report(make(codes.UNDEFINED_VARIABLE, f"undefined variable `{item.var}` in `writes`", item.span,
                             label="not declared", hint=did_you_mean(item.var, self.variables)))
            return None
        if v.is_input:
            self.report(make(codes.READ_ONLY_VARIABLE, f"`{item.var}` is an input and cannot be written", item.span,
                             label="input"))
        elif v.is_counter:
            self.report(make(codes.COUNTER_WRITTEN_BY_STATE, f"state `{d.name}` writes counter `{item.var}`", item.span,
                             label="counter in `writes`",
                             hint=f"counters change only on edges: `-> target {{ {item.var} += 1 }}`"))
        if d.kind != "tool":
            if item.result is not None:
                self.report(make(codes.BAD_RESULT_BINDING, "only tool states bind results with `=`", item.span,
                                 label="not a tool state"))
            return item.var, None
        if tool is None:
            return item.var, None
        return item.var, self._result(item, tool, v.type)

    def _result(self, item: n.WriteItem, tool: Tool, var_type: T.Type) -> str | None:
        """The tool result a `writes` entry binds, checked against the variable's type."""
        result = item.result or item.var
        rt = tool.result(result)
        if rt is None:
            self.report(make(codes.BAD_RESULT_BINDING, f"tool `{tool.name}` has no result `{result}`", item.span,
                             label="unknown result", hint=did_you_mean(result, dict(tool.results))
                             or "results: " + ", ".join(r for r, _ in tool.results)))
            return None
        if not T.assignable(rt, var_type) and not _label_from_text(rt, var_type):
            self.report(make(codes.BAD_RESULT_BINDING,
                             f"result `{result}` is {T.show(rt)} but `{item.var}` is {T.show(var_type)}",
                             item.span, label="type differs"))
        return result

    def _lookup_vars(self, statements: Sequence[n.Reads], what: str,
                     spans: dict[str, Span]) -> tuple[str, ...]:
        """The declared variables named by `reads`/`requires` statements; records each name's span."""
        out = []
        for stmt in statements:
            for name in stmt.names:
                if stmt.span is not None:  # narrowed to the name when asked for (`State.span_of`)
                    spans.setdefault(f"in:{what}:{name}", stmt.span)
                if name not in self.variables and name not in PLACES:
                    span = stmt.span.narrow(name) if stmt.span is not None else None
                    self.report(make(codes.UNDEFINED_VARIABLE, f"undefined variable `{name}` in `{what}`", span,
                                     label="not declared", hint=did_you_mean(name, [*self.variables, *PLACES])))
                    continue
                out.append(name)
        return tuple(dict.fromkeys(out))

    def _once(self, found: list[_S], what: str) -> _S | None:
        """The one item of a kind (repeats reported as SKM119), or None."""
        for extra in found[1:]:
            self.report(make(codes.MISPLACED_ITEM, f"`{what}` appears more than once in this state", extra.span,
                             label="repeated", secondary=_labels(found[0].span, "first here")))
        return found[0] if found else None

    def _annotations(self, kinds: _Kinds) -> tuple[str | None, Provenance | None]:
        """The `doc` text and `from` provenance of a block (each at most once)."""
        doc = self._once(kinds(n.Doc), "doc")
        where = self._once(kinds(n.From), "from")
        return (doc.text if doc else None), self._provenance(where.where if where else None)

    def _provenance(self, p: n.Provenance | None) -> Provenance | None:
        """A `from "FILE":START-END` annotation (an empty range is SKM136)."""
        if p is None:
            return None
        end = p.end if p.end is not None else p.start
        if p.start < 1 or end < p.start:
            self.report(make(codes.INVALID_LINE_RANGE, f"line range {p.start}-{end} is empty", p.span,
                             label="bad range"))
        return Provenance(p.file, p.start, end)

    def _call(self, c: n.Call) -> ToolCall | None:
        """A tool call: the tool exists and every argument is a known parameter of its type, passed once."""
        tool = self.symbols.tools.get(c.tool)
        lowerer = self.expressions()
        if tool is None:
            self.report(make(codes.UNDEFINED_TOOL, f"undefined tool `{c.tool}`", c.span,
                             label="not in the interface table", hint=did_you_mean(c.tool, self.symbols.tools)
                             or f"declare it: tool {c.tool}(…) -> (…)"))
            for a in c.args:
                lowerer.lower(a.value)
            return None
        params = dict(tool.params)
        seen: set[str] = set()
        args = [arg for arg in (self._argument(lowerer, tool, params, seen, a) for a in c.args) if arg is not None]
        missing = [p for p in params if p not in seen and not isinstance(params[p], T.OptionalT)]
        if missing:
            self.report(make(codes.BAD_TOOL_ARGUMENTS,
                             f"call to `{tool.name}` is missing " + ", ".join(f"`{m}`" for m in missing),
                             c.span, label="missing arguments"))
        return ToolCall(tool.name, tuple(args), span=c.span)

    def _argument(self, lowerer: ExprLowerer, tool: Tool, params: dict[str, T.Type], seen: set[str],
                  a: n.Arg) -> tuple[str, ir.Expr] | None:
        """One argument of a call, added to `seen`; None when its name is unknown or repeated."""
        expected = params.get(a.name)
        value = lowerer.lower(a.value, expected)
        if expected is None:
            self.report(make(codes.BAD_TOOL_ARGUMENTS, f"tool `{tool.name}` has no parameter `{a.name}`", a.span,
                             label="unknown argument", hint=did_you_mean(a.name, params)
                             or "parameters: " + ", ".join(params)))
            return None
        if a.name in seen:
            self.report(make(codes.BAD_TOOL_ARGUMENTS, f"argument `{a.name}` is passed twice", a.span, label="again"))
            return None
        seen.add(a.name)
        if not T.assignable(value.type, expected):
            self.report(make(codes.ARGUMENT_TYPE_MISMATCH,
                             f"argument `{a.name}` of `{tool.name}` is {T.show(expected)}, "
                             f"not {T.show(value.type)}", a.value.span, label=T.show(value.type)))
        return a.name, value

    def _edge(self, source: str, index: int, e: n.Edge) -> Edge:
        """An edge: a Boolean guard, a known target, well-typed assignments."""
        lowerer = self.expressions()
        guard = None
        if e.guard is not None:
            guard = lowerer.lower(e.guard, T.BOOL)
            if not isinstance(guard.type, (T.BoolT, T.ErrorT)):
                self.report(make(codes.GUARD_NOT_BOOL, f"this guard is {T.show(guard.type)}, not bool", e.guard.span,
                                 label="not a Boolean", hint="compare it, e.g. `x != \"\"` or `n > 0`"))
        target = self.target(e.target, e.span)
        assigns = [a for a in (self._assign(lowerer, a) for a in e.assigns) if a is not None]
        return Edge(source, index, guard, target, tuple(assigns), span=e.span)

    def _assign(self, lowerer: ExprLowerer, a: n.Assign) -> Assignment | None:
        """One assignment of an edge; None when its variable is not declared (or is a place)."""
        if self._place_written(a.target, a.span):
            lowerer.lower(a.value)
            return None
        var = self.variables.get(a.target)
        if var is None:
            self.report(make(codes.UNDEFINED_VARIABLE, f"undefined variable `{a.target}`", a.span, label="not declared",
                             hint=did_you_mean(a.target, self.variables)))
            lowerer.lower(a.value)
            return None
        if var.is_input:
            self.report(make(codes.READ_ONLY_VARIABLE, f"`{a.target}` is an input and cannot be assigned", a.span,
                             label="input"))
        value = lowerer.lower(a.value, var.type)
        self._check_assigned_type(a, var.type, value.type)
        problem = counter_problem(var, a.op, value)
        if problem:
            self.report(make(codes.INVALID_COUNTER_ASSIGNMENT, problem, a.span, label="breaks the loop bound"))
        return Assignment(a.target, a.op, value, span=a.span)

    def _check_assigned_type(self, a: n.Assign, var_type: T.Type, value_type: T.Type) -> None:
        """`=` needs an assignable value; `+=` and `-=` a number on both sides, never float into int."""
        if a.op not in ("+=", "-="):
            if not T.assignable(value_type, var_type):
                self.report(make(codes.ASSIGNMENT_TYPE_MISMATCH, f"`{a.target}` is {T.show(var_type)} but the value is "
                                 f"{T.show(value_type)}", a.value.span, label=T.show(value_type)))
        elif not T.is_numeric(var_type) and not isinstance(var_type, T.ErrorT):
            self.report(make(codes.INVALID_OPERATOR, f"`{a.op}` needs a number, but `{a.target}` is {T.show(var_type)}",
                             a.span, label="not a number"))
        elif not T.is_numeric(value_type) and not isinstance(value_type, T.ErrorT):
            self.report(make(codes.ASSIGNMENT_TYPE_MISMATCH, f"`{a.op}` adds a number, not {T.show(value_type)}",
                             a.value.span, label=T.show(value_type)))
        elif isinstance(var_type, T.IntT) and isinstance(value_type, T.FloatT):
            self.report(make(codes.ASSIGNMENT_TYPE_MISMATCH, f"`{a.target}` is int; adding a float would make it float",
                             a.value.span, label="float"))

    def _terminal(self, d: n.Terminal) -> State:
        """A terminal: a known outcome and the evidence it requires."""
        if d.outcome not in OUTCOMES:
            self.report(make(codes.UNKNOWN_OUTCOME, f"unknown outcome `{d.outcome}`", d.span, label="not an outcome",
                             hint=did_you_mean(d.outcome, OUTCOMES) or "outcomes: " + ", ".join(OUTCOMES)))
        item_spans: dict[str, Span] = {}
        kinds = _Kinds(d.items)
        requires, predicates = self._evidence(kinds(n.Requires), item_spans)
        doc, provenance = self._annotations(kinds)
        # An unknown outcome is SKM121 above; the state keeps the text so later messages can name it.
        return State(d.name, "terminal", outcome=cast(Outcome, d.outcome), requires=requires, predicates=predicates,
                     doc=doc, provenance=provenance, span=d.span, item_spans=item_spans)

    def _evidence(self, statements: Sequence[n.Requires],
                  spans: dict[str, Span]) -> tuple[tuple[str, ...], tuple[ir.Expr, ...]]:
        """A terminal's evidence: the variables it names (with their spans) and its Boolean predicates.

        A (dotted) name is a variable as before (an undeclared one is SKM103); anything else, a record field
        included, is a predicate, lowered with the world functions and required to be bool (SKM111).
        """
        names: list[str] = []
        predicates: list[ir.Expr] = []
        lowerer = self.expressions(world=True)
        for stmt in statements:
            for item in stmt.evidence:
                name = n.dotted_name(item)
                if name is not None and not self._names_a_field(name):
                    span = item.span or (stmt.span.narrow(name) if stmt.span is not None else None)
                    if span is not None:
                        spans.setdefault(f"requires:{name}", span)
                    if name not in self.variables and name not in PLACES:
                        self.report(make(codes.UNDEFINED_VARIABLE, f"undefined variable `{name}` in `requires`", span,
                                         label="not declared", hint=did_you_mean(name, [*self.variables, *PLACES])))
                        continue
                    names.append(name)
                    continue
                value = lowerer.lower(item, T.BOOL)
                if not isinstance(value.type, (T.BoolT, T.ErrorT)):
                    self.report(make(codes.GUARD_NOT_BOOL, f"this evidence predicate is {T.show(value.type)}, not bool",
                                     item.span, label="not a Boolean",
                                     hint="name a variable, or compare: `status == 0`, `file(\"out.txt\") != \"\"`"))
                    continue
                predicates.append(value)
        return tuple(dict.fromkeys(names)), tuple(predicates)

    def _names_a_field(self, dotted: str) -> bool:
        """True when `a.b` is not a variable but reaches into one (a record field): a value, not a variable."""
        if dotted in self.variables or "." not in dotted:
            return False
        parts = dotted.split(".")
        return any(".".join(parts[:k]) in self.variables for k in range(1, len(parts)))

    def _fallback(self, d: n.Fallback) -> State:
        """The fallback terminal, which requires nothing."""
        kinds = _Kinds(d.items)
        for r in kinds(n.Requires):
            self.report(make(codes.MISPLACED_ITEM, "the fallback requires no evidence", r.span,
                             label="not allowed here",
                             hint="runs end in the fallback exactly when evidence could not be produced"))
        doc, provenance = self._annotations(kinds)
        return State(FALLBACK, "fallback", outcome="failed", doc=doc, provenance=provenance, span=d.span)

    # -------------------------------------------------------------- rules

    def rules(self, items: Sequence[n.Stmt], states: dict[str, State]) -> tuple[Rule, ...]:
        """The instances' rules followed by the body's own, each operation resolved to its performers."""
        rules = list(self.expansion.rules)
        for r in _all(items, n.Rule):
            performers = [self._performers(op, r.span, states) for op in r.ops]
            known = [p for p in performers if p is not None]
            if len(known) < len(performers):
                continue
            if r.kind == "forbid" and FALLBACK in r.ops:
                # The runtime sends failures there without an edge, so no graph fact can rule it out.
                self.report(make(codes.FORBID_FALLBACK, "`rule forbid fallback` cannot hold: the runtime routes failed "
                                 "operations and unusable outputs to the fallback", r.span,
                                 label="the fallback is always possible",
                                 hint="forbid the states or tools that lead to failure instead"))
                continue
            if r.kind == "ends" and r.outcome not in OUTCOMES:
                self.report(make(codes.UNKNOWN_RULE_OUTCOME,
                                 f"`rule ends` names outcome `{r.outcome}`, which is not one of "
                                 f"{', '.join(OUTCOMES)}", r.span, label="unknown outcome",
                                 hint=did_you_mean(r.outcome or "", list(OUTCOMES))))
                continue
            rules.append(Rule(r.kind, r.ops, r.quote, tuple(known), provenance=self._provenance(r.where),
                              outcome=cast("Outcome | None", r.outcome), span=r.span))  # checked above (SKM140)
        return tuple(rules)

    def _performers(self, op: str, span: Span | None, states: dict[str, State]) -> tuple[str, ...] | None:
        """The states that perform a rule's operation: a state, an instance's states, or a tool's callers."""
        instances, tools = self.expansion.instances, self.symbols.tools
        if op in instances:
            return instances[op].members
        if op in states:
            return (op,)
        nested = tuple(s for s in states if s.startswith(op + "."))
        if nested:  # a fragment instance nested inside another: `outer.inner`
            return nested
        if op in tools:
            return tuple(s.name for s in states.values() if s.call is not None and s.call.tool == op)
        if op in self.symbols.exits:
            return (op,)
        self.report(make(codes.UNDEFINED_STATE,
                         f"rule names `{op}`, which is neither a state, a fragment instance nor a tool",
                         span, label="unknown operation", hint=did_you_mean(op, [*states, *tools, *instances])))
        return None


__all__ = ["RESERVED_VARIABLES", "FragmentDef", "Lowered", "Scope", "counter_problem", "lower_module",
           "resolve_type"]
