"""Encode IR guards into Z3 formulas.

Supported precisely: ints, floats as IEEE doubles (comparisons; arithmetic on
floats rounds and is opaque), bools, enums (as label indices in sorted label
order, so enums with equal label sets agree), strings by equality,
concatenation, `contains` and length, list and map length, list indexing's
range, optionals (a none flag beside the value), counters (0 ≤ c ≤ max).
Anything else — record fields, map lookups, `quote`, membership in a list or
map — becomes an *opaque* term: a fresh variable of the right type, shared by
structurally equal expressions so that `r.x > 0 and r.x < 0` is still
unsatisfiable. Opaque terms are recorded so the checker can report them
(over-approximation is sound for "can this fire?").

A guard that fails at run time (index out of range, division by zero, …) is
false there, so each value carries `ok`, when its evaluation does not fail;
`Encoder.fires` is "ok and true", short-circuiting like the runtime. An opaque
part that can fail has an unknown `ok` of its own.
"""

from __future__ import annotations

import contextlib
import fractions
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeGuard

import attrs
import z3

from skillc.ir import expr as ir
from skillc.ir import types as T
from skillc.ir.machine import Machine
from skillc.ir.toolkit import wildcard_parts
from skillc.syntax.strings import encode_plain

# Z3's own SIGINT handler turns Ctrl-C during a solver call into an `unknown` answer and the command carries on;
# without it the interrupt reaches Python (KeyboardInterrupt) as soon as the call returns.
z3.set_param("ctrl_c", False)
#: Whether a thread's CPU time can be read (`_cpu_backstop`): Linux and most Unix; not macOS or Windows.
_HAS_THREAD_CLOCK: Final = hasattr(time, "pthread_getcpuclockid")


@attrs.define
class Val:
    """A Z3 term for an IR value; `none` is the none flag of an optional (None: never none)."""

    kind: str  # int, fp (IEEE double), bool, str, enum, code, none, other
    term: Any  # a z3.ExprRef, or None where the value is not modelled
    none: z3.BoolRef | None = None
    labels: tuple[str, ...] = ()
    domain: list[z3.BoolRef] = attrs.Factory(list)
    ok: z3.BoolRef | None = None  # when evaluating it does not fail at run time (None: never fails)


FLOAT = z3.Float64()


def _all(*oks: z3.BoolRef | None) -> z3.BoolRef | None:
    """The conjunction of definedness conditions (None: always defined)."""
    parts = [o for o in oks if o is not None]
    return None if not parts else parts[0] if len(parts) == 1 else z3.And(parts)


def _with_ok(v: Val, *oks: z3.BoolRef | None) -> Val:
    ok = _all(v.ok, *oks)
    return v if ok is v.ok else attrs.evolve(v, ok=ok)


def _sorted_labels(t: T.EnumT) -> tuple[str, ...]:
    return tuple(sorted(t.labels))


