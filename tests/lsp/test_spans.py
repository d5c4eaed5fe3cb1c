"""Positions: the line-offset index behind every conversion (built once per text, exact in UTF-16, UTF-8 and
UTF-32), document symbols in linear time, and two spans the editor showed wrongly — a `use … -> (…)` one
character short (also in JSON/SARIF end columns) and SKM224 underlining the whole machine."""

from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from bench.gen import nested_loop_machine
from skillc import api
from skillc.diagnostics.render import to_json
from skillc.lsp import lines
from skillc.lsp.server import document_symbols
from skillc.syntax import nodes as n
from tests.conftest import BROKEN
from tests.lsp.test_server import client, published  # noqa: F401  (client: the fixture)


def _naive(text: str, offset: int, encoding: str) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    prefix = text[text.rfind("\n", 0, offset) + 1:offset]
    units = {"utf-16": len(prefix.encode("utf-16-le")) // 2, "utf-8": len(prefix.encode("utf-8")),
             "utf-32": len(prefix)}[encoding]
    return line, units


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\n é𝄞\t", max_size=60), st.data(), st.sampled_from(["utf-16", "utf-8", "utf-32"]))
def test_positions_round_trip_in_every_encoding(text: str, data: st.DataObject, encoding: str) -> None:
    offset = data.draw(st.integers(0, len(text)))
    lines.set_encoding(encoding)
    try:
        index = lines.LineIndex(text)
        pos = index.position(offset)
        assert (pos.line, pos.character) == _naive(text, offset, encoding)
        assert index.offset(pos) == offset
    finally:
        lines.set_encoding("utf-16")


def test_a_column_past_the_line_end_is_the_line_end() -> None:
    index = lines.LineIndex("ab\ncd")
    assert index.offset(lsp.Position(0, 99)) == 2 and index.offset(lsp.Position(9, 0)) == 5


def test_document_symbols_index_the_text_once(monkeypatch) -> None:
    """documentSymbol was O(n²): every range conversion split the whole text again."""
    built = []
    original = lines.LineIndex.__init__

    def counting(self, text: str) -> None:
        built.append(len(text))
        original(self, text)

    text = nested_loop_machine(300)
    module = api.parse(text, path="/tmp/s.skm").module
    monkeypatch.setattr(lines.LineIndex, "__init__", counting)
    lines._CACHE.clear()
    symbols = document_symbols(module, text)
    assert len(symbols[0].children) > 300 and built == [len(text)]


def test_document_symbols_take_linear_time() -> None:
    def timed(n: int) -> float:
        text = nested_loop_machine(n)
        module = api.parse(text, path=f"/tmp/s{n}.skm").module
        best = float("inf")
        for _ in range(5):
            lines._CACHE.clear()
            gc.collect()
            gc.disable()  # collections of a large heap would count against the large document
            try:
                start = time.perf_counter()
                document_symbols(module, text)
                best = min(best, time.perf_counter() - start)
            finally:
                gc.enable()
        return best

    small, large = timed(300), timed(2400)  # 8 times the states: ≈ 8 times the time; quadratic would be 64
    assert large < 30 * small, (small, large)


USE = """import "stdlib/retry.skm"

machine m {
  var page: str
  start fetch
  use retry as fetch(command: page, output: page) -> (ok: done, failed: fallback)
  use nowhere as other(command: page) -> (ok: done)
  terminal done: success
  fallback
}
"""


def test_a_use_ends_at_its_exit_list() -> None:
    result = api.check(USE, path=str(Path(__file__).parent / "use.skm"))
    machine = next(item for item in result.module.items if isinstance(item, n.Machine))
    uses = [d for d in machine.items if isinstance(d, n.Use)]
    assert [u.span.text() for u in uses] == [x.strip() for x in USE.splitlines() if x.strip().startswith("use")]
    (undefined,) = [d for d in result.diagnostics if str(d.code) == "SKM107"]
    line = USE.splitlines()[6]
    assert to_json(undefined)["end_column"] == len(line) + 1  # 1-based, after the `)`


SOURCED = """machine m {
  source "missing-skill.md"
  var answer: str
  start think
  model think {
    writes answer
    prompt "Think."
    -> done
  }
  terminal done: success { requires answer }
  fallback
  rule required think "Always think before you answer anything."
}
"""


def test_an_unreadable_skill_document_is_reported_at_source(tmp_path: Path) -> None:
    result = api.check(SOURCED, path=str(tmp_path / "m.skm"))
    (unreadable,) = [d for d in result.diagnostics if str(d.code) == "SKM224"]
    assert unreadable.span.text() == 'source "missing-skill.md"'


@pytest.mark.asyncio
async def test_the_editor_underlines_the_source_line(
        client: LanguageClient, tmp_path: Path) -> None:  # noqa: F811 - client is the imported fixture
    path = tmp_path / "m.skm"
    path.write_text(SOURCED)
    client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=path.as_uri(), language_id="skm", version=1, text=SOURCED)))
    await published(client)
    (d,) = [d for d in client.diagnostics[path.as_uri()] if str(d.code) == "SKM224"]
    assert (d.range.start.line, d.range.start.character, d.range.end.line, d.range.end.character) == (1, 2, 1, 27)




@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "skillc", "lsp"]))
async def utf8_client(lsp_client: LanguageClient):
    """A client that prefers UTF-8 columns (as Neovim does): pygls agrees to its first choice."""
    capabilities = lsp.ClientCapabilities(general=lsp.GeneralClientCapabilities(
        position_encodings=[lsp.PositionEncodingKind.Utf8, lsp.PositionEncodingKind.Utf16]))
    result = await lsp_client.initialize_session(lsp.InitializeParams(capabilities=capabilities))
    assert result.capabilities.position_encoding == lsp.PositionEncodingKind.Utf8
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_columns_in_a_utf8_session(utf8_client: LanguageClient, tmp_path: Path) -> None:
    text = BROKEN.replace('    writes answr\n    prompt "p"\n', '    prompt "é𝄞" writes answr\n')
    path = tmp_path / "m.skm"
    utf8_client.text_document_did_open(lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(
        uri=path.as_uri(), language_id="skm", version=1, text=text)))
    await published(utf8_client)
    (d,) = utf8_client.diagnostics[path.as_uri()]
    line = '    prompt "é𝄞" writes answr'
    start = len(line[:line.index("answr")].encode("utf-8"))
    assert (d.range.start.character, d.range.end.character) == (start, start + 5)
    actions = await utf8_client.text_document_code_action_async(lsp.CodeActionParams(
        lsp.TextDocumentIdentifier(path.as_uri()), d.range, lsp.CodeActionContext(diagnostics=[d])))
    (edit,) = actions[0].edit.changes[path.as_uri()]
    assert edit.range == d.range and edit.new_text == "answer"
