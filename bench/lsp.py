"""Language-server latency: from a change notification to the published diagnostics, a burst of edits,
and a hover sent while a check runs.

    python bench/lsp.py [--sizes 50,500] [--repeat 10] [--burst 20] [--root DIR]

The server runs as a subprocess over stdio, as in an editor; each change edits one prompt so the
whole document is checked again (parse, lower and every check, Z3 included). `--root` runs the
server from another checkout (e.g. an older commit, for a before/after table on the same machine).

Columns (medians unless said): `prompt edit` is an edit of one prompt's text after a quiet period
(the server publishes the last findings moved, then confirms them with a full check; max too);
`other edit` is an edit outside any prompt (a comment), which always waits for the full check;
`burst` sends `--burst` edits at once and reports how many diagnostics were published and when
those of the last edit came; `hover` is a hover sent right after an `other` edit, while its check runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from bench.gen import nested_loop_machine  # noqa: E402


def _change(client: LanguageClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangeWholeDocument(text=text)]))


async def _settle(published: asyncio.Queue, quiet: float = 0.5) -> list:
    """Every publish until none has come for `quiet` seconds."""
    got = []
    while True:
        try:
            got.append(await asyncio.wait_for(published.get(), quiet))
        except TimeoutError:
            return got


async def measure(sizes: list[int], repeat: int, burst: int, root: str | None) -> list[tuple]:
    client = LanguageClient("bench", "0")
    published: asyncio.Queue = asyncio.Queue()

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diagnostics(params):
        published.put_nowait((time.perf_counter(), params))

    env = {**os.environ, "PYTHONPATH": root} if root else None
    await client.start_io(sys.executable, "-m", "skillc", "lsp", env=env, cwd=root)
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    rows = []
    version = 1
    for n in sizes:
        text = nested_loop_machine(n)
        uri = f"file:///tmp/bench_{n}.skm"
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="skm", version=version, text=text)))
        await published.get()
        hover_at = lsp.Position(line=next(i for i, line in enumerate(text.splitlines()) if "model " in line), character=9)
        times, others, hovers = [], [], []
        current = text
        for i in range(repeat):
            await asyncio.sleep(0.3)  # a quiet period: this edit is not part of a burst
            version += 1
            start = time.perf_counter()
            current = re.sub(r'prompt "Draft[^"]*"', f'prompt "Draft {i}."', current, count=1)
            _change(client, uri, version, current)
            done, params = await published.get()
            assert params.uri == uri and not params.diagnostics, params.diagnostics[:3]
            times.append(done - start)
            await _settle(published, quiet=0.3)
            # An edit outside a prompt (a comment) always takes the full check; hover while it runs.
            version += 1
            start = time.perf_counter()
            current = re.sub(r"  start b0_0.*", f"  start b0_0  # edit {i}", current, count=1)
            _change(client, uri, version, current)
            t0 = time.perf_counter()
            await client.text_document_hover_async(lsp.HoverParams(lsp.TextDocumentIdentifier(uri), hover_at))
            hovers.append(time.perf_counter() - t0)
            while True:
                done, params = await published.get()
                if params.version == version:
                    break
            others.append(done - start)
        await _settle(published)
        start = time.perf_counter()
        for i in range(burst):
            version += 1
            _change(client, uri, version, text.replace('prompt "Draft."', f'prompt "Burst {i}."', 1))
        got = []
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline and not any(p.version == version for _, p in got):
            try:  # until the last edit's diagnostics come (a server may publish older versions first)
                got.append(await asyncio.wait_for(published.get(), deadline - time.perf_counter()))
            except TimeoutError:
                break
        got += await _settle(published, quiet=1.0)
        # The time until the diagnostics of the last edit (a server may also publish older versions).
        final = [t for t, p in got if p.version == version]
        last = final[0] - start if final else float("nan")
        rows.append((n, statistics.median(times) * 1e3, max(times) * 1e3, statistics.median(others) * 1e3,
                     len(got), last * 1e3, statistics.median(hovers) * 1e3))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="50,500")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--burst", type=int, default=20)
    ap.add_argument("--root", default=None, help="Run the server from this checkout instead of this one.")
    args = ap.parse_args()
    rows = asyncio.run(measure([int(s) for s in args.sizes.split(",")], args.repeat, args.burst, args.root))
    print(f"{'states':>7} {'prompt edit ms':>15} {'max ms':>8} {'other edit ms':>14} {'burst publishes':>16} "
          f"{'burst last ms':>14} {'hover ms':>9}")
    for n, med, worst, other, pubs, last, hover in rows:
        print(f"{n:>7} {med:>15.1f} {worst:>8.1f} {other:>14.1f} {f'{pubs}/{args.burst}':>16} {last:>14.1f} "
              f"{hover:>9.1f}")


if __name__ == "__main__":
    main()
