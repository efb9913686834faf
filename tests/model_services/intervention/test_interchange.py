"""/v1/interchange, /v1/generate and featurizers on tiny random GPT-2 and Llama models."""

from __future__ import annotations

import httpx
import pytest
import torch
from support import intervention_reference as reference

from interp_harness.model_services.intervention.featurizers import encode_array

BASE = "Paris is a city in the country of"
SOURCE = "Tokyo is a town in the nations of"  # same length in bytes: every position aligns
assert len(BASE) == len(SOURCE)


def _lp(cont) -> dict[int, float]:
    return {t.id: t.logprob for t in cont.top}


def test_source_equal_to_base_changes_nothing(served):
    client, m = served
    sites = [
        {"layer": 1, "component": "block_output", "base_positions": "all"},
        {"layer": 0, "component": "mlp_activation", "base_positions": "last", "neurons": [0, 5]},
    ]
    res = client.interchange(
        {"examples": [{"base": BASE, "sources": [BASE]}], "sites": sites, "top_k": 5}
    ).results[0]
    assert res.intervened.ids == res.original.ids
    for k, v in _lp(res.original).items():
        assert _lp(res.intervened)[k] == pytest.approx(v, abs=1e-5)


@pytest.mark.parametrize("component", ["block_input", "block_output"])
def test_whole_residual_interchange_reproduces_the_source(served, component):
    client, m = served
    want = reference.next_logprobs(m, SOURCE)
    for layer in range(m.n_layers):
        site = {"layer": layer, "component": component, "base_positions": "all"}
        res = client.interchange(
            {"examples": [{"base": BASE, "sources": [SOURCE]}], "sites": [site], "top_k": 5}
        ).results[0]
        assert res.intervened.ids == [int(want.argmax())]
        for k, v in _lp(res.intervened).items():
            assert v == pytest.approx(float(want[k]), abs=1e-4), layer
        assert res.original.ids == [int(reference.next_logprobs(m, BASE).argmax())]


def test_neuron_set_interchange_changes_only_those_neurons(served):
    client, m = served
    neurons = [1, 7, 20]
    layer, comp = 1, "mlp_activation"

    def read(text: str) -> torch.Tensor:
        r = client.activations(
            {"texts": [text], "component": comp, "layers": [layer], "positions": "last"}
        )
        return torch.tensor(r.results[0].layers[0].values[0])

    base, source = read(BASE), read(SOURCE)
    res = client.interchange(
        {
            "examples": [{"base": BASE, "sources": [SOURCE]}],
            "sites": [
                {"layer": layer, "component": comp, "base_positions": "last", "neurons": neurons}
            ],
            "read": {"layer": layer, "component": comp, "positions": "last"},
        }
    ).results[0]
    after = torch.tensor(res.read[0])
    others = [i for i in range(m.width(comp)) if i not in neurons]
    assert torch.allclose(after[neurons], source[neurons], atol=1e-5)
    assert torch.allclose(after[others], base[others], atol=1e-5)
    assert not torch.allclose(base[neurons], source[neurons], atol=1e-3)  # the swap did something


def test_batched_multi_source_and_ablation_equal_one_at_a_time(served):
    client, _ = served
    examples = [
        {"base": BASE, "sources": [SOURCE, "x"]},
        {"base": "ab", "sources": ["Berlin is in", "yz"]},
        {"base": SOURCE, "sources": [BASE, "hello there"]},
    ]
    sites = [
        {"layer": 1, "component": "block_output", "base_positions": "last", "source": 0},
        {"layer": 2, "component": "mlp_output", "base_positions": "last", "source": 1},
        {
            "layer": 0,
            "component": "attention_output",
            "base_positions": {"tokens": [0]},
            "op": "zero",
        },
        {"layer": 0, "component": "mlp_activation", "op": "mean", "neurons": [2, 3]},
    ]
    body = {"sites": sites, "top_k": 3, "mean_texts": ["one text", "another"]}
    batched = client.interchange({**body, "examples": examples}).results
    for ex, b in zip(examples, batched, strict=True):
        (alone,) = client.interchange({**body, "examples": [ex]}).results
        assert alone.intervened.ids == b.intervened.ids
        for k, v in _lp(alone.intervened).items():
            assert _lp(b.intervened)[k] == pytest.approx(v, abs=1e-4)


def test_generation_and_multi_token_interchange(served):
    client, m = served
    prompts = [BASE, "ab", SOURCE]
    gen = client.generate({"prompts": prompts, "max_new_tokens": 4}).results
    for p, g in zip(prompts, gen, strict=True):
        ids = m.tokenizer(p)["input_ids"]
        with torch.inference_mode():
            out = m.lm.generate(torch.tensor([ids]), max_new_tokens=4, do_sample=False)
        assert g.ids == out[0, len(ids) :].tolist()
    # first generated token equals the one-token (forward) reply, with and without intervention
    site = {"layer": 1, "component": "block_output", "base_positions": "last"}
    ex = [{"base": BASE, "sources": [SOURCE]}, {"base": "ab", "sources": ["xyz"]}]
    one = client.interchange({"examples": ex, "sites": [site]}).results
    three = client.interchange({"examples": ex, "sites": [site], "max_new_tokens": 3}).results
    for a, b in zip(one, three, strict=True):
        assert b.intervened.ids[0] == a.intervened.ids[0]
        assert b.original.ids[0] == a.original.ids[0]
        assert len(b.intervened.ids) == 3


