"""The probe on synthetic data where the answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from interp_harness.evaluator.neurons import probe as P
from interp_harness.evaluator.token_activations import observational as O


def _data(seed: int = 0, n: int = 400) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 32))
    y = (X[:, 3] + X[:, 7] > 0).astype(int)  # membership = a linear function of neurons 3 and 7
    return X, y


def test_logistic_probe_recovers_the_direction():
    X, y = _data()
    f = P.fit_logistic(X[:, [3, 7]], y.astype(float))
    acc = ((f(X[:, [3, 7]]) > 0) == y).mean()
    assert acc > 0.97


def test_correlation_selector_finds_the_two_neurons_and_the_probe_scores_near_1():
    X, y = _data()
    sel = P.CorrelationSelector()
    assert sorted(sel.select(X, y, 2, np.random.default_rng(0))) == [3, 7]
    f1 = O.prf(P.probe_counts(X, y, sel, 2)).f1
    assert f1 > 0.95
    # one of the two neurons alone, thresholded at 0, explains half the variance: F1 ≈ 0.75
    one = O.prf(P.probe_counts(X, y, sel, 1, probe=False)).f1
    assert 0.6 < one < 0.9


def test_random_neurons_stay_near_chance_and_similarity_uses_explanations():
    X, y = _data()
    rand = P.RandomSelector()
    cols = [c for c in range(32) if c not in (3, 7)]
    f1 = O.prf(P.probe_counts(X[:, cols], y, rand, 4, seed=1)).f1
    assert f1 < 0.75  # noise neurons: about chance (F1 of a coin flip on balanced classes ~0.5)
    expl = ["numbers and digits"] * 32
    expl[3], expl[7] = "the word then and next", "words meaning subsequently, then"
    sim = P.SimilaritySelector('"then" and words meaning next', expl)
    assert sorted(sim.select(X, y, 2, np.random.default_rng(0))) == [3, 7]


def test_lexical_similarity_by_hand():
    s = P.lexical_similarity("red apple", ["red apple", "green pear", "red car"])
    assert s[0] == pytest.approx(1.0)
    assert s[1] == 0.0
    assert 0 < s[2] < 1
