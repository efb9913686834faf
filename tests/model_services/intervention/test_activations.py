"""/v1/activations against a plain forward pass, on tiny random GPT-2 and Llama models."""

from __future__ import annotations

import httpx
import pytest
import torch
from support import intervention_reference as reference

from interp_harness.model_services.intervention.model import COMPONENTS

# different lengths: rows are left-padded, and the token budget splits the batch
TEXTS = [
    "Paris is a city in the country of",
    "Tokyo",
    "A longer sentence, with some punctuation!",
    "ab",
]
TOL = 1e-4


@pytest.mark.parametrize("component", COMPONENTS)
def test_every_component_equals_a_plain_forward_pass(served, component):
    client, m = served
    layers = list(range(m.n_layers))
    resp = client.activations(
        {"texts": TEXTS, "component": component, "layers": layers, "positions": "all"}
    )
    assert len(resp.results) == len(TEXTS)
    for text, res in zip(TEXTS, resp.results, strict=True):
        n = len(m.tokenizer(text)["input_ids"])
        assert res.positions == list(range(n))
        for lv in res.layers:
            want = reference.activations(m, text, component, lv.layer)
            got = torch.tensor(lv.values)
            assert got.shape == want.shape == (n, m.width(component))
            assert torch.allclose(got, want, atol=TOL), (text, lv.layer, (got - want).abs().max())


def test_batched_equals_one_at_a_time(served):
    client, _ = served
    body = {"component": "mlp_activation", "layers": [1], "positions": "all"}
    batched = client.activations({**body, "texts": TEXTS}).results
    for text, b in zip(TEXTS, batched, strict=True):
        (alone,) = client.activations({**body, "texts": [text]}).results
        assert alone.positions == b.positions
        assert torch.allclose(
            torch.tensor(alone.layers[0].values), torch.tensor(b.layers[0].values), atol=TOL
        )


def test_positions_neurons_and_pooling(served):
    client, m = served
    text = TEXTS[0]
    full = torch.tensor(
        client.activations({"texts": [text], "component": "block_output", "layers": [0]})
        .results[0]
        .layers[0]
        .values
    )
    n = full.shape[0]
    tok = client.tokenize([text])[0]
    start = text.index("city")
    span = [i for i, (a, b) in enumerate(tok.offsets) if a < start + 4 and b > start]
    cases = [
        ("last", [n - 1]),
        ({"token_span": [2, 5]}, [2, 3, 4]),
        ({"tokens": [0, -1]}, [0, n - 1]),
        ({"char_span": [start, start + 4]}, span),
    ]
    for positions, want_pos in cases:
        for pooling in ("none", "max", "mean"):
            res = client.activations(
                {
                    "texts": [text],
                    "component": "block_output",
                    "layers": [0],
                    "neurons": [3, 1],
                    "positions": positions,
                    "pooling": pooling,
                }
            ).results[0]
            assert res.positions == want_pos
            want = full[want_pos][:, [3, 1]]
            if pooling == "max":
                want = want.max(0, keepdim=True).values
            elif pooling == "mean":
                want = want.mean(0, keepdim=True)
            assert torch.allclose(torch.tensor(res.layers[0].values), want, atol=1e-5), positions


def test_tokenize_offsets(served):
    client, m = served
    (tok,) = client.tokenize([TEXTS[2]])
    assert tok.ids == m.tokenizer(TEXTS[2])["input_ids"]
    assert "".join(TEXTS[2][a:b] for a, b in tok.offsets) == TEXTS[2]
    assert len(tok.tokens) == len(tok.ids)


def test_models_and_health(served):
    client, m = served
    info = client.model()
    assert (info.family, info.n_layers, info.hidden_size, info.mlp_width) == (
        m.family,
        m.n_layers,
        m.hidden_size,
        m.mlp_width,
    )
    assert info.device == "cpu" and info.dtype == "float32"
    assert httpx.get(client.settings.url + "/health").json()["status"] == "ok"
