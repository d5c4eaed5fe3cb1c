"""Review: no path to success around what the offline compiler could not encode.

Where the structural compiler meets a construct it cannot encode (a jump to a step that does not
exist, code `bash` cannot run, a flow diagram whose nodes name no step, "at any point … return to"
a phase it cannot find), the graph phase records the state it met it at (`DMachine.unencoded`).
This phase makes every run through such a state end in the terminal `review_required` (outcome
`partial`) instead of a success terminal: each edge leaving a flagged state sets the flag
`needs_review`, and each edge into a success terminal first goes to `review_required` when the flag
is set. The run still does the rest of the work; it never reports success for it. The build reports
each construct (SKM320), and `--strict` refuses the build (SKM321).
"""

from __future__ import annotations

import attrs

from skillc.frontends.markdown.draft import DEdge, DMachine
from skillc.syntax import nodes as n

FLAG = "needs_review"
TERMINAL = "review_required"


@attrs.frozen
class Unencoded:
    """A construct the compiler could not encode: what it is, its lines, and the state it was met at."""

    what: str
    start: int
    end: int
    state: str


def mark(d: DMachine) -> list[Unencoded]:
    """Route every run through a flagged state to `review_required`; the constructs, in document order."""
    if not d.review:
        return []
    flag = d.var_names.fresh(FLAG)
    d.review_flag = flag
    d.vars[flag] = n.NamedType("bool")
    d.inits[flag] = n.BoolLit(False)
    found = []
    for name, reasons in d.review.items():
        s = d.states[name]
        for e in s.edges:
            e.assigns = (*e.assigns, n.Assign(flag, "=", n.BoolLit(True)))
        found += [Unencoded(what, c.start, c.end, name) for c, what in reasons]
    found.sort(key=lambda u: (u.start, u.end))
    review = d.terminal(TERMINAL, "partial")
    t = d.terminals[review]
    t.docs.append("Review required: the offline compiler could not encode " +
                  "; ".join(f"{u.what} (lines {u.start}-{u.end})" if u.end != u.start else f"{u.what} (line {u.start})"
                            for u in found) + ". A person must check what the run did there.")
    successes = {name for name, term in d.terminals.items() if term.outcome == "success"}
    for s in d.states.values():
        edges: list[DEdge] = []
        for e in s.edges:
            if e.target in successes:
                flagged = n.Name(flag) if e.guard is None else n.BinOp("and", e.guard, n.Name(flag))
                edges.append(DEdge(flagged, review, e.assigns, e.auto))
            edges.append(e)
        s.edges = edges
    return found


__all__ = ["FLAG", "TERMINAL", "Unencoded", "mark"]
