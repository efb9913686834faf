"""Featurizers trained on counterfactual pairs (RAVEL's methods): DAS (an orthonormal k×n subspace,
x' = x + R^T R (s - x)) and DBM (a mask m, soft swap sigmoid(m/T) during training, hard > 0.5
after). The multi-task versions (MDAS, MDBM) also train the other attributes' pairs to keep their
label. Loss: cross-entropy of the label's first token after the intervened prompt (one output
token, as RAVEL's default `max_new_tokens` = 1)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from interp_harness.evaluator.ravel.methods.context import TrainContext
from interp_harness.evaluator.ravel.methods.featurize import mask_spec, rotation_spec
from interp_harness.model_services.intervention.schemas import FeaturizerSpec

Edit = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _train(
    ctx: TrainContext,
    multitask: bool,
    params: list[torch.nn.Parameter],
    lr: float,
    edit_at: Callable[[float], Edit],
    penalty: Callable[[float], torch.Tensor] | None = None,
) -> None:
    """Optimise `params` over the pairs; `edit_at(progress)` and `penalty(progress)` may depend on
    how far training is (0 → 1), for DBM's temperature schedule."""
    pairs = ctx.pairs(multitask)
    src = ctx.local.hidden([e.source_input for e, _ in pairs], [e.source_span() for e, _ in pairs])
    want = torch.tensor([ctx.first_token(lab) for _, lab in pairs])
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    bs, steps = ctx.hyper.batch_size, 0
    total = ctx.hyper.epochs * -(-len(pairs) // bs)
    for _ in range(ctx.hyper.epochs):
        for i in range(0, len(pairs), bs):
            chunk = pairs[i : i + bs]
            frac = steps / max(1, total - 1)
            logits = ctx.local.next_token_logits(
                [e.input for e, _ in chunk],
                [e.base_span() for e, _ in chunk],
                src[i : i + bs],
                edit_at(frac),
            )
            loss = torch.nn.functional.cross_entropy(logits, want[i : i + bs])
            if penalty is not None:
                loss = loss + penalty(frac)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1


def das(ctx: TrainContext, multitask: bool = False) -> FeaturizerSpec:
    torch.manual_seed(ctx.hyper.seed)
    n = ctx.local.m.hidden_size
    lin = torch.nn.utils.parametrizations.orthogonal(
        torch.nn.Linear(n, ctx.hyper.das_dim, bias=False)
    )

    def edit(b: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
        r = lin.weight  # k×n, orthonormal rows
        return b + ((s - b) @ r.T) @ r

    _train(ctx, multitask, list(lin.parameters()), ctx.hyper.das_lr, lambda _f: edit)
    name = "mdas" if multitask else "das"
    with torch.no_grad():
        w = lin.weight.detach().clone()
    return rotation_spec(f"ravel-{name}-{ctx.target}-l{ctx.layer}", w, ctx.layer, None)


def dbm(ctx: TrainContext, multitask: bool = False) -> FeaturizerSpec:
    n = ctx.local.m.hidden_size
    m = torch.nn.Parameter(torch.zeros(n))
    t0, t1 = ctx.hyper.dbm_temperature

    def temp(frac: float) -> float:
        return t0 + (t1 - t0) * frac

    def edit_at(frac: float) -> Edit:
        return lambda b, s: b + torch.sigmoid(m / temp(frac)) * (s - b)

    def penalty(frac: float) -> torch.Tensor:
        return ctx.hyper.dbm_l1 * torch.sigmoid(m / temp(frac)).sum()

    _train(ctx, multitask, [m], ctx.hyper.dbm_lr, edit_at, penalty)
    soft = torch.sigmoid(m.detach() / t1)
    hard = (soft > 0.5).float()
    if hard.sum() == 0:  # nothing selected: keep the strongest dim rather than an empty swap
        hard[soft.argmax()] = 1.0
    name = "mdbm" if multitask else "dbm"
    return mask_spec(f"ravel-{name}-{ctx.target}-l{ctx.layer}", hard, ctx.layer)
