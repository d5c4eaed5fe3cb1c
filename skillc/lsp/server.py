"""`skillc lsp`: a language server over stdio (pygls 2), using the same engine and codes as `skillc check`.

Features: diagnostics on open/change/save; document symbols; go-to-definition
and find-references for states, variables, tools, types and fragments (also in
imported files); hover (kind, reads/writes, prompt, the source clause the state
came from); formatting (the `skillc fmt` printer); completion of states,
variables, labels, tools and fragments in context.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import re
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
from lsprotocol import types as lsp
from pygls import uris
from pygls.lsp.server import LanguageServer

from skillc import api
from skillc.diagnostics import Diagnostic, Severity, SourceFile, Span
from skillc.diagnostics.render import flat_text
from skillc.ir.loader import ImportCache
from skillc.ir import machine as M
from skillc.ir import types as T
from skillc.lsp.index import Definition, Index, SymbolKind, build_index, chars_col, utf16_col
from skillc.syntax import nodes as n
from skillc.syntax.printer import print_module
from skillc.version import __version__

if TYPE_CHECKING:
    from skillc.ir.symbols import FragmentDef

SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning,
            Severity.NOTE: lsp.DiagnosticSeverity.Information}
SYMBOL_KIND: dict[SymbolKind, lsp.SymbolKind] = {"state": lsp.SymbolKind.Function, "terminal": lsp.SymbolKind.Event,
               "variable": lsp.SymbolKind.Variable, "tool": lsp.SymbolKind.Interface,
               "type": lsp.SymbolKind.Struct, "fragment": lsp.SymbolKind.Module, "instance": lsp.SymbolKind.Object,
               "rule": lsp.SymbolKind.Property}

server = LanguageServer("skillc", __version__)


def _path(uri: str) -> str:
    """A document's file-system path (pygls's helper: `file:///c%3A/x` is `c:\\x` on Windows), else the URI."""
    return uris.to_fs_path(uri) or uri if uri.startswith("file:") else uri


def _uri(path: str) -> str:
    """A file: URI for a path (pygls's helper, the inverse of `_path`)."""
    return uris.from_fs_path(str(Path(path).resolve())) or path


def _range(span: Span) -> lsp.Range:
    lines = span.source.text.split("\n")
    (l1, c1), (l2, c2) = span.start_pos, span.end_pos
    line1 = lines[l1 - 1] if l1 - 1 < len(lines) else ""
    line2 = lines[l2 - 1] if l2 - 1 < len(lines) else ""
    return lsp.Range(lsp.Position(l1 - 1, utf16_col(line1, c1 - 1)), lsp.Position(l2 - 1, utf16_col(line2, c2 - 1)))


def _offset(text: str, pos: lsp.Position) -> int:
    lines = text.split("\n")
    if pos.line >= len(lines):
        return len(text)
    return sum(len(x) + 1 for x in lines[: pos.line]) + chars_col(lines[pos.line], pos.character)


class State:
    """Per-document analysis results, refreshed on every change."""

    def __init__(self) -> None:
        self.results: dict[str, api.CheckResult] = {}
        self.indexes: dict[str, Index] = {}
        self.modules: dict[str, n.Module] = {}
        self.imports: dict[str, ImportCache] = {}


STATE = State()
DEBOUNCE_S = 0.15  # a change within this long of the previous one waits this long for the next
# One thread checks documents, one after another, so that requests (hover, completion) are answered on the
# event loop while a check runs; z3 and lark release or share the GIL often enough for that.
_CHECKS = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillc-check")


class Scheduler:
    """When to check which document: at once when idle, else one trailing check per burst; stale results dropped.

    A change to a document with no check running or waiting is checked at once. A change that comes
    while one runs (or waits) replaces the waiting one and waits DEBOUNCE_S, so a burst of edits costs
    one check for the first and one for the last; a running check cannot be interrupted, so its result
    is dropped when the text has changed since it started.
    """

    def __init__(self) -> None:
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.running: set[str] = set()
        self.checked: dict[str, tuple[int | None, str]] = {}  # uri -> (version, text) last published
        self.published = 0

    def change(self, ls: LanguageServer, uri: str, immediate: bool = False) -> None:
        """A document changed: check it now, or after DEBOUNCE_S when a check is already under way."""
        task = self.pending.pop(uri, None)
        waiting = task is not None and not task.done()
        if task is not None and waiting:
            task.cancel()  # it had not started: the newer text replaces it
        busy = waiting or uri in self.running
        delay = DEBOUNCE_S if busy and not immediate else 0.0
        self.pending[uri] = asyncio.get_running_loop().create_task(self._run(ls, uri, delay))

    async def _run(self, ls: LanguageServer, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]  # from here on this check runs; a newer change schedules its own
        doc = ls.workspace.get_text_document(uri)
        version, text = doc.version, doc.source
        if self.checked.get(uri) == (version, text):
            return
        previous = self.checked.get(uri, (None, None))[1]
        edit = prompt_edit(previous, text) if previous is not None and uri in STATE.results else None
        if edit is not None:
            # Only the text of one prompt changed, and no check reads prompt text: the findings are the
            # last ones, moved. They are published at once; the full check below confirms them.
            moved = shift_result(STATE.results[uri], _path(uri), text, *edit)
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri=uri, diagnostics=_published(moved, _path(uri)), version=version))
            self.published += 1
        if previous == text and uri in STATE.results:
            result, imports = STATE.results[uri], STATE.imports[uri]  # same text (a save): same findings
        else:
            self.running.add(uri)
            try:
                result, imports = await asyncio.get_running_loop().run_in_executor(_CHECKS, _check, text, _path(uri))
            finally:
                self.running.discard(uri)
        current = ls.workspace.get_text_document(uri)
        if (current.version, current.source) != (version, text):
            return  # stale: a newer change has its own check scheduled
        _store(uri, text, result, imports)
        self.checked[uri] = (version, text)
        diagnostics = _published(result, _path(uri))
        if edit is not None and diagnostics == _published(moved, _path(uri)):
            return  # the full check agrees with what was already published
        self.published += 1
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=uri, diagnostics=diagnostics, version=version))


