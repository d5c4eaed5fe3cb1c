"""Identifiers from prose: short snake_case names for states, variables and labels."""

from __future__ import annotations

import re

from skillc.ir.names import unique

STOP = frozenset([
    "a", "an", "the", "to", "of", "for", "and", "or", "with", "in", "on", "at", "by", "from", "into", "onto",
    "your", "you", "we", "our", "this", "that", "these", "those", "it", "its", "their", "is", "are", "be", "been",
    "was", "were", "will", "would", "can", "could", "should", "may", "might", "must", "shall", "do", "does", "did",
    "not", "no", "any", "all", "each", "every", "some", "then", "than", "so", "if", "when", "whether", "while",
    "as", "about", "above", "below", "after", "before", "under", "over", "up", "down", "out", "off", "only",
    "just", "also", "very", "more", "most", "less", "such", "there", "here", "which", "who", "whom", "what",
    "where", "how", "why", "i", "me", "my", "he", "she", "they", "them", "his", "her",
])
KEYWORDS = frozenset([
    "and", "or", "not", "in", "true", "false", "none", "machine", "fragment", "import", "record", "enum", "input",
    "var", "counter", "max", "start", "model", "judge", "tool", "reads", "writes", "prompt", "call", "from",
    "when", "terminal", "fallback", "rule", "required", "order", "before", "forbid", "ends", "use", "as", "doc",
    "source", "requires", "success", "partial", "failed", "list", "map", "str", "int", "float", "bool",
])


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
    return _joined([w for w in words(text) if w not in STOP and len(w) > 1][:limit], default)


#: The words of a condition that reverse it: a yes/no question's name keeps them ("If not found" → `not_found`).
NEGATIONS = frozenset(["not", "no", "never", "without"])


def condition_slug(text: str, limit: int = 3, default: str = "answer") -> str:
    """A name for a yes/no question about a condition: `slug`'s, keeping a negation ("isn't set" → `not_set`)."""
    plain = re.sub(r"\bcan[’']t\b|\bcannot\b", "can not", text.lower())
    plain = re.sub(r"n[’']t\b", " not", re.sub(r"\bwon[’']t\b", "will not", plain))
    picked = [w for w in words(plain) if (w not in STOP or w in NEGATIONS) and len(w) > 1]
    negated = next((i for i, w in enumerate(picked) if w in NEGATIONS), None)
    kept = [w for i, w in enumerate(picked) if w not in NEGATIONS or i == negated]
    if negated is None:
        return _joined(kept[:limit], default)
    if len(kept) == 1:  # "If no": a question whose only word denies
        return f"not_{default}"
    if negated >= limit:  # "the output file exists but is not valid": the negation and what it denies stay
        return _joined([*kept[:limit - 1], *kept[negated:negated + 2]], default)
    return _joined(kept[:limit + 1], default)


def _joined(picked: list[str], default: str) -> str:
    """Words as one identifier: `default` when there are none, prefixed where it would start with a digit or be a
    keyword."""
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


class _Taken:
    """The names of a namespace and the keywords of the language, as one container."""

    __slots__ = ("names",)

    def __init__(self, names: set[str]) -> None:
        self.names = names

    def __contains__(self, name: object) -> bool:
        return name in self.names or name in KEYWORDS


class Namer:
    """Hands out unique names within one namespace."""

    def __init__(self, taken: set[str] | None = None) -> None:
        """A namespace where the names of `taken` are already used."""
        self.taken = set(taken or ())
        # The suffix to try first: names are never freed, so lower ones stay taken. Without this cursor a
        # 2,000-line skill that asks for the same base hundreds of times scans from `base_2` each time (~0.5 s).
        self._next: dict[str, int] = {}
        self._taken = _Taken(self.taken)

    def fresh(self, base: str) -> str:
        """`base`, or `base_2`, `base_3`, … when it is taken (a keyword of the language counts as taken)."""
        name = unique(base, self._taken, self._next.get(base, 2))
        if name != base:
            self._next[base] = int(name[len(base) + 1:]) + 1
        self.taken.add(name)
        return name
