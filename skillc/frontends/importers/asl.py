"""Amazon States Language → `.skm` AST whose spans point into the JSON/YAML definition.

The definition becomes a `machine`; the branches of Parallel states and the
item processors of Map states become `fragment`s of the same module, which
the checker checks on their own (`docs/importers.md` has the full mapping).
Every AST node carries the span of the JSON value it came from, so lowering
and the checker report at the definition's own lines and columns, and the
printer turns the same AST into a `.skm` file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Final

import attrs

from skillc.check import codes as check_codes
from skillc.diagnostics import Diagnostic, SourceFile, Span, make
from skillc.diagnostics.codes import INPUT_OVER_LIMIT
from skillc.frontends.importers import aslrules as R
from skillc.frontends.importers import codes
from skillc.frontends.importers.checking import Checked, Remap, check_module
from skillc.frontends.importers.coverage import uncovered
from skillc.frontends.importers.jsonpath import Steps, intrinsic, parse_path
from skillc.frontends.importers.positions import Node, read_document
from skillc.ir.suggest import did_you_mean
from skillc.syntax import nodes as n
from skillc.syntax.parser import read_source
from skillc.syntax.printer import print_module

_KEYWORDS = set([
    "import", "machine", "fragment", "record", "enum", "doc", "source", "tool", "input", "var", "counter", "max",
    "start", "model", "judge", "reads", "writes", "prompt", "call", "from", "when", "terminal", "fallback",
    "requires", "rule", "required", "order", "before", "forbid", "use", "as", "list", "map", "true", "false",
    "none", "not", "and", "or", "in", "str", "int", "float", "bool",
])
#: Rules one Choice state may hold: each is checked against those before it (the negations of the earlier rules kept
#: in one solver, so the questions grow linearly; Z3's time on them still grows faster): 500 two-condition rules take
#: 1.8 s on one core (4.5 s when this machine ran at half speed), 1,000 take 6.7 s (16.7 s): past 10 s on a slow day
#: (`skillc check` of a generated `.asl.json`, 2026-12-04).
MAX_CHOICE_RULES = 500
_OPS = {"Equals": "==", "LessThan": "<", "GreaterThan": ">", "LessThanEquals": "<=", "GreaterThanEquals": ">="}
_ERROR_WILDCARDS = ("States.ALL", "States.TaskFailed")
_TYPES = {"str": "str", "float": "float", "bool": "bool"}


def ident(text: str, taken: set[str]) -> str:
    """A `.skm` name for `text` (letters, digits, `_`; not a keyword), unique among `taken`, which it joins."""
    base = re.sub(r"\W+", "_", text, flags=re.ASCII).strip("_") or "s"
    if base[0].isdigit():
        base = "s_" + base
    if base in _KEYWORDS:
        base += "_"
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    taken.add(name)
    return name


@attrs.define
class PathVar:
    """A variable standing for one path of the state data."""

    name: str
    steps: Steps
    type: str | None
    span: Span
    written: bool = False


@attrs.frozen
class NoDefault:
    """A Choice state without `Default`: its rules as guards, and the types of the variables they use."""

    state: str
    span: Span
    guards: tuple[n.Expr, ...]
    types: dict[str, str]
    skm: str = ""  # the .skm state


@attrs.frozen
class AslImport:
    """The translated module (None when the definition could not be read) and what the translation knows."""

    module: n.Module | None
    diagnostics: list[Diagnostic]
    names: dict[str, str] = attrs.Factory(dict)
    no_default: tuple[NoDefault, ...] = ()  # the Choice states without a Default
    edge_names: dict[tuple[str, int], str] = attrs.Factory(dict)
    source: SourceFile | None = None


class Document:
    """One definition: the diagnostics found so far and the names used across all its nesting levels."""

    def __init__(self, source: SourceFile) -> None:
        self.source = source
        self.diagnostics: list[Diagnostic] = []
        self.state_names: dict[str, Span] = {}
        self.names: dict[str, str] = {}
        self.fragment_names: set[str] = set()
        self.items: list[n.Stmt] = []
        self.no_default: list[NoDefault] = []
        self.edge_names: dict[tuple[str, int], str] = {}  # (.skm state, edge number) -> what it encodes

    def report(self, d: Diagnostic) -> None:
        self.diagnostics.append(d)


def import_asl(source: SourceFile, *, as_json: bool) -> AslImport:
    """Translate an ASL definition; every problem of the definition is a diagnostic."""
    root, problems = read_document(source, as_json=as_json)
    if root is None:
        return AslImport(None, problems, source=source)
    doc = Document(source)
    R.duplicate_keys(root, doc.report)
    if not _is_states_object(root, "the definition", R.MACHINE_FIELDS, doc):
        return AslImport(None, doc.diagnostics, source=source)
    R.check_value(root, "TimeoutSeconds", "int", doc.report, 1)
    machine = Graph(doc, root, "state_machine", fragment=False).build()
    module = n.Module((machine, *doc.items), span=Span(source, 0, len(source.text)))
    return AslImport(module, doc.diagnostics, dict(doc.names), tuple(doc.no_default), doc.edge_names, source)


def _is_states_object(node: Node, what: str, fields: set[str], doc: Document) -> bool:
    """SKM601 unless `node` has a string StartAt and an object States; SKM603 for other fields."""
    if not node.is_map:
        doc.report(make(codes.NOT_A_STATE_MACHINE, f"{what} must be a JSON object with `StartAt` and `States`",
                        node.span, label="not an object"))
        return False
    ok = True
    start = node.get("StartAt")
    if start is None or start.text is None:
        doc.report(make(codes.NOT_A_STATE_MACHINE, f"{what} has no string `StartAt`",
                        start.span if start else _head(node), label="needs `StartAt`"))
        ok = False
    states = node.get("States")
    if states is None or not states.is_map or not states.pairs:
        doc.report(make(codes.NOT_A_STATE_MACHINE, f"{what} has no `States` object with at least one state",
                        states.span if states is not None else _head(node), label="needs `States`"))
        ok = False
    R.unknown_fields(node, fields, what, doc.report)
    return ok


def _head(node: Node) -> Span:
    """The first character of an object, where a missing field is reported."""
    return Span(node.span.source, node.span.start, node.span.start + 1)


class Graph:
    """One `States` object (the machine, a branch or an item processor) translated to a machine or fragment."""

    def __init__(self, doc: Document, node: Node, name: str, fragment: bool) -> None:
        self.doc = doc
        self.node = node
        self.name = name
        self.fragment = fragment
        self.report = doc.report
        self.states: list[tuple[str, Span, Node]] = []
        self.state_names: dict[str, str] = {}  # ASL name -> .skm name
        self.taken_states: set[str] = {"fallback"}
        self.taken_vars: set[str] = set()
        self.paths: dict[Steps, PathVar] = {}
        self.opaque: dict[tuple[str | None, ...], str] = {}  # (state, what the condition is) -> its Boolean
        self.opaque_by_state: dict[str, list[str]] = {}
        self.items: list[n.Stmt] = []
        language = node.get("QueryLanguage")
        self.jsonata = language is not None and language.value == "JSONata"
        self.end_name: str | None = None
        self.no_match_name: str | None = None
        self.exits: list[str] = []
        self._tools: list[n.ToolDecl] = []
        self.taken_tools: set[str] = set()
        self._extra_vars: list[n.Stmt] = []
        self.present: list[Steps] = []  # paths tested with IsPresent
        self.base: Steps | None = ()  # the InputPath of the state being translated (see `_path`)
        self.counters: dict[str, list[str]] = {}  # state -> the counters of its retriers

    # ------------------------------------------------------------ structure

    def build(self) -> n.Stmt:
        """The machine or fragment for this `States` object."""
        self._collect_states()
        for asl, span, st in self.states:
            self._validate(asl, span, st)
        for _asl, _span, st in self.states:
            self._scan_paths(st)
        targets = [p.steps for p in self.paths.values() if p.written]
        for p in self.paths.values():
            p.written = any(_related(p.steps, t) for t in targets)
        start = self._target(self.node.get("StartAt"), "StartAt")
        body: list[n.Stmt] = []
        states = [self._state(asl, span, st) for asl, span, st in self.states]
        states = [self._with_resets(s) for s in states]
        body += [t for t in self._tools]
        body += self._declarations()
        body.append(n.Start(start or next(iter(self.state_names.values()), "fallback"),
                            span=self.node.at("StartAt").span))
        body += [s for s in states if s is not None]
        if self.end_name and not self.fragment:
            body.append(n.Terminal(self.end_name, "success", span=_head(self.node)))
        if self.no_match_name and not self.fragment:
            body.append(n.Terminal(self.no_match_name, "failed", span=_head(self.node)))
        if self.fragment:
            params = tuple(n.Param(p.name, n.NamedType(p.type or "str"), span=p.span)
                           for p in self._vars() if not p.written)
            return n.Fragment(self.name, params, tuple(self.exits), tuple(body), span=self.node.span)
        body.append(n.Fallback(span=_head(self.node)))
        return n.Machine(self.name, tuple(body), span=self.node.span)

    def _with_resets(self, state: n.Stmt | None) -> n.Stmt | None:
        """Entering a state afresh resets its retriers' attempts, as Step Functions does."""
        if not isinstance(state, n.State):
            return state
        items = tuple(attrs.evolve(i, assigns=i.assigns + tuple(
            n.Assign(c, "=", n.IntLit(0), span=i.span) for c in self.counters[i.target]))
            if isinstance(i, n.Edge) and i.target != state.name and i.target in self.counters else i
            for i in state.items)
        return attrs.evolve(state, items=items)

    def _collect_states(self) -> None:
        for asl, span, st in self.node.at("States").pairs:
            if asl in self.state_names:
                continue  # a repeated key of this object: SKM607 says so already
            if asl in self.doc.state_names:
                self.report(make(codes.DUPLICATE_ASL_NAME, f"the state name `{asl}` is used twice", span,
                                 label="second definition",
                                 notes=[f"first defined at line {self.doc.state_names[asl].start_pos[0]}; names "
                                        "must be unique across the whole definition, branches included"]))
            else:
                self.doc.state_names[asl] = span
            name = ident(asl, self.taken_states)
            self.state_names[asl] = name
            self.doc.names.setdefault(name, asl)
            self.states.append((asl, span.join(st.span), st))
        if any(self._ends(st) for _, _, st in self.states):
            self.end_name = ident("end", self.taken_states)
            if self.fragment:
                self.exits.append(self.end_name)

    @staticmethod
    def _ends(st: Node) -> bool:
        end = st.get("End") if st.is_map else None
        return end is not None and end.value is True

    def _type(self, st: Node) -> str | None:
        t = st.get("Type") if st.is_map else None
        return t.text if t is not None and t.text in R.TYPES else None

    def _validate(self, asl: str, span: Span, st: Node) -> None:
        """The field rules of one state."""
        if not st.is_map:
            self.report(make(codes.NOT_A_STATE_MACHINE, f"state `{asl}` must be an object", st.span,
                             label="not an object"))
            return
        t = st.get("Type")
        kind = self._type(st)
        if kind is None:
            where = t.span if t is not None else _head(st)
            self.report(make(codes.UNKNOWN_STATE_TYPE,
                             f"state `{asl}` has " + (f"unknown type `{t.value}`" if t is not None else "no `Type`"),
                             where,
                             label="not a state type", hint=(did_you_mean(str(t.value), R.TYPES) if t is not None
                                                             else None) or "one of " + ", ".join(R.TYPES)))
            return
        R.unknown_fields(st, R.FIELDS[kind], f"a {kind} state", self.report)
        R.exclusive(st, self.report)
        for key in ("Next", "Default", "Comment", "Resource"):
            R.check_value(st, key, "string", self.report)
        R.check_value(st, "End", "bool", self.report)
        for key in ("TimeoutSeconds", "HeartbeatSeconds", "Seconds"):
            R.check_value(st, key, "int", self.report, 1)
        R.check_value(st, "Credentials", "object", self.report)
        for key in ("InputPath", "OutputPath"):
            R.check_path_field(st, key, self.report, reference=False)
        R.check_path_field(st, "ItemsPath", self.report, reference=False, nullable=False)
        for key in R.REFERENCE_FIELDS:
            R.check_path_field(st, key, self.report, reference=True)
        for key in R.INTRINSIC_FIELDS:
            R.check_path_field(st, key, self.report, reference=True, intrinsics=True)
        terminal = kind in ("Succeed", "Fail") or self._ends(st)
        if not terminal and kind != "Choice" and st.get("Next") is None:
            self.report(make(codes.MISSING_FIELD, f"{kind} state `{asl}` has neither `Next` nor `\"End\": true`",
                             _head(st), label="needs `Next` or `End`"))
        need = {"Task": ("Resource",), "Choice": ("Choices",), "Parallel": ("Branches",)}.get(kind, ())
        for key in need:
            if st.get(key) is None:
                self.report(make(codes.MISSING_FIELD, f"{kind} state `{asl}` has no `{key}`", _head(st),
                                 label=f"needs `{key}`"))
        if kind == "Map" and st.get("Iterator") is None and st.get("ItemProcessor") is None:
            self.report(make(codes.MISSING_FIELD, f"Map state `{asl}` has no `ItemProcessor`", _head(st),
                             label="needs `ItemProcessor`"))
        if kind == "Wait" and not any(st.get(k) is not None for k in ("Seconds", "SecondsPath", "Timestamp",
                                                                       "TimestampPath")):
            self.report(make(codes.MISSING_FIELD,
                             f"Wait state `{asl}` has none of `Seconds`, `SecondsPath`, `Timestamp`, `TimestampPath`",
                             _head(st), label="needs a wait"))
        for field in ("Retry", "Catch"):
            v = st.get(field)
            if v is not None and not v.is_seq:
                self.report(make(codes.BAD_FIELD_VALUE, f"`{field}` must be a list", v.span, label="not a list"))
        choices = st.get("Choices")
        if kind == "Choice" and choices is not None:
            if not choices.is_seq or not choices.items:
                self.report(make(codes.BAD_FIELD_VALUE, "`Choices` must be a non-empty list of rules", choices.span,
                                 label="non-empty list required"))
            elif len(choices.items) > MAX_CHOICE_RULES:
                self.report(make(INPUT_OVER_LIMIT, f"Choice state `{asl}` has {len(choices.items):,} rules; skillc "
                                 f"imports at most {MAX_CHOICE_RULES:,} in one Choice (each rule is checked against "
                                 "the ones before it)", choices.span, label="too many rules"))
            else:
                for i, rule in enumerate(choices.items):
                    R.check_rule(rule, f"Choices[{i}]", False, self.report)

    # ------------------------------------------------------------ paths and variables

    def _path(self, text: str | None, span: Span, *, written: bool = False, type_: str | None = None,
              relative: bool = True) -> PathVar | None:
        """The variable of a path's single-node prefix (None for `$`, the context object or a malformed path).

        A `relative` path is read from the state's effective input: below its `InputPath` (`self.base`).
        """
        if text is None:
            return None
        path, _ = parse_path(text)
        if path is None or path.context:
            return None
        base: Steps = ()
        if relative:
            if self.base is None:
                return None  # the effective input's shape is unknown (a filtered or null InputPath)
            base = self.base
        steps = base + path.steps
        return self._var_for(steps, span, written, type_) if steps else None

    def _input_base(self, st: Node) -> Steps | None:
        """Where the state's effective input lies in the state data: `InputPath`'s steps; None when unknown."""
        ip = st.get("InputPath") if st.is_map else None
        if ip is None:
            return ()
        path, _ = parse_path(ip.text) if ip.text is not None else (None, None)
        return path.steps if path is not None and not path.context and path.exact else None

    def _var_for(self, key: Steps, span: Span, written: bool, type_: str | None) -> PathVar:
        var = self.paths.get(key)
        if var is None:
            var = PathVar(ident("_".join(str(s) for s in key), self.taken_vars), key, None, span)
            self.paths[key] = var
            self.doc.names.setdefault(var.name, "$." + ".".join(str(s) for s in key))
        var.written |= written
        if type_ is not None and var.type is None:
            var.type = type_
        return var

    def _scan_paths(self, st: Node) -> None:
        """Register the paths a state reads and writes, with the types its comparisons give them."""
        kind = self._type(st)
        if kind is None:
            return
        self.base = self._input_base(st)
        for text, node, relative in self._reads(st, report=True):
            self._path(text, node.span, relative=relative)
        if kind in ("Task", "Parallel", "Map") or (kind == "Pass" and _has_result(st)):
            rp = st.get("ResultPath")  # relative to the state's raw input, not its effective input
            if rp is None or rp.text is not None:
                self._path(rp.text if rp is not None else "$", rp.span if rp is not None else st.span, written=True,
                           relative=False)
        for c in _items(st.get("Catch")):
            rp = c.get("ResultPath") if c.is_map else None
            if rp is not None and rp.text is not None:
                self._path(rp.text, rp.span, written=True, relative=False)
        for rule in _items(st.get("Choices")):
            self._scan_rule(rule)

    def _scan_rule(self, rule: Node) -> None:
        if not rule.is_map:
            return
        var = rule.get("Variable")
        for op in (k for k in rule.keys() if k in R.COMPARISONS):  # noqa: SIM118 - positions.Node has keys() but no __iter__
            typed = _typed(op)
            if var is not None:
                pv = self._path(var.text, var.span, type_=typed)
                if op == "IsPresent" and pv is not None:
                    self.present.append(pv.steps)
            if op.endswith("Path"):
                self._path(rule.at(op).text, rule.at(op).span, type_=typed)
        for key in ("And", "Or"):
            for sub in _items(rule.get(key)):
                self._scan_rule(sub)
        negated = rule.get("Not")
        if negated is not None:
            self._scan_rule(negated)

    def _reads(self, st: Node, report: bool = False) -> list[tuple[str, Node, bool]]:
        """Paths the state's operation reads: (text, where, relative to the effective input?)."""
        found: list[tuple[str, Node, bool]] = []
        sink = self.report if report else (lambda d: None)
        for key in ("InputPath", "ItemsPath", "TimeoutSecondsPath", "HeartbeatSecondsPath", "SecondsPath",
                    "TimestampPath", "ErrorPath", "CausePath"):
            v = st.get(key)
            if v is not None and v.text is not None:
                args = intrinsic(v.text)[1] if key in R.INTRINSIC_FIELDS else []
                found += [(a, v, key != "InputPath") for a in args] or [(v.text, v, key != "InputPath")]
        for key in ("Parameters", "ItemSelector"):
            v = st.get(key)
            if v is not None:
                found += [(text, node, True) for text, node in R.payload_paths(v, key, sink)]
        v = st.get("ResultSelector")
        if v is not None:
            R.payload_paths(v, "ResultSelector", sink)  # reads the task's result, not the state data
        return found

    def _vars(self) -> list[PathVar]:
        return list(self.paths.values())

    def _declarations(self) -> list[n.Stmt]:
        out: list[n.Stmt] = []
        for p in self._vars():
            t = n.NamedType(p.type or "str")
            if not p.written:
                if not self.fragment:
                    out.append(n.VarDecl("input", p.name, t, span=p.span))
            elif any(p.steps[:len(t)] == t for t in self.present):
                out.append(n.VarDecl("var", p.name, t, _default(p.type), span=p.span))
            else:
                out.append(n.VarDecl("var", p.name, t, span=p.span))
        out += self._extra_vars
        return out

    # ------------------------------------------------------------ states

    def _state(self, asl: str, span: Span, st: Node) -> n.Stmt | None:
        kind = self._type(st)
        name = self.state_names[asl]
        if kind is None:  # reported (SKM601/SKM602); a stand-in that fails keeps the rest checkable
            tool = ident(name, self.taken_tools)
            self._tools.append(n.ToolDecl(tool, (), (), span=span))
            return n.State("tool", name, (n.Call(tool, (), span=span), n.Edge(None, "fallback", span=span)), span=span)
        if kind in ("Succeed", "Fail"):
            return self._terminal(name, kind, span, st)
        if kind in ("Parallel", "Map"):
            self._nested(name, kind, st)
        items: list[n.StateItem] = []
        self.base = self._input_base(st)
        reads = sorted({p.name for text, node, rel in self._reads(st)
                        if (p := self._path(text, node.span, relative=rel)) is not None})
        if reads:
            items.append(n.Reads(tuple(reads), span=st.span))
        resource = st.get("Resource")
        if resource is not None and resource.text is not None:
            items.append(n.Doc(f"{kind} {resource.text}", span=resource.span))
        writes = self._writes(st, kind)
        results: list[tuple[str, str]] = [(p.name, p.type or "str") for p in writes]
        errors = self._error_labels(st)
        error_var = None
        if errors:
            error_var = ident(f"{name}_error", self.taken_vars)
            self.doc.names.setdefault(error_var, f"the error of `{asl}`")
            self._extra_vars.append(n.VarDecl("var", error_var, n.EnumType(tuple(errors)), span=span))
        opaque = self.opaque_by_state.setdefault(name, [])
        edges: list[n.Edge] = []
        if kind == "Choice":
            edges += self._choice_edges(name, asl, st)
        else:
            edges += self._error_edges(name, st, error_var, errors)
            edges.append(self._next_edge(st))
        self.doc.edge_names.update({(name, i + 1): _describe(st, e) for i, e in enumerate(edges)})
        results += [(o, "bool") for o in opaque]
        tool = ident(name, self.taken_tools)
        # The tool's error result is `error`, unless a path it writes took that name (`"ResultPath": "$.error"`).
        error = ident("error", {r for r, _ in results})
        self._tools.append(n.ToolDecl(tool, (), tuple(n.Param(r, n.NamedType(t)) for r, t in results)
                                      + ((n.Param(error, n.EnumType(tuple(errors))),) if errors else ()),
                                      span=span))
        items.append(n.Call(tool, (), span=st.at("Type").span))
        bound = [n.WriteItem(r) for r, _ in results] + ([n.WriteItem(error_var, error)] if error_var else [])
        if bound:
            items.append(n.Writes(tuple(bound), span=st.span))
        return n.State("tool", name, tuple(items) + tuple(edges), span=span)

    def _terminal(self, name: str, kind: str, span: Span, st: Node) -> n.Stmt | None:
        """A Succeed or Fail state: a terminal of the machine, or an exit (None) of a fragment."""
        if self.fragment:
            self.exits.append(name)
            return None
        self.base = self._input_base(st)
        requires = tuple(sorted({p.name for text, node, rel in self._reads(st)
                                 if (p := self._path(text, node.span, relative=rel)) is not None}))
        items = (n.Requires(requires, span=st.span),) if requires else ()
        return n.Terminal(name, "success" if kind == "Succeed" else "failed", items, span=span)

    def _writes(self, st: Node, kind: str) -> list[PathVar]:
        """The variables the state's result defines: its ResultPath, what lies below it and above it."""
        out = st.get("OutputPath")
        if out is not None and out.text != "$":
            # The output is reshaped (or emptied by null): assume every written path is there, as for `$`.
            return [p for p in self._vars() if p.written]
        if kind not in ("Task", "Pass", "Parallel", "Map") or (kind == "Pass" and not _has_result(st)):
            return []  # a Pass without Result or Parameters passes its input on unchanged
        rp = st.get("ResultPath")
        if rp is not None and rp.text is None:
            return []  # "ResultPath": null keeps the input as it was
        path, _ = parse_path(rp.text if rp is not None else "$")
        if path is None:
            return []
        # Inputs are never bound: a result at `$` (or above them) may carry them, which is what inputs assume.
        return [p for p in self._vars() if p.written and _related(p.steps, path.steps)]

    def _next_edge(self, st: Node) -> n.Edge:
        if self._ends(st):
            return n.Edge(None, self.end_name or "fallback", span=st.at("End").span)
        target = self._target(st.get("Next"), "Next") or "fallback"
        nxt = st.get("Next")
        return n.Edge(None, target, span=nxt.span if nxt is not None else st.span)

    def _target(self, node: Node | None, field: str) -> str | None:
        """The .skm state a `Next`/`Default`/`StartAt` names; SKM606 when it names none."""
        if node is None or node.text is None:
            return None
        name = self.state_names.get(node.text)
        if name is None:
            where = ("another level of the definition" if node.text in self.doc.state_names else None)
            self.report(make(codes.UNDEFINED_ASL_STATE, f"`{field}` names `{node.text}`, which is not a state here",
                             node.span, label="no such state",
                             hint=did_you_mean(node.text, list(self.state_names)) or "name a state of this `States`",
                             notes=[f"`{node.text}` is a state of {where}; transitions cannot leave their branch"]
                             if where else []))
        return name

    # ------------------------------------------------------------ errors: Retry and Catch

    def _error_labels(self, st: Node) -> list[str]:
        names: list[str] = []
        for field in ("Retry", "Catch"):
            for holder in _items(st.get(field)):
                ee = holder.get("ErrorEquals") if holder.is_map else None
                names += [i.text for i in _items(ee) if i.text is not None and i.text not in _ERROR_WILDCARDS]
        if not names and not _items(st.get("Retry")) and not _items(st.get("Catch")):
            return []
        labels = ["ok"] + sorted({_label(x) for x in names}) + ["other"]
        if "States_Timeout" not in labels:
            labels.insert(-1, "States_Timeout")
        return list(dict.fromkeys(labels))

    def _error_set(self, holder: Node, labels: list[str]) -> set[str]:
        ee = holder.get("ErrorEquals") if holder.is_map else None
        out: set[str] = set()
        for name in (i.text for i in _items(ee) if i.text is not None):
            if name == "States.ALL":
                out |= set(labels) - {"ok"}
            elif name == "States.TaskFailed":
                out |= set(labels) - {"ok", "States_Timeout"}
            else:
                out.add(_label(name))
        return out

    def _error_edges(self, name: str, st: Node, error_var: str | None, labels: list[str]) -> list[n.Edge]:
        """Retriers as bounded self-loops (first matching retrier only), then catchers in order, then failure."""
        if error_var is None:
            return []
        edges: list[n.Edge] = []
        taken: set[str] = set()
        retriers = _items(st.get("Retry"))
        for i, r in enumerate(retriers):
            R.check_retrier(r, i, i == len(retriers) - 1, self.report)
            mine = self._error_set(r, labels)
            if not mine:
                continue  # no valid ErrorEquals (SKM604/SKM605 said so): nothing to retry
            fresh = sorted(mine - taken)
            taken |= mine
            m = r.get("MaxAttempts") if r.is_map else None
            attempts = m.value if m is not None and isinstance(m.value, int) and not isinstance(m.value, bool) else 3
            if attempts <= 0:
                continue
            counter = ident(f"{name}_retry{i + 1}", self.taken_vars)
            self.counters.setdefault(name, []).append(counter)
            self.doc.names.setdefault(counter, f"the attempts of Retry[{i}] of `{self.doc.names.get(name, name)}`")
            self._extra_vars.append(n.CounterDecl(counter, min(attempts, 10**6), span=r.span))
            guard = n.BinOp("and", _member(error_var, fresh, r.span),
                            n.BinOp("<", n.Name(counter, span=r.span), n.IntLit(min(attempts, 10**6)), span=r.span),
                            span=r.span)
            edges.append(n.Edge(guard, name, (n.Assign(counter, "+=", n.IntLit(1)),), span=r.span))
        catchers = _items(st.get("Catch"))
        caught: set[str] = set()
        for j, c in enumerate(catchers):
            R.check_catcher(c, j, j == len(catchers) - 1, self.report)
            mine = self._error_set(c, labels)
            if not mine:
                continue
            caught |= mine
            target = self._target(c.get("Next") if c.is_map else None, "Next") or "fallback"
            edges.append(n.Edge(_member(error_var, sorted(mine), c.span), target, self._catch_assigns(c), span=c.span))
        if caught != set(labels) - {"ok"}:
            where = st.at("Type").span
            edges.append(n.Edge(n.BinOp("!=", n.Name(error_var, span=where), n.Name("ok", span=where), span=where),
                                "fallback", span=where))
        return edges

    def _catch_assigns(self, c: Node) -> tuple[n.Assign, ...]:
        """A catcher's ResultPath defines the error output's paths on its edge."""
        rp = c.get("ResultPath") if c.is_map else None
        if rp is None or rp.text is None:
            return ()
        path, _ = parse_path(rp.text)
        if path is None or not path.steps:
            return ()
        return tuple(n.Assign(p.name, "=", _default(p.type)) for p in self._vars()
                     if p.written and _related(p.steps, path.steps))

    # ------------------------------------------------------------ Choice

    def _choice_edges(self, name: str, asl: str, st: Node) -> list[n.Edge]:
        edges = []
        for rule in _items(st.get("Choices")):
            if not rule.is_map:
                continue
            # a comparison without an operator (SKM604): no edge to check
            if rule.get("Variable") is not None and not any(
                    k in R.COMPARISONS for k in rule.keys()):  # noqa: SIM118 - positions.Node has keys() but no __iter__
                continue
            target = self._target(rule.get("Next"), "Next") or "fallback"
            edges.append(n.Edge(self._guard(name, rule), target, span=rule.span))
        default = st.get("Default")
        if default is not None:
            edges.append(n.Edge(None, self._target(default, "Default") or "fallback", span=default.span))
        else:
            if self.no_match_name is None:
                self.no_match_name = ident("NoChoiceMatched", self.taken_states)
                if self.fragment:
                    self.exits.append(self.no_match_name)
                self.doc.names.setdefault(self.no_match_name, "States.NoChoiceMatched")
            types = {p.name: p.type or "str" for p in self._vars()}
            guards = tuple(e.guard for e in edges if e.guard is not None)  # every rule's edge has its guard
            self.doc.no_default.append(NoDefault(asl, st.at("Type").span, guards, types, name))
            edges.append(n.Edge(None, self.no_match_name, span=st.at("Type").span))
        return edges

    def _guard(self, state: str, rule: Node) -> n.Expr:
        """A choice rule as a Boolean expression."""
        condition = rule.get("Condition")
        if condition is not None:
            return self._opaque(state, ("Condition", str(condition.value)), condition.span, "a JSONata condition")
        for key, op in (("And", "and"), ("Or", "or")):
            if rule.get(key) is not None:
                subs = [self._guard(state, s) for s in _items(rule.get(key)) if s.is_map]
                out = subs[0] if subs else n.BoolLit(key == "And", span=rule.span)
                for s in subs[1:]:
                    out = n.BinOp(op, out, s, span=rule.span)
                return out
        negated = rule.get("Not")
        if negated is not None and negated.is_map:
            return n.Not(self._guard(state, negated), span=rule.span)
        ops = [k for k in rule.keys() if k in R.COMPARISONS]  # noqa: SIM118 - positions.Node has keys() but no __iter__
        var = rule.get("Variable")
        if not ops or var is None:
            return n.BoolLit(False, span=rule.span)
        return self._comparison(state, rule, var, ops[0], rule.at(ops[0]))

    def _comparison(self, state: str, rule: Node, var: Node, op: str, value: Node) -> n.Expr:
        kind = R.COMPARISONS[op]
        pv = self._path(var.text, var.span)
        family = re.match(r"(String|Numeric|Boolean|Timestamp)(\w+?)(Path)?$", op)
        exact = (family is not None and pv is not None and (
            (family.group(1) == "Numeric") or (family.group(1) == "Boolean")
            or (family.group(1) == "String" and family.group(2) == "Equals")))
        if not exact or op.startswith("Is") or pv is None or family is None:
            what = f"`{op}`" + (" (a type test)" if op.startswith("Is") and op != "IsPresent" else "")
            return self._opaque(state, (op, var.text, str(value.value)), value.span, what)
        want = _TYPES[kind]
        if pv.type != want:
            self.report(make(codes.PATH_TYPE_CONFLICT,
                             f"`{var.text}` is compared as {want} here but as {pv.type} elsewhere", value.span,
                             label=f"{want} comparison"))
            return self._opaque(state, (op, var.text, str(value.value)), value.span, f"`{op}`")
        sym = _OPS.get(family.group(2), "==")
        if family.group(3):
            other = self._path(value.text, value.span)
            if other is None or other.type != want:
                return self._opaque(state, (op, var.text, str(value.value)), value.span, f"`{op}`")
            right: n.Expr = n.Name(other.name, span=value.span)
        else:
            literal = _literal(value, want)
            if literal is None:  # not a number (SKM605 says so): unmodelled rather than a crash
                return self._opaque(state, (op, var.text, str(value.value)), value.span, f"`{op}`")
            right = literal
        return n.BinOp(sym, n.Name(pv.name, span=var.span), right, span=rule.span)

    def _opaque(self, state: str, key: tuple[str | None, ...], span: Span, what: str) -> n.Expr:
        """A condition not modelled exactly: a Boolean the Choice state's pseudo-tool returns."""
        name = self.opaque.get((state,) + key)
        if name is None:
            name = ident(f"{state}_cond{len(self.opaque_by_state.get(state, [])) + 1}", self.taken_vars)
            self.opaque[(state,) + key] = name
            self.opaque_by_state.setdefault(state, []).append(name)
            self._extra_vars.append(n.VarDecl("var", name, n.NamedType("bool"), span=span))
            self.doc.names.setdefault(name, f"the condition at line {span.start_pos[0]}")
            self.report(make(codes.OPAQUE_CONDITION, f"{what} is treated as an unknown Boolean", span,
                             label="not modelled"))
        return n.Name(name, span=span)

    # ------------------------------------------------------------ nested machines

    def _nested(self, name: str, kind: str, st: Node) -> None:
        """Each branch (Parallel) or item processor (Map) becomes a fragment, checked on its own."""
        if kind == "Parallel":
            branches = _items(st.get("Branches"))
        else:
            proc = st.get("ItemProcessor") or st.get("Iterator")
            branches = [proc] if proc is not None else []
        for i, b in enumerate(branches):
            label = f"{name}_branch{i + 1}" if kind == "Parallel" else f"{name}_items"
            what = f"branch {i} of `{self.doc.names.get(name, name)}`" if kind == "Parallel" else \
                f"the item processor of `{self.doc.names.get(name, name)}`"
            if not _is_states_object(b, what, R.BRANCH_FIELDS, self.doc):
                continue
            frag = ident(label, self.doc.fragment_names)
            self.doc.items.append(Graph(self.doc, b, frag, fragment=True).build())


