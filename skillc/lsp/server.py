"""`skillc lsp`: a language server over stdio (pygls 2), using the same engine and codes as `skillc check`.

Features: diagnostics on open/change/save (with links to the diagnostics reference), re-checked when an
imported file changes (open, or on disk through watched files); document symbols; go-to-definition and
find-references (also across imported files); hover (states, variables, tools, fragments and instances);
formatting (the `skillc fmt` printer); completion in context (states after `->`, enum labels after
`v ==`, record fields after `x.`, a tool's parameters inside `call tool(`, keywords at a statement's
start); quick fixes; rename across files; semantic tokens; folding ranges; inlay hints.

How checks are scheduled (the `Scheduler`) and when an edit skips them (`skillc.lsp.trivia`) is in
docs/editors.md.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import inspect
import json
import re
import sys
import threading
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls import uris
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from skillc import language
from skillc.check.source import CheckResult
from skillc.diagnostics import Diagnostic, Severity, SourceFile, Span
from skillc.diagnostics.render import flat_text
from skillc.diagnostics.source import text_edit
from skillc.ir import machine as M
from skillc.ir import types as T
from skillc.ir.loader import project_root
from skillc.lsp import actions, completion, rename, tokens
from skillc.lsp.analysis import Analysis, ResultCache, normalise, run_check
from skillc.lsp.framing import serve
from skillc.lsp.index import Definition, Index, SymbolKind, name_offset
from skillc.lsp.lines import LineIndex, line_index, set_encoding, span_range
from skillc.lsp.resolve import Resolved, resolve
from skillc.lsp.trivia import Layout, shift_diagnostics
from skillc.syntax import nodes as n
from skillc.syntax.grammar import stdlib_path
from skillc.syntax.printer import print_module
from skillc.version import __version__

SEVERITY = {Severity.ERROR: lsp.DiagnosticSeverity.Error, Severity.WARNING: lsp.DiagnosticSeverity.Warning,
            Severity.NOTE: lsp.DiagnosticSeverity.Information}
SYMBOL_KIND: dict[str, lsp.SymbolKind] = {
    "state": lsp.SymbolKind.Function, "terminal": lsp.SymbolKind.Event, "variable": lsp.SymbolKind.Variable,
    "tool": lsp.SymbolKind.Interface, "type": lsp.SymbolKind.Struct, "record": lsp.SymbolKind.Struct,
    "enum": lsp.SymbolKind.Enum, "fragment": lsp.SymbolKind.Module, "instance": lsp.SymbolKind.Object,
    "rule": lsp.SymbolKind.Property}
#: The diagnostics reference; a finding links to `#skmNNN` (initialization option / setting `diagnosticsUrl`).
DEFAULT_DOCS_URL = "https://github.com/skillc/skillc/blob/main/docs/diagnostics.md"
DEBOUNCE_S = 0.15  # a change within this long of the previous one waits this long for the next
REFRESH_S = 0.4  # after an edit published from the last findings (trivia), the quiet time before re-analysing
DEPENDENT_S = 0.3  # the quiet time before re-checking the documents that import an edited one
MAX_COMPLETIONS = 200  # more are cut to those matching the typed prefix (the list then marked incomplete)
#: Larger documents are not checked (about 35,000 states; a check of one would hold the checking thread for
#: tens of seconds): the editor is told once, and shows no findings for it.
MAX_CHECKED_CHARS = 4 << 20
_CODE = re.compile(r"SKM\d{3}")

class Serialized:
    """A result already serialised to JSON text (large replies asked for again and again: document symbols)."""

    __slots__ = ("json",)

    def __init__(self, json_text: str) -> None:
        self.json = json_text


class Protocol(LanguageServerProtocol):
    """pygls's protocol, writing a `Serialized` result as it is instead of converting and encoding it again."""

    def _send_data(self, data: Any) -> None:
        result = getattr(data, "result", None)
        writer = self.writer
        if not isinstance(result, Serialized) or writer is None:
            super()._send_data(data)
            return
        body = f'{{"jsonrpc": "2.0", "id": {json.dumps(data.id)}, "result": {result.json}}}'
        header = (f"Content-Length: {len(body.encode('utf-8'))}\r\n"
                  f"Content-Type: {self.CONTENT_TYPE}; charset=utf-8\r\n\r\n")
        written = writer.write((header + body).encode("utf-8"))
        if inspect.isawaitable(written):
            # fire-and-forget, exactly as pygls's JsonRPCProtocol._send_data does for the same writer
            asyncio.ensure_future(written)  # noqa: RUF006

    def serialize(self, value: object) -> Serialized:
        return Serialized(json.dumps(self._converter.unstructure(value)))


server = LanguageServer("skillc", __version__, protocol_cls=Protocol)
# One thread checks documents, one after another, so that requests (hover, completion) are answered on the
# event loop while a check runs; z3 and lark release or share the GIL often enough for that.
_CHECKS = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="skillc-check")


def _path(uri: str) -> str:
    """A document's file-system path (pygls's helper: `file:///c%3A/x` is `c:\\x` on Windows), else the URI."""
    return uris.to_fs_path(uri) or uri if uri.startswith("file:") else uri


