"""Refinement from development traces (HEXIS phase 2); see README.md for the modules."""
