"""How far the numpy fallback of the MLP forward pass is from torch (FIND's own arithmetic).

For each of the 5 released MLP networks (data directory `find/numeric/mlp/`) and 10,000 inputs
spread over [-128, 128] plus FIND's 256 scoring points, prints the share of printed values
(`str(float)`, as FIND's CLI prints them) that are identical, the median and largest difference
in float32 ulp, and the NMSE between the two backends. Run:
    HARNESS_DATA_DIR=../shared/data python benchmarks/mlp_numpy_vs_torch.py

The test suite's smoke form (tests/benchmarks): no arguments (seconds already).
"""

from __future__ import annotations

import numpy as np

from interp_harness.function_store.datasets import data_path
from interp_harness.function_store.numeric.mlp import load_torch_weights


def main() -> None:
    xs = np.concatenate([np.linspace(-128, 128, 10000), np.arange(-128, 128) + 0.5])
    same = total = 0
    ulps: list[np.ndarray] = []
    worst_nmse = 0.0
    for i in range(5):
        w = load_torch_weights(str(data_path(f"find/numeric/mlp/f0000{i}.pt")))
        t = w.forward(xs, backend="torch").astype(np.float32)
        n = w.forward(xs, backend="numpy").astype(np.float32)
        same += sum(str(float(a)) == str(float(b)) for a, b in zip(t, n, strict=True))
        total += len(xs)
        ulps.append(np.abs(t.view(np.int32).astype(np.int64) - n.view(np.int32).astype(np.int64)))
        nmse = float(np.sum((t.astype(np.float64) - n) ** 2) / np.sum(t.astype(np.float64) ** 2))
        worst_nmse = max(worst_nmse, nmse)
        print(f"f0000{i}: identical {np.mean(t == n):.1%}  nmse {nmse:.2e}")
    u = np.concatenate(ulps)
    print(f"all: identical printed values {same}/{total} = {same / total:.1%}")
    print(f"ulp difference: median {np.median(u):.0f}, max {u.max()}; worst NMSE {worst_nmse:.2e}")


if __name__ == "__main__":
    main()
