"""Lower a parsed module to the machine IR: resolve names, check types, expand fragments.

`lower_module` never raises on user error; everything it finds is a diagnostic.
Fragments are lowered once, standalone (their parameters act as variables and
their exits as states), so an error inside a fragment is reported once, at the
fragment. Instantiation then only renames: parameters to the bound variables,
exits to the bound states, private names to `instance.name`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs

from skillc.diagnostics import Diagnostic, Label, Span, make
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.exprs import ExprLowerer
from skillc.ir.machine import (
    FALLBACK,
    OUTCOMES,
    Assignment,
    Edge,
    Machine,
    Provenance,
    Rule,
    State,
    Tool,
    ToolCall,
    Variable,
)
from skillc.ir.suggest import did_you_mean
from skillc.syntax import nodes as n


# Words an expression reads as literals or operators; a variable with one of these names could never be read.
RESERVED_VARIABLES = frozenset({"true", "false", "none", "and", "or", "not", "in"})


@attrs.frozen(hash=False)
class FragmentDef:
    """A lowered fragment, ready to instantiate."""

    name: str
    params: tuple[tuple[str, T.Type], ...]
    exits: tuple[str, ...]
    tools: dict[str, Tool]
    variables: dict[str, Variable]
    start: str | None
    states: dict[str, State]
    rules: tuple[Rule, ...]
    ok: bool
    span: Span | None = attrs.field(default=None, eq=False, repr=False)
    instances: dict[str, str] = attrs.Factory(dict)

    @property
    def state_written(self) -> set[str]:
        """Variables some state writes (parameters included)."""
        return {w for st in self.states.values() for w in st.writes}

    @property
    def written(self) -> set[str]:
        """Variables some state writes or some edge assigns (parameters included)."""
        return self.state_written | {a.var for st in self.states.values() for e in st.edges for a in e.assigns}


@attrs.define
class Scope:
    """What a file makes visible: its own and its imports' types and fragments."""

    types: dict[str, T.Type] = attrs.Factory(dict)
    type_spans: dict[str, Span | None] = attrs.Factory(dict)
    fragments: dict[str, FragmentDef] = attrs.Factory(dict)


@attrs.frozen(hash=False)
class Lowered:
    """The result of lowering one file."""

    machine: Machine | None
    fragments: dict[str, FragmentDef]
    types: dict[str, T.Type]


def lower_module(module: n.Module, imported: Scope, path: str | None,
                 report: Callable[[Diagnostic], None]) -> Lowered:
    """Lower a module whose imports have been resolved into `imported`."""
    scope = Scope(dict(imported.types), dict(imported.type_spans), dict(imported.fragments))
    _declare_types(module.items, scope, report)
    fragments = _FragmentTable(scope, report)
    for frag in module.fragments:
        fragments.declare(frag)
    for frag in module.fragments:
        fragments.get(frag.name)
    machines = module.machines
    if not any(isinstance(i, (n.Machine, n.Fragment, n.RecordDecl, n.EnumDecl)) for i in module.items):
        report(make("SKM100", "this file declares no machine, fragment or type",
                    Span(module.span.source, 0, 0) if module.span else None))
    for extra in machines[1:]:
        report(make("SKM101", f"a second machine `{extra.name}` in one file", extra.span,
                    label="second machine", secondary=[Label(machines[0].span, "first machine")]))
    machine = _BodyLowerer(scope, report, fragments).lower_machine(machines[0], path) if machines else None
    own_types = {k: v for k, v in scope.types.items() if k not in imported.types}
    return Lowered(machine, fragments.own, own_types)


class _FragmentTable:
    """The fragments a body may `use`: lowered on first use, so order in the file does not matter."""

    def __init__(self, scope: Scope, report) -> None:
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
            _duplicate(self.report, "fragment", frag.name, frag.span, first.span)
            return
        self.pending[frag.name] = frag

    def __contains__(self, name) -> bool:
        return name in self.done or name in self.pending

    def __iter__(self):
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
            self.report(make("SKM129", "fragment instantiates itself: " + " -> ".join(cycle), frag.span,
                             label="recursive fragment", hint="unfold the repetition into a counted loop"))
            return _broken(frag)
        self.active.append(name)
        try:
            fdef = _BodyLowerer(self.scope, self.report, self).lower_fragment(frag)
        finally:
            self.active.pop()
        self.done[name] = fdef
        self.own[name] = fdef
        return fdef


def _broken(frag: n.Fragment) -> FragmentDef:
    """A stand-in for a fragment that cannot be expanded, so follow-up errors stay quiet."""
    return FragmentDef(frag.name, (), tuple(frag.exits), {}, {}, None, {}, (), False, span=frag.span)


def _duplicate(report, what: str, name: str, span, first_span) -> None:
    secondary = [Label(first_span, "first declared here")] if first_span is not None else []
    report(make("SKM108", f"{what} `{name}` is declared twice", span, label="declared again",
                secondary=secondary, hint="rename one of them"))


