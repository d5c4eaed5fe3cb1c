"""Testing machines like code: Hypothesis strategies, `skillc test`, a pytest plugin, and fuzzing."""
