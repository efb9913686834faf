"""Time find-gen catalog generation, then (separately) MLP training of the numeric MLP targets.

    python benchmarks/generate_catalog.py [--seed 0] [--mlp-limit 3] [--epochs 10000] [--n 1000]

Builds 1000 numeric + 1000 strings (`--n` of each) + 200 entities + 75 relations (the paper's 2,275
functions and proportions) and prints the time per family and in total; the goal is < 2 min without
MLP training. Families whose generator is not importable yet are reported, not fatal. Then trains
`--mlp-limit` of the numeric MLP-variant targets, printing seconds per function and the extrapolated
total for all of them, and repeats those to show that cache hits are fast. The test suite's smoke
form (tests/benchmarks): `--n 10 --mlp-limit 1 --epochs 1`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from rich.console import Console
from rich.progress import Progress

from interp_harness.function_store.benchmark import benchmark, load_ref
from interp_harness.function_store.catalog import CatalogOptions, GenConfig

console = Console()
EXPECTED = {"numeric": 1000, "strings": 1000, "entities": 200, "relations": 75}


def time_families(options: CatalogOptions) -> list:
    numeric = []
    total = 0.0
    for family in EXPECTED:
        try:
            source = load_ref(benchmark(family).sources["find-gen"])
        except (ImportError, KeyError) as e:
            console.print(f"{family:10s} not importable yet ({e.__class__.__name__}: {e})")
            continue
        start = time.perf_counter()
        try:
            targets = source(family, options)
        except Exception as e:  # another engineer's generator may be unfinished: report it
            console.print(f"{family:10s} failed: {e.__class__.__name__}: {e}")
            continue
        seconds = time.perf_counter() - start
        total += seconds
        console.print(
            f"{family:10s} {len(targets):5d} functions (paper: {EXPECTED[family]}) "
            f"in {seconds:8.3f} s"
        )
        if family == "numeric":
            numeric = targets
    console.print(f"{'total':10s} {total:25.3f} s (goal < 120 s, MLP training excluded)")
    return numeric


def time_mlp(targets: list, limit: int, device: str | None) -> None:
    from interp_harness.function_store.numeric.find_gen import train_mlp_for

    mlps = [t for t in targets if t.variant == "mlp"]
    todo = mlps[:limit]
    if not todo:
        console.print("no MLP targets to train")
        return
    console.print(
        f"training {len(todo)} of {len(mlps)} MLP targets, "
        f"{todo[0].hidden.spec['mlp']['epochs']} epochs each"
    )
    seconds = []
    with Progress(console=console) as progress:
        task = progress.add_task("training", total=len(todo))
        for t in todo:
            r = train_mlp_for(t, device=device)
            seconds.append(r.seconds)
            progress.console.print(
                f"  {t.id} {t.hidden.spec['function']['name']:13s} {r.seconds:8.2f} s "
                f"mse={r.mse:.6g} cached={r.cached}"
            )
            progress.advance(task)
    mean = sum(seconds) / len(seconds)
    console.print(
        f"mean {mean:.2f} s per function; extrapolated for all {len(mlps)}: "
        f"{mean * len(mlps):.0f} s ({mean * len(mlps) / 60:.1f} min)"
    )
    start = time.perf_counter()
    hits = [train_mlp_for(t, device=device).cached for t in todo]
    console.print(
        f"second pass: {sum(hits)}/{len(hits)} cache hits in {time.perf_counter() - start:.4f} s"
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n", type=int, default=1000, help="numeric and string functions each")
    p.add_argument("--mlp-limit", type=int, default=3, help="train only N MLP targets (0: none)")
    p.add_argument("--epochs", type=int, default=10000, help="MLP epochs (GenConfig.mlp_epochs)")
    p.add_argument(
        "--device", default=None, help="torch device for training (default: cuda if available)"
    )
    p.add_argument(
        "--cache-dir",
        default=None,
        help="HARNESS_CACHE_DIR for trained weights (default: a fresh temporary directory, "
        "so the first pass really trains)",
    )
    args = p.parse_args()
    os.environ["HARNESS_CACHE_DIR"] = args.cache_dir or tempfile.mkdtemp(prefix="find-gen-mlp-")
    cfg = GenConfig(n_numeric=args.n, n_strings=args.n, mlp_epochs=args.epochs)
    numeric = time_families(CatalogOptions(gen_seed=args.seed, gen=cfg))
    if args.mlp_limit > 0:
        time_mlp(numeric, args.mlp_limit, args.device)


if __name__ == "__main__":
    main()
