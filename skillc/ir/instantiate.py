"""Fragment instantiation: check each `use` against its fragment, then copy the fragment in by renaming.

A fragment is lowered once, standalone (`FragmentDef`). A `use` binds its
parameters to variables of the body and its exits to states; the bindings are
checked here (names, types, tools, and what a counter or an input may be bound
to). Expanding an instance only renames: parameters to the bound variables,
exits to the bound states, private names to `instance.name`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

import attrs

from skillc.diagnostics import Label, Span, codes, make
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import FALLBACK, Rule, State, Tool, Variable
from skillc.ir.suggest import did_you_mean
from skillc.ir.symbols import FragmentDef, Report, Symbols, add_variable
from skillc.syntax import nodes as n


def broken(frag: n.Fragment) -> FragmentDef:
    """A stand-in for a fragment that cannot be expanded, so follow-up errors stay quiet."""
    return FragmentDef(frag.name, (), tuple(frag.exits), {}, {}, None, {}, (), False, span=frag.span)


class Fragments(Protocol):
    """The fragments a body may `use`, by name."""

    def get(self, name: str) -> FragmentDef | None:
        """The lowered fragment, or None when no fragment has that name."""

    def __iter__(self) -> Iterator[str]:
        """Every fragment name (for "did you mean")."""


@attrs.frozen
class Instance:
    """A fragment instance of a body: its entry state and its states; entry None when it was not expanded."""

    entry: str | None
    members: tuple[str, ...] = ()


NOT_EXPANDED = Instance(None)


@attrs.frozen(hash=False)
class Expansion:
    """What a body's `use`s add to it."""

    variables: dict[str, Variable]  # the body's variables followed by the instances' private ones
    states: dict[str, State]  # the instances' states, renamed
    names: dict[str, Span | None]  # each instance state → its `use`
    instances: dict[str, Instance]
    landings: dict[str, str]  # expanded instance → the state a run routed to it lands in
    nested: dict[str, str]  # instances inside instances (`a.b`) → their entry
    exit_targets: tuple[tuple[str, Span | None], ...]  # the states instance exits are routed to
    rules: tuple[Rule, ...]  # the fragments' rules, renamed


@attrs.define
class _Building:
    """An `Expansion` while the `use`s are expanded one by one."""

    variables: dict[str, Variable]
    spans: dict[str, Span | None]
    states: dict[str, State] = attrs.Factory(dict)
    names: dict[str, Span | None] = attrs.Factory(dict)
    nested: dict[str, str] = attrs.Factory(dict)
    exit_targets: list[tuple[str, Span | None]] = attrs.Factory(list)
    rules: list[Rule] = attrs.Factory(list)


def instantiate(symbols: Symbols, fragments: Fragments, report: Report) -> Expansion:
    """Check and expand every `use` of a body, in order."""
    acc = _Building(dict(symbols.variables), {name: v.span for name, v in symbols.variables.items()})
    instances = {name: _instance(u, symbols, fragments, acc, report) for name, u in symbols.uses.items()}
    landings = _landings(instances, symbols.names, report)
    return Expansion(acc.variables, acc.states, acc.names, instances, landings, acc.nested,
                     tuple(acc.exit_targets), tuple(acc.rules))


def _instance(u: n.Use, symbols: Symbols, fragments: Fragments, acc: _Building, report: Report) -> Instance:
    """Check one `use` and expand it when everything fits."""
    fdef = fragments.get(u.fragment)
    if fdef is None:
        report(make(codes.UNDEFINED_FRAGMENT, f"undefined fragment `{u.fragment}`", u.span, label="not defined",
                    hint=did_you_mean(u.fragment, list(fragments))
                    or "define it with `fragment` or `import` the file that does", data={"fragment": u.fragment}))
        return NOT_EXPANDED
    if not fdef.ok:
        # The fragment's own errors are reported at the fragment; checking bindings against a
        # half-lowered signature would only add noise.
        return NOT_EXPANDED
    variables, params_ok = _bind_params(fdef, u, acc.variables, report)
    exits, exits_ok = _bind(fdef, u, u.exits, list(fdef.exits), "exit", "does not route exit",
                            "route every exit: -> (" + ", ".join(f"{x}: STATE" for x in fdef.exits) + ")", report)
    tools_ok = _tools_fit(fdef, u, symbols.tools, report)
    if not (params_ok and exits_ok and tools_ok) or fdef.start is None:
        return NOT_EXPANDED
    return _expand(fdef, u, variables, exits, acc, report)