def _uri(path: str) -> str:
    """A file: URI for a path (pygls's helper, the inverse of `_path`)."""
    return uris.from_fs_path(str(Path(path).resolve())) or path


def _resolved_path(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError, ValueError):
        return path


def _range(span: Span) -> lsp.Range:
    return span_range(span)


# ---------------------------------------------------------------------------- the workspace (issue 34)


def _workspace() -> list[Path]:
    """The folders the server reads files in: the workspace folders, and for a document the user opened from
    outside them (or when the client named none) that document's project root, the folder `skillc check`
    confines its imports to; the standard library is always readable."""
    roots = [Path(r) for r in STATE.roots]
    outside = [project_root(Path(d.path)) for d in STATE.docs.values() if d.uri.startswith("file:")
               and not any(Path(_resolved_path(d.path)).is_relative_to(r) for r in roots)]
    return [stdlib_path().resolve(), *roots, *outside]


def readable(path: str | Path) -> bool:
    """Whether the server may read a file: only inside its workspace (definitions, references, hover, rename)."""
    target = Path(_resolved_path(str(path)))
    return any(target.is_relative_to(root) for root in _workspace())


def import_root(path: str) -> str | None:
    """The folder a document's imports are confined to: its project root when that lies inside the workspace
    folder holding it, else that folder. None (the project root, as `skillc check`) for a document outside every
    workspace folder, which the user opened on purpose, and when the client named no workspace."""
    if not STATE.roots or not path.endswith(".skm"):
        return None
    here = Path(_resolved_path(path))
    for folder in (Path(r) for r in STATE.roots):
        if here.is_relative_to(folder):
            own = project_root(here)
            return str(own if own.is_relative_to(folder) else folder)
    return None


@attrs.define
class Settings:
    docs_url: str = DEFAULT_DOCS_URL
    inlay_hints: bool = True

    def update(self, options: object) -> None:
        if not isinstance(options, dict):
            return
        options = options.get("skillc", options) if isinstance(options.get("skillc"), dict) else options
        url = options.get("diagnosticsUrl")
        if isinstance(url, str) and url:
            self.docs_url = url
        hints = options.get("inlayHints")
        if isinstance(hints, bool):
            self.inlay_hints = hints


@attrs.define
class Published:
    """What the client shows for a document: for which version and text, the findings and their layout."""

    version: int | None
    text: str
    diagnostics: list[Diagnostic]
    layout: Layout | None
    sent: list[lsp.Diagnostic]
    origin: Analysis | None = None  # the check of `text` these findings come from: its layout, built when needed

    def get_layout(self) -> Layout | None:
        """The layout of `text` (from the check it came from, built on first use after publishing)."""
        if self.layout is None and self.origin is not None and self.origin.text == self.text:
            self.layout = self.origin.layout
        return self.layout


@attrs.define
class Doc:
    """The server's state of one open document."""

    uri: str
    path: str
    analysis: Analysis | None = None  # the latest full check (of this or an earlier text)
    good: Analysis | None = None  # the latest that parsed (completion while the text does not)
    published: Published | None = None
    dirty: bool = False  # a file it read changed since its analysis


class State:
    """Every open document, the checks cache and the session's settings."""

    def __init__(self) -> None:
        self.docs: dict[str, Doc] = {}
        self.cache = ResultCache()
        self.generation = 0  # bumped when a watched file changes: cached checks may be out of date
        self.settings = Settings()
        self.roots: list[str] = []
        self.stats = {"checks": 0, "published": 0, "fast": 0, "cached": 0, "forwarded": 0}

    def doc(self, uri: str) -> Doc:
        if uri not in self.docs:
            self.docs[uri] = Doc(uri, _path(uri))
        return self.docs[uri]

    @property
    def results(self) -> dict[str, CheckResult]:
        """The last check result of each document (for tests and tools)."""
        return {uri: d.analysis.result for uri, d in self.docs.items() if d.analysis is not None}


STATE = State()


def _current(ls: LanguageServer, uri: str) -> tuple[int | None, str]:
    doc = ls.workspace.get_text_document(uri)
    return doc.version, normalise(doc.source)


def _overlay(ls: LanguageServer) -> dict[Path, str]:
    """The open documents' texts, by resolved path: imports read these instead of the files."""
    out: dict[Path, str] = {}
    for uri in list(STATE.docs):
        if not uri.startswith("file:"):
            continue
        try:
            out[Path(_path(uri)).resolve()] = normalise(ls.workspace.get_text_document(uri).source)
        except (OSError, RuntimeError, ValueError):
            continue
    return out


# ---------------------------------------------------------------------------- publishing


def _to_lsp(d: Diagnostic, span: Span) -> lsp.Diagnostic:
    """A finding located at `span` (its own span, which the caller has checked is there) as an LSP diagnostic."""
    related = [lsp.DiagnosticRelatedInformation(lsp.Location(_uri(s.span.path) if Path(s.span.path).exists()
                                                             else s.span.path, _range(s.span)), s.message or "here")
               for s in d.secondary]
    code = str(d.code)
    href = f"{STATE.settings.docs_url}#{code.lower()}" if _CODE.fullmatch(code) else None
    return lsp.Diagnostic(range=_range(span), message=flat_text(d), severity=SEVERITY[d.severity], code=code,
                          code_description=lsp.CodeDescription(href=href) if href else None,
                          source="skillc", related_information=related or None)


