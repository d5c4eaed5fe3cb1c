"""Fault injection: every fault of issues 16 and 34, network faults through a local fake server, and SIGKILL series.

    python bench/faults.py [--kills 100] [--seed 0]

Each row runs `skillc` as a user would (a subprocess in a scratch folder) and
compares what happened with what must happen. A row passes when the expected
behaviour is observed; any traceback, hang (a per-row time limit), tool step run
twice or secret found in a written file fails it. The network rows talk to
`tests/runtime/fake_openai.py` on 127.0.0.1 only. The kill series SIGKILLs runs
at random points and resumes them until they finish, then checks that no
committed tool step ran again, that the trace has every step once and one
footer, and that it replays.

Prints the table `fault | expected | observed | pass` and a summary line; exits
1 when a row fails.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import attrs  # noqa: E402

from tests.runtime.fake_openai import FakeOpenAI  # noqa: E402
from tests.runtime.helpers import ECHO  # noqa: E402
from tests.runtime.test_resume import MACHINE  # noqa: E402

SECRET_LONG, SECRET_SHORT = "sk-FAULTS-SECRET-0042", "9137"
ENV = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": SECRET_LONG, "FAULTS_PIN_TOKEN": SECRET_SHORT}

# The loop of the resume test, four times longer: more steps to be killed in.
LOOP = MACHINE.replace("max 6", "max 24").replace("i < 6", "i < 24")

WORK = """import random, time

def work(n):
    with open({log!r}, "a") as f:
        f.write(f"{{n}}\\n")
    time.sleep(random.uniform(0.02, 0.12))
    return {{"done": n}}
"""


class Bench:
    """A scratch folder and the rows found so far."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="skillc-faults-"))
        self.rows: list[tuple[str, str, str, bool]] = []
        (self.dir / "m.skm").write_text(ECHO)
        self.script = self.put("s.json", json.dumps({"outputs": {"think": [
            {"answer": f"uses {SECRET_LONG} and pin {SECRET_SHORT}"}]}}))

    def put(self, name: str, text: str | bytes) -> Path:
        p = self.dir / name
        p.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
        return p

    def skillc(self, *args, timeout: float = 60, stdin=None) -> tuple[int | str, str]:
        """Exit code (or "hang") and output of one command."""
        try:
            argv = [a if isinstance(a, bytes) else str(a) for a in args]
            r = subprocess.run([sys.executable, "-m", "skillc", *argv], capture_output=True, cwd=self.dir,
                               env=ENV, timeout=timeout, stdin=stdin)
        except subprocess.TimeoutExpired:
            return "hang", ""
        return r.returncode, (r.stdout + r.stderr).decode("utf-8", "replace")

    def row(self, fault: str, expected: str, ok: bool, observed: str) -> None:
        self.rows.append((fault, expected, observed, ok))

    def expect(self, fault: str, expected: str, args: list, codes: set, needle: str = "", timeout: float = 60) -> None:
        """A command must exit with one of `codes`, print `needle`, and show no traceback."""
        code, out = self.skillc(*args, timeout=timeout)
        tb = "Traceback" in out or "SKM900" in out
        found = not needle or needle in out
        line = next((x for x in out.splitlines() if needle and needle in x), out.strip().splitlines()[-1:] or [""])
        observed = (f"exit {code}" + (", traceback" if tb else "")
                    + (f": {line[0][:70] if isinstance(line, list) else line[:70]}"))
        self.row(fault, expected, code in codes and not tb and found, observed)

    def run_args(self, *extra) -> list:
        return ["run", "m.skm", "--input", "q=x", "--executor", f"scripted:{self.script}", "--journal", "j.sqlite",
                "--workdir", str(self.dir), *extra]

    def secrets_leaked(self) -> list[str]:
        """Files under the scratch folder that hold a secret in clear (the scripts themselves excepted)."""
        leaked = []
        for p in self.dir.rglob("*"):
            if p.is_file() and p.suffix not in (".json",) and not p.name.startswith("in"):
                data = p.read_bytes()
                if SECRET_LONG.encode() in data or f" {SECRET_SHORT}".encode() in data:
                    leaked.append(p.name)
        return leaked


