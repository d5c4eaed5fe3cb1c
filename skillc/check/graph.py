"""Graph algorithms over a machine's states: reachability, shortest paths, SCCs.

All of them are iterative (no recursion), linear in states + edges, and work on
an explicit successor map so that checks can remove states or edges first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable

from skillc.check.context import CheckContext, memo
from skillc.ir.machine import Edge, Machine

Succ = dict[str, list[str]]


def successors(m: Machine, keep_edge: Callable[[Edge], bool] | None = None) -> Succ:
    """State → targets of its edges (in edge order, duplicates removed)."""
    out: Succ = {}
    for name, st in m.states.items():
        targets = []
        seen = set()
        for e in st.edges:
            if keep_edge is not None and not keep_edge(e):
                continue
            if e.target in m.states and e.target not in seen:
                seen.add(e.target)
                targets.append(e.target)
        out[name] = targets
    return out


def shared_successors(m: Machine, context: CheckContext | None) -> Succ:
    """`successors(m)`, built once per check and shared by the checks that read it (none changes it)."""
    return memo(context, "successors", lambda: successors(m))


def reachable(succ: Succ, roots: Iterable[str], blocked: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """States reachable from `roots` without entering a blocked state."""
    seen = {r for r in roots if r not in blocked}
    queue = deque(seen)
    while queue:
        s = queue.popleft()
        for t in succ.get(s, ()):
            if t not in seen and t not in blocked:
                seen.add(t)
                queue.append(t)
    return seen


def shortest_path(succ: Succ, start: str, goal: Callable[[str], bool],
                  blocked: frozenset[str] | set[str] = frozenset()) -> list[str] | None:
    """A shortest path from `start` to a state satisfying `goal`, avoiding blocked states."""
    if start in blocked:
        return None
    if goal(start):
        return [start]
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        for t in succ.get(s, ()):
            if t in parent or t in blocked:
                continue
            parent[t] = s
            if goal(t):
                path = [t]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])  # type: ignore[arg-type]
                return path[::-1]
            queue.append(t)
    return None


def predecessors(succ: Succ) -> Succ:
    """The reverse graph."""
    pred: Succ = {s: [] for s in succ}
    for s, ts in succ.items():
        for t in ts:
            pred.setdefault(t, []).append(s)
    return pred


def sccs(nodes: Iterable[str], succ: Succ) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative), restricted to `nodes`."""
    nodes = list(nodes)
    inside = set(nodes)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    result: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter([t for t in succ.get(root, ()) if t in inside]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter([t for t in succ.get(w, ()) if t in inside])))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                result.append(comp[::-1])
    return result


def is_cyclic(component: list[str], succ: Succ) -> bool:
    """True for a component with more than one state or a self-loop."""
    return len(component) > 1 or component[0] in succ.get(component[0], ())


def cycle_through(start: str, component: set[str], succ: Succ) -> list[str]:
    """A shortest cycle from `start` back to itself inside a component (`[start]` if none)."""
    parent: dict[str, str] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        s = queue.popleft()
        for t in succ.get(s, ()):
            if t not in component:
                continue
            if t == start:
                path = [s]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if t not in seen:
                seen.add(t)
                parent[t] = s
                queue.append(t)
    return [start]


def show_path(path: list[str]) -> str:
    """`a -> b -> c`."""
    return " -> ".join(path)