def _located(diagnostics: list[Diagnostic], path: str) -> list[Diagnostic]:
    """The findings shown for a document: those located in it, notes left out (as `skillc check`)."""
    return [d for d in diagnostics if d.span is not None and d.span.path == path and d.severity is not Severity.NOTE]


def _published(result: CheckResult, path: str) -> list[lsp.Diagnostic]:
    """A check result's diagnostics as published for the document at `path`."""
    return [_to_lsp(d, d.span) for d in _located(result.diagnostics, path) if d.span is not None]


def _publish(ls: LanguageServer, doc: Doc, version: int | None, text: str, diagnostics: list[Diagnostic],
             layout: Layout | None, origin: Analysis | None = None) -> None:
    """Publish findings for a version of a document (not again when that version already shows the same)."""
    sent = [_to_lsp(d, d.span) for d in _located(diagnostics, doc.path) if d.span is not None]
    old = doc.published
    doc.published = Published(version, text, diagnostics, layout, sent, origin)
    if old is not None and old.version == version and old.text == text and old.sent == sent:
        return
    STATE.stats["published"] += 1
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=doc.uri, diagnostics=sent, version=version))


def _adopt(ls: LanguageServer, doc: Doc, analysis: Analysis, version: int | None) -> None:
    """Make a full check of the document's current text its analysis, and publish its findings."""
    doc.analysis = analysis
    if analysis.module is not None:
        doc.good = analysis
    _publish(ls, doc, version, analysis.text, analysis.result.diagnostics, None, analysis)


def _fast(doc: Doc, text: str) -> tuple[list[Diagnostic], Layout] | None:
    """The published findings moved to `text`, when the edit from the published text is trivia."""
    pub = doc.published
    layout = pub.get_layout() if pub is not None else None
    if pub is None or layout is None or doc.dirty:
        return None
    edit = text_edit(pub.text, text)
    if edit is None:
        return None
    trivia = layout.classify(text, edit)
    if trivia is None:
        return None
    source = SourceFile(doc.path, text)
    moved = shift_diagnostics(pub.diagnostics, doc.path, source, edit, (trivia.lo, trivia.hi), trivia.closed)
    if moved is None:
        return None
    return moved, trivia.layout


def _on_change(ls: LanguageServer, uri: str, immediate: bool = False) -> bool:
    """A document's text changed (or was opened): publish at once what can be known, else schedule a check.
    False when the change cannot matter to other documents (the same text, or a trivia edit)."""
    doc = STATE.doc(uri)
    version, text = _current(ls, uri)
    if len(text) > MAX_CHECKED_CHARS:
        return _too_large(ls, doc, version, text)
    pub = doc.published
    if pub is not None and pub.text == text and not doc.dirty:
        _publish(ls, doc, version, text, pub.diagnostics, pub.get_layout())
        return False
    fast = _fast(doc, text)
    if fast is not None:
        STATE.stats["fast"] += 1
        _publish(ls, doc, version, text, fast[0], fast[1])
        SCHEDULER.change(ls, uri, delay=REFRESH_S)  # re-analyse when typing pauses (hover, symbols, formatting)
        return False
    cached = STATE.cache.get(doc.path, text, _overlay(ls), STATE.generation) if not doc.dirty else None
    if cached is not None:
        STATE.stats["cached"] += 1
        SCHEDULER.cancel(uri)
        _adopt(ls, doc, cached, version)
        return True
    SCHEDULER.change(ls, uri, delay=0.0 if immediate else None)
    return True


def _too_large(ls: LanguageServer, doc: Doc, version: int | None, text: str) -> bool:
    """A document over MAX_CHECKED_CHARS: no check, no findings, and the editor told (once per document)."""
    SCHEDULER.cancel(doc.uri)
    told = doc.published is not None and len(doc.published.text) > MAX_CHECKED_CHARS
    _publish(ls, doc, version, text, [], None)
    if not told:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=(
            f"skillc: {Path(doc.path).name} has {len(text):,} characters; documents over {MAX_CHECKED_CHARS:,} "
            "are not checked")))
    return False


def _dependents(path: str) -> list[Doc]:
    """The open documents whose last check read the file at `path`."""
    target = Path(_resolved_path(path))
    return [d for d in STATE.docs.values() if d.analysis is not None and target in d.analysis.deps]


def _recheck(ls: LanguageServer, docs: list[Doc], delay: float) -> None:
    for d in docs:
        d.dirty = True
        SCHEDULER.change(ls, d.uri, delay=delay)