_PROMPT = re.compile(r'\bprompt[ \t]+"((?:[^"\\\n]|\\.)+)"')


def prompt_edit(old: str, new: str) -> tuple[int, int, int] | None:
    """(start, end, delta) when `new` differs from `old` only inside the text of one `prompt "…"` literal.

    Both literals must be non-empty one-line strings at the same place: then the parse has the same
    shape and, since no check reads prompt text (only whether a prompt is there), the same findings.
    """
    if old == new:
        return None
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < limit - start and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    end_old, end_new = len(old) - tail, len(new) - tail

    def literal(text: str, end: int) -> int | None:
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        for m in _PROMPT.finditer(text, line_start, line_end):
            if m.start(1) <= start and end <= m.end(1):
                return m.start(1)
        return None

    where = literal(old, end_old)
    if where is None or literal(new, end_new) != where:
        return None
    return start, end_old, end_new - end_old


def shift_result(result: api.CheckResult, path: str, text: str, start: int, end: int, delta: int) -> api.CheckResult:
    """The findings of `result` moved to `text` (an edit of `old[start:end]` that changed the length by `delta`)."""
    source = SourceFile(path, text)

    def move(span: Span) -> Span:
        if span.path != path:
            return span
        return Span(source, span.start + delta if span.start >= end else span.start,
                    span.end + delta if span.end >= end else span.end)

    moved = [attrs.evolve(d, span=move(d.span) if d.span is not None else None,
                          secondary=tuple(attrs.evolve(x, span=move(x.span)) for x in d.secondary))
             for d in result.diagnostics]
    return attrs.evolve(result, diagnostics=moved)


SCHEDULER = Scheduler()


def _check(text: str, path: str) -> tuple[api.CheckResult, ImportCache]:
    """One full check (in the checking thread)."""
    imports = ImportCache()  # fresh per change, so edits to imported files are seen
    return api.check(text, path=path, imports=imports), imports


def _store(uri: str, text: str, result: api.CheckResult, imports: ImportCache) -> None:
    """Keep a document's latest results for hover, definitions, symbols and completion."""
    STATE.results[uri] = result
    STATE.imports[uri] = imports
    if result.module is not None:
        STATE.modules[uri] = result.module
        STATE.indexes[uri] = build_index(result.module, text)


def _published(result: api.CheckResult, path: str) -> list[lsp.Diagnostic]:
    """The diagnostics shown for a document: those located in it, notes left out (as `skillc check`)."""
    return [_to_lsp(d, d.span) for d in result.diagnostics
            if d.span is not None and d.span.path == path and d.severity is not Severity.NOTE]


def analyse(ls: LanguageServer, uri: str) -> None:
    """Check a document now and publish its diagnostics (synchronously; the handlers use the Scheduler)."""
    doc = ls.workspace.get_text_document(uri)
    result, imports = _check(doc.source, _path(uri))
    _store(uri, doc.source, result, imports)
    SCHEDULER.checked[uri] = (doc.version, doc.source)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
        uri=uri, diagnostics=_published(result, _path(uri)), version=doc.version))