def _declare_types(items: Iterable[n.Stmt], scope: Scope, report) -> None:
    """Resolve `record` and `enum` declarations into `scope.types` (records may refer to each other)."""
    decls: dict[str, n.Stmt] = {}
    for item in items:
        if isinstance(item, (n.RecordDecl, n.EnumDecl)):
            if item.name in decls or item.name in scope.types or item.name in T.BUILTINS:
                first = decls[item.name].span if item.name in decls else scope.type_spans.get(item.name)
                _duplicate(report, "type", item.name, item.span, first)
                continue
            decls[item.name] = item
    resolving: set[str] = set()

    def resolve(name: str) -> T.Type | None:
        if name in scope.types:
            return scope.types[name]
        decl = decls.get(name)
        if decl is None:
            return None
        if name in resolving:
            report(make("SKM138", f"record `{name}` contains itself", decl.span, label="recursive type",
                        hint="records are finite JSON objects; store a key or an id instead"))
            return T.ERROR
        resolving.add(name)
        if isinstance(decl, n.EnumDecl):
            _check_unique(decl.labels, "label", decl.span, report)
            result: T.Type = T.EnumT(tuple(dict.fromkeys(decl.labels)), decl.name)
        else:
            fields = []
            seen: dict[str, n.FieldDecl] = {}
            for f in decl.items:
                if f.name in seen:
                    _duplicate(report, "field", f.name, f.span, seen[f.name].span)
                    continue
                seen[f.name] = f
                fields.append((f.name, resolve_type(f.type, scope, report, resolve)))
            result = T.RecordT(decl.name, tuple(fields))
        resolving.discard(name)
        scope.types[name] = result
        scope.type_spans[name] = decl.span
        return result

    for name in decls:
        resolve(name)


def _check_unique(names: Iterable[str], what: str, span, report) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            report(make("SKM108", f"{what} `{name}` appears twice", span, hint="remove the repetition"))
        seen.add(name)


def resolve_type(t: n.TypeExpr, scope: Scope, report, resolve=None) -> T.Type:
    """Resolve a written type; unknown names are reported and become ErrorT."""
    if isinstance(t, n.NamedType):
        if t.name in T.BUILTINS:
            return T.BUILTINS[t.name]
        found = scope.types.get(t.name) or (resolve(t.name) if resolve else None)
        if found is None:
            report(make("SKM106", f"undefined type `{t.name}`", t.span, label="not a type",
                        hint=did_you_mean(t.name, [*T.BUILTINS, *scope.types])))
            return T.ERROR
        return found
    if isinstance(t, n.ListType):
        item = resolve_type(t.item, scope, report, resolve)
        return T.ERROR if isinstance(item, T.ErrorT) else T.ListT(item)
    if isinstance(t, n.MapType):
        key = resolve_type(t.key, scope, report, resolve)
        if not isinstance(key, (T.StrT, T.ErrorT)):
            report(make("SKM123", f"map keys must be str, not {T.show(key)}", t.key.span, label="key type"))
        value = resolve_type(t.value, scope, report, resolve)
        return T.ERROR if isinstance(value, T.ErrorT) else T.MapT(value)
    if isinstance(t, n.EnumType):
        _check_unique(t.labels, "label", t.span, report)
        return T.EnumT(tuple(dict.fromkeys(t.labels)))
    if isinstance(t, n.OptionalType):
        inner = resolve_type(t.inner, scope, report, resolve)
        return inner if isinstance(inner, (T.OptionalT, T.ErrorT)) else T.OptionalT(inner)
    raise AssertionError(type(t))


