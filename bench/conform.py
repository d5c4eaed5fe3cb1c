"""`skillc conform` on the labelled fixtures: precision, recall and transcripts per second.

The fixtures (`tests/conform/fixtures/`, written by its `generate.py`) are transcripts in the three formats
(skillc run traces in native and machine mode, chat transcripts, Claude Code logs) of three machines, each with a
label file listing the violations it really has. Every transcript is conformed (trace import, spellings,
alignment, rules), its reported violations matched against its labels (`skillc.conform.labels.score`), and the
table prints per machine and format: transcripts, labelled violations, true and false positives, false
negatives, precision and recall. Then the speed: every fixture file conformed `--repeat` times (import included,
the machine loaded once), as transcripts per second. `--misses` lists every false positive and negative.

Run: python bench/conform.py [--repeat 20] [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import skillc
from skillc.conform.conform import conform_files
from skillc.conform.labels import Score, labels_path, read_labels, score
from skillc.ir.machine import Machine

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "conform" / "fixtures"


def fixture_sets(root: Path = FIXTURES) -> list[tuple[str, Machine, list[Path]]]:
    """Each fixture folder: its name, its (checked) machine and its transcript files."""
    out = []
    for folder in sorted(p for p in root.iterdir() if (p / "machine.json").is_file()):
        path = folder / json.loads((folder / "machine.json").read_text(encoding="utf-8"))["machine"]
        result = skillc.check(path.resolve())
        if result.machine is None or not result.ok:
            raise SystemExit(f"{path} does not check: {[str(d.code) for d in result.diagnostics]}")
        out.append((folder.name, result.machine, sorted(folder.glob("*.jsonl"))))
    return out


def measure(root: Path = FIXTURES) -> dict[tuple[str, str], Score]:
    """The score of every (machine, format) group of the fixtures."""
    scores: dict[tuple[str, str], Score] = defaultdict(Score)
    for name, machine, files in fixture_sets(root):
        for f in files:
            report = conform_files(machine, [f])
            labels = read_labels(labels_path(f))
            if len(labels) != len(report.transcripts):
                raise SystemExit(f"{f}: {len(report.transcripts)} transcripts, {len(labels)} labelled")
            for t, lab in zip(report.transcripts, labels):
                kind = t.format if t.format != "skillc" else f"skillc {t.mode}"
                scores[(name, kind)] = scores[(name, kind)] + score(t, lab)
    return dict(scores)


def speed(repeat: int, root: Path = FIXTURES) -> tuple[int, float]:
    """Transcripts conformed and the seconds it took, every fixture file `repeat` times."""
    sets = fixture_sets(root)
    done = 0
    start = time.perf_counter()
    for _ in range(repeat):
        for _, machine, files in sets:
            done += len(conform_files(machine, files).transcripts)
    return done, time.perf_counter() - start


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20, help="passes over the fixtures for the speed figure")
    parser.add_argument("--misses", action="store_true", help="list every false positive and negative")
    args = parser.parse_args()
    scores = measure()
    head = ["machine", "format", "transcripts", "labelled", "TP", "FP", "FN", "precision", "recall"]
    print(_row(head))
    print(_row(["---"] * len(head)))
    total = Score()
    for (name, kind), s in sorted(scores.items()):
        total = total + s
        print(_row([name, kind, str(s.transcripts), str(s.true_positives + s.false_negatives), str(s.true_positives),
                     str(s.false_positives), str(s.false_negatives), f"{s.precision:.2f}", f"{s.recall:.2f}"]))
    print(_row(["**all**", "", str(total.transcripts), str(total.true_positives + total.false_negatives),
                str(total.true_positives), str(total.false_positives), str(total.false_negatives),
                f"**{total.precision:.2f}**", f"**{total.recall:.2f}**"]))
    done, seconds = speed(args.repeat)
    print(f"\nspeed: {done} transcripts in {seconds:.2f} s = {done / seconds:,.0f} transcripts/s "
          f"(import, spellings, alignment and rules; {args.repeat} passes)")
    if args.misses:
        print("\n" + "\n".join(total.misses or ("no misses",)))


if __name__ == "__main__":
    main()
