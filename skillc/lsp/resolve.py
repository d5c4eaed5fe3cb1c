"""Every name of one parsed document, located and resolved to the symbol it means.

The AST keeps names as strings (an edge's target, a `reads` list), so their places are found from the
node spans: the words (outside strings and comments) inside a node's span are matched, in order, with
the names the node holds. Expressions have exact spans (`Name`, `Field`). Each occurrence gets a symbol
*key* — what it refers to, independent of where it is written — so that references and renames are
exact: a state and an enum label both called `bad` are different symbols, and `inst.x` in a machine is
the state `x` of the fragment `inst` instantiates (possibly in another file).

Keys (tuples): `("state", path, block, name)` for states, terminals, `fallback` and fragment exits;
`("variable", path, block, name)` for inputs, vars, counters and fragment parameters; `("tool", path,
block, name)`; `("instance", path, block, name)`; `("fragment", path, name)` with the path of the file that
defines it; `("type", path, block, name)`; `("label", path, block, name)`; `("param"|"result", path,
block, tool, name)` for a tool's parameters and results; `("field", name)`, `("function", name)` and
`("place", name)`. `block` is the machine's or fragment's name ("" at module level).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Mapping

import attrs

from skillc.syntax import nodes as n

Key = tuple[str, ...]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_MASK = re.compile(r'"""(?:[^"]|"(?!""))*"""|"(?:[^"\\\n\r]|\\.)*"|#[^\n]*')
_NUMBER = re.compile(r"(?<![\w.])[0-9]+(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)?")


def builtin_functions() -> tuple[str, ...]:
    try:
        from skillc.ir import exprs  # guarded: a stage being rewritten must not break the editor

        return tuple(getattr(exprs, "FUNCTIONS", ())) + tuple(getattr(exprs, "WORLD", ()))
    except Exception:  # noqa: BLE001 - a stage being rewritten must not break the editor
        return ("len", "str", "contains", "quote", "trusted")


def place_names() -> frozenset[str]:
    try:
        from skillc.ir.names import PLACE_NAMES  # guarded, as in builtin_functions

        return frozenset(PLACE_NAMES)
    except Exception:  # noqa: BLE001
        return frozenset()


BUILTIN_TYPES = ("str", "int", "float", "bool")


@attrs.frozen
class Occurrence:
    """One written name: where, what it means (`key`), and whether it is the definition."""

    start: int
    end: int
    name: str
    kind: str  # the key's first element
    key: Key | None
    definition: bool = False


@attrs.define
class Scope:
    """The names one machine or fragment declares (or sees)."""

    path: str
    block: str
    states: set[str] = attrs.Factory(set)
    variables: set[str] = attrs.Factory(set)
    tools: set[str] = attrs.Factory(set)
    instances: dict[str, str] = attrs.Factory(dict)  # instance -> fragment
    types: set[str] = attrs.Factory(set)
    labels: set[str] = attrs.Factory(set)
    tool_signatures: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = attrs.Factory(dict)


@attrs.define
class Resolved:
    """The occurrences of one document, in source order, with lookups."""

    text: str
    path: str
    occurrences: list[Occurrence]
    scopes: dict[str, Scope]
    starts: list[int] = attrs.Factory(list)

    def __attrs_post_init__(self) -> None:
        self.occurrences.sort(key=lambda o: (o.start, o.end))
        self.starts = [o.start for o in self.occurrences]

    def at(self, offset: int) -> Occurrence | None:
        """The occurrence covering an offset (its end included, so a cursor right after a name finds it)."""
        i = bisect.bisect_right(self.starts, offset) - 1
        while i >= 0 and self.occurrences[i].start <= offset:
            o = self.occurrences[i]
            if offset <= o.end:
                return o
            if offset - o.start > 200:
                break
            i -= 1
        return None

    def of(self, key: Key) -> list[Occurrence]:
        return [o for o in self.occurrences if o.key == key]


class _Words:
    """The words of a text outside strings and comments, dotted names as one word."""

    def __init__(self, text: str) -> None:
        masked = _MASK.sub(lambda m: " " * len(m.group(0)) if "\n" not in m.group(0)
                           else re.sub(r"[^\n]", " ", m.group(0)), text)
        self.masked = masked
        self.words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(masked)]
        self.starts = [w[0] for w in self.words]

    def within(self, start: int, end: int) -> list[tuple[int, int, str]]:
        i = bisect.bisect_left(self.starts, start)
        j = bisect.bisect_left(self.starts, end, i)
        return self.words[i:j]


class _Resolver:
    def __init__(self, module: n.Module, text: str, path: str, fragment_paths: Mapping[str, str]) -> None:
        self.module = module
        self.text = text
        self.path = path
        self.words = _Words(text)
        self.out: list[Occurrence] = []
        self.fragment_paths = dict(fragment_paths)  # fragment -> defining file
        self.scopes: dict[str, Scope] = {}
        self.functions = set(builtin_functions())
        self.places = place_names()
        self.module_types: set[str] = set()
        self.module_labels: set[str] = set()
        self.records: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ helpers

    def add(self, start: int, end: int, name: str, key: Key | None, definition: bool = False) -> None:
        kind = key[0] if key else "unknown"
        self.out.append(Occurrence(start, end, name, kind, key, definition))

    def add_dotted(self, start: int, word: str, keys: list[Key | None], definition: bool = False) -> None:
        """A dotted word whose parts resolve to `keys` (one per part)."""
        at = start
        for part, key in zip(word.split("."), keys):
            self.add(at, at + len(part), part, key, definition)
            at += len(part) + 1

    def find(self, node: n.Node, names: list[str], skip: int = 0) -> Iterator[tuple[int, str]]:
        """(start, word) of each of `names` among the words of the node's span, in order, after `skip` words."""
        if node.span is None:
            return
        words = self.words.within(node.span.start, node.span.end)[skip:]
        i = 0
        for name in names:
            while i < len(words) and words[i][2] != name:
                i += 1
            if i == len(words):
                return
            yield words[i][0], name
            i += 1

    # ------------------------------------------------------------------ declarations

    def run(self) -> Resolved:
        for item in self.module.items:
            if isinstance(item, n.RecordDecl):
                self.module_types.add(item.name)
                self.records[item.name] = {f.name for f in item.items}
            elif isinstance(item, n.EnumDecl):
                self.module_types.add(item.name)
                self.module_labels.update(item.labels)
        for item in self.module.items:
            if isinstance(item, n.Fragment):
                self.fragment_paths.setdefault(item.name, self.path)
        for item in self.module.items:
            if isinstance(item, (n.Machine, n.Fragment)):
                self.block(item)
            elif isinstance(item, (n.RecordDecl, n.EnumDecl)):
                self.type_decl(item, Scope(self.path, ""))
        return Resolved(self.text, self.path, self.out, self.scopes)

    def declare(self, owner: n.Machine | n.Fragment) -> Scope:
        scope = Scope(self.path, owner.name)
        scope.types.update(self.module_types)
        scope.labels.update(self.module_labels)
        if isinstance(owner, n.Fragment):
            scope.variables.update(p.name for p in owner.params)
            scope.states.update(owner.exits)
        scope.states.add("fallback")
        for d in owner.items:
            if isinstance(d, n.State | n.Terminal):
                scope.states.add(d.name)
            elif isinstance(d, n.VarDecl | n.CounterDecl):
                scope.variables.add(d.name)
                if isinstance(d, n.VarDecl):
                    scope.labels.update(_inline_labels(d.type))
            elif isinstance(d, n.ToolDecl):
                scope.tools.add(d.name)
                scope.tool_signatures[d.name] = (tuple(p.name for p in d.params), tuple(p.name for p in d.results))
            elif isinstance(d, n.Use):
                scope.instances[d.name] = d.fragment
            elif isinstance(d, n.RecordDecl):
                scope.types.add(d.name)
                self.records[d.name] = {f.name for f in d.items}
            elif isinstance(d, n.EnumDecl):
                scope.types.add(d.name)
                scope.labels.update(d.labels)
            elif isinstance(d, n.UseTools):
                scope.tools.update(d.tools)
        for p in owner.params if isinstance(owner, n.Fragment) else ():
            scope.labels.update(_inline_labels(p.type))
        self.scopes[owner.name] = scope
        return scope

    def key(self, kind: str, scope: Scope, name: str) -> Key:
        return (kind, scope.path, scope.block, name)

    def block(self, owner: n.Machine | n.Fragment) -> None:
        scope = self.declare(owner)
        if isinstance(owner, n.Fragment):
            for start, name in self.find(owner, [owner.name], skip=0):
                self.add(start, start + len(name), name, ("fragment", self.path, name), True)
                break
            for p in owner.params:
                self.param(p, self.key("variable", scope, p.name), scope)
            header_end = owner.items[0].span.start if owner.items and owner.items[0].span else (
                owner.span.end if owner.span else 0)
            last = owner.params[-1].span.end if owner.params and owner.params[-1].span else (
                owner.span.start if owner.span else 0)
            words = self.words.within(last, header_end)
            i = 0
            for x in owner.exits:
                while i < len(words) and words[i][2] != x:
                    i += 1
                if i < len(words):
                    self.add(words[i][0], words[i][1], x, self.key("state", scope, x), True)
                    i += 1
        else:
            for start, name in self.find(owner, [owner.name], skip=1):
                self.add(start, start + len(name), name, ("machine", self.path, name), True)
                break
        for d in owner.items:
            self.stmt(d, scope)

    def type_decl(self, d: n.RecordDecl | n.EnumDecl, scope: Scope) -> None:
        for start, name in self.find(d, [d.name], skip=1):
            self.add(start, start + len(name), name, self.key("type", scope, d.name), True)
        if isinstance(d, n.RecordDecl):
            for f in d.items:
                if f.span is not None:
                    self.add(f.span.start, f.span.start + len(f.name), f.name, ("field", f.name), True)
                    self.type_expr(f.type, scope)
        else:
            for start, label in self.find(d, list(d.labels), skip=2):
                self.add(start, start + len(label), label, self.key("label", scope, label), True)

    def param(self, p: n.Param, key: Key, scope: Scope) -> None:
        if p.span is not None:
            self.add(p.span.start, p.span.start + len(p.name), p.name, key, True)
        self.type_expr(p.type, scope)

    def type_expr(self, t: n.TypeExpr, scope: Scope) -> None:
        if isinstance(t, n.NamedType) and t.span is not None:
            key: Key = ("type", "", "", t.name) if t.name in BUILTIN_TYPES else self.type_key(scope, t.name)
            self.add(t.span.start, t.span.end, t.name, key)
        elif isinstance(t, n.EnumType):
            for start, label in self.find(t, list(t.labels), skip=1):
                self.add(start, start + len(label), label, self.key("label", scope, label), True)
        else:
            for child in t.children():
                if isinstance(child, n.TypeExpr):
                    self.type_expr(child, scope)

    def type_key(self, scope: Scope, name: str) -> Key:
        if name in scope.types and name not in self.module_types:
            return ("type", scope.path, scope.block, name)
        return ("type", scope.path, "", name)

    # ------------------------------------------------------------------ statements

    def state_key(self, scope: Scope, word: str) -> list[Key | None]:
        """Keys of the parts of a (dotted) state reference: `x`, `inst`, `inst.x`."""
        head, *rest = word.split(".")
        if head in scope.instances and head not in scope.states:
            keys: list[Key | None] = [self.key("instance", scope, head)]
            frag = scope.instances[head]
            if rest:
                fpath = self.fragment_paths.get(frag, "?")
                keys.append(("state", fpath, frag, rest[0]))
                keys += [None] * (len(rest) - 1)
            return keys
        return [self.key("state", scope, head)] + [None] * len(rest)

    def var_key(self, scope: Scope, word: str) -> list[Key | None]:
        head, *rest = word.split(".")
        if head in scope.instances and head not in scope.variables:
            frag = scope.instances[head]
            keys: list[Key | None] = [self.key("instance", scope, head)]
            if rest:
                keys.append(("variable", self.fragment_paths.get(frag, "?"), frag, rest[0]))
                keys += [None] * (len(rest) - 1)
            return keys
        out: list[Key | None] = [("place", head) if head in self.places and head not in scope.variables
                                 else self.key("variable", scope, head)]
        return out + [("field", r) for r in rest]

    def qualnames(self, node: n.Node, names: list[str], scope: Scope,
                  resolver: Callable[[Scope, str], list[Key | None]], skip: int = 1) -> None:
        for start, word in self.find(node, names, skip=skip):
            self.add_dotted(start, word, resolver(scope, word))

    def stmt(self, d: n.Stmt, scope: Scope) -> None:
        if isinstance(d, n.State):
            for start, name in self.find(d, [d.name], skip=1):
                self.add(start, start + len(name), name, self.key("state", scope, d.name), True)
            for state_item in d.items:
                self.state_item(state_item, d, scope)
        elif isinstance(d, n.Terminal):
            for start, name in self.find(d, [d.name], skip=1):
                self.add(start, start + len(name), name, self.key("state", scope, d.name), True)
            for terminal_item in d.items:
                self.state_item(terminal_item, d, scope)
        elif isinstance(d, n.Fallback):
            if d.span is not None:
                self.add(d.span.start, d.span.start + len("fallback"), "fallback", self.key("state", scope, "fallback"),
                         True)
            for fallback_item in d.items:
                self.state_item(fallback_item, d, scope)
        elif isinstance(d, n.VarDecl):
            for start, name in self.find(d, [d.name], skip=1):
                self.add(start, start + len(name), name, self.key("variable", scope, d.name), True)
            self.type_expr(d.type, scope)
            if d.init is not None:
                self.expr(d.init, scope)
        elif isinstance(d, n.CounterDecl):
            for start, name in self.find(d, [d.name], skip=1):
                self.add(start, start + len(name), name, self.key("variable", scope, d.name), True)
        elif isinstance(d, n.ToolDecl):
            for start, name in self.find(d, [d.name], skip=1):
                self.add(start, start + len(name), name, self.key("tool", scope, d.name), True)
            for p in d.params:
                self.param(p, ("param", scope.path, scope.block, d.name, p.name), scope)
            for p in d.results:
                self.param(p, ("result", scope.path, scope.block, d.name, p.name), scope)
        elif isinstance(d, (n.RecordDecl, n.EnumDecl)):
            self.type_decl(d, scope)
        elif isinstance(d, n.Start):
            self.qualnames(d, [d.target], scope, self.state_key)
        elif isinstance(d, n.Rule):
            self.qualnames(d, list(d.ops), scope, self.state_key, skip=2)
        elif isinstance(d, n.Use):
            self.use(d, scope)
        elif isinstance(d, n.UseTools):
            for start, name in self.find(d, list(d.tools), skip=3):
                self.add(start, start + len(name), name, self.key("tool", scope, name))

    def use(self, d: n.Use, scope: Scope) -> None:
        frag = d.fragment
        fpath = self.fragment_paths.get(frag, "?")
        found = list(self.find(d, [frag, d.name], skip=1))
        if found:
            self.add(found[0][0], found[0][0] + len(frag), frag, ("fragment", fpath, frag))
        if len(found) > 1:
            self.add(found[1][0], found[1][0] + len(d.name), d.name, self.key("instance", scope, d.name), True)
        for b in d.bindings:
            if b.span is None:
                continue
            self.add(b.span.start, b.span.start + len(b.name), b.name, ("variable", fpath, frag, b.name))
            words = self.words.within(b.span.start, b.span.end)
            if len(words) >= 2 and words[-1][2] == b.target:
                self.add_dotted(words[-1][0], b.target, self.var_key(scope, b.target))
        for b in d.exits:
            if b.span is None:
                continue
            self.add(b.span.start, b.span.start + len(b.name), b.name, ("state", fpath, frag, b.name))
            words = self.words.within(b.span.start, b.span.end)
            if len(words) >= 2 and words[-1][2] == b.target:
                self.add_dotted(words[-1][0], b.target, self.state_key(scope, b.target))

    def state_item(self, item: n.Stmt, state: n.Block, scope: Scope) -> None:
        if isinstance(item, n.Reads):
            self.qualnames(item, list(item.names), scope, self.var_key)
        elif isinstance(item, n.Writes):
            call = next((i for i in state.body if isinstance(i, n.Call)), None)
            for w in item.items:
                if w.span is None:
                    continue
                words = self.words.within(w.span.start, w.span.end)
                if words and words[0][2] == w.var:
                    self.add_dotted(words[0][0], w.var, self.var_key(scope, w.var))
                if w.result is not None and len(words) >= 2 and words[-1][2] == w.result:
                    tool = call.tool if call is not None else ""
                    self.add(words[-1][0], words[-1][1], w.result, ("result", scope.path, scope.block, tool, w.result))
        elif isinstance(item, n.Call):
            for start, name in self.find(item, [item.tool], skip=1):
                self.add(start, start + len(name), name, self.key("tool", scope, item.tool))
            for a in item.args:
                if a.span is not None:
                    self.add(a.span.start, a.span.start + len(a.name), a.name,
                             ("param", scope.path, scope.block, item.tool, a.name))
                self.expr(a.value, scope)
        elif isinstance(item, n.Edge):
            if item.guard is not None:
                self.expr(item.guard, scope)
            after = item.guard.span.end if item.guard is not None and item.guard.span is not None else (
                item.span.start if item.span is not None else 0)
            end = item.span.end if item.span is not None else after
            for start, _, word in self.words.within(after, end):
                if word == item.target:
                    self.add_dotted(start, word, self.state_key(scope, word))
                    break
            for assign in item.assigns:
                if assign.span is not None:
                    words = self.words.within(assign.span.start, assign.span.end)
                    if words and words[0][2] == assign.target:
                        self.add_dotted(words[0][0], assign.target, self.var_key(scope, assign.target))
                self.expr(assign.value, scope)
        elif isinstance(item, n.Requires):
            for e in item.evidence:
                self.expr(e, scope)

    # ------------------------------------------------------------------ expressions

    def expr(self, e: n.Expr, scope: Scope) -> None:
        if isinstance(e, n.Name):
            if e.span is not None:
                self.add(e.span.start, e.span.end, e.id, self.name_key(scope, e.id))
            return
        if isinstance(e, n.Field):
            self.expr(e.obj, scope)
            if e.span is not None and self.text[e.span.end - len(e.name):e.span.end] == e.name:
                head = n.dotted_name(e.obj)
                if head is not None and head in scope.instances and head not in scope.variables:
                    frag = scope.instances[head]
                    key: Key = ("variable", self.fragment_paths.get(frag, "?"), frag, e.name)
                else:
                    key = ("field", e.name)
                self.add(e.span.end - len(e.name), e.span.end, e.name, key)
            return
        if isinstance(e, n.CallExpr):
            if e.span is not None:
                self.add(e.span.start, e.span.start + len(e.func), e.func, ("function", e.func))
            for a in e.args:
                self.expr(a, scope)
            return
        for child in e.children():
            if isinstance(child, n.Expr):
                self.expr(child, scope)

    def name_key(self, scope: Scope, name: str) -> Key | None:
        if name in scope.variables:
            return self.key("variable", scope, name)
        if name in self.places:
            return ("place", name)
        if name in scope.labels:
            return self.key("label", scope, name)
        if name in scope.instances:
            return self.key("instance", scope, name)
        return ("variable", scope.path, scope.block, name)  # undeclared: still a variable to the user


def _inline_labels(t: n.TypeExpr) -> set[str]:
    if isinstance(t, n.EnumType):
        return set(t.labels)
    out: set[str] = set()
    for child in t.children():
        if isinstance(child, n.TypeExpr):
            out |= _inline_labels(child)
    return out


def resolve(module: n.Module, text: str, path: str, fragment_paths: Mapping[str, str] | None = None) -> Resolved:
    """The resolved occurrences of a parsed document. `fragment_paths`: imported fragment -> defining file."""
    return _Resolver(module, text, path, fragment_paths or {}).run()


def words(text: str) -> list[tuple[int, int, str]]:
    """The words (dotted names as one) outside strings and comments."""
    return _Words(text).words


def masked(text: str) -> str:
    """The text with strings and comments blanked (newlines kept)."""
    return _Words(text).masked


def numbers(masked_text: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _NUMBER.finditer(masked_text)]
