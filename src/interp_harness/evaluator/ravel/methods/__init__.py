"""The localisation methods RAVEL compares (Huang et al. 2024), each returning what the intervention
service interchanges: a featurizer spec, or the whole residual vector (the `full` baseline)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from interp_harness.evaluator.ravel.methods.context import Hyper, TrainContext
from interp_harness.evaluator.ravel.methods.counterfactual import das, dbm
from interp_harness.evaluator.ravel.methods.featurize import rotation_spec
from interp_harness.evaluator.ravel.methods.unsupervised import pca, rlap, sae
from interp_harness.model_services.intervention.schemas import FeaturizerSpec

WHOLE_VECTOR = None  # a method that returns this swaps the whole residual vector


def random_direction(ctx: TrainContext) -> FeaturizerSpec:
    """A random unit direction (one feature): a floor every method should beat on Cause."""
    g = torch.Generator().manual_seed(ctx.hyper.seed)
    w = torch.randn(1, ctx.local.m.hidden_size, generator=g)
    return rotation_spec(f"ravel-random-l{ctx.layer}", w / w.norm(), ctx.layer, None)


METHODS: dict[str, Callable[[TrainContext], FeaturizerSpec | None]] = {
    "full": lambda ctx: WHOLE_VECTOR,
    "random": random_direction,
    "pca": pca,
    "sae": sae,
    "rlap": rlap,
    "dbm": dbm,
    "das": das,
    "mdbm": lambda ctx: dbm(ctx, multitask=True),
    "mdas": lambda ctx: das(ctx, multitask=True),
}

__all__ = ["METHODS", "Hyper", "TrainContext", "WHOLE_VECTOR"]
