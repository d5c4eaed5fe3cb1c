"""Structural build time (`skillc build`, offline) of the test skills and of a synthetic 2,000-line skill.

Run: python bench/build.py [--lines 2000] [--repeat 3]
The time covers reading, clause extraction, the structural compiler, the
checker runs that keep only rules that hold, and the final check.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillc.frontends.markdown import build

SKILLS = Path(__file__).resolve().parent.parent / "tests" / "frontends" / "markdown" / "skills"


def synthetic_skill(lines: int) -> str:
    """A long skill: sections of numbered steps with conditions, checks, loops, rules and knowledge."""
    out = ["# A very long operations runbook", "", "Use this skill for the quarterly maintenance window.", ""]
    section = 0
    while len(out) < lines:
        section += 1
        out += [f"## Part {section}: subsystem {section}", "",
                f"Subsystem {section} stores its data in volume v{section}, replicated twice.",
                f"Its dashboard shows latency, error rate and saturation for shard {section}.", "",
                "## Procedure", ""]
        for k in range(1, 9):
            out.append(f"{k}. Inspect component {section}-{k} and record its state in the log.")
            if k % 3 == 0:
                out.append(f"   If component {section}-{k} reports errors, restart it and inspect it again.")
                out.append("   Repeat until it reports no errors, but try at most 3 times.")
            if k % 4 == 0:
                out.append(f"   Verify that replica {section}-{k} is in sync.")
        out += ["", f"NEVER drop volume v{section} while replication is running.",
                f"You MUST inspect component {section}-1 before component {section}-2.", ""]
    return "\n".join(out[:lines]) + "\n"


def measure(path: Path, repeat: int) -> tuple[float, int, int, float]:
    """Median seconds, states, clauses and coverage of one build."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = build(path, output=path.with_suffix(".skm"))
        times.append(time.perf_counter() - t0)
        assert result.ok, [(str(d.code), d.message) for d in result.diagnostics if d.is_error][:5]
    m = result.machine
    states = sum(s.kind in ("model", "judge", "tool") for s in m.states.values())
    return statistics.median(times), states, len(result.rows), result.coverage


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'skill':<32} {'lines':>6} {'clauses':>8} {'states':>7} {'coverage':>9} {'build':>10}")
    for md in sorted(SKILLS.glob("*.md")):
        with tempfile.TemporaryDirectory() as tmp:
            copy = Path(tmp) / md.name
            copy.write_text(md.read_text())
            t, states, clauses, cov = measure(copy, args.repeat)
        print(f"{md.stem:<32} {len(md.read_text().splitlines()):>6} {clauses:>8} {states:>7} {cov:>8.0%} "
              f"{t * 1000:>8.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "SKILL.md"
        big.write_text(synthetic_skill(args.lines))
        t, states, clauses, cov = measure(big, args.repeat)
    print(f"{'synthetic':<32} {args.lines:>6} {clauses:>8} {states:>7} {cov:>8.0%} {t * 1000:>8.1f} ms")


if __name__ == "__main__":
    main()
