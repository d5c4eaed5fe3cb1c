"""Shell injection: text a model or a tool produced, reaching a `bash` command where the shell reads it as code.

A `bash` command runs through `/bin/bash -c`, so a value that holds `; rm -rf ~` or `$(…)` becomes
shell code unless it is quoted for the place it lands in. The check follows the data:

- **Sources** (untrusted): what model and judge states write (records and lists included), every
  tool result (`writes x = stdout`: command output, file contents, fetched pages, `ask_user`
  answers), and the places (`skill_dir`, `workdir`: trusted paths that may hold spaces or shell
  characters, so they too reach a command quoted). Inputs are the caller's and trusted; enums,
  numbers and booleans cannot carry shell syntax.
- **Propagation**: through edge assignments and initial values, `++` and `str()`, list items,
  record fields and map values, around loops (a fixed point) — flow-insensitively: every
  assignment of a variable in a reachable state counts wherever the variable is read.
- **Sinks**: the `command` argument of `bash`. Its text is scanned with `shellctx` (bash's quoting
  contexts) with each value standing where it lands: an unquoted untrusted value anywhere is
  SKM510; `quote(x)` is safe only as a whole argument in plain shell, and elsewhere (inside
  `"…"`, `'…'`, a here-document, backquotes, as the program or as `eval`/`sh -c` code, …) is SKM511.
  A list, map or record spliced whole prints as JSON, which no quoting survives: SKM510 when it holds
  anything untrusted.
- **Escapes**: `trusted(x)` marks text meant as shell code, one value at a time; a command that is one
  untrusted value as a whole (`command: cmd`, where a model wrote `cmd`) is deliberate and not reported.

Each finding's witness names the path: where the value came from, the assignments it went through,
and the command it reaches. The `argv` form needs no quoting at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import attrs

from skillc.check import shellctx
from skillc.check.context import CheckContext
from skillc.check.dataflow import dataflow
from skillc.diagnostics import Diagnostic, Label, Span, codes, make
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.evaluate import text as value_text
from skillc.ir.machine import Machine
from skillc.ir.printexpr import show_expr

SAFE_CALLS = ("quote", "trusted")
_MAX_ROUNDS = 64


def carries_text(t: T.Type) -> bool:
    """True when values of `t` can hold arbitrary text."""
    t = T.strip_optional(t)
    if isinstance(t, T.StrT):
        return True
    if isinstance(t, T.ListT):
        return carries_text(t.item)
    if isinstance(t, T.MapT):
        return True  # keys are text
    if isinstance(t, T.RecordT):
        return any(carries_text(ft) for _, ft in t.fields)
    return False


@attrs.frozen
class Origin:
    """Where an untrusted value comes from."""

    var: str
    what: str  # "a model writes it in `ask`"
    place: bool = False
    span: Span | None = attrs.field(default=None, eq=False)


@attrs.frozen
class Piece:
    """One untrusted value as it stands in a command: the expression, its origin and the assignments it went through."""

    origin: Origin
    via: Via  # (variable, the assignment it went through), from the command inwards
    span: Span | None = attrs.field(eq=False)
    shown: str = attrs.field(eq=False)

    @property
    def sink(self) -> str:
        """The name the command itself splices (the variable the value reached it through)."""
        return self.via[0][0] if self.via else self.shown


@attrs.frozen
class Finding:
    """An untrusted value that lands where the shell can read it as code."""

    piece: Piece
    quoted: bool  # it was `quote()`d, in a context where that is not enough
    context: str  # where it lands ("inside double quotes", "as shell code")
    fixable: bool  # `quote()` would make it safe where it stands
    option: bool = False  # `quote()`d safely, but where a leading `-` makes it an option (SKM512)
    others: tuple[Origin, ...] = ()  # the other sources that land at the same place in the same way


@attrs.frozen
class _Whole:
    """The lexer state after a command's first piece, an untrusted value: fine if nothing follows."""

    piece: Piece


