"""Language-server latency, driven by a real LSP client (pygls's) over stdio, as in an editor.

    python bench/lsp.py [--sizes 50,500,1500] [--repeat 10] [--burst 20] [--root DIR] [--only COLUMNS]

For each size a generated machine (`bench.gen.nested_loop_machine`, about that many states, no errors)
is opened; after a quiet period each request is sent `--repeat` times and the median is reported (for
edits also the max). `--root` runs the server from another checkout (e.g. a copy of an older version,
for a before/after table on the same machine and load).

Columns (ms):
- `open`: didOpen to its publishDiagnostics (one full check);
- `symbols`, `hover` (a state name in the middle), `complete` (after `-> ` in the middle), `format`: the
  request's round trip, the document quiet (its last check finished): the server's time, the transfer and
  `json.loads` of the reply (not the pygls client's conversion into lsprotocol objects, which at 1,500 states
  adds ≈ 50 ms to the 400 kB of document symbols and is no part of what an editor waits for);
- `comment`: a comment edited (the `start` line) to the publishDiagnostics of that version;
- `prompt`: one prompt's text edited, likewise;
- `edit`: an edit outside comments and prompt text (a guard's constant in a state in the middle, a new
  value each time, so never a text checked before), likewise: a full check; `hover*`: a hover sent right
  after that edit, while it is checked;
- `burst`: `--burst` ranged edits at once: how many publishes, and when the last edit's diagnostics came.

`--cpu` instead measures, in a child process (so `--root` applies), the CPU time of what the server does for
a guard edit — the check through `skillc.lsp.analysis.run_check` and the `Analysis` made of it — median of
`--repeat` edits: on a shared machine CPU time moves far less with the load than wall time does.
`--skip-check NAME` leaves one check out of `CHECKS` (to show what the rest costs).
`--stages` (with `--cpu`) also splits that median: the parse (the server's incremental `ItemParser`), each
check, the rest of `run_check` (lowering, mostly) and `Analysis.make` — what an edit still pays for.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from bench.gen import nested_loop_machine

COLUMNS = ("open", "symbols", "hover", "complete", "format", "comment", "prompt", "edit", "hover*", "burst")


def _position(text: str, offset: int) -> lsp.Position:
    return lsp.Position(text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1))


def _replace(client: LanguageClient, uri: str, version: int, text: str, at: int, old: str, new: str) -> str:
    """Send the edit of `old` at offset `at` to `new` as a ranged change; the new text."""
    assert text[at:at + len(old)] == old, (text[at:at + 40], old)
    start, end = _position(text, at), _position(text, at + len(old))
    client.text_document_did_change(lsp.DidChangeTextDocumentParams(
        lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
        [lsp.TextDocumentContentChangePartial(range=lsp.Range(start, end), text=new)]))
    return text[:at] + new + text[at + len(old):]


class Session:
    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.published: asyncio.Queue = asyncio.Queue()

    async def until_version(self, uri: str, version: int,
                            limit: float = 120.0) -> tuple[float, lsp.PublishDiagnosticsParams]:
        deadline = time.perf_counter() + limit
        while True:
            done, params = await asyncio.wait_for(self.published.get(), max(0.01, deadline - time.perf_counter()))
            if params.uri == uri and params.version == version:
                return done, params

    async def settle(self, quiet: float) -> list:
        got = []
        while True:
            try:
                got.append(await asyncio.wait_for(self.published.get(), quiet))
            except TimeoutError:
                return got


async def measure(sizes: list[int], repeat: int, burst: int, root: str | None, only: set[str]) -> list[dict]:
    client = LanguageClient("bench", "0")
    session = Session(client)

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def _diagnostics(params):
        session.published.put_nowait((time.perf_counter(), params))

    env = {**os.environ, "PYTHONPATH": root} if root else None
    await client.start_io(sys.executable, "-m", "skillc", "lsp", env=env, cwd=root)
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    rows = []
    version = 1
    for n in sizes:
        row: dict = {"states": n}
        text = nested_loop_machine(n)
        uri = f"file:///tmp/bench_lsp_{n}.skm"
        doc = lsp.TextDocumentIdentifier(uri)
        t0 = time.perf_counter()
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri=uri, language_id="skm", version=version, text=text)))
        done, params = await session.until_version(uri, version)
        row["open"] = [done - t0]
        full = done - t0
        quiet = 0.3 + 1.5 * full  # long enough for any check the server runs after an edit to finish
        await session.settle(quiet)
        middle = max(1, n // 20) // 2  # a block in the middle
        state_at = text.index(f"model b{middle}_1 {{") + len("model ")
        arrow_at = text.index("-> ", text.index(f"model b{middle}_4 {{")) + len("-> ")
        guard = f"when verdict == unsure and len(note) > 10 -> b{middle}_4"
        guard_at = text.index(guard) + guard.index("10")

        # The closures below run before the loop moves on, and must see the live `version`: late binding is wanted.
        async def timed(name: str, request) -> None:
            if name not in only:
                return
            times = []
            typed = client.protocol.get_result_type
            client.protocol.get_result_type = lambda method: None  # the result as parsed JSON, not lsprotocol objects
            try:
                for _ in range(repeat):
                    t = time.perf_counter()
                    result = await request()
                    times.append(time.perf_counter() - t)
            finally:
                client.protocol.get_result_type = typed
            row[name] = times  # noqa: B023 - called in this iteration
            row[name + "_result"] = result  # noqa: B023 - called in this iteration

        await timed("symbols", lambda: client.text_document_document_symbol_async(lsp.DocumentSymbolParams(doc)))  # noqa: B023 - called in this iteration
        await timed("hover", lambda: client.text_document_hover_async(lsp.HoverParams(doc, _position(text, state_at))))  # noqa: B023 - called in this iteration
        await timed("complete", lambda: client.text_document_completion_async(
            lsp.CompletionParams(doc, _position(text, arrow_at))))  # noqa: B023 - called in this iteration
        await timed("format", lambda: client.text_document_formatting_async(lsp.DocumentFormattingParams(
            doc, lsp.FormattingOptions(tab_size=2, insert_spaces=True))))  # noqa: B023 - called in this iteration
        assert "symbols" not in only or row["symbols_result"], "no document symbols"
        assert "hover" not in only or row["hover_result"] is not None, "no hover"

        current = text

        async def edits(name: str, make_edit) -> None:
            nonlocal current, version
            if name not in only:
                return
            times, hovers = [], []
            for i in range(repeat):
                await session.settle(quiet)  # noqa: B023 - called in this iteration
                version += 1
                t = time.perf_counter()
                current = make_edit(i, current)
                if name == "edit":
                    h = time.perf_counter()
                    await client.text_document_hover_async(lsp.HoverParams(doc, _position(current, state_at)))  # noqa: B023 - called in this iteration
                    hovers.append(time.perf_counter() - h)
                done, params = await session.until_version(uri, version)  # noqa: B023 - called in this iteration
                assert not [d for d in params.diagnostics if d.severity == lsp.DiagnosticSeverity.Error], \
                    [d.message for d in params.diagnostics[:3]]
                times.append(done - t)
            row[name] = times  # noqa: B023 - called in this iteration
            if hovers:
                row["hover*"] = hovers  # noqa: B023 - called in this iteration

        start_line = current.index("  start b0_0") + len("  start b0_0")
        current = _replace(client, uri, version + 1, current, start_line, "", "  # comment")
        version += 1
        comment_at = start_line + len("  # ")
        await session.until_version(uri, version)
        await edits("comment", lambda i, cur: _replace(client, uri, version, cur, comment_at,  # noqa: B023 - called in this iteration
                                                      cur[comment_at:cur.index("\n", comment_at)], f"comment {i}"))  # noqa: B023 - called in this iteration
        prompt_at = current.index('prompt "Draft."', current.index(f"model b{middle}_1 {{")) + len('prompt "')

        def prompt_edit(i: int, cur: str) -> str:
            end = cur.index('"', prompt_at)  # noqa: B023 - called in this iteration
            return _replace(client, uri, version, cur, prompt_at, cur[prompt_at:end], f"Draft {i}.")  # noqa: B023 - called in this iteration

        await edits("prompt", prompt_edit)
        shift = len(current) - len(text)
        bound = ["10"]

        def guard_edit(i: int, cur: str) -> str:  # a new constant each time: never a text checked before
            at = guard_at + shift  # noqa: B023 - called in this iteration
            old = bound[0]  # noqa: B023 - called in this iteration
            bound[0] = str(11 + i)  # noqa: B023 - called in this iteration
            return _replace(client, uri, version, cur, at, old, bound[0])  # noqa: B023 - called in this iteration

        await edits("edit", guard_edit)
        if "burst" in only:
            await session.settle(quiet)
            t = time.perf_counter()
            for i in range(burst - 1):
                version += 1
                current = prompt_edit(100 + i, current)
            version += 1
            comment_end = current.index("\n", comment_at)
            current = _replace(client, uri, version, current, comment_at, current[comment_at:comment_end], "last")
            seen = []
            while True:
                done, params = await asyncio.wait_for(session.published.get(), 120)
                seen.append(params.version)
                if params.version == version:
                    break
            row["burst_last"] = done - t
            row["burst_publishes"] = len(seen) + len(await session.settle(max(1.0, quiet)))
        rows.append(row)
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(doc))
        await session.settle(0.3)
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return rows


CPU_CHILD = r"""
import functools, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from bench.gen import nested_loop_machine
from skillc.check import passes
from skillc.lsp import analysis
from skillc.lsp.analysis import Analysis, run_check
from skillc.lsp.server import tune_gc
tune_gc()
stages = sys.argv[4] == "1"
spent = {}