class _BodyLowerer:
    """Lower the body of one machine or fragment."""

    def __init__(self, file_scope: Scope, report: Callable[[Diagnostic], None], fragments: _FragmentTable) -> None:
        self.report = report
        self.scope = Scope(dict(file_scope.types), dict(file_scope.type_spans), file_scope.fragments)
        self.fragments = fragments
        self._pending_exits: list[tuple[str, Span | None]] = []
        self._instance_rules: list[Rule] = []
        self.tools: dict[str, Tool] = {}
        self.variables: dict[str, Variable] = {}
        self.var_spans: dict[str, Span | None] = {}
        self.states: dict[str, State] = {}
        self.names: dict[str, Span | None] = {}     # every name an edge may target
        self.instances: dict[str, tuple[str | None, tuple[str, ...]]] = {}
        self.exits: tuple[str, ...] = ()
        self.nested_entries: dict[str, str] = {}
        self._circular: set[str] = set()
        self._types: dict[str, T.Type] = {}
        self.ok = True

    def _report(self, d: Diagnostic) -> None:
        if d.is_error:
            self.ok = False
        self.report(d)

    # ------------------------------------------------------------ machine / fragment

    def lower_machine(self, m: n.Machine, path: str | None) -> Machine:
        items = m.items
        self._declarations(items, params=())
        starts = [i for i in items if isinstance(i, n.Start)]
        fallbacks = [i for i in items if isinstance(i, n.Fallback)]
        if not fallbacks:
            self._report(make("SKM117", f"machine `{m.name}` has no fallback terminal",
                              _head(m), label="declare `fallback` in this machine"))
        for extra in fallbacks[1:]:
            self._report(make("SKM118", "a second `fallback`", extra.span, label="second fallback",
                              secondary=[Label(fallbacks[0].span, "first fallback")]))
        self._states(items)
        start = self._start(m, starts)
        docs = [i for i in items if isinstance(i, n.Doc)]
        sources = [i for i in items if isinstance(i, n.SourceDecl)]
        for extra in docs[1:] + sources[1:]:
            self._report(make("SKM119", "a machine has one `doc` and one `source`", extra.span,
                              label="repeated"))
        rules = self._rules(items)
        return Machine(
            name=m.name,
            doc=docs[0].text if docs else None,
            source=sources[0].path if sources else None,
            tools=self.tools,
            types={k: v for k, v in self.scope.types.items()},
            variables=self.variables,
            start=start or "",
            states=self.states,
            rules=rules,
            path=path,
            instances=self._entries(),
            span=m.span,
        )

    def lower_fragment(self, f: n.Fragment) -> FragmentDef:
        items = f.items
        params = []
        seen: dict[str, n.Param] = {}
        for p in f.params:
            if p.name in seen:
                _duplicate(self._report, "parameter", p.name, p.span, seen[p.name].span)
                continue
            seen[p.name] = p
            params.append((p.name, resolve_type(p.type, self.scope, self._report)))
        _check_unique(f.exits, "exit", f.span, self._report)
        self.exits = tuple(dict.fromkeys(f.exits))
        for ex in self.exits:
            self.names[ex] = f.span
        for item in items:
            if isinstance(item, (n.Terminal, n.Fallback, n.SourceDecl)):
                what = {n.Terminal: "terminal", n.Fallback: "fallback", n.SourceDecl: "source"}[type(item)]
                self._report(make("SKM119", f"a fragment has no `{what}`; it ends through its exits",
                                  item.span, label=f"`{what}` in a fragment",
                                  hint="declare exits `fragment NAME(…) -> (done, failed)` and route edges to them"))
        self._declarations(items, params=tuple(params), param_spans={p.name: p.span for p in f.params})
        self._states(items)
        starts = [i for i in items if isinstance(i, n.Start)]
        start = self._start(f, starts)
        rules = self._rules(items)
        return FragmentDef(f.name, tuple(params), self.exits, self.tools,
                           {k: v for k, v in self.variables.items() if v.kind != "param"},
                           start, self.states, rules, self.ok, span=f.span, instances=self._entries())

    def _entries(self) -> dict[str, str]:
        """Instance name → entry state, for this body's instances and the ones nested in them."""
        entries = dict(self.nested_entries)
        entries.update({name: entry for name, (entry, _) in self.instances.items() if entry is not None})
        # An entry that names another instance (a pass-through fragment) is where that instance lands.
        return {name: (self._entry_of(entry) or FALLBACK) if entry in self.instances else entry
                for name, entry in entries.items()}

    # ------------------------------------------------------------ declarations

    def _declarations(self, items, params, param_spans=None) -> None:
        _declare_types(items, self.scope, self._report)
        for name, t in params:
            self.variables[name] = Variable(name, t, "param", span=(param_spans or {}).get(name))
            self.var_spans[name] = (param_spans or {}).get(name)
        for item in items:
            if isinstance(item, n.ToolDecl):
                self._tool(item)
        for item in items:
            if isinstance(item, n.VarDecl):
                self._var(item)
            elif isinstance(item, n.CounterDecl):
                if item.max < 1:
                    self._report(make("SKM122", f"counter `{item.name}` has maximum {item.max}", item.span,
                                      label="must be at least 1"))
                self._add_var(Variable(item.name, T.INT, "counter", max=item.max, span=item.span), item.span)
        for item in items:
            if isinstance(item, n.Use):
                self._use(item)

    def _tool(self, t: n.ToolDecl) -> None:
        if t.name in self.tools:
            _duplicate(self._report, "tool", t.name, t.span, self.tools[t.name].span)
            return

        def sig(params):
            _check_unique([p.name for p in params], "parameter", t.span, self._report)
            return tuple((p.name, resolve_type(p.type, self.scope, self._report)) for p in params)

        self.tools[t.name] = Tool(t.name, sig(t.params), sig(t.results), span=t.span)

    def _add_var(self, v: Variable, span) -> None:
        if v.name in RESERVED_VARIABLES:
            self._report(make("SKM134", f"`{v.name}` is a reserved word and cannot name a variable", span,
                              label="reserved name", hint="choose another name"))
            return
        if v.name in self.variables:
            _duplicate(self._report, "variable", v.name, span, self.var_spans.get(v.name))
            return
        self.variables[v.name] = v
        self.var_spans[v.name] = span

    def _var(self, d: n.VarDecl) -> None:
        t = resolve_type(d.type, self.scope, self._report)
        init = None
        if d.init is not None:
            lowerer = ExprLowerer(self._var_types(), self._report)
            init = lowerer.constant(d.init, t)
            if not T.assignable(init.type, t):
                self._report(make("SKM110", f"`{d.name}` is {T.show(t)} but its initial value is "
                                  f"{T.show(init.type)}", d.init.span, label=T.show(init.type)))
        self._add_var(Variable(d.name, t, d.kind, init=init, span=d.span), d.span)

    def _var_types(self) -> dict[str, T.Type]:
        """Variable name → type; rebuilt only when variables were added (edges ask once each)."""
        if len(self._types) != len(self.variables):
            self._types = {name: v.type for name, v in self.variables.items()}
        return self._types

    # ------------------------------------------------------------ fragment instances

    def _use(self, u: n.Use) -> None:
        if u.name in self.names or u.name == FALLBACK:
            _duplicate(self._report, "state", u.name, u.span, self.names.get(u.name))
            return
        self.names[u.name] = u.span
        fdef = self.fragments.get(u.fragment)
        if fdef is None:
            self._report(make("SKM107", f"undefined fragment `{u.fragment}`", u.span, label="not defined",
                              hint=did_you_mean(u.fragment, list(self.fragments))
                              or "define it with `fragment` or `import` the file that does"))
            self.instances[u.name] = (None, ())
            return
        if not fdef.ok:
            # The fragment's own errors are reported at the fragment; checking bindings against a
            # half-lowered signature would only add noise.
            self.instances[u.name] = (None, ())
            return
        mapping_vars: dict[str, str] = {}
        mapping_states: dict[str, str] = {FALLBACK: FALLBACK}
        params = dict(fdef.params)
        bound, ok = self._bind(fdef, u, u.bindings, list(params), "parameter", "does not bind",
                               f"bind every parameter: {fdef.name}(" + ", ".join(f"{p}: VAR" for p in params) + ")")
        for name, b in bound.items():
            var = self.variables.get(b.target)
            if var is None:
                self._report(make("SKM103", f"undefined variable `{b.target}`", b.span, label="not declared",
                                  hint=did_you_mean(b.target, self.variables)))
                ok = False
                continue
            if var.type != params[name] and not T.same_enum(var.type, params[name]) \
                    and not isinstance(params[name], T.ErrorT):
                self._report(make("SKM128", f"parameter `{name}` of `{fdef.name}` is "
                                  f"{T.show(params[name])} but `{b.target}` is {T.show(var.type)}",
                                  b.span, label="type differs"))
                ok = False
            if var.is_counter and name in fdef.state_written:
                self._report(make("SKM137", f"`{b.target}` is a counter, but a state of fragment `{fdef.name}` "
                                  f"writes its parameter `{name}`", b.span, label="counter bound to a written parameter",
                                  hint="counters change only on edges; bind a plain `int` variable"))
                ok = False
            if var.is_counter:
                for a in (a for st in fdef.states.values() for e in st.edges for a in e.assigns if a.var == name):
                    problem = counter_problem(var, a.op, a.value)
                    if problem:
                        self._report(make("SKM139", f"fragment `{fdef.name}` changes parameter `{name}`, bound to "
                                          f"counter `{b.target}`: {problem}", b.span, label="counter bound here",
                                          secondary=[Label(a.span, "assigned here")] if a.span else []))
                        ok = False
            if var.is_input and name in fdef.written:
                self._report(make("SKM133", f"`{b.target}` is an input, but fragment `{fdef.name}` writes "
                                  f"its parameter `{name}`", b.span, label="input bound to a written parameter",
                                  hint=f"bind `{name}` to a `var` initialised from the input"))
                ok = False
            mapping_vars[name] = b.target
        exits_bound, exits_ok = self._bind(fdef, u, u.exits, list(fdef.exits), "exit", "does not route exit",
                                           "route every exit: -> (" + ", ".join(f"{x}: STATE" for x in fdef.exits) + ")")
        ok = ok and exits_ok
        for name, b in exits_bound.items():
            mapping_states[name] = b.target
        for tool in fdef.tools.values():
            mine = self.tools.get(tool.name)
            if mine is None:
                self._report(make("SKM104", f"fragment `{fdef.name}` calls tool `{tool.name}`, which this "
                                  "machine does not declare", u.span, label="needs a tool",
                                  hint=f"declare it: tool {tool.name}(…) -> (…)"))
                ok = False
            elif mine.params != tool.params or not set(tool.results) <= set(mine.results):
                self._report(make("SKM128", f"tool `{tool.name}` is declared with another signature than "
                                  f"fragment `{fdef.name}` expects", u.span, label="signature differs",
                                  secondary=[Label(mine.span, "declared here")] if mine.span else []))
                ok = False
        if not ok or not fdef.ok or fdef.start is None:
            self.instances[u.name] = (None, ())
            return
        prefix = u.name + "."
        mapping_vars.update({name: prefix + name for name in fdef.variables})
        for name, var in fdef.variables.items():
            init = ir.rename(var.init, mapping_vars) if var.init is not None else None
            self._add_var(attrs.evolve(var, name=mapping_vars[name], init=init), u.span)
        for name in fdef.states:
            mapping_states[name] = prefix + name
        members = []
        for name, state in fdef.states.items():
            renamed = _rename_state(state, mapping_vars, mapping_states, u.name)
            self.states[renamed.name] = renamed
            self.names[renamed.name] = u.span
            members.append(renamed.name)
        self.instances[u.name] = (mapping_states[fdef.start], tuple(members))
        for inner, entry in fdef.instances.items():
            self.nested_entries[prefix + inner] = mapping_states.get(entry, entry)
        self._pending_exits += [(b.target, b.span) for b in exits_bound.values()]
        self._instance_rules += [_rename_rule(r, mapping_states, u.name, fdef.name) for r in fdef.rules]

    def _bind(self, fdef: FragmentDef, u: n.Use, bindings, names: list[str], what: str, missing_msg: str,
              hint: str) -> tuple[dict[str, n.Binding], bool]:
        """Match `use` bindings to a fragment's parameters or exits: each known name exactly once."""
        bound: dict[str, n.Binding] = {}
        ok = True
        for b in bindings:
            if b.name not in names:
                self._report(make("SKM127", f"fragment `{fdef.name}` has no {what} `{b.name}`", b.span,
                                  label=f"unknown {what}", hint=did_you_mean(b.name, names)))
                ok = False
            elif b.name in bound:
                self._report(make("SKM127", f"{what} `{b.name}` is bound twice", b.span, label="again"))
                ok = False
            else:
                bound[b.name] = b
        missing = [x for x in names if x not in bound]
        if missing:
            self._report(make("SKM127", f"`use {fdef.name}` {missing_msg} " + ", ".join(f"`{m}`" for m in missing),
                              u.span, label=f"missing {what}s", hint=hint))
            ok = False
        return bound, ok

    # ------------------------------------------------------------ states

    def _states(self, items) -> None:
        decls = [i for i in items if isinstance(i, (n.State, n.Terminal, n.Fallback))]
        for d in decls:
            name = FALLBACK if isinstance(d, n.Fallback) else d.name
            if isinstance(d, n.Fallback):
                if FALLBACK in self.names and isinstance(self.states.get(FALLBACK), State):
                    continue  # reported as SKM118 by the caller
            elif name == FALLBACK:
                self._report(make("SKM134", "`fallback` is reserved for the fallback terminal", d.span,
                                  label="reserved name", hint="choose another name"))
                continue
            if name in self.names:
                _duplicate(self._report, "state", name, d.span, self.names[name])
                continue
            self.names[name] = d.span
            self.states[name] = State(name, "fallback" if isinstance(d, n.Fallback) else "placeholder",
                                      span=d.span)
        for target, span in self._pending_exits:
            self._target(target, span)
        for d in decls:
            name = FALLBACK if isinstance(d, n.Fallback) else d.name
            if self.states.get(name) is None or self.states[name].span is not d.span:
                continue
            if isinstance(d, n.State):
                self.states[name] = self._state(d)
            elif isinstance(d, n.Terminal):
                self.states[name] = self._terminal(d)
            else:
                self.states[name] = self._fallback(d)
        self._enter_instances()

    def _enter_instances(self) -> None:
        """Edges that name a fragment instance lead to the instance's entry state."""
        entries = {name: self._entry_of(name) or FALLBACK for name, (entry, _) in self.instances.items()
                   if entry is not None}
        if not entries:
            return
        for name, state in list(self.states.items()):
            if any(e.target in entries for e in state.edges):
                edges = tuple(attrs.evolve(e, target=entries.get(e.target, e.target)) for e in state.edges)
                self.states[name] = attrs.evolve(state, edges=edges)

    def _entry_of(self, name: str) -> str | None:
        """Where a run routed to instance `name` lands: through pass-through instances (whose fragment
        starts at an exit) to a state; None, reported as SKM145, when such instances route in a circle."""
        seen: list[str] = []
        while name in self.instances and self.instances[name][0] is not None:
            if name in seen:
                if seen[0] not in self._circular:
                    self._circular.add(seen[0])
                    self._report(make("SKM145", "fragment instance `" + seen[0] + "` routes back to itself "
                                      "without entering a state: " + " -> ".join([*seen, name]),
                                      self.names.get(seen[0]), label="enters no state",
                                      hint="route the pass-through fragment's exit to a state or terminal"))
                return None
            seen.append(name)
            name = self.instances[name][0]  # type: ignore[assignment]
        return name

    def _target(self, name: str, span) -> str:
        """Resolve an edge/start/exit target: a state, an exit, `fallback` or an instance (its entry)."""
        if name in self.instances:
            return self._entry_of(name) or FALLBACK
        if name in self.names or name == FALLBACK:
            return name
        self._report(make("SKM102", f"undefined state `{name}`", span, label="no such state",
                          hint=did_you_mean(name, [*self.names, FALLBACK])))
        return name

    def _lookup_vars(self, statements, what: str, spans: dict[str, Span]) -> tuple[str, ...]:
        """The declared variables named by `reads`/`requires` statements; records each name's span."""
        out = []
        for stmt in statements:
            for name in stmt.names:
                span = stmt.span.narrow(name) if stmt.span is not None else None
                spans.setdefault(f"{what}:{name}", span)
                if name not in self.variables:
                    self._report(make("SKM103", f"undefined variable `{name}` in `{what}`", span,
                                      label="not declared", hint=did_you_mean(name, self.variables)))
                    continue
                out.append(name)
        return tuple(dict.fromkeys(out))

    def _once(self, items, cls, what: str):
        found = [i for i in items if isinstance(i, cls)]
        for extra in found[1:]:
            self._report(make("SKM119", f"`{what}` appears more than once in this state", extra.span,
                              label="repeated", secondary=[Label(found[0].span, "first here")]))
        return found[0] if found else None

    def _state(self, d: n.State) -> State:
        items = d.items
        reads_d = [i for i in items if isinstance(i, n.Reads)]
        writes_d = [i for i in items if isinstance(i, n.Writes)]
        item_spans: dict[str, Span] = {}
        reads = self._lookup_vars(reads_d, "reads", item_spans)
        for r in reads_d[1:]:
            self._report(make("SKM119", "`reads` appears more than once in this state", r.span, label="repeated",
                              hint="list every variable in one `reads`"))
        for w in writes_d[1:]:
            self._report(make("SKM119", "`writes` appears more than once in this state", w.span, label="repeated",
                              hint="list every variable in one `writes`"))
        prompt = self._once(items, n.Prompt, "prompt")
        call = self._once(items, n.Call, "call")
        doc, provenance = self._annotations(items)
        tool_call = None
        if d.kind == "tool":
            if prompt is not None:
                self._report(make("SKM119", "a tool state has no `prompt`", prompt.span, label="not allowed here",
                                  hint="use `doc` to describe a tool state"))
            if call is None:
                self._report(make("SKM120", f"tool state `{d.name}` has no `call`", _head(d),
                                  label="needs `call TOOL(…)`"))
            else:
                tool_call = self._call(call, reads)
        else:
            if call is not None:
                self._report(make("SKM119", f"a {d.kind} state has no `call`", call.span, label="not allowed here",
                                  hint="make it a `tool` state to call a tool"))
            if prompt is None:
                self._report(make("SKM120", f"{d.kind} state `{d.name}` has no `prompt`", _head(d),
                                  label="needs local instructions"))
        tool = self.tools.get(call.tool) if d.kind == "tool" and call is not None else None
        writes: list[str] = []
        bindings: list[tuple[str, str]] = []
        for item in (i for w in writes_d for i in w.items):
            binding = self._write_item(d, item, tool)
            if binding is not None:
                writes.append(item.var)
                if binding[1] is not None:
                    bindings.append(binding)  # type: ignore[arg-type]
        edges = tuple(self._edge(d.name, i, e) for i, e in enumerate(x for x in items if isinstance(x, n.Edge)))
        item_spans.update({key: item.span for key, item in (("reads", reads_d[0] if reads_d else None),
                                                             ("writes", writes_d[0] if writes_d else None),
                                                             ("prompt", prompt), ("call", call)) if item is not None})
        return State(
            name=d.name, kind=d.kind, reads=reads, writes=tuple(dict.fromkeys(writes)),
            prompt=prompt.text if prompt else None, doc=doc, call=tool_call,
            bindings=tuple(bindings), edges=edges, provenance=provenance,
            span=d.span, item_spans=item_spans,
        )

    def _write_item(self, d: n.State, item: n.WriteItem, tool: Tool | None) -> tuple[str, str | None] | None:
        """Check one `writes` entry; return (variable, bound result or None), or None when it is unusable."""
        v = self.variables.get(item.var)
        if v is None:
            self._report(make("SKM103", f"undefined variable `{item.var}` in `writes`", item.span,
                              label="not declared", hint=did_you_mean(item.var, self.variables)))
            return None
        if v.is_input:
            self._report(make("SKM133", f"`{item.var}` is an input and cannot be written", item.span, label="input"))
        elif v.is_counter:
            self._report(make("SKM137", f"state `{d.name}` writes counter `{item.var}`", item.span,
                              label="counter in `writes`",
                              hint=f"counters change only on edges: `-> target {{ {item.var} += 1 }}`"))
        if d.kind != "tool":
            if item.result is not None:
                self._report(make("SKM114", "only tool states bind results with `=`", item.span,
                                  label="not a tool state"))
            return item.var, None
        if tool is None:
            return item.var, None
        result = item.result or item.var
        rt = tool.result(result)
        if rt is None:
            self._report(make("SKM114", f"tool `{tool.name}` has no result `{result}`", item.span,
                              label="unknown result", hint=did_you_mean(result, dict(tool.results))
                              or "results: " + ", ".join(r for r, _ in tool.results)))
            return item.var, None
        if not T.assignable(rt, v.type):
            self._report(make("SKM114", f"result `{result}` is {T.show(rt)} but `{item.var}` is {T.show(v.type)}",
                              item.span, label="type differs"))
        return item.var, result

    def _annotations(self, items) -> tuple[str | None, Provenance | None]:
        """The `doc` text and `from` provenance of a block (each at most once)."""
        doc = self._once(items, n.Doc, "doc")
        where = self._once(items, n.From, "from")
        return (doc.text if doc else None), self._provenance(where.where if where else None)

    def _provenance(self, p: n.Provenance | None) -> Provenance | None:
        if p is None:
            return None
        end = p.end if p.end is not None else p.start
        if p.start < 1 or end < p.start:
            self._report(make("SKM136", f"line range {p.start}-{end} is empty", p.span, label="bad range"))
        return Provenance(p.file, p.start, end)

    def _call(self, c: n.Call, reads: tuple[str, ...]) -> ToolCall | None:
        tool = self.tools.get(c.tool)
        lowerer = ExprLowerer(self._var_types(), self._report)
        if tool is None:
            self._report(make("SKM104", f"undefined tool `{c.tool}`", c.span, label="not in the interface table",
                              hint=did_you_mean(c.tool, self.tools) or f"declare it: tool {c.tool}(…) -> (…)"))
            for a in c.args:
                lowerer.lower(a.value)
            return None
        params = dict(tool.params)
        args = []
        seen: set[str] = set()
        for a in c.args:
            expected = params.get(a.name)
            value = lowerer.lower(a.value, expected)
            if expected is None:
                self._report(make("SKM112", f"tool `{tool.name}` has no parameter `{a.name}`", a.span,
                                  label="unknown argument", hint=did_you_mean(a.name, params)
                                  or "parameters: " + ", ".join(params)))
                continue
            if a.name in seen:
                self._report(make("SKM112", f"argument `{a.name}` is passed twice", a.span, label="again"))
                continue
            seen.add(a.name)
            if not T.assignable(value.type, expected):
                self._report(make("SKM113", f"argument `{a.name}` of `{tool.name}` is {T.show(expected)}, "
                                  f"not {T.show(value.type)}", a.value.span, label=T.show(value.type)))
            for var in sorted(ir.variables(value)):
                if var not in reads:
                    self._report(make("SKM131", f"argument `{a.name}` reads `{var}`, which the state does not "
                                      "declare in `reads`", a.value.span, label=f"reads `{var}`"))
            args.append((a.name, value))
        missing = [p for p in params if p not in seen and not isinstance(params[p], T.OptionalT)]
        if missing:
            self._report(make("SKM112", f"call to `{tool.name}` is missing " + ", ".join(f"`{m}`" for m in missing),
                              c.span, label="missing arguments"))
        return ToolCall(tool.name, tuple(args), span=c.span)

    def _edge(self, source: str, index: int, e: n.Edge) -> Edge:
        lowerer = ExprLowerer(self._var_types(), self._report)
        guard = None
        if e.guard is not None:
            guard = lowerer.lower(e.guard, T.BOOL)
            if not isinstance(guard.type, (T.BoolT, T.ErrorT)):
                self._report(make("SKM111", f"this guard is {T.show(guard.type)}, not bool", e.guard.span,
                                  label="not a Boolean", hint="compare it, e.g. `x != \"\"` or `n > 0`"))
        target = self._target(e.target, e.span)
        assigns = []
        for a in e.assigns:
            var = self.variables.get(a.target)
            if var is None:
                self._report(make("SKM103", f"undefined variable `{a.target}`", a.span, label="not declared",
                                  hint=did_you_mean(a.target, self.variables)))
                lowerer.lower(a.value)
                continue
            if var.is_input:
                self._report(make("SKM133", f"`{a.target}` is an input and cannot be assigned", a.span,
                                  label="input"))
            value = lowerer.lower(a.value, var.type)
            if a.op in ("+=", "-="):
                if not T.is_numeric(var.type) and not isinstance(var.type, T.ErrorT):
                    self._report(make("SKM135", f"`{a.op}` needs a number, but `{a.target}` is {T.show(var.type)}",
                                      a.span, label="not a number"))
                elif not T.is_numeric(value.type) and not isinstance(value.type, T.ErrorT):
                    self._report(make("SKM110", f"`{a.op}` adds a number, not {T.show(value.type)}",
                                      a.value.span, label=T.show(value.type)))
                elif isinstance(var.type, T.IntT) and isinstance(value.type, T.FloatT):
                    self._report(make("SKM110", f"`{a.target}` is int; adding a float would make it float",
                                      a.value.span, label="float"))
            elif not T.assignable(value.type, var.type):
                self._report(make("SKM110", f"`{a.target}` is {T.show(var.type)} but the value is "
                                  f"{T.show(value.type)}", a.value.span, label=T.show(value.type)))
            problem = counter_problem(var, a.op, value)
            if problem:
                self._report(make("SKM139", problem, a.span, label="breaks the loop bound"))
            assigns.append(Assignment(a.target, a.op, value, span=a.span))
        return Edge(source, index, guard, target, tuple(assigns), span=e.span)

    def _terminal(self, d: n.Terminal) -> State:
        if d.outcome not in OUTCOMES:
            self._report(make("SKM121", f"unknown outcome `{d.outcome}`", d.span, label="not an outcome",
                              hint=did_you_mean(d.outcome, OUTCOMES) or "outcomes: " + ", ".join(OUTCOMES)))
        item_spans: dict[str, Span] = {}
        requires = self._lookup_vars([r for r in d.items if isinstance(r, n.Requires)], "requires", item_spans)
        doc, provenance = self._annotations(d.items)
        return State(d.name, "terminal", outcome=d.outcome, requires=requires, doc=doc, provenance=provenance,
                     span=d.span, item_spans=item_spans)

    def _fallback(self, d: n.Fallback) -> State:
        for r in d.items:
            if isinstance(r, n.Requires):
                self._report(make("SKM119", "the fallback requires no evidence", r.span, label="not allowed here",
                                  hint="runs end in the fallback exactly when evidence could not be produced"))
        doc, provenance = self._annotations(d.items)
        return State(FALLBACK, "fallback", outcome="failed", doc=doc, provenance=provenance, span=d.span)

    def _start(self, owner, starts) -> str | None:
        if not starts:
            self._report(make("SKM115", f"`{owner.name}` has no `start`", _head(owner),
                              label="add `start STATE`"))
            return None
        for extra in starts[1:]:
            self._report(make("SKM116", "a second `start`", extra.span, label="second start",
                              secondary=[Label(starts[0].span, "first start")]))
        return self._target(starts[0].target, starts[0].span)

    # ------------------------------------------------------------ rules

    def _performers(self, op: str, span) -> tuple[str, ...] | None:
        if op in self.instances:
            return self.instances[op][1]
        if op in self.states:
            return (op,)
        nested = tuple(s for s in self.states if s.startswith(op + "."))
        if nested:  # a fragment instance nested inside another: `outer.inner`
            return nested
        if op in self.tools:
            return tuple(s.name for s in self.states.values() if s.call is not None and s.call.tool == op)
        if op in self.exits:
            return (op,)
        self._report(make("SKM102", f"rule names `{op}`, which is neither a state, a fragment instance nor a tool",
                          span, label="unknown operation",
                          hint=did_you_mean(op, [*self.states, *self.tools, *self.instances])))
        return None

    def _rules(self, items) -> tuple[Rule, ...]:
        rules = list(self._instance_rules)
        for r in items:
            if not isinstance(r, n.Rule):
                continue
            performers = [self._performers(op, r.span) for op in r.ops]
            if any(p is None for p in performers):
                continue
            if r.kind == "forbid" and FALLBACK in r.ops:
                # The runtime sends failures there without an edge, so no graph fact can rule it out.
                self._report(make("SKM146", "`rule forbid fallback` cannot hold: the runtime routes failed "
                                  "operations and unusable outputs to the fallback", r.span,
                                  label="the fallback is always possible",
                                  hint="forbid the states or tools that lead to failure instead"))
                continue
            if r.kind == "ends" and r.outcome not in OUTCOMES:
                self._report(make("SKM140", f"`rule ends` names outcome `{r.outcome}`, which is not one of "
                                            f"{', '.join(OUTCOMES)}", r.span, label="unknown outcome",
                                  hint=did_you_mean(r.outcome or "", list(OUTCOMES))))
                continue
            rules.append(Rule(r.kind, r.ops, r.quote, tuple(performers),  # type: ignore[arg-type]
                              provenance=self._provenance(r.where), outcome=r.outcome, span=r.span))
        return tuple(rules)


