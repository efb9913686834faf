"""Short OpenMP spin-waits for the model server, set before torch loads libgomp.

libgomp's threads spin at every barrier before they sleep (300,000 iterations by default). When
other processes share the cores, as the harness's own runs do on a laptop, a spinning thread
burns the time slice its partner needs. On this project's 2-core machine, next to one busy
process, 40 forced-choice judge prompts took 38.2 s by default and 25.5 s with
GOMP_SPINCOUNT=1000 (64 generations of 16 tokens: 18.6 s and 10.4 s); alone, the same either way
(ratios 0.98 and 1.03). Medians of 2, `python benchmarks/omp_spin.py`."""

from __future__ import annotations

import os
import sys

SPINCOUNT = "1000"


def limit_omp_spin() -> bool:
    """Set GOMP_SPINCOUNT unless the operator set it or OMP_WAIT_POLICY, or torch (and with it
    libgomp, which reads them once) is loaded already. True when it was set here."""
    if "torch" in sys.modules or "GOMP_SPINCOUNT" in os.environ or "OMP_WAIT_POLICY" in os.environ:
        return False
    os.environ["GOMP_SPINCOUNT"] = SPINCOUNT
    return True
