"""End-to-end numeric scoring throughput: 1000 answers, agent code run in the bwrap sandbox.

The "answers" are the ground-truth sources of the find-v1 numeric functions themselves (real
numpy code of every shape FIND produces; MLP targets whose weights are absent get a linear
answer and a target error). Ground truth is drawn live from the runners, agent code runs in
chunks inside bwrap, NMSE is computed as FIND does. Prints functions/s and the total time.

    HARNESS_DATA_DIR=../shared/data python benchmarks/scoring.py [--n 1000] [--sandbox bwrap]

The test suite's smoke form (tests/benchmarks): `--n 4 --chunk 2`.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import ParsedAnswer, func_name_tolerant
from interp_harness.evaluator.sandbox_exec import ExecSettings
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.function_store.catalog import Catalog
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

FALLBACK = "def f(x):\n    return 2.0 * x + 1.0\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--sandbox", default="bwrap")
    ap.add_argument("--chunk", type=int, default=100)
    args = ap.parse_args()
    targets = Catalog().list(dataset="find-v1", family="numeric")[: args.n]
    items = []
    for t in targets:
        code = (
            t.hidden.code
            if t.hidden.code and "def function" in t.hidden.code and t.variant != "mlp"
            else FALLBACK
        )
        items.append(
            Item(
                t,
                ParsedAnswer(
                    parser="tolerant",
                    description="",
                    domain="",
                    code=code,
                    func_name=func_name_tolerant(code),
                ),
            )
        )
    t0 = time.perf_counter()
    out = score_numeric_batch(
        items,
        settings=EvalSettings(),
        exec_settings=ExecSettings(sandbox=args.sandbox, chunk_size=args.chunk),
        runner=run_in_sandbox,
    )
    dt = time.perf_counter() - t0
    outcome: Counter[str] = Counter()
    for rs in out:
        r = next(x for x in rs if x.metric == "code_success")
        outcome[
            "error:" + (r.error_category or "")
            if r.status == "error"
            else ("pass" if r.value == 1.0 else "fail")
        ] += 1
    print(f"scored {len(items)} numeric answers in {dt:.1f} s: {len(items) / dt:.1f} functions/s")
    print("outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(outcome.items())))


if __name__ == "__main__":
    main()