def test_rotation_featurizer(served):
    client, m = served
    n = m.hidden_size
    q, _ = torch.linalg.qr(torch.randn(n, n, generator=torch.Generator().manual_seed(1)))
    spec = {"kind": "rotation", "component": "block_output", "replace": True}
    client.register_featurizer({**spec, "id": "rot", "arrays": {"weight": encode_array(q)}})
    client.register_featurizer(
        {**spec, "id": "eye", "arrays": {"weight": encode_array(torch.eye(n))}}
    )
    # F^-1(F(h)) = h: swapping all rotated dims equals the vanilla whole-vector interchange
    ex = [{"base": BASE, "sources": [SOURCE]}]
    base_site = {"layer": 1, "component": "block_output", "base_positions": "last"}
    vanilla = client.interchange({"examples": ex, "sites": [base_site], "top_k": 5}).results[0]
    for fid in ("rot", "eye"):
        site = {**base_site, "featurizer": {"id": fid}}
        r = client.interchange({"examples": ex, "sites": [site], "top_k": 5}).results[0]
        assert r.intervened.ids == vanilla.intervened.ids
        for k, v in _lp(vanilla.intervened).items():
            assert _lp(r.intervened)[k] == pytest.approx(v, abs=1e-4), fid
    # swapping no rotated dim of the source's own value: a rotation of the base round-trips
    site = {**base_site, "featurizer": {"id": "rot", "dims": [0, 1]}}
    same = client.interchange(
        {"examples": [{"base": BASE, "sources": [BASE]}], "sites": [site], "top_k": 5}
    ).results[0]
    for k, v in _lp(same.original).items():
        assert _lp(same.intervened)[k] == pytest.approx(v, abs=1e-4)
    # identity rotation on some dims == vanilla on those neurons
    dims = [0, 3, 9]
    a = client.interchange(
        {
            "examples": ex,
            "sites": [{**base_site, "featurizer": {"id": "eye", "dims": dims}}],
            "top_k": 5,
        }
    ).results[0]
    b = client.interchange(
        {"examples": ex, "sites": [{**base_site, "neurons": dims}], "top_k": 5}
    ).results[0]
    for k, v in _lp(b.intervened).items():
        assert _lp(a.intervened)[k] == pytest.approx(v, abs=1e-4)
    ids = [f.id for f in client.featurizers()]
    assert {"rot", "eye"} <= set(ids)


@pytest.mark.parametrize(
    "body, needle",
    [
        ({"sites": [{"layer": 99, "component": "block_output"}]}, "layer 99"),
        ({"sites": [{"layer": 0, "component": "block_outputs"}]}, "component"),
        ({"sites": [{"layer": 0, "component": "mlp_activation", "neurons": [10**6]}]}, "neurons"),
        (
            {"sites": [{"layer": 0, "component": "block_output", "featurizer": {"id": "nope"}}]},
            "unknown featurizer",
        ),
        ({"sites": [{"layer": 0, "component": "block_output", "source": 3}]}, "source 3"),
        (
            {
                "sites": [
                    {
                        "layer": 0,
                        "component": "block_output",
                        "base_positions": {"char_span": [500, 501]},
                    }
                ]
            },
            "char_span",
        ),
        (
            {
                "sites": [
                    {
                        "layer": 0,
                        "component": "block_output",
                        "base_positions": "all",
                        "source_positions": "last",
                    }
                ]
            },
            "source positions",
        ),
    ],
)
def test_bad_requests_are_400_with_a_message(served, body, needle):
    client, _ = served
    url = client.settings.api_base + "/interchange"
    r = httpx.post(url, json={"examples": [{"base": BASE, "sources": [SOURCE]}], **body})
    assert r.status_code == 400, r.text
    assert needle in r.json()["error"]["message"]
    # and the server keeps serving
    assert client.model().n_layers > 0


def test_bad_featurizer_and_activation_requests(served):
    client, m = served
    api = client.settings.api_base

    def rotation(weight: torch.Tensor) -> httpx.Response:
        body = {"id": "bad", "kind": "rotation", "component": "block_output"}
        return httpx.post(
            api + "/featurizers", json=body | {"arrays": {"weight": encode_array(weight)}}
        )

    r = rotation(torch.ones(2, m.hidden_size))  # not orthonormal
    assert r.status_code == 400 and "orthonormal" in r.json()["error"]["message"]
    r = rotation(torch.eye(3))  # the wrong size
    assert r.status_code == 400 and "rotation weight" in r.json()["error"]["message"]
    r = httpx.post(
        api + "/activations",
        json={"texts": ["a"] * 5000, "component": "block_output", "layers": [0]},
    )
    assert r.status_code == 400 and "at most" in r.json()["error"]["message"]
    r = httpx.post(
        api + "/activations", json={"texts": [""], "component": "block_output", "layers": [0]}
    )
    assert r.status_code == 400 and "no tokens" in r.json()["error"]["message"]
