"""Observational precision / recall / F1 of neuron explanations (Huang et al. 2023,
observational mode).

For a neuron a, an explanation E and a test set Q: a(q) is the max of the neuron's activation over
the tokens of q's concept span; the neuron is on iff a(q) > τ (τ = 0 in the paper).
  T = {q : q ∈ ⟦E⟧ and a(q) > τ};  P = |T| / |{q ∈ ⟦E⟧}|;  R = |T| / |{q : a(q) > τ}|;
  F1 = 2PR / (P + R) (0 when P = R = 0). A ratio with an empty denominator is undefined (None) and
left out of macro means (the count of neurons that enter each mean is reported).
Micro pools the counts of all neurons; macro averages per-neuron values. Bootstrap intervals
resample neurons (the unit the paper averages over) with replacement.

Beside them (docs/evaluator.md, "Chance and the vacuous explanation"): the vacuous explanation's
P/R/F1 on the same items (one that claims every item: precision is the share of items the unit
fires on, recall 1), and the Matthews correlation of claims and firing, which is 0 for any claim
that does not vary (nothing claimed, or everything) and undefined (None) when the firing does not
vary. F1 ignores the items neither claimed nor firing, so on a test set where the unit fires on
most items claiming everything wins; the paper reports F1 only (Huang et al. 2023, §3).
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel

METRICS = ("precision", "recall", "f1")


@dataclass(frozen=True)
class Observation:
    unit: str  # the neuron, e.g. "12:345"
    in_explanation: bool  # q ∈ ⟦E⟧
    fires: bool  # a(q) > τ
    group: str = ""  # e.g. the layer, for breakdowns


class Counts(BaseModel):
    n: int = 0  # test items
    tp: int = 0  # in ⟦E⟧ and fires
    claimed: int = 0  # in ⟦E⟧
    fired: int = 0  # fires

    def __add__(self, o: Counts) -> Counts:
        return Counts(
            n=self.n + o.n,
            tp=self.tp + o.tp,
            claimed=self.claimed + o.claimed,
            fired=self.fired + o.fired,
        )


class PRF(BaseModel):
    precision: float | None
    recall: float | None
    f1: float | None


def prf(c: Counts) -> PRF:
    p = c.tp / c.claimed if c.claimed else None
    r = c.tp / c.fired if c.fired else None
    if p is None or r is None:
        f = None
    else:
        f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return PRF(precision=p, recall=r, f1=f)


def vacuous(c: Counts) -> Counts:
    """The counts of an explanation that claims every item of the same test set."""
    return Counts(n=c.n, tp=c.fired, claimed=c.n, fired=c.fired)


def firing_share(c: Counts) -> float | None:
    """The share of test items the unit fires on: the vacuous explanation's precision."""
    return c.fired / c.n if c.n else None


def mcc(c: Counts) -> float | None:
    """Matthews correlation of "claimed" and "fires" over the test items, in [-1, 1]. 0 when
    the claims do not vary (the limit every constant prediction shares: it carries no
    information); None when the firing does not vary (no claim can be told from another)."""
    if c.fired in (0, c.n):
        return None
    if c.claimed in (0, c.n):
        return 0.0
    fp, fn = c.claimed - c.tp, c.fired - c.tp
    tn = c.n - c.claimed - fn
    den = math.sqrt(c.claimed * (c.n - c.claimed) * c.fired * (c.n - c.fired))
    return (c.tp * tn - fp * fn) / den


def counts(obs: Iterable[Observation]) -> Counts:
    c = Counts()
    for o in obs:
        c.n += 1
        c.tp += o.in_explanation and o.fires
        c.claimed += o.in_explanation
        c.fired += o.fires
    return c


class Interval(BaseModel):
    low: float
    high: float


class Summary(BaseModel):
    """Micro and macro P/R/F1 over a set of neurons, with bootstrap 95% intervals."""

    neurons: int
    items: int
    micro: PRF
    macro: PRF
    macro_n: dict[str, int]  # neurons with a defined value, per metric
    median_f1: float | None
    micro_ci: dict[str, Interval] = {}
    macro_ci: dict[str, Interval] = {}
    # chance: the Matthews correlation (macro: over units where it is defined) and the vacuous
    # explanation's P/R/F1 on the same items (docstring)
    micro_mcc: float | None = None
    macro_mcc: float | None = None
    macro_mcc_n: int = 0
    vacuous_micro: PRF | None = None
    vacuous_macro: PRF | None = None


