"""Regenerate the committed TextWorld traces: `python examples/traces/textworld-cooking/regenerate.py`.

The games are generated from fixed settings and seeds (deterministic), so the
traces name their settings rather than a game file; tests regenerate the
held-out games they play. Training and held-out games never share a seed.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import attrs

from skillc.frontends.distill import textworld as tw
from skillc.frontends.distill.trace import dumps

HERE = Path(__file__).parent
SPLITS = {"train": (16, 7), "heldout": (6, 8)}  # split -> (games, seed of their settings)


def main() -> int:
    with tempfile.TemporaryDirectory() as games:
        for split, (count, seed) in SPLITS.items():
            traces = tw.collect(tw.specs(count, seed), games, workers=2)
            traces = [attrs.evolve(t, game={k: v for k, v in t.game.items() if k != "file"}) for t in traces]
            (HERE / f"{split}.jsonl").write_text(dumps(traces))
            print(f"{split}: {len(traces)} traces of {count} games", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
