"""Recorded builds replayed many times in ONE process: does any replay go stale as the process ages?

Run: python bench/replay_soak.py [--passes 5] [--seed 1] [--only ID …]
Each pass builds every skill of the corpus with a recording (`corpus/llm/`), in a shuffled order, with the
recorded-model executor; a build that asks what its recording did not (SKM346, printed with the first
difference) or stops before using every recorded reply is stale. `skillc build` runs once per process, but the
API, the language server and the benches build many skills in one: a finding that depends on the process's
history (Z3's effort on one formula varies with it, docs/checks.md) shows up here as a stale replay after a few
passes. The table: pass, seconds, builds, stale.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillc.frontends.markdown import build  # noqa: E402
from skillc.runtime.executors.recorded import RecordedExecutor  # noqa: E402

CORPUS = ROOT / "corpus"


def stale(sid: str) -> str | None:
    """Why one recorded build did not replay as recorded (a request with no recording, SKM346, or replies left
    unused: the build stopped before its recording did), or None when it replays."""
    executor = RecordedExecutor(CORPUS / "llm" / f"{sid}.exchange.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        result = build(CORPUS / "skills" / sid, output=Path(tmp) / "built.skm", executor=executor)
    missing = next((d.message for d in result.diagnostics if str(d.code) == "SKM346"), None)
    if missing is not None:
        return missing
    unused = executor.used.count(False)
    return f"{unused} of {len(executor.used)} recorded replies never asked for" if unused else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="these skill ids (default: every recorded one)")
    args = parser.parse_args(argv)
    split = tomllib.loads((CORPUS / "split.toml").read_text(encoding="utf-8"))
    ids = args.only or [i for i in split["dev"] + split["test"] if (CORPUS / "llm" / f"{i}.exchange.jsonl").is_file()]
    missing = [i for i in ids if not (CORPUS / "llm" / f"{i}.exchange.jsonl").is_file()]
    if missing:
        print(f"no recording for {', '.join(missing)} (corpus/llm/ID.exchange.jsonl)", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    print(f"{'pass':>4} {'seconds':>8} {'builds':>7} {'stale':>6}")
    total = 0
    for number in range(args.passes):
        rng.shuffle(ids)
        start, found = time.perf_counter(), 0
        for sid in ids:
            why = stale(sid)
            if why is not None:
                found += 1
                print(f"     stale: {sid}: {why}", flush=True)
        total += found
        print(f"{number:>4} {time.perf_counter() - start:>8.0f} {len(ids):>7} {found:>6}", flush=True)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
