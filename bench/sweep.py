"""Robustness on real material: skill folders built offline and every command run on the machines; the LLM
compiler fed mutated replies.

    python bench/sweep.py ROOT... [--jobs 2] [--examples 40] [--keep DIR] [--lsp N]
    python bench/sweep.py --replies [--seeds 6] [--jobs 2]
    python bench/sweep.py --asl ROOT... [--jobs 2] [--examples 40]

Folders: every `SKILL.md` under each ROOT (`.git`, `node_modules` and hidden folders skipped; a document whose
bytes another one already has is swept once) is built with the offline compiler, as `skillc build FOLDER -o M.skm`
would, and each machine built goes through `skillc check`, `show`, `dot` (DOT and Mermaid), `test --examples N`,
`export langgraph` (the module imported and its graph compiled by LangGraph), the tool `skillc serve` would list
(its name, and an `inputSchema` that passes JSON Schema's meta-schema) and `fmt --check` (the file is formatted as
`fmt` formats it). A build may refuse a folder (a diagnostic, exit 1); anything else that fails is a finding: an
internal error (exit 3, SKM900, a traceback) anywhere, a built machine that does not check, or a command that fails
on it.
Prints `collection | folders | built | refused (codes) | findings | s`, then each finding. `--lsp N` then drives one
`skillc lsp` through pygls's client over N of the machines built (a seeded sample): each opened, every feature asked
at 25 positions (hover, definition, references, completion, rename's prepare, symbols, semantic tokens, folding,
inlay hints, formatting), three edits that delete a line and one that restores the text, each to its diagnostics,
and the code actions of the restored text; a finding is a request the server answers with an error (a rename it
refuses with a message aside) or a version whose diagnostics never come.

`--replies`: every recorded exchange of `corpus/llm/` is played `--seeds` times with its replies mutated (cut
anywhere, lines deleted, repeated, swapped or moved, a name or a token replaced, braces unbalanced, a JSON key
dropped or retyped, a NUL, a control character or a lone surrogate put in), through `skillc.frontends.markdown.build`
with an in-process executor. A build may fail (SKM310); a finding is an exception out of it, or a machine it
returns that its own file cannot hold or `skillc check` refuses. Prints `builds | machines | refused | findings`.

`--asl`: every Amazon States Language definition under the roots (`*.asl.json`, `*.asl.yaml`, `*.asl.yml`) is
imported with `skillc import asl F -o M.skm`; a definition may be refused (its findings include errors), and each
`.skm` written goes through `skillc check` (a `.skm` it refuses is a finding: no other command takes it) and
`test`. Prints `definitions | imported | refused | .skm that check
| findings`.

Nothing here is tuned on: the figures of docs/build.md ("Robustness on unseen skills") were taken with it on
collections that are neither in the corpus nor in the blind-evaluation sets, which stay out of the repository.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SKIP = {".git", "node_modules", "__pycache__", ".venv"}


def skill_folders(roots: list[Path]) -> list[tuple[str, Path]]:
    """(collection, folder) for every SKILL.md under the roots, the first of any identical documents kept."""
    seen: set[str] = set()
    out: list[tuple[str, Path]] = []
    for root in roots:
        for here, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP and not (d.startswith(".") and d not in (".claude",
                                                                                                   ".agents")))
            if "SKILL.md" not in files:
                continue
            digest = hashlib.sha256((Path(here) / "SKILL.md").read_bytes()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                out.append((root.name, Path(here)))
    return out


def _cli(args: list[str]) -> tuple[int, str, str | None]:
    """A skillc command in this process: exit code, output, and the traceback of an exception it let out."""
    code, _stdout, output, escaped = _cli_streams(args)
    return code, output, escaped


def _cli_streams(args: list[str]) -> tuple[int, str, str, str | None]:
    """`_cli` with standard output apart: exit code, standard output, both streams, an escaped traceback."""
    from click.testing import CliRunner

    from skillc.cli import main

    result = CliRunner().invoke(main, args, catch_exceptions=True)
    exc = result.exception
    escaped = None if exc is None or isinstance(exc, SystemExit) else "".join(traceback.format_exception(exc))
    return result.exit_code, result.stdout, result.output, escaped


def _internal(code: int, output: str, escaped: str | None) -> bool:
    return code == 3 or escaped is not None or "SKM900" in output or "Traceback (most recent" in output


def sweep_folder(job: tuple[str, str, str, int]) -> dict:
    """Build one folder and run every command on its machine; the row of findings."""
    collection, folder, out, examples = job
    name = hashlib.sha256(folder.encode()).hexdigest()[:12]
    machine = str(Path(out) / f"{name}.skm")
    row: dict = {"collection": collection, "folder": folder, "findings": []}
    started = time.perf_counter()
    try:
        code, output, escaped = _cli(["build", folder, "-o", machine])
        if _internal(code, output, escaped):
            row["findings"].append(("build", (escaped or output)[-600:]))
        elif code != 0 or not Path(machine).is_file():
            row["refused"] = sorted(set(re.findall(r"error\[(SKM\d+)\]", output))) or ["?"]
        else:
            row["built"] = True
            row["findings"] += _commands(machine, examples)
    except Exception:  # noqa: BLE001 - a finding of the sweep, never the end of it
        row["findings"].append(("sweep", traceback.format_exc()[-600:]))
    row["seconds"] = time.perf_counter() - started
    return row


def _commands(machine: str, examples: int) -> list[tuple[str, str]]:
    """Every command on a built machine: what failed, and how."""
    found: list[tuple[str, str]] = []
    runs = {"check": ["check", machine], "show": ["show", machine], "dot": ["dot", machine],
            "mermaid": ["dot", machine, "--format", "mermaid"],
            "test": ["test", machine, "--examples", str(examples)], "export": ["export", "langgraph", machine]}
    for what, args in runs.items():
        code, output, escaped = _cli(args)
        if _internal(code, output, escaped) or code != 0:
            found.append((what, (escaped or output)[-600:]))
        elif what == "export":
            found += _exported(machine, output)
    found += _served(machine)
    text = Path(machine).read_text(encoding="utf-8")
    code, output, escaped = _cli(["fmt", "--check", machine])
    if _internal(code, output, escaped) or code != 0:
        found.append(("fmt", "the built machine is not formatted as `skillc fmt` formats it: " + output[-300:]))
    if Path(machine).read_text(encoding="utf-8") != text:
        found.append(("fmt", "`fmt --check` changed the file"))
    return found


def _exported(machine: str, module: str) -> list[tuple[str, str]]:
    """The LangGraph module `export langgraph` wrote, imported beside the machine and its graph compiled."""
    import importlib.util

    path = Path(machine).with_name(f"_export_{Path(machine).stem}.py")
    path.write_text(module, encoding="utf-8")
    try:
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        loaded.builder.compile()
    except Exception:  # noqa: BLE001 - the finding
        return [("export", "the exported graph does not build: " + traceback.format_exc()[-400:])]
    finally:
        path.unlink(missing_ok=True)
    return []


def _served(machine: str) -> list[tuple[str, str]]:
    """The machine as `skillc serve` lists it: an MCP tool name and an `inputSchema` that is a JSON Schema."""
    import jsonschema

    from skillc.language import check
    from skillc.serve.catalog import input_schema

    checked = check(Path(machine)).machine
    if checked is None:
        return []  # `check` said so already
    problems = [] if re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", checked.name) else [f"tool name `{checked.name}`"]
    try:
        jsonschema.Draft202012Validator.check_schema(input_schema(checked))
    except jsonschema.SchemaError as exc:
        problems.append(f"inputSchema: {exc.message}")
    return [("serve", "; ".join(problems))] if problems else []


def folders_table(rows: list[dict]) -> None:
    """The table by collection, then every finding."""
    by: dict[str, list[dict]] = {}
    for r in rows:
        by.setdefault(r["collection"], []).append(r)
    header = ("collection", "folders", "built", "refused (codes)", "findings", "s")
    table = []
    for collection, group in sorted(by.items()):
        codes = Counter(c for r in group for c in r.get("refused", []))
        table.append((collection, str(len(group)), str(sum(1 for r in group if r.get("built"))),
                      _refused(group, codes),
                      str(sum(len(r["findings"]) for r in group)), f"{sum(r['seconds'] for r in group):.0f}"))
    total = ("all", str(len(rows)), str(sum(1 for r in rows if r.get("built"))),
             str(sum(1 for r in rows if "refused" in r)), str(sum(len(r["findings"]) for r in rows)),
             f"{sum(r['seconds'] for r in rows):.0f}")
    _print(header, [*table, total])
    for r in rows:
        for what, detail in r["findings"]:
            print(f"\n{r['folder']}: {what}\n{detail.strip()}")


def _refused(group: list[dict], codes: Counter) -> str:
    shown = ", ".join(f"{c}×{n}" for c, n in sorted(codes.items()))
    return f"{sum(1 for r in group if 'refused' in r)}" + (f" ({shown})" if shown else "")


def _print(header: tuple[str, ...], table: list[tuple[str, ...]]) -> None:
    widths = [max(len(x[i]) for x in [header, *table]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")


# ---------------------------------------------------------------- the language server (--lsp N)


async def drive_lsp(machines: list[Path], seed: int = 7) -> tuple[int, list[tuple[str, str]]]:
    """Every feature of one language server over the machines; the requests made and the findings."""
    import asyncio

    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    client = LanguageClient("sweep", "0")
    published: asyncio.Queue = asyncio.Queue()
    client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda params: published.put_nowait(params))
    await client.start_io(sys.executable, "-m", "skillc", "lsp")
    await client.initialize_async(lsp.InitializeParams(capabilities=lsp.ClientCapabilities()))
    client.initialized(lsp.InitializedParams())
    findings: list[tuple[str, str]] = []
    requests = 0

    async def diagnostics(uri: str, version: int) -> list[lsp.Diagnostic] | None:
        while True:
            try:
                params = await asyncio.wait_for(published.get(), 120)
            except TimeoutError:
                return None
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)

    for path in machines:
        text = path.read_text(encoding="utf-8")
        uri, doc, rng = path.resolve().as_uri(), lsp.TextDocumentIdentifier(path.resolve().as_uri()), random.Random(
            f"{path.name}/{seed}")
        client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="skm", version=1, text=text)))
        if await diagnostics(uri, 1) is None:
            findings.append((str(path), "no diagnostics for the opened text"))
            continue
        lines = text.split("\n")
        end = lsp.Position(len(lines) - 1, len(lines[-1]))
        options = lsp.FormattingOptions(tab_size=2, insert_spaces=True)
        asks: list[Any] = [
            client.text_document_document_symbol_async(lsp.DocumentSymbolParams(text_document=doc)),
            client.text_document_semantic_tokens_full_async(lsp.SemanticTokensParams(text_document=doc)),
            client.text_document_folding_range_async(lsp.FoldingRangeParams(text_document=doc)),
            client.text_document_formatting_async(lsp.DocumentFormattingParams(text_document=doc, options=options)),
            client.text_document_inlay_hint_async(lsp.InlayHintParams(text_document=doc,
                                                                      range=lsp.Range(lsp.Position(0, 0), end)))]
        for _ in range(25):
            i = rng.randrange(len(lines))
            at = lsp.Position(i, rng.randrange(len(lines[i]) + 1))
            asks += [client.text_document_hover_async(lsp.HoverParams(text_document=doc, position=at)),
                     client.text_document_definition_async(lsp.DefinitionParams(text_document=doc, position=at)),
                     client.text_document_references_async(lsp.ReferenceParams(
                         context=lsp.ReferenceContext(include_declaration=True), text_document=doc, position=at)),
                     client.text_document_completion_async(lsp.CompletionParams(text_document=doc, position=at))]
            rename = client.text_document_prepare_rename_async(lsp.PrepareRenameParams(text_document=doc,
                                                                                      position=at))
            try:
                await rename
            except Exception as exc:  # noqa: BLE001 - a refusal is an answer; an internal error is a finding
                if "internal" in str(exc).lower() or "Traceback" in str(exc):
                    findings.append((str(path), f"prepareRename: {exc}"))
            requests += 1
        for ask in asks:
            requests += 1
            try:
                await ask
            except Exception as exc:  # noqa: BLE001 - the finding
                findings.append((str(path), f"{type(exc).__name__}: {str(exc)[:300]}"))
        version = 1
        for _ in range(3):
            i = rng.randrange(len(lines))
            version += 1
            client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [lsp.TextDocumentContentChangeWholeDocument(text="\n".join(lines[:i] + lines[i + 1:]))]))
            if await diagnostics(uri, version) is None:
                findings.append((str(path), f"no diagnostics for version {version} (line {i + 1} deleted)"))
        version += 1
        client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [lsp.TextDocumentContentChangeWholeDocument(text=text)]))
        restored = await diagnostics(uri, version)
        if restored is None:
            findings.append((str(path), "no diagnostics for the restored text"))
        else:
            requests += 1
            try:
                await client.text_document_code_action_async(lsp.CodeActionParams(
                    text_document=doc, range=lsp.Range(lsp.Position(0, 0), end),
                    context=lsp.CodeActionContext(diagnostics=restored)))
            except Exception as exc:  # noqa: BLE001 - the finding
                findings.append((str(path), f"codeAction: {exc}"))
        client.text_document_did_close(lsp.DidCloseTextDocumentParams(doc))
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()
    return requests, findings


# ---------------------------------------------------------------- ASL definitions (--asl)


def asl_files(roots: list[Path]) -> list[Path]:
    """Every file under the roots that skillc reads as an ASL definition, by its name."""
    from skillc.frontends.importers.asl import is_asl_path

    found: list[Path] = []
    for root in roots:
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in SKIP]
            found += [Path(here) / f for f in files if is_asl_path(f)]
    return sorted(found)


def sweep_asl(job: tuple[str, str, int]) -> dict:
    """Import one definition; check and explore the machine written."""
    path, out, examples = job
    machine = str(Path(out) / (hashlib.sha256(path.encode()).hexdigest()[:12] + ".skm"))
    row: dict = {"path": path, "findings": []}
    code, output, escaped = _cli(["import", "asl", path, "-o", machine])
    if _internal(code, output, escaped):
        row["findings"].append(("import", (escaped or output)[-600:]))
    elif Path(machine).is_file():
        row["imported"] = True
        code, output, escaped = _cli(["check", machine])
        row["checks"] = code == 0
        if _internal(code, output, escaped) or code != 0:  # the importer wrote a machine no command takes
            row["findings"].append(("check", (escaped or output)[-600:]))
        else:
            code, output, escaped = _cli(["test", machine, "--examples", str(examples)])
            if _internal(code, output, escaped) or code != 0:
                row["findings"].append(("test", (escaped or output)[-600:]))
    return row


def asl_table(rows: list[dict]) -> None:
    imported = sum(1 for r in rows if r.get("imported"))
    _print(("definitions", "imported", "refused", ".skm that check", "findings"),
           [(str(len(rows)), str(imported), str(len(rows) - imported), str(sum(1 for r in rows if r.get("checks"))),
             str(sum(len(r["findings"]) for r in rows)))])
    for r in rows:
        for what, detail in r["findings"]:
            print(f"\n{r['path']}: {what}\n{detail.strip()}")


# ---------------------------------------------------------------- mutated replies (--replies)

_TOKENS = ["->", "{", "}", "(", ")", '"', "==", "when", "reads", "writes", "terminal", "0", "-1", "9" * 20, "str?",
           "list[", "\u0000", "\u202e", "\x0b", "\ud800", "'", "++", "`", "#", "rule", "counter", "max", "fallback",
           "start", "model", "judge", "tool", "success", "import"]


def mutate_text(text: str, rng: random.Random) -> str:
    """One random edit of a text (line- or token-level)."""
    lines = text.split("\n")
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    kind = rng.randrange(8)
    if kind == 0:
        return text[:rng.randrange(len(text) + 1)]
    if kind == 1:
        del lines[i:i + rng.randrange(1, 12)]
    elif kind == 2:
        lines.insert(i, lines[j])
    elif kind == 3:
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 4:
        names = re.findall(r"\b[a-z_][a-z0-9_]*\b", text)
        if names:
            a, b = rng.choice(names), rng.choice(names)
            return re.sub(rf"\b{re.escape(a)}\b", b, text, count=rng.randrange(1, 4))
    elif kind == 5:
        tokens = list(re.finditer(r"\S+", text))
        if tokens:
            t = rng.choice(tokens)
            return text[:t.start()] + rng.choice(_TOKENS) + text[t.end():]
    elif kind == 6:
        lines[j:j] = lines[i:i + rng.randrange(1, 20)]
    else:
        return text.replace("{", "{\n", 1).replace("}", "", 1)
    return "\n".join(lines)


def mutate_reply(reply: str, rng: random.Random) -> str:
    """A recorded reply with one to three edits of its `.skm` text, or of the JSON around it."""
    try:
        data = json.loads(reply)
    except json.JSONDecodeError:
        return mutate_text(reply, rng)
    roll = rng.random()
    if not isinstance(data, dict) or roll < 0.1:
        return mutate_text(reply, rng)
    if roll < 0.2 and data:
        key = rng.choice(sorted(data))
        data[key] = rng.choice([None, 7, [], {}, "", [data[key]]])
        return json.dumps(data)
    for _ in range(rng.randrange(1, 4)):
        keys = sorted(k for k, v in data.items() if isinstance(v, str) and v)
        if keys:
            key = rng.choice(keys)
            data[key] = mutate_text(data[key], rng)
    return json.dumps(data)


def replay_mutated(job: tuple[str, int]) -> dict:
    """One recorded build played with mutated replies: whether it built, and any finding."""
    from skillc.frontends.markdown import build
    from skillc.language import check
    from skillc.runtime.executors.base import BaseExecutor, Response
    from skillc.runtime.executors.recorded import load_exchange

    exchange, seed = job
    replies = [reply for _, reply, _ in load_exchange(exchange)]

    class Mutated(BaseExecutor):
        name = "mutated"

        def __init__(self) -> None:
            self.n = 0

        def complete(self, request) -> Response:
            rng = random.Random(f"{Path(exchange).name}/{seed}/{self.n}")
            reply = replies[min(self.n, len(replies) - 1)]
            self.n += 1
            return Response(mutate_reply(reply, rng) if rng.random() < 0.85 else reply, model="mutated")

    skill = ROOT / "corpus" / "skills" / Path(exchange).name.removesuffix(".exchange.jsonl")
    row: dict = {"exchange": exchange, "seed": seed, "findings": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "m.skm"
        try:
            result = build(skill, output=out, executor=Mutated())
        except Exception:  # noqa: BLE001 - the finding
            row["findings"].append(traceback.format_exc()[-800:])
            return row
        if result.text is None:
            return row
        row["built"] = True
        try:
            out.write_text(result.text, encoding="utf-8")
        except UnicodeEncodeError as exc:
            row["findings"].append(f"the machine cannot be written as UTF-8: {exc}")
            return row
        errors = [str(d) for d in check(out).diagnostics if d.is_error]
        if errors:
            row["findings"].append("the machine written does not check: " + errors[0][:400])
    return row


def replies_table(rows: list[dict]) -> None:
    built = sum(1 for r in rows if r.get("built"))
    findings = [(r["exchange"], r["seed"], f) for r in rows for f in r["findings"]]
    refused = sum(1 for r in rows if not r.get("built") and not r["findings"])
    _print(("builds", "machines", "refused", "findings"), [(str(len(rows)), str(built), str(refused),
                                                            str(len(findings)))])
    for exchange, seed, finding in findings:
        print(f"\n{Path(exchange).name} (seed {seed}):\n{finding.strip()}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path, help="folders holding skill folders")
    parser.add_argument("--replies", action="store_true", help="feed the LLM compiler mutated recorded replies")
    parser.add_argument("--asl", action="store_true", help="import the ASL definitions under the roots instead")
    parser.add_argument("--seeds", type=int, default=6, help="--replies: plays of each recorded exchange")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--examples", type=int, default=40, help="runs of `skillc test` per machine")
    parser.add_argument("--keep", type=Path, default=None, help="write the built machines here (default: a temp)")
    parser.add_argument("--lsp", type=int, default=0, metavar="N", help="then drive the language server over N "
                        "of the machines built")
    args = parser.parse_args(argv)
    if args.replies == bool(args.roots):
        parser.error("give skill-folder ROOTs, or --replies")
    started = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(args.jobs, maxtasksperchild=25) as pool:
        if args.replies:
            plays = [(str(p), s) for p in sorted((ROOT / "corpus" / "llm").glob("*.exchange.jsonl"))
                     for s in range(1, args.seeds + 1)]
            replies_table(list(pool.imap_unordered(replay_mutated, plays)))
            return _done(started)
        out = args.keep or Path(tempfile.mkdtemp(prefix="skillc-sweep-"))
        out.mkdir(parents=True, exist_ok=True)
        if args.asl:
            asl = [(str(f), str(out), args.examples) for f in asl_files(args.roots)]
            asl_table(sorted(pool.imap_unordered(sweep_asl, asl), key=lambda r: r["path"]))
        else:
            jobs = [(c, str(f), str(out), args.examples) for c, f in skill_folders(args.roots)]
            folders_table(sorted(pool.imap_unordered(sweep_folder, jobs), key=lambda r: r["folder"]))
    if args.lsp and not args.replies and not args.asl:
        import asyncio

        built = sorted(out.glob("*.skm"))
        sample = random.Random(7).sample(built, min(args.lsp, len(built)))
        requests, findings = asyncio.run(drive_lsp(sample))
        print(f"\nlanguage server: {len(sample)} machines, {requests} requests, {len(findings)} findings")
        for where, what in findings:
            print(f"{where}: {what}")
    return _done(started)


def _done(started: float) -> int:
    print(f"\n{time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