def file_faults(b: Bench) -> None:
    """Inputs and outputs: devices, FIFOs, links, loops, NULs, depth, size, modes, data loss."""
    os.mkfifo(b.dir / "fifo.skm")
    (b.dir / "loop1").symlink_to(b.dir / "loop2")
    (b.dir / "loop2").symlink_to(b.dir / "loop1")
    b.expect("check a FIFO", "SKM901, no hang", ["check", "fifo.skm"], {2}, "FIFO", timeout=20)
    b.expect("check /dev/zero", "SKM901 before reading", ["check", "/dev/zero"], {2}, "device", timeout=20)
    b.expect("build /dev/zero", "SKM901 before reading", ["build", "/dev/zero", "-o", "z.skm"], {2}, "device",
             timeout=20)
    for cmd in (["dot", "loop1"], ["run", "loop1", "--executor", "scripted:x"], ["test", "loop1"], ["build", "loop1"],
                ["replay", "loop1", "loop1"], ["score", "loop1", "loop1"]):
        b.expect(f"symlink loop: {cmd[0]}", "clean error, exit 2", cmd, {2})
    b.put("nul.skm", 'import "a\\u0000b.skm"\n' + ECHO)
    b.expect("NUL in an import path", "SKM124", ["check", "nul.skm"], {1}, "SKM124")
    chain = b.dir / "chain"
    chain.mkdir()
    (chain / "skillc.toml").write_text("")
    for i in range(500):
        head = f'import "c{i + 1}.skm"\n' if i < 499 else ""
        (chain / f"c{i}.skm").write_text(head + f'fragment f{i}(x: str) -> (out) {{\n  start s\n  model s {{\n'
                                         '    prompt "p"\n    -> out\n  }\n}\n')
    b.expect("500-file import chain", "SKM124, no RecursionError", ["check", chain / "c0.skm"], {1}, "nest more than")
    deep = "[" * 100_000 + "]" * 100_000
    b.put("in-deep.json", '{"q": ' + deep + "}")
    b.expect("100,000-deep --input-file", "clean error",
             ["run", "m.skm", "--input-file", "in-deep.json", "--executor", f"scripted:{b.script}", "--journal",
              "j.sqlite"], {2}, "nested")
    b.put("deep.jsonl", '{"type": "header", "inputs": ' + deep + "}\n")
    for cmd in (["replay", "m.skm", "deep.jsonl"], ["score", "m.skm", "deep.jsonl"],
                ["dot", "m.skm", "--trace", "deep.jsonl"]):
        b.expect(f"100,000-deep trace: {cmd[0]}", "clean error", cmd, {2}, "nested")
    before = (b.dir / "m.skm").read_bytes()
    code, _ = b.skillc(*b.run_args("--trace", "m.skm"))
    b.row("run --trace onto the machine", "refused, machine intact",
          code == 2 and (b.dir / "m.skm").read_bytes() == before,
          f"exit {code}, machine {'intact' if (b.dir / 'm.skm').read_bytes() == before else 'OVERWRITTEN'}")
    b.expect("run --trace /dev/full", "SKM503, no traceback", b.run_args("--trace", "/dev/full"), {2}, "SKM503")
    b.put("real.dot", "old")
    (b.dir / "link.dot").symlink_to(b.dir / "real.dot")
    code, _ = b.skillc("dot", "m.skm", "-o", "link.dot")
    ok = (b.dir / "link.dot").is_symlink() and (b.dir / "real.dot").read_text().startswith("digraph")
    b.row("dot -o onto a symlink", "written through, link kept", code == 0 and ok,
          f"exit {code}, link {'kept' if ok else 'REPLACED'}")
    code, _ = b.skillc("dot", "m.skm", "-o", "/dev/null")
    b.row("dot -o /dev/null", "written into the device", code == 0 and Path("/dev/null").is_char_device(),
          f"exit {code}")
    b.expect("dot -o /dev/full", "clean error", ["dot", "m.skm", "-o", "/dev/full"], {2}, "No space left")
    os.mkfifo(b.dir / "out.fifo")
    b.expect("dot -o a FIFO without reader", "clean error, no hang", ["dot", "m.skm", "-o", "out.fifo"], {2},
             "no reader", 20)
    code, _ = b.skillc("grammar", "-o", "new.lark")
    mode = oct((b.dir / "new.lark").stat().st_mode & 0o777) if (b.dir / "new.lark").exists() else "none"
    b.row("mode of a new output", "0o644 (umask 022)", mode == oct(0o666 & ~_umask()), mode)
    crlf = b.put("crlf.skm",
                 b"\xef\xbb\xbf" + ECHO.replace("start think", "start   think").replace("\n", "\r\n").encode())
    code, _ = b.skillc("fmt", crlf)
    data = crlf.read_bytes()
    ok = data.startswith(b"\xef\xbb\xbf") and data.count(b"\n") == data.count(b"\r\n") and b"start think" in data
    b.row("fmt a BOM + CRLF file", "BOM and CRLF kept", code == 0 and ok, f"exit {code}, {'kept' if ok else 'LOST'}")