def counter_problem(var: Variable, op: str, value: ir.Expr) -> str | None:
    """Why an assignment to a counter would break its bound, or None when it is a step or a reset."""
    if not var.is_counter:
        return None
    constant = value.value if isinstance(value, ir.Const) and type(value.value) is int else None
    if op == "+=":
        return None if constant is not None and constant > 0 else \
            f"counter `{var.name}` can only be incremented by a positive integer constant"
    if op == "-=":
        return f"counter `{var.name}` never goes down; reset it with `{var.name} = 0`"
    if constant is None or not 0 <= constant <= (var.max or 0):
        return f"counter `{var.name}` can only be reset to a constant between 0 and {var.max}"
    return None


def _head(node) -> Span | None:
    """The span of a block's header line (`model analyze {`), for 'missing item' diagnostics."""
    span = node.span
    if span is None:
        return None
    text = span.source.text
    end = text.find("{", span.start, span.end)
    end = text.find("\n", span.start, span.end) if end == -1 else end
    return Span(span.source, span.start, end if end != -1 else span.end)


def _rename_state(s: State, vars_: dict[str, str], states: dict[str, str], instance: str) -> State:
    """A fragment state as it appears in an instance."""
    rv = lambda name: vars_.get(name, name)  # noqa: E731
    edges = tuple(
        attrs.evolve(
            e,
            source=states[e.source],
            guard=ir.rename(e.guard, vars_) if e.guard is not None else None,
            target=states.get(e.target, e.target),
            assigns=tuple(attrs.evolve(a, var=rv(a.var), value=ir.rename(a.value, vars_)) for a in e.assigns),
        )
        for e in s.edges
    )
    call = None
    if s.call is not None:
        call = attrs.evolve(s.call, args=tuple((k, ir.rename(v, vars_)) for k, v in s.call.args))
    return attrs.evolve(
        s,
        name=states[s.name],
        reads=tuple(rv(x) for x in s.reads),
        writes=tuple(rv(x) for x in s.writes),
        call=call,
        bindings=tuple((rv(v), r) for v, r in s.bindings),
        edges=edges,
        requires=tuple(rv(x) for x in s.requires),
        instance=f"{instance}.{s.instance}" if s.instance else instance,
    )


def _rename_rule(r: Rule, states: dict[str, str], instance: str, fragment: str) -> Rule:
    return attrs.evolve(
        r,
        fragment=r.fragment or fragment,
        instance=f"{instance}.{r.instance}" if r.instance else instance,
        ops=tuple(states.get(op, f"{instance}.{op}") for op in r.ops),
        performers=tuple(tuple(states.get(p, p) for p in ps) for ps in r.performers),
    )