class Scheduler:
    """When to check which document: at once when idle, else one trailing check per burst; stale results dropped.

    A change to a document with no check running or waiting is checked at once. A change that comes
    while one runs (or waits) replaces the waiting one and waits DEBOUNCE_S, so a burst of edits costs
    one check for the first and one for the last; a running check cannot be interrupted, so its result
    is not published when the text has changed since it started — unless the edits since then are
    trivia, and its findings, moved, are those of the current text.
    """

    def __init__(self) -> None:
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.running: set[str] = set()

    def cancel(self, uri: str) -> None:
        task = self.pending.pop(uri, None)
        if task is not None and not task.done():
            task.cancel()

    def change(self, ls: LanguageServer, uri: str, immediate: bool = False, delay: float | None = None) -> None:
        """Check a document now, after DEBOUNCE_S when a check is already under way, or after `delay`."""
        task = self.pending.pop(uri, None)
        waiting = task is not None and not task.done()
        if task is not None and waiting:
            task.cancel()  # it had not started: the newer text replaces it
        if delay is None:
            busy = waiting or uri in self.running
            delay = DEBOUNCE_S if busy and not immediate else 0.0
        self.pending[uri] = asyncio.get_running_loop().create_task(self._run(ls, uri, delay))

    async def _run(self, ls: LanguageServer, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        if self.pending.get(uri) is asyncio.current_task():
            del self.pending[uri]  # from here on this check runs; a newer change schedules its own
        doc = STATE.docs.get(uri)
        if doc is None:
            return
        version, text = _current(ls, uri)
        if len(text) > MAX_CHECKED_CHARS:
            return  # never checked (`_too_large`)
        if doc.analysis is not None and doc.analysis.text == text and not doc.dirty:
            if doc.published is None or doc.published.version != version or doc.published.text != text:
                _adopt(ls, doc, doc.analysis, version)
            return
        overlay = _overlay(ls)
        overlay.pop(Path(_resolved_path(doc.path)), None)
        cached = STATE.cache.get(doc.path, text, overlay, STATE.generation) if not doc.dirty else None
        if cached is not None:
            STATE.stats["cached"] += 1
            _adopt(ls, doc, cached, version)
            return
        doc.dirty = False
        generation = STATE.generation
        self.running.add(uri)
        COLLECTOR.pause()
        try:
            try:
                analysis = await asyncio.get_running_loop().run_in_executor(
                    _CHECKS, _analyse, uri, doc.path, text, overlay, generation, import_root(doc.path))
            finally:
                self.running.discard(uri)
            self._finish(ls, uri, doc, text, analysis)
        finally:  # after the publish and the outline's preparation, in the checking thread
            asyncio.get_running_loop().run_in_executor(_CHECKS, COLLECTOR.resume)

    def _finish(self, ls: LanguageServer, uri: str, doc: Doc, text: str, analysis: Analysis) -> None:
        """Keep a finished check and publish its findings, moved when only trivia changed since it started."""
        STATE.stats["checks"] += 1
        if STATE.stats["checks"] == 1:
            freeze_loaded()  # the grammar tables and Z3, loaded by the first check
        STATE.cache.put(analysis)
        if STATE.docs.get(uri) is not doc:
            return  # closed meanwhile
        version, current = _current(ls, uri)
        if current == text:
            _adopt(ls, doc, analysis, version)
            if analysis.module is not None:  # the layout, index and outline the editor needs next, after publishing
                asyncio.get_running_loop().run_in_executor(_CHECKS, _prepare, ls, analysis)
            return
        # Stale: the text changed while it ran. Keep it for requests; publish it moved when the edits since are trivia.
        doc.analysis = analysis
        if analysis.module is not None:
            doc.good = analysis
        if doc.published is not None and doc.published.text == current:
            return  # already published for this text (from the findings before it, moved)
        edit = text_edit(text, current)
        trivia = analysis.layout.classify(current, edit) if analysis.layout is not None and edit is not None else None
        if trivia is not None and edit is not None:
            moved = shift_diagnostics(analysis.result.diagnostics, doc.path, SourceFile(doc.path, current), edit,
                                      (trivia.lo, trivia.hi), trivia.closed)
            if moved is not None:
                STATE.stats["forwarded"] += 1
                _publish(ls, doc, version, current, moved, trivia.layout)


def _analyse(uri: str, path: str, text: str, overlay: dict[Path, str], generation: int,
             root: str | None = None) -> Analysis:
    """One full check (in the checking thread)."""
    result, imports = run_check(text, path, overlay, root)
    return Analysis.make(uri, path, text, result, imports, overlay, generation)


SCHEDULER = Scheduler()


def analyse(ls: LanguageServer, uri: str) -> None:
    """Check a document now and publish its diagnostics (synchronously; the handlers use the Scheduler)."""
    doc = STATE.doc(uri)
    version, text = _current(ls, uri)
    analysis = _analyse(uri, doc.path, text, _overlay(ls), STATE.generation, import_root(doc.path))
    STATE.cache.put(analysis)
    _adopt(ls, doc, analysis, version)


# ---------------------------------------------------------------------------- lifecycle and synchronisation


@server.feature(lsp.INITIALIZE)
def initialize(ls: LanguageServer, params: lsp.InitializeParams) -> None:
    encoding = ls.workspace.position_encoding or "utf-16"
    set_encoding(str(getattr(encoding, "value", encoding)))
    STATE.settings.update(params.initialization_options)
    roots = [_path(f.uri) for f in params.workspace_folders or []]
    if not roots and params.root_uri:
        roots = [_path(params.root_uri)]
    elif not roots and params.root_path:
        roots = [params.root_path]
    STATE.roots = [_resolved_path(r) for r in roots if Path(r).is_dir()]


WATCHED = ("**/*.skm", "**/skillc.toml", "**/pyproject.toml", "**/*.md")


@server.feature(lsp.INITIALIZED)
async def initialized(ls: LanguageServer, params: lsp.InitializedParams) -> None:
    """Watch imported files, configuration and skill documents (dynamically, when the client can)."""
    caps = ls.client_capabilities
    watch = caps.workspace.did_change_watched_files if caps and caps.workspace else None
    if watch is None or not watch.dynamic_registration:
        return
    options = lsp.DidChangeWatchedFilesRegistrationOptions(
        watchers=[lsp.FileSystemWatcher(glob_pattern=g) for g in WATCHED])
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[lsp.Registration(
            id="skillc-watched-files", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)]))
    except Exception:  # noqa: BLE001 - a client that refuses keeps working without watching
        pass


