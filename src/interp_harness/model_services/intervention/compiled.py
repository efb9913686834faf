"""A compiled transformer (tracr's architecture) as a torch module, loaded from a plain `.npz`.

The architecture is the one tracr assembles: token and position embeddings added, then per
layer a multi-head attention (no causal mask, logits scaled by 1/sqrt(key size), no layer norm)
and a ReLU MLP, each added to the residual stream; the output is the residual read through a
fixed unembedding (categorical: one score per output value, the argmax decodes; numerical: one
value). Position 0 holds the BOS token the compiler's programs rely on.

Module names follow GPT-2's layout (`h[l].attn.c_proj`, `h[l].attn.attn_dropout`, `h[l].mlp`)
so that pyvene's abstract sites map onto it the way they map onto GPT-2: `register_pyvene()`
adds the class to pyvene's type-to-module and type-to-dimension mappings (heads are split from
`c_proj`'s input with `n_head`, as for GPT-2). Nothing here imports the rest of the harness, and
no name of a compiled program's variables is in the file: only weights, the token list and the
output values.

The `.npz` layout (every array float64 unless said):
- `token_embed` [n_tokens, d], `pos_embed` [max_len + 1, d], `unembed` [d, n_out];
- per layer `l`: `l{l}.q`, `l{l}.k`, `l{l}.v` [d, n_heads * key_size], `l{l}.o`
  [n_heads * key_size, d], `l{l}.mlp1` [d, hidden], `l{l}.mlp1_b` [hidden], `l{l}.mlp2`
  [hidden, d], `l{l}.mlp2_b` [d];
- `meta`: a 0-d string array holding `CompiledMeta` as JSON.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, BinaryIO, Literal

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict
from torch import nn

Value = str | int | float | bool


class CompiledMeta(BaseModel):
    """The shape and the token / output vocabularies of one compiled model."""

    model_config = ConfigDict(extra="forbid")

    tokens: list[Value]  # token index -> token (the input vocabulary plus bos and pad)
    bos: str
    pad: str
    vocab: list[Value]  # the input vocabulary the program accepts
    max_len: int  # longest input, BOS not counted
    n_layers: int
    n_heads: int  # heads per layer (padding heads included)
    key_size: int
    mlp_hidden: int
    output_kind: Literal["categorical", "numerical"]
    output_values: list[Value] = []  # categorical: output index -> value


class CompiledConfig:
    """The attributes pyvene reads from a model's config (sizes by name)."""

    def __init__(self, meta: CompiledMeta, d_model: int) -> None:
        self.n_head = meta.n_heads
        self.n_layer = meta.n_layers
        self.key_size = meta.key_size
        self.n_embd = d_model
        self.d_model = d_model
        self.mlp_hidden = meta.mlp_hidden
        self.head_width = meta.n_heads * meta.key_size
        self.max_position_embeddings = meta.max_len + 1


