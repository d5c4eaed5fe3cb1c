"""When the language server checks (issue 17): a burst of edits costs about two checks, the published
diagnostics are those of the last edit, a stale result is never published, hovers are answered while a
check runs, and Windows-style `file:///c%3A/…` URIs go through pygls's helpers."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from bench.gen import nested_loop_machine
from skillc.lsp import server as srv
from tests.conftest import BROKEN
from tests.lsp.test_server import client  # noqa: F401  (the pytest-lsp client fixture)


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


@pytest.mark.asyncio
async def test_a_burst_of_edits_is_checked_once_more_and_ends_with_the_last(client: LanguageClient,
                                                                              tmp_path: Path) -> None:
    uri = (tmp_path / "m.skm").as_uri()
    published: list[lsp.PublishDiagnosticsParams] = []
    original = client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        published.append(params)
        return original(params)

    client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    big = nested_loop_machine(200)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=big)))
    while not published:
        await asyncio.sleep(0.02)
    published.clear()
    for version in range(2, 22):  # 20 edits at once; the last one breaks the machine
        _change(client, uri, version, big.replace('prompt "Draft."', f'prompt "Draft {version}."', 1)
                if version < 21 else BROKEN)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(p.version == 21 for p in published):
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)
    assert published and published[-1].version == 21
    assert [d.code for d in published[-1].diagnostics] == ["SKM103"]
    assert len(published) <= 3, [p.version for p in published]  # not 20


@pytest.mark.asyncio
async def test_hover_is_answered_while_a_check_runs(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "big.skm").as_uri()
    big = nested_loop_machine(500)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=big)))
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    line = next(i for i, text in enumerate(big.splitlines()) if "model " in text)
    # An edit outside prompts (a prompt edit would be published at once, from the last findings).
    _change(client, uri, 2, big.replace("  start b0_0", "  start b0_0  # edited", 1))
    start = time.perf_counter()
    hover = await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri),
                                                                   lsp.Position(line, 9)))
    answered = time.perf_counter() - start
    await client.wait_for_notification(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    finished = time.perf_counter() - start
    assert hover is not None and "model" in hover.contents.value
    assert answered < finished  # answered before the check of the edit had finished


def test_windows_uris_use_pygls_helpers(monkeypatch) -> None:
    """`file:///c%3A/…` (VS Code's spelling) is a drive path, and paths turn back into file: URIs."""
    from pygls import uris

    monkeypatch.setattr(uris, "IS_WIN", True, raising=False)
    assert srv._path("file:///c%3A/Users/me/my%20m.skm").replace("\\", "/").lower() == "c:/users/me/my m.skm"
    monkeypatch.undo()
    assert srv._path("file:///tmp/a%20b.skm") == "/tmp/a b.skm"
    assert srv._path("untitled:Untitled-1") == "untitled:Untitled-1"
    assert srv._uri("/tmp/a b.skm") == "file:///tmp/a%20b.skm"


@pytest.mark.parametrize("edit", ["Draft", "a much longer prompt text with ü and 𝄞", "x"])
def test_a_prompt_edit_moves_the_findings_exactly_as_a_full_check_finds_them(edit: str) -> None:
    """The fast path of prompt-only edits publishes what a full check would (positions after the edit moved)."""
    from skillc import api

    path = "/tmp/fast.skm"
    # The typo comes after the prompt, so its position moves with the edit.
    old = BROKEN.replace("writes answr", "writes answer").replace('prompt "p"', 'prompt "Think."').replace(
        "requires answer", "requires answr")
    new = old.replace('prompt "Think."', f'prompt "{edit}"')
    span = srv.prompt_edit(old, new)
    assert span is not None
    before = api.check(old, path=path)
    assert any(d.span.start > span[1] for d in before.diagnostics if d.span)  # something to move
    moved = srv.shift_result(before, path, new, *span)
    assert srv._published(moved, path) == srv._published(api.check(new, path=path), path)
    assert srv.prompt_edit(old, old.replace("-> done", "-> nowhere")) is None
    assert srv.prompt_edit(old, old.replace('"Think."', '""')) is None


def test_no_check_reads_prompt_text() -> None:
    """The fast path of prompt edits rests on this; if a check starts reading prompts, narrow the fast path."""
    from tests.conftest import ROOT

    readers = [p.name for p in (ROOT / "skillc" / "check").glob("*.py") if ".prompt" in p.read_text()]
    assert readers == []
