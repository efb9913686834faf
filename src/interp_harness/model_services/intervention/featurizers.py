"""Registered featurizers: bijective maps of one component's vectors into a feature space, and the
pyvene interventions that interchange feature dims through them.

pyvene's own trainable classes are subclassed only where serving a given, fixed map needs it:
- rotations: `RotatedSpaceIntervention` / `LowRankRotatedSpaceIntervention` wrap their matrix in
  torch's orthogonal parametrization (for training): it re-derives the matrix on every access and
  cannot hold a given matrix exactly, so the subclasses keep a plain `RotateLayer`;
- autoencoders: `AutoencoderIntervention` returns decode(z'), dropping the SAE's reconstruction
  error, so even an empty swap would change the model; the subclass adds the error back
  (h' = h + dec(z') - dec(z)), which keeps the featurizer invertible;
- masks: interchange on the masked dims is exactly `VanillaIntervention` with those dims.
"""

from __future__ import annotations

import base64
import threading
from typing import Any

import numpy as np
import torch
from pydantic import ConfigDict

from interp_harness.model_services.intervention.pyvene_import import import_pyvene
from interp_harness.model_services.intervention.schemas import FeaturizerInfo, FeaturizerSpec

ORTHO_TOL = 1e-3  # max |R R^T - I| accepted for a rotation (float32 round-off of saved matrices)
NEEDED = {
    "rotation": ("weight",),
    "autoencoder": ("encoder_weight", "encoder_bias", "decoder_weight", "decoder_bias"),
    "mask": ("mask",),
}


class FeaturizerError(ValueError):
    """A featurizer that cannot be registered or used (its message says why)."""


def _pv() -> Any:
    return import_pyvene()


def _classes() -> dict[str, type]:
    """The subclasses are built on first use: importing pyvene takes seconds."""
    global _CLASSES
    if _CLASSES:
        return _CLASSES
    pv = _pv()
    from pyvene.models.layers import RotateLayer

    class FixedRotationIntervention(pv.RotatedSpaceIntervention):
        def __init__(self, weight: torch.Tensor, **kwargs: Any) -> None:
            # skip RotatedSpaceIntervention.__init__: its random orthogonal init is thrown away
            super(pv.RotatedSpaceIntervention, self).__init__(embed_dim=weight.shape[0], **kwargs)
            self.rotate_layer = RotateLayer(weight.shape[0], init_orth=False)
            self.rotate_layer.weight = torch.nn.Parameter(weight, requires_grad=False)

    class FixedLowRankRotationIntervention(pv.LowRankRotatedSpaceIntervention):
        def __init__(self, weight: torch.Tensor, **kwargs: Any) -> None:
            super(pv.LowRankRotatedSpaceIntervention, self).__init__(
                embed_dim=weight.shape[0], low_rank_dimension=weight.shape[1], **kwargs
            )
            self.rotate_layer = RotateLayer(weight.shape[0], init_orth=False)
            self.rotate_layer.weight = torch.nn.Parameter(weight, requires_grad=False)

    class ResidualAutoencoderIntervention(pv.AutoencoderIntervention):
        def forward(self, base: Any, source: Any, subspaces: Any = None, **kwargs: Any) -> Any:
            ae = self.autoencoder
            z_base = ae.encode(base)
            z_new = z_base.clone()
            dims = subspaces[0]  # the same dims for every example (one featurizer ref per site)
            z_new[..., dims] = ae.encode(source)[..., dims]
            out = base.to(z_base.dtype) + ae.decode(z_new) - ae.decode(z_base)
            return out.to(base.dtype)

    _CLASSES.update(
        rotation=FixedRotationIntervention,
        lowrank=FixedLowRankRotationIntervention,
        autoencoder=ResidualAutoencoderIntervention,
    )
    return _CLASSES


_CLASSES: dict[str, type] = {}


def decode_arrays(spec: FeaturizerSpec) -> dict[str, torch.Tensor]:
    if (spec.arrays is None) == (spec.safetensors is None):
        raise FeaturizerError("give the weights as either `arrays` or `safetensors`")
    out: dict[str, torch.Tensor] = {}
    try:
        if spec.safetensors is not None:
            from safetensors.torch import load as st_load

            out = dict(st_load(base64.b64decode(spec.safetensors, validate=True)))
        else:
            for name, a in (spec.arrays or {}).items():
                raw = base64.b64decode(a.data, validate=True)
                arr = np.frombuffer(raw, dtype=np.dtype(a.dtype).newbyteorder("<"))
                if arr.size != int(np.prod(a.shape)):
                    raise FeaturizerError(
                        f"array {name!r}: {arr.size} values do not fill shape {a.shape}"
                    )
                out[name] = torch.from_numpy(arr.reshape(a.shape).astype(np.float32))
    except FeaturizerError:
        raise
    except Exception as e:  # bad base64 / safetensors bytes
        raise FeaturizerError(f"cannot read the featurizer's weights: {e}") from e
    need = NEEDED[spec.kind]
    missing = [n for n in need if n not in out]
    extra = sorted(set(out) - set(need))
    if missing or extra:
        raise FeaturizerError(
            f"a {spec.kind} featurizer needs tensors {list(need)}; missing {missing}, unexpected {extra}"
        )
    return {k: v.float() for k, v in out.items()}


