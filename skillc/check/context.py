"""What checks may need beyond the machine: options, the skill document, shared analyses."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, TypeVar

import attrs

if TYPE_CHECKING:
    from skillc.diagnostics import Diagnostic
    from skillc.serve.mcpconfig import McpServer

_T = TypeVar("_T")

DEFAULT_SMT_TIMEOUT_MS = 2000
DEFAULT_QUOTE_MIN_WORDS = 3  # a shorter quotation occurs almost anywhere, so it locates nothing

#: The `data` of a finding that stands on a question the solver gave up on (SKM243; SKM283 and SKM252 when their
#: question came back unknown). Whether a question near its budget is decided depends on more than the question:
#: Z3 spends a different number of resource units on the same formula in a fresh context depending on what the
#: process did before (measured: 2.6M to 7.7M units for one capability question), so such a warning says how the
#: solver fared, not what is wrong with the machine, and the LLM compiler does not send it to the model. That does
#: not make a build independent of the process: an error (SKM252) is still sent, and a verdict that flips between
#: decided and unknown also adds or drops the finding a decided verdict gives (a dead edge, SKM281).
UNDECIDED: Final[Mapping[str, str]] = MappingProxyType({"solver": "undecided"})


def undecided(d: Diagnostic) -> bool:
    """The finding stands on a question the solver gave up on (`UNDECIDED`)."""
    return d.datum("solver") == UNDECIDED["solver"]


class Kept:
    """Per-state analysis results kept across checks by content: what a re-check of an edited text reuses.

    A key is everything a result depends on (a state's guards as written, the types and bounds of the variables
    they read, the options that change the answer), so a hit is the result a fresh analysis would give. The
    language server holds one for all its checks; a one-off `skillc check` has none. Bounded (least recently
    used first out) and safe to share between threads.
    """

    def __init__(self, limit: int = 50_000) -> None:
        self.limit = limit
        self.hits = self.misses = 0
        self._items: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> object | None:
        """The result kept under `key`, or None."""
        with self._lock:
            value = self._items.get(key)
            if value is None:
                self.misses += 1
                return None
            self.hits += 1
            self._items.move_to_end(key)
            return value

    def put(self, key: str, value: object) -> None:
        """Keep `value` under `key`, dropping the least recently used past the limit."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.limit:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


@attrs.define
class CheckContext:
    """Options for one run of the checker and a cache of analyses shared between checks.

    Only immutable results go in the cache (reachability, the dataflow solution):
    a check that keeps state of its own (a Z3 encoder) makes it itself, so the
    order of `CHECKS` cannot change what any check reports.
    """

    skill: Path | None = None
    #: The folder a machine's `source` document must be inside to be read (the editor's workspace: a `root`
    #: given to `check`); None: wherever it is. `skill` (`--skill PATH`, the user's own choice) is read anywhere.
    root: Path | None = None
    smt_timeout_ms: int = DEFAULT_SMT_TIMEOUT_MS
    quote_min_words: int = DEFAULT_QUOTE_MIN_WORDS
    cache: dict[str, Any] = attrs.Factory(dict)
    #: The MCP servers of the configuration (name → `skillc.serve.mcpconfig.McpServer`) and the file naming them
    #: (its folder holds the lock file); `mcp_live`: start them to list their tools (`skillc check`), else the
    #: lock file alone is read (the language server, a run's own check).
    mcp_servers: dict[str, McpServer] = attrs.Factory(dict)
    mcp_config: Path | None = None
    mcp_live: bool = False
    #: Per-state results kept across checks (the language server's); None: everything is computed afresh.
    kept: Kept | None = None

    def memo(self, key: str, compute: Callable[[], _T]) -> _T:
        """Compute an analysis once per run (checks of one machine share a context)."""
        if key not in self.cache:
            self.cache[key] = compute()
        out: _T = self.cache[key]
        return out


def memo(context: CheckContext | None, key: str, compute: Callable[[], _T]) -> _T:
    """`context.memo`, or a fresh computation when a check runs without a context."""
    return compute() if context is None else context.memo(key, compute)


def timeout_ms(context: CheckContext | None) -> int:
    """The SMT timeout per question."""
    return context.smt_timeout_ms if context is not None else DEFAULT_SMT_TIMEOUT_MS
