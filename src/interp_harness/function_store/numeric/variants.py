"""Noised and domain-corrupted variants of a numeric function (FIND's
`write_source_code.py` and `math_functions.sample_corruption`).

Released semantics (`release=True`): the variant reuses only the clean *return expression*; noise
is one scalar draw per call appended to it (Poisson has mean +1); corruption first turns a Python
float into a 0-d array, then `np.where` picks between the function and N(mean, 0.1), evaluating
both branches. find-gen (`release=False`): every variant starts with `x = np.asarray(x, float)`,
Poisson noise is centred (`poisson(1) - 1`), and no statement of the clean function is lost.
"""

from __future__ import annotations

from typing import Any

from interp_harness.function_store.numeric.expr import (
    AsFloatArray,
    Bin,
    Call,
    Chain,
    Noise,
    Num,
    Par,
    Program,
    ScalarToArray,
    X,
)
from interp_harness.function_store.numeric.families import SpecError, clean_program, return_expr

NOISE_TYPES: tuple[str, ...] = ("normal", "uniform", "poisson")
CORRUPTION_TYPES: tuple[str, ...] = ("interval_inside", "interval_smaller", "interval_larger")

_NOISE_TEXT = {
    "normal": "np.random.normal(scale=1)",
    "uniform": "np.random.uniform(low=-1, high=1)",
    "poisson": "np.random.poisson(lam=1)",
}


def noise_node(noise_type: str, release: bool) -> Noise:
    if noise_type not in NOISE_TYPES:
        raise SpecError(f"unknown noise type {noise_type!r}; known: {', '.join(NOISE_TYPES)}")
    if noise_type == "poisson" and not release:
        return Noise("poisson_centered", "(np.random.poisson(lam=1) - 1)")
    return Noise(noise_type, _NOISE_TEXT[noise_type])


def _corruption_noise(kind: str, mean: float, release: bool) -> Noise:
    # the three release templates space their arguments differently; kept for the `code` text
    if release and kind == "interval_larger":
        text = f"np.random.normal(loc={mean}, scale=0.1,size=x.shape)"
    elif release:
        text = f"np.random.normal(loc={mean},scale=0.1, size=x.shape)"
    else:
        text = f"np.random.normal(loc={mean}, scale=0.1, size=x.shape)"
    return Noise("corruption", text, loc=mean)


def corrupted_expr(expr: Chain, corruption: dict[str, Any], release: bool) -> Call:
    kind = corruption.get("type")
    bounds = list(corruption.get("boundary") or [])
    mean = corruption.get("mean")
    if mean is None:
        raise SpecError("corruption needs its noise mean ('mean')")
    noise = _corruption_noise(kind, mean, release)
    if kind == "interval_smaller" and len(bounds) == 1:
        return Call("np.where", (Bin(">", X(), Num(bounds[0]), "{} > {}"), expr, noise))
    if kind == "interval_larger" and len(bounds) == 1:
        return Call("np.where", (Bin("<", X(), Num(bounds[0]), "{} < {}"), expr, noise))
    if kind == "interval_inside" and len(bounds) == 2:
        inside = Bin(
            "&",
            Par(Bin(">", X(), Num(bounds[0]), "{} > {}")),
            Par(Bin("<", X(), Num(bounds[1]), "{} < {}")),
            "{} & {}",
        )
        return Call("np.where", (inside, noise, expr))
    raise SpecError(
        f"bad corruption {corruption!r}: type must be one of {CORRUPTION_TYPES} "
        "with one boundary (smaller/larger) or two (inside)"
    )


def served_program(
    fn: dict[str, Any],
    *,
    noise: str | None = None,
    corruption: dict[str, Any] | None = None,
    release: bool,
) -> Program:
    """The `function(x)` a target serves: clean, noised (`noise` type) or corrupted."""
    if noise and corruption:
        raise SpecError("a function is either noised or corrupted, not both")
    guard = () if release else (AsFloatArray(),)
    if noise:
        expr = return_expr(fn, release).plus(noise_node(noise, release))
        return Program(expr, guard, indent=8 if release else 4)
    if corruption:
        first = (ScalarToArray(),) if release else guard
        return Program(corrupted_expr(return_expr(fn, release), corruption, release), first)
    clean = clean_program(fn, release)
    return Program(clean.ret, guard + clean.stmts)
