"""skillc evolve: improve a skill under a small execution budget (SkillHEX: hypotheses, tests, evidence, tree).

Imports nothing, so `skillc.registry` can load `skillc.improve.evolve.codes` without the search; see README.md.
"""