@attrs.frozen
class _Begin:
    """The state before any text of the command: an untrusted value here may be the whole command."""


_State = shellctx.State | _Whole | _Begin
#: The assignments an untrusted value went through: (variable, its definition), from the command inwards.
Via = tuple[tuple[str, "Definition"], ...]
_Key = tuple[str, str, _State, Span | None]  # (mode, variable, lexer state, where the text reads it)


@attrs.frozen
class Definition:
    """One way a variable gets a value: a source, an input, or an expression (initial value, edge assignment)."""

    origin: Origin | None = None  # an untrusted source
    value: ir.Expr | None = None  # an expression, read where it is assigned
    var: str = ""
    edge: tuple[str, str] | None = None  # (state, target) of an edge assignment; None: the initial value

    def step(self) -> str:
        """How a witness tells this assignment (written only for a finding: most are never shown)."""
        shown = show_expr(self.value) if self.value is not None else ""
        if self.edge is None:
            return f"it is the initial value: `{self.var} = {shown}`"
        return f"it is assigned on the edge `{self.edge[0]}` → `{self.edge[1]}`: `{self.var} = {shown}`"


def definitions(m: Machine, context: CheckContext | None = None) -> dict[str, list[Definition]]:
    """Every way each variable gets a value in the states reachable from `start` (inputs get none: they are trusted)."""
    reached = dataflow(m, context).reached
    defs: dict[str, list[Definition]] = {name: [] for name in m.variables}
    for name, v in m.variables.items():
        if v.kind == "place":
            defs[name].append(Definition(Origin(name, "is a path the runtime sets (it may hold spaces or shell "
                                                "characters)", place=True, span=v.span)))
        elif v.init is not None:
            defs[name].append(Definition(value=v.init, var=name))
    for sname, st in m.states.items():
        if sname not in reached:
            continue
        if st.kind in ("model", "judge"):
            for var in st.writes:
                if var in defs:
                    defs[var].append(Definition(Origin(var, f"is written by the {st.kind} in `{sname}`",
                                                       span=st.span_of(f"writes:{var}") or st.span)))
        for var, result in st.bindings:
            tool = st.call.tool if st.call is not None else "its tool"
            if var in defs:
                defs[var].append(Definition(Origin(var, f"is the `{result}` of `{tool}` in `{sname}`",
                                                   span=st.span_of(f"writes:{var}") or st.span)))
        for e in st.edges:
            for a in e.assigns:
                if a.var in defs and a.op == "=":
                    defs[a.var].append(Definition(value=a.value, var=a.var, edge=(sname, e.target)))
    return defs


