"""Identifiers from prose: short snake_case names for states, variables and labels."""

from __future__ import annotations

import re

STOP = frozenset("""
a an the to of for and or with in on at by from into onto your you we our this that these those it its their
is are be been was were will would can could should may might must shall do does did not no any all each every
some then than so if when whether while as about above below after before under over up down out off only just
also very more most less such there here which who whom what where how why i me my he she they them his her
""".split())
KEYWORDS = frozenset("""
and or not in true false none machine fragment import record enum input var counter max start model judge tool
reads writes prompt call from when terminal fallback rule required order before forbid ends use as doc source requires
success partial failed list map str int float bool
""".split())


def words(text: str) -> list[str]:
    """Lower-case words of a text, markdown and punctuation removed."""
    return re.findall(r"[a-z][a-z0-9]*", re.sub(r"[`*_]", " ", text.lower()))


def stem(word: str) -> str:
    """A crude stem so that `tests`, `testing` and `tested` meet."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    # "write" meets "writing", "choose" meets "choosing".
    return word[:-1] if word.endswith("e") and len(word) >= 5 else word


def content_stems(text: str) -> set[str]:
    """Stems of the words that carry meaning."""
    return {stem(w) for w in words(text) if w not in STOP and len(w) > 1}


def slug(text: str, limit: int = 3, default: str = "step") -> str:
    """A snake_case name from the first meaningful words of a text."""
    picked = [w for w in words(text) if w not in STOP and len(w) > 1][:limit]
    name = "_".join(picked) or default
    if name[0].isdigit():
        name = f"{default}_{name}"
    if name in KEYWORDS:
        name = f"{name}_{default}"
    return name[:40].rstrip("_")


def label_slug(text: str, limit: int = 3, default: str = "case") -> str:
    """An enum label from a branch label: every word counts ("No errors" → `no_errors`)."""
    picked = words(text)[:limit]
    name = "_".join(picked) or default
    if name[0].isdigit():
        name = f"{default}_{name}"
    return f"is_{name}" if name in KEYWORDS else name[:40].rstrip("_")


class Namer:
    """Hands out unique names within one namespace."""

    def __init__(self, taken: set[str] | None = None) -> None:
        self.taken = set(taken or ())
        self._next: dict[str, int] = {}  # the suffix to try first: names are never freed, so lower ones stay taken

    def fresh(self, base: str) -> str:
        """`base`, or `base_2`, `base_3`, … when it is taken."""
        n = self._next.get(base, 2)
        name = base if n == 2 else f"{base}_{n}"
        while name in self.taken or name in KEYWORDS:
            name, n = f"{base}_{n}", n + 1
        self._next[base] = n
        self.taken.add(name)
        return name
