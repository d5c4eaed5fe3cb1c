"""Encode IR guards into Z3 formulas.

Supported precisely: ints, floats (as reals), bools, enums (as label indices in
sorted label order, so enums with equal label sets agree), strings by equality,
concatenation, `contains` and length, list and map length, optionals (a none
flag beside the value), counters (0 ≤ c ≤ max). Anything else — record fields,
indexing, `quote`, membership in a list or map — becomes an *opaque* term: a
fresh variable of the right type, shared by structurally equal expressions so
that `r.x > 0 and r.x < 0` is still unsatisfiable. Opaque terms are recorded so
the checker can report them (over-approximation is sound for "can this fire?").
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import z3

from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import Machine


@attrs.define
class Val:
    """A Z3 term for an IR value; `none` is the none flag of an optional (None: never none)."""

    kind: str  # int, real, bool, str, enum, other
    term: z3.ExprRef | None
    none: z3.BoolRef | None = None
    labels: tuple[str, ...] = ()
    domain: list = attrs.Factory(list)


def _sorted_labels(t: T.EnumT) -> tuple[str, ...]:
    return tuple(sorted(t.labels))


class Encoder:
    """Builds Z3 terms for the expressions of one machine."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.vars: dict[str, Val] = {}
        self.touched: dict[int, z3.BoolRef] = {}
        self.opaque: dict[str, Val] = {}
        self.opaque_exprs: list[ir.Expr] = []
        self._uid = 0

    # ------------------------------------------------------------ variables

    def begin(self) -> None:
        """Start collecting the domain constraints of the terms used from now on."""
        self.touched = {}

    @property
    def domain(self) -> list[z3.BoolRef]:
        """Type constraints (enum ranges, counter bounds, lengths ≥ 0) of the terms used since `begin`."""
        return list(self.touched.values())

    def _touch(self, v: Val) -> Val:
        for c in v.domain:
            self.touched[id(c)] = c
        return v

    def _fresh(self, name: str, t: T.Type, counter_max: int | None = None) -> Val:
        if isinstance(t, T.OptionalT):
            inner = self._fresh(name, t.inner, counter_max)
            inner.none = z3.Bool(f"{name}?none")
            return inner
        if isinstance(t, T.IntT):
            v = z3.Int(name)
            return Val("int", v, domain=[v >= 0, v <= counter_max] if counter_max is not None else [])
        if isinstance(t, T.FloatT):
            return Val("real", z3.Real(name))
        if isinstance(t, T.BoolT):
            return Val("bool", z3.Bool(name))
        if isinstance(t, T.StrT):
            return Val("str", z3.String(name))
        if isinstance(t, T.EnumT):
            v = z3.Int(name)
            labels = _sorted_labels(t)
            return Val("enum", v, labels=labels, domain=[v >= 0, v < len(labels)])
        if isinstance(t, (T.ListT, T.MapT)):
            n = z3.Int(f"len({name})")
            return Val("other", n, domain=[n >= 0])
        return Val("other", None)

    def var(self, name: str) -> Val:
        """The term of a machine variable (created on first use)."""
        if name not in self.vars:
            v = self.machine.variables[name]
            self.vars[name] = self._fresh(name, v.type, v.max if v.is_counter else None)
        return self._touch(self.vars[name])

    def _opaque(self, e: ir.Expr) -> Val:
        key = repr(e)
        if key not in self.opaque:
            self._uid += 1
            self.opaque[key] = self._fresh(f"⟨{self._uid}⟩", e.type)
            self.opaque_exprs.append(e)
        return self._touch(self.opaque[key])

    # ------------------------------------------------------------ expressions

    def bool(self, e: ir.Expr) -> z3.BoolRef:
        """The formula of a Boolean expression."""
        v = self.encode(e)
        if v.kind != "bool" or v.term is None:
            v = self._opaque(e)
        if v.none is not None:
            return z3.And(z3.Not(v.none), v.term)
        return v.term

    def encode(self, e: ir.Expr) -> Val:
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            return self._opaque(e)
        return method(e)

    def _Var(self, e: ir.Var) -> Val:
        return self.var(e.name)

    def _Const(self, e: ir.Const) -> Val:
        value = e.value
        if value is None:
            return Val("none", None, none=z3.BoolVal(True))
        if isinstance(value, bool):
            return Val("bool", z3.BoolVal(value))
        if isinstance(value, int):
            return Val("int", z3.IntVal(value))
        if isinstance(value, float):
            return Val("real", z3.RealVal(value))
        if isinstance(value, str):
            return Val("str", z3.StringVal(value))
        return self._opaque(e)

    def _Label(self, e: ir.Label) -> Val:
        labels = _sorted_labels(e.type)
        return Val("enum", z3.IntVal(labels.index(e.value)), labels=labels)

    def _Not(self, e: ir.Not) -> Val:
        return Val("bool", z3.Not(self.bool(e.operand)))

    def _Neg(self, e: ir.Neg) -> Val:
        v = self.encode(e.operand)
        if v.kind in ("int", "real") and v.none is None:
            return Val(v.kind, -v.term)
        return self._opaque(e)

    def _InSet(self, e: ir.InSet) -> Val:
        return Val("bool", z3.Or([self._equal(e.operand, i) for i in e.items]) if e.items else z3.BoolVal(False))

    def _BinOp(self, e: ir.BinOp) -> Val:
        op = e.op
        if op == "and":
            return Val("bool", z3.And(self.bool(e.left), self.bool(e.right)))
        if op == "or":
            return Val("bool", z3.Or(self.bool(e.left), self.bool(e.right)))
        if op == "==":
            return Val("bool", self._equal(e.left, e.right))
        if op == "!=":
            return Val("bool", z3.Not(self._equal(e.left, e.right)))
        if op == "++":
            left, right = self._text(e.left), self._text(e.right)
            if left is None or right is None:
                return self._opaque(e)
            return Val("str", z3.Concat(left, right))
        a, b = self.encode(e.left), self.encode(e.right)
        if a.kind not in ("int", "real") or b.kind not in ("int", "real") or a.none is not None or b.none is not None:
            return self._opaque(e)
        x, y = a.term, b.term
        real = "real" in (a.kind, b.kind) or op == "/"
        if real:
            x = z3.ToReal(x) if a.kind == "int" else x
            y = z3.ToReal(y) if b.kind == "int" else y
        if op in ("<", "<=", ">", ">="):
            return Val("bool", {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op])
        if op == "+":
            return Val("real" if real else "int", x + y)
        if op == "-":
            return Val("real" if real else "int", x - y)
        if op == "*":
            return Val("real" if real else "int", x * y)
        if op == "/":
            return Val("real", x / y)
        if op == "%" and not real:
            return Val("int", x % y)
        return self._opaque(e)

    def _Call(self, e: ir.Call) -> Val:
        if e.func == "len":
            arg = e.args[0]
            v = self.encode(arg)
            if v.none is not None:
                return self._opaque(e)
            if v.kind == "str":
                return Val("int", z3.Length(v.term))
            if isinstance(arg, ir.Var) and isinstance(T.strip_optional(arg.type), (T.ListT, T.MapT)):
                return Val("int", v.term)
            return self._opaque(e)
        if e.func == "str":
            text = self._text(e.args[0])
            return Val("str", text) if text is not None else self._opaque(e)
        if e.func == "contains":
            hay, needle = (self.encode(a) for a in e.args)
            if hay.kind == "str" and needle.kind == "str" and hay.none is None and needle.none is None:
                return Val("bool", z3.Contains(hay.term, needle.term))
        return self._opaque(e)

    # ------------------------------------------------------------ helpers

    def _text(self, e: ir.Expr) -> z3.SeqRef | None:
        """The string a scalar prints as, when it can be expressed."""
        v = self.encode(e)
        if v.none is not None or v.term is None:
            return None
        if v.kind == "str":
            return v.term
        if v.kind == "int":
            x = v.term
            return z3.If(x >= 0, z3.IntToStr(x), z3.Concat(z3.StringVal("-"), z3.IntToStr(-x)))
        if v.kind == "bool":
            return z3.If(v.term, z3.StringVal("true"), z3.StringVal("false"))
        if v.kind == "enum":
            out = z3.StringVal(v.labels[-1])
            for i in range(len(v.labels) - 2, -1, -1):
                out = z3.If(v.term == i, z3.StringVal(v.labels[i]), out)
            return out
        return None

    def _equal(self, left: ir.Expr, right: ir.Expr) -> z3.BoolRef:
        a, b = self.encode(left), self.encode(right)
        if a.kind == "none" or b.kind == "none":
            other = b if a.kind == "none" else a
            if other.kind == "none":
                return z3.BoolVal(True)
            return other.none if other.none is not None else z3.BoolVal(False)
        if a.term is None or b.term is None or not _same_sort(a, b):
            return self._opaque(ir.BinOp(T.BOOL, op="==", left=left, right=right)).term
        x, y = a.term, b.term
        if {a.kind, b.kind} == {"int", "real"}:
            x = z3.ToReal(x) if a.kind == "int" else x
            y = z3.ToReal(y) if b.kind == "int" else y
        same = x == y
        if a.none is not None and b.none is not None:
            return z3.Or(z3.And(a.none, b.none), z3.And(z3.Not(a.none), z3.Not(b.none), same))
        if a.none is not None:
            return z3.And(z3.Not(a.none), same)
        if b.none is not None:
            return z3.And(z3.Not(b.none), same)
        return same


