"""The symbol table: a body's declarations, read once before any state is lowered."""

from __future__ import annotations

import attrs
import pytest

from skillc.diagnostics import Diagnostic
from skillc.diagnostics.source import SourceFile
from skillc.ir import types as T
from skillc.ir.machine import FALLBACK
from skillc.ir.symbols import Scope, Symbols, declare
from skillc.syntax import nodes as n
from skillc.syntax.parser import parse_source


def _declare(body: str) -> tuple[Symbols, list[Diagnostic]]:
    module, diags = parse_source(SourceFile("case.skm", "machine m {\n" + body + "\n}\n"))
    assert module is not None and diags == []
    m = module.machines[0]
    found: list[Diagnostic] = []
    return declare(m.items, (), (), m, Scope(), found.append), found


def test_declarations_are_read_in_order_and_frozen() -> None:
    symbols, found = _declare("""
  tool bash(command: str) -> (stdout: str)
  input cmd: str
  var out: str = "x"
  counter tries max 2
  start a
  use retry as r(command: cmd, output: out) -> (ok: done, failed: fallback)
  model a {
    prompt "p"
    -> done
  }
  terminal done: success
  fallback
""")
    assert found == []
    assert list(symbols.variables) == ["cmd", "out", "tries"]
    assert symbols.variables["tries"].max == 2 and symbols.variables["out"].init is not None
    assert list(symbols.tools) == ["bash"]
    assert list(symbols.uses) == ["r"]
    assert list(symbols.states) == ["a", "done", FALLBACK]
    assert isinstance(symbols.states[FALLBACK], n.Fallback)
    assert list(symbols.names) == ["r", "a", "done", FALLBACK]  # instances first: a state may not reuse one
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        symbols.tools = {}  # type: ignore[misc]


def test_a_repeated_name_keeps_the_first_declaration() -> None:
    symbols, found = _declare("""
  var x: str
  var x: int
  use retry as a(command: x, output: x) -> (ok: a, failed: fallback)
  model a {
    prompt "p"
    -> a
  }
  model fallback {
    prompt "p"
    -> a
  }
  fallback
  fallback
""")
    assert [str(d.code) for d in found] == ["SKM108", "SKM108", "SKM134"]
    assert symbols.variables["x"].type == T.STR
    assert list(symbols.states) == [FALLBACK]  # `a` is the instance; the second fallback is SKM118's business
    assert found[1].secondary and found[1].secondary[0].message == "first declared here"
