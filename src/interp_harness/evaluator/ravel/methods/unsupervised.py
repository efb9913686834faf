"""Featurizers learned from entity representations, without counterfactuals, as RAVEL's: PCA
and a sparse autoencoder (features chosen by an L1 classifier of the attribute), and RLAP (R-LACE's
linear adversarial projection: the subspace whose removal stops a probe reading the attribute)."""

from __future__ import annotations

import torch

from interp_harness.evaluator.ravel.methods.context import TrainContext
from interp_harness.evaluator.ravel.methods.featurize import autoencoder_spec, rotation_spec
from interp_harness.evaluator.ravel.methods.select import l1_select
from interp_harness.model_services.intervention.schemas import FeaturizerSpec


def pca(ctx: TrainContext) -> FeaturizerSpec:
    """Principal components of the centred representations (an orthonormal rotation; RAVEL also
    z-scores each dimension first, which would not be a rotation), L1-selected."""
    x, y = ctx.target_reps()
    _, s, vt = torch.linalg.svd(x - x.mean(0), full_matrices=False)
    comps = vt[s > s[0] * 1e-5]
    dims = l1_select(x @ comps.T, y, ctx.hyper.l1, seed=ctx.hyper.seed)
    if not dims:
        raise ValueError("the L1 classifier kept no principal component (lower l1)")
    return rotation_spec(f"ravel-pca-{ctx.target}-l{ctx.layer}", comps, ctx.layer, dims)


def train_sae(x: torch.Tensor, latents: int, l1: float, steps: int, seed: int) -> dict:
    """One-layer ReLU SAE with the input centred by the decoder bias (RAVEL's layout): loss
    MSE + l1 * |z|_1, AdamW, cosine schedule to half the learning rate."""
    torch.manual_seed(seed)
    n = x.shape[1]
    enc = torch.nn.Linear(n, latents)
    dec = torch.nn.Linear(latents, n)
    with torch.no_grad():
        dec.bias.copy_(x.mean(0))
        dec.weight.copy_(enc.weight.T / enc.weight.T.norm(dim=0, keepdim=True))
    params = [*enc.parameters(), *dec.parameters()]
    opt = torch.optim.AdamW(params, lr=1e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=5e-4)
    scale = x.norm(dim=1).mean()  # losses in units of the typical vector norm
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        batch = x[torch.randint(len(x), (min(64, len(x)),), generator=gen)]
        z = torch.relu(enc(batch - dec.bias))
        loss = ((dec(z) - batch) ** 2).sum(1).mean() / scale**2 + l1 * z.abs().sum(1).mean() / scale
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return {
        "encoder_weight": enc.weight.detach(),
        "encoder_bias": enc.bias.detach(),
        "decoder_weight": dec.weight.detach(),
        "decoder_bias": dec.bias.detach(),
    }


def sae(ctx: TrainContext) -> FeaturizerSpec:
    """SAE trained on entity-token representations of every attribute's train templates (RAVEL
    uses Wikipedia sentences about the entities, not shipped), latents chosen by L1."""
    texts, spans, _ = ctx.entity_inputs(ctx.instance.attributes)
    x_all = ctx.local.hidden(texts, spans)
    h = ctx.hyper
    t = train_sae(x_all, h.sae_latents * x_all.shape[1], h.sae_l1, h.sae_steps, h.seed)
    x, y = ctx.target_reps()
    z = torch.relu((x - t["decoder_bias"]) @ t["encoder_weight"].T + t["encoder_bias"])
    live = torch.nonzero(z.abs().sum(0) > 0).flatten()
    dims = (
        [live[i].item() for i in l1_select(z[:, live], y, h.l1, seed=h.seed)] if len(live) else []
    )
    if not dims:
        raise ValueError("the L1 classifier kept no SAE latent (lower l1)")
    return autoencoder_spec(f"ravel-sae-{ctx.target}-l{ctx.layer}", t, ctx.layer, dims)


def _fantope(p: torch.Tensor, rank: int) -> torch.Tensor:
    """Projection of a symmetric matrix onto the Fantope {0 <= P <= I, tr P = rank}: shift the
    eigenvalues by the theta (bisection) that makes the clipped ones sum to rank."""
    vals, vecs = torch.linalg.eigh((p + p.T) / 2)
    lo, hi = vals.min().item() - 1, vals.max().item()
    for _ in range(60):
        theta = (lo + hi) / 2
        if (vals - theta).clamp(0, 1).sum().item() > rank:
            lo = theta
        else:
            hi = theta
    clipped = (vals - (lo + hi) / 2).clamp(0, 1)
    return (vecs * clipped) @ vecs.T


def rlap(ctx: TrainContext) -> FeaturizerSpec:
    """R-LACE: a minimax game between a linear classifier of the attribute on X(I - P) and a
    rank-k projection P (kept in the Fantope); the featurizer is P's top-k eigenvectors."""
    x, y = ctx.target_reps()
    classes = sorted(set(y))
    idx = torch.tensor([classes.index(v) for v in y])
    x = (x - x.mean(0)) / x.norm(dim=1).mean()
    n, k, h = x.shape[1], ctx.hyper.rlap_rank, ctx.hyper
    torch.manual_seed(h.seed)
    clf = torch.nn.Linear(n, len(classes))
    p = torch.zeros(n, n, requires_grad=True)
    opt_c = torch.optim.SGD(clf.parameters(), lr=0.5, weight_decay=1e-4)
    opt_p = torch.optim.SGD([p], lr=0.5, weight_decay=1e-4)
    eye = torch.eye(n)
    ce = torch.nn.functional.cross_entropy
    for _ in range(h.rlap_steps):
        opt_c.zero_grad()
        ce(clf(x @ (eye - p.detach())), idx).backward()
        opt_c.step()
        opt_p.zero_grad()
        (-ce(clf(x @ (eye - p)), idx)).backward()  # the adversary maximises the probe's loss
        opt_p.step()
        with torch.no_grad():
            p.copy_(_fantope(p, k))
    _, vecs = torch.linalg.eigh(p.detach())
    w = vecs[:, -k:].T.contiguous()  # top-k eigenvectors as orthonormal rows
    return rotation_spec(f"ravel-rlap-{ctx.target}-l{ctx.layer}", w, ctx.layer, None)
