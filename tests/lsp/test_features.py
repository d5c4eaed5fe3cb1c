"""The editor features of `skillc lsp`, driven over stdio by pytest-lsp: completion in context, quick fixes, rename
across files, semantic tokens, folding, inlay hints, hover on fragments, links to the diagnostics reference,
symbol kinds, re-checking the documents that import an edited file, and the dynamic file watcher."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from skillc.lsp.tokens import TOKEN_TYPES
from tests.conftest import BROKEN, EXAMPLES, ROOT
from tests.lsp.test_scheduling import stats, wait_until
from tests.lsp.test_server import WAIT_S, _pos, client, next_publish, published  # noqa: F401  (client: the fixture)

MACHINE = """machine m {
  tool bash(command: str, timeout: int) -> (stdout: str, exit_code: int)
  record Report { title: str, score: int }
  enum Verdict { good, bad }
  input task: str
  var verdict: Verdict
  var report: Report
  var status: int
  var out: str
  counter tries max 2
  start draft

  model draft {
    reads task
    writes report
    prompt "Draft a report."
    -> review
  }
  judge review {
    reads report
    writes verdict
    prompt "Is it good?"
    when verdict == bad and tries < 2 -> draft { tries += 1 }
    -> run
  }
  tool run {
    reads task
    call bash(command: "echo " ++ quote(task), timeout: 5)
    writes status = exit_code, out = stdout
    # two lines
    # of comment
    when status != 0 -> fallback
    -> done
  }
  terminal done: success { requires report, out }
  fallback
  rule required review "Always review the draft before running anything."
}
"""


async def _open(client: LanguageClient,  # noqa: F811 - client is the imported fixture
                path: Path, text: str, version: int = 1) -> str:
    path.write_text(text)
    uri = path.resolve().as_uri()
    future = next_publish(client)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=version, text=text)))
    await published(client, future)
    return uri


async def _change(client: LanguageClient,  # noqa: F811 - client is the imported fixture
                  uri: str, version: int, text: str) -> lsp.PublishDiagnosticsParams:
    """Replace the whole text and wait for the diagnostics of that version."""
    got: list[lsp.PublishDiagnosticsParams] = []
    original = client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        got.append(params)
        return original(params)

    client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    try:
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]))
        await wait_until(lambda: any(p.uri == uri and p.version == version for p in got), f"version {version}")
    finally:
        client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = original
    return next(p for p in got if p.uri == uri and p.version == version)


def _apply(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply text edits (LSP positions, ASCII text) from the last to the first."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def offset(p: lsp.Position) -> int:
        return starts[p.line] + p.character

    for e in sorted(edits, key=lambda e: offset(e.range.start), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


async def _complete(client: LanguageClient,  # noqa: F811 - client is the imported fixture
                    uri: str, text: str, needle: str, delta: int | None = None) -> list[str]:
    pos = _pos(text, needle, len(needle) if delta is None else delta)
    result = await client.text_document_completion_async(lsp.CompletionParams(lsp.TextDocumentIdentifier(uri), pos))
    return [i.label for i in result.items]


@pytest.mark.asyncio
async def test_completion_in_context(client: LanguageClient,  # noqa: F811 - client is the imported fixture
                                     tmp_path: Path) -> None:
    uri = await _open(client, tmp_path / "m.skm", MACHINE)
    assert list(client.diagnostics[uri]) == []
    states = await _complete(client, uri, MACHINE, "    -> review")  # `-> ` then a partial name
    assert states.count("fallback") == 1 and {"draft", "review", "run", "done"} <= set(states)
    assert await _complete(client, uri, MACHINE, "    when verdict == ", None) == ["good", "bad"]
    # Half-typed guards do not parse: completion uses the last analysis that did, plus the text.
    half = MACHINE.replace("    when status != 0 -> fallback\n", "    when report.\n")
    await _change(client, uri, 2, half)
    assert await _complete(client, uri, half, "    when report.") == ["title", "score"]
    half = MACHINE.replace("    when status != 0 -> fallback\n", "    when verdict != \n")
    await _change(client, uri, 3, half)
    assert await _complete(client, uri, half, "    when verdict != ") == ["good", "bad"]
    half = MACHINE.replace('call bash(command: "echo " ++ quote(task), timeout: 5)', "call bash(")
    await _change(client, uri, 4, half)
    assert await _complete(client, uri, half, "call bash(") == ["command", "timeout"]
    half = MACHINE.replace('call bash(command: "echo " ++ quote(task), timeout: 5)', 'call bash(command: "x", ')
    await _change(client, uri, 5, half)
    assert await _complete(client, uri, half, 'call bash(command: "x", ') == ["timeout"]
    keywords = await _complete(client, uri, half, "  model draft {\n    ", len("  model draft {\n    "))
    assert {"reads", "writes", "prompt", "when"} <= set(keywords) and "machine" not in keywords


@pytest.mark.asyncio
async def test_symbol_kinds_and_links_to_the_reference(
        client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811 - client is the imported fixture
    uri = await _open(client, tmp_path / "m.skm", MACHINE)
    symbols = await client.text_document_document_symbol_async(
        lsp.DocumentSymbolParams(lsp.TextDocumentIdentifier(uri)))
    kinds = {c.name: c.kind for c in symbols[0].children}
    assert kinds["Verdict"] == lsp.SymbolKind.Enum and kinds["Report"] == lsp.SymbolKind.Struct
    assert kinds["done"] == lsp.SymbolKind.Event and kinds["draft"] == lsp.SymbolKind.Function
    draft = next(c for c in symbols[0].children if c.name == "draft")
    assert draft.selection_range.start == _pos(MACHINE, "model draft", 6)
    broken = await _open(client, tmp_path / "broken.skm", BROKEN)
    (d,) = client.diagnostics[broken]
    assert d.code_description is not None
    assert d.code_description.href == "https://github.com/skillc/skillc/blob/main/docs/diagnostics.md#skm103"
    client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(
        settings={"skillc": {"diagnosticsUrl": "https://example.org/diagnostics.html"}}))
    params = await _change(client, broken, 2, BROKEN + "\n")
    assert params.diagnostics[0].code_description.href == "https://example.org/diagnostics.html#skm103"


MISSING_DEFAULT = BROKEN.replace("writes answr", "writes answer").replace(
    "    -> done\n", "    when answer != \"\" -> done\n", 1)
UNDECLARED_READ = MACHINE.replace("  tool run {\n    reads task\n", "  tool run {\n")
UNQUOTED = MACHINE.replace('"echo " ++ quote(task)', '"echo " ++ report.title')
MISSPELT_KEYWORD = MACHINE.replace("model draft", "modle draft", 1)


@pytest.mark.asyncio
@pytest.mark.parametrize("text, code, title", [
    (BROKEN, "SKM103", "Change `answr` to `answer`"),
    (MISSPELT_KEYWORD, "SKM010", "Change `modle` to `model`"),  # a syntax error's suggestion
    (MISSING_DEFAULT, "SKM202", "Add the default edge `-> fallback`"),
    (UNDECLARED_READ, "SKM131", "Add `task` to the state's `reads`"),
    (UNQUOTED, "SKM510", "Wrap `report.title` in `quote()`"),
])
async def test_quick_fixes_remove_their_finding(client: LanguageClient,  # noqa: F811 - client is the imported fixture
                                                tmp_path: Path, text: str, code: str,
                                                title: str) -> None:
    uri = await _open(client, tmp_path / "m.skm", text)
    found = [d for d in client.diagnostics[uri] if str(d.code) == code]
    assert found, [str(d.code) for d in client.diagnostics[uri]]
    actions = await client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(uri), found[0].range, lsp.CodeActionContext(diagnostics=found)))
    fix = next(a for a in actions if a.title == title)
    assert fix.kind == lsp.CodeActionKind.QuickFix and str(fix.diagnostics[0].code) == code
    fixed = _apply(text, fix.edit.changes[uri])
    after = await _change(client, uri, 2, fixed)
    assert code not in [str(d.code) for d in after.diagnostics], fixed


FRAGMENT = """fragment polish(text: str) -> (done, failed) {
  var verdict: enum { good, bad }
  start edit

  model edit {
    reads text
    writes text
    prompt "Polish it."
    -> check
  }
  judge check {
    reads text
    writes verdict
    prompt "Good?"
    when verdict == bad -> failed
    -> done
  }
}
"""

USER = """import "polish.skm"

