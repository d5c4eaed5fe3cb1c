"""Stage 2: AST → resolved, typed machine IR (names, types, imports, fragment expansion)."""

from skillc.ir.loader import LoadResult, load, load_text
from skillc.ir.machine import Edge, Machine, Rule, State, Tool, Variable

__all__ = ["Edge", "LoadResult", "Machine", "Rule", "State", "Tool", "Variable", "load", "load_text"]
