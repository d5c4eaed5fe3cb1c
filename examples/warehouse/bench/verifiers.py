"""The warehouse bench's verifier: state.json must hold exactly the state the event log leads to.

The expected state is recomputed, not stored where a run could read it: the cell's `records.json` and
`events.jsonl` must be byte for byte one of the committed fixtures (a run that edited its inputs fails),
and replaying that fixture with ../env.py's `apply_event` gives the ground truth. `env.accuracy` then
compares state.json with it; success needs every shelf's sku and quantity right and exactly the expected
discrepancies (recall and precision 1).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from pathlib import Path

from make_fixtures import HERE, load_env

INPUTS = ("records.json", "events.jsonl")


def _fixture_of(workdir: Path) -> Path | None:
    """The committed fixture folder whose input files the workdir holds unchanged, or None."""
    try:
        held = [(workdir / name).read_bytes() for name in INPUTS]
    except OSError:
        return None
    for folder in sorted((HERE / "fixtures").iterdir()):
        if [(folder / name).read_bytes() for name in INPUTS] == held:
            return folder
    return None


def expected_state(fixture: Path) -> dict[str, object]:
    """The ground truth of a fixture: its records with every event applied, and the discrepancies."""
    env = load_env()
    shelves = copy.deepcopy(json.loads((fixture / "records.json").read_text(encoding="utf-8")))
    discrepancies: dict[str, object] = {}
    for line in (fixture / "events.jsonl").read_text(encoding="utf-8").splitlines():
        env.apply_event(shelves, discrepancies, json.loads(line))
    return {"shelves": shelves, "discrepancies": discrepancies}


def state_correct(workdir: Path, outputs: Mapping[str, object], trace: Path) -> tuple[bool, str]:
    """Success when state.json matches the replayed fixture exactly (shelves and discrepancies)."""
    fixture = _fixture_of(workdir)
    if fixture is None:
        return False, "records.json or events.jsonl is missing or differs from every committed fixture"
    state = workdir / "state.json"
    if not state.is_file():
        return False, "state.json was not written"
    try:
        scores = load_env().accuracy(state, expected_state(fixture))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        return False, f"state.json is not a state record: {type(exc).__name__}: {exc}"
    summary = ", ".join(f"{name} {value:.2f}" for name, value in scores.items())
    return all(value == 1.0 for value in scores.values()), summary