def issue34_faults(b: Bench) -> None:
    """Secrets in a refine archive, data loss, internal errors, unbounded inputs and wrong words (issue 34)."""
    folder = b.dir / "i34"
    folder.mkdir()
    (folder / "m.skm").write_text(ECHO)
    clear = {k: v for k, v in ENV.items() if k != "OPENAI_API_KEY"}
    for name, answer in (("in-t1", f"uses {SECRET_LONG} here"), ("in-t2", "another answer")):
        (folder / f"{name}.json").write_text(json.dumps({"outputs": {"think": [{"answer": answer}]}}))
        subprocess.run([sys.executable, "-m", "skillc", "run", "m.skm", "--input", f"q={name}", "--executor",
                        f"scripted:{name}.json", "--trace", f"{name}.jsonl", "--journal", "in-j34.sqlite"], cwd=folder,
                       env=clear, capture_output=True, timeout=120)
    code, out = b.skillc("refine", folder / "m.skm", folder / "in-t1.jsonl")
    leaked = [p.name for p in (folder / "m.archive").rglob("*")
              if p.is_file() and SECRET_LONG.encode() in p.read_bytes()]
    leaked += ["m.skm"] if SECRET_LONG in (folder / "m.skm").read_text() else []
    b.row("refine: a trace holding a key in clear", "archive redacted", code == 0 and not leaked,
          f"exit {code}, " + (", ".join(leaked[:2]) or "no secret"))
    procs = [subprocess.Popen([sys.executable, "-m", "skillc", "refine", "m.skm", f"{t}.jsonl", "--json",
                               "--archive", "two.archive"], cwd=folder, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for t in ("in-t1", "in-t2")]
    outs = [p.communicate(timeout=120) for p in procs]
    from skillc.improve.archive import open_archive

    archive, _ = open_archive(folder / "m.skm", folder / "two.archive")
    kept = set(archive.entries) if archive is not None else set()
    claimed = {json.loads(line)["trace"] for out, _ in outs for line in out.splitlines()[:-1]
               if json.loads(line).get("status") == "accepted"}
    codes_ = sorted(p.returncode for p in procs)
    b.row("two refines of one archive at once", "none lost (or one refused, SKM540)", claimed <= kept,
          f"exits {codes_}, {len(claimed)} claimed, {len(claimed - kept)} lost")
    before = (folder / "in-t2.jsonl").read_bytes()
    b.expect("refine -o naming its trace", "SKM541, trace intact", ["refine", folder / "m.skm", folder / "in-t2.jsonl",
                                                                    "-o", folder / "in-t2.jsonl"], {2}, "SKM541")
    b.rows[-1] = (*b.rows[-1][:3], b.rows[-1][3] and (folder / "in-t2.jsonl").read_bytes() == before)
    asl = b.put("g.asl.json", '{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}')
    b.expect("import asl -o naming its input", "SKM541, input intact", ["import", "asl", asl, "-o", asl], {2}, "SKM541")
    b.rows[-1] = (*b.rows[-1][:3], b.rows[-1][3] and asl.read_text().startswith('{"StartAt"'))
    os.mkfifo(folder / "out.fifo")
    for target in (folder / "out.fifo", "/dev/zero"):
        b.expect(f"refine -o {Path(target).name}", "SKM542 at once",
                 ["refine", folder / "m.skm", folder / "in-t2.jsonl", "-o", target], {2}, "SKM542", timeout=30)
    (b.dir / "outside.dot").write_text("keep")
    (folder / "out.dot").symlink_to(b.dir / "outside.dot")
    b.expect("dot -o a link out of its folder", "refused, target intact", ["dot", "m.skm", "-o", folder / "out.dot"],
             {2}, "out of its folder")
    b.put("in-sur-chat.jsonl", '{"messages": [{"role": "user", "content": "a \\ud800"}, '
          '{"role": "assistant", "content": '
          '"{\\"answer\\": \\"x\\\\ud800\\"}"}], "outcome": "success", "inputs": {"q": "\\ud800"}}\n')
    b.expect("refine a transcript with a lone surrogate", "no SKM900", ["refine", folder / "m.skm", "in-sur-chat.jsonl",
                                                                      "--dry-run"], {0, 4})
    b.expect("test --traces /dev/full", "SKM901, exit 2", ["test", "m.skm", "--traces", "/dev/full", "--examples", "2"],
             {2}, "SKM901")
    rules = [{"Variable": "$.x", "NumericEquals": i, "Next": "Done"} for i in range(2000)]
    b.put("c.asl.json", json.dumps({"StartAt": "C", "States": {"C": {"Type": "Choice", "Choices": rules,
                                                                     "Default": "Done"}, "Done": {"Type": "Succeed"}}}))
    b.expect("import asl: a 2,000-rule Choice", "SKM544 within 20 s", ["import", "asl", "c.asl.json"], {1}, "SKM544",
             timeout=20)
    b.put("s.asl.json", '{"StartAt": "A", "Comment": "\\ud800", "States": {"A": {"Type": "Pass", "End": true}}}')
    b.expect("import asl: a lone surrogate in JSON", "invalid JSON (not YAML)", ["import", "asl", "s.asl.json"], {1},
             "invalid JSON")
    b.expect("refine a symlink loop", "named a loop", ["refine", "m.skm", "loop1"], {2}, "symlink loop")
    b.put("loop150k.skm", 'machine loop {\n  var answer: str\n  counter i max 150000\n  start think\n  model think {\n'
          '    reads i\n    writes answer\n    prompt "Again?"\n    when i < 150000 -> think { i += 1 }\n    -> done\n'
          '  }\n  terminal done: success { requires answer }\n  fallback\n}\n')
    b.expect("test: a loop bound of 150,000", "exit 0 within 60 s (unfinished, not a failure)",
             ["test", "loop150k.skm", "--examples", "3"], {0}, "unfinished", timeout=60)
    os.mkfifo(b.dir / "fifo-profile.json")
    from tests.frontends.distill.conftest import jsonl, trace

    b.put("profiled.jsonl", jsonl(*[attrs.evolve(trace(["walk north", "eat apple"], ident=f"p{i}"),
                                                 profile=name) for i, name in
                                    enumerate(("fifo-profile.json", "../outside.json", "deep-profile.json"))]))
    b.put("deep-profile.json", '{"templates": ' + "[" * 100_000 + "]" * 100_000 + "}")
    code, out = b.skillc("distill", "profiled.jsonl", "--report", timeout=30)
    words = all(w in out for w in ("FIFO", "outside", "levels deep"))
    b.row("distill: profiles that are a FIFO, out of the folder, 100,000 deep", "each named, no hang",
          code == 1 and words and "SKM900" not in out, f"exit {code}, {'each named' if words else out.strip()[-70:]}")
    from skillc.improve.edits import Edit, Patch, PatchError
    from skillc.improve.evolve.patch import apply_patch

    try:
        apply_patch(ECHO, None, Patch(machine=(Edit("set_prompt", state="think", text="a\x00b"),)))
        observed = "applied"
    except PatchError as exc:
        observed = "PatchError: " + str(exc)[:50]
    except Exception as exc:  # noqa: BLE001 - what the row is about
        observed = f"{type(exc).__name__}"
    b.row("evolve: a patch holding NUL", "a patch error, not SKM900", observed.startswith("PatchError"), observed)
    bomb = ("---\nname: bomb\na0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
            + "".join(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 9))
            + "---\n# Bomb\n\n1. Run `ls`.\n")
    (b.dir / "bomb").mkdir(exist_ok=True)
    b.put("bomb/SKILL.md", bomb)
    b.expect("build --model: a front-matter alias bomb (9^9 values)", "SKM303 at once, exit 1",
             ["build", "bomb/SKILL.md", "-o", "bomb.skm", "--model", "x", "--base-url", "http://127.0.0.1:9/v1"],
             {1}, "SKM303", timeout=20)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def run_faults(b: Bench) -> None:
    """The runtime: tools, journals, traces, replays, resumes."""
    b.put("tools_hang.py", "import time\ndef slow():\n    try:\n        time.sleep(3600)\n    except Exception:\n"
          "        pass\n    return 'late'\n")
    b.put("tools_exit.py", "import sys\ndef slow():\n    sys.exit(7)\n")
    b.put("one.skm", "machine one {\n  tool slow() -> (out: str)\n  var out: str\n  start go\n  tool go {\n"
          "    call slow()\n    writes out = out\n    -> done\n  }\n"
          "  terminal done: success { requires out }\n  fallback\n}\n")
    empty = b.put("empty.json", "{}")
    started = time.monotonic()
    b.expect("--tools function sleeps 3600 s", "fallback after --tool-timeout", [
        "run", "one.skm", "--executor", f"scripted:{empty}", "--tools", "tools_hang.py", "--tool-timeout", "1",
        "--journal", "j.sqlite"], {5}, "timed out", timeout=30)
    b.rows[-1] = (*b.rows[-1][:2], b.rows[-1][2] + f" ({time.monotonic() - started:.1f} s)", b.rows[-1][3])
    b.expect("tool calls sys.exit(7)", "tool error, fallback (exit 5)", [
        "run", "one.skm", "--executor", f"scripted:{empty}", "--tools", "tools_exit.py", "--journal", "j.sqlite"],
        {5}, "sys.exit(7)")
    from skillc.runtime.tools import BashTool, ToolError

    try:
        BashTool(timeout_s=0.5)(command="sleep 37.4321; echo done")
        timed = False
    except ToolError:
        timed = True
    time.sleep(0.2)
    alive = _alive("37.4321")
    b.row("bash `sleep 37; echo done` times out", "timeout, no process left", timed and not alive,
          f"{'timeout' if timed else 'no timeout'}, {'sleep ALIVE' if alive else 'none left'}")
    t0 = time.monotonic()
    res = BashTool(timeout_s=10)(command="(sleep 38.4321 &); echo started")
    took = time.monotonic() - t0
    time.sleep(0.2)
    alive = _alive("38.4321")
    b.row("bash `(sleep 38 &); echo started`", "ok at once, no process left", res["stdout"] == "started\n" and took < 5
          and not alive, f"{took:.1f} s, stdout {res['stdout']!r}, {'sleep ALIVE' if alive else 'none left'}")
    b.expect("--workdir /nonexistent", "names the folder", b.run_args()[:-2] + ["--workdir", "/nonexistent"], {2},
             "no such folder")
    b.put("sur.json", '{"outputs": {"think": [{"answer": "bad \\ud800 text"}]}}')
    code, out = b.skillc("run", "m.skm", b"--input", b"q=\xff", "--executor", f"scripted:{b.dir / 'sur.json'}",
                         "--journal", "j.sqlite", "--trace", "sur.jsonl", "--workdir", b.dir)
    rcode, _ = b.skillc("replay", "m.skm", "sur.jsonl")
    b.row("lone surrogates in answer and input", "run ok, trace replays",
          code == 0 and rcode == 0 and "Traceback" not in out,
          f"run exit {code}, replay exit {rcode}")
    b.put("bad.sqlite", b"\x00not a database" * 64)
    b.expect("resume from a corrupted journal", "SKM500",
             ["run", "--resume", "0123456789ab", "--journal", "bad.sqlite"], {2}, "SKM500")
    db = sqlite3.connect(b.dir / "foreign.sqlite")
    db.execute("CREATE TABLE runs (id INTEGER)")
    db.commit()
    db.close()
    b.expect("resume from a foreign SQLite file", "SKM500", ["run", "--resume", "0123456789ab", "--journal",
                                                            "foreign.sqlite"], {2}, "SKM500")
    code, _ = b.skillc(*b.run_args("--trace", "good.jsonl"))
    b.put("other.skm",
          ECHO.replace("machine echo", "machine other").replace("input q: str", "input q: str\n  input z: int"))
    b.expect("replay a trace of another machine", "refused (exit 1)", ["replay", "other.skm", "good.jsonl"], {1},
             "another machine")
    lines = (b.dir / "good.jsonl").read_text().splitlines()
    b.put("nofooter.jsonl", "\n".join(lines[:-1]) + "\n")
    b.expect("replay a trace without footer", "refused (exit 1)", ["replay", "m.skm", "nofooter.jsonl"], {1},
             "no footer")
    journal = sqlite3.connect(b.dir / "j.sqlite")
    mode = oct((b.dir / "j.sqlite").stat().st_mode & 0o777)
    journal.close()
    b.row("journal file mode", "0o600", mode == "0o600", mode)
    leaked = b.secrets_leaked()
    b.row("secrets in written files (long + 4-char)", "none", not leaked, ", ".join(leaked) or "none")


