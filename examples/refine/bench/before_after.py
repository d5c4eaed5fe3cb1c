"""Bench the livemath machine before and after `skillc refine`: success and RFC on the same tasks and answers.

    .venv/bin/python examples/refine/bench/before_after.py OUT_DIR [--tasks N]

1. The five native demonstration runs (../native/) are recorded with `skillc run --mode native`, and
   `skillc refine` grows ../livemath-partial.skm from them (as ../demo.sh does).
2. Both machines run the first N livemath bench tasks (../../livemath/bench/tasks.jsonl) in machine mode
   through `skillc bench`, with one scripted executor per task that answers every model and judge state the
   same way in both runs (the right letter: the executor is an oracle, so task success measures the machine,
   not a model). The requirements are the livemath suite's own (`[[require]]` of its suite.toml).
3. A table: machine, tasks, success, RFC, and the requirements violated.

`--executor SPEC` runs a model instead of the oracle (`local`: the embedded Gemma 3 270M), the same model
for both machines.

What it shows: the refined machine performs the read-back the skill requires, so RFC goes up; success cannot
go up with an oracle (the write was already right), and the table says so rather than hide it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
SKILLC = [sys.executable, "-m", "skillc"]
RUNS = ("full-B", "newline-B", "write-fails", "full-D", "no-readback")


def oracle(task: dict) -> dict:
    """Machine-mode answers for every model and judge state of livemath: the right letter, a complete review."""
    letter = task["verify"]["equals"]
    fits = {f"fit_{x}": "fits" if x == letter else "contradicts" for x in "ABCDE"}
    return {"outputs": {
        "analyze": [{"restatement": task["inputs"]["question"], "work": "computed", "result": letter}],
        "review_options": [fits],
        "pick": [{"choice": letter, "doubt": "", "sanity_check": "substituted back: agrees"}],
        "judge_complete": [{"completeness": "complete"}]}}


def refine(out: Path) -> Path:
    """Record the native runs and refine the partial machine from them; the refined machine's path."""
    (out / "livemath").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "livemath" / "SKILL.md", out / "livemath" / "SKILL.md")
    (out / "refine").mkdir()
    for name in ("before.skm", "after.skm"):
        shutil.copy(HERE.parent / "livemath-partial.skm", out / "refine" / name)
    traces = []
    for i, name in enumerate(RUNS):
        (out / "runs" / name).mkdir(parents=True)
        trace = out / "runs" / f"{name}.jsonl"
        subprocess.run([*SKILLC, "run", str(out / "refine" / "before.skm"), "--mode", "native",
                        "--executor", f"scripted:{HERE.parent / 'native' / (name + '.json')}",
                        "--input", f"question=Question {i}: which option?",
                        "--input", 'options=["1", "2", "3", "4", "5"]', "--workdir", str(out / "runs" / name),
                        "--trace", str(trace), "--journal", str(out / "runs.sqlite")], check=False,
                       capture_output=True)
        traces.append(str(trace))
    done = subprocess.run([*SKILLC, "refine", str(out / "refine" / "after.skm"), *traces, "--json"],
                          capture_output=True, text=True, check=False)
    statuses = [json.loads(x)["status"] for x in done.stdout.splitlines()[:-1]]
    print(f"refine: {', '.join(f'{n} {s}' for n, s in zip(RUNS, statuses))} (exit {done.returncode})")
    return out / "refine" / "after.skm"


def suite(out: Path, machine: Path, name: str, count: int) -> Path:
    """A copy of the livemath suite on the first `count` tasks, for `machine`, with one oracle script per task."""
    folder = out / f"suite-{name}"
    (folder / "scripts").mkdir(parents=True)
    lines = (ROOT / "examples" / "livemath" / "bench" / "tasks.jsonl").read_text(encoding="utf-8").splitlines()
    tasks = [json.loads(x) for x in lines if x.strip()][:count]
    (folder / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    for t in tasks:
        (folder / "scripts" / f"{t['id']}.json").write_text(json.dumps(oracle(t)), encoding="utf-8")
    text = (ROOT / "examples" / "livemath" / "bench" / "suite.toml").read_text(encoding="utf-8")
    text = text.replace('skill = "../SKILL.md"', f'skill = "{out / "livemath" / "SKILL.md"}"')
    text = text.replace('machine = "../livemath.skm"', f'machine = "{machine}"')
    text = text.replace('name = "livemath"', f'name = "livemath-{name}"')
    (folder / "suite.toml").write_text(text, encoding="utf-8")
    return folder


def bench(folder: Path, executor: str | None) -> list[dict]:
    """Run the suite in machine mode with the per-task oracle (or `executor`); the result rows."""
    spec = executor or f"scripted:{folder / 'scripts'}/{{task}}.json"
    subprocess.run([*SKILLC, "bench", str(folder / "suite.toml"), "--modes", "machine", "--executor", spec,
                    "-o", str(folder / "out"), "--quiet"], check=True, capture_output=True)
    rows = (folder / "out" / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(r) for r in rows if r.strip()]


def main() -> int:
    """Refine, bench before and after, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--executor", default=None, metavar="SPEC",
                        help="a model instead of the oracle (e.g. local): success then measures the model too")
    args = parser.parse_args()
    if args.out.exists():
        parser.error(f"{args.out} exists")
    after = refine(args.out)
    print(f"{'machine':<28} {'tasks':>5} {'success':>8} {'RFC':>6}  violated")
    for name, machine in (("before (livemath-partial)", args.out / "refine" / "before.skm"),
                          ("after (refined)", after)):
        rows = bench(suite(args.out, machine, name.split()[0], args.tasks), args.executor)
        success = sum(r["success"] is True for r in rows) / len(rows)
        rfc = sum(r["rfc"] is True for r in rows) / len(rows)
        violated = sorted({v for r in rows for v in r["violated"]})
        print(f"{name:<28} {len(rows):>5} {success:>8.0%} {rfc:>6.0%}  {', '.join(violated) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
