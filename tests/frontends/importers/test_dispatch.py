"""The ASL coverage encoder dispatches through a type-keyed table; the AST classes the importer never writes are
errors."""

from __future__ import annotations

import pytest

from skillc.frontends.importers import coverage
from skillc.syntax import nodes as n
from tests.dispatch import assert_complete

# The ASL importer writes no lists, sets, records, indexing, calls or none in a Choice rule.
NOT_GENERATED = (n.NoneLit, n.ListLit, n.SetLit, n.Field, n.Index, n.CallExpr)


def test_encoder_names_every_ast_expression_class_or_rejects_it() -> None:
    assert_complete(coverage._ENCODE, n.Expr, falls_back=NOT_GENERATED)


@pytest.mark.parametrize("cls", NOT_GENERATED)
def test_a_class_the_importer_never_writes_is_rejected(cls: type[n.Expr]) -> None:
    with pytest.raises(ValueError, match=f"unexpected expression {cls.__name__}"):
        coverage.uncovered([_sample(cls)], {})


def _sample(cls: type[n.Expr]) -> n.Expr:
    x = n.Name(id="x")
    samples: dict[type[n.Expr], n.Expr] = {
        n.NoneLit: n.NoneLit(), n.ListLit: n.ListLit(items=()), n.SetLit: n.SetLit(items=()),
        n.Field: n.Field(obj=x, name="y"), n.Index: n.Index(obj=x, key=x),
        n.CallExpr: n.CallExpr(func="len", args=(x,)),
    }
    return samples[cls]