def _same_sort(a: Val, b: Val) -> bool:
    if a.kind == b.kind:
        return a.kind != "enum" or a.labels == b.labels
    return {a.kind, b.kind} == {"int", "real"}


def describe_model(model: z3.ModelRef, enc: Encoder, names: Iterable[str]) -> list[str]:
    """`name = value` lines for the variables of a witness, labels and strings shown as written."""
    out = []
    for name in sorted(set(names)):
        v = enc.var(name)
        if v.term is None:
            continue
        if v.none is not None and z3.is_true(model.eval(v.none, model_completion=True)):
            out.append(f"{name} = none")
            continue
        value = model.eval(v.term, model_completion=True)
        if v.kind == "enum":
            idx = value.as_long() if z3.is_int_value(value) else 0
            text = v.labels[idx] if 0 <= idx < len(v.labels) else str(value)
        elif v.kind == "str":
            text = '"' + value.as_string().replace('"', '\\"') + '"' if z3.is_string_value(value) else str(value)
        elif v.kind == "real":
            text = value.as_decimal(6).rstrip("?") if z3.is_algebraic_value(value) or z3.is_rational_value(value) \
                else str(value)
        elif v.kind == "other":
            text = f"a value of length {value}"
        else:
            text = str(value).lower() if v.kind == "bool" else str(value)
        out.append(f"{name} = {text}")
    return out


def solver(timeout_ms: int) -> z3.Solver:
    """A solver that gives up (answers unknown) after `timeout_ms`."""
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    return s