def timed(name, f):
    @functools.wraps(f)
    def inner(*args):
        start = time.process_time()
        try:
            return list(f(*args)) if name != "parse" else f(*args)
        finally:
            spent[name] = spent.get(name, 0.0) + time.process_time() - start
    return inner

passes.CHECKS = tuple(c for c in passes.CHECKS if c.__name__ not in sys.argv[5:])
if stages:
    passes.CHECKS = tuple(timed(c.__name__, c) for c in passes.CHECKS)
    analysis._parse = timed("parse", analysis._parse)
for n in map(int, sys.argv[2].split(",")):
    text = nested_loop_machine(n)
    run_check(text, "/tmp/bench_cpu.skm", {})
    at = text.index("len(note) > 10", text.index(f"model b{max(1, n // 20) // 2}_1"))
    cpu, parts = [], []
    for i in range(int(sys.argv[3])):
        edited = text[:at] + f"len(note) > {111 + i}" + text[at + len("len(note) > 10"):]
        spent.clear()
        start = time.process_time()
        result, imports = run_check(edited, "/tmp/bench_cpu.skm", {})
        checked = time.process_time()
        Analysis.make("file:///tmp/bench_cpu.skm", "/tmp/bench_cpu.skm", edited, result, imports, {}, 0)
        cpu.append(time.process_time() - start)
        checks = sum(v for k, v in spent.items() if k != "parse")
        parts.append({**spent, "lower+rest": checked - start - checks - spent.get("parse", 0.0),
                      "analysis": time.process_time() - checked})
    print(f"{n} | {statistics.median(cpu) * 1e3:.0f} | {min(cpu) * 1e3:.0f}", flush=True)
    if stages:
        med = {k: statistics.median(p[k] for p in parts) * 1e3 for k in parts[0]}
        small = [k for k in med if k.startswith("check_") and med[k] < 1.0]
        shown = sorted((k for k in med if k not in small), key=lambda k: -med[k])
        print("    " + ", ".join(f"{k} {med[k]:.1f}" for k in shown) +
              f", {len(small)} other checks {sum(med[k] for k in small):.1f}", flush=True)
