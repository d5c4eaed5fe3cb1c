"""Completion from the text before the cursor and the last analysis that parsed (the document being typed
usually does not parse: `when verdict == ` is half a guard).

Contexts, first match wins: a state after `->`, `start`, a rule's operations or a fragment exit binding
(`inst.` lists that instance's states); a tool after `call`; a fragment after `use`; inside `call tool(`
the tool's parameters not yet given (variables after `name:`); after `x.` the fields of a record-typed
variable (or an instance's variables); after `v ==`, `v !=` or `v in {` the labels of `v`'s enum; at the
start of a statement the keywords that may stand there; variables (and built-in functions) elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from skillc.ir import types as T
from skillc.lsp.resolve import BUILTIN_TYPES, builtin_functions, masked, place_names
from skillc.syntax import nodes as n

if TYPE_CHECKING:
    from skillc.ir.machine import Machine
    from skillc.ir.symbols import FragmentDef

K = lsp.CompletionItemKind

# Keywords offered at the start of a statement, by where it stands (extend them with the grammar).
TOP_KEYWORDS: tuple[str, ...] = ("machine", "fragment", "import", "record", "enum")
BODY_KEYWORDS: tuple[str, ...] = ("doc", "source", "tool", "input", "var", "counter", "start", "model", "judge",
                                  "terminal", "fallback", "rule", "use", "record", "enum", "allow")
STATE_KEYWORDS: tuple[str, ...] = ("reads", "writes", "prompt", "call", "when", "doc", "from")
TERMINAL_KEYWORDS: tuple[str, ...] = ("requires", "doc", "from")
RULE_KINDS: tuple[str, ...] = ("required", "order", "forbid", "ends", "reads")
USE_KEYWORDS: tuple[str, ...] = ("tools",)  # `use tools std`

_STATE_CONTEXT = [re.compile(p) for p in (
    r"->\s*(?P<part>[\w.]*)$",
    r"\bstart\s+(?P<part>[\w.]*)$",
    r"\brule\s+(?:required|forbid|order|ends)\s+(?P<part>[\w.]*)$",
    r"\brule\s+order\s+[\w.]+\s+before\s+(?P<part>[\w.]*)$",
    r"\brule\s+reads\s+[\w.]+\s+from\s+(?P<part>[\w.]*)$",
)]
_EXIT_BINDING = re.compile(r"->\s*\([^)]*\b\w+\s*:\s*(?P<part>[\w.]*)$")
_CALL_OPEN = re.compile(r"\bcall\s+(\w+)\s*\(")


class Names:
    """What the last analysis knows: declared names by kind, and the machine's types when it lowered."""

    def __init__(self, module: n.Module | None, machine: Machine | None, fragments: dict[str, FragmentDef],
                 offset: int | None = None) -> None:
        self.machine = machine
        self.fragments = fragments
        self.states: set[str] = {"fallback"}
        self.terminals: set[str] = {"fallback"}
        self.variables: dict[str, str] = {}  # name -> type as written
        self.tools: dict[str, n.ToolDecl] = {}
        self.instances: dict[str, str] = {}
        self.own_fragments: dict[str, n.Fragment] = {}
        self.enums: dict[str, tuple[str, ...]] = {}
        self.records: dict[str, tuple[str, ...]] = {}
        self.var_types: dict[str, n.TypeExpr] = {}
        if module is None:
            return
        for item in module.items:
            self._type(item)
            if isinstance(item, n.Fragment):
                self.own_fragments[item.name] = item
        blocks = [i for i in module.items if isinstance(i, (n.Machine, n.Fragment))]
        owner = next((b for b in blocks if offset is not None and b.span is not None
                      and b.span.start <= offset <= b.span.end), blocks[0] if blocks else None)
        if owner is None:
            return
        if isinstance(owner, n.Fragment):
            for p in owner.params:
                self._var(p.name, p.type)
            self.states.update(owner.exits)
        for d in owner.items:
            self._type(d)
            if isinstance(d, n.State):
                self.states.add(d.name)
            elif isinstance(d, n.Terminal):
                self.states.add(d.name)
                self.terminals.add(d.name)
            elif isinstance(d, n.VarDecl):
                self._var(d.name, d.type)
            elif isinstance(d, n.CounterDecl):
                self.variables[d.name] = "int"
            elif isinstance(d, n.ToolDecl):
                self.tools[d.name] = d
            elif isinstance(d, n.Use):
                self.instances[d.name] = d.fragment

    def _type(self, d: n.Node) -> None:
        if isinstance(d, n.EnumDecl):
            self.enums[d.name] = d.labels
        elif isinstance(d, n.RecordDecl):
            self.records[d.name] = tuple(f.name for f in d.items)

    def _var(self, name: str, t: n.TypeExpr) -> None:
        self.var_types[name] = t
        self.variables[name] = t.span.text() if t.span is not None else ""

    # ------------------------------------------------------------------ types of (dotted) names

    def labels(self, dotted: str) -> tuple[str, ...]:
        t = self._ir_type(dotted)
        if t is not None:
            t = T.strip_optional(t)
            return t.labels if isinstance(t, T.EnumT) else ()
        written = self.var_types.get(dotted)
        while isinstance(written, n.OptionalType):
            written = written.inner
        if isinstance(written, n.EnumType):
            return written.labels
        if isinstance(written, n.NamedType):
            return self.enums.get(written.name, ())
        return ()

    def fields(self, dotted: str) -> tuple[str, ...]:
        t = self._ir_type(dotted)
        if t is not None:
            t = T.strip_optional(t)
            return tuple(f for f, _ in t.fields) if isinstance(t, T.RecordT) else ()
        written = self.var_types.get(dotted)
        while isinstance(written, n.OptionalType):
            written = written.inner
        if isinstance(written, n.NamedType):
            return self.records.get(written.name, ())
        return ()

    def _ir_type(self, dotted: str) -> T.Type | None:
        if self.machine is None:
            return None
        head, *rest = dotted.split(".")
        var = self.machine.variables.get(head)
        if var is None:
            return None
        t: T.Type | None = var.type
        for part in rest:
            t = T.strip_optional(t) if t is not None else None
            t = t.field(part) if isinstance(t, T.RecordT) else None
        return t

    def instance_states(self, instance: str) -> list[str]:
        frag = self.instances.get(instance)
        if frag is None:
            return []
        fdef = self.fragments.get(frag)
        if fdef is not None:
            return sorted(fdef.states)
        own = self.own_fragments.get(frag)
        if own is not None:
            return sorted(d.name for d in own.items if isinstance(d, n.State | n.Terminal))
        return []

    def instance_variables(self, instance: str) -> list[str]:
        frag = self.instances.get(instance)
        fdef = self.fragments.get(frag) if frag else None
        if fdef is not None:
            return sorted(v for v, x in fdef.variables.items() if x.kind != "param")
        own = self.own_fragments.get(frag) if frag else None
        if own is not None:
            return sorted(d.name for d in own.items if isinstance(d, n.VarDecl | n.CounterDecl))
        return []

    def tool_params(self, tool: str) -> list[tuple[str, str]]:
        if self.machine is not None and tool in self.machine.tools:
            return [(p, T.show(t)) for p, t in self.machine.tools[tool].params]
        decl = self.tools.get(tool)
        if decl is None:
            return []
        return [(p.name, p.type.span.text() if p.type.span is not None else "") for p in decl.params]

    def variable_detail(self, name: str) -> str:
        if self.machine is not None and name in self.machine.variables:
            v = self.machine.variables[name]
            return f"{v.kind} {T.show(v.type)}"
        return self.variables.get(name, "")


