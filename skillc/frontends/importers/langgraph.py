"""LangGraph `StateGraph` builder → `.skm` AST, checked like any machine.

The builder is read, not `get_graph()` (which drops the edges of unreachable
nodes and draws untyped routers as plain edges): its nodes with their input
schemas, static and waiting edges, conditional branches with their `ends`,
the `Command[Literal[...]]` destinations of nodes, and the channels of the state
schema. Node and router functions are read with `ast` for the keys they write
(returned dict literals, `Command(update=…)`) and read (`state["k"]`); nothing is
called. Spans point at the `def` line of each node's function.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import tempfile
import typing
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import attrs

from skillc.check import codes as check_codes
from skillc.diagnostics import Diagnostic, Span, Suggestion, make
from skillc.frontends.importers import _graph_box, codes, pysource
from skillc.frontends.importers.asl import ident
from skillc.frontends.importers.checking import Checked, Remap, check_module
from skillc.ir.suggest import did_you_mean
from skillc.sandbox import codes as sandbox_codes
from skillc.sandbox.box import run_confined, skillc_home
from skillc.syntax import nodes as n
from skillc.syntax.printer import print_module

START, END = "__start__", "__end__"
RECURSION_LIMIT = 25  # LangGraph's default `recursion_limit`
_SCALARS = {str: "str", int: "int", float: "float", bool: "bool"}
_DEFAULTS = {"str": n.StrLit(""), "int": n.IntLit(0), "float": n.FloatLit(0.0), "bool": n.BoolLit(False)}


@attrs.frozen
class Node:
    """One node as the importer understands it."""

    name: str
    span: Span | None
    reads: frozenset[str]
    writes: frozenset[str] | None  # None: unknown
    targets: tuple[str, ...]  # successors (END included), in a stable order
    counted: bool  # reads RemainingSteps, or a router on it compares a state value with a number


@attrs.frozen
class GraphImport:
    """The translated module (None when the object is not a graph) and what the importer found."""

    module: n.Module | None
    diagnostics: list[Diagnostic]
    names: dict[str, str] = attrs.Factory(dict)
    nodes: tuple[Node, ...] = ()


def builder_of(obj: object) -> tuple[Any, Diagnostic | None]:
    """The `StateGraph` behind `obj` (a builder or a compiled graph), or SKM651."""
    try:
        from langgraph.graph import StateGraph  # optional extra
    except ImportError as exc:
        return None, make(codes.NOT_A_GRAPH, f"LangGraph is not installed, so nothing here is a StateGraph: {exc}",
                          hint="pip install langgraph")

    if isinstance(obj, StateGraph):
        return obj, None
    builder = getattr(obj, "builder", None)
    if isinstance(builder, StateGraph):
        return builder, None
    return None, make(codes.NOT_A_GRAPH,
                      f"{type(obj).__module__}.{type(obj).__qualname__} is not a LangGraph StateGraph",
                      notes=["pass the StateGraph builder or the graph `compile()` returned"])


def import_graph(obj: object, name: str = "graph", *, explicit_limit: bool = False) -> GraphImport:
    """Translate a StateGraph (or compiled graph) into a module; problems become diagnostics.

    With `explicit_limit`, every transition into a node counts against LangGraph's recursion limit (the
    counter `steps`), as at run time: the module then passes the loop check, as `skillc import` writes it.
    """
    builder, problem = builder_of(obj)
    if builder is None:
        return GraphImport(None, [problem] if problem is not None else [])
    return _Translator(builder, name, explicit_limit).run()


class _Translator:
    """Reads one builder (LangGraph has no type information: `builder`, node specs and branches are `Any`)."""

    def __init__(self, builder: Any, name: str, explicit_limit: bool = False) -> None:
        self.b = builder
        self.explicit_limit = explicit_limit
        self.name = ident(name, set())
        self.diagnostics: list[Diagnostic] = []
        self.names: dict[str, str] = {}
        self.state_names: dict[str, str] = {}
        self.taken: set[str] = {"fallback"}
        self.channels = self._channels()
        self.taken_vars: set[str] = set(self.channels) | {"steps"}
        self.routes: list[n.Stmt] = []  # the variable each multi-target node's choice is bound to

    def report(self, d: Diagnostic) -> None:
        self.diagnostics.append(d)

    # ------------------------------------------------------------ reading the builder

    def _channels(self) -> dict[str, str]:
        """Channel name -> .skm type, from the state schema's annotations (managed values excluded)."""
        out: dict[str, str] = {}
        hints = _hints(self.b.state_schema)
        for key in self.b.channels:
            if key.startswith("__"):
                continue
            out[key] = _skm_type(hints.get(key))
        return out

    def _reducers(self) -> set[str]:
        from langgraph.channels import LastValue  # optional extra

        return {k for k, c in self.b.channels.items() if not isinstance(c, LastValue)}

    def _node(self, name: str, spec: Any) -> Node:
        func = _func(spec.runnable)
        fn = pysource.function(func) if func is not None else None
        span = fn.span if fn is not None else None
        schema_keys = set(_hints(spec.input_schema)) if spec.input_schema is not None else set()
        if spec.input_schema is not None and spec.input_schema is not self.b.state_schema:
            reads = schema_keys & set(self.channels)  # a node's own input schema is its declared read set
        else:
            reads = (pysource.hard_reads(fn) if fn is not None else set()) & set(self.channels)
        writes = self._writes(name, fn, span)
        targets = self._targets(name, spec, fn, span)
        managed = set(self.b.managed)
        own_schema = spec.input_schema is not self.b.state_schema
        counted = (bool(managed & schema_keys) if own_schema
                   else (func is not None and pysource.refers_to(func, managed)))
        for branch in self.b.branches.get(name, {}).values():
            bfunc = _func(branch.path)
            bfn = pysource.function(bfunc) if bfunc is not None else None
            if bfunc is not None and bfn is not None and (pysource.counts(bfn) or pysource.refers_to(bfunc, managed)):
                counted = True
        return Node(name, span, frozenset(reads), writes, targets, counted)

    def _writes(self, name: str, fn: pysource.Function | None, span: Span | None) -> frozenset[str] | None:
        """The channels the node writes on every return; None (with SKM656) when some return is not a literal."""
        if fn is None:
            self.report(make(codes.UNKNOWN_WRITES,
                             f"the source of node `{name}` is not available: its writes are unknown",
                             span, label="writes unknown"))
            return None
        found = [pysource.dict_keys(v) for v in pysource.returns(fn)]
        sets = [s for s in found if s is not None]
        if len(sets) < len(found):
            self.report(make(codes.UNKNOWN_WRITES,
                             f"node `{name}` returns something other than a dict literal: its writes are unknown",
                             span, label="writes unknown",
                             notes=["it is assumed to write every channel"]))
            return None
        common = set.intersection(*sets) if sets else set()
        return frozenset(common & set(self.channels))

    def _targets(self, name: str, spec: Any, fn: pysource.Function | None, span: Span | None) -> tuple[str, ...]:
        """Successors: static and waiting edges, branch ends, Command destinations."""
        nodes = set(self.b.nodes)
        out: list[str] = [t for s, t in sorted(self.b.edges) if s == name]
        out += [t for sources, t in sorted(self.b.waiting_edges, key=str) if name in sources]
        for bname, branch in self.b.branches.get(name, {}).items():
            out += self._branch_targets(name, bname, branch, span)
        ends = spec.ends if spec.ends else ()
        out += list(ends.values() if isinstance(ends, dict) else ends)
        if fn is not None and not ends:
            gotos = pysource.gotos(fn)
            if gotos is None:
                self.report(make(codes.UNKNOWN_BRANCH_TARGETS,
                                 f"node `{name}` returns a `Command` whose `goto` is not a constant, "
                                 "and declares no destinations", span, label="destinations unknown",
                                 hint="annotate it `-> Command[Literal[...]]` or pass `destinations=` to add_node"))
                out += sorted(nodes) + [END]
            else:
                out += sorted(gotos)
        for t in out:
            if t not in nodes and t != END:
                self.report(make(codes.BRANCH_TARGET_MISMATCH,
                                 f"node `{name}` can go to `{t}`, which is not a node of the graph", span,
                                 label="unknown destination", hint=_near(t, nodes)))
        return tuple(dict.fromkeys(t for t in out if t in nodes or t == END))

    def _branch_targets(self, source: str, bname: str, branch: Any, span: Span | None) -> list[str]:
        func = _func(branch.path)
        fn = pysource.function(func) if func is not None else None
        where = fn.span if fn is not None else span
        literal = _literal_returns(func)
        if branch.ends is None:
            self.report(make(codes.UNKNOWN_BRANCH_TARGETS,
                             f"the router `{bname}` of `{source}` declares no destinations: every node is assumed",
                             where, label="destinations unknown"))
            return sorted(self.b.nodes) + [END]
        if literal is not None and set(branch.ends) != set(literal):
            missing = sorted(map(str, set(literal) - set(branch.ends)))
            if missing:
                self.report(make(codes.BRANCH_TARGET_MISMATCH,
                                 f"the router `{bname}` of `{source}` can return {', '.join(missing)}, "
                                 "which its path map does not handle", where, label="incomplete path map",
                                 hint="map every value of the router's Literal[...] return type"))
        return list(branch.ends.values())

    # ------------------------------------------------------------ the module

    def run(self) -> GraphImport:
        nodes = [self._node(name, spec) for name, spec in self.b.nodes.items()]
        for node in nodes:
            self.state_names[node.name] = ident(node.name, self.taken)
            self.names[self.state_names[node.name]] = node.name
        end = ident("END", self.taken)
        stop = ident("stop", self.taken)
        self.state_names[END] = end
        self.names[end] = "END"
        start_targets = [t for s, t in sorted(self.b.edges) if s == START]
        for bname, branch in self.b.branches.get(START, {}).items():
            start_targets += self._branch_targets(START, bname, branch, None)
        start_targets = list(dict.fromkeys(start_targets))
        if not start_targets:
            self.report(make(codes.NOT_A_GRAPH, "the graph has no entry point (no edge from START)",
                             notes=["add `builder.add_edge(START, \"first\")`"]))
            return GraphImport(None, self.diagnostics, self.names, tuple(nodes))
        written = set().union(*(nd.writes if nd.writes is not None else self.channels for nd in nodes))
        items: list[n.Stmt] = list(self._declarations(written))
        states: list[n.Stmt] = []
        tools: list[n.Stmt] = []
        if self.explicit_limit:
            nodes = [attrs.evolve(nd, counted=True) for nd in nodes]
        uses_counter = any(nd.counted for nd in nodes)
        entry = self.state_names[start_targets[0]] if len(start_targets) == 1 else ident("START", self.taken)
        if len(start_targets) > 1:
            self.names[entry] = "START"
            start = Node(START, None, frozenset(), frozenset(), tuple(start_targets), False)
            tools.append(self._tool(entry, start, written))
            states.append(self._state(entry, start, written, stop))
        for nd in nodes:
            skm = self.state_names[nd.name]
            tools.append(self._tool(skm, nd, written))
            states.append(self._state(skm, nd, written, stop))
        items += self.routes
        if uses_counter:
            items.append(n.CounterDecl("steps", RECURSION_LIMIT))
            self.names["steps"] = "the recursion limit"
        body = tools + items + [n.Start(entry)] + states + [n.Terminal(end, "success")]
        if any(not nd.targets for nd in nodes):
            body.append(n.Terminal(stop, "success", (n.Doc("a node without outgoing edges ended the run"),)))
        body.append(n.Fallback())
        machine = n.Machine(self.name, tuple(body))
        return GraphImport(n.Module((machine,)), self.diagnostics, self.names, tuple(nodes))

    def _declarations(self, written: set[str]) -> Iterable[n.Stmt]:
        reducers = self._reducers()
        separate_input = self.b.input_schema is not self.b.state_schema
        given = set(_hints(self.b.input_schema)) if separate_input else set()
        for key, t in self.channels.items():
            if key not in written:
                yield n.VarDecl("input", key, _type(t))
            elif key in reducers or key in given:
                yield n.VarDecl("var", key, _type(t), _default(t))  # a reducer starts empty; the caller gives inputs
            else:
                yield n.VarDecl("var", key, _type(t))

    def _tool(self, skm: str, nd: Node, written: set[str]) -> n.ToolDecl:
        results = [n.Param(w, _type(self.channels[w])) for w in self._written_by(nd, written)]
        if len(nd.targets) > 1:
            labels = tuple(self._label(t) for t in nd.targets)
            results.append(n.Param("next", n.EnumType(labels)))
        return n.ToolDecl(skm, (), tuple(results), span=nd.span)

    def _written_by(self, nd: Node, written: set[str]) -> list[str]:
        return sorted(nd.writes if nd.writes is not None else written)

    def _label(self, target: str) -> str:
        """The enum label of a successor: prefixed, since a variable of the same name would win over a label."""
        label = f"to_{self.state_names[target]}"
        while label in self.taken_vars:
            label += "_"
        return label

    def _state(self, skm: str, nd: Node, written: set[str], stop: str) -> n.State:
        items: list[n.StateItem] = []
        if nd.reads:
            items.append(n.Reads(tuple(sorted(nd.reads)), span=nd.span))
        items.append(n.Call(skm, (), span=nd.span))
        writes = [n.WriteItem(w) for w in self._written_by(nd, written)]
        route = ""
        if len(nd.targets) > 1:
            route = ident(f"{skm}_next", self.taken_vars)
            self.names[route] = f"the successor chosen by `{nd.name}`"
            self.routes.append(n.VarDecl("var", route, n.EnumType(tuple(self._label(t) for t in nd.targets))))
            writes.append(n.WriteItem(route, "next"))
        if writes:
            items.append(n.Writes(tuple(writes), span=nd.span))
        return n.State("tool", skm, tuple(items) + tuple(self._edges(nd, route, stop)), span=nd.span)

    def _edges(self, nd: Node, route: str, stop: str) -> list[n.Edge]:
        if not nd.targets:
            return [n.Edge(None, stop, span=nd.span)]
        edges: list[n.Edge] = []
        bounded = nd.counted and any(t != END for t in nd.targets)
        # Past the recursion limit no successor is taken (GraphRecursionError): every edge then needs its guard.
        last = len(nd.targets) if bounded and len(nd.targets) > 1 else len(nd.targets) - 1
        for i, t in enumerate(nd.targets):
            parts: list[n.Expr] = []
            if i < last:
                parts.append(n.BinOp("==", n.Name(route, span=nd.span), n.Name(self._label(t), span=nd.span),
                                     span=nd.span))
            counted = nd.counted and t != END
            if counted:
                parts.append(n.BinOp("<", n.Name("steps", span=nd.span), n.IntLit(RECURSION_LIMIT), span=nd.span))
            guard = parts[0] if len(parts) == 1 else n.BinOp("and", *parts, span=nd.span) if parts else None
            assigns = (n.Assign("steps", "+=", n.IntLit(1), span=nd.span),) if counted else ()
            edges.append(n.Edge(guard, self.state_names[t], assigns, span=nd.span))
        if edges[-1].guard is not None:
            edges.append(n.Edge(None, "fallback", span=nd.span))  # GraphRecursionError
        return edges



