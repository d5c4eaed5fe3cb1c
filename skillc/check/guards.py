"""Guard analysis with Z3, per state, under the variables' types (first-match semantics).

Reported:
- SKM240 dead edge: the guard is unsatisfiable, so the edge never fires;
- SKM241 shadowed edge: every case the guard admits is taken by an earlier edge
  (the witness satisfies the guard, and the secondary label names the earlier
  edge that wins); a default edge after guards that cover every case is shadowed too;
- SKM231 judge coverage: labels of a judge that lead to the same edge in every
  case, so no guard tells them apart (unless another state reads the label);
- SKM242 (note): a guard uses a construct the solver treats as an opaque value;
- SKM243: the solver answered `unknown` (timeout) for a question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import attrs

from skillc.check import codes
from skillc.check.context import UNDECIDED, CheckContext, timeout_ms
from skillc.diagnostics import Diagnostic, Label, make
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import Edge, Machine, State

if TYPE_CHECKING:
    import z3

    from skillc.check.smt import Encoder, Solver

#: Up to this many edges a state's shadowing questions take the disjunction of the earlier guards (cheap for few);
#: past it, a second solver that keeps their negations (linear in the edges: a 500-rule ASL Choice).
_FEW_EDGES = 16

# One verdict per edge: ("dead" | "shadowed" | "unknown" | "ok", witness lines, index of the shadowing edge).
Verdict = tuple[str, list[str], int | None]


def _unknown(st: State, e: Edge, what: str) -> Diagnostic:
    return make(codes.SOLVER_UNKNOWN, f"the solver could not decide whether {what} (edge {e.index + 1} of `{st.name}`)",
                e.span, label="undecided", hint="simplify the guard, or raise the SMT timeout", data=UNDECIDED)


def check_guards(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Dead and shadowed edges."""
    if not any(e.guard is not None for e in m.edges()):
        return  # nothing to ask the solver (and no need to load it)
    from skillc.check.smt import Encoder, canonical_key, solver

    timeout = timeout_ms(context)
    kept = context.kept if context is not None else None
    enc = Encoder(m)  # this check's own: the SKM242 notes below are the opaque parts of its questions
    s = solver(timeout)
    cache: dict[str, list[Verdict]] = {}
    reused: list[ir.Expr] = []  # the opaque places of states whose analysis was kept from an earlier check
    for st in m.states.values():
        if all(e.guard is None for e in st.edges):
            continue
        # A kept analysis is keyed by what its verdicts and witnesses depend on: the guards with their variables'
        # names, types and counter bounds, and the timeout.
        exact = f"guards|{timeout}|{canonical_key(m, (e.guard for e in st.edges), keep_names=True)}" \
            if kept is not None else ""
        hit = kept.get(exact) if kept is not None else None
        if isinstance(hit, _KeptState):
            moved = _places(st, hit.opaque)
            if moved is not None:
                reused += moved
                yield from _report(st, list(hit.verdicts))
                continue
        before = len(enc.opaque_exprs)
        # States whose guards differ only in variable names ask the solver the same questions;
        # answers without a witness are reused (a shadowed edge is re-analysed for its witness).
        key = canonical_key(m, (e.guard for e in st.edges))
        verdicts = cache.get(key)
        if verdicts is None or any(v[0] == "shadowed" for v in verdicts):
            verdicts = _analyse_state(st, enc, s, timeout)
            cache[key] = verdicts
        else:  # still encode, as the analysis would: notes about opaque parts are per place
            live = _live(st)
            enc.begin(e.guard for e in live)
            for e in live:
                if e.guard is not None:
                    enc.fires(e.guard)
        if kept is not None and all(v[0] != "unknown" for v in verdicts):
            positions = _positions(st, enc.opaque_exprs[before:])
            if positions is not None:  # an answer the solver gave up on is asked again next time
                kept.put(exact, _KeptState(tuple(verdicts), positions))
        yield from _report(st, verdicts)
    # Report each place once, and only the outermost of nested opaque parts (`str(a.b)` holds `a.b`).
    opaque: list[ir.Expr] = [*enc.opaque_exprs, *reused]
    places = sorted({(x.span.source.path, x.span.start, -x.span.end): x.span for x in opaque
                     if x.span is not None}.items())
    outer_end: tuple[str | None, int] = (None, -1)
    for (path, start, neg_end), span in places:
        if outer_end[0] == path and start < outer_end[1]:
            continue
        outer_end = (path, -neg_end)
        yield make(codes.OPAQUE_IN_GUARD, "the guard analysis treats this as an opaque value", span,
                   label="not modelled by the solver",
                   notes=["dead-edge and shadowing results for guards using it are conservative"])


@attrs.frozen
class _KeptState:
    """One state's guard analysis, kept across checks: its verdicts and where its opaque parts are (edge index,
    node index in `ir.walk` order of that edge's guard), since their spans move with the text."""

    verdicts: tuple[Verdict, ...]
    opaque: tuple[tuple[int, int], ...]


