"""Featurizers as the intervention service takes them (FeaturizerSpec), and their map F and
inverse F^-1 in torch, to check bijectivity (F^-1(F(h)) = h) and to interchange locally.

- rotation R (k×n, orthonormal rows): F(h) = (R h, h - R^T R h); F^-1(z, r) = R^T z + r;
- autoencoder: F(h) = (z = ReLU(W_e (h - b_d) + b_e), r = h - dec(z)); F^-1(z, r) = dec(z) + r
  (the service keeps the reconstruction error the same way);
- mask: the identity; the features are the dims with mask > 0.5.
Interchange of dims D: F^-1 of F(base) with F(source)[D] written into D (the error term r is
the base's).
"""

from __future__ import annotations

from typing import Literal

import torch

from interp_harness.model_services.intervention.featurizers import decode_arrays, encode_array
from interp_harness.model_services.intervention.schemas import FeaturizerSpec

Features = tuple[torch.Tensor, torch.Tensor]  # (features, residual the features leave out)
Kind = Literal["rotation", "autoencoder", "mask"]


def _spec(
    fid: str, kind: Kind, layer: int, tensors: dict[str, torch.Tensor], dims: list[int] | None
) -> FeaturizerSpec:
    return FeaturizerSpec(
        id=fid,
        kind=kind,
        component="block_output",
        layer=layer,
        feature_dims=dims,
        arrays={k: encode_array(v.detach().float().cpu()) for k, v in tensors.items()},
        replace=True,
    )


def rotation_spec(
    fid: str, weight: torch.Tensor, layer: int, dims: list[int] | None
) -> FeaturizerSpec:
    return _spec(fid, "rotation", layer, {"weight": weight}, dims)


def mask_spec(fid: str, mask: torch.Tensor, layer: int) -> FeaturizerSpec:
    return _spec(fid, "mask", layer, {"mask": mask}, None)


def autoencoder_spec(
    fid: str, tensors: dict[str, torch.Tensor], layer: int, dims: list[int] | None
) -> FeaturizerSpec:
    return _spec(fid, "autoencoder", layer, tensors, dims)


def encode(spec: FeaturizerSpec, h: torch.Tensor) -> Features:
    t = decode_arrays(spec)
    if spec.kind == "rotation":
        r = t["weight"]
        z = h @ r.T
        return z, h - z @ r
    if spec.kind == "autoencoder":
        z = torch.relu((h - t["decoder_bias"]) @ t["encoder_weight"].T + t["encoder_bias"])
        return z, h - _decode_ae(t, z)
    return h.clone(), torch.zeros_like(h)


def decode(spec: FeaturizerSpec, f: Features) -> torch.Tensor:
    z, rest = f
    t = decode_arrays(spec)
    if spec.kind == "rotation":
        return z @ t["weight"] + rest
    if spec.kind == "autoencoder":
        return _decode_ae(t, z) + rest
    return z + rest


def _decode_ae(t: dict[str, torch.Tensor], z: torch.Tensor) -> torch.Tensor:
    return z @ t["decoder_weight"].T + t["decoder_bias"]


def feature_dims(spec: FeaturizerSpec) -> list[int]:
    if spec.feature_dims is not None:
        return list(spec.feature_dims)
    t = decode_arrays(spec)
    if spec.kind == "mask":
        return torch.nonzero(t["mask"] > 0.5).flatten().tolist()
    n = t["weight"].shape[0] if spec.kind == "rotation" else t["encoder_weight"].shape[0]
    return list(range(n))


def interchange(spec: FeaturizerSpec, base: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """base with the featurizer's feature dims taken from source (rows are examples)."""
    zb, rest = encode(spec, base)
    zs, _ = encode(spec, source)
    dims = feature_dims(spec)
    z = zb.clone()
    z[..., dims] = zs[..., dims]
    return decode(spec, (z, rest))
