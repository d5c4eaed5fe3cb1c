"""What a Python function's source says: the keys its returned dicts write, the state keys it reads.

Used by the LangGraph importer on node functions and routers. Everything here
is read from the source with `ast`, never by calling the function; a function
whose source is not available (a builtin, a lambda typed in a REPL) is unknown.
"""

from __future__ import annotations

import ast
import inspect
import linecache
from collections.abc import Callable, Iterator
from types import CodeType

import attrs

from skillc.diagnostics import SourceFile, Span

_FILES: dict[str, tuple[SourceFile, ast.Module] | None] = {}  # each file is read and parsed once


@attrs.frozen
class Function:
    """A function's syntax tree, the name of its state parameter and where it is written."""

    tree: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    state: str | None
    span: Span


def function(func: Callable[..., object]) -> Function | None:
    """The source of `func` (a def or a lambda), or None when it cannot be found."""
    func = inspect.unwrap(func)
    code = getattr(func, "__code__", None)
    # hasattr also guards the `func.__call__` lookup below (callable() checks the type only)
    if code is None and callable(func) and hasattr(func, "__call__"):  # noqa: B004
        code = getattr(func.__call__, "__code__", None)
    if code is None:
        return None
    parsed = _parsed(code.co_filename)
    if parsed is None:
        return None
    source, module = parsed
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and \
                getattr(node, "lineno", 0) == code.co_firstlineno and _name_matches(node, code):
            args = node.args.posonlyargs + node.args.args
            params = [a.arg for a in args if a.arg not in ("self", "cls")]
            start = source.line_starts[node.lineno - 1] + node.col_offset
            end = source.line_starts[node.lineno - 1] + len(source.line_text(node.lineno))
            return Function(node, params[0] if params else None, Span(source, start, end))
    return None


def _name_matches(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, code: CodeType) -> bool:
    if isinstance(node, ast.Lambda):
        return code.co_name == "<lambda>"
    return node.name == code.co_name


def _parsed(path: str) -> tuple[SourceFile, ast.Module] | None:
    """The text and syntax tree of a source file (None when it cannot be read or parsed)."""
    if path not in _FILES:
        lines = linecache.getlines(path)
        source = SourceFile.from_text(path, "".join(lines)) if lines else None
        try:
            _FILES[path] = (source, ast.parse(source.text)) if source is not None else None
        except (SyntaxError, ValueError):
            _FILES[path] = None
    return _FILES[path]


def returns(fn: Function) -> list[ast.expr | None]:
    """The values the function returns (None for a bare `return` or falling off the end)."""
    if isinstance(fn.tree, ast.Lambda):
        return [fn.tree.body]
    found: list[ast.expr | None] = [r.value for r in _own(fn.tree) if isinstance(r, ast.Return)]
    body = fn.tree.body
    if not body or not isinstance(body[-1], (ast.Return, ast.Raise)):
        found.append(None)
    return found


def _own(tree: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a function body, not descending into nested functions or classes."""
    stack = list(ast.iter_child_nodes(tree))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def dict_keys(value: ast.expr | None) -> set[str] | None:
    """The keys a returned value writes: a dict literal of constant keys, `Command(update={…})` or None."""
    if value is None or (isinstance(value, ast.Constant) and value.value is None):
        return set()
    if isinstance(value, ast.Dict):
        if any(k is None or not (isinstance(k, ast.Constant) and isinstance(k.value, str)) for k in value.keys):
            return None
        return {k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    if isinstance(value, ast.Call) and _called(value) == "Command":
        update = next((kw.value for kw in value.keywords if kw.arg == "update"), None)
        return dict_keys(update)
    return None


def gotos(fn: Function) -> set[str] | None:
    """The constant `goto=` targets of the `Command`s the function returns; None when one is not constant."""
    found: set[str] = set()
    for value in returns(fn):
        if isinstance(value, ast.Call) and _called(value) == "Command":
            goto = next((kw.value for kw in value.keywords if kw.arg == "goto"), None)
            items = goto.elts if isinstance(goto, (ast.List, ast.Tuple)) else [goto] if goto is not None else []
            for item in items:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    found.add(item.value)
                elif isinstance(item, ast.Name) and item.id == "END":
                    found.add("__end__")
                else:
                    return None
    return found


def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def hard_reads(fn: Function) -> set[str]:
    """State keys read with `state["k"]` or `state.k`: reads that fail when the key has no value."""
    if fn.state is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(fn.tree):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == fn.state \
                and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str) \
                and isinstance(node.ctx, ast.Load):
            found.add(node.slice.value)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == fn.state \
                and isinstance(node.ctx, ast.Load) and node.attr not in ("get", "keys", "items", "values"):
            found.add(node.attr)
    return found


def counts(fn: Function) -> bool:
    """True when the function compares something read from the state with a number (`state["n"] < 3`,
    `len(state["messages"]) > 10`): the sign of a counter that bounds a loop."""
    for node in ast.walk(fn.tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE))
                                                 for op in node.ops):
            sides = [node.left, *node.comparators]
            numbers = [s for s in sides if isinstance(s, ast.Constant) and isinstance(s.value, (int, float))]
            state = [s for s in sides if _reads_state(s, fn.state)]
            if numbers and state:
                return True
    return False


def _reads_state(node: ast.AST, state: str | None) -> bool:
    return state is not None and any(isinstance(n, ast.Name) and n.id == state for n in ast.walk(node))


def refers_to(func: Callable[..., object], keys: set[str], depth: int = 1) -> bool:
    """True when the function's source, or that of a function it refers to (closure or module global, `depth`
    levels), names one of `keys` as a string or an attribute: `state["remaining_steps"]`, `state.remaining_steps`,
    a helper's `get(state, "remaining_steps")`."""
    fn = function(func) if keys else None
    if fn is None:
        return False
    for node in ast.walk(fn.tree):
        if (isinstance(node, ast.Constant) and node.value in keys) or \
                (isinstance(node, ast.Attribute) and node.attr in keys):
            return True
    if depth <= 0:
        return False
    try:
        refs = inspect.getclosurevars(inspect.unwrap(func))
    except (TypeError, ValueError):
        return False
    helpers = [v for v in (*refs.nonlocals.values(), *refs.globals.values()) if inspect.isfunction(v)]
    return any(refers_to(h, keys, depth - 1) for h in helpers)
