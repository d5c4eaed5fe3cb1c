"""Record (or re-record) a model exchange for `skillc build --model recorded:DIR`, through tools/standin.py.

    python tests/frontends/markdown/recorded/record.py greet            # replay the kept replies/, rewrite
                                                                        # greet.exchange/exchange.jsonl
    python tests/frontends/markdown/recorded/record.py greet --fresh    # new replies: someone writes them

The skill folder `NAME/` is copied to a scratch folder and built there (`-o NAME/NAME.skm`, so the machine's
`source` is `SKILL.md` wherever the test replays it) with `--model openai:standin` against tools/standin.py.
The stand-in writes each request to `requests/NNN.json` and waits for `replies/NNN.txt`. Without `--fresh`
the replies kept in `NAME.exchange/replies/` are there already, so a changed request (a new language card,
a new folder description) is recorded again with the same replies; with `--fresh` whoever plays the model
reads each request file and writes its reply file. `NAME.exchange/exchange.jsonl` is then replaced.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]


def record(name: str, fresh: bool = False, wait_s: float = 3600.0) -> Path:
    """Build NAME against the stand-in; the exchange file written."""
    exchange = HERE / f"{name}.exchange"
    with tempfile.TemporaryDirectory(prefix="skillc-record-") as tmp:
        work, folder = Path(tmp) / "work", Path(tmp) / "standin"
        shutil.copytree(HERE / name, work / name)
        (folder / "replies").mkdir(parents=True)
        if not fresh:
            for reply in sorted((exchange / "replies").glob("*.txt")):
                shutil.copy(reply, folder / "replies" / reply.name)
        server = subprocess.Popen([sys.executable, str(ROOT / "tools" / "standin.py"), str(folder), "--wait",
                                   str(wait_s)], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            url = server.stdout.readline().split()[-1]
            env = {**os.environ, "SKILLC_MODEL": ""}
            build = subprocess.run([sys.executable, "-m", "skillc", "build", str(work / name), "-o",
                                    str(work / name / f"{name}.skm"), "--model", "openai:standin", "--base-url", url,
                                    "--report"], env=env, cwd=tmp, timeout=wait_s * 10)
        finally:
            server.terminate()
            server.wait(timeout=10)
        (exchange / "replies").mkdir(parents=True, exist_ok=True)
        for reply in sorted((folder / "replies").glob("*.txt")):
            shutil.copy(reply, exchange / "replies" / reply.name)
        shutil.copy(folder / "exchange.jsonl", exchange / "exchange.jsonl")
        if build.returncode != 0:
            raise SystemExit(f"the build exited {build.returncode}; the exchange was kept anyway")
    return exchange / "exchange.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description="Record a model exchange for recorded:DIR through the stand-in.")
    parser.add_argument("name", help="a skill folder beside this script")
    parser.add_argument("--fresh", action="store_true", help="do not reuse the kept replies")
    args = parser.parse_args()
    print(record(args.name, args.fresh))


if __name__ == "__main__":
    main()