def _describe(st: Node, e: n.Edge) -> str:
    """What an edge of a state encodes, in the definition's terms (`Choices[1]`, `Catch[0]`, `Next`)."""
    for field in ("Choices", "Retry", "Catch"):
        for i, item in enumerate(_items(st.get(field))):
            if e.span is not None and item.span.start == e.span.start:
                return f"{field}[{i}]"
    default, type_ = st.get("Default"), st.get("Type")
    if default is not None and e.span is not None and e.span.start == default.span.start:
        return "the `Default`"
    if e.guard is None and type_ is not None and e.span is not None and e.span.start == type_.span.start:
        return "the implicit `States.NoChoiceMatched` failure"
    if e.guard is not None:
        return "the uncaught-error transition"
    return "the `Next`" if st.get("Next") is not None else "the `End`"


def _related(a: Steps, b: Steps) -> bool:
    """Writing one path defines the other: one lies on the other's way from the root."""
    return a[:len(b)] == b or b[:len(a)] == a


def _has_result(st: Node) -> bool:
    return st.get("Result") is not None or st.get("Parameters") is not None


def _typed(op: str) -> str | None:
    """The type a comparison gives its path when the checker models it exactly."""
    if op.startswith("Numeric"):
        return "float"
    return {"BooleanEquals": "bool", "BooleanEqualsPath": "bool", "StringEquals": "str",
            "StringEqualsPath": "str"}.get(op)


