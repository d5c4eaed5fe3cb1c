"""Fuzz the toolchain: N inputs (half grammar-generated, half mutated examples) through every stage.

    python bench/fuzz.py [--inputs 100000] [--jobs 2] [--seed 0]
    python bench/fuzz.py --files [--per-command 10000] [--jobs 2] [--seed 0] [--only "refine (chat)" …]
    python bench/fuzz.py --sizes

Prints the number of inputs, how many parsed and how many checked clean, the
diagnostics by code, and the internal errors (the goal is 0), with the first
few offending inputs saved under bench/fuzz-failures/.

`--files` fuzzes every command's file inputs instead (issue 34): for each
command of `FILE_COMMANDS`, mutated copies of a valid input (byte flips,
truncation, repeated lines, structure-aware JSON mutation: a value replaced by
another type, a lone surrogate escape, a NUL, 5,000-deep nesting, a huge
number or string) are written to a file and given to the command as a user
would (`skillc.cli.main`, in-process). An internal error is exit 3, SKM900 or
a traceback. Prints `command | inputs | exit codes | internal errors | s`.

`--sizes` doubles one input of each command of `SIZED` (a machine's states, a
transcript's tool calls, traces, ASL states and Choice rules, input bytes)
until the command takes longer than 10 s, and prints the largest that did not.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from collections import Counter
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillc.testing.fuzz import FuzzReport, grammar_strategy, mutate, run_pipeline, seeds  # noqa: E402
from tests.runtime.helpers import ECHO  # noqa: E402  (the smallest machine with a model step and a tool step)


def _batch(args: tuple[int, int, int]) -> FuzzReport:
    seed, count, kind = args
    rng = random.Random(seed)
    report = FuzzReport()
    if kind == 0:
        corpus = seeds([ROOT / "examples", ROOT / "stdlib"])
        for _ in range(count):
            run_pipeline(mutate(rng.choice(corpus), rng), report)
    else:
        from hypothesis import HealthCheck, given, settings
        from hypothesis import seed as hseed

        @hseed(seed)
        @settings(max_examples=count, deadline=None, database=None, suppress_health_check=list(HealthCheck))
        @given(grammar_strategy())
        def feed(text):
            run_pipeline(text.encode("utf-8", errors="surrogatepass"), report)

        feed()
    return report


# ---------------------------------------------------------------- every command's file inputs (--files)

EXAMPLES = ROOT / "examples"
#: command -> (the valid input mutated, its file name, the command line with {f} for the fuzzed file).
FILE_COMMANDS: dict[str, tuple[str, str, list[str]]] = {
    "check": ("skm", "f.skm", ["check", "{f}"]),
    "fmt --check": ("skm", "f.skm", ["fmt", "--check", "{f}"]),
    "run --input-file": ("inputs", "f.json", ["run", "{m}", "--input-file", "{f}", "--executor", "scripted:{s}",
                                              "--journal", "{j}", "--workdir", "{d}"]),
    "run --executor scripted:": ("script", "f.json", ["run", "{m}", "--input", "q=x", "--executor", "scripted:{f}",
                                                      "--journal", "{j}", "--workdir", "{d}"]),
    "replay": ("skillc-trace", "f.jsonl", ["replay", "{m}", "{f}"]),
    "score": ("skillc-trace", "f.jsonl", ["score", "{m}", "{f}"]),
    "dot --trace": ("skillc-trace", "f.jsonl", ["dot", "{m}", "--trace", "{f}"]),
    "refine (skillc trace)": ("skillc-trace", "f.jsonl", ["refine", "{m}", "{f}", "--dry-run"]),
    "refine (chat)": ("chat", "f.jsonl", ["refine", "{m}", "{f}", "--dry-run"]),
    "refine (claude-code)": ("claude", "f.jsonl", ["refine", "{m}", "{f}", "--dry-run"]),
    "conform": ("chat", "f.jsonl", ["conform", "{m}", "{f}"]),
    "conform (codex)": ("codex", "f.jsonl", ["conform", "{m}", "{f}"]),
    "conform (claude session)": ("claude-session", "f.jsonl", ["conform", "{m}", "{f}"]),
    "distill": ("distill", "f.jsonl", ["distill", "{f}", "--report"]),
    "import asl (JSON)": ("asl-json", "f.asl.json", ["import", "asl", "{f}"]),
    "import asl (YAML)": ("asl-yaml", "f.asl.yaml", ["import", "asl", "{f}"]),
}


def valid_inputs(folder: Path) -> dict[str, bytes]:
    """One valid input of each kind (a skillc trace is made by a run of ECHO in `folder`)."""
    from click.testing import CliRunner

    from skillc.cli import main as cli

    (folder / "m.skm").write_text(ECHO)
    (folder / "s.json").write_text('{"outputs": {"think": [{"answer": "hello"}]}}')
    CliRunner().invoke(cli, ["run", str(folder / "m.skm"), "--input", "q=x",
                             "--executor", f"scripted:{folder / 's.json'}",
                             "--trace", str(folder / "seed.jsonl"), "--journal", str(folder / "seed.sqlite"),
                             "--workdir", str(folder)])
    asl = (ROOT / "tests" / "frontends" / "importers" / "corpus" / "own" / "order-processing.asl.json").read_bytes()
    import json

    import yaml

    from skillc.api import format_text

    skm = (format_text(ECHO)[0] or ECHO).encode()  # formatted, so that `fmt --check` passes it
    return {"skm": skm, "inputs": b'{"q": "a question"}', "script": (folder / "s.json").read_bytes(),
            "skillc-trace": (folder / "seed.jsonl").read_bytes(),
            "chat": (EXAMPLES / "refine" / "traces" / "chat.jsonl").read_bytes(),
            "claude": (EXAMPLES / "refine" / "traces" / "claude-code.jsonl").read_bytes(),
            "distill": b"".join((EXAMPLES / "traces" / "textworld-cooking" / "train.jsonl").read_bytes()
                                .splitlines(keepends=True)[:3]),
            "asl-json": asl, "asl-yaml": yaml.safe_dump(json.loads(asl)).encode(), "codex": _CODEX.encode(),
            "claude-session": _CLAUDE_SESSION.encode()}


#: A Codex CLI session file and a Claude Code session file (docs/refine.md) calling ECHO's tool.
_CODEX = "".join(line + "\n" for line in (
    '{"timestamp": "t", "type": "session_meta", "payload": {"id": "s1", "cwd": "/w"}}',
    '{"timestamp": "t", "type": "event_msg", "payload": {"type": "user_message", "message": "Echo hi."}}',
    '{"timestamp": "t", "type": "response_item", "payload": {"type": "function_call", "name": "shell", '
    '"arguments": "{\\"command\\": [\\"bash\\", \\"-lc\\", \\"echo hi\\"]}", "call_id": "c1"}}',
    '{"timestamp": "t", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1", '
    '"output": "hi"}}',
    '{"timestamp": "t", "type": "response_item", "payload": {"type": "message", "role": "assistant", '
    '"content": [{"type": "output_text", "text": "Done."}]}}',
    '{"timestamp": "t", "type": "event_msg", "payload": {"type": "task_complete"}}'))
_CLAUDE_SESSION = "".join(line + "\n" for line in (
    '{"type": "summary", "summary": "echo", "leafUuid": "u3"}',
    '{"parentUuid": null, "isSidechain": false, "sessionId": "s1", "uuid": "u1", "type": "user", '
    '"message": {"role": "user", "content": "Echo hi."}}',
    '{"parentUuid": "u1", "isSidechain": false, "sessionId": "s1", "uuid": "u2", "type": "assistant", '
    '"message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Bash", '
    '"input": {"command": "echo hi"}}]}}',
    '{"parentUuid": "u2", "isSidechain": false, "sessionId": "s1", "uuid": "u3", "type": "user", '
    '"message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "hi"}]}}'))


_ODD = ['"\\ud800"', '"a\\u0000b"', "1e999", "-0", "null", "[]", "{}", '"' + "x" * 100_000 + '"', "true",
        "[" * 5000 + "]" * 5000, '{"a": ' * 300 + "1" + "}" * 300, "123456789012345678901234567890"]


def mutate_file(data: bytes, rng: random.Random) -> bytes:
    """A mutated copy of a valid input: JSON-aware (a value swapped for an odd one) or byte-level."""
    import json

    lines = data.splitlines(keepends=True) or [b""]
    choice = rng.randrange(8)
    if choice < 3:  # swap one JSON value of one line for an odd value
        i = rng.randrange(len(lines))
        try:
            value = json.loads(lines[i])
        except ValueError:
            value = None
        if isinstance(value, (dict, list)):
            lines[i] = (_swap(value, rng) + "\n").encode("utf-8", "surrogatepass")
            return b"".join(lines)
    if choice == 3:  # lines repeated, dropped or reordered
        rng.shuffle(lines) if rng.random() < 0.3 else None
        k = rng.randrange(len(lines))
        return b"".join(lines[:k] + lines[k:k + 1] * rng.randint(0, 50) + lines[k + 1:])
    if choice == 4:  # cut anywhere
        return data[:rng.randrange(len(data) + 1)]
    if choice == 5:  # odd bytes: NUL, a lone surrogate in UTF-8's disguise, a BOM, CRLF, invalid UTF-8
        pos = rng.randrange(len(data) + 1)
        odd = rng.choice([b"\x00", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\r\n", b"\xff", b"\\ud800"])
        return data[:pos] + odd + data[pos:]
    return mutate(data, rng)


def _swap(value: object, rng: random.Random) -> str:
    """JSON text of `value` with one nested value (or key) replaced by an odd one."""
    import json

    path, node = [], value
    while isinstance(node, (dict, list)) and node and rng.random() < 0.8:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append((node, key))
        node = node[key]
    marker = "\u0001ODD\u0001"
    if not path:
        return rng.choice(_ODD)
    parent, key = path[-1]
    parent[key] = marker
    text = json.dumps(value)
    return text.replace(json.dumps(marker), rng.choice(_ODD), 1)


@attrs.define
class FileReport:
    """Per command: inputs, exit codes and internal errors (with the input that caused them)."""

    inputs: Counter[str] = attrs.Factory(Counter)
    exits: dict[str, Counter[int]] = attrs.Factory(dict)
    internal: list[tuple[str, bytes, str]] = attrs.Factory(list)
    seconds: Counter[str] = attrs.Factory(Counter)


def fuzz_files(commands: list[str], per_command: int, seed: int, folder: Path) -> FileReport:
    """Feed `per_command` mutated inputs to each command (in this process, as `skillc` would run them)."""
    import shutil
    import signal

    from click.testing import CliRunner

    from skillc.cli import main as cli

    valid = valid_inputs(folder)
    rng = random.Random(seed)
    report = FileReport()
    runner = CliRunner()
    for command in commands:
        kind, name, argv = FILE_COMMANDS[command]
        report.exits[command] = Counter()
        started = time.perf_counter()
        for k in range(per_command):
            data = mutate_file(valid[kind], rng) if k else valid[kind]
            work = folder / "case"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir()
            target = work / name
            target.write_bytes(data)
            args = [a.format(f=target, m=folder / "m.skm", s=folder / "s.json", j=work / "j.sqlite", d=work)
                    for a in argv]
            previous = signal.signal(signal.SIGALRM, _too_slow)
            signal.alarm(60)
            try:
                result = runner.invoke(cli, args, env={"NO_COLOR": "1"})
                code, out, exc = result.exit_code, result.output, result.exception
            except TimeoutError as slow:
                code, out, exc = -1, "", slow
            finally:
                signal.alarm(0)
                signal.signal(signal.SIGALRM, previous)
            report.inputs[command] += 1
            report.exits[command][code] += 1
            crashed = code in (3, -1) or "SKM900" in out or (exc is not None and not isinstance(exc, SystemExit))
            if crashed:
                report.internal.append((command, data, (out.strip().splitlines() or [repr(exc)])[-1][:200]))
        report.seconds[command] += time.perf_counter() - started
    return report


def _too_slow(signum, frame):
    raise TimeoutError("one input ran past 60 s")


def _files_batch(args: tuple[list[str], int, int]) -> FileReport:
    import tempfile

    commands, count, seed = args
    with tempfile.TemporaryDirectory(prefix="skillc-fuzz-files-") as folder:
        return fuzz_files(commands, count, seed, Path(folder))


def files_main(per_command: int, jobs: int, seed: int, only: list[str] | None = None) -> None:
    """`--files`: every command's file inputs (or `only` those), `per_command` each; a table and the internal
    errors. A command keeps its seed whether or not others run beside it."""
    commands = list(FILE_COMMANDS)
    unknown = sorted(set(only or ()) - set(commands))
    if unknown:
        sys.exit(f"no such command form: {', '.join(unknown)} (one of: {', '.join(commands)})")
    batches = [([c], per_command, seed * 1_000 + i) for i, c in enumerate(commands) if not only or c in only]
    start = time.perf_counter()
    with multiprocessing.Pool(jobs) as pool:
        reports = pool.map(_files_batch, batches)
    print(f"{'command':<26} | {'inputs':>7} | exit codes                         | internal | s")
    internal = []
    for (command,), r in zip((b[0] for b in batches), reports):
        exits = ", ".join(f"{c}:{n}" for c, n in sorted(r.exits[command].items()))
        print(f"{command:<26} | {r.inputs[command]:>7,} | {exits:<34} | {len(r.internal):>8} | "
              f"{r.seconds[command]:.0f}")
        internal += r.internal
    print(f"\n{sum(sum(r.inputs.values()) for r in reports):,} inputs, {len(internal)} internal errors "
          f"({time.perf_counter() - start:.0f} s)")
    if internal:
        out = ROOT / "bench" / "fuzz-failures"
        out.mkdir(exist_ok=True)
        for i, (command, data, why) in enumerate(internal[:20]):
            (out / f"file{i}.bin").write_bytes(data)
            print(f"  {command}: {why}  -> {out / f'file{i}.bin'}")
        sys.exit(1)


# ---------------------------------------------------------------- the largest input within 10 s (--sizes)


def _chain_machine(n: int) -> str:
    states = "".join(f"  model s{i} {{\n    writes answer\n    prompt \"Step {i}.\"\n    -> "
                     f"{'s' + str(i + 1) if i + 1 < n else 'done'}\n  }}\n" for i in range(n))
    return (f"machine big {{\n  var answer: str\n  start s0\n{states}"
            "  terminal done: success { requires answer }\n  fallback\n}\n")


def _chat(n: int) -> str:
    import json

    messages = [{"role": "user", "content": "go"}]
    for i in range(n):
        messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": "bash", "arguments": json.dumps(
                {"command": f"printf %s {i}"})}}]})
        messages.append({"role": "tool", "tool_call_id": f"c{i}", "content": json.dumps({"stdout": str(i),
                                                                                        "exit_code": 0})})
    return json.dumps({"messages": messages, "outcome": "success"}) + "\n"


def _asl_chain(n: int) -> str:
    import json

    states = {f"S{i}": {"Type": "Pass", **({"Next": f"S{i + 1}"} if i + 1 < n else {"End": True})} for i in range(n)}
    return json.dumps({"StartAt": "S0", "States": states})


def _asl_choice(n: int) -> str:
    import json

    rules = [{"Variable": "$.x", "NumericEquals": i, "Next": "Done"} for i in range(n)]
    return json.dumps({"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": rules, "Default": "Done"},
                                                  "Done": {"Type": "Succeed"}}})


def _distill_traces(n: int) -> str:
    import json

    lines = (EXAMPLES / "traces" / "textworld-cooking" / "train.jsonl").read_text().splitlines()
    out = []
    for i in range(n):
        obj = json.loads(lines[i % len(lines)])
        obj["id"] = f"{obj.get('id', 't')}-{i}"
        out.append(json.dumps(obj))
    return "\n".join(out) + "\n"


#: command -> (unit, file name, input of size n, command line with {f}, {m}, {s}, {d}; first n; largest n tried).
SIZED = {
    "check": ("states", "big.skm", _chain_machine, ["check", "{f}"], 50, 20_000),
    "dot": ("states", "big.skm", _chain_machine, ["dot", "{f}"], 50, 20_000),
    "run --input-file": ("bytes of input", "in.json", lambda n: '{"q": "' + "x" * n + '"}',
                         ["run", "{m}", "--input-file", "{f}", "--executor", "scripted:{s}",
                          "--journal", "{d}/j.sqlite", "--workdir", "{d}"], 1 << 16, 1 << 27),
    "refine (chat, dry run)": ("tool calls", "chat.jsonl", _chat, ["refine", "{m}", "{f}", "--dry-run"], 25, 100_000),
    "conform": ("tool calls", "chat.jsonl", _chat, ["conform", "{m}", "{f}"], 50, 200_000),
    "distill --report": ("traces", "t.jsonl", _distill_traces, ["distill", "{f}", "--report"], 10, 100_000),
    "import asl (Pass chain)": ("states", "big.asl.json", _asl_chain, ["import", "asl", "{f}"], 50, 100_000),
    "import asl (one Choice)": ("rules", "choice.asl.json", _asl_choice, ["import", "asl", "{f}"], 25, 500),
}


def sizes_main(limit_s: float) -> None:
    """`--sizes`: for each command, double its input until it takes longer than `limit_s`; the largest within."""
    import subprocess
    import tempfile

    print(f"{'command':<26} | {'largest within ' + str(int(limit_s)) + ' s':<28} | {'bytes':>12} | s    | next")
    with tempfile.TemporaryDirectory(prefix="skillc-sizes-") as tmp:
        folder = Path(tmp)
        (folder / "m.skm").write_text(ECHO)
        (folder / "s.json").write_text('{"outputs": {"think": [{"answer": "hello"}]}}')
        for command, (unit, name, make, argv, n, cap) in SIZED.items():
            best, best_bytes, best_s, after = None, 0, 0.0, ""
            while n <= cap:
                text = make(n)
                (folder / name).write_text(text)
                args = [a.format(f=folder / name, m=folder / "m.skm", s=folder / "s.json", d=folder) for a in argv]
                started = time.perf_counter()
                try:
                    r = subprocess.run([sys.executable, "-m", "skillc", *args], capture_output=True, text=True,
                                       timeout=limit_s * 3, cwd=folder)
                    took, code = time.perf_counter() - started, r.returncode
                except subprocess.TimeoutExpired:
                    took, code = limit_s * 3, "timeout"
                if took > limit_s or code == 3 or code == "timeout":
                    after = f"{n:,}: exit {code}, {took:.1f} s"
                    break
                best, best_bytes, best_s = n, len(text.encode()), took
                n *= 2
            else:
                after = f"(cap {cap:,})"
            shown = f"{best:,} {unit}" if best is not None else "none"
            print(f"{command:<26} | {shown:<28} | {best_bytes:>12,} | {best_s:4.1f} | {after}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--inputs", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--files", action="store_true", help="fuzz every command's file inputs instead (issue 34)")
    ap.add_argument("--per-command", type=int, default=10_000, help="with --files: inputs per command")
    ap.add_argument("--only", action="append", help="with --files: only this command form (repeatable)")
    ap.add_argument("--sizes", action="store_true", help="the largest input each command handles within 10 s")
    args = ap.parse_args()
    if args.sizes:
        sizes_main(10.0)
        return
    if args.files:
        files_main(args.per_command, args.jobs, args.seed, args.only)
        return
    per = 2000
    batches = [(args.seed * 100_003 + i, min(per, args.inputs - i * per), i % 2)
               for i in range((args.inputs + per - 1) // per)]
    start = time.perf_counter()
    with multiprocessing.Pool(args.jobs) as pool:
        reports = pool.map(_batch, batches)
    total = FuzzReport()
    for r in reports:
        total.inputs += r.inputs
        total.parsed += r.parsed
        total.checked_clean += r.checked_clean
        total.codes.update(r.codes)
        total.internal += r.internal
    elapsed = time.perf_counter() - start
    print(f"inputs {total.inputs:,}   parsed {total.parsed:,}   checked clean {total.checked_clean:,}   "
          f"internal errors {len(total.internal)}   ({elapsed:.0f} s)")
    print("diagnostics by code:")
    for code, n in sorted(total.codes.items()):
        print(f"  {code} {n:>8,}")
    if total.internal:
        out = ROOT / "bench" / "fuzz-failures"
        out.mkdir(exist_ok=True)
        for i, (data, why) in enumerate(total.internal[:20]):
            (out / f"case{i}.skm").write_bytes(data)
            print(f"  internal error: {why}  -> {out / f'case{i}.skm'}")
        sys.exit(1)


if __name__ == "__main__":
    main()
