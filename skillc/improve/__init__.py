"""Improvement: a checked machine and its traces → a better machine (refine, evolve); see README.md."""