"""


def cpu_table(sizes: str, repeat: int, root: str | None, skip: list[str], stages: bool = False) -> None:
    """The CPU time of the server's check of a guard edit, per size (in a child: `--root` is imported); `stages`:
    also its median split into the parse, each check, the rest of the check (lowering, mostly) and `Analysis`."""
    import subprocess

    here = str(Path(__file__).resolve().parent.parent)
    print("CPU ms of a guard edit's check (run_check + Analysis), median and min" +
          (f"; without {', '.join(skip)}" if skip else ""))
    print("states | median | min")
    subprocess.run([sys.executable, "-c", CPU_CHILD, root or here, sizes, str(repeat), "1" if stages else "0", *skip],
                   check=True)


def _ms(values: list[float] | None, worst: bool = False) -> str:
    if not values:
        return "-"
    med = statistics.median(values) * 1e3
    return f"{med:.1f}" + (f" ({max(values) * 1e3:.0f})" if worst and len(values) > 1 else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="50,500,1500")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--burst", type=int, default=20)
    ap.add_argument("--root", default=None, help="Run the server from this checkout instead of this one.")
    ap.add_argument("--only", default=",".join(COLUMNS), help="Comma-separated columns to measure.")
    ap.add_argument("--cpu", action="store_true", help="The CPU time of a guard edit's check, in process.")
    ap.add_argument("--skip-check", action="append", default=[], help="With --cpu: leave this check out.")
    ap.add_argument("--stages", action="store_true", help="With --cpu: split the CPU time by stage and check.")
    args = ap.parse_args()
    if args.cpu:
        cpu_table(args.sizes, args.repeat, args.root, args.skip_check, args.stages)
        return
    only = set(args.only.split(","))
    rows = asyncio.run(measure([int(s) for s in args.sizes.split(",")], args.repeat, args.burst, args.root, only))
    print("median ms (max in parentheses: for symbols and format the first request, for edits the slowest)")
    header = ["states", "open", "symbols", "hover", "complete", "format", "comment", "prompt", "edit", "hover*",
              "burst last (publishes)"]
    print(" | ".join(header))
    for row in rows:
        cells = [str(row["states"]), _ms(row.get("open")), _ms(row.get("symbols"), True), _ms(row.get("hover")),
                 _ms(row.get("complete")), _ms(row.get("format"), True), _ms(row.get("comment"), True),
                 _ms(row.get("prompt"), True), _ms(row.get("edit"), True), _ms(row.get("hover*")),
                 f"{row['burst_last'] * 1e3:.0f} ({row['burst_publishes']}/{args.burst})"
                 if "burst_last" in row else "-"]
        print(" | ".join(cells))


if __name__ == "__main__":
    main()