class _Scan:
    """The abstract interpretation of one command: each expression maps a lexer state to the states after its text."""

    def __init__(self, m: Machine, defs: dict[str, list[Definition]],
                 origin_memo: dict[str, frozenset[Origin]] | None = None,
                 first_memo: dict[str, tuple[tuple[str, int, str], Origin] | None] | None = None) -> None:
        self.m, self.defs = m, defs
        self.findings: dict[tuple[str, bool, str, Span | None], Finding] = {}  # by (kind, quoted, context, place)
        #: the sources that land at each finding's place the same way, each with its piece (`results` picks the first)
        self.sources: dict[tuple[str, bool, str, Span | None], dict[Origin, Piece]] = {}
        self.options: set[Span | None] = set()  # the places of SKM512 findings
        self.previous: dict[_Key, frozenset[_State]] = {}
        self.current: dict[_Key, frozenset[_State]] = {}
        self.active: set[_Key] = set()
        self.origin_memo: dict[str, frozenset[Origin]] = origin_memo if origin_memo is not None else {}
        #: `_first_source` by variable, shared like `origin_memo` by the commands of one machine
        self.first_memo: dict[str, tuple[tuple[str, int, str], Origin] | None] = first_memo if first_memo is not None \
            else {}

    def run(self, e: ir.Expr) -> None:
        """Scan the command to a fixed point (loops make a variable's text depend on itself)."""
        for _ in range(_MAX_ROUNDS):
            self.current, self.active = {}, set()
            self.text(e, _Begin(), ())  # a `_Whole` left at the end: one untrusted value as the command
            if self.current == self.previous:
                return
            self.previous = self.current

    # ------------------------------------------------------------ findings

    def _report(self, lexed: shellctx.State, piece: Piece, quoted: bool) -> None:
        """Record an untrusted piece landing unsafely: one finding a place (and way), its source the first in the
        file; the other sources that land there are counted on it (a value 700 model states write is one finding)."""
        why = shellctx.quoted_context(lexed, path=piece.origin.place)
        context = why or "as shell code"
        key = ("place" if piece.origin.place else "value", quoted, context, piece.span)
        self.findings.setdefault(key, Finding(piece, quoted, context, why is None))
        self.sources.setdefault(key, {}).setdefault(piece.origin, piece)

    def results(self) -> list[Finding]:
        """The findings, each with its first source in the file as the witness and the others counted on it."""
        out = []
        for key, f in self.findings.items():
            pieces = self.sources.get(key)
            if pieces:  # SKM512's findings choose their first source as they are made
                first = min(pieces, key=_file_order)
                f = attrs.evolve(f, piece=pieces[first], others=tuple(o for o in pieces if o != first))
            out.append(f)
        return out

    def _flush(self, state: _State) -> shellctx.State:
        """A lexer state; a pending whole-command value is reported, since more text follows it."""
        if isinstance(state, _Whole):
            self._report(shellctx.START, state.piece, quoted=False)
            return shellctx.feed(shellctx.START, shellctx.OPAQUE)
        if isinstance(state, _Begin):
            return shellctx.START
        return state

    def _feed(self, states: Iterable[_State], chars: str) -> frozenset[_State]:
        """Constant text after each state."""
        if not chars:
            return frozenset(states)  # nothing read: a whole-command value stays whole
        return frozenset(shellctx.feed(self._flush(s), chars) for s in states)

    def _raw(self, s: _State, piece: Piece) -> frozenset[_State]:
        """An unquoted untrusted value: safe only as the whole command."""
        if isinstance(s, _Begin):
            return frozenset({_Whole(piece)})
        self._report(self._flush(s), piece, quoted=False)
        return self._feed({s}, shellctx.OPAQUE)

    def _quoted(self, s: _State, e: ir.Call, via: Via) -> frozenset[_State]:
        """A `quote()`d value: safe as a whole argument in plain shell (its pieces are looked at only where not)."""
        lexed = self._flush(s)
        unsafe = {place: shellctx.quoted_context(lexed, path=place) is not None for place in (False, True)}
        if any(unsafe.values()):
            shown = show_expr(e)
            for p in self.pieces(e.args[0], via):
                if unsafe[p.origin.place]:
                    self._report(lexed, attrs.evolve(p, span=e.span, shown=shown), quoted=True)
        else:
            option = shellctx.option_slot(lexed)
            if option is not None and e.span not in self.options:
                self._option(e, via, option)
        return self._feed({lexed}, shellctx.QUOTED)

    def _option(self, e: ir.Call, via: Via, option: str) -> None:
        """SKM512 once a place: a `quote()`d untrusted value where a leading `-` makes it an option. Its witness is
        the first source in the file (however many states write the value); a path the runtime sets starts with `/`
        and is never one."""
        first: tuple[tuple[str, int, str], Origin] | None = None
        for x in _text_variables(e.args[0]):  # the variables `pieces` looks at
            found = self._first_source(x.name)
            if found is not None and (first is None or found[0] < first[0]):
                first = found
        if first is None:
            return
        self.options.add(e.span)
        origin = first[1]
        piece = Piece(origin, via, e.span, show_expr(e))
        self.findings.setdefault(("option", True, option, e.span), Finding(piece, True, option, False, option=True))

    # ------------------------------------------------------------ the text of an expression

    def text(self, e: ir.Expr, s: _State, via: Via) -> frozenset[_State]:
        """The states after `e`'s text, read from `s`."""
        states: frozenset[_State] = frozenset({s})
        for part in ir.concat_parts(e):
            states = frozenset(out for st in states for out in self._piece(part, st, via))
        return states

    def _piece(self, e: ir.Expr, s: _State, via: Via) -> frozenset[_State]:
        """The states after one operand of a `++` chain."""
        if isinstance(e, ir.Const):
            return self._feed({s}, value_text(e.value))
        if isinstance(e, ir.Label):
            return self._feed({s}, e.value)
        if not carries_text(e.type):
            return self._feed({s}, shellctx.OPAQUE)  # a number, a label, a bool: no shell syntax
        if isinstance(e, ir.Call):
            return self._call(e, s, via)
        if not isinstance(T.strip_optional(e.type), T.StrT):
            return self._json(e, s, via)
        if isinstance(e, ir.Var):
            return self._variable("text", e, s, via)
        if isinstance(e, (ir.GetIndex, ir.GetField)):
            return self._element(e.obj, s, via, e)
        return self._json(e, s, via)

    def _call(self, e: ir.Call, s: _State, via: Via) -> frozenset[_State]:
        """`quote(x)`, `trusted(x)`, `str(x)` and the rest."""
        if e.func == "trusted":
            return self._feed({s}, shellctx.OPAQUE)
        if e.func == "quote":
            return self._quoted(s, e, via)
        if e.func == "str" and e.args:
            return self._piece(e.args[0], s, via)
        return self._json(e, s, via)

    def _json(self, e: ir.Expr, s: _State, via: Via) -> frozenset[_State]:
        """A value printed whole (a list, map or record as JSON): any untrusted text in it is unquoted."""
        found = self.pieces(e, via)
        if not found:
            return self._feed({s}, shellctx.OPAQUE)
        states: set[_State] = set()
        for p in found:
            states |= self._raw(s, p)
        return frozenset(states)

    def _element(self, e: ir.Expr, s: _State, via: Via,
                 at: ir.Expr | None = None) -> frozenset[_State]:
        """The text of an item, field or value of the container `e` (which one is not tracked); `at` is the
        expression that picks it (`note.text`), shown in a finding."""
        if isinstance(e, ir.ListExpr):
            return frozenset(out for item in e.items for out in self.text(item, s, via)) or frozenset({s})
        if isinstance(e, ir.Var):
            return self._variable("item", e, s, via, at)
        if isinstance(e, (ir.GetIndex, ir.GetField)):
            return self._element(e.obj, s, via, at)
        if isinstance(e, ir.Const) and isinstance(e.value, list):
            return frozenset(out for item in e.value for out in self._feed({s}, value_text(item))) or frozenset({s})
        return self._json(e, s, via)

    def _variable(self, mode: str, e: ir.Var, s: _State, via: Via,
                  at: ir.Expr | None = None) -> frozenset[_State]:
        """The text of a variable (`mode` "text") or of its items (`mode` "item"), over all its definitions.

        Memoised per place in the text (so each use is reported) and lexer state; a variable whose text depends
        on itself (a loop) reads the previous round's answer until the rounds agree."""
        at = at or e
        key = (mode, e.name, s, at.span)
        if key in self.current:
            return self.current[key]
        if key in self.active:
            return self.previous.get(key, frozenset())
        self.active.add(key)
        out: set[_State] = set()
        for d in self.defs.get(e.name, ()):
            if d.origin is not None:
                out |= self._raw(s, Piece(d.origin, via, at.span, show_expr(at)))
            elif d.value is not None:
                step = (*via, (e.name, d))
                out |= self.text(d.value, s, step) if mode == "text" else self._element(d.value, s, step)
        if not self.defs.get(e.name):
            out |= self._feed({s}, shellctx.OPAQUE)  # an input or a parameter: the caller's, trusted
        self.active.discard(key)
        self.current[key] = frozenset(out)
        return self.current[key]

    # ------------------------------------------------------------ untrusted values inside an expression

    def pieces(self, e: ir.Expr, via: Via) -> list[Piece]:
        """The untrusted values `e` may contain (not under `trusted()`), each once."""
        out: dict[Origin, Piece] = {}
        for x in _text_variables(e):
            for o in self._origins(x.name, set()):
                out.setdefault(o, Piece(o, via, x.span, x.name))
        return list(out.values())

    def _first_source(self, var: str) -> tuple[tuple[str, int, str], Origin] | None:
        """The untrusted source of `var` that comes first in the file (not a place), with its sort key; kept per
        variable beside its origins, for every command of the machine."""
        if var in self.first_memo:
            return self.first_memo[var]
        origins = self._origins(var, set())
        first: tuple[tuple[str, int, str], Origin] | None = None
        for o in origins:
            key = _file_order(o)
            if not o.place and (first is None or key < first[0]):
                first = (key, o)
        if var in self.origin_memo:  # a complete answer (as `_origins` keeps them)
            self.first_memo[var] = first
        return first

    def _origins(self, var: str, seen: set[str]) -> frozenset[Origin]:
        """The sources whose text may end up in `var` (flow-insensitive)."""
        if var in self.origin_memo:
            return self.origin_memo[var]
        seen.add(var)
        found: set[Origin] = set()
        for d in self.defs.get(var, ()):
            if d.origin is not None:
                found.add(d.origin)
            elif d.value is not None:
                for x in ir.walk(d.value):
                    if isinstance(x, ir.Var) and x.name not in seen and carries_text(x.type):
                        found |= self._origins(x.name, seen)
        result = frozenset(found)
        if len(seen) == 1:
            self.origin_memo[var] = result  # only a complete answer is kept
        seen.discard(var)
        return result


