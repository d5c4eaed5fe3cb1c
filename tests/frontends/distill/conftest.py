"""Fixtures of the distiller tests: the committed TextWorld traces, synthetic traces and real games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillc.frontends.distill import distill
from skillc.frontends.distill import textworld as tw
from skillc.frontends.distill.trace import Episode, Transition, read_traces

DATA = Path(__file__).resolve().parents[3] / "examples" / "traces" / "textworld-cooking"
TRAIN = DATA / "train.jsonl"
HELDOUT = DATA / "heldout.jsonl"

KITCHEN = {"apple": "f", "carrot": "f", "potato": "f", "meal": "meal", "knife": "o", "fridge": "c",
           "counter": "s", "table": "s", "stove": "stove", "oven": "oven", "wooden door": "d"}


def trace(actions, *, ident="t", success=True, entities=KITCHEN, env="textworld", templates=()) -> Episode:
    """A synthetic trace of `actions` (observations are placeholders; the last step is done)."""
    steps = tuple(Transition(f"obs {i}", a, f"obs {i + 1}", (a,), float(i), i == len(actions) - 1)
                  for i, a in enumerate(actions))
    return Episode(ident, steps, success, env=env, entities=entities, templates=tuple(templates))


def jsonl(*traces: Episode) -> str:
    """JSONL text of traces."""
    return "".join(json.dumps(t.to_json()) + "\n" for t in traces)


@pytest.fixture(scope="session")
def train_traces():
    traces, problems = read_traces([TRAIN])
    assert not problems
    return traces


@pytest.fixture(scope="session")
def heldout_traces():
    traces, problems = read_traces([HELDOUT])
    assert not problems
    return traces


@pytest.fixture(scope="session")
def distilled(train_traces):
    return distill(train_traces)


@pytest.fixture(scope="session")
def games(tmp_path_factory):
    """A folder where tests (re)generate the TextWorld games their traces name."""
    return tmp_path_factory.mktemp("textworld-games")


@pytest.fixture(scope="session")
def game_of(games):
    """Open the real game of a trace (regenerated from its settings)."""

    def open_game(t: Episode) -> tw.Game:
        return tw.Game(tw.game_path(t, games))

    return open_game
