"""Testing machines like code: Hypothesis strategies, `skillc test`, a pytest plugin, and fuzzing.

The strategies need Hypothesis (the `test` extra); they are imported on first use so that
`import skillc.testing` (and the bundled pytest plugin) works without it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["machines", "outputs_for", "runs", "tool_results_for", "values_of"]


def __getattr__(name: str) -> Any:
    """Load a strategy lazily; without Hypothesis say which extra provides it."""
    if name not in __all__:
        raise AttributeError(f"module 'skillc.testing' has no attribute {name!r}")
    try:
        from skillc.testing import strategies  # needs Hypothesis, an optional extra
    except ModuleNotFoundError as exc:
        if exc.name != "hypothesis":
            raise
        raise ModuleNotFoundError("skillc.testing's strategies need Hypothesis: pip install 'skillc[test]'",
                                  name="hypothesis") from None
    return getattr(strategies, name)
