"""Issue 34: the language server reads files only inside its workspace folders. An import, a definition, a
hover's skill-document lines and a rename that resolve outside are refused, not read."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from skillc.lsp import server as srv
from tests.lsp.test_server import _pos, published

MACHINE = """import "../outside/lib.skm"

machine m {
  tool bash(command: str) -> (stdout: str, exit_code: int)
  input cmd: str
  var page: str
  start fetch

  use outer_retry as fetch(command: cmd, output: page) -> (ok: summarise, failed: fallback)

  model summarise {
    reads page
    prompt "Summarise the page."
    from "../outside/SKILL.md":3-4
    -> done
  }

  terminal done: success
  fallback
}
"""
SECRET = "TOP SECRET LINE"


def _layout(tmp: Path) -> Path:
    """A project (skillc.toml at its top) whose workspace folder is `ws/`; `outside/` is in the project only."""
    (tmp / "skillc.toml").write_text("")
    (tmp / "ws").mkdir()
    (tmp / "outside").mkdir()
    retry = (Path(srv.__file__).parents[2] / "stdlib" / "retry.skm").read_text()
    (tmp / "outside" / "lib.skm").write_text(retry.replace("fragment retry", "fragment outer_retry"))
    (tmp / "outside" / "SKILL.md").write_text(f"# Skill\n\n{SECRET} one\n{SECRET} two\n")
    (tmp / "ws" / "m.skm").write_text(MACHINE)
    return tmp / "ws" / "m.skm"


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "skillc", "lsp"]))
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_nothing_outside_the_workspace_is_read(client: LanguageClient, tmp_path: Path) -> None:
    path = _layout(tmp_path)
    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(),
        workspace_folders=[lsp.WorkspaceFolder(uri=(tmp_path / "ws").as_uri(), name="ws")]))
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=MACHINE)))
    diagnostics = (await published(client)).diagnostics
    # `skillc check` accepts the import (the project root is tmp_path); the server refuses it: outside the workspace.
    assert any(str(d.code) == "SKM125" for d in diagnostics), \
        [(str(d.code), d.message) for d in diagnostics]
    assert not any("outer_retry" in d.message and str(d.code) == "SKM104" for d in diagnostics)
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), _pos(MACHINE, "summarise {", 2)))
    assert hover is None or SECRET not in str(hover.contents)
    definition = await client.text_document_definition_async(lsp.DefinitionParams(
        lsp.TextDocumentIdentifier(uri), _pos(MACHINE, "outer_retry", 2)))
    assert not any("outside" in loc.uri for loc in definition or [])
    await asyncio.sleep(0)


@pytest.mark.asyncio
async def test_inside_the_workspace_the_same_files_are_read(client: LanguageClient, tmp_path: Path) -> None:
    """The control: with the project's top as the workspace folder, the import and the skill lines are read."""
    path = _layout(tmp_path)
    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(),
        workspace_folders=[lsp.WorkspaceFolder(uri=tmp_path.as_uri(), name="top")]))
    uri = path.as_uri()
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=MACHINE)))
    diagnostics = (await published(client)).diagnostics
    assert not [d for d in diagnostics if d.severity == lsp.DiagnosticSeverity.Error], \
        [(str(d.code), d.message) for d in diagnostics]
    hover = await client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), _pos(MACHINE, "summarise {", 2)))
    assert hover is not None and SECRET in str(hover.contents)
    definition = await client.text_document_definition_async(lsp.DefinitionParams(
        lsp.TextDocumentIdentifier(uri), _pos(MACHINE, "outer_retry", 2)))
    assert any(loc.uri.endswith("outside/lib.skm") for loc in definition or [])


def test_readable_and_import_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The helpers on their own; a document outside every workspace folder (opened on purpose) is confined to
    its project root, as `skillc check` confines it."""
    path = _layout(tmp_path)
    monkeypatch.setattr(srv.STATE, "roots", [str((tmp_path / "ws").resolve())])
    assert srv.readable(path) and not srv.readable(tmp_path / "outside" / "SKILL.md")
    assert srv.readable(Path(srv.__file__).parents[2] / "stdlib" / "retry.skm")
    assert not srv.readable(tmp_path / "ws" / ".." / "outside" / "lib.skm")
    assert srv.import_root(str(path)) == str((tmp_path / "ws").resolve())
    assert srv.import_root(str(tmp_path / "outside" / "lib.skm")) is None