class _Linear(nn.Module):
    """x @ w + b with the weight stored as [in, out] (tracr's and the file's layout)."""

    def __init__(self, w: torch.Tensor, b: torch.Tensor | None = None) -> None:
        super().__init__()
        self.weight = nn.Parameter(w, requires_grad=False)
        self.bias = None if b is None else nn.Parameter(b, requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x @ self.weight
        return y if self.bias is None else y + self.bias


class Attention(nn.Module):
    def __init__(self, q, k, v, o, n_heads: int, key_size: int) -> None:  # noqa: ANN001
        super().__init__()
        self.n_heads, self.key_size = n_heads, key_size
        self.q, self.k, self.v = _Linear(q), _Linear(k), _Linear(v)
        self.c_proj = _Linear(o)  # its input is the heads' outputs side by side: a hook site
        self.attn_dropout = nn.Identity()  # its input is the attention pattern: a hook site

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        h, k = self.n_heads, self.key_size
        q = self.q(x).view(b, t, h, k)
        kk = self.k(x).view(b, t, h, k)
        v = self.v(x).view(b, t, h, k)
        logits = torch.einsum("bqhd,bkhd->bhqk", q, kk) / math.sqrt(k)
        # padded keys of a shorter input in the batch: as if absent (tracr runs one input)
        logits = logits.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        pattern = self.attn_dropout(torch.softmax(logits, dim=-1))
        z = torch.einsum("bhqk,bkhd->bqhd", pattern, v).reshape(b, t, h * k)
        return self.c_proj(z)


class MLP(nn.Module):
    def __init__(self, w1, b1, w2, b2) -> None:  # noqa: ANN001
        super().__init__()
        self.c_fc = _Linear(w1, b1)
        self.act = nn.ReLU()
        self.c_proj = _Linear(w2, b2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.act(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, attn: Attention, mlp: MLP) -> None:
        super().__init__()
        self.attn, self.mlp = attn, mlp
        self.resid_mid = nn.Identity()  # the residual between attention and MLP: a hook site

    def forward(self, x: torch.Tensor, key_mask: torch.Tensor) -> torch.Tensor:
        x = self.resid_mid(x + self.attn(x, key_mask))
        return x + self.mlp(x)


class CompiledTransformer(nn.Module):
    """tracr's forward pass in torch. `forward(tokens [B, T], mask [B, T])` -> output-space
    scores [B, T, n_out] (numerical: n_out = 1). Position 0 of every row is BOS."""

    def __init__(self, arrays: dict[str, np.ndarray], meta: CompiledMeta) -> None:
        super().__init__()
        self.meta = meta

        def t(name: str) -> torch.Tensor:
            return torch.from_numpy(np.asarray(arrays[name], dtype=np.float64).copy())

        self.wte = nn.Parameter(t("token_embed"), requires_grad=False)
        self.wpe = nn.Parameter(t("pos_embed"), requires_grad=False)
        self.unembed = nn.Parameter(t("unembed"), requires_grad=False)
        d = self.wte.shape[1]
        self.config = CompiledConfig(meta, d)
        self.h = nn.ModuleList(
            Block(
                Attention(
                    t(f"l{i}.q"),
                    t(f"l{i}.k"),
                    t(f"l{i}.v"),
                    t(f"l{i}.o"),
                    meta.n_heads,
                    meta.key_size,
                ),
                MLP(t(f"l{i}.mlp1"), t(f"l{i}.mlp1_b"), t(f"l{i}.mlp2"), t(f"l{i}.mlp2_b")),
            )
            for i in range(meta.n_layers)
        )
        self.embed_out = nn.Identity()  # the residual before layer 0: a hook site

    @property
    def d_model(self) -> int:
        return int(self.wte.shape[1])

    @property
    def device(self) -> torch.device:  # pyvene reads the model's device
        return self.wte.device

    def residual(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(tokens.shape[1], device=tokens.device)
        x = self.embed_out(self.wte[tokens] + self.wpe[pos][None])
        for block in self.h:
            x = block(x, mask)
        return x

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        if mask is None:
            mask = torch.ones_like(tokens, dtype=torch.bool)
        return self.residual(tokens, mask) @ self.unembed


def save_npz(path: Path, arrays: dict[str, np.ndarray], meta: CompiledMeta) -> None:
    """Write the weights and meta (atomically: a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez_compressed(tmp, meta=np.array(meta.model_dump_json()), **arrays)
    tmp.replace(path)


def load_npz(path: str | Path | BinaryIO) -> tuple[dict[str, np.ndarray], CompiledMeta]:
    """The arrays and meta of a `.npz` written by `save_npz`, from a file or its bytes (no
    pickles are read)."""
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files if k != "meta"}
        meta = CompiledMeta.model_validate(json.loads(str(f["meta"])))
    return arrays, meta


def load_model(path: str | Path, device: str | torch.device = "cpu") -> CompiledTransformer:
    arrays, meta = load_npz(path)
    return CompiledTransformer(arrays, meta).to(device).eval()


# ---- pyvene: the sites, as its GPT-2 mapping names them ----------------------------------------

PYVENE_SITES: dict[
    str, tuple[Any, ...]
] = {}  # filled by register_pyvene (needs pyvene's constants)

PYVENE_DIMENSIONS: dict[str, tuple[str, ...]] = {
    "n_head": ("n_head",),
    "block_input": ("n_embd",),
    "block_output": ("n_embd",),
    "mlp_input": ("n_embd",),
    "mlp_output": ("n_embd",),
    "mlp_activation": ("mlp_hidden",),
    "attention_input": ("n_embd",),
    "attention_output": ("n_embd",),
    "attention_value_output": ("head_width",),
    "head_attention_value_output": ("key_size",),
    "attention_weight": ("max_position_embeddings",),
}


def register_pyvene() -> None:
    """Add `CompiledTransformer` to pyvene's type-to-module and type-to-dimension mappings (as
    pyvene declares GPT-2's), so `IntervenableModel` accepts it. Idempotent."""
    from pyvene.models import intervenable_modelcard as card
    from pyvene.models.constants import CONST_INPUT_HOOK, CONST_OUTPUT_HOOK
    from pyvene.models.modeling_utils import split_head_and_permute

    PYVENE_SITES.update(
        {
            "block_input": ("h[%s]", CONST_INPUT_HOOK),
            "block_output": ("h[%s]", CONST_OUTPUT_HOOK),
            "mlp_input": ("h[%s].mlp", CONST_INPUT_HOOK),
            "mlp_output": ("h[%s].mlp", CONST_OUTPUT_HOOK),
            "mlp_activation": ("h[%s].mlp.act", CONST_OUTPUT_HOOK),
            "attention_input": ("h[%s].attn", CONST_INPUT_HOOK),
            "attention_output": ("h[%s].attn", CONST_OUTPUT_HOOK),
            "attention_value_output": ("h[%s].attn.c_proj", CONST_INPUT_HOOK),
            "head_attention_value_output": (
                "h[%s].attn.c_proj",
                CONST_INPUT_HOOK,
                (split_head_and_permute, "n_head"),
            ),
            "attention_weight": ("h[%s].attn.attn_dropout", CONST_INPUT_HOOK),
        }
    )
    card.type_to_module_mapping[CompiledTransformer] = PYVENE_SITES
    card.type_to_dimension_mapping[CompiledTransformer] = PYVENE_DIMENSIONS