def _text_variables(e: ir.Expr) -> Iterator[ir.Var]:
    """The variables whose text `e` may splice: not under `trusted()`, nor read only for a number or a label."""
    stack = [e]
    while stack:
        x = stack.pop()
        if isinstance(x, ir.Call) and x.func == "trusted":
            continue
        if isinstance(x, (ir.GetField, ir.GetIndex)) and not carries_text(x.type):
            continue  # a number or a label picked out of a record stays harmless
        if isinstance(x, ir.Var) and carries_text(x.type):
            yield x
        stack.extend(x.children())


def scan_command(m: Machine, value: ir.Expr, defs: dict[str, list[Definition]] | None = None,
                 origin_memo: dict[str, frozenset[Origin]] | None = None,
                 first_memo: dict[str, tuple[tuple[str, int, str], Origin] | None] | None = None) -> list[Finding]:
    """The untrusted values that land unsafely in a bash command built by `value` (`origin_memo`: the sources of
    each variable, shared by the commands of one machine)."""
    scan = _Scan(m, defs if defs is not None else definitions(m), origin_memo, first_memo)
    scan.run(value)
    return scan.results()


def _file_order(o: Origin) -> tuple[str, int, str]:
    """Where a source is written, for choosing the first of several (a place's declaration, a writing state)."""
    return (o.span.source.path if o.span else "", o.span.start if o.span else -1, o.var)


