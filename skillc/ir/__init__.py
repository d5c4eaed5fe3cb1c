"""Stage 2: AST → resolved, typed machine IR (names, types, imports, fragment expansion)."""

from skillc.ir.loader import ImportCache, Loader, LoadResult
from skillc.ir.machine import Edge, Machine, Rule, State, Tool, Variable

__all__ = ["Edge", "ImportCache", "LoadResult", "Loader", "Machine", "Rule", "State", "Tool", "Variable"]
