"""`python -m skillc` and the `skillc` console script: the command line, with `--version` answered before
click and the stages are imported (a linter's start-up is part of every run)."""

from __future__ import annotations

import sys


def main() -> None:
    """Run the command line (`skillc.cli.main`); `skillc --version` alone prints what click would print."""
    if sys.argv[1:] == ["--version"]:
        from skillc.version import __version__

        sys.stdout.write(f"skillc, version {__version__}\n")
        sys.exit(0)
    from skillc.cli import main as cli

    cli()


if __name__ == "__main__":
    main()
