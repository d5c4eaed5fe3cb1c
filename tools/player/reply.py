"""Wrap a reply into the JSON form a build request asks for and put it in place atomically.

  python3 reply.py REPLY_PATH --skm FILE.skm [--signatures FILE] [--rules FILE]

--signatures / --rules: a file with one signature (or one rule) per line. Writes {"skm": ..., ...} to
REPLY_PATH.part, then renames it to REPLY_PATH."""

import argparse
import json
import os
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("reply")
parser.add_argument("--skm", required=True)
parser.add_argument("--signatures")
parser.add_argument("--rules")
args = parser.parse_args()
out: dict[str, object] = {"skm": Path(args.skm).read_text(encoding="utf-8")}
for key in ("signatures", "rules"):
    listed = getattr(args, key)
    if listed:
        out[key] = [line.rstrip("\n") for line in Path(listed).read_text(encoding="utf-8").splitlines() if line.strip()]
tmp = args.reply + ".part"
Path(tmp).write_text(json.dumps(out, ensure_ascii=False), encoding="utf-8")
os.replace(tmp, args.reply)
print("written", args.reply)
