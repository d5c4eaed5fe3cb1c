#!/usr/bin/env python3
"""Print the commits of the current git repository since its last tag, grouped by kind.

Usage: collect_changes.py [--since-last-tag | --since REF] [--format markdown|json]

Commit subjects written as conventional commits (`feat: …`, `fix: …`) are grouped under
Features and Fixes; everything else under Other. Exits 1 outside a git repository.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

KINDS = {"feat": "Features", "fix": "Fixes"}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--since-last-tag", action="store_true", help="commits after the newest tag (default)")
    where.add_argument("--since", metavar="REF", help="commits after REF")
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    args = parser.parse_args(argv)
    try:
        since = args.since
        if since is None:
            tags = _git("tag", "--sort=-creatordate").split()
            since = tags[0] if tags else None
        span = f"{since}..HEAD" if since else "HEAD"
        subjects = [s for s in _git("log", "--format=%s", span).splitlines() if s.strip()]
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"collect_changes: not a git repository or git failed: {exc}", file=sys.stderr)
        return 1
    groups: dict[str, list[str]] = {"Features": [], "Fixes": [], "Other": []}
    for subject in reversed(subjects):
        prefix, sep, rest = subject.partition(":")
        kind = KINDS.get(prefix.strip().split("(")[0]) if sep else None
        groups[kind or "Other"].append(rest.strip() if kind else subject.strip())
    if args.format == "json":
        print(json.dumps({"since": since, "changes": groups}))
    else:
        print(f"Changes since {since or 'the first commit'}:")
        for kind, items in groups.items():
            for item in items:
                print(f"- [{kind}] {item}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