def _positions(st: State, opaque: list[ir.Expr]) -> tuple[tuple[int, int], ...] | None:
    """Where each opaque part is in the state's guards (None when one is not found there: nothing is kept)."""
    index = {id(node): (e.index, k) for e in st.edges if e.guard is not None
             for k, node in enumerate(ir.walk(e.guard))}
    found = [index.get(id(x)) for x in opaque]
    return None if any(f is None for f in found) else tuple(f for f in found if f is not None)


def _places(st: State, positions: tuple[tuple[int, int], ...]) -> list[ir.Expr] | None:
    """The opaque parts at `positions` in this text's guards (None when the guards do not have them)."""
    walked: dict[int, list[ir.Expr]] = {}  # each edge's guard walked once
    out = []
    for edge, k in positions:
        if edge not in walked:
            guard = st.edges[edge].guard if edge < len(st.edges) else None
            walked[edge] = list(ir.walk(guard)) if guard is not None else []
        if k >= len(walked[edge]):
            return None
        out.append(walked[edge][k])
    return out


def _live(st: State) -> tuple[Edge, ...]:
    """The edges up to the first default: those after it are SKM203 already, and never asked about."""
    first_default = next((e.index for e in st.edges if e.guard is None), len(st.edges) - 1)
    return st.edges[: first_default + 1]


def _analyse_state(st: State, enc: Encoder, s: Solver, timeout: int) -> list[Verdict]:
    """For each edge: ("dead" | "shadowed" | "unknown" | "ok", witness lines, index of the shadowing edge).

    Whether an edge is shadowed is first asked of a second solver that holds the negation of every earlier guard,
    asserted one edge at a time, so a state's questions grow linearly with its edges; only when it is undecided
    (Z3 leaves some asserted negated string predicates open) is the question asked as before, with the disjunction
    of the earlier guards, which grows with their square. Both answers are the solver's, so the verdicts are too."""
    import z3  # optional extra, loaded only for machines with guards (start-up)

    from skillc.check.smt import describe_model, solver

    out: list[Verdict] = []
    previous: list[z3.BoolRef] = []
    live = _live(st)
    enc.begin(e.guard for e in live)
    guards = [z3.BoolVal(True) if e.guard is None else enc.fires(e.guard) for e in live]
    s.push()
    s.add(*enc.domain)
    uncovered: Solver | None = None  # the cases no earlier edge takes: the domain and each earlier guard negated
    if len(live) > _FEW_EDGES:  # a solver of its own costs more than the disjunction of a few guards
        uncovered = solver(timeout)
        uncovered.add(*enc.domain)
    for e, g in zip(live, guards):
        verdict = _verdict(e, g, s, uncovered, previous)
        if verdict[0] == "shadowed" and e.guard is not None:
            winner, model = _first_cover(s, g, previous)
            witness: list[str] = []
            if winner is not None and model is not None:
                names = ir.variables(e.guard) | ir.variables(st.edges[winner].guard)
                witness = describe_model(model, enc, names)
            verdict = ("shadowed", witness, winner)
        out.append(verdict)
        previous.append(g)
        if uncovered is not None:
            uncovered.add(z3.Not(g))
    s.pop()
    return out


def _verdict(e: Edge, g: z3.BoolRef, s: Solver, uncovered: Solver | None,
             previous: list[z3.BoolRef]) -> Verdict:
    """One edge's verdict, without the witness of a shadowed one: dead (its guard cannot hold), shadowed (no case
    it admits is left by the earlier edges), unknown (the solver gave up) or ok."""
    import z3  # lazy: see _analyse_state

    if e.guard is not None:
        r = s.check(g)
        if r == z3.unsat:
            return ("dead", [], None)
        if r == z3.unknown:
            return ("unknown", [], None)
    if not previous:
        return ("ok", [], None)
    r = uncovered.check(g) if uncovered is not None else z3.unknown
    if r == z3.unknown:
        r = s.check(g, z3.Not(z3.Or(previous)))
    if r == z3.unsat:
        return ("shadowed", [], None)
    return ("unknown", [], None) if r == z3.unknown else ("ok", [], None)


def _first_cover(s: Solver, g: z3.BoolRef, previous: list[z3.BoolRef]) -> tuple[int | None, z3.ModelRef | None]:
    """The first earlier edge j such that edges 0..j take every case of `g`, and a case edge j takes."""
    import z3  # lazy: see _analyse_state

    for j in range(len(previous)):
        if s.check(g, z3.Not(z3.Or(previous[: j + 1]))) == z3.unsat:
            cond = [g, previous[j]] + ([z3.Not(z3.Or(previous[:j]))] if j else [])
            return j, (s.model() if s.check(*cond) == z3.sat else None)
    return None, None