def _alive(marker: str) -> bool:
    out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    return any(line.startswith("sleep " + marker) for line in out.splitlines())


GOOD = json.dumps({"answer": "fine"})
NETWORK = [  # (fault, behaviours of the fake server, exit codes that are correct)
    ("HTTP 500 then a good reply", [{"status": 500}], {0}),
    ("HTTP 429 + Retry-After: 1", [{"status": 429, "headers": {"Retry-After": "1"}}], {0}),
    ("HTTP 503 three times", [{"status": 503}] * 3, {5}),
    ("HTTP 400", [{"status": 400}] * 3, {5}),
    ("HTTP 401", [{"status": 401}] * 3, {5}),
    ("reply later than --model-timeout", [{"delay": 3, "content": "{}"}] * 3, {5}),
    ("connection closed without reply", [{"close": True}], {0}),
    ("body is not JSON", [{"body": "<html>oops</html>"}], {0}),
    ("empty body", [{"body": ""}], {0}),
    ("JSON body without choices", [{"body": "{}"}], {0}),
    ("empty choices", [{"body": '{"choices": []}'}], {0}),
    ("message is null", [{"body": '{"choices": [{"message": null}]}'}], {0}),
    ("content is a number", [{"message": {"role": "assistant", "content": 42}, "content": ""}], {0}),
    ("content is a list", [{"message": {"role": "assistant", "content": [1]}, "content": ""}], {0}),
    ("content is null", [{"message": {"role": "assistant", "content": None}, "content": ""}], {0}),
    ("usage fields are strings", [{"content": GOOD, "usage": {"prompt_tokens": "17", "completion_tokens": "5"}}], {0}),
    ("usage is negative / bool", [{"content": GOOD, "usage": {"prompt_tokens": -3, "completion_tokens": True}}], {0}),
    ("content is not JSON", [{"content": "I think the answer is 4"}], {0}),
    ("content has a lone surrogate", [{"content": '{"answer": "x\\ud800"}'}], {0}),
    ("content nested 100,000 deep", [{"content": "[" * 100_000 + "]" * 100_000}], {0}),
    ("content is 100 kB", [{"content": json.dumps({"answer": "y" * 100_000})}], {0}),
    ("content breaks the schema", [{"content": '{"answer": 5}'}], {0}),
    ("every reply broken", [{"body": "nope"}] * 3, {5}),
]


