"""When the language server checks (issue 17): a burst of edits costs about two checks, the published
diagnostics are those of the last edit, a stale result is never published, hovers are answered while a
check runs, and Windows-style `file:///c%3A/…` URIs go through pygls's helpers."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import attrs
import pytest
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient

from bench.gen import nested_loop_machine
from skillc.lsp import server as srv
from tests.conftest import BROKEN
from tests.lsp.test_server import WAIT_S, client, next_publish  # noqa: F401  (client: the fixture)
from tests.lsp.test_server import published as published_diagnostics


def _change(client: LanguageClient,  # noqa: F811 - client is the imported fixture
            uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


def _replace(client: LanguageClient,  # noqa: F811 - client is the imported fixture
             uri: str, version: int, text: str, old: str, new: str) -> str:
    """Send the edit of the first `old` in `text` to `new` as a ranged change (a few bytes); the new text."""
    at = text.index(old)
    line, col = text.count("\n", 0, at), at - (text.rfind("\n", 0, at) + 1)
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangePartial(range=lsp.Range(lsp.Position(line, col),
                                                              lsp.Position(line, col + len(old))), text=new)]))
    return text[:at] + new + text[at + len(old):]


async def stats(client: LanguageClient) -> dict[str, int]:  # noqa: F811 - client is the imported fixture
    """The server's counters (`skillc/stats`): checks run, diagnostics published, edits published without a check."""
    result = await asyncio.wait_for(client.protocol.send_request_async("skillc/stats", None), WAIT_S)
    return result._asdict() if hasattr(result, "_asdict") else dict(result)


def _recorder(
        client: LanguageClient) -> list[lsp.PublishDiagnosticsParams]:  # noqa: F811 - client is the imported fixture
    published: list[lsp.PublishDiagnosticsParams] = []
    original = client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params):
        published.append(params)
        return original(params)

    client.protocol.fm.features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    return published


@pytest.mark.asyncio
async def test_a_burst_of_edits_is_checked_once_more_and_ends_with_the_last(
        client: LanguageClient,  # noqa: F811 - client is the imported fixture
        tmp_path: Path) -> None:
    uri = (tmp_path / "m.skm").as_uri()
    published = _recorder(client)
    text = nested_loop_machine(200)  # checked in about a second: the edits come while the first one's check runs
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=text)))
    await wait_until(lambda: published, "the diagnostics of the opened document")
    published.clear()
    before = await stats(client)
    # 20 edits, one every DEBOUNCE_S / 10 s: each comes while the one before waits or is checked. Each is a ranged
    # change of a few bytes, so it reaches the server when sent (whole 23 kB documents arrived in 64 kB reads,
    # at times the server chose). The first 19 change a guard's constant (each needs a check: without the
    # debounce each one would get one); the last breaks the machine.
    bound = "10"
    for version in range(2, 21):
        text = _replace(client, uri, version, text, f"len(note) > {bound}", f"len(note) > {version + 10}")
        bound = str(version + 10)
        await asyncio.sleep(srv.DEBOUNCE_S / 10)
    _replace(client, uri, 21, text, "writes note", "writes nte")
    await wait_until(lambda: any(p.version == 21 for p in published), "the diagnostics of the last edit")
    await asyncio.sleep(0.5)  # a stale result published late would show here
    assert published and published[-1].version == 21
    assert [str(d.code) for d in published[-1].diagnostics if str(d.code) != "SKM270"] == ["SKM103"]
    # About two (the first edit's, the last's); each stall of the machine longer than the debounce between two
    # edits may add one. Without the debounce: one per edit.
    assert len(published) <= 6, [p.version for p in published]
    checks = (await stats(client))["checks"] - before["checks"]
    assert 1 <= checks <= 6, checks