@server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: LanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
    STATE.settings.update(params.settings)


# The synchronisation handlers are plain functions: pygls runs them as each notification arrives, after it
# updated the document, so every edit is compared with the one before it (a coroutine would run later, when
# several edits may have been applied, and see them as one).
@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    uri = params.text_document.uri
    STATE.doc(uri)
    _on_change(ls, uri, immediate=True)
    _recheck(ls, [d for d in _dependents(_path(uri)) if d.uri != uri], DEPENDENT_S)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if _on_change(ls, uri):
        _recheck(ls, [d for d in _dependents(_path(uri)) if d.uri != uri], DEPENDENT_S)


@server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: LanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
    _on_change(ls, params.text_document.uri, immediate=True)


@server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: LanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    SCHEDULER.cancel(uri)
    doc = STATE.docs.pop(uri, None)
    ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    if doc is not None:  # its importers read the file again, not the buffer
        STATE.cache.forget(doc.path)
        _recheck(ls, [d for d in _dependents(doc.path) if d.uri != uri], DEPENDENT_S)


@server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: LanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
    """A file changed on disk: re-check the open documents that read it (every one for a new or deleted `.skm`
    file, which may resolve an import, and for configuration and skill documents)."""
    open_paths = {Path(_resolved_path(d.path)) for d in STATE.docs.values()}
    affected: dict[str, Doc] = {}
    for change in params.changes:
        path = _path(change.uri)
        if Path(_resolved_path(path)) in open_paths:
            continue  # its buffer is what the documents read
        STATE.generation += 1
        if path.endswith(".skm") and change.type == lsp.FileChangeType.Changed:
            affected.update({d.uri: d for d in _dependents(path)})
        else:
            affected.update(STATE.docs)
    _recheck(ls, list(affected.values()), DEBOUNCE_S)


@server.feature("skillc/stats")
def stats(ls: LanguageServer, params: object) -> dict[str, int]:
    """Counters of this session (checks run, diagnostics published, edits published without a check)."""
    return dict(STATE.stats)


# ---------------------------------------------------------------------------- what requests read


def _analysis_for(ls: LanguageServer, uri: str, need_current: bool = False) -> Analysis | None:
    """The document's latest analysis (that parsed); with `need_current`, only one of its current text."""
    doc = STATE.docs.get(uri)
    if doc is None:
        return None
    if need_current:
        _, text = _current(ls, uri)
        for a in (doc.analysis, doc.good):
            if a is not None and a.text == text:
                return a
        return None
    return doc.good or doc.analysis


def _current_resolved(ls: LanguageServer, uri: str) -> tuple[Resolved, n.Module, str] | None:
    """The resolved names of the document's current text (parsed now when its analysis is older)."""
    analysis = _analysis_for(ls, uri, need_current=True)
    if analysis is not None and analysis.module is not None and analysis.resolved is not None:
        return analysis.resolved, analysis.module, analysis.text
    _, text = _current(ls, uri)
    path = STATE.doc(uri).path
    parsed = language.parse(text, path=path)
    if parsed.module is None:
        return None
    old = _analysis_for(ls, uri)
    fragments = old.fragment_paths() if old is not None else {}
    return resolve(parsed.module, text, _resolved_path(path), fragments), parsed.module, text


def _offset(text: str, pos: lsp.Position) -> int:
    return line_index(text).offset(pos)


# ---------------------------------------------------------------------------- document symbols


def _symbol(decl: n.Stmt) -> tuple[str | None, str]:
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
    if isinstance(decl, n.RecordDecl):
        return "record", decl.name
    if isinstance(decl, n.EnumDecl):
        return "enum", decl.name
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
    if isinstance(decl, n.Use):
        return f"use {decl.fragment}"
    return ""