class Encoder:
    """Builds Z3 terms for the expressions of one machine."""

    def __init__(self, machine: Machine) -> None:
        self.machine = machine
        self.vars: dict[str, Val] = {}
        self.touched: dict[int, z3.BoolRef] = {}
        self.string_mode: dict[str, str] = {}
        self.codes: dict[str, int] = {}
        self.opaque: dict[str, Val] = {}
        self.opaque_exprs: list[ir.Expr] = []
        self._uid = 0

    # ------------------------------------------------------------ variables

    def begin(self, exprs: Iterable[ir.Expr | None] = ()) -> None:
        """Start a question about `exprs`: collect domain constraints afresh and choose string encodings.

        The theory of strings is slow, and most guards only compare strings with
        constants or test their length. A string variable used only under `len`
        becomes an integer length; one used only in equalities (with constants or
        other such variables) becomes an integer code, one code per distinct
        constant. Both encodings are exact for the question at hand; any other use
        keeps the variable a real Z3 string.
        """
        self.touched = {}
        self.string_mode = _string_modes([e for e in exprs if e is not None], self.machine)

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
            return Val("fp", z3.FP(name, FLOAT))
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

    def lookup(self, name: str, coded: bool = False) -> Val:
        """The term of a variable (its integer code when `coded`) as the questions so far encoded it.

        A variable they never reached gets a fresh term that is not recorded, so
        reading a model never changes the encoder.
        """
        key = f"{name}#code" if coded else name
        if key in self.vars:
            return self.vars[key]
        v = self.machine.variables[name]
        if coded:
            return Val("code", z3.Int(key), none=self._fresh(key, v.type).none)
        return self._fresh(name, v.type, v.max if v.is_counter else None)

    def _opaque(self, e: ir.Expr, total: bool = False) -> Val:
        """An unknown value of the expression's type; unless `total`, evaluating it may also fail at run time."""
        key = repr(e)
        if key not in self.opaque:
            self._uid += 1
            v = self._fresh(f"⟨{self._uid}⟩", e.type)
            self.opaque[key] = attrs.evolve(v, ok=z3.Bool(f"⟨{self._uid}⟩ok"))
        self.opaque_exprs.append(e)  # every place, so each one can be reported
        v = self._touch(self.opaque[key])
        return attrs.evolve(v, ok=None) if total else v

    # ------------------------------------------------------------ expressions

    def fires(self, e: ir.Expr) -> z3.BoolRef:
        """When a guard lets its edge fire: it evaluates without error (an error counts as false) and holds."""
        v = self._boolean(e)
        return v.term if v.ok is None else z3.And(v.ok, v.term)

    def _boolean(self, e: ir.Expr) -> Val:
        """A Boolean expression's value (a none counts as false) and when it evaluates without error."""
        v = self.encode(e)
        if v.kind != "bool" or v.term is None:
            v = self._opaque(e)
        if v.none is not None:
            return Val("bool", z3.And(z3.Not(v.none), v.term), ok=v.ok)
        return v

    def encode(self, e: ir.Expr) -> Val:
        """The value of an expression; a class without an encoding (see `_ENCODE`) is opaque."""
        method = _ENCODE.get(type(e))
        if method is None:
            return self._opaque(e)
        return method(self, e)

    def _Var(self, e: ir.Var) -> Val:
        mode = self.string_mode.get(e.name)
        if mode == "eq":
            return self._coded(e.name)
        return self.var(e.name)

    def _coded(self, name: str) -> Val:
        """A string variable as an integer code (exact when it is only compared for equality)."""
        key = f"{name}#code"
        if key not in self.vars:
            base = self._fresh(key, self.machine.variables[name].type)
            self.vars[key] = Val("code", z3.Int(key), none=base.none)
        return self._touch(self.vars[key])

    def _code_of(self, value: str) -> z3.ArithRef:
        """The code of a string constant: distinct constants get distinct codes."""
        if value not in self.codes:
            self.codes[value] = len(self.codes)
        return z3.IntVal(self.codes[value])

    def _Const(self, e: ir.Const) -> Val:
        value = e.value
        if value is None:
            return Val("none", None, none=z3.BoolVal(True))
        if isinstance(value, bool):
            return Val("bool", z3.BoolVal(value))
        if isinstance(value, int):
            return Val("int", z3.IntVal(value))
        if isinstance(value, float):
            return Val("fp", z3.FPVal(value, FLOAT))
        if isinstance(value, str):
            literal = _string_literal(value)
            return Val("str", literal) if literal is not None else self._opaque(e)
        return self._opaque(e)

    def _Label(self, e: ir.Label) -> Val:
        assert isinstance(e.type, T.EnumT)  # lowering types every label
        labels = _sorted_labels(e.type)
        return Val("enum", z3.IntVal(labels.index(e.value)), labels=labels)

    def _Not(self, e: ir.Not) -> Val:
        v = self._boolean(e.operand)
        return Val("bool", z3.Not(v.term), ok=v.ok)

    def _Neg(self, e: ir.Neg) -> Val:
        v = self.encode(e.operand)
        if v.kind == "int" and v.none is None:
            return Val("int", -v.term, ok=v.ok)
        if v.kind == "fp" and v.none is None:
            return Val("fp", z3.fpNeg(v.term), ok=v.ok)
        return self._opaque(e)

    def _InSet(self, e: ir.InSet) -> Val:
        tests = [self._equal(e.operand, i) for i in e.items]
        return Val("bool", z3.Or([t.term for t in tests]) if tests else z3.BoolVal(False),
                   ok=_all(*(t.ok for t in tests)))

    def _BinOp(self, e: ir.BinOp) -> Val:
        op = e.op
        if op in ("and", "or"):
            # Short-circuit, as the runtime evaluates: the right side is evaluated (and may fail) only when needed.
            a, b = self._boolean(e.left), self._boolean(e.right)
            needed = a.term if op == "and" else z3.Not(a.term)
            term = z3.And(a.term, b.term) if op == "and" else z3.Or(a.term, b.term)
            return Val("bool", term, ok=_all(a.ok, z3.Implies(needed, b.ok) if b.ok is not None else None))
        if op == "==":
            return self._equal(e.left, e.right)
        if op == "!=":
            v = self._equal(e.left, e.right)
            return Val("bool", z3.Not(v.term), ok=v.ok)
        if op == "++":
            left, right = self._text(e.left), self._text(e.right)
            if left is None or right is None:
                return self._opaque(e)
            return Val("str", z3.Concat(left[0], right[0]), ok=_all(left[1], right[1]))
        a, b = self.encode(e.left), self.encode(e.right)
        if a.kind not in ("int", "fp") or b.kind not in ("int", "fp") or a.none is not None or b.none is not None:
            return self._opaque(e)
        ok = _all(a.ok, b.ok)
        if a.kind == "fp" or b.kind == "fp" or op == "/":
            return self._float_op(e, a, b, ok)
        x, y = a.term, b.term
        if op in ("<", "<=", ">", ">="):
            return Val("bool", _compare(op, x, y), ok=ok)
        if op == "+":
            return Val("int", x + y, ok=ok)
        if op == "-":
            return Val("int", x - y, ok=ok)
        if op == "*":
            return Val("int", x * y, ok=ok)
        if op == "%":
            # Python's `%` takes the sign of the divisor; Z3's integer mod is never negative.
            r = x % y
            return Val("int", z3.If(z3.And(y < 0, r != 0), r + y, r), ok=_all(ok, y != 0))
        return self._opaque(e)

    def _float_op(self, e: ir.BinOp, a: Val, b: Val, ok: z3.BoolRef | None) -> Val:
        """Arithmetic and comparison with a float operand; floats are IEEE doubles (Python's floats).

        Comparing two floats is exact (NaN compares false, -0.0 == 0.0). Float
        arithmetic rounds, and bit-precise rounding costs the solver seconds per
        question, so its result is opaque (an unknown double; `/` may also fail, on
        zero). An int beside a float is converted with rounding (and fails past the
        double range), and `int / int` is a correctly rounded quotient: opaque too,
        except a comparison of an int with a float constant, which Python decides exactly.
        """
        op = e.op
        if a.kind == "fp" and b.kind == "fp":
            x, y = a.term, b.term
            if op in ("<", "<=", ">", ">="):
                return Val("bool", _FP_COMPARE[op](x, y), ok=ok)
            if op in ("+", "-", "*"):
                return _with_ok(self._opaque(e, total=True), ok)
            if op == "/":
                return _with_ok(self._opaque(e, total=True), ok, z3.Not(z3.fpIsZero(y)))
            return self._opaque(e)
        if op in ("<", "<=", ">", ">="):
            exact = self._int_float(e.left, a, e.right, b)
            if exact is not None:
                x, y, kind = exact
                return Val("bool", _compare(op, x, y) if kind == "real" else _FP_COMPARE[op](x, y), ok=ok)
        return self._opaque(e)

    def _int_float(self, left: ir.Expr, a: Val, right: ir.Expr,
                   b: Val) -> tuple[z3.ArithRef | z3.FPRef, z3.ArithRef | z3.FPRef, str] | None:
        """An int beside a float as two comparable terms, where Python's exact comparison can be expressed:
        beside a finite float constant both become reals; an int constant within ±2**53 (so exactly a double)
        beside a float becomes that double. Returns (x, y, "real" | "fp"), or None."""
        (ie, iv), (fe, fv) = ((left, a), (right, b)) if a.kind == "int" else ((right, b), (left, a))
        if isinstance(fe, ir.Const) and isinstance(fe.value, float) and math.isfinite(fe.value):
            pair = (z3.ToReal(iv.term), z3.RealVal(str(fractions.Fraction(fe.value))))
            kind = "real"
        elif isinstance(ie, ir.Const) and type(ie.value) is int and abs(ie.value) <= 2**53:
            pair, kind = (z3.FPVal(float(ie.value), FLOAT), fv.term), "fp"
        else:
            return None
        return (*(pair if a.kind == "int" else pair[::-1]), kind)

    def _Call(self, e: ir.Call) -> Val:
        if e.func == "len":
            arg = e.args[0]
            if isinstance(arg, ir.Var) and self.string_mode.get(arg.name) == "len":
                key = f"len({arg.name})"
                if key not in self.vars:
                    n = z3.Int(key)
                    self.vars[key] = Val("int", n, domain=[n >= 0])
                return self._touch(self.vars[key])
            v = self.encode(arg)
            if v.none is not None:
                return _with_ok(self._opaque(e, total=True), v.ok)
            if v.kind == "str":
                return Val("int", z3.Length(v.term), ok=v.ok)
            if isinstance(arg, ir.Var) and isinstance(T.strip_optional(arg.type), (T.ListT, T.MapT)):
                return Val("int", v.term)
            return _with_ok(self._opaque(e, total=True), v.ok)
        if e.func == "str":
            text = self._text(e.args[0])
            return Val("str", text[0], ok=text[1]) if text is not None else self._opaque(e, total=True)
        if e.func == "quote":
            # shlex.quote leaves a non-empty string of safe characters as it is; anything else is opaque.
            text = self._text(e.args[0])
            if text is None:
                return self._opaque(e, total=True)
            return Val("str", z3.If(z3.InRe(text[0], _SAFE_SHELL), text[0], self._opaque(e, total=True).term),
                       ok=text[1])
        if e.func == "contains":
            hay, needle = (self.encode(a) for a in e.args)
            if hay.kind == "str" and needle.kind == "str" and hay.none is None and needle.none is None:
                return Val("bool", z3.Contains(hay.term, needle.term), ok=_all(hay.ok, needle.ok))
        return self._opaque(e)

    def _GetIndex(self, e: ir.GetIndex) -> Val:
        """`list[i]`: an opaque item, defined exactly when `-len ≤ i < len` (Python indexing); others opaque."""
        obj = e.obj
        if isinstance(obj, ir.Var) and isinstance(obj.type, T.ListT):
            n, key = self.encode(obj), self.encode(e.key)
            if n.term is not None and key.kind == "int" and key.none is None:
                inside = z3.And(key.term >= -n.term, key.term < n.term)
                return _with_ok(self._opaque(e, total=True), key.ok, inside)
        return self._opaque(e)

    # ------------------------------------------------------------ helpers

    def _code_side(self, e: ir.Expr, v: Val) -> Val:
        if v.kind == "code" or v.kind == "none":
            return v
        if isinstance(e, ir.Const) and isinstance(e.value, str):
            return Val("code", self._code_of(e.value))
        return v

    def _text(self, e: ir.Expr) -> tuple[z3.SeqRef, z3.BoolRef | None] | None:
        """The string a scalar prints as, when it can be expressed, and when evaluating it does not fail."""
        v = self.encode(e)
        if v.none is not None or v.term is None:
            return None
        if v.kind == "str":
            return v.term, v.ok
        if v.kind == "int":
            x = v.term
            return z3.If(x >= 0, z3.IntToStr(x), z3.Concat(z3.StringVal("-"), z3.IntToStr(-x))), v.ok
        if v.kind == "bool":
            return z3.If(v.term, z3.StringVal("true"), z3.StringVal("false")), v.ok
        if v.kind == "enum":
            out = z3.StringVal(v.labels[-1])
            for i in range(len(v.labels) - 2, -1, -1):
                out = z3.If(v.term == i, z3.StringVal(v.labels[i]), out)
            return out, v.ok
        return None

    def _equal(self, left: ir.Expr, right: ir.Expr) -> Val:
        """`left == right` (never fails itself; its operands may)."""
        a, b = self.encode(left), self.encode(right)
        ok = _all(a.ok, b.ok)
        if a.kind == "code" or b.kind == "code":
            a, b = (self._code_side(left, a), self._code_side(right, b))
        if a.kind == "none" or b.kind == "none":
            other = b if a.kind == "none" else a
            if other.kind == "none":
                return Val("bool", z3.BoolVal(True), ok=ok)
            return Val("bool", other.none if other.none is not None else z3.BoolVal(False), ok=ok)
        if {a.kind, b.kind} == {"int", "fp"}:
            exact = self._int_float(left, a, right, b)
            if exact is None:
                return _with_ok(self._opaque(ir.BinOp(T.BOOL, op="==", left=left, right=right), total=True), ok)
            same = exact[0] == exact[1] if exact[2] == "real" else z3.fpEQ(exact[0], exact[1])
        elif a.term is None or b.term is None or not _same_sort(a, b):
            return _with_ok(self._opaque(ir.BinOp(T.BOOL, op="==", left=left, right=right), total=True), ok)
        else:
            same = z3.fpEQ(a.term, b.term) if a.kind == "fp" else a.term == b.term
        if a.none is not None and b.none is not None:
            same = z3.Or(z3.And(a.none, b.none), z3.And(z3.Not(a.none), z3.Not(b.none), same))
        elif a.none is not None:
            same = z3.And(z3.Not(a.none), same)
        elif b.none is not None:
            same = z3.And(z3.Not(b.none), same)
        return Val("bool", same, ok=ok)