def _bind(fdef: FragmentDef, u: n.Use, bindings: tuple[n.Binding, ...], names: list[str], what: str,
          missing_msg: str, hint: str, report: Report) -> tuple[dict[str, n.Binding], bool]:
    """Match `use` bindings to a fragment's parameters or exits: each known name exactly once."""
    bound: dict[str, n.Binding] = {}
    ok = True
    for b in bindings:
        if b.name not in names:
            report(make(codes.FRAGMENT_BINDING, f"fragment `{fdef.name}` has no {what} `{b.name}`", b.span,
                        label=f"unknown {what}", hint=did_you_mean(b.name, names), data={"fragment": fdef.name}))
            ok = False
        elif b.name in bound:
            report(make(codes.FRAGMENT_BINDING, f"{what} `{b.name}` is bound twice", b.span, label="again"))
            ok = False
        else:
            bound[b.name] = b
    missing = [x for x in names if x not in bound]
    if missing:
        report(make(codes.FRAGMENT_BINDING, f"`use {fdef.name}` {missing_msg} " + ", ".join(f"`{m}`" for m in missing),
                    u.span, label=f"missing {what}s", hint=hint))
        ok = False
    return bound, ok


def _bind_params(fdef: FragmentDef, u: n.Use, variables: Mapping[str, Variable],
                 report: Report) -> tuple[dict[str, str], bool]:
    """Parameter → bound variable, and whether every parameter is bound to a fitting variable."""
    params = dict(fdef.params)
    bound, ok = _bind(fdef, u, u.bindings, list(params), "parameter", "does not bind",
                      f"bind every parameter: {fdef.name}(" + ", ".join(f"{p}: VAR" for p in params) + ")", report)
    mapping: dict[str, str] = {}
    for name, b in bound.items():
        var = variables.get(b.target)
        if var is None:
            report(make(codes.UNDEFINED_VARIABLE, f"undefined variable `{b.target}`", b.span, label="not declared",
                        hint=did_you_mean(b.target, variables)))
            ok = False
            continue
        fits = [_same_type(fdef, name, params[name], var, b, report), _counter_fits(fdef, name, var, b, report),
                _input_fits(fdef, name, var, b, report)]
        ok = ok and all(fits)
        mapping[name] = b.target
    return mapping, ok


def _same_type(fdef: FragmentDef, name: str, param: T.Type, var: Variable, b: n.Binding, report: Report) -> bool:
    """A parameter is bound to a variable of exactly its type (SKM128)."""
    if var.type != param and not T.same_enum(var.type, param) and not isinstance(param, T.ErrorT):
        report(make(codes.FRAGMENT_BINDING_TYPE,
                    f"parameter `{name}` of `{fdef.name}` is {T.show(param)} but `{b.target}` is "
                    f"{T.show(var.type)}", b.span, label="type differs"))
        return False
    return True


def _counter_fits(fdef: FragmentDef, name: str, var: Variable, b: n.Binding, report: Report) -> bool:
    """A counter may be bound only to a parameter no state writes (SKM137) that changes as counters do (SKM139)."""
    if not var.is_counter:
        return True
    ok = True
    if name in fdef.state_written:
        report(make(codes.COUNTER_WRITTEN_BY_STATE, f"`{b.target}` is a counter, but a state of fragment `{fdef.name}` "
                    f"writes its parameter `{name}`", b.span, label="counter bound to a written parameter",
                    hint="counters change only on edges; bind a plain `int` variable", data={"fragment": fdef.name}))
        ok = False
    for a in (a for st in fdef.states.values() for e in st.edges for a in e.assigns if a.var == name):
        problem = counter_problem(var, a.op, a.value)
        if problem:
            report(make(codes.INVALID_COUNTER_ASSIGNMENT, f"fragment `{fdef.name}` changes parameter `{name}`, "
                        f"bound to counter `{b.target}`: {problem}", b.span, label="counter bound here",
                        secondary=[Label(a.span, "assigned here")] if a.span else [], data={"fragment": fdef.name}))
            ok = False
    return ok


def _input_fits(fdef: FragmentDef, name: str, var: Variable, b: n.Binding, report: Report) -> bool:
    """An input may be bound only to a parameter the fragment never writes (SKM133)."""
    if var.is_input and name in fdef.written:
        report(make(codes.READ_ONLY_VARIABLE, f"`{b.target}` is an input, but fragment `{fdef.name}` writes "
                    f"its parameter `{name}`", b.span, label="input bound to a written parameter",
                    hint=f"bind `{name}` to a `var` initialised from the input", data={"fragment": fdef.name}))
        return False
    return True


def _tools_fit(fdef: FragmentDef, u: n.Use, tools: Mapping[str, Tool], report: Report) -> bool:
    """The body declares every tool the fragment calls, with the signature it expects (SKM104, SKM128)."""
    ok = True
    for tool in fdef.tools.values():
        mine = tools.get(tool.name)
        if mine is None:
            report(make(codes.UNDEFINED_TOOL, f"fragment `{fdef.name}` calls tool `{tool.name}`, which this "
                        "machine does not declare", u.span, label="needs a tool",
                        hint=f"declare it: tool {tool.name}(…) -> (…)", data={"fragment": fdef.name}))
            ok = False
        elif not signature_fits(mine, tool):
            report(make(codes.FRAGMENT_BINDING_TYPE, f"tool `{tool.name}` is declared with another signature than "
                        f"fragment `{fdef.name}` expects", u.span, label="signature differs",
                        secondary=[Label(mine.span, "declared here")] if mine.span else [],
                        data={"fragment": fdef.name}))
            ok = False
    return ok


