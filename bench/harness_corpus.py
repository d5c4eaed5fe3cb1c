"""Real public skill folders run end to end as machines: one row per folder (the agent-harness issue).

Each folder of `tests/harness/cases.py` (corpus/skills, dev half, plus examples/release-notes) is run with
`skillc.api.run`, its scripted model answers and the real tool kit in a fresh temporary work folder. Per folder:

- tool calls: the trace's steps that called a tool;
- written (effects): the files the trace's `write`/`edit` effects name;
- changed: the work folder's files created or changed, whatever wrote them (a `bash` command or a bundled script
  writes files too, and a `bash` effect records its exit status and duration, not the files);
- outcome, and the verifier's verdict on the deliverable (`pass`, or its reason);
- seconds: the run (`api.run`), the fixture and the verifier left out.

    python bench/harness_corpus.py [--repeat N] [--only ID ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.harness.cases import CASES, EXAMPLE, run_case


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per folder (the seconds are their median)")
    parser.add_argument("--only", nargs="*", default=None, help="folder ids to run")
    args = parser.parse_args(argv)
    cases = [c for c in [*CASES, EXAMPLE] if args.only is None or c.id in args.only]
    header = ("folder", "tool calls", "written (effects)", "changed", "outcome", "verifier", "seconds")
    rows, failures = [], 0
    for case in cases:
        outs = []
        for _ in range(max(1, args.repeat)):
            with tempfile.TemporaryDirectory(prefix="skillc-harness-") as scratch:
                outs.append(run_case(case, Path(scratch)))
        out = outs[-1]
        ok = out.outcome == "success" and out.verdict is None
        failures += not ok
        rows.append((case.id, str(out.tool_calls), str(len(out.files_written)), str(len(out.changed)), out.outcome,
                     "pass" if out.verdict is None else f"FAIL: {out.verdict}",
                     f"{statistics.median(o.seconds for o in outs):.2f}"))
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(v.ljust(w) for v, w in zip(row, widths)) + " |")
    total = sum(float(r[-1]) for r in rows)
    print(f"\n{len(rows) - failures}/{len(rows)} folders: success with a deliverable that passes its verifier; "
          f"{sum(int(r[1]) for r in rows)} tool calls, {total:.2f} s of runs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