# The IR classes encoded precisely, looked up by the node's exact class; any other
# class (today `GetField` and `ListExpr`; tests/check/test_dispatch.py lists them) becomes an opaque term.
# Each method takes its own node class (hence Any).
_ENCODE: dict[type[ir.Expr], Callable[[Encoder, Any], Val]] = {
    ir.Var: Encoder._Var,
    ir.Const: Encoder._Const,
    ir.Label: Encoder._Label,
    ir.Not: Encoder._Not,
    ir.Neg: Encoder._Neg,
    ir.InSet: Encoder._InSet,
    ir.BinOp: Encoder._BinOp,
    ir.Call: Encoder._Call,
    ir.GetIndex: Encoder._GetIndex,
}

_FP_COMPARE = {"<": z3.fpLT, "<=": z3.fpLEQ, ">": z3.fpGT, ">=": z3.fpGEQ}


def _compare(op: str, x: z3.ArithRef, y: z3.ArithRef) -> z3.BoolRef:
    return {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y}[op]


_Z3_MAX_CHAR = 0x2FFFF
_SAFE_SHELL = z3.Plus(z3.Union(*(z3.Re(c) for c in "@%+=:,./-_"), z3.Range("a", "z"), z3.Range("A", "Z"),
                               z3.Range("0", "9")))


