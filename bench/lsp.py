"""Language-server latency: from a change notification to the published diagnostics.

    python bench/lsp.py [--sizes 50,500] [--repeat 10]

The server runs as a subprocess over stdio, as in an editor; each change
edits one prompt so the whole document is checked again (parse, lower and
every check, Z3 included).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from bench.gen import nested_loop_machine  # noqa: E402


async def measure(sizes: list[int], repeat: int) -> list[tuple[int, float, float]]:
    client = LanguageClient("bench", "0")
    published: asyncio.Queue = asyncio.Queue()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diagnostics(params):
        published.put_nowait((time.perf_counter(), params))

    await client.start_io(sys.executable, "-m", "skillc", "lsp")
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    rows = []
    for n in sizes:
        text = nested_loop_machine(n)
        uri = f"file:///tmp/bench_{n}.skm"
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="skm", version=1, text=text)))
        await published.get()
        times = []
        for i in range(repeat):
            changed = text.replace('prompt "Draft."', f'prompt "Draft {i}."', 1)
            start = time.perf_counter()
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=i + 2),
                [lsp.TextDocumentContentChangeWholeDocument(text=changed)]))
            done, params = await published.get()
            assert params.uri == uri and not params.diagnostics, params.diagnostics[:3]
            times.append(done - start)
        rows.append((n, statistics.median(times) * 1e3, max(times) * 1e3))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="50,500")
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args()
    rows = asyncio.run(measure([int(s) for s in args.sizes.split(",")], args.repeat))
    print(f"{'states':>7} {'median ms':>10} {'max ms':>8}")
    for n, med, worst in rows:
        print(f"{n:>7} {med:>10.1f} {worst:>8.1f}")


if __name__ == "__main__":
    main()
