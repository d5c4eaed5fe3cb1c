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
from tests.lsp.test_server import WAIT_S, client, next_publish  # noqa: F401  (client: the fixture)
from tests.lsp.test_server import published as published_diagnostics


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def _replace(client: LanguageClient, uri: str, version: int, text: str, old: str, new: str) -> str:
    """Send the edit of the first `old` in `text` to `new` as a ranged change (a few bytes); the new text."""
    at = text.index(old)
    line, col = text.count("\n", 0, at), at - (text.rfind("\n", 0, at) + 1)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(line, col),
                                                              lsp.Position(line, col + len(old))), text=new)]))
    return text[:at] + new + text[at + len(old):]


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
    text = nested_loop_machine(200)  # checked in about a second: the edits come while the first one's check runs
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=text)))
    await wait_until(lambda: published, "the diagnostics of the opened document")
    published.clear()
    # 20 edits, one every DEBOUNCE_S / 10 s: each comes while the one before waits or is checked. Each is a ranged
    # change of a few bytes, so it reaches the server when sent (whole 23 kB documents arrived in 64 kB reads,
    # at times the server chose). The first 19 edit a prompt (published at once when checked: without the
    # debounce each one would be); the last breaks the machine.
    prompt = "Draft."
    for version in range(2, 21):
        text = _replace(client, uri, version, text, f'"{prompt}"', f'"Draft {version}."')
        prompt = f"Draft {version}."
        await asyncio.sleep(srv.DEBOUNCE_S / 10)
    _replace(client, uri, 21, text, "writes note", "writes nte")
    await wait_until(lambda: any(p.version == 21 for p in published), "the diagnostics of the last edit")
    await asyncio.sleep(0.5)  # a stale result published late would show here
    assert published and published[-1].version == 21
    assert [d.code for d in published[-1].diagnostics] == ["SKM103"]
    # About two (the first edit's, the last's); each stall of the machine longer than the debounce between two
    # edits may add one. Without the debounce: one per edit.
    assert len(published) <= 6, [p.version for p in published]


async def wait_until(condition, what: str) -> None:
    """Until `condition()` holds; fails after WAIT_S s."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {WAIT_S} s"
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_hover_is_answered_while_a_check_runs(client: LanguageClient, tmp_path: Path) -> None:
    uri = (tmp_path / "big.skm").as_uri()
    big = nested_loop_machine(500)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=big)))
    await published_diagnostics(client)
    line = next(i for i, text in enumerate(big.splitlines()) if "model " in text)
    # An edit outside prompts (a prompt edit would be published at once, from the last findings).
    _change(client, uri, 2, big.replace("  start b0_0", "  start b0_0  # edited", 1))
    checked = next_publish(client)  # waited for from now: it must not come before the hover's answer
    hover = await asyncio.wait_for(client.text_document_hover_async(lsp.HoverParams(
        lsp.TextDocumentIdentifier(uri), lsp.Position(line, 9))), WAIT_S)
    answered_first = not checked.done()  # replies and notifications reach the client in the order they were sent
    await published_diagnostics(client, checked)
    assert hover is not None and "model" in hover.contents.value
    assert answered_first  # answered before the check of the edit had finished


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