def _string_literal(value: str) -> z3.SeqRef | None:
    """A Z3 string constant with exactly these characters (None past Z3's character range).

    `z3.StringVal` interprets escape sequences such as `\\u{41}`, so every
    character outside plain printable ASCII, and every backslash, is written as
    an explicit `\\u{…}` escape.
    """
    if any(ord(c) > _Z3_MAX_CHAR for c in value):
        return None
    return z3.StringVal("".join(c if " " <= c <= "~" and c != "\\" else f"\\u{{{ord(c):x}}}" for c in value))


def _string_modes(exprs: list[ir.Expr], machine: Machine) -> dict[str, str]:
    """For each string variable in `exprs`: "len", "eq" or "full" (see `Encoder.begin`)."""
    uses: dict[str, set[str]] = {}
    partners: dict[str, set[str]] = {}

    def is_str_var(e: ir.Expr) -> TypeGuard[ir.Var]:
        return isinstance(e, ir.Var) and isinstance(T.strip_optional(e.type), T.StrT)

    def visit(e: ir.Expr, context: str) -> None:
        if is_str_var(e):
            uses.setdefault(e.name, set()).add(context)
            return
        if isinstance(e, ir.Call) and e.func == "len":
            visit(e.args[0], "len")
            return
        if isinstance(e, ir.BinOp) and e.op in ("==", "!="):
            sides = (e.left, e.right)
            simple = all(is_str_var(x) or (isinstance(x, ir.Const) and (isinstance(x.value, str) or x.value is None))
                         for x in sides)
            for x in sides:
                visit(x, "eq" if simple else "full")
            if simple and isinstance(e.left, ir.Var) and isinstance(e.right, ir.Var):
                partners.setdefault(e.left.name, set()).add(e.right.name)
                partners.setdefault(e.right.name, set()).add(e.left.name)
            return
        if isinstance(e, ir.InSet) and is_str_var(e.operand) and all(
                isinstance(i, ir.Const) and isinstance(i.value, str) for i in e.items):
            visit(e.operand, "eq")
            return
        for child in e.children():
            visit(child, "full")

    for e in exprs:
        visit(e, "full")
    modes = {name: ("len" if u == {"len"} else "eq" if u == {"eq"} else "full") for name, u in uses.items()}
    changed = True
    while changed:  # a variable compared with a real string must be a real string too
        changed = False
        for name, others in partners.items():
            if modes.get(name) == "eq" and any(modes.get(o) != "eq" for o in others):
                modes[name] = "full"
                changed = True
    return modes