def _items(names: Iterable[str], kind: lsp.CompletionItemKind, detail: str | None = None) -> list[lsp.CompletionItem]:
    seen: set[str] = set()
    out = []
    for name in names:
        if name not in seen:
            seen.add(name)
            out.append(lsp.CompletionItem(label=name, kind=kind, detail=detail))
    return out


def _open_call(window: str) -> tuple[str, str] | None:
    """(tool, arguments so far) when the cursor is inside the parentheses of a `call tool(`."""
    for m in reversed(list(_CALL_OPEN.finditer(window))):
        depth = 1
        for ch in window[m.end():]:
            depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
            if depth == 0:
                break
        if depth > 0:
            return m.group(1), window[m.end():]
        return None
    return None


def _block_at(module: n.Module | None, offset: int) -> n.Node | None:
    """The innermost block (machine, fragment, state, terminal, record) around an offset."""
    if module is None:
        return None
    found: n.Node | None = None
    items: tuple[n.Stmt, ...] = module.items
    while True:
        inner = next((i for i in items if isinstance(i, n.Block) and i.span is not None
                      and i.span.start < offset < i.span.end), None)
        if inner is None:
            return found
        found = inner
        items = inner.body


def complete(text: str, offset: int, names: Names, module: n.Module | None) -> list[lsp.CompletionItem]:
    """The completion items at `offset` of `text` (the current text; `names` and `module` from the last
    analysis that parsed, whose offsets may be a little off)."""
    start = max(0, offset - 4000)
    window = masked(text[start:offset])
    line = window[window.rfind("\n") + 1:]
    for pattern in _STATE_CONTEXT + [_EXIT_BINDING]:
        m = pattern.search(line)
        if m:
            part = m.group("part")
            if "." in part:
                return _items(names.instance_states(part.split(".")[0]), K.Function, "state")
            return (_items(sorted(names.states - names.terminals), K.Function, "state")
                    + _items(sorted(names.terminals), K.Event, "terminal")
                    + _items(sorted(names.instances), K.Module, "fragment instance"))
    if re.search(r"\bcall\s+\w*$", line):
        return _items(sorted(names.tools) or (sorted(names.machine.tools) if names.machine else []), K.Interface,
                      "tool")
    if re.search(r"\buse\s+\w*$", line):
        return (_items(sorted(set(names.own_fragments) | set(names.fragments)), K.Module, "fragment")
                + _items(USE_KEYWORDS, K.Keyword))
    if re.search(r"\brule\s+\w*$", line):
        return _items(RULE_KINDS, K.Keyword)
    call = _open_call(window)
    if call is not None:
        tool, args = call
        depth = 0
        for ch in args:
            depth += 1 if ch in "([{" else -1 if ch in ")]}" else 0
        at_name = depth == 0 and re.search(r"(?:^|,)\s*\w*$", args) is not None
        if at_name:
            given = set(re.findall(r"(?:^|,)\s*(\w+)\s*:", args))
            return [lsp.CompletionItem(label=p, kind=K.Field, detail=t, insert_text=f"{p}: ")
                    for p, t in names.tool_params(tool) if p not in given]
    dotted = re.search(r"(?<![\w.])([A-Za-z_]\w*(?:\.\w+)*)\.(\w*)$", line)
    if dotted:
        head = dotted.group(1)
        if head.split(".")[0] in names.instances and head.split(".")[0] not in names.variables:
            return _items(names.instance_variables(head.split(".")[0]), K.Variable, "variable")
        return _items(names.fields(head), K.Field, "field")
    enum_var = (re.search(r"(?<![\w.])([A-Za-z_][\w.]*)\s*(?:==|!=)\s*\w*$", line)
                or re.search(r"(?<![\w.])([A-Za-z_][\w.]*)\s+in\s*\{[^}]*$", line))
    if enum_var:
        labels = names.labels(enum_var.group(1))
        if labels:
            return _items(labels, K.EnumMember, "label")
    statement = re.fullmatch(r"\s*(\w*)", line)
    previous = window[:len(window) - len(line)].rstrip()
    continued = re.search(r"(?:[,(=:+\-*/<>!%]|\b(?:and|or|not|in|reads|writes|requires|when|call|use|as))$",
                          previous) is not None
    if statement is not None and not continued:
        block = _block_at(module, offset)
        if isinstance(block, n.State):
            return _items(STATE_KEYWORDS, K.Keyword)
        if isinstance(block, n.Terminal | n.Fallback):
            return _items(TERMINAL_KEYWORDS, K.Keyword)
        if isinstance(block, n.Machine | n.Fragment):
            return _items(BODY_KEYWORDS, K.Keyword)
        if block is None:
            return _items(TOP_KEYWORDS, K.Keyword)
    if call is None and re.search(r":\s*\w*$", line) and not re.search(r"\b(?:call|when|requires|use)\b|->", line):
        types = list(BUILTIN_TYPES) + sorted(set(names.enums) | set(names.records)) + ["list", "map", "enum"]
        return _items(types, K.TypeParameter, "type")
    items = [lsp.CompletionItem(label=v, kind=K.Variable, detail=names.variable_detail(v) or None)
             for v in sorted(names.variables)]
    items += [lsp.CompletionItem(label=p, kind=K.Constant, detail="place (read-only str)")
              for p in sorted(place_names() - set(names.variables))]
    if not re.search(r"\b(?:reads|writes)\b", line):
        items += _items(builtin_functions(), K.Function, "built-in")
    return items
