"""Keeping type-keyed dispatch tables complete: each concrete node class of a tree is listed or deliberately not."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping


def node_classes(base: type) -> set[type]:
    """The concrete node classes of a tree: classes of `base`'s module below `base` that nothing there extends.

    Only classes the module binds to their name count: `attrs` replaces each
    slotted class with a new one, and the discarded original lingers among
    `__subclasses__()` until it is garbage-collected.
    """
    module = sys.modules[base.__module__]
    found: set[type] = set()
    todo: list[type] = [base]
    sub: type
    while todo:
        for sub in todo.pop().__subclasses__():
            if getattr(module, sub.__name__, None) is sub and sub not in found:
                found.add(sub)
                todo.append(sub)
    return {c for c in found if not any(issubclass(o, c) and o is not c for o in found)}


def assert_complete(table: Mapping[type, object], base: type, falls_back: Iterable[type] = ()) -> None:
    """`table` lists every concrete class of `base`'s tree except exactly `falls_back`, and nothing else."""
    classes, listed, rest = node_classes(base), set(table), set(falls_back)
    assert classes, f"no node classes found under {base.__name__}"
    missing = classes - listed - rest
    assert not missing, f"no entry for {sorted(c.__name__ for c in missing)}"
    assert not listed & rest, f"listed and also said to fall back: {sorted(c.__name__ for c in listed & rest)}"
    assert listed <= classes, f"not node classes of the tree: {sorted(c.__name__ for c in listed - classes)}"
    assert rest <= classes, f"not node classes of the tree: {sorted(c.__name__ for c in rest - classes)}"