def _items(node: Node | None) -> list[Node]:
    return list(node.items) if node is not None and node.is_seq else []


def _label(error: str) -> str:
    """An error name as an enum label."""
    label = re.sub(r"\W+", "_", error, flags=re.ASCII).strip("_") or "error"
    return ("e_" + label) if label[0].isdigit() or label in _KEYWORDS or label in ("ok", "other") else label


def _member(var: str, labels: list[str], span: Span) -> n.Expr:
    """`var` is one of `labels` (false for none), spanning the retrier or catcher it encodes."""
    if not labels:
        return n.BoolLit(False, span=span)
    if len(labels) == 1:
        return n.BinOp("==", n.Name(var, span=span), n.Name(labels[0], span=span), span=span)
    return n.BinOp("in", n.Name(var, span=span), n.SetLit(tuple(n.Name(x, span=span) for x in labels), span=span),
                   span=span)


def _literal(value: Node, want: str) -> n.Expr | None:
    """The comparison's constant as a `.skm` literal; None for a numeric comparison with a non-number."""
    v = value.value
    if want == "bool":
        return n.BoolLit(bool(v), span=value.span)
    if want == "str":
        return n.StrLit(str(v), span=value.span)
    if not isinstance(v, (int, float)):
        return None
    # Always a float: the path is a float, and the solver is exact for float against float.
    lit: n.Expr = n.FloatLit(float(abs(v)), span=value.span)
    return n.Neg(lit, span=value.span) if v < 0 else lit


