"""Bench five real skills of the corpus across two builds each and native (bench/suites/real), and print a table.

For each suite in bench/suites/real/: `skillc bench SUITE --build offline --build llm=model:recorded:<the
recorded LLM build of the skill in corpus/llm/> --modes machine,native --executor
'scripted:SUITE_DIR/scripts/{machine}.{task}.json'` into a fresh folder, then one table: per suite and column
(machine:offline, machine:llm, native), task success and RFC as k/n, and the wall time per cell (the whole
bench, builds and report included, divided by its cells) and the mean run latency. Scripted answers stand in for
the model (bench/suites/real/README.md says what that measures). Resumable: pass `-o DIR` to keep the benches.

    python bench/real_skills.py [-o DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITES = ROOT / "bench" / "suites" / "real"
#: suite folder → the corpus skill it benches (its recorded LLM build is corpus/llm/ID.exchange.jsonl).
SKILLS = {"git-cleanup": "trailofbits__git-cleanup", "git-pushing": "mhattingpete__git-pushing",
          "create-plan": "openai__create-plan", "feature-planning": "mhattingpete__feature-planning",
          "prompt-patterns": "wshobson__prompt-engineering-patterns"}
COLUMNS = ("machine:offline", "machine:llm", "native")


def command(name: str, out: Path) -> list[str]:
    """The `skillc bench` command of one suite."""
    folder = SUITES / name
    recorded = ROOT / "corpus" / "llm" / f"{SKILLS[name]}.exchange.jsonl"
    return [str(Path(sys.executable).parent / "skillc"), "bench", str(folder / "suite.toml"), "--build", "offline",
            "--build", f"llm=model:recorded:{recorded}", "--modes", "machine,native", "--executor",
            f"scripted:{folder}/scripts/{{machine}}.{{task}}.json", "-o", str(out / name), "--json"]


def run(name: str, out: Path) -> tuple[list[dict[str, object]], float]:
    """One suite's bench: its rows and the wall time it took."""
    started = time.perf_counter()
    done = subprocess.run(command(name, out), capture_output=True, text=True, check=False)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name}: skillc bench exited {done.returncode}\n{done.stderr}")
    rows = [json.loads(line) for line in (out / name / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return rows, took


def fraction(values: list[object]) -> str:
    """k/n of the True values among the known ones."""
    known = [v for v in values if v is not None]
    return f"{sum(v is True for v in known)}/{len(known)}"


def main() -> None:
    """Run every suite and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", type=Path, default=None, help="keep the benches here")
    args = parser.parse_args()
    out = args.output or Path(tempfile.mkdtemp(prefix="skillc-real-"))
    print("| suite | column | success | RFC | s/cell (wall) | mean run latency (s) |")
    print("| --- | --- | --- | --- | --- | --- |")
    totals: dict[str, list[dict[str, object]]] = {c: [] for c in COLUMNS}
    for name in SKILLS:
        rows, took = run(name, out)
        per_cell = took / len(rows)
        for column in COLUMNS:
            mine = [r for r in rows if r["mode"] == column]
            totals[column] += mine
            latency = sum(float(str(r["latency_s"])) for r in mine) / len(mine)
            print(f"| {name} | {column} | {fraction([r['success'] for r in mine])} | "
                  f"{fraction([r['rfc'] for r in mine])} | {per_cell:.2f} | {latency:.3f} |")
    for column, mine in totals.items():
        print(f"| all five | {column} | {fraction([r['success'] for r in mine])} | "
              f"{fraction([r['rfc'] for r in mine])} | | |")
    if args.output is None:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