def document_symbols(module: n.Module, text: str) -> list[lsp.DocumentSymbol]:
    """The outline of a module: machines and fragments with their declarations; records and enums."""
    index = line_index(text)

    def symbol(decl: n.Stmt, kind: str, name: str, detail: str = "",
               children: list[lsp.DocumentSymbol] | None = None) -> lsp.DocumentSymbol | None:
        span = decl.span
        if span is None:
            return None
        at = name_offset(text, span.start, span.end, name) if kind != "rule" else None
        selection = index.range(at, at + len(name)) if at is not None else index.range(span.start, span.start)
        return lsp.DocumentSymbol(name=name, kind=SYMBOL_KIND[kind], range=index.range(span.start, span.end),
                                  selection_range=selection, detail=detail or None, children=children)

    out: list[lsp.DocumentSymbol] = []
    for item in module.items:
        if isinstance(item, (n.Machine, n.Fragment)):
            children = []
            for decl in item.items:
                kind, name = _symbol(decl)
                if kind is not None:
                    child = symbol(decl, kind, name, _detail(decl))
                    if child is not None:
                        children.append(child)
            outer = symbol(item, "fragment", item.name, children=children)
            if outer is not None:
                if isinstance(item, n.Machine):
                    outer.kind = lsp.SymbolKind.Class
                out.append(outer)
        elif isinstance(item, (n.RecordDecl, n.EnumDecl)):
            kind, name = _symbol(item)
            if kind is not None:
                top = symbol(item, kind, name)
                if top is not None:
                    out.append(top)
    return out


def _prepare(ls: LanguageServer, analysis: Analysis) -> None:
    """After a check's findings are published (in the checking thread): what the next edit and requests read."""
    analysis.prepare()
    _outline(ls, analysis)


def _outline(ls: LanguageServer, analysis: Analysis) -> Any:
    """The analysis's document symbols, serialised (built once, in the checking thread after the check when
    possible)."""
    if analysis.symbols is None and analysis.module is not None:
        symbols = document_symbols(analysis.module, analysis.text)
        protocol = ls.protocol
        analysis.symbols = protocol.serialize(symbols) if isinstance(protocol, Protocol) else symbols
    return analysis.symbols


@server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
def document_symbol(ls: LanguageServer, params: lsp.DocumentSymbolParams) -> Any:
    """The outline, built once per analysis and kept serialised: editors ask for it again and again (outline,
    breadcrumbs, sticky scroll), and at 1,500 states encoding its 400 kB cost more than anything else."""
    analysis = _analysis_for(ls, params.text_document.uri)
    if analysis is None or analysis.module is None:
        return []
    return _outline(ls, analysis)


# ---------------------------------------------------------------------------- definition, references, hover


def _lookup(ls: LanguageServer, uri: str, pos: lsp.Position) -> tuple[Analysis, Index, str, list[Definition]] | None:
    analysis = _analysis_for(ls, uri)
    index = analysis.index if analysis is not None else None
    if analysis is None or index is None:
        return None
    hit = index.word_at(_offset(analysis.text, pos))
    if hit is None:
        return None
    word = hit[2]
    for candidate in (word, word.split(".")[0]):
        if candidate in index.definitions:
            return analysis, index, candidate, index.definitions[candidate]
    return analysis, index, word, []


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
    uri = params.text_document.uri
    analysis = _analysis_for(ls, uri)
    resolved = analysis.resolved if analysis is not None else None
    if analysis is not None and resolved is not None:
        occ = resolved.at(_offset(analysis.text, params.position))
        if occ is not None and occ.key is not None:
            defs = [o for o in resolved.occurrences if o.key == occ.key and o.definition]
            if defs:
                return [lsp.Location(uri, line_index(analysis.text).range(o.start, o.end)) for o in defs]
            far = _definition_elsewhere(resolved.path, occ.key)
            if far:
                return far
    found = _lookup(ls, uri, params.position)
    if found is None:
        return []
    analysis, _, word, named = found
    if named:
        return [lsp.Location(uri, _range(d.name_span)) for d in named]
    fdef = analysis.fragments().get(word)
    if fdef is not None and fdef.span is not None:
        return [lsp.Location(_uri(fdef.span.path), _range(fdef.span.narrow(word, True)))]
    return []


