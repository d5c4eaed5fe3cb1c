"""Declarations: a file's scope of types and fragments, and each body's frozen symbol table.

`declare` reads every declaration of a machine or fragment body once, before any
state is lowered: types, tools, variables (parameters, `input`, `var`,
`counter`), the names an edge may target (exits, fragment instances, states)
and the state declarations themselves. Later passes only look names up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import cast

import attrs

from skillc.diagnostics import Diagnostic, Label, Span, codes, make
from skillc.ir import types as T
from skillc.ir.exprs import ExprLowerer
from skillc.ir.machine import FALLBACK, Rule, State, Tool, Variable, VariableKind
from skillc.ir.names import PLACE_NAMES, RESERVED_VARIABLES
from skillc.ir.suggest import did_you_mean
from skillc.ir.toolkit import KIT, KITS
from skillc.syntax import nodes as n

Report = Callable[[Diagnostic], None]
#: A declaration that becomes a state of the body.
StateDecl = n.State | n.Terminal | n.Fallback
#: Resolves a type name declared later in the same block (records may refer to each other).
Resolver = Callable[[str], "T.Type | None"]


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

    def copy(self) -> Scope:
        """A scope a body may add its own types to without changing the file's."""
        return Scope(dict(self.types), dict(self.type_spans), self.fragments)


@attrs.frozen(hash=False)
class Symbols:
    """Everything one machine or fragment body declares, read before any state is lowered."""

    scope: Scope
    tools: dict[str, Tool]
    variables: dict[str, Variable]  # parameters first, then inputs, vars and counters in order
    exits: tuple[str, ...]
    uses: dict[str, n.Use]  # instance name → its `use` (repeats dropped)
    states: dict[str, StateDecl]  # declared states; the fallback under FALLBACK
    names: dict[str, Span | None]  # exits, instances and states: every name an edge may target
    kit: tuple[str, ...] = ()  # the tools taken from the kit with `use tools` (in `tools` too)


def duplicate(report: Report, what: str, name: str, span: Span | None, first_span: Span | None) -> None:
    """Report a second declaration of a name (SKM108), pointing at the first."""
    secondary = [Label(first_span, "first declared here")] if first_span is not None else []
    report(make(codes.DUPLICATE_NAME, f"{what} `{name}` is declared twice", span, label="declared again",
                secondary=secondary, hint="rename one of them"))