def _func(runnable: object) -> Callable[..., object] | None:
    """The Python function behind a LangGraph runnable (RunnableCallable, RunnableLambda) or a plain callable."""
    for attr in ("func", "afunc"):
        f = getattr(runnable, attr, None)
        if f is not None:
            return typing.cast(Callable[..., object], f)
    return runnable if callable(runnable) else None


def _literal_returns(func: Callable[..., object] | None) -> tuple[object, ...] | None:
    """The values of a `-> Literal[...]` return annotation, or None."""
    try:
        hint = typing.get_type_hints(func).get("return") if func is not None else None
    except Exception:  # noqa: BLE001 - unresolvable annotations mean "not annotated"
        return None
    if typing.get_origin(hint) is typing.Literal:
        return typing.get_args(hint)
    return None


def _hints(schema: object) -> dict[str, object]:
    if schema is None:
        return {}
    try:
        return typing.get_type_hints(schema, include_extras=True)
    except Exception:  # noqa: BLE001
        return dict(getattr(schema, "__annotations__", {}))


def _skm_type(hint: object) -> str:
    """A channel's annotation as a .skm type name: scalars kept, lists as `list[T]`, anything else `str`."""
    while typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    if hint in _SCALARS:
        return _SCALARS[hint]
    if hint is list or typing.get_origin(hint) is list:
        args = typing.get_args(hint)
        return f"list[{_SCALARS.get(args[0], 'str') if args else 'str'}]"
    return "str"