def network_faults(b: Bench) -> None:
    """An openai: executor against a fake server that misbehaves, then answers well (unless told)."""
    good = {"content": GOOD}
    for fault, behaviours, codes in NETWORK:
        with FakeOpenAI([*behaviours, good, good]) as server:
            started = time.monotonic()
            code, out = b.skillc("run", "m.skm", "--input", "q=x", "--executor", "openai:fake",
                                 "--base-url", server.url, "--journal", "net.sqlite", "--model-timeout", "1",
                                 "--workdir", b.dir, timeout=60)
            took = time.monotonic() - started
        status = sqlite3.connect(b.dir / "net.sqlite").execute(
            "SELECT status FROM runs ORDER BY created DESC LIMIT 1").fetchone()
        tb = "Traceback" in out or "SKM900" in out
        ok = code in codes and not tb and status == ("done",)
        b.row(f"net: {fault}", "exit " + "/".join(map(str, sorted(codes))) + ", run done",
              ok, f"exit {code}, {took:.1f} s, run {status[0] if status else 'none'}" + (", traceback" if tb else ""))
    code, out = b.skillc("run", "m.skm", "--input", "q=x", "--executor", "openai:fake", "--base-url",
                         "http://127.0.0.1:9/v1", "--journal", "net.sqlite", "--retries", "1")
    b.row("net: connection refused", "fallback (exit 5)", code == 5 and "Traceback" not in out, f"exit {code}")


