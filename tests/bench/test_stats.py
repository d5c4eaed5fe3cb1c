"""The statistics against published values and scipy's reference implementations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp

from skillc.bench.stats import clopper_pearson, mcnemar, mcnemar_pairs, paired_bootstrap, wilson

# Newcombe (1998), "Two-sided confidence intervals for the single proportion", Table I: 95% intervals.
NEWCOMBE = [  # (r, n, Wilson score interval, exact Clopper-Pearson interval)
    (81, 263, (0.2553, 0.3662), (0.2527, 0.3676)),
    (15, 148, (0.0624, 0.1605), (0.0578, 0.1617)),
    (0, 20, (0.0000, 0.1611), (0.0000, 0.1684)),
    (1, 29, (0.0061, 0.1718), (0.0009, 0.1776)),
]


@pytest.mark.parametrize(("r", "n", "score", "exact"), NEWCOMBE)
def test_intervals_match_newcombe(r: int, n: int, score: tuple[float, float], exact: tuple[float, float]) -> None:
    w, cp = wilson(r, n), clopper_pearson(r, n)
    assert (round(w.low, 4), round(w.high, 4)) == score
    assert (round(cp.low, 4), round(cp.high, 4)) == exact
    assert w.estimate == cp.estimate == r / n


def test_wilson_matches_scipy_and_edges() -> None:
    for k, n in [(0, 1), (1, 1), (3, 10), (50, 100), (99, 100)]:
        ref = sp.binomtest(k, n).proportion_ci(0.9, method="wilson")
        got = wilson(k, n, 0.9)
        assert (got.low, got.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
        ref = sp.binomtest(k, n).proportion_ci(0.95, method="exact")
        got = clopper_pearson(k, n)
        assert (got.low, got.high) == pytest.approx((ref.low, ref.high), abs=1e-12)
    empty = wilson(0, 0)
    assert math.isnan(empty.estimate) and (empty.low, empty.high) == (0.0, 1.0)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 4), (2, 8), (5, 5), (1, 6), (150, 86), (12, 3)])
def test_mcnemar_exact_matches_the_binomial_test(b: int, c: int) -> None:
    result = mcnemar(b, c)
    reference = 1.0 if b + c == 0 else sp.binomtest(min(b, c), b + c, 0.5).pvalue
    assert result.p == pytest.approx(reference, rel=1e-12)
    if b + c:  # mid-p: the two-sided p less the probability of the observed split
        mid = 2 * (sp.binom.cdf(min(b, c), b + c, 0.5) - 0.5 * sp.binom.pmf(min(b, c), b + c, 0.5))
        assert result.mid_p == pytest.approx(min(1.0, mid), rel=1e-12)


def test_mcnemar_known_values() -> None:
    # b = 2, c = 8: p = 2 · (C(10,0) + C(10,1) + C(10,2)) / 2^10 = 2 · 56/1024.
    assert mcnemar(2, 8).p == 112 / 1024
    assert mcnemar(2, 8).mid_p == (112 - 45) / 1024
    assert mcnemar(0, 4).p == 2 / 16
    assert mcnemar(5, 5).p == 1.0 and mcnemar(5, 5).mid_p == 1.0
    pairs = [(True, False)] * 2 + [(False, True)] * 8 + [(True, True)] * 30 + [(False, False)] * 5
    assert mcnemar_pairs(pairs) == mcnemar(2, 8)


def test_paired_bootstrap() -> None:
    rng = np.random.default_rng(7)
    a = rng.normal(10.0, 2.0, 200)
    b = a - 1.0 + rng.normal(0.0, 1.0, 200)
    got = paired_bootstrap(list(a), list(b), seed=3)
    assert got == paired_bootstrap(list(a), list(b), seed=3)  # seeded: reproducible
    assert got.low < got.estimate < got.high
    assert got.estimate == pytest.approx(float(np.mean(a - b)))
    ref = sp.bootstrap((a - b,), np.mean, n_resamples=10_000, method="percentile", random_state=11)
    assert got.low == pytest.approx(ref.confidence_interval.low, abs=0.03)
    assert got.high == pytest.approx(ref.confidence_interval.high, abs=0.03)
    half = 1.96 * float(np.std(a - b, ddof=1)) / math.sqrt(200)  # the normal approximation
    assert got.high - got.low == pytest.approx(2 * half, rel=0.1)


def test_paired_bootstrap_edges() -> None:
    same = paired_bootstrap([3.0, 4.0, 5.0], [1.0, 2.0, 3.0])
    assert (same.estimate, same.low, same.high) == (2.0, 2.0, 2.0)
    assert all(math.isnan(x) for x in attrs_values(paired_bootstrap([], [])))
    with pytest.raises(ValueError, match="differ in length"):
        paired_bootstrap([1.0], [1.0, 2.0])


def attrs_values(interval) -> tuple[float, float, float]:
    return interval.estimate, interval.low, interval.high
