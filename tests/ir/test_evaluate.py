"""Evaluating IR expressions (ir/evaluate.py): failures are `EvalError`, never a crash."""

from __future__ import annotations

from skillc.ir.evaluate import EvalError, evaluate


def test_overflow_in_a_guard_is_an_eval_error() -> None:
    from skillc.ir import expr as ir
    from skillc.ir import types as T

    e = ir.BinOp(T.FLOAT, op="+", left=ir.Var(T.INT, name="n"), right=ir.Const(T.FLOAT, value=0.5))
    try:
        evaluate(e, {"n": 10**400})
        raise AssertionError("expected an EvalError")
    except EvalError:
        pass