def kill_series(b: Bench, kills: int, rng: random.Random) -> None:
    """SIGKILL runs at random points and resume them; check at-most-once, trace completeness and replay."""
    folder = b.dir / "kills"
    folder.mkdir()
    machine = folder / "series.skm"
    machine.write_text(LOOP)
    script = folder / "none.json"
    script.write_text("{}")
    done_kills = series = twice = bad_traces = unfinished = 0
    while done_kills < kills:
        series += 1
        log = folder / f"calls{series}.log"
        tools = folder / f"tools{series}.py"
        tools.write_text(WORK.format(log=str(log)))
        journal = folder / f"j{series}.sqlite"
        trace = folder / f"t{series}.jsonl"
        base = [sys.executable, "-m", "skillc", "run", "--journal", str(journal), "--tools", str(tools)]
        argv = [*base, str(machine), "--executor", f"scripted:{script}", "--trace", str(trace)]
        run_id, in_flight, finished = None, Counter(), False
        for attempt in range(40):
            proc = subprocess.Popen(argv, cwd=folder, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if run_id is None:  # the first start is killed only once its run is in the journal
                while proc.poll() is None and not _run_id(journal):
                    time.sleep(0.02)
            kill_now = done_kills < kills and attempt < 6
            if kill_now:
                time.sleep(rng.uniform(0.05, 1.5))
            if kill_now and proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                proc.wait()
                done_kills += 1
                run_id = run_id or _run_id(journal)
                in_flight[_committed(journal, run_id)] += 1  # the next step may have been running
            else:
                proc.wait(timeout=120)
                run_id = run_id or _run_id(journal)
                if proc.returncode == 0 or _status(journal, run_id) == "done":
                    finished = True
                    break
            if run_id is None:
                break
            argv = [*base, "--resume", run_id]
        calls = Counter(int(x) for x in log.read_text().split()) if log.exists() else Counter()
        twice += sum(1 for n, c in calls.items() if c > 1 + in_flight[n])
        unfinished += not finished
        if finished:
            r = subprocess.run([sys.executable, "-m", "skillc", "replay", str(machine), str(trace)], cwd=folder,
                               capture_output=True, text=True)
            text = trace.read_text()
            steps = [json.loads(x)["step"] for x in text.splitlines() if '"type": "step"' in x]
            bad_traces += r.returncode != 0 or steps != list(range(25)) or text.count('"type": "footer"') != 1
    b.row(f"SIGKILL series ({done_kills} kills, {series} runs)", "0 committed steps twice",
          twice == 0, f"{twice} committed tool steps ran twice")
    b.row("SIGKILL series: every run resumes to its end", "all finish", unfinished == 0, f"{unfinished} unfinished")
    b.row("SIGKILL series: traces", "each step once, 1 footer, replays", bad_traces == 0,
          f"{bad_traces} bad traces of {series}")


def _run_id(journal: Path) -> str | None:
    try:
        row = sqlite3.connect(journal).execute("SELECT run_id FROM runs").fetchone()
    except sqlite3.Error:
        return None
    return row[0] if row else None


def _committed(journal: Path, run_id: str | None) -> int:
    row = sqlite3.connect(journal).execute("SELECT COUNT(*) FROM steps WHERE run_id = ?", (run_id,)).fetchone()
    return row[0]


def _status(journal: Path, run_id: str | None) -> str | None:
    row = sqlite3.connect(journal).execute("SELECT status FROM runs WHERE run_id = ?", (run_id,)).fetchone()
    return row[0] if row else None


def concurrent_resume(b: Bench) -> None:
    """Two `--resume` of one killed run at the same moment: one runs it, the other is refused."""
    folder = b.dir / "twice"
    folder.mkdir()
    (folder / "series.skm").write_text(LOOP)
    (folder / "none.json").write_text("{}")
    log = folder / "calls.log"
    (folder / "tools.py").write_text(WORK.format(log=str(log)))
    base = [sys.executable, "-m", "skillc", "run", "--journal", "j.sqlite", "--tools", "tools.py"]
    proc = subprocess.Popen([*base, "series.skm", "--executor", "scripted:none.json", "--trace", "t.jsonl"],
                            cwd=folder, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while not (log.exists() and len(log.read_text().split()) >= 3):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    run_id = _run_id(folder / "j.sqlite")
    procs = [subprocess.Popen([*base, "--resume", run_id], cwd=folder, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    codes = sorted(p.returncode for p in procs)
    refused = any("SKM502" in err for _, err in outs)
    calls = Counter(int(x) for x in log.read_text().split())
    repeated = sum(c - 1 for c in calls.values() if c > 1)
    footers = (folder / "t.jsonl").read_text().count('"type": "footer"')
    b.row("two --resume of one run at once", "one refused (SKM502), no step twice, 1 footer",
          codes == [0, 2] and refused and repeated <= 1 and footers == 1,
          f"exits {codes}, {'SKM502' if refused else 'no refusal'}, {repeated} repeated, {footers} footer(s)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=100, help="SIGKILLs in the kill/resume series (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    b = Bench()
    started = time.monotonic()
    file_faults(b)
    issue34_faults(b)
    run_faults(b)
    network_faults(b)
    concurrent_resume(b)
    kill_series(b, args.kills, random.Random(args.seed))
    leaked = b.secrets_leaked()
    b.row("secrets in any file written (whole bench)", "none", not leaked, ", ".join(leaked[:4]) or "none")
    widths = [max(len(r[i]) for r in b.rows) for i in range(3)]
    print(f"{'fault':<{widths[0]}} | {'expected':<{widths[1]}} | {'observed':<{widths[2]}} | pass")
    print("-" * (sum(widths) + 15))
    for fault, expected, observed, ok in b.rows:
        print(f"{fault:<{widths[0]}} | {expected:<{widths[1]}} | {observed:<{widths[2]}} | {'yes' if ok else 'NO'}")
    failed = sum(not r[3] for r in b.rows)
    print(f"\n{len(b.rows)} faults, {len(b.rows) - failed} pass, {failed} fail ({time.monotonic() - started:.0f} s"
          + (f"; scratch folder kept: {b.dir})" if failed else ")"))
    if not failed:
        shutil.rmtree(b.dir, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