class Report(BaseModel):
    overall: Summary
    per_neuron: dict[str, PRF]
    per_neuron_counts: dict[str, Counts]
    per_group: dict[str, Summary]


def _mean(values: Sequence[float | None]) -> tuple[float | None, int]:
    v = [x for x in values if x is not None]
    return (float(np.mean(v)) if v else None), len(v)


def summarize(
    per_unit: dict[str, Counts], *, n_boot: int = 1000, seed: int = 0, ci: float = 0.95
) -> Summary:
    units = list(per_unit)
    vals = [prf(per_unit[u]) for u in units]
    total = sum((per_unit[u] for u in units), Counts())
    macro, macro_n = {}, {}
    for m in METRICS:
        macro[m], macro_n[m] = _mean([getattr(v, m) for v in vals])
    f1s = [v.f1 for v in vals if v.f1 is not None]
    s = Summary(
        neurons=len(units),
        items=total.n,
        micro=prf(total),
        macro=PRF(**macro),
        macro_n=macro_n,
        median_f1=float(np.median(f1s)) if f1s else None,
    )
    s.micro_mcc = mcc(total)
    s.macro_mcc, s.macro_mcc_n = _mean([mcc(per_unit[u]) for u in units])
    s.vacuous_micro = prf(vacuous(total))
    claim_all = [prf(vacuous(per_unit[u])) for u in units]
    s.vacuous_macro = PRF(**{m: _mean([getattr(v, m) for v in claim_all])[0] for m in METRICS})
    if n_boot > 0 and units:
        s.micro_ci, s.macro_ci = _bootstrap([per_unit[u] for u in units], n_boot, seed, ci)
    return s


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _f1(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        f = np.where(p + r > 0, 2 * p * r / np.where(p + r > 0, p + r, 1), 0.0)
    return np.where(np.isnan(p) | np.isnan(r), np.nan, f)


def _bootstrap(
    cs: list[Counts], n_boot: int, seed: int, ci: float
) -> tuple[dict[str, Interval], dict[str, Interval]]:
    tp = np.array([c.tp for c in cs], float)
    cl = np.array([c.claimed for c in cs], float)
    fi = np.array([c.fired for c in cs], float)
    p_u, r_u = _ratio(tp, cl), _ratio(tp, fi)
    unit_vals = {"precision": p_u, "recall": r_u, "f1": _f1(p_u, r_u)}
    idx = np.random.default_rng(seed).integers(0, len(cs), size=(n_boot, len(cs)))
    mp, mr = _ratio(tp[idx].sum(1), cl[idx].sum(1)), _ratio(tp[idx].sum(1), fi[idx].sum(1))
    micro = {"precision": mp, "recall": mr, "f1": _f1(mp, mr)}
    q = [(1 - ci) / 2 * 100, (1 + ci) / 2 * 100]

    def iv(x: np.ndarray) -> Interval:
        lo, hi = np.nanpercentile(x, q)
        return Interval(low=float(lo), high=float(hi))

    with warnings.catch_warnings():  # resamples where a metric is undefined everywhere
        warnings.simplefilter("ignore", RuntimeWarning)
        macro = {m: np.nanmean(v[idx], axis=1) for m, v in unit_vals.items()}
        return {m: iv(v) for m, v in micro.items()}, {m: iv(v) for m, v in macro.items()}


def evaluate(obs: Iterable[Observation], *, n_boot: int = 1000, seed: int = 0) -> Report:
    """Per neuron, pooled (micro / macro with intervals) and per group (e.g. layer)."""
    by_unit: dict[str, list[Observation]] = defaultdict(list)
    group_of: dict[str, str] = {}
    for o in obs:
        by_unit[o.unit].append(o)
        group_of[o.unit] = o.group
    per_unit = {u: counts(v) for u, v in by_unit.items()}
    groups: dict[str, dict[str, Counts]] = defaultdict(dict)
    for u, c in per_unit.items():
        groups[group_of[u]][u] = c
    return Report(
        overall=summarize(per_unit, n_boot=n_boot, seed=seed),
        per_neuron={u: prf(c) for u, c in per_unit.items()},
        per_neuron_counts=per_unit,
        per_group={
            g: summarize(cs, n_boot=n_boot, seed=seed)
            for g, cs in sorted(groups.items(), key=lambda kv: _group_key(kv[0]))
        },
    )


def _group_key(g: str) -> tuple[int, str]:
    return (int(g), "") if g.lstrip("-").isdigit() else (1 << 30, g)
