"""Every method trains on a small synthetic instance over a real (seeded random) Llama model and
exports a featurizer that (a) the service's registry accepts, (b) is bijective: F^-1(F(h)) = h,
and (c) interchanges exactly as the pyvene intervention the service builds from it."""

from __future__ import annotations

import pytest
import torch

from interp_harness.evaluator.ravel.methods import METHODS, Hyper, TrainContext
from interp_harness.evaluator.ravel.methods.featurize import (
    decode,
    encode,
    feature_dims,
    interchange,
)
from interp_harness.evaluator.ravel.methods.local import LocalModel
from interp_harness.function_store.ravel.data import load
from interp_harness.function_store.ravel.instances import BuildConfig, Instance, RavelExample, fill
from interp_harness.model_services.intervention import model as model_mod
from interp_harness.model_services.intervention.featurizers import FeaturizerRegistry
from interp_harness.model_services.intervention.model import COMPONENTS

ATTRS = ("Country", "Continent")
CITIES = ["Paris", "Tokyo", "Berlin", "Rome", "Cairo", "Lima", "Madrid", "Toronto"]
TOKENS = [" A", " B", " C", " D"]  # labels: single byte-level tokens


@pytest.fixture(scope="module")
def loaded() -> model_mod.LoadedModel:
    return model_mod.load("llama-tiny-random", device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def instance() -> Instance:
    d = load("city")
    assert all(c in d.attributes for c in CITIES)
    templates = {a: {s: d.templates(a, s)[:1] for s in ("train", "test")} for a in ATTRS}
    examples = []
    for a in ATTRS:
        t = templates[a]["train"][0]
        for i, e in enumerate(CITIES):
            e2 = CITIES[(i + 1) % len(CITIES)]
            examples.append(
                RavelExample(
                    input=fill(t, e), label=TOKENS[i % 4], source_input=fill(t, e2),
                    source_label=None, inv_label=TOKENS[(i + 1) % 4], split=t, source_split=t,
                    entity=e, source_entity=e2, attribute=a,
                )
            )  # fmt: skip
    return Instance(
        model="llama-tiny-random",
        config=BuildConfig(attributes=list(ATTRS)),
        attributes=list(ATTRS),
        templates=templates,
        entities={"train": CITIES, "test": []},
        outputs={},
        examples={"train": examples, "context_test": [], "entity_test": []},
    )


HYPER = Hyper(epochs=1, batch_size=4, das_dim=3, sae_latents=2, sae_steps=30, rlap_steps=5,
              rlap_rank=2, l1=0.001)  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("name", [m for m in METHODS if m != "full"])
def test_method_exports_a_bijective_featurizer(name, loaded, instance):
    ctx = TrainContext(LocalModel(loaded, 1), instance, "Country", HYPER)
    spec = METHODS[name](ctx)
    registry = FeaturizerRegistry({c: loaded.width(c) for c in COMPONENTS})
    served = registry.register(spec)  # shapes, orthonormality, finiteness
    dims = feature_dims(spec)
    assert served.feature_dims == dims and dims

    torch.manual_seed(0)
    h, s = torch.randn(5, loaded.hidden_size) * 3, torch.randn(5, loaded.hidden_size) * 3
    assert torch.allclose(decode(spec, encode(spec, h)), h, atol=1e-4)  # F^-1(F(h)) = h

    iv = served.intervention(torch.device("cpu"), torch.float32)
    with torch.no_grad():
        same = iv(
            h.clone(), h.clone(), subspaces=[dims] * len(h)
        )  # swapping a vector's features with its own
        moved = iv(h.clone(), s.clone(), subspaces=[dims] * len(h))  # Vanilla writes in place
    assert torch.allclose(same, h, atol=1e-4)
    assert torch.allclose(moved, interchange(spec, h, s), atol=1e-4)
    assert not torch.allclose(moved, h, atol=1e-3)  # it does move something


def test_dbm_mask_is_binary_and_das_rows_orthonormal(loaded, instance):
    ctx = TrainContext(LocalModel(loaded, 1), instance, "Country", HYPER)
    mask = encode(METHODS["dbm"](ctx), torch.eye(loaded.hidden_size))[0]
    assert torch.equal(mask, torch.eye(loaded.hidden_size))  # DBM's featurizer is the identity
    from interp_harness.model_services.intervention.featurizers import decode_arrays

    w = decode_arrays(METHODS["das"](ctx))["weight"]
    assert w.shape == (3, loaded.hidden_size)
    assert torch.allclose(w @ w.T, torch.eye(3), atol=1e-5)


def test_das_training_lowers_its_loss(loaded, instance):
    """The trainer optimises: a DAS subspace after training beats its initial one on the loss."""
    local = LocalModel(loaded, 1)
    ctx = TrainContext(
        local, instance, "Country", Hyper(epochs=6, batch_size=8, das_dim=8, das_lr=5e-2)
    )
    pairs = ctx.pairs(False)
    src = local.hidden([e.source_input for e, _ in pairs], [e.source_span() for e, _ in pairs])
    want = torch.tensor([ctx.first_token(lab) for _, lab in pairs])

    def loss_of(w: torch.Tensor) -> float:
        logits = local.next_token_logits(
            [e.input for e, _ in pairs], [e.base_span() for e, _ in pairs], src,
            lambda b, s: b + ((s - b) @ w.T) @ w,
        )  # fmt: skip
        return torch.nn.functional.cross_entropy(logits, want).item()

    from interp_harness.model_services.intervention.featurizers import decode_arrays

    torch.manual_seed(0)
    init = torch.nn.utils.parametrizations.orthogonal(
        torch.nn.Linear(loaded.hidden_size, 8, bias=False)
    ).weight.detach()
    trained = decode_arrays(METHODS["das"](ctx))["weight"]
    assert loss_of(trained) < loss_of(init)