def _same_sort(a: Val, b: Val) -> bool:
    return a.kind == b.kind and (a.kind != "enum" or a.labels == b.labels)


def _unescape(text: str) -> str:
    """Z3 prints some characters as `\\u{…}`; turn them back into characters."""
    return re.sub(r"\\u\{([0-9a-fA-F]+)\}", lambda m: chr(int(m.group(1), 16)), text)


# ------------------------------------------------------------ model decoding (the one decoder)

Scalar = bool | int | float | str | fractions.Fraction


def model_value(model: z3.ModelRef, term: z3.ExprRef) -> Scalar | None:
    """The Python value a model gives a term (completed where the model leaves it free); None when not a scalar.

    Booleans, integers, reals (as exact fractions), IEEE doubles (as floats, NaN
    and infinities included) and strings (Z3's `\\u{…}` escapes undone).
    """
    value = model.eval(term, model_completion=True)
    if z3.is_true(value) or z3.is_false(value):
        return bool(z3.is_true(value))
    if z3.is_int_value(value):
        return int(value.as_long())
    if z3.is_rational_value(value):
        return fractions.Fraction(value.as_fraction())
    if z3.is_fp_value(value):
        return float_value(model, term)
    if z3.is_string_value(value):
        return _unescape(value.as_string())
    return None


@attrs.frozen
class Decoded:
    """What a model says about one machine variable.

    `kind` is "value" (`value` is the Python value), "label" (an enum's label,
    `value`), "none" (an optional's none), "length" (a string known only by its length, `value`),
    "unlike" (a string unlike every constant in the guards), "sized" (a list or
    map known only by its length, `value`) or "unmodelled" (the solver does not
    represent it).
    """

    kind: Literal["value", "label", "none", "length", "unlike", "sized", "unmodelled"]
    value: Scalar | None = None


