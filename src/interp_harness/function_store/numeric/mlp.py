"""MLP approximations of numeric functions (FIND's `train_functions.py`): a 1-64-ReLU-1 network.

Serving evaluates the network with torch, as FIND's `load_mlp.py` does
(`model(torch.tensor(x).reshape(-1,1).float()).item()`), so the printed values are what FIND's
script prints with the same torch build (checked character for character in
tests/numeric/test_mlp_v1.py; FIND pinned torch 1.13, whose CPU kernels may round differently).
Without torch it falls
back to a numpy float32 forward pass, which is NOT bit-identical to torch (different summation
order). Measured with torch 2.13 on the 5 released networks, 10,256 inputs each
(`benchmarks/mlp_numpy_vs_torch.py`): 55.6% of printed values identical, median difference 0 ulp,
largest 256 ulp (outputs near zero), worst NMSE between the two 1.4e-13; a session of this project
measured 33% identical and NMSE up to 3.3e-9 against FIND's own printed values. Either is far below
the 0.1 NMSE threshold of the score, but replies differ in the last digits.

Released weights (torch `.pt` state dicts) are read once with `torch.load(weights_only=True)`;
find-gen weights are trained with torch exactly as FIND's `train_functions.py` does (full batch,
Adam lr 0.01, MSE, 10000 points on the domain) and cached on disk as `.npz` under the cache
directory, keyed by a hash of (function spec, domain, epochs, seed).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from interp_harness.function_store.datasets import DataUnavailable, data_path

HIDDEN = 64
GRID_POINTS = 10000
ZENODO_HINT = (
    "the FIND dataset zip (Zenodo record 8039658, https://zenodo.org/record/8039658/files/"
    "FIND-dataset.zip); unzip it and set HARNESS_FIND_ROOT to its find_dataset folder"
)


@cache
def _torch() -> Any:
    """The torch module, or None where it is not installed (the numpy fallback is used)."""
    try:
        import torch
    except ImportError:
        return None
    return torch


@dataclass(frozen=True)
class MLPWeights:
    """float32 arrays in torch's layout: w1 (64,1), b1 (64,), w2 (1,64), b2 (1,)."""

    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    def forward(self, x: Any, backend: str | None = None) -> np.ndarray:
        """Outputs for inputs `x` (any shape), float32. `backend`: "torch" (the default when
        torch is importable: FIND's own arithmetic) or "numpy" (the fallback; see the module
        docstring for how far it is from torch)."""
        backend = backend or ("torch" if _torch() is not None else "numpy")
        if backend == "torch":
            return self._forward_torch(x)
        if backend != "numpy":
            raise ValueError(f"unknown MLP backend {backend!r}; use 'torch' or 'numpy'")
        xs = np.asarray(x, dtype=np.float32).reshape(-1, 1)
        with np.errstate(all="ignore"):
            h = np.maximum(xs @ self.w1.T + self.b1, np.float32(0))
            return (h @ self.w2.T + self.b2).reshape(-1)

    def _forward_torch(self, x: Any) -> np.ndarray:
        torch = _torch()
        if torch is None:
            raise RuntimeError("the torch MLP backend needs torch, which is not installed")
        model = self._torch_model
        xs = torch.from_numpy(np.asarray(x, dtype=np.float32).reshape(-1, 1))
        with torch.no_grad():
            return model(xs).numpy().reshape(-1)

    @cached_property
    def _torch_model(self) -> Any:
        """FIND's `nn.Sequential(Linear(1,64), ReLU, Linear(64,1))` holding these weights."""
        torch = _torch()
        model = torch.nn.Sequential(
            torch.nn.Linear(1, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 1)
        )
        params = (self.w1, self.b1, self.w2, self.b2)
        with torch.no_grad():
            for p, value in zip(model.parameters(), params, strict=True):
                p.copy_(torch.from_numpy(np.ascontiguousarray(value)))
        return model.eval()

    def value(self, x: float) -> float:
        """`model(torch.tensor(x).reshape(-1,1).float()).item()`: a Python float."""
        return float(self.forward(x)[0])

    def to_npz(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npz")
        np.savez(tmp, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2)
        os.replace(tmp, path)  # atomic: a concurrent reader never sees half a file

    def to_lists(self) -> dict[str, list]:
        return {k: getattr(self, k).tolist() for k in ("w1", "b1", "w2", "b2")}

    @classmethod
    def from_lists(cls, d: dict[str, list]) -> MLPWeights:
        return cls(*(np.asarray(d[k], dtype=np.float32) for k in ("w1", "b1", "w2", "b2")))

    @classmethod
    def from_npz(cls, path: Path) -> MLPWeights:
        with np.load(path) as z:
            return cls(*(z[k].astype(np.float32) for k in ("w1", "b1", "w2", "b2")))


_STATE_KEYS = ("layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias")


@lru_cache(maxsize=256)
def load_torch_weights(path: str) -> MLPWeights:
    """Read a released `mlp_approx_model.pt` once and keep it as numpy arrays."""
    import torch

    state = torch.load(path, map_location="cpu", weights_only=True)
    missing = [k for k in _STATE_KEYS if k not in state]
    if missing:
        raise ValueError(f"{path} is not a FIND MLP state dict (missing {', '.join(missing)})")
    arrays = [state[k].detach().cpu().numpy().astype(np.float32) for k in _STATE_KEYS]
    return MLPWeights(*arrays)


def find_v1_weights_path(fdir: str, import_root: Path | None = None) -> Path | None:
    """Where the released weights of `fdir` (e.g. "f00000") are, or None.

    Looked up in the data directory (`find/numeric/mlp/fNNNNN.pt`, 5 ship with the repository),
    then in an original FIND dataset folder (`import_root`, then HARNESS_FIND_ROOT).
    """
    try:
        return data_path(f"find/numeric/mlp/{fdir}.pt")
    except DataUnavailable:
        pass
    roots = [import_root, os.environ.get("HARNESS_FIND_ROOT")]
    for root in roots:
        if root:
            p = Path(root).expanduser() / "numeric" / fdir / "mlp_approx_model.pt"
            if p.is_file():
                return p
    return None


def missing_weights_reason(fdir: str) -> str:
    return (
        f"MLP weights for {fdir} are not available: they are not among the 5 in the data "
        f"directory (find/numeric/mlp/) and no FIND dataset folder holds numeric/{fdir}/"
        f"mlp_approx_model.pt. Get them from {ZENODO_HINT}."
    )


# ---- training (find-gen) ----------------------------------------------------------------------


def mlp_cache_dir() -> Path:
    base = os.environ.get("HARNESS_CACHE_DIR", str(Path.home() / ".cache" / "interp-harness"))
    return Path(base) / "mlp"


def cache_key(fn: dict[str, Any], domain: list[float], epochs: int, seed: int) -> str:
    blob = json.dumps(
        {"fn": fn, "domain": list(domain), "epochs": epochs, "seed": seed, "arch": "1-64-relu-1"},
        sort_keys=True,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class TrainResult:
    weights: MLPWeights
    seconds: float
    cached: bool
    mse: float | None  # training-grid MSE (None when loaded from the cache)


def train_mlp(
    target_fn: Any,
    domain: list[float],
    *,
    epochs: int,
    seed: int,
    device: str | None = None,
    threads: int = 1,
) -> tuple[MLPWeights, float]:
    """Fit the MLP to `target_fn` (vectorised numpy callable) on 10000 grid points.

    Returns the weights and the final MSE on the grid. Non-finite targets are left out of the
    fit (the release trained on finite functions only; a NaN would poison every gradient).
    On CPU the fit runs on `threads` threads: this tiny model is fastest single-threaded
    (measured ~8x faster than two threads on a loaded 2-core machine).
    """
    import torch
    from torch import nn

    x = np.linspace(domain[0], domain[1], GRID_POINTS).reshape(-1, 1)
    with np.errstate(all="ignore"):
        y = np.asarray(target_fn(x), dtype=np.float64).reshape(-1, 1)
    keep = np.isfinite(y[:, 0])
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    gen = torch.Generator().manual_seed(seed)
    model = nn.Sequential(nn.Linear(1, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, 1))
    with torch.no_grad():  # seeded init, independent of the global torch RNG
        for layer in (model[0], model[2]):
            bound = 1.0 / np.sqrt(layer.in_features)
            layer.weight.uniform_(-bound, bound, generator=gen)
            layer.bias.uniform_(-bound, bound, generator=gen)
    model = model.to(dev)
    xt = torch.tensor(x[keep], dtype=torch.float32, device=dev)
    yt = torch.tensor(y[keep], dtype=torch.float32, device=dev)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = nn.MSELoss()
    prev_threads = torch.get_num_threads()
    if dev.type == "cpu":
        torch.set_num_threads(threads)
    try:
        for _ in range(epochs):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(xt), yt)
            loss.backward()
            opt.step()
        with torch.no_grad():
            mse = float(loss_fn(model(xt), yt).item())
    finally:
        torch.set_num_threads(prev_threads)
    params = [p.detach().cpu().numpy().astype(np.float32) for p in model.parameters()]
    return MLPWeights(*params), mse


def trained_weights(
    fn: dict[str, Any],
    target_fn: Any,
    domain: list[float],
    *,
    epochs: int,
    seed: int,
    device: str | None = None,
) -> TrainResult:
    """Cached training: a second call with the same (spec, domain, epochs, seed) is a file read."""
    path = mlp_cache_dir() / f"{cache_key(fn, domain, epochs, seed)}.npz"
    start = time.perf_counter()
    if path.is_file():
        try:
            return TrainResult(MLPWeights.from_npz(path), time.perf_counter() - start, True, None)
        except (OSError, ValueError, KeyError):
            pass  # a damaged cache entry is retrained and overwritten
    weights, mse = train_mlp(target_fn, domain, epochs=epochs, seed=seed, device=device)
    weights.to_npz(path)
    return TrainResult(weights, time.perf_counter() - start, False, mse)