def _type(t: str) -> n.TypeExpr:
    if t.startswith("list["):
        return n.ListType(n.NamedType(t[5:-1]))
    return n.NamedType(t)


def _default(t: str) -> n.Expr:
    return n.ListLit(()) if t.startswith("list[") else _DEFAULTS[t]


def _near(name: str, nodes: set[str]) -> Suggestion | None:
    return did_you_mean(name, sorted(nodes))


# ---------------------------------------------------------------- checking


def check(graph: object, *, smt_timeout_ms: int = 2000) -> Checked:
    """Check a StateGraph (or compiled graph): the Python API `skillc.frontends.importers.langgraph.check(graph)`."""
    imported = import_graph(graph)
    if imported.module is None:
        return Checked(None, list(imported.diagnostics))
    remap = Remap(codes.UNBOUNDED_GRAPH_CYCLE, codes.MAYBE_UNSET_CHANNEL, imported.names)
    checked = check_module(imported.module, "<langgraph>", remap, smt_timeout_ms=smt_timeout_ms)
    spans = {nd.name: nd.span for nd in imported.nodes}
    joined = _joined(graph, imported.nodes)
    # The terminals the importer adds are not the graph's nodes: whether they are reached is SKM653's business.
    found = list(imported.diagnostics) + [_at_node(d, spans, imported.names) for d in checked.diagnostics
                                          if not (d.code == check_codes.UNREACHABLE_STATE and d.span is None)
                                          and not _after_join(d, joined)]
    found += list(_no_path_to_end(imported.nodes))
    return Checked(checked.machine, found)


