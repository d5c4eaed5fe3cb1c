"""Record the LLM compiler's exchanges on corpus skills, offline, with someone playing the model.

For each skill id, in order: start tools/standin.py on a loopback port with its own folder, run
`skillc build corpus/skills/ID/SKILL.md --model openai:capable --base-url …` against it, and, while
the build runs, announce each request that waits for its reply in `LANE/NEXT` (the request's path,
then the reply's path, one per line; `DONE` at the end). Whoever plays the model reads ONLY the
request file and writes the reply file. When the build ends, the exchange is copied to
`corpus/llm/ID.exchange.jsonl` and the build's stderr report to `LANE/ID.report.txt` (kept out of the
model's sight: the model sees only requests).

With `--keep-matching`, a request whose messages are those of a request in the skill's current recording
(`corpus/llm/ID.exchange.jsonl`, matched as the recorded executor matches: the hash of the messages) is
answered with that recording's reply and never announced: after a change to the build's findings, only the
requests the change altered go to whoever plays the model.

With `--into DIR`, the exchanges are copied to DIR instead of `corpus/llm/` (another play of the same requests,
`corpus/llm-play2/`, leaves the recordings the tests replay alone); with `--keep-matching` too, the recording kept
from is DIR's.

    python tools/record_corpus.py LANE_DIR ID [ID …] [--rounds 3] [--keep-matching] [--into DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from skillc.runtime.executors.recorded import RecordedExecutor  # noqa: E402 - after the path


def _pending(folder: Path) -> Path | None:
    """The oldest request without a reply."""
    for req in sorted((folder / "requests").glob("*.json")):
        if not (folder / "replies" / (req.stem + ".txt")).exists():
            return req
    return None


@attrs.define
class Kept:
    """The skill's current recording, for `--keep-matching`, and the requests already found to match none of it."""

    recording: RecordedExecutor | None = None
    new: set[Path] = attrs.Factory(set)


def reuse(folder: Path, kept: Kept) -> Path | None:
    """Answer pending requests from the kept recording while they match one; the first that does not (None while a
    request file is still being written, or when nothing is pending)."""
    while (req := _pending(folder)) is not None:
        if kept.recording is None or req in kept.new:
            return req
        try:
            messages = json.loads(req.read_text(encoding="utf-8"))["messages"]
        except (json.JSONDecodeError, KeyError, TypeError):
            return None  # the stand-in is still writing it: WAIT, and look again on the next tick
        hit = kept.recording.take(messages)
        if hit is None:
            kept.new.add(req)  # read once: it stays new while whoever plays the model answers it
            return req
        reply, part = folder / "replies" / (req.stem + ".txt"), folder / "replies" / (req.stem + ".part")
        part.write_text(kept.recording.records[hit][1], encoding="utf-8")
        os.replace(part, reply)
        print(f"{folder.name}: {req.name} answered from the current recording", flush=True)
    return None


def announce(lane: Path, folder: Path, kept: Kept | None = None) -> None:
    """Write LANE/NEXT whole: the oldest pending request of `folder` and where its reply goes, or WAIT."""
    req = reuse(folder, kept or Kept())
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


def record(lane: Path, skill_id: str, rounds: int, keep_matching: bool = False, into: Path | None = None) -> int:
    """One skill's exchange, copied into `into` (corpus/llm/ by default); the build's exit status."""
    folder = lane / skill_id
    target = into or ROOT / "corpus" / "llm"
    current = target / f"{skill_id}.exchange.jsonl"
    kept = Kept(RecordedExecutor(current) if keep_matching and current.is_file() else None)
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
            announce(lane, folder, kept)
            time.sleep(1.0)
    finally:
        standin.terminate()
        standin.wait(10)
        report.close()
    target.mkdir(parents=True, exist_ok=True)
    if (folder / "exchange.jsonl").exists():
        shutil.copy(folder / "exchange.jsonl", target / f"{skill_id}.exchange.jsonl")
    return build.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lane", type=Path)
    parser.add_argument("ids", nargs="+")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep-matching", action="store_true",
                        help="answer requests unchanged since the current recording with its replies")
    parser.add_argument("--into", type=Path, default=None,
                        help="copy the exchanges here instead of corpus/llm/ (another play)")
    args = parser.parse_args(argv)
    args.lane.mkdir(parents=True, exist_ok=True)
    for skill_id in args.ids:
        status = record(args.lane, skill_id, args.rounds, args.keep_matching, args.into and args.into.resolve())
        print(f"{skill_id}: build exit {status}", flush=True)
    (args.lane / "NEXT").write_text("DONE\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
