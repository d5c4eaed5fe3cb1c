"""`skillc bench` foundations: task suites, verifiers, effect-based RFC, statistics, results and reports."""
