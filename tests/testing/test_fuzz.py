"""Fuzzing in the suite (about 2,000 inputs): grammar-generated and mutated examples end in diagnostics only."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings

from skillc.testing.fuzz import FuzzReport, grammar_strategy, mutate, run_pipeline, seeds
from tests.conftest import EXAMPLES, STDLIB

REPORT = FuzzReport()


@settings(max_examples=700, deadline=None, suppress_health_check=list(HealthCheck))
@given(grammar_strategy())
def test_grammar_generated_inputs(text: str) -> None:
    report = FuzzReport()
    run_pipeline(text.encode("utf-8", errors="surrogatepass"), report)
    assert report.internal == [], report.internal


def test_mutated_examples() -> None:
    rng = random.Random(20261130)
    corpus = seeds([EXAMPLES, STDLIB])
    report = FuzzReport()
    for _ in range(1300):
        run_pipeline(mutate(rng.choice(corpus), rng), report)
    assert report.internal == [], [(bytes(d[:200]), why) for d, why in report.internal[:3]]
    assert report.inputs == 1300
    assert report.parsed > 100 and len(report.codes) > 15  # the mutations reach deep into the pipeline
