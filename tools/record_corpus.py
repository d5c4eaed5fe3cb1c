"""Record the LLM compiler's exchanges on corpus skills, offline, with someone playing the model.

For each skill id, in order: start tools/standin.py on a loopback port with its own folder, run
`skillc build corpus/skills/ID/SKILL.md --model openai:capable --base-url …` against it, and, while
the build runs, announce each request that waits for its reply in `LANE/NEXT` (the request's path,
then the reply's path, one per line; `DONE` at the end). Whoever plays the model reads ONLY the
request file and writes the reply file. When the build ends, the exchange is copied to
`corpus/llm/ID.exchange.jsonl` and the build's stderr report to `LANE/ID.report.txt` (kept out of the
model's sight: the model sees only requests).

    python tools/record_corpus.py LANE_DIR ID [ID …] [--rounds 3]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _pending(folder: Path) -> Path | None:
    """The oldest request without a reply."""
    for req in sorted((folder / "requests").glob("*.json")):
        if not (folder / "replies" / (req.stem + ".txt")).exists():
            return req
    return None


def announce(lane: Path, folder: Path) -> None:
    """Write LANE/NEXT whole: the oldest pending request of `folder` and where its reply goes, or WAIT."""
    req = _pending(folder)
    text = f"{req}\n{folder / 'replies' / (req.stem + '.txt')}\n" if req else "WAIT\n"
    (lane / "NEXT.tmp").write_text(text)
    (lane / "NEXT.tmp").replace(lane / "NEXT")


def start_standin(folder: Path) -> tuple[subprocess.Popen[str], str]:
    """A fresh `folder` and tools/standin.py serving it; the process and its base URL."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    standin = subprocess.Popen([sys.executable, str(ROOT / "tools" / "standin.py"), str(folder), "--wait", "3600"],
                               stdout=subprocess.PIPE, text=True)
    assert standin.stdout is not None
    return standin, standin.stdout.readline().strip().rsplit(" ", 1)[-1]


def record(lane: Path, skill_id: str, rounds: int) -> int:
    """One skill's exchange; the build's exit status."""
    folder = lane / skill_id
    standin, url = start_standin(folder)
    out = lane / f"{skill_id}.skm"
    report = (lane / f"{skill_id}.report.txt").open("w")
    build = subprocess.Popen([str(ROOT / ".venv" / "bin" / "skillc"), "build",
                              str(ROOT / "corpus" / "skills" / skill_id / "SKILL.md"), "--model", "openai:capable",
                              "--base-url", url, "--rounds", str(rounds), "--model-timeout", "3500", "-o", str(out),
                              "--report"],
                             stdout=report, stderr=report, cwd=ROOT)
    try:
        while build.poll() is None:
            announce(lane, folder)
            time.sleep(1.0)
    finally:
        standin.terminate()
        standin.wait(10)
        report.close()
    target = ROOT / "corpus" / "llm"
    target.mkdir(exist_ok=True)
    if (folder / "exchange.jsonl").exists():
        shutil.copy(folder / "exchange.jsonl", target / f"{skill_id}.exchange.jsonl")
    return build.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lane", type=Path)
    parser.add_argument("ids", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    args.lane.mkdir(parents=True, exist_ok=True)
    for skill_id in args.ids:
        status = record(args.lane, skill_id, args.rounds)
        print(f"{skill_id}: build exit {status}", flush=True)
    (args.lane / "NEXT").write_text("DONE\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
