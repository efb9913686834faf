"""The random models for speed checks: GPT-2 XL's and TinyLlama-1.1B's shapes from their configs,
their weights drawn on the device asked for and in the dtype asked for (a GPU never holds a
float32 copy; on the meta device nothing is allocated at all), seeded."""

from __future__ import annotations

import pytest
import torch

from interp_harness.model_services.intervention import model as model_mod


@pytest.mark.parametrize(
    ("name", "family", "shape"),
    [
        ("gpt2-xl-random", "gpt2", (48, 1600, 25, 25, 6400)),
        ("tinyllama-random", "llama", (22, 2048, 32, 4, 5632)),
        ("gpt2-small-random", "gpt2", (12, 768, 12, 12, 3072)),
    ],
)
def test_the_speed_check_shapes(name: str, family: str, shape: tuple[int, ...]) -> None:
    _, lm = model_mod.random_model(name, device="meta", dtype=torch.bfloat16)
    cfg = lm.config
    assert model_mod.FAMILIES[cfg.model_type] == family
    if family == "gpt2":
        got = (cfg.n_layer, cfg.n_embd, cfg.n_head, cfg.n_head, cfg.n_inner or 4 * cfg.n_embd)
    else:
        got = (
            cfg.num_hidden_layers,
            cfg.hidden_size,
            cfg.num_attention_heads,
            cfg.num_key_value_heads,
            cfg.intermediate_size,
        )
    assert got == shape
    assert {(p.device.type, p.dtype) for p in lm.parameters()} == {("meta", torch.bfloat16)}
    assert name in model_mod.RANDOM_MODELS


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_weights_are_drawn_in_the_dtype_and_seeded(dtype: torch.dtype) -> None:
    _, a = model_mod.random_model("llama-tiny-random", dtype=dtype)
    _, b = model_mod.random_model("llama-tiny-random", dtype=dtype)
    assert {p.dtype for p in a.parameters()} == {dtype}
    for (k, x), y in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y), k
    # the padding id is set after building: Llama would zero that embedding row otherwise
    eos = a.config.pad_token_id
    assert a.model.embed_tokens.weight[eos].abs().sum() > 0


def test_load_serves_half_precision_on_cpu() -> None:
    m = model_mod.load("gpt2-tiny-random", device="cpu", dtype="bfloat16")
    assert (m.device.type, m.dtype) == ("cpu", torch.bfloat16)
    assert {p.dtype for p in m.lm.parameters()} == {torch.bfloat16}
    ids = torch.tensor([[1, 2, 3]])
    with torch.inference_mode():
        assert m.lm(input_ids=ids).logits.dtype == torch.bfloat16
