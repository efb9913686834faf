"""find-gen numeric: procedurally generated FIND-style numeric functions, deterministic per seed.

Parameters follow FIND's sampling code (`math_functions.sample_single_f`) with the released data's
domains (±100, log [1,100], root [0,100]) and bias r1(U(-10,10)) (its code says ±1000 and
U(-30,30)); the release's quirks are fixed (see docs/find-gen.md). Variant counts are exact shares
of `GenConfig` (rounded), shuffled over the set; each function draws from its own `random.Random`
stream, so a function's definition depends only on (seed, index, its kind) and the catalog is
byte-identical for the same seed and options. MLP targets hold the clean function: weights are
trained at first call (`train_mlp_for`).
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from interp_harness.function_store.catalog import GenConfig
from interp_harness.function_store.numeric.assemble import numeric_target
from interp_harness.function_store.numeric.families import (
    ATOMIC_FAMILIES,
    COMPOSE_FAMILIES,
    COMPOSE_OPS,
    domain_for,
)
from interp_harness.function_store.numeric.runner import train_mlp_for, true_function
from interp_harness.sdk import Target

__all__ = ["generate", "sample_atomic", "train_mlp_for"]

# Stored as-is in every spec so that a later change of these rules changes the cache keys too.
GEN_VERSION = 1
_LINSPACE_AMP = [float(v) for v in np.linspace(-10, 10, 100)]
_LINSPACE_PERIOD = [float(v) for v in np.linspace(0.1, 2 * np.pi, 100)]


def r1(v: float) -> float:
    out = round(v, 1)
    return 0.0 if out == 0 else out  # no "-0.0" literals in generated code


def sample_atomic(rng: random.Random, name: str) -> Any:
    """Parameters of one atomic function, as FIND's `sample_single_f` ranges (bias as released)."""
    scale, bias = r1(rng.uniform(-30, 30)), r1(rng.uniform(-10, 10))
    if name == "linear":
        return [r1(rng.uniform(-10, 10)), r1(rng.uniform(-10, 10))]
    if name == "polynomial":
        return [r1(rng.uniform(-5, 5)) for _ in range(rng.randint(2, 5) + 1)]
    if name == "rational":
        num_order = rng.randint(0, 4)
        den_order = rng.randint(num_order + 1, 5)
        return [
            [r1(rng.uniform(-10, 10)) for _ in range(num_order + 1)],
            [r1(rng.uniform(-10, 10)) for _ in range(den_order + 1)],
        ]
    if name == "absolute":
        return [scale, bias]
    if name == "root":
        return [scale, bias, rng.randint(1, 2)]
    if name == "reciprocal":
        a = 0.0
        while a == 0.0:  # fix: a = 0 would make 1/(a*x) infinite everywhere
            a = r1(rng.uniform(-10, 10))
        return [a]
    if name == "logarithm":
        base = 1.0
        while base == 1.0:  # fix: log base 1 divides by log(1) = 0
            base = r1(rng.uniform(1, 10))
        return [scale, bias, base]
    if name == "step":
        return [scale, bias, r1(rng.uniform(-100, 100))]
    if name == "rectangle":
        return [r1(rng.uniform(1, 10))]
    if name == "relu":
        return [scale, bias, r1(rng.uniform(0, 1))]
    if name in ("tanh", "sin", "cos"):
        return [
            r1(rng.choice(_LINSPACE_AMP)),
            r1(rng.choice(_LINSPACE_PERIOD)),
            r1(rng.choice(_LINSPACE_PERIOD)),
            bias,
        ]
    if name == "gaussian":
        return [r1(rng.uniform(-50, 50)), r1(rng.uniform(1, 10))]
    if name == "square_wave":
        return [r1(rng.uniform(1, 10)), r1(rng.uniform(-5, 5))]
    if name == "constant":
        return rng.randint(-100, 100)  # fix: the release's np.random.randint(-100, 100) stops at 99
    if name in ("ceil", "floor"):
        return None
    raise ValueError(f"unknown numeric family {name!r}")


def sample_function(rng: random.Random, atomic: bool) -> dict[str, Any]:
    if atomic:
        name = rng.choice(ATOMIC_FAMILIES)
        return {"name": name, "params": sample_atomic(rng, name)}
    op = rng.choice(COMPOSE_OPS)
    operands = []
    for _ in range(2):
        name = rng.choice(COMPOSE_FAMILIES)
        operands.append({"name": name, "params": sample_atomic(rng, name)})
    return {"name": op, "operands": operands}


def sample_corruption(rng: random.Random, fn: dict[str, Any], domain: list[int]) -> dict[str, Any]:
    """As FIND's `sample_corruption`: the noise mean is the mean of the true f on a 100-point
    domain grid."""
    with np.errstate(all="ignore"):
        mean = float(
            np.mean(true_function({"function": fn})(np.linspace(domain[0], domain[1], 100)))
        )
    a = r1(rng.uniform(max(domain[0], -100), 100))
    if rng.random() < 0.5:
        return {
            "type": "interval_inside",
            "boundary": [a, rng.uniform(a + 5, a + 25)],
            "mean": mean,
        }
    kind = "interval_smaller" if rng.random() < 0.5 else "interval_larger"
    return {"type": kind, "boundary": [a], "mean": mean}


def _shares(n: int, cfg: GenConfig) -> tuple[list[bool], list[str]]:
    """Exact counts (rounded) of atomic functions and of each variant, in a seeded order."""
    n_atomic = round(cfg.numeric_p_atomic * n)
    counts = {
        "mlp": round(cfg.numeric_p_mlp * n),
        "noised": round(cfg.numeric_p_noised * n),
        "corrupted": round(cfg.numeric_p_corrupted * n),
    }
    if sum(counts.values()) > n:
        raise ValueError(
            "GenConfig numeric_p_mlp + numeric_p_noised + numeric_p_corrupted must not exceed 1"
        )
    variants = [v for v, k in counts.items() for _ in range(k)]
    variants += ["clean"] * (n - len(variants))
    atomic = [True] * n_atomic + [False] * (n - n_atomic)
    return atomic, variants


def generate(seed: int, cfg: GenConfig) -> list[Target]:
    n = cfg.n_numeric
    order = random.Random(f"find-gen/numeric/{seed}/order")
    atomic, variants = _shares(n, cfg)
    order.shuffle(atomic)
    order.shuffle(variants)
    out = []
    for idx in range(n):
        rng = random.Random(f"find-gen/numeric/{seed}/{idx}")
        variant = variants[idx]
        while True:
            fn = sample_function(rng, atomic[idx])
            domain = domain_for(fn)
            noise = rng.choice(("normal", "uniform", "poisson")) if variant == "noised" else None
            corruption = sample_corruption(rng, fn, domain) if variant == "corrupted" else None
            if corruption is None or math.isfinite(corruption["mean"]):
                break  # a non-finite noise mean cannot be served; draw again
        tid = f"find-gen/numeric/s{seed}/f{idx:05d}"
        mlp = None
        if variant == "mlp":
            mlp = {"epochs": cfg.mlp_epochs, "seed": rng.randrange(2**31)}
        out.append(
            numeric_target(
                target_id=tid,
                dataset="find-gen",
                variant=variant,
                fn=fn,
                domain=domain,
                noise=noise,
                corruption=corruption,
                release=False,
                mlp=mlp,
                extra_spec={"gen_version": GEN_VERSION},
            )
        )
    return out