def _joined(graph: object, nodes: tuple[Node, ...]) -> dict[str, set[str]]:
    """For each target of a waiting edge, the channels its sources write: all of them have run before it."""
    builder, _ = builder_of(graph)
    writes = {nd.name: set(nd.writes or ()) for nd in nodes}
    out: dict[str, set[str]] = {}
    for sources, target in builder.waiting_edges:
        out.setdefault(target, set()).update(*(writes.get(s, set()) for s in sources))
    return out


def _after_join(d: Diagnostic, joined: dict[str, set[str]]) -> bool:
    """A may-be-unset read that a waiting edge's sources write: the choice model of fan-out cannot see the join."""
    if d.code != codes.MAYBE_UNSET_CHANNEL:
        return False
    state, var = d.datum("state"), d.datum("var")
    return state is not None and var is not None and var in joined.get(state, set())


def _at_node(d: Diagnostic, spans: dict[str, Span | None], names: dict[str, str]) -> Diagnostic:
    """Checker findings without a span (the generated module has none) point at the node they name."""
    if d.span is not None:
        return d
    for _skm, original in names.items():
        if f"`{original}`" in d.message and spans.get(original) is not None:
            return attrs.evolve(d, span=spans[original])
    return d


def _no_path_to_end(nodes: tuple[Node, ...]) -> Iterable[Diagnostic]:
    """SKM653 (note) for each node from which END cannot be reached."""
    succ = {nd.name: set(nd.targets) for nd in nodes}
    reaches = {END}
    changed = True
    while changed:
        changed = False
        for name, targets in succ.items():
            if name not in reaches and targets & reaches:
                reaches.add(name)
                changed = True
    for nd in nodes:
        if nd.name not in reaches:
            why = "it has no outgoing edges" if not nd.targets else "no path from it leads to END"
            yield make(codes.NO_PATH_TO_END, f"END cannot be reached from node `{nd.name}`: {why}", nd.span,
                       label="never reaches END")