def check_unique(names: Iterable[str], what: str, span: Span | None, report: Report) -> None:
    """Report each name of a list that repeats an earlier one (SKM108)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            report(make(codes.DUPLICATE_NAME, f"{what} `{name}` appears twice", span, hint="remove the repetition"))
        seen.add(name)


# ------------------------------------------------------------------ types

def declare_types(items: Iterable[n.Stmt], scope: Scope, report: Report) -> None:
    """Resolve `record` and `enum` declarations into `scope.types` (records may refer to each other)."""
    decls: dict[str, n.RecordDecl | n.EnumDecl] = {}
    for item in items:
        if isinstance(item, (n.RecordDecl, n.EnumDecl)):
            if item.name in decls or item.name in scope.types or item.name in T.BUILTINS:
                first = decls[item.name].span if item.name in decls else scope.type_spans.get(item.name)
                duplicate(report, "type", item.name, item.span, first)
                continue
            decls[item.name] = item
    resolving: set[str] = set()

    def resolve(name: str) -> T.Type | None:
        """The type `name` declares here, resolving it now (SKM138 when a record reaches itself)."""
        if name in scope.types:
            return scope.types[name]
        decl = decls.get(name)
        if decl is None:
            return None
        if name in resolving:
            report(make(codes.RECURSIVE_TYPE, f"record `{name}` contains itself", decl.span, label="recursive type",
                        hint="records are finite JSON objects; store a key or an id instead"))
            return T.ERROR
        resolving.add(name)
        result = _enum(decl, report) if isinstance(decl, n.EnumDecl) else _record(decl, scope, report, resolve)
        resolving.discard(name)
        scope.types[name] = result
        scope.type_spans[name] = decl.span
        return result

    for name in decls:
        resolve(name)


def _enum(decl: n.EnumDecl, report: Report) -> T.Type:
    """A named enum; repeated labels are reported and kept once."""
    check_unique(decl.labels, "label", decl.span, report)
    return T.EnumT(tuple(dict.fromkeys(decl.labels)), decl.name)


def _record(decl: n.RecordDecl, scope: Scope, report: Report, resolve: Resolver) -> T.Type:
    """A record; a repeated field is reported and dropped."""
    fields = []
    seen: dict[str, n.FieldDecl] = {}
    for f in decl.items:
        if f.name in seen:
            duplicate(report, "field", f.name, f.span, seen[f.name].span)
            continue
        seen[f.name] = f
        fields.append((f.name, resolve_type(f.type, scope, report, resolve)))
    return T.RecordT(decl.name, tuple(fields))


def resolve_type(t: n.TypeExpr, scope: Scope, report: Report, resolve: Resolver | None = None) -> T.Type:
    """Resolve a written type; unknown names are reported and become ErrorT."""
    if isinstance(t, n.NamedType):
        if t.name in T.BUILTINS:
            return T.BUILTINS[t.name]
        found = scope.types.get(t.name) or (resolve(t.name) if resolve else None)
        if found is None:
            report(make(codes.UNDEFINED_TYPE, f"undefined type `{t.name}`", t.span, label="not a type",
                        hint=did_you_mean(t.name, [*T.BUILTINS, *scope.types])))
            return T.ERROR
        return found
    if isinstance(t, n.ListType):
        item = resolve_type(t.item, scope, report, resolve)
        return T.ERROR if isinstance(item, T.ErrorT) else T.ListT(item)
    if isinstance(t, n.MapType):
        key = resolve_type(t.key, scope, report, resolve)
        if not isinstance(key, (T.StrT, T.ErrorT)):
            report(make(codes.INVALID_MAP_KEY, f"map keys must be str, not {T.show(key)}", t.key.span,
                        label="key type"))
        value = resolve_type(t.value, scope, report, resolve)
        return T.ERROR if isinstance(value, T.ErrorT) else T.MapT(value)
    if isinstance(t, n.EnumType):
        check_unique(t.labels, "label", t.span, report)
        return T.EnumT(tuple(dict.fromkeys(t.labels)))
    if isinstance(t, n.OptionalType):
        inner = resolve_type(t.inner, scope, report, resolve)
        return inner if isinstance(inner, (T.OptionalT, T.ErrorT)) else T.OptionalT(inner)
    raise AssertionError(type(t))


# ------------------------------------------------------------------ a body's declarations

def declare(items: Sequence[n.Stmt], params: Sequence[n.Param], exits: Sequence[str], owner: n.Block,
            file_scope: Scope, report: Report) -> Symbols:
    """The symbol table of a machine (no params, no exits) or fragment body."""
    scope = file_scope.copy()
    variables = _params(params, scope, report)
    check_unique(exits, "exit", owner.span, report)
    unique_exits = tuple(dict.fromkeys(exits))
    names: dict[str, Span | None] = {ex: owner.span for ex in unique_exits}
    declare_types(items, scope, report)
    tools, kit = _tools(items, scope, report)
    _variables(items, scope, variables, report)
    uses = _uses(items, names, report)
    states = _states(items, names, report)
    return Symbols(scope, tools, variables, unique_exits, uses, states, names, kit)


def _params(params: Sequence[n.Param], scope: Scope, report: Report) -> dict[str, Variable]:
    """A fragment's parameters as variables of kind `param` (a repeated one is reported and dropped)."""
    found: dict[str, Variable] = {}
    for p in params:
        if p.name in found:
            duplicate(report, "parameter", p.name, p.span, found[p.name].span)
            continue
        found[p.name] = Variable(p.name, resolve_type(p.type, scope, report), "param", span=p.span)
    return found


def _tools(items: Iterable[n.Stmt], scope: Scope, report: Report) -> tuple[dict[str, Tool], tuple[str, ...]]:
    """The interface table, in order: each `tool` declaration with its resolved signature and each tool taken from
    the kit with `use tools` (with the kit's signature, spanned at the `use tools`); and the kit tools taken."""
    tools: dict[str, Tool] = {}
    kit: list[str] = []
    for t in items:
        if isinstance(t, n.UseTools):
            for name in _kit_tools(t, report):
                if name in tools:
                    duplicate(report, "tool", name, t.span, tools[name].span)
                    continue
                tools[name] = attrs.evolve(KIT[name], span=t.span)
                kit.append(name)
            continue
        if not isinstance(t, n.ToolDecl):
            continue
        if t.name in tools:
            duplicate(report, "tool", t.name, t.span, tools[t.name].span)
            continue
        tools[t.name] = Tool(t.name, _signature(t.params, t, scope, report), _signature(t.results, t, scope, report),
                             span=t.span, mcp=t.mcp, remote=t.remote)
    return tools, tuple(kit)


def _kit_tools(u: n.UseTools, report: Report) -> list[str]:
    """The tools one `use tools` takes: the whole kit, or the ones it names (unknown ones reported, SKM141)."""
    kit = KITS.get(u.kit)
    if kit is None:
        report(make(codes.UNKNOWN_KIT_TOOL, f"there is no tool kit `{u.kit}`", u.span.narrow(u.kit) if u.span else None,
                    label="unknown kit", hint=did_you_mean(u.kit, KITS) or "kits: " + ", ".join(KITS)))
        return []
    if not u.tools:
        return list(kit)
    check_unique(u.tools, "tool", u.span, report)
    found = []
    for name in dict.fromkeys(u.tools):
        if name not in kit:
            span = u.span.narrow(name) if u.span is not None else None
            report(make(codes.UNKNOWN_KIT_TOOL, f"the kit `{u.kit}` has no tool `{name}`", span, label="not in the kit",
                        hint=did_you_mean(name, kit) or f"its tools: {', '.join(kit)}; declare others with "
                        f"`tool {name}(…) -> (…)`"))
            continue
        found.append(name)
    return found


