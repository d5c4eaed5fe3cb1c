"""Stage 1: text → AST. Parser, comment attachment, canonical printer."""

import sys


def _import_lark() -> None:
    """Import Lark without the third-party `regex` module (~13 ms of every start).

    Lark imports `regex` whenever it is installed, but uses it only for grammars that ask for it (`regex=True`)
    or name Unicode categories (`\\p{…}`); skm.lark does neither, so while Lark loads, `import regex` fails and
    Lark falls back to `re`. The block is lifted at once: other code may still import `regex` later. It is set
    only while this is the process's one thread, so that no other thread's `import regex` can see it.
    """
    if "lark" in sys.modules or "regex" in sys.modules:
        return
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        import lark  # the point of this function: Lark loads here, on the module's import
        return
    sys.modules["regex"] = None  # type: ignore[assignment]  # `import regex` raises ImportError while set
    try:
        import lark  # noqa: F401
    finally:
        if sys.modules.get("regex", 0) is None:
            del sys.modules["regex"]


_import_lark()

from skillc.syntax.parser import decode_source, parse, parse_source, read_source  # noqa: E402

__all__ = ["decode_source", "parse", "parse_source", "read_source"]