def _default(type_: str | None) -> n.Expr:
    return {"float": n.FloatLit(0.0), "bool": n.BoolLit(False)}.get(type_ or "str", n.StrLit(""))


def check_asl(source: SourceFile, *, as_json: bool, smt_timeout_ms: int = 2000) -> tuple[AslImport, Checked]:
    """Import and check a definition: field rules, then every check of skillc on the translated machine."""
    imported = import_asl(source, as_json=as_json)
    if imported.module is None or any(d.code == INPUT_OVER_LIMIT for d in imported.diagnostics):
        return imported, Checked(None, list(imported.diagnostics))
    # The checker would call the added `-> States.NoChoiceMatched` edge shadowed when the rules cover every case.
    added = frozenset((check_codes.SHADOWED_EDGE, nd.span.start) for nd in imported.no_default)
    remap = Remap(codes.UNBOUNDED_ASL_LOOP, codes.MAYBE_UNSET_PATH, imported.names, added, imported.edge_names)
    checked = check_module(imported.module, source.path, remap, smt_timeout_ms=smt_timeout_ms)
    found = list(imported.diagnostics) + checked.diagnostics
    if checked.machine is not None:
        found += [d for nd in imported.no_default if (d := _no_default(nd, imported.names, smt_timeout_ms))]
    return imported, Checked(checked.machine, found, checked.dropped)


