"""Success is proved by effects: a `success` terminal's evidence comes from tool states or inputs, not model text.

In a machine that acts (one with a tool state), every reachable `success`
terminal needs at least one evidence item that is *effect-proved* on every
path into it:

* a world predicate (`requires exists("report.md")`, `file("a.txt") == x`),
  which the runtime evaluates over the work folder on arrival;
* a variable whose value, on every path, was last written by a tool state
  (`writes status = exit_code`), or is an input or a place never overwritten;
* a predicate over such variables only (`status == 0`; a constant proves nothing).

A value an edge computes from effect-proved values only is effect-proved
(`-> done { code = str(status) }`); one a model or judge state wrote is model
text, and so is a constant. Rejected (SKM270, a warning; an error under
`--strict`): `terminal done: success { requires answer }` where `answer` is a
model's reply, or a success terminal with no evidence at all. The witness is a
path on which nothing the terminal requires was produced by an effect, with the
state that last wrote each item. A machine without tool states cannot act, so its
variables are its deliverable and it is not checked; nor are a fragment's exits,
nor a terminal that no path through a model or judge state reaches (tools and
inputs alone decide that the run gets there: an imported Step Functions graph).

Effect-proved sets are a must-analysis (a greatest fixed point, intersected
where paths meet), like definite assignment; the transfer of an edge is
conjunctive, so the fixed point is exact per variable.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence

import attrs

from skillc.check import codes
from skillc.check.context import CheckContext, memo
from skillc.check.dataflow import dataflow
from skillc.check.graph import reachable, shared_successors, show_path
from skillc.diagnostics import Diagnostic, make
from skillc.ir import expr as ir
from skillc.ir.machine import Edge, Machine, State
from skillc.ir.printexpr import show_expr
from skillc.ir.toolkit import WORLD_FUNCTIONS

#: States × proved-sets explored when looking for a witness path before settling for a plain path.
WITNESS_BUDGET = 20_000


@attrs.frozen(hash=False)
class Effects:
    """The solved analysis: variable bits, and the effect-proved set at the entry of each reached state."""

    bits: dict[str, int]
    proved: dict[str, int]
    start_mask: int

    def has(self, mask: int, name: str) -> bool:
        """True when `name` is effect-proved in `mask`."""
        bit = self.bits.get(name)
        return bit is not None and bool(mask >> bit & 1)


def _after_state(st: State, mask: int, bits: dict[str, int]) -> int:
    """The proved set once `st` has run: its writes are killed, then a tool state's result bindings are proved."""
    for var in st.writes:
        if var in bits:
            mask &= ~(1 << bits[var])
    if st.kind == "tool":
        for var, _ in st.bindings:
            if var in bits:
                mask |= 1 << bits[var]
    return mask


def _along_edge(e: Edge, mask: int, bits: dict[str, int]) -> int:
    """The proved set after an edge's assignments, in order: `x = v` is proved when `v` reads only proved
    variables (and at least one); `x += v` when `x` and `v`'s variables are."""
    for a in e.assigns:
        if a.var not in bits:
            continue
        used = ir.variables(a.value)
        proved = all(v in bits and mask >> bits[v] & 1 for v in used)
        proved = proved and (bool(used) if a.op == "=" else bool(mask >> bits[a.var] & 1))
        mask = mask | 1 << bits[a.var] if proved else mask & ~(1 << bits[a.var])
    return mask


def solve(m: Machine) -> Effects:
    """The effect-proved set at the entry of every state reachable from `start`."""
    bits = {name: i for i, name in enumerate(m.variables)}
    start_mask = 0
    for name, v in m.variables.items():
        if v.kind in ("input", "place"):
            start_mask |= 1 << bits[name]
    everything = (1 << len(bits)) - 1
    proved: dict[str, int] = {m.start: start_mask} if m.start in m.states else {}
    queue = deque(proved)
    while queue:
        q = queue.popleft()
        st = m.states[q]
        after = _after_state(st, proved[q], bits)
        for e in st.edges:
            if e.target not in m.states:
                continue
            new = _along_edge(e, after, bits) & proved.get(e.target, everything)
            if e.target not in proved or new != proved[e.target]:
                proved[e.target] = new
                queue.append(e.target)
    return Effects(bits, proved, start_mask)


def is_world(e: ir.Expr) -> bool:
    """True when the expression looks at the world (`exists`, `file`)."""
    return any(isinstance(x, ir.Call) and x.func in WORLD_FUNCTIONS for x in ir.walk(e))


def _item_proved(effects: Effects, mask: int, item: str | ir.Expr) -> bool:
    """One evidence item is effect-proved under `mask`."""
    if isinstance(item, str):
        return effects.has(mask, item)
    if is_world(item):
        return True
    used = ir.variables(item)
    return bool(used) and all(effects.has(mask, v) for v in used)