def _to_lsp(d: Diagnostic, span: Span) -> lsp.Diagnostic:
    """A finding located at `span` (its own span, which the caller has checked is there) as an LSP diagnostic."""
    message = flat_text(d)
    related = [lsp.DiagnosticRelatedInformation(lsp.Location(_uri(s.span.path) if Path(s.span.path).exists()
                                                             else s.span.path, _range(s.span)), s.message or "here")
               for s in d.secondary]
    return lsp.Diagnostic(range=_range(span), message=message, severity=SEVERITY[d.severity], code=d.code,
                          source="skillc", related_information=related or None)


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
async def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    SCHEDULER.change(ls, params.text_document.uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    SCHEDULER.change(ls, params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: LanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    SCHEDULER.change(ls, params.text_document.uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbol(ls: LanguageServer, params: lsp.DocumentSymbolParams) -> list[lsp.DocumentSymbol]:
    module = STATE.modules.get(params.text_document.uri)
    if module is None:
        return []
    out: list[lsp.DocumentSymbol] = []
    for item in module.items:
        if isinstance(item, (n.Machine, n.Fragment)) and item.span is not None:
            children: list[lsp.DocumentSymbol] = []
            for decl in item.items:
                kind, name = _symbol(decl)
                if kind is None or decl.span is None:
                    continue
                children.append(lsp.DocumentSymbol(name=name, kind=SYMBOL_KIND[kind], range=_range(decl.span),
                                                   selection_range=_range(decl.span.narrow(name, False)),
                                                   detail=_detail(decl)))
            outer = lsp.SymbolKind.Class if isinstance(item, n.Machine) else lsp.SymbolKind.Module
            out.append(lsp.DocumentSymbol(name=item.name, kind=outer, range=_range(item.span),
                                          selection_range=_range(item.span.narrow(item.name, False)),
                                          children=children))
        elif isinstance(item, (n.RecordDecl, n.EnumDecl)) and item.span is not None:
            out.append(lsp.DocumentSymbol(name=item.name, kind=lsp.SymbolKind.Struct, range=_range(item.span),
                                          selection_range=_range(item.span.narrow(item.name, False))))
    return out


def _symbol(decl: n.Stmt) -> tuple[SymbolKind | None, str]:
    if isinstance(decl, n.State):
        return "state", decl.name
    if isinstance(decl, n.Terminal):
        return "terminal", decl.name
    if isinstance(decl, n.Fallback):
        return "terminal", "fallback"
    if isinstance(decl, (n.VarDecl, n.CounterDecl)):
        return "variable", decl.name
    if isinstance(decl, n.ToolDecl):
        return "tool", decl.name
    if isinstance(decl, (n.RecordDecl, n.EnumDecl)):
        return "type", decl.name
    if isinstance(decl, n.Use):
        return "instance", decl.name
    if isinstance(decl, n.Rule):
        return "rule", f"rule {decl.kind} {' before '.join(decl.ops)}"
    return None, ""


def _detail(decl: n.Stmt) -> str:
    if isinstance(decl, n.State):
        return decl.kind
    if isinstance(decl, n.Terminal):
        return decl.outcome
    if isinstance(decl, n.VarDecl):
        return decl.kind
    if isinstance(decl, n.CounterDecl):
        return f"counter max {decl.max}"
    if isinstance(decl, n.Rule):
        return decl.quote
    return ""


def _lookup(uri: str, pos: lsp.Position) -> tuple[Index, str, list[Definition]] | None:
    index = STATE.indexes.get(uri)
    if index is None:
        return None
    hit = index.word_at(_offset(index.text, pos))
    if hit is None:
        return None
    word = hit[2]
    for candidate in (word, word.split(".")[0]):
        if candidate in index.definitions:
            return index, candidate, index.definitions[candidate]
    return index, word, []


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
    found = _lookup(params.text_document.uri, params.position)
    if found is None:
        return []
    index, word, defs = found
    if defs:
        return [lsp.Location(params.text_document.uri, _range(d.name_span)) for d in defs]
    fdef = _imported(params.text_document.uri).get(word)
    if fdef is not None and fdef.span is not None:
        return [lsp.Location(_uri(fdef.span.path), _range(fdef.span.narrow(word, True)))]
    return []


def _imported(uri: str) -> dict[str, FragmentDef]:
    """Fragments of the files the last check of this document imported, by name."""
    cache = STATE.imports.get(uri)
    if cache is None:
        return {}
    return {name: f for lowered in cache.done.values() if lowered for name, f in lowered.fragments.items()}


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def references(ls: LanguageServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    found = _lookup(params.text_document.uri, params.position)
    if found is None:
        return []
    index, word, _ = found
    src = SourceFile(_path(params.text_document.uri), index.text)
    locations = []
    for start, _, w in index.occurrences:
        parts = w.split(".")
        if word in parts or w == word:
            offset = start + sum(len(p) + 1 for p in parts[: parts.index(word)]) if word in parts else start
            locations.append(lsp.Location(params.text_document.uri, _range(Span(src, offset, offset + len(word)))))
    return locations


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    found = _lookup(params.text_document.uri, params.position)
    if found is None:
        return None
    _, word, defs = found
    result = STATE.results.get(params.text_document.uri)
    machine = result.machine if result is not None else None
    text = None
    if machine is not None and word in machine.states:
        text = _hover_state(machine, machine.states[word])
    elif machine is not None and word in machine.variables:
        v = machine.variables[word]
        text = f"**{v.kind}** `{v.name}`: `{T.show(v.type)}`" + (f", max {v.max}" if v.max is not None else "")
    elif machine is not None and word in machine.tools:
        t = machine.tools[word]
        text = (f"**tool** `{t.name}(" + ", ".join(f"{k}: {T.show(x)}" for k, x in t.params) + ") -> ("
                + ", ".join(f"{k}: {T.show(x)}" for k, x in t.results) + ")`")
    elif defs:
        d = defs[0]
        text = f"**{d.kind}** `{d.name}`\n\n```skm\n{d.span.text()[:400]}\n```"
    if text is None:
        return None
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=text))


def _hover_state(machine: M.Machine, st: M.State) -> str:
    lines = [f"**{st.kind}** `{st.name}`"]
    if st.is_terminal:
        lines.append(f"outcome: {st.outcome}" + (f"; requires {', '.join(st.requires)}" if st.requires else ""))
    if st.reads:
        lines.append(f"reads: {', '.join(st.reads)}")
    if st.writes:
        lines.append(f"writes: {', '.join(st.writes)}")
    if st.call is not None:
        lines.append(f"calls: `{st.call.tool}`")
    if st.prompt:
        lines.append("\n> " + st.prompt.replace("\n", "\n> "))
    if st.provenance is not None:
        lines.append(f"\nfrom `{st.provenance}`")
        clause = _source_clause(machine, st.provenance)
        if clause:
            lines.append("\n```markdown\n" + clause + "\n```")
    return "\n\n".join(lines)


def _source_clause(machine: M.Machine, where: M.Provenance) -> str | None:
    if not machine.path:
        return None
    try:
        text = (Path(machine.path).parent / where.file).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return "\n".join(text[where.start - 1 : where.end])[:1500] or None


@server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: LanguageServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    parsed = api.parse(doc.source, path=_path(params.text_document.uri))
    if parsed.module is None:
        return []
    new = print_module(parsed.module)
    if new == doc.source:
        return []
    lines = doc.source.split("\n")
    end = lsp.Position(len(lines) - 1, utf16_col(lines[-1], len(lines[-1])))
    return [lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), end), new_text=new)]


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[" ", ">", "("]))
def completion(ls: LanguageServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    line = doc.lines[params.position.line] if params.position.line < len(doc.lines) else ""
    before = line[: chars_col(line, params.position.character)]
    result = STATE.results.get(params.text_document.uri)
    machine = result.machine if result is not None else None
    index = STATE.indexes.get(params.text_document.uri)
    defs = index.definitions if index is not None else {}

    def names(kinds: set[str]) -> list[str]:
        return sorted(name for name, ds in defs.items() if any(d.kind in kinds for d in ds))

    items: list[tuple[str, lsp.CompletionItemKind]] = []
    if re.search(r"->\s*[\w.]*$", before) or re.search(r"\bstart\s+[\w.]*$", before):
        items = [(s, lsp.CompletionItemKind.Function) for s in names({"state", "terminal", "instance"})]
        items.append(("fallback", lsp.CompletionItemKind.Function))
    elif re.search(r"\bcall\s+\w*$", before):
        items = [(t, lsp.CompletionItemKind.Interface) for t in names({"tool"})]
    elif re.search(r"\buse\s+\w*$", before):
        frags = set(names({"fragment"})) | set(_imported(params.text_document.uri))
        items = [(f, lsp.CompletionItemKind.Module) for f in sorted(frags)]
    else:
        enum_var = re.search(r"([\w.]+)\s*(?:==|!=)\s*\w*$", before) or re.search(r"([\w.]+)\s+in\s*\{[^}]*$", before)
        if enum_var and machine is not None and enum_var.group(1) in machine.variables:
            t = T.strip_optional(machine.variables[enum_var.group(1)].type)
            if isinstance(t, T.EnumT):
                items = [(label, lsp.CompletionItemKind.EnumMember) for label in t.labels]
        if not items:
            items = [(v, lsp.CompletionItemKind.Variable) for v in names({"variable"})]
    return lsp.CompletionList(is_incomplete=False, items=[lsp.CompletionItem(label=x, kind=k) for x, k in items])


def main() -> None:
    """Serve over stdio: skillc's framing (skillc.lsp.framing), pygls for the protocol and features."""
    from pygls.io_ import StdoutWriter

    from skillc.lsp.framing import serve

    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    try:
        asyncio.run(serve(server, sys.stdin.fileno(), stop))
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        server.shutdown()