def _no_default(nd: NoDefault, names: dict[str, str], timeout_ms: int) -> Diagnostic | None:
    """SKM620 when some input matches no rule of a Choice state without `Default` (with that input)."""
    verdict, model = uncovered(list(nd.guards), nd.types, timeout_ms)
    if verdict == "covered":
        return None
    shown = [f"{names.get(k, k)} = {v}" for k, v in sorted(model.items()) if k in names and names[k].startswith("$")]
    return make(codes.CHOICE_WITHOUT_DEFAULT,
                f"Choice state `{nd.state}` has no `Default`, and some input matches none of its rules",
                nd.span, label="no Default", witness=["; ".join(shown)] if shown else (),
                notes=["such an input fails the execution with `States.NoChoiceMatched`"]
                + (["the solver gave up (timeout): the rules may cover every case"] if verdict == "unknown" else []))


SUFFIXES = (".asl.json", ".asl.yaml", ".asl.yml")


def is_asl_path(path: str | os.PathLike[str]) -> bool:
    """True for a file that skillc reads as an ASL definition (by its name: `*.asl.json`, `*.asl.yaml`)."""
    return str(path).lower().endswith(SUFFIXES)


def read_asl(path: str | os.PathLike[str]) -> tuple[SourceFile | None, list[Diagnostic]]:
    """The definition's text (UTF-8, BOM and line ends handled like `.skm`), or the diagnostic why not."""
    return read_source(os.fspath(path))


