"""Evaluate IR expressions over concrete values: the runtime's guard semantics, in one place.

Values are JSON-like: `str`, `int`, `float`, `bool`, `None` (none), lists,
dicts (maps and records) and enum labels as `str`. Errors that depend on
values (a missing key, an index out of range, division by zero, an int too
large for a float, an unset variable) raise `EvalError`; type errors cannot happen in a lowered machine.

The world functions of a terminal's `requires` (`exists(path)`, `file(path)`) are answered by a `World`
passed to `evaluate` (`WorkFolder`: the run's work folder, paths resolved inside it only). Without one,
or for a missing file, a path outside the folder or a file too large to compare, they raise `EvalError`:
a predicate that cannot be evaluated fails, it never crashes the run.
"""

from __future__ import annotations

import json
import math
import os
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from skillc.ir import expr as ir

if TYPE_CHECKING:
    from skillc.runtime.jsonvalue import Value

Env: TypeAlias = "Mapping[str, Value]"


class EvalError(Exception):
    """A guard or assignment could not be evaluated with these values."""


class UnsetVariable(EvalError):
    """The expression read a variable that has no value."""

    def __init__(self, name: str) -> None:
        super().__init__(f"variable `{name}` has no value")
        self.name = name


def text(value: object) -> str:
    """How a value prints inside `++` and `str()`: scalars plainly, structures as JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "none"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, (int, str)):
        return str(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


class World(Protocol):
    """What the world functions see: `exists(path)` and `file(path)` (EvalError when a path cannot be looked at)."""

    def exists(self, path: str) -> bool:
        """True when a file or folder is at `path`."""
        ...

    def file(self, path: str) -> str:
        """The text of the file at `path`."""
        ...


#: The largest file `file(path)` reads (a predicate compares text; a bigger file is a failed predicate).
MAX_FILE_BYTES = 16 * 1024 * 1024


class WorkFolder:
    """The world of a run: its work folder. A relative path is taken inside it; any path (absolute, `..`, a
    symlink) that resolves outside it cannot be looked at (EvalError), so a predicate judges only what the run
    could deliver there."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).resolve()

    def resolve(self, path: str) -> Path:
        """The absolute path inside the work folder, or EvalError."""
        if not isinstance(path, str) or not path or "\0" in path:
            raise EvalError(f"{path!r} is not a path")
        try:
            resolved = (self.root / path).resolve()
        except (OSError, RuntimeError, ValueError) as exc:  # a symlink loop
            raise EvalError(f"cannot resolve `{path}`: {exc}") from None
        if resolved != self.root and self.root not in resolved.parents:
            raise EvalError(f"`{path}` is outside the work folder")
        return resolved

    def exists(self, path: str) -> bool:
        return self.resolve(path).exists()

    def file(self, path: str) -> str:
        found = self.resolve(path)
        if found.is_dir():
            raise EvalError(f"`{path}` is a folder, not a file")
        try:
            with open(found, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            raise EvalError(f"`{path}`: no such file in the work folder") from None
        except OSError as exc:
            raise EvalError(f"`{path}` cannot be read: {exc.strerror or exc}") from None
        if len(data) > MAX_FILE_BYTES:
            raise EvalError(f"`{path}` is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
        return data.decode("utf-8", errors="replace")


def evaluate(e: ir.Expr, env: Env, world: World | None = None) -> Value:
    """The value of an expression; `env` maps assigned variables to values, `world` answers `exists`/`file`."""
    method = _EVAL.get(type(e))
    if method is None:  # pragma: no cover - every IR class is listed
        raise TypeError(f"cannot evaluate {type(e).__name__}")
    return method(e, env, world)


def _var(e: ir.Var, env: Env, world: World | None) -> Value:
    if e.name not in env:
        raise UnsetVariable(e.name)
    return env[e.name]


def _binop(e: ir.BinOp, env: Env, world: World | None) -> Value:
    op = e.op
    if op == "and":
        return bool(evaluate(e.left, env, world)) and bool(evaluate(e.right, env, world))
    if op == "or":
        return bool(evaluate(e.left, env, world)) or bool(evaluate(e.right, env, world))
    a, b = evaluate(e.left, env, world), evaluate(e.right, env, world)
    if op == "==":
        return _equal(a, b)
    if op == "!=":
        return not _equal(a, b)
    if op == "++":
        return text(a) + text(b)
    try:
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        if op == ">=":
            return a >= b
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "%":
            return a % b
    except ZeroDivisionError:
        raise EvalError(f"division by zero in `{op}`") from None
    except OverflowError:  # an int beyond the range of a float, beside a float or in `/`
        raise EvalError(f"number too large for a float in `{op}`") from None
    except TypeError:
        raise EvalError(f"`{op}` on none") from None
    raise AssertionError(op)


def _equal(a: object, b: object) -> bool:
    """Equality in which `true` is not `1` (Python's bool is an int)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and bool(a == b)
    return bool(a == b)


def _index(e: ir.GetIndex, env: Env, world: World | None) -> Value:
    obj, key = evaluate(e.obj, env, world), evaluate(e.key, env, world)
    try:
        return obj[key]
    except (IndexError, KeyError, TypeError):
        raise EvalError(f"no item {key!r}") from None


def _field(e: ir.GetField, env: Env, world: World | None) -> Value:
    obj = evaluate(e.obj, env, world)
    if obj is None:
        return None
    try:
        return obj[e.field]
    except (KeyError, TypeError):
        raise EvalError(f"no field `{e.field}`") from None


def _call(e: ir.Call, env: Env, world: World | None) -> Value:
    args = [evaluate(a, env, world) for a in e.args]
    if e.func == "len":
        return len(args[0]) if args[0] is not None else 0
    if e.func == "str":
        return text(args[0])
    if e.func == "quote":
        return shlex.quote(text(args[0]))
    if e.func == "trusted":
        return args[0]
    if e.func == "contains":
        hay, needle = args
        try:
            return hay is not None and needle in hay
        except TypeError:  # none looked up in a string
            raise EvalError("`contains` of none in a string") from None
    if e.func in ("exists", "file"):
        if world is None:
            raise EvalError(f"`{e.func}` looks at the world, and there is none here (only a run's terminal has one)")
        return world.exists(args[0]) if e.func == "exists" else world.file(args[0])
    raise AssertionError(e.func)


_EVAL: dict[type[ir.Expr], Callable[[Any, Env, World | None], Value]] = {
    ir.Var: _var,
    ir.Const: lambda e, env, world: e.value,
    ir.Label: lambda e, env, world: e.value,
    ir.BinOp: _binop,
    ir.Not: lambda e, env, world: not evaluate(e.operand, env, world),
    ir.Neg: lambda e, env, world: -evaluate(e.operand, env, world),
    ir.GetField: _field,
    ir.GetIndex: _index,
    ir.Call: _call,
    ir.ListExpr: lambda e, env, world: [evaluate(i, env, world) for i in e.items],
    ir.InSet: lambda e, env, world: any(_equal(evaluate(e.operand, env, world), evaluate(i, env, world))
                                        for i in e.items),
}
