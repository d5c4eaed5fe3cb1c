"""Running untrusted code in a box: `skillc.sandbox.box.run_confined` and its typed result (see README.md).

Imports nothing, so `skillc.registry` loads `codes.py` alone.
"""
