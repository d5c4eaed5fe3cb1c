"""Before/after evidence for a restructuring: every command's output over every fixture, example and demo.

Run: python tools/equivalence.py ROOT OUT_DIR     (ROOT: a skillc checkout; OUT_DIR must not exist)
     python tools/equivalence.py --compare BEFORE_DIR AFTER_DIR [--roots BEFORE_ROOT AFTER_ROOT]

The first form runs the `skillc` of ROOT (`python -m skillc` with ROOT first on the path, ROOT as the current
folder) over every tracked `.skm` file (`check --output-format json`, `fmt --diff`, `show`, `dot`, `dot
--format mermaid`), over every refine trace fixture (`replay`), the refine demonstration (`examples/refine/demo.sh`:
the grown machine, the diff picture, the report) and every `examples/evolve` scenario (`skillc evolve` with its
scripted roles: the evolved machine, the tree and the report), and writes one file per command: the exit code,
standard output and error, and the files the command wrote. Paths of the scratch folder, times and durations are
normalised, so two roots that behave the same give identical folders. The second form lists the files that
differ and exits 1 if any do.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# Durations, clocks and ids that differ from run to run whatever the code does.
_VOLATILE = [
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?"), "<TIME>"),
    (re.compile(r'("(?:duration|elapsed|wall|seconds|started|ended|time|ms|duration_ms|duration_s|t)"\s*:\s*)'
                r"[0-9.e+-]+"), r"\1<N>"),
    (re.compile(r"\b\d+(\.\d+)?\s?(ms|s)\b"), "<DUR>"),
    (re.compile(r"\b[0-9a-f]{32,64}\b"), "<HASH>"),
    (re.compile(r"pid \d+"), "pid <N>"),
    (re.compile(r'("[\w.]*(?:latency_ms|_ms|_s|seconds)"\s*:\s*)[0-9.e+-]+'), r"\1<N>"),
    (re.compile(r"process \d+ since \d\d:\d\d:\d\d"), "process <N> since <TIME>"),
]


def normalise(text: str, scratch: str, root: str) -> str:
    """The text with scratch and root paths (also as a file name: `/` → `_`) and volatile figures replaced."""
    text = text.replace(scratch, "<SCRATCH>").replace(root, "<ROOT>")
    if root.startswith("/"):
        text = text.replace(root.strip("/").replace("/", "_"), "ROOT")
        text = re.sub(r"ROOT[\w.-]*-[0-9a-f]{8}\b", "ROOT…-<CELL>", text)  # a cut name, its hash
    for pattern, repl in _VOLATILE:
        text = pattern.sub(repl, text)
    return text


class Recorder:
    """Runs commands of one skillc root and writes what each did under one folder."""

    def __init__(self, root: Path, out: Path) -> None:
        self.root, self.out = root, out
        self.scratch = Path(tempfile.mkdtemp(prefix="skillc-equiv-"))
        self.env = dict(os.environ, PYTHONPATH=str(root), SKILLC_NO_COLOR="1", NO_COLOR="1", COLUMNS="120")
        bindir = self.scratch / "bin"
        bindir.mkdir()
        shim = bindir / "skillc"
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m skillc "$@"\n')
        shim.chmod(0o755)
        self.env["PATH"] = f"{bindir}{os.pathsep}{self.env['PATH']}"
        self.env["SKILLC"] = str(shim)

    def record(self, name: str, argv: list[str], produced: tuple[Path, ...] = ()) -> None:
        """Run argv in the root; write its exit code, output and the files it produced to OUT/name."""
        done = subprocess.run(argv, cwd=self.root, env=self.env, capture_output=True, timeout=600,
                              stdin=subprocess.DEVNULL)
        parts = [f"$ {' '.join(argv)}", f"exit {done.returncode}",
                 "--- stdout", done.stdout.decode(errors="replace"),
                 "--- stderr", done.stderr.decode(errors="replace")]
        for path in produced:
            for file in sorted(p for p in ([path] if path.is_file() else path.rglob("*")) if p.is_file()):
                if file.suffix in {".sqlite", ".db", ".svg", ".png"} or "archive" in file.parts[-2:]:
                    parts.append(f"--- file {file} ({(file.stat().st_size > 0 and 'non-empty') or 'empty'})")
                    continue
                parts += [f"--- file {file}", file.read_text(errors="replace")]
        target = self.out / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".txt")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(normalise("\n".join(parts), str(self.scratch), str(self.root)))


def machines(root: Path) -> list[str]:
    """Every tracked .skm file of the root."""
    listed = subprocess.run(["git", "ls-files", "*.skm"], cwd=root, capture_output=True, text=True, check=True)
    return sorted(listed.stdout.split())


def record_all(root: Path, out: Path) -> None:
    """Every command over every fixture, example and demonstration."""
    rec = Recorder(root, out)
    skillc = [sys.executable, "-m", "skillc"]
    for path in machines(root):
        rec.record(f"check/{path}", [*skillc, "check", "--output-format", "json", "--smt-timeout", "20000", path])
        rec.record(f"fmt/{path}", [*skillc, "fmt", "--diff", path])
        rec.record(f"show/{path}", [*skillc, "show", path])
        rec.record(f"dot/{path}", [*skillc, "dot", path])
        rec.record(f"mermaid/{path}", [*skillc, "dot", "--format", "mermaid", path])
    for trace in sorted((root / "examples" / "refine" / "traces").glob("*.jsonl")):
        rec.record(f"replay/{trace.name}", [*skillc, "replay", "examples/refine/livemath-partial.skm", str(trace)])
    demo = rec.scratch / "refine-demo"
    rec.record("demo/refine", ["bash", "examples/refine/demo.sh", str(demo)], (demo / "refine",))
    for scenario in sorted(p for p in (root / "examples" / "evolve").iterdir() if (p / "roles.json").is_file()):
        dest = rec.scratch / "evolve" / scenario.name
        rec.record(f"evolve/{scenario.name}",
                   [*skillc, "evolve", str(scenario / "machine.skm"), "--suite", str(scenario / "suite.toml"),
                    "--executor", f"scripted:{scenario / 'script.json'}",
                    "--reflect-model", f"scripted:{scenario / 'roles.json'}", "-o", str(dest)], (dest,))


def compare(before: Path, after: Path, roots: tuple[str, str] = ("<ROOT>", "<ROOT>")) -> int:
    """Print the files that differ (with a unified diff of each); 1 if any does. `roots`: the checkouts each side
    was recorded in, for outputs that name them as a file name."""
    names = sorted({p.relative_to(before) for p in before.rglob("*.txt")} |
                   {p.relative_to(after) for p in after.rglob("*.txt")})
    differing = 0
    for name in names:
        a, b = before / name, after / name
        old = normalise(a.read_text(), "<SCRATCH>", roots[0]).splitlines() if a.exists() else ["<missing>"]
        new = normalise(b.read_text(), "<SCRATCH>", roots[1]).splitlines() if b.exists() else ["<missing>"]
        if old != new:
            differing += 1
            print(f"DIFFERS {name}")
            print("\n".join(list(difflib.unified_diff(old, new, "before", "after", lineterm=""))[:40]))
    print(f"{len(names)} outputs compared, {differing} differ")
    return 1 if differing else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--compare", action="store_true", help="Compare two output folders instead of recording.")
    ap.add_argument("first", type=Path)
    ap.add_argument("second", type=Path)
    ap.add_argument("--roots", nargs=2, metavar=("BEFORE_ROOT", "AFTER_ROOT"), default=("<ROOT>", "<ROOT>"),
                    help="With --compare: the checkouts the two folders were recorded from.")
    args = ap.parse_args()
    if args.compare:
        return compare(args.first, args.second, tuple(args.roots))
    if args.second.exists():
        sys.exit(f"{args.second} exists")
    record_all(args.first.resolve(), args.second.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
