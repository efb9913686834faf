"""The interpolation floor of FIND's numeric code metric, computed directly (no agent, no CLI).

For each released non-MLP numeric function (find-v1, 850), sample f on an evenly spaced grid of N
points over [-128, 128] through the target's runner, answer with the piecewise-linear interpolation
of those samples (real and imaginary parts separately; samples that are None/NaN/Inf dropped),
and score it exactly as FIND does: NMSE on the 256 half-integer points against fresh GT draws,
success iff NMSE < 0.1. Prints the count of successes per sample count.

    HARNESS_DATA_DIR=../shared/data python benchmarks/interpolation_floor.py --samples 1025 129

`--limit N` scores the first N functions only. The test suite's smoke form (tests/benchmarks):
`--samples 9 --limit 10`.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
from rich.progress import track

from interp_harness.evaluator import numeric as num
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.runtime import build_runner


def interpolate(xs: list[float], ys: list[complex | None], at: np.ndarray) -> np.ndarray:
    keep = [
        (x, y)
        for x, y in zip(xs, ys, strict=True)
        if y is not None and not (math.isnan(abs(y)) or math.isinf(abs(y)))
    ]
    if not keep:
        return np.zeros_like(at, dtype=complex)
    kx = np.array([k[0] for k in keep])
    ky = np.array([k[1] for k in keep], dtype=complex)
    return np.interp(at, kx, ky.real) + 1j * np.interp(at, kx, ky.imag)


def floor_score(target, n: int, real_only: bool = False) -> tuple[bool, float]:
    runner = build_runner(target)
    xs = [float(v) for v in np.linspace(-128, 128, n)]
    samples = [num.parse_find_value(o.output) for o in runner.call([repr(x) for x in xs])]
    gt = num.ground_truth_from_outputs(runner.call(num.grid_inputs()))
    if gt.error or gt.exception_at is not None:
        return False, math.nan
    pred = interpolate(xs, samples, np.array(gt.xs))
    if real_only:  # an interpolator that cannot represent complex values (see --real-only)
        pred = pred.real.astype(complex)
    value = num.nmse(gt.values, list(pred))
    return value < num.DEFAULT_THRESHOLD, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, nargs="+", default=[1025, 129])
    ap.add_argument(
        "--real-only",
        action="store_true",
        help="interpolate real values only: reproduces the 737/850 and 505/850 figures "
        "(the 20 root functions with complex GT values on x < 0 then fail)",
    )
    ap.add_argument("--seed", type=int, default=0, help="numpy seed for the live noise draws")
    ap.add_argument("--limit", type=int, default=None, help="the first N functions (default: all)")
    args = ap.parse_args()
    np.random.seed(args.seed)
    targets = [t for t in Catalog().list(dataset="find-v1", family="numeric") if t.variant != "mlp"]
    targets = targets[: args.limit]
    for n in args.samples:
        t0 = time.perf_counter()
        by_variant: dict[str, list[int]] = {}
        wins = 0
        for t in track(targets, description=f"{n} samples"):
            ok, _ = floor_score(t, n, args.real_only)
            wins += ok
            by_variant.setdefault(t.variant, [0, 0])
            by_variant[t.variant][0] += ok
            by_variant[t.variant][1] += 1
        detail = ", ".join(f"{v} {a}/{b}" for v, (a, b) in sorted(by_variant.items()))
        print(
            f"interpolation floor @ {n} samples: {wins}/{len(targets)} NMSE<0.1 ({detail}) "
            f"[{time.perf_counter() - t0:.1f} s]"
        )


if __name__ == "__main__":
    main()
