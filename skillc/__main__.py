"""`python -m skillc` and the `skillc` console script: the command line, with `--version` answered before
click and the stages are imported (a linter's start-up is part of every run)."""

from __future__ import annotations

import sys


def main() -> None:
    """Run the command line (`skillc.cli.main`); `skillc --version` alone prints what click would print; Ctrl-C
    while skillc is still starting exits 130 with one line, as it does once a command runs."""
    try:
        if sys.argv[1:] == ["--version"]:
            from skillc.version import __version__

            sys.stdout.write(f"skillc, version {__version__}\n")
            sys.exit(0)
        from skillc.cli import main as cli
    except KeyboardInterrupt:  # before the command line's own handlers (console.stop_signals) are in place
        sys.stderr.write("skillc: interrupted\n")
        sys.exit(130)
    cli()


if __name__ == "__main__":
    main()
