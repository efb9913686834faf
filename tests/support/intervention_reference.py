"""Reference activations from a plain forward pass (module hooks, no padding, no pyvene)."""

from __future__ import annotations

from typing import Any

import torch


def _modules(m: Any, layer: int) -> dict[str, tuple[torch.nn.Module, str]]:
    if m.family == "gpt2":
        block = m.lm.transformer.h[layer]
        return {
            "block_input": (block, "in"),
            "block_output": (block, "out"),
            "attention_output": (block.attn.resid_dropout, "out"),
            "mlp_input": (block.mlp, "in"),
            "mlp_activation": (block.mlp.act, "out"),
            "mlp_output": (block.mlp, "out"),
        }
    block = m.lm.model.layers[layer]
    return {
        "block_input": (block, "in"),
        "block_output": (block, "out"),
        "attention_output": (block.self_attn, "out"),
        "mlp_input": (block.mlp, "in"),
        "mlp_activation": (block.mlp.act_fn, "out"),
        "mlp_output": (block.mlp, "out"),
    }


@torch.inference_mode()
def activations(m: Any, text: str, component: str, layer: int) -> torch.Tensor:
    """[tokens, width] of one text, read by a forward hook on the component's module."""
    module, where = _modules(m, layer)[component]
    got: list[torch.Tensor] = []

    def first(x: Any) -> torch.Tensor:
        return x[0] if isinstance(x, tuple) else x

    if where == "in":

        def pre(_mod: Any, args: tuple, kwargs: dict) -> None:
            got.append(args[0] if args else kwargs["hidden_states"])

        h = module.register_forward_pre_hook(pre, with_kwargs=True)
    else:
        h = module.register_forward_hook(lambda _m, _a, out: got.append(first(out)))
    try:
        ids = torch.tensor([m.tokenizer(text)["input_ids"]])
        out = m.lm(input_ids=ids, output_hidden_states=True)
    finally:
        h.remove()
    val = got[0][0].float()
    if component == "block_output" and layer < m.n_layers - 1:
        # the hook and output_hidden_states must agree (the last state is after the final norm)
        assert torch.allclose(val, out.hidden_states[layer + 1][0].float(), atol=1e-6)
    return val


@torch.inference_mode()
def next_logprobs(m: Any, text: str) -> torch.Tensor:
    ids = torch.tensor([m.tokenizer(text)["input_ids"]])
    return torch.log_softmax(m.lm(input_ids=ids).logits[0, -1].float(), -1)