def check_asl_file(path: str | os.PathLike[str], *, smt_timeout_ms: int = 2000) -> Checked:
    """Read, import and check one definition file."""
    source, problems = read_asl(path)
    if source is None:
        return Checked(None, problems)
    return check_asl(source, as_json=str(path).lower().endswith(".json"), smt_timeout_ms=smt_timeout_ms)[1]


def check_asl_text(text: str, path: str, *, smt_timeout_ms: int = 2000) -> Checked:
    """Import and check a definition given as text (an editor buffer, standard input) named `path`."""
    return check_asl(SourceFile.from_text(path, text), as_json=path.lower().endswith(".json"),
                     smt_timeout_ms=smt_timeout_ms)[1]


def to_skm(path: str | os.PathLike[str]) -> tuple[str | None, list[Diagnostic]]:
    """The `.skm` text of a definition, or None when the definition has errors (nothing is half-translated)."""
    source, problems = read_asl(path)
    if source is None:
        return None, problems
    imported, checked = check_asl(source, as_json=str(path).lower().endswith(".json"))
    if imported.module is None or checked.machine is None or any(d.is_error for d in imported.diagnostics):
        return None, checked.diagnostics
    covered = {nd.skm for nd in imported.no_default if uncovered(list(nd.guards), nd.types)[0] == "covered"}
    module, counted = _count_passes(_close_covered(imported.module, covered))
    found = [attrs.evolve(d, notes=(*d.notes, _PASSES_NOTE.format(counted[0]))) if
             d.code == codes.UNBOUNDED_ASL_LOOP and counted else d for d in checked.diagnostics]
    return print_module(module), found


