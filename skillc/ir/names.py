"""What a name may be: words a variable cannot take, and a fresh name beside taken ones."""

from __future__ import annotations

from collections.abc import Container

# Words an expression reads as literals or operators; a variable with one of these names could never be read.
RESERVED_VARIABLES = frozenset({"true", "false", "none", "and", "or", "not", "in"})
# The places a run allows (`skill_dir`, `workdir`): predeclared, read-only names (see `skillc.ir.toolkit.PLACES`).
PLACE_NAMES = frozenset({"skill_dir", "workdir"})


def unique(base: str, taken: Container[str], start: int = 2) -> str:
    """`base`, or `base_<start>`, `base_<start+1>`, … (from `base_2` by default): the first that is not taken.

    A caller that never frees a name may pass the suffix after the last one it got, to skip those it knows are taken.
    """
    name, k = base, start
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


__all__ = ["PLACE_NAMES", "RESERVED_VARIABLES", "unique"]