def _definition_elsewhere(here: str, key: tuple[str, ...]) -> list[lsp.Location]:
    """The definition of a fragment (or of a fragment's state or variable) in an imported file."""
    if key[0] not in ("fragment", "state", "variable") or key[1] in ("", "?", here):
        return []
    path = key[1]
    if not readable(path):
        return []  # outside the workspace: not read (issue 34)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    resolved = rename.resolve_file(path, normalise(text), _read_file)
    if resolved is None:
        return []
    return [lsp.Location(_uri(path), line_index(resolved.text).range(o.start, o.end))
            for o in resolved.occurrences if o.key == key and o.definition]


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def references(ls: LanguageServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    uri = params.text_document.uri
    analysis = _analysis_for(ls, uri)
    resolved = analysis.resolved if analysis is not None else None
    if analysis is not None and resolved is not None:
        occ = resolved.at(_offset(analysis.text, params.position))
        if occ is not None and occ.key is not None:
            index = line_index(analysis.text)
            include = params.context.include_declaration if params.context else True
            return [lsp.Location(uri, index.range(o.start, o.end)) for o in resolved.occurrences
                    if o.key == occ.key and (include or not o.definition)]
    found = _lookup(ls, uri, params.position)
    if found is None:
        return []
    analysis, words, word, _ = found
    src = SourceFile(analysis.path, words.text)
    locations = []
    for start, _, w in words.occurrences:
        parts = w.split(".")
        if word in parts or w == word:
            offset = start + sum(len(p) + 1 for p in parts[: parts.index(word)]) if word in parts else start
            locations.append(lsp.Location(uri, _range(Span(src, offset, offset + len(word)))))
    return locations


@server.feature(lsp.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
    uri = params.text_document.uri
    analysis = _analysis_for(ls, uri)
    if analysis is None:
        return None
    machine = analysis.machine
    found = _lookup(ls, uri, params.position)
    if found is None:
        return None
    _, _, word, defs = found
    kinds = {d.kind for d in defs}
    text = None
    if "instance" in kinds:
        text = _hover_fragment(analysis, None, word)
    elif "fragment" in kinds or (not defs and word in analysis.fragments()):
        text = _hover_fragment(analysis, word, None)
    if text is None:
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


def _hover_fragment(analysis: Analysis, fragment: str | None, instance: str | None) -> str | None:
    """A fragment's signature (parameters, exits), its states and where it is defined."""
    module = analysis.module
    if instance is not None and module is not None:
        use = next((d for item in module.items if isinstance(item, (n.Machine, n.Fragment)) for d in item.items
                    if isinstance(d, n.Use) and d.name == instance), None)
        if use is None:
            return None
        fragment = use.fragment
    if fragment is None:
        return None
    head = f"**fragment** `{fragment}`" if instance is None else f"**instance** `{instance}` of fragment `{fragment}`"
    own = next((f for f in module.fragments if f.name == fragment), None) if module is not None else None
    if own is not None:
        params = ", ".join(f"{p.name}: {p.type.span.text() if p.type.span else '?'}" for p in own.params)
        states = [d.name for d in own.items if isinstance(d, n.State)]
        exits = own.exits
        where = "defined in this file"
    else:
        fdef = analysis.fragments().get(fragment)
        if fdef is None:
            return head
        params = ", ".join(f"{p}: {T.show(t)}" for p, t in fdef.params)
        states = [s for s, st in fdef.states.items() if not st.is_terminal]
        exits = fdef.exits
        where = f"defined in `{fdef.span.path}`" if fdef.span is not None else ""
    sig = f"```skm\nfragment {fragment}({params})" + (f" -> ({', '.join(exits)})" if exits else "") + "\n```"
    lines = [head, sig]
    if states:
        lines.append("states: " + ", ".join(states))
    if where:
        lines.append(where)
    return "\n\n".join(lines)


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
    if not machine.path or not readable(Path(machine.path).parent / where.file):
        return None
    try:
        text = (Path(machine.path).parent / where.file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    return "\n".join(text[where.start - 1 : where.end])[:1500] or None


# ---------------------------------------------------------------------------- formatting and completion


@server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
def formatting(ls: LanguageServer, params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit]:
    uri = params.text_document.uri
    doc = ls.workspace.get_text_document(uri)
    source = doc.source
    analysis = _analysis_for(ls, uri, need_current=True)
    module = analysis.module if analysis is not None else language.parse(source, path=_path(uri)).module
    if module is None:
        return []
    new = print_module(module)
    if new == normalise(source):
        return []
    index = line_index(source)
    return [lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), index.end_position()), new_text=new)]


@server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(trigger_characters=[" ", ">", "(", ".", ","]))
def complete(ls: LanguageServer, params: lsp.CompletionParams) -> lsp.CompletionList:
    uri = params.text_document.uri
    _, text = _current(ls, uri)
    offset = line_index(text).offset(params.position)
    analysis = _analysis_for(ls, uri)
    module = analysis.module if analysis is not None else None
    names = completion.Names(module, analysis.machine if analysis is not None else None,
                             analysis.fragments() if analysis is not None else {}, offset)
    items = completion.complete(text, offset, names, module)
    if len(items) <= MAX_COMPLETIONS:
        return lsp.CompletionList(is_incomplete=False, items=items)
    # Thousands of states after `->`: the ones starting with what is typed, the list marked incomplete so
    # that the editor asks again as the word grows.
    typed = re.search(r"[\w.]*$", text[max(0, offset - 200):offset])
    prefix = typed.group(0).split(".")[-1].lower() if typed else ""
    chosen = [i for i in items if i.label.lower().startswith(prefix)] or items
    return lsp.CompletionList(is_incomplete=True, items=chosen[:MAX_COMPLETIONS])


# ---------------------------------------------------------------------------- code actions and rename