#: Step Functions fails a standard execution whose history passes 25,000 events, and each pass of a loop enters and
#: leaves at least one state (two events), so no loop of an execution passes its closing edge more often than this.
HISTORY_PASSES: Final = 12_500
_PASSES_NOTE = ("the written .skm counts the loop's passes (`counter {} max 12500`, a standard execution's history "
                "of 25,000 events) and fails the run when they run out, so that it passes `skillc check`")


def _count_passes(module: n.Module) -> tuple[n.Module, list[str]]:
    """The module with each loop no retrier pays for counted against the execution's history quota: in each machine
    or fragment with such loops, one counter, incremented on the loops' closing edges (the back edges of a depth-first
    walk from the start, retriers' own edges aside) while below HISTORY_PASSES, and the run failing once it is not;
    and the counters' names."""
    names: list[str] = []

    def count(item: n.Stmt) -> n.Stmt:
        if not isinstance(item, (n.Machine, n.Fragment)):
            return item
        back = _back_edges(item)
        if not back:
            return item
        taken = {getattr(i, "name", "") for i in item.items} | {a.target for e in _edges(item) for a in e.assigns} \
            | {p.name for p in getattr(item, "params", ())}  # a branch reads the paths it does not write as parameters
        counter = ident("passes", taken)
        names.append(counter)
        items: list[n.Stmt] = []
        for i in item.items:
            if isinstance(i, n.Start):
                items.append(n.CounterDecl(counter, HISTORY_PASSES, span=i.span))
            items.append(_paid(i, back.get(i.name, set()), counter) if isinstance(i, n.State) else i)
        return attrs.evolve(item, items=tuple(items))

    return attrs.evolve(module, items=tuple(count(i) for i in module.items)), names


