"""The multi-neuron reading of an explanation (Huang et al. 2023): replace a(q) by
f([a_0(q), ..., a_N(q)]) with f(x) = w·x + b a linear probe, and score P/R/F1 with "fires" ⇔
f(q) > 0. N ∈ {1, 2, 4, 16} neurons are chosen by a pluggable `Selector`:
- `SimilaritySelector`: the N neurons whose explanations are most similar to E (the paper's
  method); the similarity is pluggable (an embedding model when configured, `lexical_similarity`
  offline: TF-IDF cosine);
- `RandomSelector`: N neurons of the same layer at random (the paper's baseline);
- `CorrelationSelector`: the N neurons whose activations correlate most with membership in ⟦E⟧ on
  the training fold (an offline oracle-ish upper reference, usable where no explanations exist).
Probes are L2-regularised logistic regressions (numpy, Newton steps), fitted and evaluated by
k-fold cross-validation over the explanation's test items; selectors that look at labels see the
training fold only.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from interp_harness.evaluator.token_activations import observational as O

NS = (1, 2, 4, 16)


def fit_logistic(
    X: np.ndarray, y: np.ndarray, l2: float = 1e-2, iters: int = 50
) -> Callable[[np.ndarray], np.ndarray]:
    """Returns f(X) = w·x + b (the logit). Features are standardised on the training data."""
    mu, sd = X.mean(0), X.std(0)
    sd = np.where(sd > 1e-8, sd, 1.0)
    Z = np.hstack([(X - mu) / sd, np.ones((len(X), 1))])
    w = np.zeros(Z.shape[1])
    reg = np.full(Z.shape[1], l2)
    reg[-1] = 0.0  # no penalty on the bias
    for _ in range(iters):
        p = 1 / (1 + np.exp(-np.clip(Z @ w, -30, 30)))
        grad = Z.T @ (p - y) + reg * w
        H = (Z * (p * (1 - p))[:, None]).T @ Z + np.diag(reg + 1e-9)
        step = np.linalg.solve(H, grad)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return lambda Xn: np.hstack([(Xn - mu) / sd, np.ones((len(Xn), 1))]) @ w


class Selector(Protocol):
    name: str

    def select(
        self, X: np.ndarray, y: np.ndarray, n: int, rng: np.random.Generator
    ) -> list[int]: ...


class RandomSelector:
    name = "random"

    def select(self, X: np.ndarray, y: np.ndarray, n: int, rng: np.random.Generator) -> list[int]:
        return [int(i) for i in rng.choice(X.shape[1], size=min(n, X.shape[1]), replace=False)]


class CorrelationSelector:
    name = "correlation"

    def select(self, X: np.ndarray, y: np.ndarray, n: int, rng: np.random.Generator) -> list[int]:
        Xc, yc = X - X.mean(0), y - y.mean()
        den = np.sqrt((Xc**2).sum(0) * (yc**2).sum()) + 1e-12
        r = (Xc * yc[:, None]).sum(0) / den
        return [int(i) for i in np.argsort(-r, kind="stable")[:n]]


_WORD = re.compile(r"[a-z0-9]+")


def lexical_similarity(query: str, docs: Sequence[str]) -> np.ndarray:
    """TF-IDF cosine similarity of `query` to each of `docs` (offline stand-in for embeddings)."""
    toks = [Counter(_WORD.findall(d.lower())) for d in docs]
    q = Counter(_WORD.findall(query.lower()))
    df = Counter(w for t in toks for w in t)
    n = len(docs) + 1
    idf = {w: math.log(n / (1 + df.get(w, 0))) + 1 for w in set(df) | set(q)}

    def vec(c: Counter) -> dict[str, float]:
        return {w: f * idf[w] for w, f in c.items()}

    qv = vec(q)
    qn = math.sqrt(sum(v * v for v in qv.values())) or 1.0
    out = []
    for t in toks:
        dv = vec(t)
        dn = math.sqrt(sum(v * v for v in dv.values())) or 1.0
        out.append(sum(qv.get(w, 0.0) * v for w, v in dv.items()) / (qn * dn))
    return np.array(out)


class SimilaritySelector:
    """Columns ranked by the similarity of their neuron's explanation to E."""

    name = "explanation similarity"

    def __init__(
        self,
        explanation: str,
        column_explanations: Sequence[str],
        similarity: Callable[[str, Sequence[str]], np.ndarray] = lexical_similarity,
    ) -> None:
        sims = similarity(explanation, column_explanations)
        self.order = [int(i) for i in np.argsort(-sims, kind="stable")]

    def select(self, X: np.ndarray, y: np.ndarray, n: int, rng: np.random.Generator) -> list[int]:
        return self.order[:n]


def _folds(y: np.ndarray, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Stratified folds: both classes in every fold when possible."""
    idx = [rng.permutation(np.flatnonzero(y == c)) for c in (0, 1)]
    return [np.concatenate([ix[f::k] for ix in idx]) for f in range(k)]


def probe_counts(
    X: np.ndarray,
    y: np.ndarray,
    selector: Selector,
    n: int,
    *,
    probe: bool = True,
    folds: int = 2,
    seed: int = 0,
    unit: str = "e",
) -> O.Counts:
    """Cross-validated counts of one explanation: in ⟦E⟧ = y, fires = f(q) > 0 (probe) or
    a(q) > 0 for the first selected neuron (no probe)."""
    rng = np.random.default_rng(seed)
    fires = np.zeros(len(y), bool)
    for test in _folds(y, folds, rng):
        train = np.setdiff1d(np.arange(len(y)), test)
        cols = selector.select(X[train], y[train], n, rng)
        if not probe:
            fires[test] = X[test, cols[0]] > 0
        elif len(set(y[train].tolist())) < 2:
            fires[test] = bool(y[train][0]) if len(train) else False
        else:
            f = fit_logistic(X[train][:, cols], y[train].astype(float))
            fires[test] = f(X[test][:, cols]) > 0
    return O.counts(O.Observation(unit, bool(a), bool(b)) for a, b in zip(y, fires, strict=True))