def _signature(params: Sequence[n.Param], t: n.ToolDecl, scope: Scope,
               report: Report) -> tuple[tuple[str, T.Type], ...]:
    """A tool's parameters or results, names checked for repeats."""
    check_unique([p.name for p in params], "parameter", t.span, report)
    return tuple((p.name, resolve_type(p.type, scope, report)) for p in params)


def _variables(items: Iterable[n.Stmt], scope: Scope, variables: dict[str, Variable], report: Report) -> None:
    """Add the `input`, `var` and `counter` declarations to `variables`, in order."""
    types = {name: v.type for name, v in variables.items()}
    spans = {name: v.span for name, v in variables.items()}
    for item in items:
        if isinstance(item, n.VarDecl):
            var = _var(item, scope, types, report)
        elif isinstance(item, n.CounterDecl):
            if item.max < 1:
                report(make(codes.INVALID_COUNTER, f"counter `{item.name}` has maximum {item.max}", item.span,
                            label="must be at least 1"))
            var = Variable(item.name, T.INT, "counter", max=item.max, span=item.span)
        else:
            continue
        if add_variable(variables, spans, var, item.span, report):
            types[var.name] = var.type


def _var(d: n.VarDecl, scope: Scope, types: dict[str, T.Type], report: Report) -> Variable:
    """An `input` or `var`, its initial value checked to be a constant of its type."""
    t = resolve_type(d.type, scope, report)
    init = None
    if d.init is not None:
        init = ExprLowerer(types, report).constant(d.init, t)
        if not T.assignable(init.type, t):
            report(make(codes.ASSIGNMENT_TYPE_MISMATCH,
                        f"`{d.name}` is {T.show(t)} but its initial value is {T.show(init.type)}",
                        d.init.span, label=T.show(init.type)))
    return Variable(d.name, t, cast(VariableKind, d.kind), init=init, span=d.span)  # `input` or `var` (grammar)


def add_variable(variables: dict[str, Variable], spans: dict[str, Span | None], v: Variable, span: Span | None,
                 report: Report) -> bool:
    """Add `v`, declared at `span`, unless its name is reserved (SKM134) or taken (SKM108); True when added."""
    if v.name in RESERVED_VARIABLES:
        report(make(codes.RESERVED_NAME, f"`{v.name}` is a reserved word and cannot name a variable", span,
                    label="reserved name", hint="choose another name"))
        return False
    if v.name in PLACE_NAMES:
        report(make(codes.RESERVED_NAME, f"`{v.name}` is a place the runtime sets and cannot name a variable", span,
                    label="reserved name",
                    hint=f"use `{v.name}` as it is (a read-only str, defined at start), or choose another name"))
        return False
    if v.name in variables:
        duplicate(report, "variable", v.name, span, spans.get(v.name))
        return False
    variables[v.name] = v
    spans[v.name] = span
    return True


def _uses(items: Iterable[n.Stmt], names: dict[str, Span | None], report: Report) -> dict[str, n.Use]:
    """Each fragment instance by name; its name joins `names` (a taken name is reported)."""
    uses: dict[str, n.Use] = {}
    for u in items:
        if not isinstance(u, n.Use):
            continue
        if u.name in names or u.name == FALLBACK:
            duplicate(report, "state", u.name, u.span, names.get(u.name))
            continue
        names[u.name] = u.span
        uses[u.name] = u
    return uses


def _states(items: Iterable[n.Stmt], names: dict[str, Span | None], report: Report) -> dict[str, StateDecl]:
    """The state declarations by name, the first `fallback` under FALLBACK; names join `names`."""
    states: dict[str, StateDecl] = {}
    for d in items:
        if isinstance(d, n.Fallback):
            if FALLBACK in states:
                continue  # a second fallback: reported as SKM118 with the machine
            name = FALLBACK
        elif isinstance(d, (n.State, n.Terminal)):
            name = d.name
            if name == FALLBACK:
                report(make(codes.RESERVED_NAME, "`fallback` is reserved for the fallback terminal", d.span,
                            label="reserved name", hint="choose another name"))
                continue
        else:
            continue
        if name in names:
            duplicate(report, "state", name, d.span, names[name])
            continue
        names[name] = d.span
        states[name] = d
    return states


__all__ = ["Report", "Scope", "StateDecl", "Symbols", "add_variable", "check_unique", "declare",
           "declare_types", "duplicate", "resolve_type"]