def _back_edges(block: n.Machine | n.Fragment) -> dict[str, set[int]]:
    """The edges (state → indices among its edges) that close a cycle in a depth-first walk from the start; an edge
    that increments a counter (a retrier's) is paid for already and not walked."""
    counters = {i.name for i in block.items if isinstance(i, n.CounterDecl)}
    states = {i.name: i for i in block.items if isinstance(i, n.State)}
    start = next((i.target for i in block.items if isinstance(i, n.Start)), None)
    if start not in states:
        return {}

    def out(name: str) -> list[tuple[int, str]]:
        edges = [i for i in states[name].items if isinstance(i, n.Edge)]
        return [(k, e.target) for k, e in enumerate(edges) if e.target in states
                and not any(a.target in counters and a.op == "+=" for a in e.assigns)]

    back: dict[str, set[int]] = {}
    on_path, done = {start}, set()
    stack = [(start, iter(out(start)))]
    while stack:
        name, todo = stack[-1]
        step = next(todo, None)
        if step is None:
            stack.pop()
            on_path.discard(name)
            done.add(name)
            continue
        k, target = step
        if target in on_path:
            back.setdefault(name, set()).add(k)
        elif target not in done:
            on_path.add(target)
            stack.append((target, iter(out(target))))
    return back


def _paid(state: n.State, back: set[int], counter: str) -> n.State:
    """A state whose closing edges (by index among its edges) count a pass while passes are left, then fail."""
    if not back:
        return state
    items: list[n.StateItem] = []
    k = 0
    for i in state.items:
        if not isinstance(i, n.Edge):
            items.append(i)
            continue
        if k in back:
            left = n.BinOp("<", n.Name(counter, span=i.span), n.IntLit(HISTORY_PASSES, span=i.span), span=i.span)
            guard = left if i.guard is None else n.BinOp("and", i.guard, left, span=i.span)
            items.append(attrs.evolve(i, guard=guard, assigns=(*i.assigns, n.Assign(
                counter, "+=", n.IntLit(1, span=i.span), span=i.span))))
            items.append(n.Edge(i.guard, "fallback", span=i.span))
        else:
            items.append(i)
        k += 1
    return attrs.evolve(state, items=tuple(items))


def _close_covered(module: n.Module, covered: set[str]) -> n.Module:
    """Choice states whose rules cover every input need no `States.NoChoiceMatched` edge: the last rule
    becomes the default edge (which the `.skm` checker requires instead of a shadowed one)."""

    def close(item: n.Stmt) -> n.Stmt:
        if isinstance(item, (n.Machine, n.Fragment)):
            return attrs.evolve(item, items=tuple(close(i) for i in item.items))
        if not isinstance(item, n.State) or item.name not in covered:
            return item
        edges = [i for i in item.items if isinstance(i, n.Edge)]
        others = [i for i in item.items if not isinstance(i, n.Edge)]
        if len(edges) < 2:
            return item
        return attrs.evolve(item, items=tuple(others + edges[:-2] + [attrs.evolve(edges[-2], guard=None)]))

    closed = attrs.evolve(module, items=tuple(close(i) for i in module.items))
    targets = {e.target for e in _edges(closed)}
    return attrs.evolve(closed, items=tuple(_drop_unused_terminals(i, targets) for i in closed.items))


def _edges(node: n.Node) -> Iterator[n.Edge]:
    for child in node.children():
        if isinstance(child, n.Edge):
            yield child
        yield from _edges(child)


def _drop_unused_terminals(item: n.Stmt, targets: set[str]) -> n.Stmt:
    """Without edges into it, the added `NoChoiceMatched` terminal (or exit) goes too."""
    if isinstance(item, n.Machine):
        return attrs.evolve(item, items=tuple(i for i in item.items if not (
            isinstance(i, n.Terminal) and i.name.startswith("NoChoiceMatched") and i.name not in targets)))
    if isinstance(item, n.Fragment):
        return attrs.evolve(item, exits=tuple(x for x in item.exits if not (
            x.startswith("NoChoiceMatched") and x not in targets)))
    return item