def signature_fits(mine: Tool, expected: Tool) -> bool:
    """A body's tool serves a fragment that declared `expected`: each parameter the fragment passes is one of the
    tool's, of a type that takes the fragment's values; the tool's other parameters are optional; and each result the
    fragment binds is one of the tool's, of the same type. (Equal signatures fit; so does the kit's `bash` for a
    fragment that declared `tool bash(command: str) -> (stdout: str, exit_code: int)`.)"""
    params = dict(mine.params)
    for name, t in expected.params:
        if name not in params or not T.assignable(t, params[name]):
            return False
    if any(name not in dict(expected.params) and not isinstance(t, T.OptionalT) for name, t in mine.params):
        return False
    return set(expected.results) <= set(mine.results)


def _expand(fdef: FragmentDef, u: n.Use, variables: dict[str, str], exits: dict[str, n.Binding],
            acc: _Building, report: Report) -> Instance:
    """Copy the fragment's variables, states and rules into the body under `instance.` names."""
    prefix = u.name + "."
    variables.update({name: prefix + name for name in fdef.variables})
    states = {FALLBACK: FALLBACK, **{name: b.target for name, b in exits.items()},
              **{name: prefix + name for name in fdef.states}}
    for name, var in fdef.variables.items():
        init = ir.rename(var.init, variables) if var.init is not None else None
        add_variable(acc.variables, acc.spans, attrs.evolve(var, name=variables[name], init=init), u.span, report)
    members = []
    for state in fdef.states.values():
        renamed = rename_state(state, variables, states, u.name)
        acc.states[renamed.name] = renamed
        acc.names[renamed.name] = u.span
        members.append(renamed.name)
    for inner, entry in fdef.instances.items():
        acc.nested[prefix + inner] = states.get(entry, entry)
    acc.exit_targets += [(b.target, b.span) for b in exits.values()]
    acc.rules += [rename_rule(r, states, u.name, fdef.name) for r in fdef.rules]
    assert fdef.start is not None  # checked by the caller
    return Instance(states[fdef.start], tuple(members))


def _landings(instances: Mapping[str, Instance], names: Mapping[str, Span | None], report: Report) -> dict[str, str]:
    """Where a run routed to each expanded instance lands (the fallback when instances route in a circle)."""
    circular: set[str] = set()
    return {name: landing(name, instances, names, circular, report) or FALLBACK
            for name, inst in instances.items() if inst.entry is not None}


def landing(name: str, instances: Mapping[str, Instance], names: Mapping[str, Span | None], circular: set[str],
            report: Report) -> str | None:
    """Follow pass-through instances (whose fragment starts at an exit) from `name` to a state; None, reported
    once per instance in `circular` as SKM145, when they route in a circle."""
    seen: list[str] = []
    while name in instances:
        entry = instances[name].entry
        if entry is None:
            break
        if name in seen:
            if seen[0] not in circular:
                circular.add(seen[0])
                report(make(codes.CIRCULAR_PASS_THROUGH, "fragment instance `" + seen[0] + "` routes back to itself "
                            "without entering a state: " + " -> ".join([*seen, name]),
                            names.get(seen[0]), label="enters no state",
                            hint="route the pass-through fragment's exit to a state or terminal"))
            return None
        seen.append(name)
        name = entry
    return name


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


def rename_state(s: State, vars_: Mapping[str, str], states: Mapping[str, str], instance: str) -> State:
    """A fragment state as it appears in an instance."""
    rv: Callable[[str], str] = lambda name: vars_.get(name, name)  # noqa: E731
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
        predicates=tuple(ir.rename(p, vars_) for p in s.predicates),
        instance=f"{instance}.{s.instance}" if s.instance else instance,
    )


def rename_rule(r: Rule, states: Mapping[str, str], instance: str, fragment: str) -> Rule:
    """A fragment rule as it applies to one instance."""
    return attrs.evolve(
        r,
        fragment=r.fragment or fragment,
        instance=f"{instance}.{r.instance}" if r.instance else instance,
        ops=tuple(states.get(op, f"{instance}.{op}") for op in r.ops),
        performers=tuple(tuple(states.get(p, p) for p in ps) for ps in r.performers),
    )


__all__ = ["Expansion", "FragmentDef", "Fragments", "Instance", "broken", "counter_problem", "instantiate",
           "landing", "rename_rule", "rename_state", "signature_fits"]
