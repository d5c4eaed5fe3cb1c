"""Distil skills from TextWorld cooking games and measure them on held-out games, for real.

Run: python bench/distill_textworld.py [--train 1000] [--heldout 100] [--games DIR] [--workers 2]
         [--train-recipes 1-4] [--train-maps 1,6,9,12] [--heldout-recipes 1-4] [--heldout-maps 1,6,9,12]
         [--distil-traces 1000]

Generates (or reuses, from --games) `--train` training games and `--heldout`
held-out games with different seeds, records each walkthrough as a trace,
distils a library from the training traces, then plays every held-out game
in TextWorld with the skills substituted wherever they apply (preconditions
checked at that point of the game) and checks the game is still won. Held-out
games can be drawn with larger recipes and maps than training (`--heldout-recipes
3-5 --heldout-maps 9,12`). A lost game counts as an execution error (blamed on a
skill call, or unattributed). `--distil-traces N` also times distillation of N
traces: the training traces, repeated under new ids when fewer were collected.
Generating 1,000 games takes about 25 minutes on 2 cores the first time.
Goals: library <= 10 skills, 0 execution errors, every game won, >= 40% fewer
turns, 1,000 traces distilled in <= 30 s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.frontends.distill import distill
from skillc.frontends.distill import textworld as tw
from skillc.frontends.distill.library import build_library, load_skills, skill_sources
from skillc.frontends.distill.trace import dumps
from skillc.frontends.distill.verify import verify


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return value, time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=int, default=1000)
    parser.add_argument("--heldout", type=int, default=100)
    parser.add_argument("--games", default=".cache/distill/games")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--min-reuse", type=float, default=0.1)
    parser.add_argument("--train-recipes", type=_span, default=(1, 4))
    parser.add_argument("--train-maps", type=_ints, default=(1, 6, 9, 12))
    parser.add_argument("--heldout-recipes", type=_span, default=(1, 4))
    parser.add_argument("--heldout-maps", type=_ints, default=(1, 6, 9, 12))
    parser.add_argument("--distil-traces", type=int, default=0)
    args = parser.parse_args()

    print(f"training settings: recipes {args.train_recipes}, maps {args.train_maps}; held-out: recipes "
          f"{args.heldout_recipes}, maps {args.heldout_maps}")
    train, t_train = timed(tw.collect, tw.specs(args.train, 1, recipes=args.train_recipes, maps=args.train_maps),
                           args.games, workers=args.workers)
    heldout, t_held = timed(tw.collect, tw.specs(args.heldout, 2, recipes=args.heldout_recipes,
                                                 maps=args.heldout_maps), args.games, workers=args.workers)
    train = [t for t in train if t.success]
    heldout = [t for t in heldout if t.success]
    print(f"collected {len(train)} training traces ({t_train:.0f} s) and {len(heldout)} held-out ({t_held:.0f} s)")

    distilled, t_distill = timed(distill, train, min_reuse=args.min_reuse)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "train.jsonl"
        path.write_text(dumps(train))
        size = path.stat().st_size
        _, t_cli = timed(build_library, [str(path)], min_reuse=args.min_reuse)
    _, t_emit = timed(skill_sources, distilled, distilled.clusters)
    skills = load_skills(distilled, distilled.clusters)
    (kept, evaluation, problems), t_verify = timed(verify, distilled, skills, heldout, games=args.games)

    print()
    print(f"{'skill':<22} {'r_k':>5} {'train ops':>9} {'prims/call avg':>14} {'max':>4} "
          f"{'held-out calls':>14} {'errors':>6} {'prims replaced':>14}")
    for c in distilled.clusters:
        s = evaluation.skills.get(c.name) or evaluation.dropped.get(c.name)
        print(f"{c.name:<22} {c.reuse:>5.2f} {len(c.members):>9} {c.mean_size:>14.2f} {max(c.sizes):>4} "
              f"{s.calls:>14} {s.errors:>6} {s.primitives:>14}")
    calls = [s for s in evaluation.skills.values() if s.calls]
    per_call = sum(s.primitives for s in calls) / max(1, sum(s.calls for s in calls))
    max_call = max(max(c.sizes) for c in kept) if kept else 0
    print()
    rows = [
        ("training traces", f"{len(distilled.programs)}"),
        ("operations / shapes", f"{len(distilled.operations)} / {distilled.candidates}"),
        ("library size (kept after verification)", f"{len(kept)} of {len(distilled.clusters)}"),
        ("primitives per skill call, held-out avg", f"{per_call:.2f}"),
        ("primitives per skill call, max (training)", f"{max_call}"),
        ("skill calls on held-out games", f"{evaluation.calls}"),
        ("skill execution errors (lost games included)", f"{evaluation.errors} ({evaluation.error_rate:.1%})"),
        ("held-out games won with skills", f"{evaluation.won} of {len(evaluation.games)}"),
        ("held-out games lost, not attributed to a call", f"{evaluation.unattributed}"),
        ("turns: primitives only", f"{evaluation.primitive_turns}"),
        ("turns: with skills", f"{evaluation.turns}"),
        ("turns saved", f"{evaluation.reduction:.1%}"),
        ("turns saved per game (median)",
         f"{statistics.median([1 - g.turns / g.primitive_turns for g in evaluation.games if g.won] or [0]):.1%}"),
        (f"distil {len(distilled.programs)} traces (in memory)", f"{t_distill:.2f} s"),
        (f"read {size / 1e6:.0f} MB of JSONL + distil + emit (as `skillc distill`)", f"{t_cli:.2f} s"),
        ("emit .skm + Python for the library", f"{t_emit:.2f} s"),
        ("verify on held-out games (real TextWorld)", f"{t_verify:.1f} s"),
    ]
    width = max(len(k) for k, _ in rows)
    for key, value in rows:
        print(f"{key:<{width}}  {value}")
    if args.distil_traces:
        many = [attrs.evolve(t, id=f"{t.id}#{k}") for k in range(-(-args.distil_traces // len(train)))
                for t in train][:args.distil_traces]
        _, t_many = timed(distill, many, min_reuse=args.min_reuse)
        print(f"distil {len(many)} traces ({len(train)} collected, repeated under new ids)  {t_many:.2f} s")
    for d in problems:
        print(f"{d.code}: {d.message}")
    return 0


def _span(text: str) -> tuple[int, int]:
    low, _, high = text.partition("-")
    return int(low), int(high or low)


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(v) for v in text.split(","))


if __name__ == "__main__":
    sys.exit(main())
