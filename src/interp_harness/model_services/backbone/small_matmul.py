"""A faster CPU path for linear layers applied to a few rows (decoding).

`torch.nn.functional.linear(x, W)` computes x @ Wᵀ; for a handful of rows MKL then takes longer
than reading the weights needs. Measured on this project's 2-core EPYC with SmolLM2-135M (0.5 GB
of float32 weights): a decode forward pass took 65 ms for one token and 108 ms for two; computing
W @ xᵀ instead, with a lone row doubled (one-row products take a slower route), took 45 and 60 ms,
with the same values to float32 rounding. Above 4 rows the gain fades (8 rows were slower), and
prefill keeps the usual path.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F


def use_small_row_matmul(model: Any, max_rows: int = 4) -> int:
    """Route every `nn.Linear` of `model` through `_forward`; returns how many were changed."""
    n = 0
    for mod in model.modules():
        if isinstance(mod, torch.nn.Linear) and not getattr(mod, "_small_rows", False):
            mod.forward = _forward.__get__(mod)
            mod._small_rows = max_rows
            n += 1
    return n


def _forward(self: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    rows = x.reshape(-1, x.shape[-1])
    m = rows.shape[0]
    if m > self._small_rows or x.dtype != self.weight.dtype:
        return F.linear(x, self.weight, self.bias)
    if m == 1:
        rows = rows.repeat(2, 1)
    y = (self.weight @ rows.T).T[:m]
    if self.bias is not None:
        y = y + self.bias
    return y.reshape(*x.shape[:-1], self.weight.shape[0])
