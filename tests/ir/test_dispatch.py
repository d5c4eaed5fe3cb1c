"""The IR package's tree walkers dispatch through type-keyed tables that name every node class.

A new node class in `syntax/nodes.py` or `ir/expr.py` fails here until each
walker (lowering, showing, evaluating) says what it does with it.
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from skillc.ir import evaluate, exprs, printexpr
from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.syntax import nodes as n
from tests.dispatch import assert_complete, node_classes


@pytest.mark.parametrize(("table", "base"), [
    (exprs._LOWER, n.Expr),  # lowering: AST → IR
    (printexpr._TO_AST, ir.Expr),  # showing: IR → AST
    (evaluate._EVAL, ir.Expr),  # evaluating: IR → value
], ids=["lower", "to_ast", "evaluate"])
def test_each_walker_names_every_node_class_of_its_tree(table: Mapping[type, object], base: type) -> None:
    assert_complete(table, base)


def test_the_completeness_check_can_fail() -> None:
    with pytest.raises(AssertionError, match="no entry for"):
        assert_complete({c: None for c in node_classes(ir.Expr) if c is not ir.GetField}, ir.Expr)


def test_showing_an_unknown_class_is_a_type_error() -> None:
    class Stray(ir.Expr):
        pass

    with pytest.raises(TypeError, match="cannot show Stray"):
        printexpr.to_ast(Stray(T.INT))