def _items(st: State) -> list[str | ir.Expr]:
    return [*st.requires, *st.predicates]


def _show(item: str | ir.Expr) -> str:
    return f"`{item}`" if isinstance(item, str) else f"`{show_expr(item)}`"


_Node = tuple[str, int, bool]  # a state, the proved set on entry, and whether a model or judge ran before


def _witness_path(m: Machine, effects: Effects, target: str, items: Sequence[str | ir.Expr]) -> list[str] | None:
    """A path from `start` to `target` on which no item is effect-proved, through a model or judge state where
    there is one (a search over states × proved sets)."""
    start: _Node = (m.start, effects.start_mask, False)
    parent: dict[_Node, _Node | None] = {start: None}
    queue = deque([start])
    fallback: _Node | None = None
    while queue and len(parent) <= WITNESS_BUDGET:
        node = queue.popleft()
        q, mask, thought = node
        if q == target:
            if not any(_item_proved(effects, mask, i) for i in items):
                if thought:
                    return _unwind(parent, node)
                fallback = fallback or node
            continue
        st = m.states[q]
        after = _after_state(st, mask, effects.bits)
        for e in st.edges:
            nxt = (e.target, _along_edge(e, after, effects.bits), thought or st.kind in ("model", "judge"))
            if e.target in m.states and nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return _unwind(parent, fallback) if fallback is not None else None


def _unwind(parent: dict[_Node, _Node | None], node: _Node) -> list[str]:
    path = []
    at: _Node | None = node
    while at is not None:
        path.append(at[0])
        at = parent[at]
    return path[::-1]


def _last_writers(m: Machine, path: list[str], names: Sequence[str]) -> list[str]:
    """For each variable, who last wrote it along `path` (before the last state): a state, an edge, or the start."""
    writer: dict[str, str] = {}
    for i, q in enumerate(path[:-1]):
        st = m.states[q]
        for var in st.writes:
            writer[var] = f"{st.kind} state `{q}`"
        edge = next((e for e in st.edges if e.target == path[i + 1]), None)
        for a in edge.assigns if edge is not None else ():
            writer[a.var] = f"the edge `{q} -> {path[i + 1]}`"
    out = []
    for name in names:
        v = m.variables.get(name)
        if name in writer:
            out.append(f"`{name}` was last written by {writer[name]}")
        elif v is not None and v.is_counter:
            out.append(f"`{name}` is a counter")
        elif v is not None and v.init is not None:
            out.append(f"`{name}` holds its initial value")
    return out


def check_effects(m: Machine, context: CheckContext | None = None) -> Iterator[Diagnostic]:
    """Every reachable success terminal of a machine that acts rests on at least one effect-proved item (SKM270)."""
    if not any(st.kind == "tool" for st in m.states.values()):
        return
    effects = memo(context, "effects", lambda: solve(m))
    flow = dataflow(m, context)
    thinkers = [q for q in effects.proved if m.states[q].kind in ("model", "judge")]
    # what a path through a model or judge state reaches
    after_thought = reachable(shared_successors(m, context), thinkers)
    for name, st in m.states.items():
        if st.kind != "terminal" or st.outcome != "success" or name in m.exits or name not in effects.proved:
            continue
        if name not in after_thought:
            continue  # tools and inputs alone decide that a run gets here
        used = list(dict.fromkeys([*st.requires, *(v for p in st.predicates for v in sorted(ir.variables(p)))]))
        if name in flow.reached and flow.missing(used, flow.defined[name]):
            continue  # evidence that may be unassigned is SKM213 already
        items = _items(st)
        mask = effects.proved[name]
        if any(_item_proved(effects, mask, i) for i in items):
            continue
        path = _witness_path(m, effects, name, items)
        witness = []
        if path is not None:
            witness.append(f"a run reaches `{name}` along {show_path(path)}")
            witness += _last_writers(m, path, used)
        if not items:
            message = f"success terminal `{name}` requires no evidence, so nothing shows that the run had an effect"
            label = "no evidence"
        else:
            verb = " is" if len(items) == 1 else " are"
            message = (f"success terminal `{name}` rests on model text only: " + ", ".join(_show(i) for i in items)
                       + verb + " not produced by a tool state or an input on every path")
            label = "no effect proves this"
        yield make(codes.SUCCESS_WITHOUT_EFFECT, message, st.span, label=label, witness=witness,
                   hint="add `requires exists(\"…\")` for the deliverable, or route it through a tool state and "
                   "require what the tool returned (e.g. `requires status == 0`)")


__all__ = ["Effects", "check_effects", "is_world", "solve"]
