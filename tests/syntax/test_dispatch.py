"""The printer dispatches statements, expressions and types through type-keyed tables naming every node class."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from skillc.syntax import nodes as n
from skillc.syntax import printer
from tests.dispatch import assert_complete


@pytest.mark.parametrize(("table", "base"), [
    (printer._RENDER, n.Stmt), (printer._EXPR, n.Expr), (printer._TYPE, n.TypeExpr),
], ids=["statements", "expressions", "types"])
def test_every_node_class_prints(table: Mapping[type, object], base: type) -> None:
    assert_complete(table, base)


def test_an_unknown_type_class_is_a_type_error() -> None:
    class Stray(n.TypeExpr):
        pass

    with pytest.raises(TypeError, match="cannot print type Stray"):
        printer.type_text(Stray())
