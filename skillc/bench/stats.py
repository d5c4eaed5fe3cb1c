"""The statistics of a bench report: confidence intervals of rates and paired comparisons of two modes.

- `wilson` — the Wilson score interval of a success rate (good coverage at small n and at 0 or n successes);
  `clopper_pearson` — the exact (conservative) interval, from the beta distribution.
- `mcnemar` — the exact McNemar test for paired binary outcomes (two modes on the same tasks): a two-sided
  binomial test on the discordant pairs, with the mid-p variant (less conservative, Lancaster 1961).
- `paired_bootstrap` — a percentile bootstrap interval of the mean of paired differences, resampling pairs
  with a seeded generator so a report is reproducible.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import attrs


@attrs.frozen
class Interval:
    """A confidence interval [low, high] around an estimate."""

    estimate: float
    low: float
    high: float


def _z(confidence: float) -> float:
    """The two-sided standard normal quantile for `confidence` (1.959964 for 0.95)."""
    from scipy.stats import norm  # optional extra (skillc[bench])

    return float(norm.ppf(0.5 + confidence / 2))


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The Wilson score interval of successes/n; n = 0 gives the whole range [0, 1] around NaN."""
    if n == 0:
        return Interval(math.nan, 0.0, 1.0)
    z = _z(confidence)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def clopper_pearson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """The exact Clopper-Pearson interval of successes/n."""
    from scipy.stats import beta  # optional extra (skillc[bench])

    if n == 0:
        return Interval(math.nan, 0.0, 1.0)
    alpha = 1 - confidence
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return Interval(successes / n, low, high)


@attrs.frozen
class McNemar:
    """The exact McNemar test: `b` pairs where only the first succeeded, `c` where only the second did."""

    b: int
    c: int
    p: float
    mid_p: float


def mcnemar(b: int, c: int) -> McNemar:
    """Two-sided exact p (and mid-p) that the discordant pairs split evenly; no discordant pair gives p = 1."""
    n = b + c
    if n == 0:
        return McNemar(b, c, 1.0, 1.0)
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    point = math.comb(n, k) / 2**n
    p = min(1.0, 2 * tail)
    return McNemar(b, c, p, min(1.0, 2 * tail - point))  # mid-p counts half the observed point's probability


def mcnemar_pairs(pairs: Sequence[tuple[bool, bool]]) -> McNemar:
    """The exact McNemar test of (first succeeded, second succeeded) pairs."""
    b = sum(1 for x, y in pairs if x and not y)
    c = sum(1 for x, y in pairs if y and not x)
    return mcnemar(b, c)


def paired_bootstrap(first: Sequence[float], second: Sequence[float], *, resamples: int = 10_000,
                     confidence: float = 0.95, seed: int = 0) -> Interval:
    """A percentile bootstrap interval of mean(first - second) over pairs resampled with replacement."""
    import numpy as np  # optional extra (skillc[bench], with scipy)

    if len(first) != len(second):
        raise ValueError(f"paired samples differ in length ({len(first)} and {len(second)})")
    diffs = np.asarray(first, dtype=float) - np.asarray(second, dtype=float)
    if diffs.size == 0:
        return Interval(math.nan, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = diffs[rng.integers(0, diffs.size, size=(resamples, diffs.size))].mean(axis=1)
    alpha = 1 - confidence
    low, high = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return Interval(float(diffs.mean()), float(low), float(high))