@server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
def code_action(ls: LanguageServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
    uri = params.text_document.uri
    doc = STATE.docs.get(uri)
    _, text = _current(ls, uri)
    if doc is None or doc.published is None or doc.published.text != text:
        return []
    index = line_index(text)
    lo, hi = index.offset(params.range.start), index.offset(params.range.end)
    analysis = _analysis_for(ls, uri, need_current=True)
    module = analysis.module if analysis is not None else language.parse(text, path=doc.path).module
    shown = _located(doc.published.diagnostics, doc.path)
    return actions.quick_fixes(uri, text, module, zip(shown, doc.published.sent), lo, hi, index)


def _read_file(path: str) -> str | None:
    """A file's text as the server sees it: the open buffer, else the file when it lies inside the workspace."""
    for uri, doc in STATE.docs.items():
        if _resolved_path(doc.path) == path:
            try:
                return normalise(server.workspace.get_text_document(uri).source)
            except Exception:  # noqa: BLE001
                break
    if not readable(path):
        return None
    try:
        return normalise(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


@server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
def prepare_rename(ls: LanguageServer, params: lsp.PrepareRenameParams) -> lsp.PrepareRenamePlaceholder | None:
    found = _current_resolved(ls, params.text_document.uri)
    if found is None:
        return None
    resolved, _, text = found
    try:
        occ = rename.renameable(resolved.at(_offset(text, params.position)))
    except rename.RenameError:
        return None
    return lsp.PrepareRenamePlaceholder(range=line_index(text).range(occ.start, occ.end), placeholder=occ.name)


@server.feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True))
def rename_symbol(ls: LanguageServer, params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
    uri = params.text_document.uri
    found = _current_resolved(ls, uri)
    if found is None:
        raise ValueError("the document does not parse; fix it before renaming")
    resolved, _, text = found
    try:
        edits = rename.rename_edits(resolved, _offset(text, params.position), params.new_name, STATE.roots, _read_file)
    except rename.RenameError as exc:
        raise ValueError(str(exc)) from None
    changes: dict[str, list[lsp.TextEdit]] = {}
    for path, spots in edits.items():
        target = uri if path == resolved.path else _uri(path)
        body = text if path == resolved.path else (_read_file(path) or "")
        index = line_index(body)
        changes[target] = [lsp.TextEdit(range=index.range(s, e), new_text=new) for s, e, new in spots]
    return lsp.WorkspaceEdit(changes=changes)


# ---------------------------------------------------------------------------- tokens, folding, inlay hints


@server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, tokens.LEGEND)
def semantic_tokens(ls: LanguageServer, params: lsp.SemanticTokensParams) -> lsp.SemanticTokens:
    found = _current_resolved(ls, params.text_document.uri)
    if found is None:
        return lsp.SemanticTokens(data=[])
    resolved, module, _ = found
    return lsp.SemanticTokens(data=tokens.semantic_tokens(resolved, module))


@server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
def folding_range(ls: LanguageServer, params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange]:
    uri = params.text_document.uri
    analysis = _analysis_for(ls, uri, need_current=True)
    if analysis is not None and analysis.module is not None:
        return tokens.folding_ranges(analysis.module, analysis.text)
    _, text = _current(ls, uri)
    module = language.parse(text, path=_path(uri)).module
    return tokens.folding_ranges(module, text) if module is not None else []


@server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
def inlay_hint(ls: LanguageServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
    if not STATE.settings.inlay_hints:
        return []
    analysis = _analysis_for(ls, params.text_document.uri, need_current=True)
    if analysis is None or analysis.module is None:
        return []
    index = line_index(analysis.text)
    lo, hi = index.offset(params.range.start), index.offset(params.range.end)
    return tokens.inlay_hints(analysis.module, analysis.machine, analysis.text, lo, hi)


#: Collect cycles after this many allocations (Python's default: 700). A check of a 1,500-state machine
#: allocates millions of objects that live until it ends; with the default, collections took 0.2–0.5 s of a
#: ~1 s check, and more the more analyses the server kept (each collection of the old generation walks them).
GC_THRESHOLD = (50_000, 20, 100)


class Collector:
    """The cycle collector paused while a check runs and its findings are published, and run by the checking thread
    after the publish: no collection lands on an edit's path (at 1,500 states a young collection took 4–13 ms of
    each check and a middle one 120 ms of every twentieth). Checks of several documents nest; the collector runs
    again when the last one is done."""

    #: A middle-generation collection every this many checks (young ones after every check).
    MIDDLE_EVERY = 10

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.paused = 0
        self.checks = 0

    def pause(self) -> None:
        with self.lock:
            self.paused += 1
            gc.disable()

    def resume(self) -> None:
        """Collect (off the edit's path) and turn the collector back on once no check is under way."""
        with self.lock:
            self.paused -= 1
            if self.paused:
                return
            self.checks += 1
            middle = self.checks % self.MIDDLE_EVERY == 0
        gc.collect(1 if middle else 0)
        with self.lock:
            if not self.paused:
                gc.enable()


COLLECTOR = Collector()


def tune_gc() -> None:
    """Keep what start-up loaded (pygls, skillc) out of every collection, and collect less often."""
    freeze_loaded()
    gc.set_threshold(*GC_THRESHOLD)


def freeze_loaded() -> None:
    """Move every object alive now to the permanent generation, which collections do not walk."""
    gc.collect()
    gc.freeze()


def main() -> None:
    """Serve over stdio: skillc's framing (skillc.lsp.framing), pygls for the protocol and features."""
    from pygls.io_ import StdoutWriter  # optional extra (pygls), needed only to serve

    server._stop_event = stop = threading.Event()
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    sys.stdout = sys.stderr  # stdout is the protocol's: anything printed (a library, an internal error) goes to stderr
    tune_gc()
    try:
        asyncio.run(serve(server, sys.stdin.fileno(), stop))
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    finally:
        server.shutdown()


__all__ = ["DEBOUNCE_S", "SCHEDULER", "STATE", "SYMBOL_KIND", "LineIndex", "SymbolKind", "analyse", "main", "server"]