@pytest.mark.asyncio
async def test_comment_prompt_and_layout_edits_are_published_without_a_check(
        client: LanguageClient,  # noqa: F811 - client is the imported fixture
        tmp_path: Path) -> None:
    """Edits that leave the tokens outside comments, whitespace and prompt text alone are published at once from
    the last findings, moved, with no check; one check refreshes the analysis once typing pauses."""
    uri = (tmp_path / "m.skm").as_uri()
    published = _recorder(client)
    text = BROKEN.replace("writes answr", "writes answer").replace("requires answer", "requires answr")
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=text)))
    await wait_until(lambda: published, "the diagnostics of the opened document")
    (first,) = published[-1].diagnostics
    assert str(first.code) == "SKM103"
    before = await stats(client)
    edits = [('prompt "p"', 'prompt "Think hard."'), ("  start think", "  start think  # the first state"),
             ("# the first state", "# the first state, always"), ("    -> done", "\n    -> done"),
             ("  # the first state, always", "")]
    for version, (old, new) in enumerate(edits, start=2):
        text = _replace(client, uri, version, text, old, new)
        await wait_until(lambda: any(p.version == version for p in published),  # noqa: B023 - awaited right here
                         f"the diagnostics of version {version}")
        (moved,) = next(p for p in published if p.version == version).diagnostics
        line = next(i for i, x in enumerate(text.split("\n")) if "requires answr" in x)
        column = text.split("\n")[line].index("answr")
        assert (moved.range.start.line, moved.range.start.character) == (line, column)
    after = await stats(client)
    assert after["checks"] == before["checks"], "a trivia edit was checked before it was published"
    assert after["fast"] - before["fast"] == len(edits)
    deadline = time.monotonic() + WAIT_S
    while (await stats(client))["checks"] == before["checks"]:
        assert time.monotonic() < deadline, "the analysis was never refreshed"
        await asyncio.sleep(0.1)
    count = len(published)
    await asyncio.sleep(0.3)
    assert len(published) == count  # the refreshing check agreed: nothing published again


async def wait_until(condition, what: str) -> None:
    """Until `condition()` holds; fails after WAIT_S s."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {WAIT_S} s"
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
async def test_hover_is_answered_while_a_check_runs(
        client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811 - client is the imported fixture
    uri = (tmp_path / "big.skm").as_uri()
    big = nested_loop_machine(500)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=uri, language_id="skm", version=1, text=big)))
    await published_diagnostics(client)
    line = next(i for i, text in enumerate(big.splitlines()) if "model " in text)
    # An edit outside comments and prompts (those are published at once, from the last findings).
    _change(client, uri, 2, big.replace("len(note) > 10", "len(note) > 11", 1))
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
    from skillc.diagnostics import SourceFile
    from skillc.diagnostics.source import text_edit
    from skillc.lsp.trivia import Layout, shift_diagnostics

    path = "/tmp/fast.skm"
    # The typo comes after the prompt, so its position moves with the edit.
    old = BROKEN.replace("writes answr", "writes answer").replace('prompt "p"', 'prompt "Think."').replace(
        "requires answer", "requires answr")
    new = old.replace('prompt "Think."', f'prompt "{edit}"')
    before = api.check(old, path=path)
    layout = Layout.build(old, before.module)
    change = text_edit(old, new)
    trivia = layout.classify(new, change)
    assert trivia is not None and trivia.kind == "prompt"
    assert any(d.span.start > change.old_end for d in before.diagnostics if d.span)  # something to move
    moved = shift_diagnostics(before.diagnostics, path, SourceFile(path, new), change, (trivia.lo, trivia.hi))
    assert moved is not None
    moved_result = attrs.evolve(before, diagnostics=moved)
    assert srv._published(moved_result, path) == srv._published(api.check(new, path=path), path)
    assert layout.classify(old.replace("-> done", "-> nowhere"), text_edit(old, old.replace("-> done", "-> nowhere"))) \
        is None
    empty = old.replace('"Think."', '""')
    assert layout.classify(empty, text_edit(old, empty)) is None


def test_no_check_reads_prompt_text() -> None:
    """The fast path of prompt edits rests on this; if a check starts reading prompts, narrow the fast path."""
    from tests.conftest import ROOT

    readers = [p.name for p in (ROOT / "skillc" / "check").glob("*.py") if ".prompt" in p.read_text()]
    assert readers == []


def test_the_collector_is_paused_during_checks_and_runs_after_the_last() -> None:
    """Checks nest (several documents); the collector is back on, after a collection, once the last is done."""
    import gc

    from skillc.lsp.server import Collector

    collector = Collector()
    was = gc.isenabled()
    try:
        collector.pause()
        collector.pause()
        assert not gc.isenabled()
        collector.resume()
        assert not gc.isenabled() and collector.checks == 0
        collector.resume()
        assert gc.isenabled() and collector.checks == 1
    finally:
        gc.enable() if was else gc.disable()