def load_spec(spec: str) -> tuple[object | None, Diagnostic | None]:
    """Import `module:attr` (the current folder first on the path); failures are SKM650.

    The module runs here: `skillc import langgraph` calls this only inside the box (`to_skm_confined`). A module
    that changes the recursion limit gets skillc's back once it is imported (the analysis needs its own), and an
    attribute whose reading raises (a property) is SKM650 like a missing one. Ctrl-C and SIGTERM are not a
    failed import: they go on to stop the command.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        return None, make(codes.GRAPH_IMPORT_FAILED, f"`{spec}` is not MODULE:ATTR",
                          hint="e.g. `my_agent.graph:builder`")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    limit = sys.getrecursionlimit()
    try:
        module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's module may raise anything, even SystemExit
        return None, make(codes.GRAPH_IMPORT_FAILED, f"importing `{module_name}` failed: {type(exc).__name__}: {exc}")
    finally:
        sys.setrecursionlimit(limit)
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return None, make(codes.GRAPH_IMPORT_FAILED, f"`{module_name}` has no attribute `{attr}`",
                              hint=_near(part, _public(obj)))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a property of the user's may raise anything
            return None, make(codes.GRAPH_IMPORT_FAILED, f"reading `{attr}` of `{module_name}` raised "
                              f"{type(exc).__name__}: {exc}")
        finally:
            sys.setrecursionlimit(limit)
    return obj, None


def _public(obj: object) -> set[str]:
    """The public names of an object (none when listing them raises: `dir` runs the object's code too)."""
    try:
        return {a for a in dir(obj) if not a.startswith("_")}
    except Exception:  # noqa: BLE001
        return set()


#: Seconds `skillc import langgraph` gives the user's module to import and be translated.
IMPORT_TIMEOUT_S = 120.0
#: The address space the box of an import may use (LangGraph and its dependencies are large).
IMPORT_MEMORY_MB = 4096


def to_skm_confined(spec: str, *, folder: str | None = None,
                    timeout_s: float = IMPORT_TIMEOUT_S) -> tuple[str | None, list[Diagnostic]]:
    """`skillc import langgraph`: the module imported, read back or translated in a box (`skillc.sandbox`), with
    `folder` (default: the current one) first on its path; the .skm text and every finding.

    The box has no network, a minimal environment, a time and memory limit and (with Landlock) writes only in its
    scratch folder and reads only the system, Python, skillc and `folder`. A module that hangs or leaves a
    thread running is SKM940 at the limit, one killed by a limit SKM941; Ctrl-C and SIGTERM stop the command.

    A module this process has imported already (an API caller that built the graph itself) is read here: its
    code has run in this process, and the box would see a fresh copy instead of the caller's objects.
    """
    where = os.path.abspath(folder if folder is not None else os.getcwd())
    if spec.partition(":")[0] in sys.modules:
        return _graph_box.translate(spec, where)
    home = skillc_home()  # skillc itself, as this Python imports it
    with tempfile.TemporaryDirectory(prefix="skillc-import-") as scratch:
        try:
            box = run_confined([sys.executable, "-I", "-m", "skillc.frontends.importers._graph_box", where, spec],
                               scratch=Path(scratch), readable=[where, home], timeout_s=timeout_s,
                               memory_mb=IMPORT_MEMORY_MB, env={"PYTHONDONTWRITEBYTECODE": "1"})
        except OSError as exc:
            return None, [make(sandbox_codes.SANDBOX_START_FAILED, f"the box for importing `{spec}` could not "
                                                                   f"start: {exc.strerror or exc}")]
    if box.timed_out:
        return None, [make(sandbox_codes.CONFINED_TIMEOUT, f"importing and reading `{spec}` did not finish within "
                                                           f"{timeout_s:g} s; it was stopped",
                           notes=["a module that starts a thread which never ends, or loops at import time, "
                                  "runs past the limit"])]
    try:
        answer = json.loads(box.stdout.decode("utf-8"))
        if "internal" in answer:
            raise RuntimeError(str(answer["internal"]))
        return _graph_box.from_json(answer)
    except (ValueError, KeyError, TypeError, AttributeError):
        said = box.stderr.decode("utf-8", errors="replace").strip().splitlines()
        code = sandbox_codes.CONFINED_LIMIT if box.killed else codes.GRAPH_IMPORT_FAILED
        return None, [make(code, f"importing `{spec}` gave no answer: {box.why()}",
                           notes=[said[-1][:300]] if said else [])]


def to_skm(spec: str) -> tuple[str | None, list[Diagnostic]]:
    """The `.skm` text of the graph at `module:attr`, with every finding; None when it is not a graph."""
    obj, problem = load_spec(spec)
    if problem is not None:
        return None, [problem]
    imported = import_graph(obj, spec.partition(":")[2].split(".")[-1], explicit_limit=True)
    if imported.module is None:
        return None, imported.diagnostics
    checked = check(obj)
    return (print_module(imported.module) if checked.machine is not None else None), checked.diagnostics


__all__ = ["GraphImport", "Node", "builder_of", "check", "import_graph", "load_spec", "to_skm", "to_skm_confined"]

