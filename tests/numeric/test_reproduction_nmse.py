"""Reproduction (docs/reproductions.md): our numeric score agrees with FIND's `mse_indicator.py`.

FIND's scorer (FIND paper's repository, `mse_indicator.py`; Schwettmann et al., NeurIPS 2023
Datasets and Benchmarks) loads the ground truth's `function_code.py` in its own process, calls
`function(float(x))` at x = i + 0.5 for i in range(-128, 128), skips points where |g| is NaN or
Inf, calls the agent's function on the kept points, and scores NMSE = sum|g - t|^2 / sum|g|^2,
success iff NMSE < 0.1; any exception scores 0. `find_score` below is that loop, written from
the description, in this process. Ours reads the ground truth through the target's runner (its
printed `str()` values) and runs the answer in the scoring sandbox (`score_numeric_batch`).

The answers are the interpolation floor's (129 grid samples, `np.interp` on real values), on
the clean released functions (no live noise draws, so both sides see the same ground truth):
some pass, some fail, some ground truths raise. Tolerance: the same success on every function,
NMSE equal to 1e-9 relative.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from interp_harness.evaluator.numeric.scorer import score_numeric_batch
from interp_harness.evaluator.parsing import parse_answer
from interp_harness.evaluator.scorer import EvalSettings, Item
from interp_harness.function_store.catalog import Catalog
from interp_harness.function_store.models import Target
from interp_harness.harness.sandbox.code_runner import run_in_sandbox

THRESHOLD = 0.1  # FIND's --nmse_threshold default
N_FUNCTIONS = 120  # a seeded sample of the 483 clean functions (all 483 agree too; slower)


def _load(code: str, name: str) -> Any:
    namespace: dict[str, Any] = {"__name__": "find_function"}
    exec(compile(code, name, "exec"), namespace)  # test-only oracle, as FIND's imp.load_source
    return namespace


def find_score(gt_code: str, agent_code: str, func_name: str) -> tuple[float | None, float]:
    """(nmse, score) as FIND's mse_indicator.py computes them, in this process."""
    try:
        gt = _load(gt_code, "function_code.py")["function"]
        agent = _load(agent_code, "code.py")[func_name]
        gt_out, test_out = [], []
        with np.errstate(all="ignore"):
            for i in range(-128, 128):
                x = i + 0.5
                g = gt(float(x))
                if math.isnan(abs(g)) or math.isinf(abs(g)):
                    continue
                gt_out.append(g)
                test_out.append(agent(x))
            g_arr, t_arr = np.array(gt_out), np.array(test_out)
            nmse = float(np.sum(np.abs(g_arr - t_arr) ** 2) / np.sum(np.abs(g_arr) ** 2))
    except Exception:
        return None, 0.0
    return nmse, 1.0 if nmse < THRESHOLD else 0.0


def floor_answer(target: Target) -> str:
    """The interpolation floor's code for `target`: 129 even samples of [-128, 128], real parts."""
    gt = _load(target.hidden.code, "function_code.py")["function"]
    xs, ys = [], []
    with np.errstate(all="ignore"):
        for x in np.linspace(-128, 128, 129):
            try:
                y = complex(gt(float(x)))
            except Exception:
                continue
            if math.isfinite(y.real) and math.isfinite(y.imag):
                xs.append(float(x))
                ys.append(y.real)
    return (
        "import numpy as np\n"
        f"XS = {xs!r}\nYS = {ys!r}\n"
        "def f(x):\n    return float(np.interp(x, XS, YS))\n"
    )


@pytest.mark.usefixtures("needs_bwrap")
def test_nmse_and_success_agree_with_finds_mse_indicator() -> None:
    targets = Catalog().sample(
        N_FUNCTIONS, seed=0, dataset="find-v1", family="numeric", variant="clean"
    )
    assert len(targets) == N_FUNCTIONS
    codes = [floor_answer(t) for t in targets]
    items = [
        Item(t, parse_answer(f"[DESCRIPTION]: d\n[DOMAIN]: none\n[CODE]: ```python\n{c}```"))
        for t, c in zip(targets, codes, strict=True)
    ]
    ours = score_numeric_batch(items, settings=EvalSettings(), runner=run_in_sandbox)
    outcomes = {"pass": 0, "fail": 0, "gt raised": 0}
    for t, code, scores in zip(targets, codes, ours, strict=True):
        by = {s.metric: s for s in scores}
        want_nmse, want_score = find_score(t.hidden.code, code, "f")
        assert by["code_success"].value == want_score, (t.id, by["code_success"].details)
        if want_nmse is None:
            outcomes["gt raised"] += 1
            assert by["nmse"].value is None, t.id
            continue
        outcomes["pass" if want_score else "fail"] += 1
        if math.isfinite(want_nmse):
            assert by["nmse"].value == pytest.approx(want_nmse, rel=1e-9, abs=1e-12), t.id
    # the sample exercises both outcomes, or the agreement would say little
    assert outcomes["pass"] >= 10 and outcomes["fail"] >= 5, outcomes