class Featurizer(FeaturizerInfo):
    """A registered featurizer: what GET /featurizers shows, and its tensors."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tensors: dict[str, torch.Tensor]

    def info(self) -> FeaturizerInfo:
        return FeaturizerInfo(**self.model_dump(exclude={"tensors"}))

    def check_dims(self, dims: list[int]) -> None:
        bad = [d for d in dims if not 0 <= d < self.feature_count]
        if bad:
            raise FeaturizerError(
                f"featurizer {self.id!r} has {self.feature_count} features; dims out of range: {bad[:5]}"
            )

    def intervention(self, device: torch.device, dtype: torch.dtype) -> Any:
        """A fresh pyvene intervention; the dims to swap travel as pyvene `subspaces`."""
        t = {k: v.to(device=device, dtype=dtype) for k, v in self.tensors.items()}
        if self.kind == "mask":
            return _pv().VanillaIntervention(embed_dim=self.input_dim)
        if self.kind == "rotation":
            w = t["weight"].T.contiguous()  # pyvene computes features as h @ W: W = R^T
            cls = _classes()["rotation" if self.feature_count == self.input_dim else "lowrank"]
            # keep_last_dim: each position is mapped on its own (pyvene's default flattens them)
            return cls(w, keep_last_dim=True).to(device)
        iv = _classes()["autoencoder"](
            embed_dim=self.input_dim, latent_dim=self.feature_count, keep_last_dim=True
        )
        enc, dec = iv.autoencoder.encoder[0], iv.autoencoder.decoder[0]
        with torch.no_grad():
            enc.weight.copy_(t["encoder_weight"])
            enc.bias.copy_(t["encoder_bias"])
            dec.weight.copy_(t["decoder_weight"])
            dec.bias.copy_(t["decoder_bias"])
        return iv.to(device=device, dtype=dtype)


class FeaturizerRegistry:
    """Featurizers by id, for one loaded model (shapes are checked against its widths)."""

    def __init__(self, widths: dict[str, int], max_count: int = 64) -> None:
        self.widths = widths
        self.max_count = max_count
        self._items: dict[str, Featurizer] = {}
        self._lock = threading.Lock()

    def register(self, spec: FeaturizerSpec) -> Featurizer:
        n = self.widths[spec.component]
        t = decode_arrays(spec)
        shapes = {k: tuple(v.shape) for k, v in t.items()}
        if spec.kind == "rotation":
            k = t["weight"].shape[0]
            if t["weight"].ndim != 2 or t["weight"].shape[1] != n or not 1 <= k <= n:
                raise FeaturizerError(f"rotation weight must be k×{n} with k ≤ {n}; got {shapes}")
            err = (t["weight"] @ t["weight"].T - torch.eye(k)).abs().max().item()
            if err > ORTHO_TOL:
                raise FeaturizerError(
                    f"rotation rows are not orthonormal (max |R R^T - I| = {err:.3g} > {ORTHO_TOL})"
                )
            count = k
        elif spec.kind == "autoencoder":
            m = t["encoder_weight"].shape[0]
            want = {
                "encoder_weight": (m, n),
                "encoder_bias": (m,),
                "decoder_weight": (n, m),
                "decoder_bias": (n,),
            }
            if shapes != want:
                raise FeaturizerError(f"autoencoder shapes must be {want}; got {shapes}")
            count = m
        else:
            if shapes["mask"] != (n,):
                raise FeaturizerError(f"mask must have shape ({n},); got {shapes['mask']}")
            count = n
        for name, v in t.items():
            if not torch.isfinite(v).all():
                raise FeaturizerError(f"tensor {name!r} has non-finite values")
        if spec.feature_dims is not None:
            dims = list(spec.feature_dims)
        elif spec.kind == "mask":
            dims = torch.nonzero(t["mask"] > 0.5).flatten().tolist()
        else:
            dims = list(range(count))
        f = Featurizer(
            id=spec.id,
            kind=spec.kind,
            component=spec.component,
            layer=spec.layer,
            input_dim=n,
            feature_count=count,
            feature_dims=dims,
            tensors=t,
        )
        f.check_dims(dims)
        if not dims:
            raise FeaturizerError("the featurizer localises no feature dims")
        with self._lock:
            if spec.id in self._items and not spec.replace:
                raise FeaturizerError(f"featurizer {spec.id!r} exists (set replace: true)")
            if spec.id not in self._items and len(self._items) >= self.max_count:
                raise FeaturizerError(f"at most {self.max_count} featurizers; delete one first")
            self._items[spec.id] = f
        return f

    def get(self, fid: str) -> Featurizer:
        with self._lock:
            f = self._items.get(fid)
        if f is None:
            raise FeaturizerError(f"unknown featurizer {fid!r}")
        return f

    def delete(self, fid: str) -> None:
        with self._lock:
            if self._items.pop(fid, None) is None:
                raise FeaturizerError(f"unknown featurizer {fid!r}")

    def list(self) -> list[Featurizer]:
        with self._lock:
            return list(self._items.values())


def encode_array(t: torch.Tensor | np.ndarray) -> dict[str, Any]:
    """The `ArrayB64` JSON of a float tensor (client side helper)."""
    a = np.ascontiguousarray(np.asarray(t, dtype="<f4"))
    return {"shape": list(a.shape), "dtype": "float32", "data": base64.b64encode(a).decode()}
