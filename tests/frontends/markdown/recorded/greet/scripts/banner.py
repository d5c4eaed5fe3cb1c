"""Print a text framed as a banner.

usage: banner.py --text TEXT
"""

from __future__ import annotations

import argparse


def main() -> None:
    parser = argparse.ArgumentParser(description="Frame a line of text as a banner.")
    parser.add_argument("--text", required=True, help="the line to frame")
    args = parser.parse_args()
    line = "*" * (len(args.text) + 4)
    print(f"{line}\n* {args.text} *\n{line}")


if __name__ == "__main__":
    main()
