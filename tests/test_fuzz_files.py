"""Every command's file inputs, fuzzed (issue 34): mutated traces, transcripts, scripts, inputs, definitions and
machines end in diagnostics, never in an internal error. `bench/fuzz.py --files` runs 10,000 inputs a command;
here 40 a command (about 10 s on 2 cores; SKILLC_FUZZ_FILES=N for more)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.fuzz import FILE_COMMANDS, fuzz_files

PER_COMMAND = int(os.environ.get("SKILLC_FUZZ_FILES", "40"))


@pytest.mark.parametrize("command", list(FILE_COMMANDS))
def test_no_internal_error(command: str, tmp_path: Path) -> None:
    report = fuzz_files([command], PER_COMMAND, seed=34, folder=tmp_path)
    assert report.inputs[command] == PER_COMMAND
    assert len(report.exits[command]) >= 2 or PER_COMMAND < 5  # the mutations do reach the command's checks
    assert report.internal == [], [(why, data[:300]) for _, data, why in report.internal[:3]]
