"""Packets for a second look at the faithfulness measure's failures, and the table the reviewers' verdicts make.

`make`: for each skill of a half, a folder OUT/ID holding the skill with line numbers (`SKILL.numbered.md`), the
machine built from it (`machine.skm`: the LLM compiler replaying `corpus/llm/`, or with `--offline` the offline
build; `machine.key`, the hash a review is held to) and its failed requirements (`failures.txt`: an id, the
requirement, its anchor lines and the measure's reason; with `--sample N`, N of them drawn with `--seed`). A
reviewer (a helper given only the packet and `corpus/review/PROMPT.md`) writes `verdicts.tsv` beside them: `F<n>`,
one of M/R/Q/X, a sentence.

`collect`: the packets' verdicts as one table (skill, the machine's `machine_key`, failure, requirement, the
measure's reason, verdict, the reviewer's sentence) on standard output, and the count of each verdict on standard
error. `bench/faithfulness.py --reviewed` reads it back.

    python tools/review_packets.py make OUT [--split test] [--offline] [--sample N] [--seed 2029]
    python tools/review_packets.py collect OUT > corpus/review/test-failures.tsv
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.faithfulness import split_ids  # noqa: E402 - after the path
from skillc.frontends.markdown import build  # noqa: E402
from skillc.frontends.markdown.faithfulness import load, machine_key, score  # noqa: E402
from skillc.runtime.executors.recorded import RecordedExecutor  # noqa: E402

CORPUS = ROOT / "corpus"


def make(out: Path, split: str, offline: bool, sample: int | None, seed: int) -> int:
    """Write one packet a skill; the number of failures in them."""
    rng = random.Random(seed)
    total = 0
    for sid in split_ids(CORPUS, split):
        folder, packet = CORPUS / "skills" / sid, out / sid
        packet.mkdir(parents=True, exist_ok=True)
        executor = None if offline else RecordedExecutor(CORPUS / "llm" / f"{sid}.exchange.jsonl")
        result = build(folder, output=packet / "machine.skm", executor=executor)
        if result.machine is None or result.text is None:
            print(f"{sid}: the build failed; no packet", file=sys.stderr)
            continue
        (packet / "machine.skm").write_text(result.text, encoding="utf-8")
        (packet / "machine.key").write_text(machine_key(result.text) + "\n", encoding="utf-8")
        requirements = load(CORPUS / "requirements" / f"{sid}.req", folder / "SKILL.md")
        failed = [v for v in score(result.machine, requirements).verdicts if not v.ok]
        if sample is not None:
            failed = rng.sample(failed, min(sample, len(failed)))
        lines = (folder / "SKILL.md").read_text(encoding="utf-8").splitlines()
        (packet / "SKILL.numbered.md").write_text("".join(f"{i:>4} | {line}\n" for i, line in enumerate(lines, 1)),
                                                  encoding="utf-8")
        (packet / "failures.txt").write_text("".join(
            f"F{k}\t{v.requirement.text}\t(anchored at SKILL.md lines {', '.join(map(str, v.requirement.lines))})"
            f"\tmeasure says: {v.why}\n" for k, v in enumerate(failed, 1)), encoding="utf-8")
        total += len(failed)
    return total


def collect(out: Path) -> collections.Counter[str]:
    """Print the packets' verdicts as one table; the count of each verdict."""
    counts: collections.Counter[str] = collections.Counter()
    print("skill\tmachine\tfailure\trequirement\tmeasure\tverdict\treviewer")
    for packet in sorted(p for p in out.iterdir() if (p / "failures.txt").is_file()):
        key = (packet / "machine.key").read_text(encoding="utf-8").strip()
        verdicts = {}
        if (packet / "verdicts.tsv").is_file():
            for line in (packet / "verdicts.tsv").read_text(encoding="utf-8").splitlines():
                fid, verdict, why = (line.split("\t", 2) + ["", ""])[:3]
                verdicts[fid] = (verdict.strip(), why.strip())
        for line in (packet / "failures.txt").read_text(encoding="utf-8").splitlines():
            fid, requirement, _, measure = line.split("\t")
            verdict, why = verdicts.get(fid, ("-", "no verdict"))
            counts[verdict] += 1
            print("\t".join((packet.name, key, fid, requirement, measure.removeprefix("measure says: "), verdict, why)))
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make", help="write the packets")
    m.add_argument("out", type=Path)
    m.add_argument("--split", default="test", choices=("dev", "test"))
    m.add_argument("--offline", action="store_true", help="the offline build's machines and failures")
    m.add_argument("--sample", type=int, default=None, help="at most N failures a skill, drawn with --seed")
    m.add_argument("--seed", type=int, default=2029)
    c = sub.add_parser("collect", help="print the verdicts as one table")
    c.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.command == "make":
        print(f"{make(args.out, args.split, args.offline, args.sample, args.seed)} failures", file=sys.stderr)
    else:
        print(" ".join(f"{k} {n}" for k, n in sorted(collect(args.out).items())), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
