"""Run-to-effect of BUILT machines on the corpus folders that have a deliverable: the share that produce it.

The rows come from `tools/record_runs.py` (kept under `corpus/runs/<kind>/<id>/`: the machine as built, the run's
model exchange, its trace and `row.json`): the machine the LLM compiler built for the folder (`llm`, from the
recorded build exchange), run in a fresh work folder holding the case's fixture (`tests/harness/cases.py`), with
the real tool kit, the case's scripted answers to `ask_user` (or, for a case with a user described in
`tools/record_runs.py`'s `USERS`, that user's answers, played as the model is), and a capable model's replies
recorded as the run went. `delivered`: the deliverable is there (the case's own check: the files exist and are
not blank, or its effect: a suite that passes, a new branch); `right`: the case's verifier accepts it. Nothing
here is re-judged: the verdicts were taken on the work folder right after the run.

    python bench/run_to_effect.py [--kind llm]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

RUNS = Path(__file__).resolve().parent.parent / "corpus" / "runs"


def rows(kind: str) -> list[dict]:
    """The recorded rows of one kind of build, by folder id."""
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((RUNS / kind).glob("*/row.json"))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", default="llm", help="which builds: a folder of corpus/runs (default llm)")
    args = parser.parse_args(argv)
    found = rows(args.kind)
    if not found:
        print(f"no runs recorded under {RUNS / args.kind}", file=sys.stderr)
        return 2
    header = ("folder", "outcome", "delivered", "right", "model requests", "seconds", "why not")
    table = [(r["id"], r["outcome"], "yes" if r["delivered"] else "no", "yes" if r["verified"] else "no",
              str(r["model_requests"]), f"{r['seconds']:.0f}", (r["why"] or "")[:70]) for r in found]
    widths = [max(len(x[i]) for x in [header, *table]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in table:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    delivered = sum(r["delivered"] for r in found)
    right = sum(r["verified"] for r in found)
    success = sum(r["outcome"] == "success" for r in found)
    print(f"\n{args.kind}: {delivered}/{len(found)} delivered, {right}/{len(found)} right, "
          f"{success}/{len(found)} ended in success")
    return 0


if __name__ == "__main__":
    sys.exit(main())