def decode(model: z3.ModelRef, enc: Encoder, name: str) -> Decoded:
    """The value a model gives machine variable `name`, read through the encoding `enc` chose for it."""
    mode = enc.string_mode.get(name)
    if mode == "len":
        length = enc.vars.get(f"len({name})")
        return Decoded("length", model_value(model, length.term) if length is not None else 0)
    v = enc.lookup(name, coded=mode == "eq")
    if v.term is None:
        return Decoded("unmodelled")
    if v.none is not None and model_value(model, v.none) is True:
        return Decoded("none")
    value = model_value(model, v.term)
    if mode == "eq":
        known = {code: text for text, code in enc.codes.items()}.get(value) if type(value) is int else None
        return Decoded("value", known) if known is not None else Decoded("unlike")
    if v.kind == "enum":
        idx = value if type(value) is int else 0
        return Decoded("label", v.labels[idx] if 0 <= idx < len(v.labels) else str(value))
    if v.kind == "other":
        return Decoded("sized", value)
    return Decoded("value", value)


def show(d: Decoded) -> str | None:
    """A decoded value as a witness shows it (None: nothing to show)."""
    if d.kind == "length":
        return f"a string of length {d.value}"
    if d.kind == "unlike":
        return "a string unlike every constant in the guards"
    if d.kind == "sized":
        return f"a value of length {d.value}"
    if d.kind == "none":
        return "none"
    if d.kind == "unmodelled":
        return None
    value = d.value
    if d.kind == "label":
        return str(value)
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        return encode_plain(value)
    return repr(value) if isinstance(value, float) else str(value)


def describe_model(model: z3.ModelRef, enc: Encoder, names: Iterable[str]) -> list[str]:
    """`name = value` lines for the variables of a witness, labels and strings shown as written."""
    out = []
    for name in sorted(set(names)):
        text = show(decode(model, enc, name))
        if text is not None:
            out.append(f"{name} = {text}")
    return out


def float_value(model: z3.ModelRef, term: z3.FPRef) -> float:
    """The Python float a model gives an IEEE double term."""
    value = model.eval(term, model_completion=True)
    if value.isNaN():
        return math.nan
    if value.isInf():
        return -math.inf if value.isNegative() else math.inf
    real = model.eval(z3.fpToReal(value), model_completion=True)
    out = float(real.as_fraction())
    return -0.0 if value.isZero() and value.isNegative() else out


#: Z3 resource units a question may spend per millisecond of its budget: about a millisecond's work on one core
#: of a 2026 laptop (Z3 counts 5,000–10,000 a millisecond on the project's 2-core CI box). A budget in units, not
#: time, gives the same answer on a loaded or slow machine as on an idle one (with the same Z3 release), so findings
#: (and the LLM compiler's requests built from them) do not depend on the load.
RLIMIT_PER_MS: Final = 5_000
#: The time a question may take, as a multiple of its budget: a backstop for work that Z3 does not count in units.
#: It is the solving thread's own CPU time where the platform has a clock for it (Linux), so another process
#: competing for the cores does not turn a decided question into "unknown"; elsewhere, the wall clock.
BACKSTOP_SLACK: Final = 10
#: How often the CPU-time backstop looks at the solving thread's clock, in seconds.
_WATCH_EVERY_S: Final = 0.05


