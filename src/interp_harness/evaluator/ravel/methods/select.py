"""Feature selection with an L1-regularised linear classifier (RAVEL: PCA and SAE keep the
features an L1 classifier of the attribute value gives nonzero weight). RAVEL uses scikit-learn's
LinearSVC(penalty="l1"); here a multinomial logistic regression with an L1 penalty, fitted by
proximal gradient descent in torch (no scikit-learn dependency)."""

from __future__ import annotations

import torch


def l1_select(
    x: torch.Tensor, y: list[str], l1: float, steps: int = 500, lr: float = 0.1, seed: int = 0
) -> list[int]:
    """Feature dims with a nonzero weight for any class, strongest first."""
    classes = sorted(set(y))
    if len(classes) < 2:
        raise ValueError("feature selection needs at least two attribute values")
    idx = torch.tensor([classes.index(v) for v in y])
    z = (x - x.mean(0)) / (x.std(0) + 1e-6)  # the classifier sees standardised features
    torch.manual_seed(seed)
    w = torch.zeros(z.shape[1], len(classes), requires_grad=True)
    b = torch.zeros(len(classes), requires_grad=True)
    opt = torch.optim.SGD([w, b], lr=lr)
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.cross_entropy(z @ w + b, idx).backward()
        opt.step()
        with torch.no_grad():  # proximal step of the L1 penalty (soft threshold)
            w.copy_(w.sign() * (w.abs() - lr * l1).clamp(min=0))
    strength = w.detach().abs().sum(1)
    keep = torch.nonzero(strength > 0).flatten().tolist()
    return sorted(keep, key=lambda i: -strength[i].item())
