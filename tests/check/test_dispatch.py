"""`Encoder.encode` dispatches through a type-keyed table; the IR classes it leaves out become opaque terms."""

from __future__ import annotations

from skillc.check import smt
from skillc.ir import expr as ir
from skillc.ir import types as T
from tests.check.helpers import check_text
from tests.check.test_loops import LOOP
from tests.dispatch import assert_complete

# Encoded as an opaque term of the right type (record fields, list literals).
OPAQUE = (ir.GetField, ir.ListExpr)


def _encoder() -> smt.Encoder:
    machine = check_text(LOOP.replace("ASSIGN", "")).machine
    assert machine is not None
    return smt.Encoder(machine)


def test_encode_names_every_ir_class_or_leaves_it_opaque() -> None:
    assert_complete(smt._ENCODE, ir.Expr, falls_back=OPAQUE)


def test_the_classes_left_out_are_opaque() -> None:
    enc = _encoder()
    field = ir.GetField(T.INT, obj=ir.Const(T.STR, value="r"), field="x")
    items = ir.ListExpr(T.ListT(T.INT), items=(ir.Const(T.INT, value=1),))
    for e in (field, items):
        enc.encode(e)
    assert enc.opaque_exprs == [field, items]


def test_a_listed_class_is_not_opaque() -> None:
    enc = _encoder()
    v = enc.encode(ir.Const(T.INT, value=3))
    assert v.kind == "int" and enc.opaque_exprs == []