machine m {
  var draft: str
  var bad: str = "x"
  start write

  model write {
    writes draft
    prompt "Write."
    -> tidy
  }
  use polish as tidy(text: draft) -> (done: finish, failed: fallback)
  terminal finish: success { requires draft }
  fallback
  rule required tidy.edit "Always polish the draft before finishing."
}
"""


@pytest.mark.asyncio
async def test_rename_states_variables_and_fragments_across_files(
        client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811 - client is the imported fixture
    (tmp_path / "polish.skm").write_text(FRAGMENT)
    uri = await _open(client, tmp_path / "user.skm", USER)
    assert [str(d.code) for d in client.diagnostics[uri] if d.severity == lsp.DiagnosticSeverity.Error] == []
    doc = lsp.TextDocumentIdentifier(uri)

    async def rename(text: str, needle: str, delta: int, new: str) -> dict[str, list[lsp.TextEdit]]:
        at = _pos(text, needle, delta)
        prepared = await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(doc, at))
        assert prepared is not None
        edit = await client.text_document_rename_async(lsp.RenameParams(doc, at, new))
        return edit.changes

    changes = await rename(USER, "-> tidy", 3, "polishing")  # an instance: its `use` and the edges into it
    assert _apply(USER, changes[uri]).count("polishing") == 3 and list(changes) == [uri]
    changes = await rename(USER, "var draft", 4, "text_v1")  # a variable: declaration, writes, binding, requires
    assert _apply(USER, changes[uri]).count("text_v1") == 4
    changes = await rename(USER, "start write", 6, "compose")
    renamed = _apply(USER, changes[uri])
    assert "start compose" in renamed and "model compose {" in renamed
    # A fragment's name: its definition in polish.skm and the `use` here.
    changes = await rename(USER, "use polish", 4, "refine")
    fragment_uri = (tmp_path / "polish.skm").resolve().as_uri()
    assert set(changes) == {uri, fragment_uri}
    assert _apply(FRAGMENT, changes[fragment_uri]).startswith("fragment refine(")
    assert "use refine as tidy" in _apply(USER, changes[uri])
    # A fragment's state through its instance (`tidy.edit` here, `model edit` there), not the enum label `bad`
    # of the fragment nor this machine's variable `bad`.
    changes = await rename(USER, "tidy.edit", 5, "rewrite")
    assert "rule required tidy.rewrite" in _apply(USER, changes[uri])
    polished = _apply(FRAGMENT, changes[fragment_uri])
    assert "start rewrite" in polished and "model rewrite {" in polished and "when verdict == bad" in polished
    # Definitions across files: the fragment, and its state through the instance.
    found = await client.text_document_definition_async(lsp.DefinitionParams(doc, _pos(USER, "tidy.edit", 6)))
    assert [(d.uri, d.range.start) for d in found] == [(fragment_uri, _pos(FRAGMENT, "model edit", 6))]
    found = await client.text_document_definition_async(lsp.DefinitionParams(doc, _pos(USER, "use polish", 5)))
    assert [(d.uri, d.range.start) for d in found] == [(fragment_uri, _pos(FRAGMENT, "fragment polish", 9))]
    # Not renamed: `fallback`, keywords, the standard library's names.
    assert await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(
        doc, _pos(USER, "failed: fallback", 10))) is None
    assert await client.text_document_prepare_rename_async(lsp.PrepareRenameParams(
        doc, _pos(USER, "model write", 2))) is None
    with pytest.raises(Exception, match="keyword"):
        await client.text_document_rename_async(lsp.RenameParams(doc, _pos(USER, "var draft", 4), "machine"))


def _decode(data: list[int], text: str) -> list[tuple[str, str]]:
    """(token text, type) from relative-encoded semantic tokens (ASCII text)."""
    lines = text.split("\n")
    out, line, col = [], 0, 0
    for i in range(0, len(data), 5):
        dl, dc, length, kind, _ = data[i:i + 5]
        line, col = line + dl, (col + dc if dl == 0 else dc)
        out.append((lines[line][col:col + length], TOKEN_TYPES[kind]))
    return out


@pytest.mark.asyncio
async def test_semantic_tokens_folding_and_inlay_hints(
        client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811 - client is the imported fixture
    uri = await _open(client, tmp_path / "m.skm", MACHINE)
    doc = lsp.TextDocumentIdentifier(uri)
    result = await client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(doc))
    tokens = _decode(result.data, MACHINE)
    assert ("draft", "function") in tokens and ("done", "event") in tokens and ("bad", "enumMember") in tokens
    assert ("bash", "method") in tokens and ("report", "variable") in tokens and ("title", "property") in tokens
    assert ("model", "keyword") in tokens and ('"Draft a report."', "string") in tokens
    assert ("# two lines", "comment") in tokens and ("2", "number") in tokens and ("quote", "function") in tokens
    folds = await client.text_document_folding_range_async(lsp.FoldingRangeParams(doc))
    spans = {(f.start_line, f.end_line) for f in folds}
    model = MACHINE.split("\n").index("  model draft {")
    assert (model, model + 4) in spans  # the body, its closing brace left visible
    comment = MACHINE.split("\n").index("    # two lines")
    assert (comment, comment + 1) in spans
    hints = await client.text_document_inlay_hint_async(lsp.InlayHintParams(
        doc, lsp.Range(lsp.Position(0, 0), lsp.Position(len(MACHINE.split("\n")), 0))))
    labels = {(h.position.line, h.position.character): h.label for h in hints}
    for needle, after, label in (("status = exit_code", 6, ": int"), ("out = stdout", 3, ": str"),
                                 ("tries += 1", 5, ": int")):
        at = _pos(MACHINE, needle, after)
        assert labels[(at.line, at.character)] == label


@pytest.mark.asyncio
async def test_hover_on_a_fragment_and_an_instance(
        client: LanguageClient) -> None:  # noqa: F811 - client is the imported fixture
    path = EXAMPLES / "spreadsheet" / "spreadsheet.skm"
    text = path.read_text()
    uri = path.resolve().as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=text)))
    await published(client)
    doc = lsp.TextDocumentIdentifier(uri)
    hover = await client.text_document_hover_async(lsp.HoverParams(doc, _pos(text, "use write_verify", 6)))
    assert "**fragment** `write_verify`" in hover.contents.value and "stdlib/write_verify.skm" in hover.contents.value
    assert "fragment write_verify(" in hover.contents.value
    hover = await client.text_document_hover_async(lsp.HoverParams(doc, _pos(text, "as save_script", 5)))
    assert "**instance** `save_script` of fragment `write_verify`" in hover.contents.value


@pytest.mark.asyncio
async def test_documents_that_import_an_edited_file_are_checked_again(
        client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811 - client is the imported fixture
    fragment = await _open(client, tmp_path / "polish.skm", FRAGMENT)
    user = await _open(client, tmp_path / "user.skm", USER)
    assert [str(d.code) for d in client.diagnostics[user] if d.severity == lsp.DiagnosticSeverity.Error] == []
    # An unsaved edit of the open fragment: the importer is checked against the buffer.
    broken = FRAGMENT.replace("polish(text: str)", "polish(body: str)").replace("reads text", "reads body").replace(
        "writes text", "writes body")
    future = next_publish(client)
    await _change(client, fragment, 2, broken)
    await wait_until(lambda: any(d.severity == lsp.DiagnosticSeverity.Error for d in client.diagnostics[user]),
                     "the importer's new error")
    assert future.done()
    await _change(client, fragment, 3, FRAGMENT)
    await wait_until(lambda: not any(d.severity == lsp.DiagnosticSeverity.Error for d in client.diagnostics[user]),
                     "the importer clean again")
    # Closed, then changed on disk: the watcher's notification re-checks the importer.
    client.text_document_did_close(lsp.DidCloseTextDocumentParams(lsp.TextDocumentIdentifier(fragment)))
    (tmp_path / "polish.skm").write_text(broken)
    client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        [lsp.FileEvent(uri=fragment, type=lsp.FileChangeType.Changed)]))
    await wait_until(lambda: any(d.severity == lsp.DiagnosticSeverity.Error for d in client.diagnostics[user]),
                     "the importer's error after the file changed on disk")


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "skillc", "lsp"]))
async def watching_client(lsp_client: LanguageClient):
    lsp_client.registrations = []  # type: ignore[attr-defined]

    @lsp_client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def register(params: lsp.RegistrationParams) -> None:
        lsp_client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    capabilities = lsp.ClientCapabilities(workspace=lsp.WorkspaceClientCapabilities(
        did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)))
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities, root_uri=ROOT.as_uri()))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_the_file_watcher_is_registered_when_the_client_can(watching_client: LanguageClient) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while not watching_client.registrations:  # type: ignore[attr-defined]
        assert asyncio.get_running_loop().time() < deadline, "no client/registerCapability"
        await asyncio.sleep(0.05)
    (registration,) = watching_client.registrations  # type: ignore[attr-defined]
    assert registration.method == lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES
    options = registration.register_options  # plain JSON: the client does not know the options' type
    globs = [w["globPattern"] if isinstance(w, dict) else w.glob_pattern
             for w in (options["watchers"] if isinstance(options, dict) else options.watchers)]
    assert "**/*.skm" in globs


@pytest.mark.asyncio
async def test_no_watcher_without_the_capability(client: LanguageClient,  # noqa: F811 - client is the imported fixture
                                                 tmp_path: Path) -> None:
    """The plain client (no dynamic registration) gets no registration request, and the server still answers."""
    assert (await stats(client))["checks"] >= 0


@pytest.mark.asyncio
async def test_long_completion_lists_are_cut_to_the_typed_prefix(
        client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811 - client is the imported fixture
    from bench.gen import nested_loop_machine

    text = nested_loop_machine(400)
    uri = await _open(client, tmp_path / "big.skm", text)
    doc = lsp.TextDocumentIdentifier(uri)
    at = _pos(text, "-> b3_2", 3)
    everything = await client.text_document_completion_async(lsp.CompletionParams(doc, at))
    assert everything.is_incomplete and len(everything.items) == 200
    typed = lsp.Position(at.line, at.character + 3)  # after `-> b3_`
    some = await client.text_document_completion_async(lsp.CompletionParams(doc, typed))
    assert some.items and all(i.label.startswith("b3_") for i in some.items)
    assert {f"b3_{k}" for k in range(10)} <= {i.label for i in some.items}
