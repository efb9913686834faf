"""Paired tests of two runs on the targets both scored (`harness compare`, the compare page):
McNemar's exact test for pass/fail outcomes, a paired bootstrap of the mean difference for
continuous scores. Both on scipy.stats: McNemar's exact test is the two-sided binomial test of
the discordant pairs (`binomtest`), and the bootstrap resamples targets, keeping each target's
two scores together (`bootstrap(..., paired=True)`)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel
from scipy.stats import binomtest, bootstrap

BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 0  # the same comparison each time it is built


class McNemar(BaseModel):
    """Pass/fail outcomes of two runs on the same targets."""

    n: int  # targets with an outcome on both sides
    a_only: int  # passed by A, failed by B
    b_only: int  # passed by B, failed by A
    both: int
    neither: int
    p_value: float  # exact, two-sided; 1.0 when no pair is discordant


class PairedDifference(BaseModel):
    """The mean of B - A over targets, with its 95% paired-bootstrap interval."""

    n: int
    diff: float
    ci_low: float | None = None
    ci_high: float | None = None


def mcnemar(a: Sequence[float], b: Sequence[float]) -> McNemar:
    """McNemar's exact test of paired 0/1 outcomes (a value >= 0.5 is a pass, as the report's
    Wilson rows count it): under the null each discordant pair is A's or B's with probability
    1/2, so the count of B-only passes is Binomial(discordant, 1/2)."""
    if len(a) != len(b):
        raise ValueError(f"paired outcomes of different lengths: {len(a)} and {len(b)}")
    pa = [x >= 0.5 for x in a]
    pb = [x >= 0.5 for x in b]
    a_only = sum(1 for x, y in zip(pa, pb, strict=True) if x and not y)
    b_only = sum(1 for x, y in zip(pa, pb, strict=True) if y and not x)
    both = sum(1 for x, y in zip(pa, pb, strict=True) if x and y)
    discordant = a_only + b_only
    p = binomtest(b_only, discordant, 0.5).pvalue if discordant else 1.0
    return McNemar(
        n=len(pa),
        a_only=a_only,
        b_only=b_only,
        both=both,
        neither=len(pa) - discordant - both,
        p_value=float(min(1.0, p)),
    )


def _mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def paired_bootstrap(a: Sequence[float], b: Sequence[float]) -> PairedDifference:
    """The mean of b - a and its 95% percentile interval from resampling targets (each target's
    two scores stay together). Percentile: every resampled mean difference lies between the
    smallest and largest difference, so the interval stays inside the metric's range of
    differences. None for fewer than two targets."""
    if len(a) != len(b):
        raise ValueError(f"paired scores of different lengths: {len(a)} and {len(b)}")
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) == 0:
        return PairedDifference(n=0, diff=float("nan"))
    diff = float(np.mean(y - x))
    if len(x) < 2:
        return PairedDifference(n=len(x), diff=diff)
    d = y - x
    if np.all(d == d[0]):
        return PairedDifference(n=len(x), diff=diff, ci_low=diff, ci_high=diff)
    res = bootstrap(
        (x, y),
        _mean_difference,
        paired=True,
        confidence_level=0.95,
        n_resamples=BOOTSTRAP_RESAMPLES,
        method="percentile",
        rng=np.random.default_rng(BOOTSTRAP_SEED),
    )
    lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return PairedDifference(n=len(x), diff=diff, ci_low=min(lo, diff), ci_high=max(hi, diff))