def _witness(f: Finding, state: str) -> list[str]:
    """The path of the value: its source, the assignments it went through, the command."""
    lines = [f"`{f.piece.origin.var}` {f.piece.origin.what}"]
    lines += [f"then {d.step()}" for _, d in reversed(f.piece.via)]
    lines.append(f"then it lands {f.context} in the bash command of `{state}`")
    return lines


#: How many of a finding's other sources its note names.
OTHERS_NAMED = 3


def _others(f: Finding) -> list[str]:
    """A note naming the other sources that land at the same place (the witness follows the first)."""
    if not f.others:
        return []
    others = sorted(f.others, key=_file_order)
    named = "; ".join(f"`{o.var}` {o.what}" for o in others[:OTHERS_NAMED])
    more = f"; and {len(others) - OTHERS_NAMED} more" if len(others) > OTHERS_NAMED else ""
    return [f"{len(others)} other source{'s' if len(others) > 1 else ''} reach this place the same way: {named}{more}"]


def _sink_label(f: Finding, command: Span | None) -> list[Label]:
    """The command the value lands in, marked when the finding points elsewhere (an edge assignment)."""
    at = f.piece.span
    if command is None or at is None or (at.source is command.source and command.start <= at.start < command.end):
        return []
    return [Label(command, "the command it lands in")]