def _report(st: State, verdicts: list[Verdict]) -> Iterator[Diagnostic]:
    for e, (verdict, witness, winner) in zip(st.edges, verdicts):
        if verdict == "dead":
            yield make(codes.DEAD_EDGE, f"edge {e.index + 1} of `{st.name}` can never fire: its guard is unsatisfiable",
                       e.guard.span if e.guard is not None else e.span, label="always false",
                       hint="fix the guard or remove the edge")
        elif verdict == "shadowed":
            secondary = []
            if winner is not None:
                w = st.edges[winner]
                span = w.guard.span if w.guard is not None else w.span
                if span is not None:
                    secondary = [Label(span, "this earlier guard takes the witness" if winner else
                                       "this earlier guard already covers it")]
            if e.guard is None:
                yield make(codes.SHADOWED_EDGE, f"the default edge of `{st.name}` can never fire: the guards above "
                           "cover every case", e.span, label="never taken",
                           hint="make the last guarded edge the default (drop its guard), or narrow the guards")
            else:
                yield make(codes.SHADOWED_EDGE, f"edge {e.index + 1} of `{st.name}` can never fire: earlier edges take "
                           "every case it admits", e.guard.span, label="shadowed", secondary=secondary,
                           witness=witness, hint="reorder the edges or narrow the earlier guard")
        elif verdict == "unknown":
            yield _unknown(st, e, "this edge can fire")


def check_judge_coverage(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Labels of a judge that route identically in every case."""
    readers: dict[str, set[str]] = {}
    for other in m.states.values():
        for name in {*other.reads, *(v for e in other.edges for v in ir.variables(e.guard))}:
            readers.setdefault(name, set()).add(other.name)
    for st in m.states.values():
        if st.kind != "judge" or len(st.writes) != 1:
            continue
        var = m.variables[st.writes[0]]
        if not isinstance(var.type, T.EnumT) or len(var.type.labels) < 2:
            continue
        if readers.get(var.name, set()) - {st.name}:
            continue  # another state uses the label, so telling the labels apart can matter there
        labels = sorted(var.type.labels)
        plain = _label_routes(st, var.name, labels)
        if plain is not None:  # every guard is `label == L` or the default: routes are constants, no solver needed
            # the lambda is called only inside _same_route_groups, within this iteration
            classes = _same_route_groups(labels, lambda i, j: plain[i] == plain[j])  # noqa: B023
        else:
            found = _solver_routes(m, st, var.name, labels, timeout_ms(context))
            if found is None:
                continue  # encoding the guards created opaque terms over the label
            classes = found
        for group in classes:
            names = ", ".join(f"`{x}`" for x in group)
            yield make(codes.INDISTINCT_LABELS, f"judge `{st.name}`: labels {names} of `{var.name}` are routed the "
                       "same way in every case", st.span, label="no guard tells them apart",
                       hint=f"add a guard on `{var.name} == {group[0]}` (or merge the labels)")


def _solver_routes(m: Machine, st: State, label: str, labels: list[str], timeout: int) -> list[list[str]] | None:
    """Classes of labels the solver proves routed identically (None when an opaque term hides the label)."""
    import z3  # lazy: see _analyse_state

    from skillc.check.smt import Encoder, solver

    enc = Encoder(m)  # one question, its own encoder
    enc.begin(e.guard for e in st.edges)
    term = enc.var(label).term
    guards = [z3.BoolVal(True) if e.guard is None else enc.fires(e.guard) for e in st.edges]
    if any(label in ir.variables(o) for o in enc.opaque_exprs if _in_state(o, st)):
        return None

    def route(i: int) -> z3.ArithRef:
        out = z3.IntVal(len(guards))
        for k in range(len(guards) - 1, -1, -1):
            out = z3.If(z3.substitute(guards[k], (term, z3.IntVal(i))), z3.IntVal(k), out)
        return out

    routes = [route(i) for i in range(len(labels))]
    s = solver(timeout)
    s.add(*enc.domain)
    return _same_route_groups(labels, lambda i, j: bool(s.check(routes[i] != routes[j]) == z3.unsat))


def _label_routes(st: State, var: str, labels: list[str]) -> list[int] | None:
    """The edge each label takes when every guard is `var == L` (either way round) or absent; else None."""
    tests: list[str | None] = []
    for e in st.edges:
        g = e.guard
        if g is None:
            tests.append(None)
        elif isinstance(g, ir.BinOp) and g.op == "==" and isinstance(g.left, (ir.Var, ir.Label)) \
                and isinstance(g.right, (ir.Var, ir.Label)) and type(g.left) is not type(g.right):
            v, lab = (g.left, g.right) if isinstance(g.left, ir.Var) else (g.right, g.left)
            assert isinstance(v, ir.Var) and isinstance(lab, ir.Label)
            if v.name != var:
                return None
            tests.append(lab.value)
        else:
            return None
    return [next((k for k, t in enumerate(tests) if t is None or t == label), len(tests)) for label in labels]


def _same_route_groups(labels: list[str], same: Callable[[int, int], bool]) -> list[list[str]]:
    """Classes of two or more labels that `same(i, j)` says are routed identically."""
    classes: list[list[str]] = []
    assigned: set[int] = set()
    for i in range(len(labels)):
        if i in assigned:
            continue
        group = [i]
        for j in range(i + 1, len(labels)):
            if j not in assigned and same(i, j):
                group.append(j)
                assigned.add(j)
        if len(group) > 1:
            classes.append([labels[k] for k in group])
    return classes


def _in_state(e: ir.Expr, st: State) -> bool:
    span = e.span
    return span is not None and st.span is not None and span.source is st.span.source \
        and st.span.start <= span.start < st.span.end
