"""Testing machines like code: Hypothesis strategies, `skillc test`, a pytest plugin, and fuzzing."""

from skillc.testing.strategies import machines, outputs_for, runs, tool_results_for, values_of

__all__ = ["machines", "outputs_for", "runs", "tool_results_for", "values_of"]