@contextlib.contextmanager
def _cpu_backstop(ctx: z3.Context, seconds: float) -> Iterator[None]:
    """Interrupt `ctx`'s solver once the calling thread has spent `seconds` of CPU time in the block."""
    clock = time.pthread_getcpuclockid(threading.get_ident())
    deadline = time.clock_gettime(clock) + seconds
    done = threading.Event()

    def watch() -> None:
        while not done.wait(_WATCH_EVERY_S):
            if time.clock_gettime(clock) >= deadline:
                ctx.interrupt()  # the check answers unknown ("canceled"), as at a timeout
                return

    watcher = threading.Thread(target=watch, name="skillc-z3-backstop", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()


class Solver:
    """A Z3 solver in a context of its own, so that its answers depend only on the questions it is asked.

    Z3 keeps caches per context (rewrites, regular-expression derivatives), and a question's cost in resource
    units depends on them: in the shared default context a question near its budget could be decided after
    some earlier work in the process and not after other work (one build per process got one verdict, many
    builds in one process, as the API, the LSP server and the benches run them, another). The terms the
    encoder builds stay in the default context; each formula given to `add` or `check` is translated into
    this solver's context, and a model is translated back, so callers see plain z3 terms and models.
    """

    def __init__(self, timeout_ms: int) -> None:
        self.ctx = z3.Context()
        self._solver = z3.Solver(ctx=self.ctx)
        self._solver.set("rlimit", timeout_ms * RLIMIT_PER_MS)
        self._backstop_s = timeout_ms * BACKSTOP_SLACK / 1000
        if not _HAS_THREAD_CLOCK:
            self._solver.set("timeout", timeout_ms * BACKSTOP_SLACK)

    def _in(self, formulas: Iterable[z3.BoolRef]) -> list[z3.BoolRef]:
        return [f.translate(self.ctx) for f in formulas]

    def add(self, *formulas: z3.BoolRef) -> None:
        """Assert the formulas (terms of the default context)."""
        self._solver.add(*self._in(formulas))

    def push(self) -> None:
        """A backtracking point for `pop`."""
        self._solver.push()

    def pop(self) -> None:
        """Drop what was added since the matching `push`."""
        self._solver.pop()

    def check(self, *assumptions: z3.BoolRef) -> z3.CheckSatResult:
        """sat, unsat or unknown, under the assertions and these assumptions."""
        formulas = self._in(assumptions)
        if not _HAS_THREAD_CLOCK:
            return self._solver.check(*formulas)
        with _cpu_backstop(self.ctx, self._backstop_s):
            return self._solver.check(*formulas)

    def model(self) -> z3.ModelRef:
        """The last `check`'s model, over terms of the default context."""
        return self._solver.model().translate(z3.main_ctx())


def solver(timeout_ms: int) -> Solver:
    """A solver that gives up (answers unknown) past a budget of `timeout_ms` worth of Z3's resource units, the
    same on every machine (or, as a backstop, after `timeout_ms` × BACKSTOP_SLACK of the solving thread's CPU time,
    `_cpu_backstop`; of wall clock where there is no such clock), in a context of its own (`Solver`)."""
    return Solver(timeout_ms)


def canonical_key(m: Machine, exprs: Iterable[ir.Expr | None], *, keep_names: bool = False) -> str:
    """A key equal for questions that differ only in the names of their variables.

    Variables are renamed in order of first appearance, each new name carrying
    the variable's type and counter bound, so equal keys encode equal formulas.
    `keep_names`: each variable keeps its name too (for answers whose witnesses name the variables).
    """
    mapping: dict[str, str] = {}
    variables = m.variables

    def name(node: ir.Var) -> str:
        got = mapping.get(node.name)
        if got is None:
            v = variables.get(node.name)
            shown = node.name if keep_names else f"${len(mapping)}"
            got = mapping[node.name] = f"{shown}:{node.type!r}:{v.max if v is not None else None}"
        return got

    parts = ["default" if e is None else ir.shape(e, name) for e in exprs]
    return "|".join(parts)


# ------------------------------------------------------------ capability questions (check/capabilities.py)

#: What the checker knows of a variable's value where a tool is called: one of these constants (None: anything).
Known: TypeAlias = dict[str, frozenset[Scalar] | None]


def _pin(enc: Encoder, name: str, values: frozenset[Scalar]) -> z3.BoolRef | None:
    """`name` is one of `values`, in the encoding the question gave it (None where that cannot be said exactly)."""
    if enc.string_mode.get(name, "full") != "full" or name not in enc.vars:
        return None
    v = enc.vars[name]
    if v.none is not None or v.term is None:
        return None
    options: list[z3.BoolRef] = []
    for value in values:
        if v.kind == "str" and isinstance(value, str):
            literal = _string_literal(value)
            if literal is None:
                return None
            options.append(v.term == literal)
        elif v.kind == "int" and type(value) is int:
            options.append(v.term == value)
        elif v.kind == "bool" and isinstance(value, bool):
            options.append(v.term == z3.BoolVal(value))
        elif v.kind == "enum" and isinstance(value, str) and value in v.labels:
            options.append(v.term == v.labels.index(value))
        else:
            return None
    return z3.Or(options) if options else None


def _in_skill_folder(enc: Encoder, folder: str | None) -> z3.BoolRef | None:
    """What a question may take of `skill_dir`: a folder named `folder`, the skill's own (a run's default
    `skill_dir` is the skill document's folder), so an allowed-tools entry written for the skill where it is
    installed (`Bash(node *expo-ui/scripts/list.js *)`) is proved for a command under `skill_dir`."""
    v = enc.vars.get("skill_dir")
    if v is None or v.kind != "str" or v.term is None or not folder:
        return None
    literal = _string_literal("/" + folder)
    return z3.SuffixOf(literal, v.term) if literal is not None else None


def _ask(enc: Encoder, known: Known, claim: z3.BoolRef, ok: z3.BoolRef | None,
         timeout_ms: int, skill_folder: str | None) -> tuple[str, z3.ModelRef | None]:
    """Is `claim` valid wherever the call's arguments evaluate (`ok`), variables pinned to what is `known`?
    ("proved", None), ("refuted", a model of a call outside), or ("unknown", None)."""
    s = solver(timeout_ms)
    s.add(*enc.domain)
    for name, values in known.items():
        if values:
            pin = _pin(enc, name, values)
            if pin is not None:
                s.add(pin)
    place = _in_skill_folder(enc, skill_folder)
    if place is not None:
        s.add(place)
    if ok is not None:
        s.add(ok)
    s.add(z3.Not(claim))
    answer = s.check()
    if answer == z3.unsat:
        return "proved", None
    if answer == z3.sat:
        return "refuted", s.model()
    return "unknown", None


def command_allowed_proof(m: Machine, command: ir.Expr, known: Known, prefixes: Iterable[str],
                          exact: Iterable[str], timeout_ms: int,
                          patterns: Iterable[str] = (), skill_folder: str | None = None) -> tuple[str, str | None]:
    """Whether a bash `command` starts, on every path, with an allowed prefix as a whole word (`p + " "` or
    exactly `p`), equals an allowed command or matches an allowed wildcard command whole: ("proved" |
    "refuted" | "unknown", a counterexample command).

    The command's variables are free strings (numbers, labels, …, as what they print), except those pinned by
    `known`; `quote(x)` of an unsafe string is unknown text.
    """
    enc = Encoder(m)
    enc.begin([command])
    text = enc._text(command)
    term = text[0] if text is not None else z3.String("⟨command⟩")
    options: list[z3.BoolRef] = []
    for p in prefixes:
        literal, spaced = _string_literal(p.rstrip()), _string_literal(p if p.endswith(" ") else p + " ")
        if literal is not None and spaced is not None:
            options += [z3.PrefixOf(spaced, term), term == literal]
    for c in exact:
        literal = _string_literal(c.strip())
        if literal is not None:
            options.append(term == literal)
    for pattern in patterns:
        regex = _wildcard_re(pattern)
        if regex is not None:
            options.append(z3.InRe(term, regex))
    verdict, model = _ask(enc, known, z3.Or(options) if options else z3.BoolVal(False),
                          text[1] if text is not None else None, timeout_ms, skill_folder)
    if model is None:
        return verdict, None
    value = model_value(model, term)
    return verdict, value if isinstance(value, str) else None


def _wildcard_re(pattern: str) -> z3.ReRef | None:
    """A wildcard command (`npx *eas-cli@*`) as a Z3 regular expression (each `*`: any string), or None."""
    pieces: list[z3.ReRef] = []
    for i, part in enumerate(wildcard_parts(pattern.strip())):
        if i:
            pieces.append(z3.Full(z3.ReSort(z3.StringSort())))
        if part:
            literal = _string_literal(part)
            if literal is None:
                return None
            pieces.append(z3.Re(literal))
    return z3.Concat(*pieces) if len(pieces) > 1 else pieces[0] if pieces else None


def argv_allowed_proof(m: Machine, items: Sequence[ir.Expr], known: Known,
                       words: Iterable[tuple[tuple[str, ...], bool]], timeout_ms: int,
                       patterns: Iterable[str] = (), skill_folder: str | None = None) -> tuple[str, list[str] | None]:
    """Whether the argv `items` start with one of the allowed word lists (`(words, exact)`: exactly those words
    when `exact`), or, joined by spaces as the runtime joins them, match a wildcard command of `patterns` whole:
    ("proved" | "refuted" | "unknown", a counterexample argv)."""
    enc = Encoder(m)
    enc.begin(items)
    terms: list[z3.SeqRef] = []
    oks: list[z3.BoolRef | None] = []
    for i, item in enumerate(items):
        text = enc._text(item)
        terms.append(text[0] if text is not None else z3.String(f"⟨argv{i}⟩"))
        oks.append(text[1] if text is not None else None)
    options: list[z3.BoolRef] = []
    for ws, exact in words:
        if len(ws) > len(items) or (exact and len(ws) != len(items)):
            continue
        literals = [_string_literal(w) for w in ws]
        if any(x is None for x in literals):
            continue
        options.append(z3.And([t == x for t, x in zip(terms, literals)]) if ws else z3.BoolVal(True))
    if terms:
        joined = terms[0] if len(terms) == 1 else z3.Concat(*[p for t in terms for p in (t, z3.StringVal(" "))][:-1])
        for pattern in patterns:
            regex = _wildcard_re(pattern)
            if regex is not None:
                options.append(z3.InRe(joined, regex))
    verdict, model = _ask(enc, known, z3.Or(options) if options else z3.BoolVal(False), _all(*oks), timeout_ms,
                          skill_folder)
    if model is None:
        return verdict, None
    values = [model_value(model, t) for t in terms]
    return verdict, [v if isinstance(v, str) else "…" for v in values]