def _diagnostic(f: Finding, state: str, fallback: Span | None) -> Diagnostic:
    """The SKM510/SKM511/SKM512 finding."""
    name = f.piece.sink
    origin = ("is a path the runtime sets" if f.piece.origin.place else "comes from a model or a tool")
    if name != f.piece.origin.var:
        origin = f"carries `{f.piece.origin.var}`, which {origin.replace('comes', 'came')},"
    if f.option:
        by_way = f", by way of `{name}`" if f.piece.via else ""
        return make(codes.QUOTED_AS_OPTION,
                    f"`{f.piece.shown}` stands {f.context} in the bash command of `{state}`, where a value "
                    f"starting with `-` is read as an option (`{f.piece.origin.var}` comes from a model or a "
                    f"tool{by_way})", f.piece.span or fallback, label="quoted, but may be read as an option",
                    witness=_witness(f, state), secondary=_sink_label(f, fallback),
                    hint=f"put `--` before it, or make sure `{_inner(f.piece.shown)}` cannot start with `-`")
    if f.quoted:
        source = "is a path the runtime sets" if f.piece.origin.place else "comes from a model or a tool"
        by_way = f", by way of `{name}`" if f.piece.via else ""
        return make(codes.QUOTED_IN_UNSAFE_CONTEXT,
                    f"`{f.piece.shown}` is not enough in the bash command of `{state}`: "
                    f"it lands {f.context} (`{f.piece.origin.var}` {source}{by_way})", f.piece.span or fallback,
                    label=f"quoted, but {f.context}", witness=_witness(f, state),
                    secondary=_sink_label(f, fallback), notes=_others(f),
                    hint=_hint(f, _inner(f.piece.shown)))
    return make(codes.UNQUOTED_SHELL_VALUE, f"`{name}` {origin} and is spliced into the bash command of `{state}` "
                f"without `quote()`" + ("" if f.fixable else f" ({f.context})"), f.piece.span or fallback,
                label="unquoted" if f.fixable else f"unquoted, {f.context}", witness=_witness(f, state),
                secondary=_sink_label(f, fallback), notes=_others(f),
                hint=_hint(f, f.piece.shown))


def _inner(shown: str) -> str:
    """`x` of a shown `quote(x)`."""
    return shown[len("quote("):-1] if shown.startswith("quote(") and shown.endswith(")") else shown


def _hint(f: Finding, name: str) -> str:
    """How to make the value safe where it lands."""
    if f.fixable:
        return f"write `quote({name})`, or `trusted({name})` if it is meant to be shell code"
    if f.context.startswith("inside") or f.context.startswith("in a"):
        return (f"close the quotes before it and splice `quote({name})` as a word of its own (`\"echo \" ++ "
                f"quote({name})`), or pass it to the program with `argv`")
    return f"pass `{name}` as an argument of a fixed program (`argv`, or `quote({name})` after the program's name)"


def check_shell_injection(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Untrusted text reaches a bash `command` only as a `quote()`d whole argument."""
    calls = [(name, st) for name, st in m.states.items() if st.call is not None and st.call.tool == "bash"]
    if not calls:
        return
    defs = definitions(m, context)
    memo: dict[str, frozenset[Origin]] = {}
    first: dict[str, tuple[tuple[str, int, str], Origin] | None] = {}
    for name, st in calls:
        assert st.call is not None  # `calls` holds the states with a call
        for arg, value in st.call.args:
            if arg != "command":
                continue
            for f in scan_command(m, value, defs, memo, first):
                yield _diagnostic(f, name, value.span or st.span)
