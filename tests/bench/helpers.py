"""Helpers of the bench tests: the runner's fixture folder, and `skillc bench` run in this process."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from skillc.cli import main

#: A suite, its machine, a script and a tools module: tests/bench/fixtures/beats.
FIXTURE = Path(__file__).parent / "fixtures" / "beats"


def bench_cli(*args: str, quiet: bool = True) -> tuple[int, str]:
    """`skillc bench ARGS` in this process: the exit code and everything printed."""
    result = CliRunner().invoke(main, ["bench", *args, *(["--quiet"] if quiet else [])])
    return result.exit_code, result.output


def copy_beats(tmp_path: Path) -> Path:
    """A copy of the runner's fixture folder, to edit."""
    folder = tmp_path / "beats"
    shutil.copytree(FIXTURE, folder)
    return folder
