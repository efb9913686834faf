"""Mean ablation without a reference keeps each length's means per model (model.py): the kept
means give the outputs a fresh reference pass gives, for every length and seed, and are computed
once per seed and length."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from interp_harness.function_store.catalog import Catalog
from interp_harness.model_services.intervention.circuit_model import N_REFERENCE, CircuitModel


def default_draw(model: CircuitModel, lengths: set[int], seed: int) -> list[list]:
    """The references a call without any draws (N_REFERENCE per input length, from the seed and
    the length), given explicitly: the uncached path computes their means afresh."""
    return [
        x
        for n in sorted(lengths)
        for x in model.random_inputs(N_REFERENCE, n, seed + 7919 * (n + 1))
    ]


@pytest.fixture
def model(in_circuits_cache: Path):
    """sort/0's model on one torch thread (ten times faster than two on a busy 2-core machine;
    a process-wide setting, put back after)."""
    threads = torch.get_num_threads()
    spec = Catalog().get("circuits-lib/sort/0").hidden.spec
    yield CircuitModel.from_npz(spec["weights"], threads=1)
    torch.set_num_threads(threads)


def test_kept_means_equal_a_fresh_reference(
    model: CircuitModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    ablated = model.components()[:-1]  # all but the last: the outputs depend on the means
    rng = np.random.default_rng(0)
    pairs = [[int(t) for t in rng.choice(model.vocab, size=2)] for _ in range(6)]
    mixed = [[int(t) for t in rng.choice(model.vocab, size=n)] for n in range(1, 6)] * 3
    records = []
    record = model._record
    monkeypatch.setattr(model, "_record", lambda *a: records.append(1) or record(*a))

    def check(inputs: list[list[int]], seed: int) -> list[np.ndarray]:
        kept = model.output_scores(inputs, ablated, "mean", seed=seed)
        fresh = model.output_scores(
            inputs, ablated, "mean", default_draw(model, {len(x) for x in inputs}, seed), seed
        )
        for a, b in zip(kept, fresh, strict=True):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
        return kept

    # one length first, then every length: a cache keyed without the length fails here
    check(pairs, 5)
    by_seed = {s: check(mixed, s) for s in (5, 6)}
    # two seeds' draws give different outputs, so a cache keyed without the seed would fail
    assert any(not np.allclose(a, b) for a, b in zip(by_seed[5], by_seed[6], strict=True))
    records.clear()
    model.output_scores(mixed, ablated, "mean", seed=6)
    assert records == []  # every length's means of seed 6 were kept
    model.output_scores(mixed, ablated, "mean", seed=7)
    assert len(records) == 5  # a new seed: one reference pass per length
