"""FIND's numeric code score: NMSE on 256 half-integer points, success iff NMSE < 0.1
(FIND's `mse_indicator.py`).

- Grid: x = i + 0.5 for i in range(-128, 128), i.e. -127.5 ... 127.5.
- The ground truth g is drawn live from the target's runner (noise and corruption are fresh
  draws, as in FIND). Its outputs are FIND's `str()` texts, read back by the protocol's
  `parse_number` (floats, `nan`, `inf`, complex such as `(7.6-20.8j)`, `True` as 1); the name
  `parse_find_value` stays for its callers.
- Points where |g| is NaN or Inf are skipped; the agent is called only on the kept points.
- NMSE = sum |g - t|^2 / sum |g|^2 (normalised by the GT energy, not its variance).
- Any agent failure (no function, an exception at any kept point, a None or non-numeric return,
  a limit hit in the sandbox) scores 0 with its reason. An agent NaN/Inf gives NMSE NaN/Inf: 0.
- A ground-truth exception at a grid point: FIND calls the GT inside the same try, so the whole
  function scores 0 (`gt_exception="fail"`, the default, as FIND). Our runners print `None` for it.
  With `gt_exception="error"` it becomes an error state of category "target" instead.
- Zero GT energy (e.g. the constant 0, or every point skipped) makes NMSE NaN/Inf, which FIND
  scores 0; we do the same and say so in the details.
- The `nmse` score's details keep what scoring computed on the grid, so that pages plot it from
  the store instead of running the answer's code again: `agent_grid` (the real part of the
  agent's finite outputs, `{"x": [...], "y": [...]}`) and `truth_grid` (the ground truth's, which
  is ground truth: shown only to authorised readers, never exported).
"""

from __future__ import annotations

import cmath
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from interp_harness.agents.protocol.values import UnparseableValue
from interp_harness.agents.protocol.values import parse_number as parse_find_value
from interp_harness.sdk import ScoreResult

GRID: tuple[float, ...] = tuple(i + 0.5 for i in range(-128, 128))
DEFAULT_THRESHOLD = 0.1


def grid_inputs() -> list[str]:
    return [repr(x) for x in GRID]


def nmse(gt: Sequence[complex], pred: Sequence[complex]) -> float:
    """sum |g - t|^2 / sum |g|^2; NaN when the denominator is 0 and the numerator is 0."""
    num = math.fsum(abs(g - t) ** 2 for g, t in zip(gt, pred, strict=True))
    den = math.fsum(abs(g) ** 2 for g in gt)
    if den == 0:
        return math.nan if num == 0 or math.isnan(num) else math.inf
    return num / den


@dataclass
class GroundTruth:
    """The GT on the grid: kept points and their values, or why it failed."""

    xs: list[float]
    values: list[complex]
    skipped: int
    exception_at: float | None = None
    error: str | None = None  # the runner failed / unparseable output: a target error


def ground_truth_from_outputs(outputs: Sequence[object]) -> GroundTruth:
    """From the runner's CallOutput list for `grid_inputs()` (in order)."""
    xs, vals, skipped = [], [], 0
    for x, out in zip(GRID, outputs, strict=True):
        text = getattr(out, "output", None)
        try:
            g = parse_find_value(text)
        except UnparseableValue as e:
            return GroundTruth([], [], 0, error=str(e))
        if g is None:
            return GroundTruth([], [], 0, exception_at=x)
        if cmath.isnan(g) or cmath.isinf(g):
            skipped += 1
            continue
        xs.append(x)
        vals.append(g)
    return GroundTruth(xs, vals, skipped)


def score_from_agent_results(
    gt: GroundTruth,
    agent: object,  # interp_harness.evaluator.sandbox_exec.CodeResult, or None when nothing ran
    *,
    threshold: float = DEFAULT_THRESHOLD,
    gt_exception: Literal["fail", "error"] = "fail",
    details: dict | None = None,
) -> list[ScoreResult]:
    d = dict(details or {})
    d.update(threshold=threshold, points=len(gt.xs), gt_skipped=gt.skipped)
    if gt.error:
        return _error(f"ground truth unavailable: {gt.error}", "target", d)
    if gt.exception_at is not None:
        if gt_exception == "error":
            return _error(f"ground truth raised at x={gt.exception_at}", "target", d)
        d["gt_exception_at"] = gt.exception_at
        return _fail(f"ground truth raised at x={gt.exception_at} (FIND scores 0)", d)
    grids = {"truth_grid": _grid(gt.xs, [v.real for v in gt.values])}
    if agent is None:
        return _with_grids(_fail("no code to run", d), grids)
    status = getattr(agent, "status", "error")
    if status == "infrastructure":
        return _error(f"sandbox: {agent.reason}", "sandbox", d)
    d.update(guard=agent.guard, printed_bytes=agent.printed_bytes)
    grids["agent_grid"] = _agent_grid(gt.xs, agent.results)
    if agent.reason and status == "error":
        return _with_grids(_fail(agent.reason, d), grids)
    if len(agent.results) != len(gt.xs):
        failed = _fail(f"agent code returned {len(agent.results)} of {len(gt.xs)} values", d)
        return _with_grids(failed, grids)
    pred: list[complex] = []
    for x, r in zip(gt.xs, agent.results, strict=True):
        if "err" in r:
            return _with_grids(_fail(f"at x={x}: {r['err']}", d), grids)
        re_, im = r["v"]
        pred.append(complex(re_, im))
    value = nmse(gt.values, pred)
    if not any(abs(g) for g in gt.values):
        d["gt_energy_zero"] = True
    ok = value < threshold  # NaN compares False, as in FIND
    return [
        ScoreResult(
            metric="nmse",
            value=value if math.isfinite(value) else None,
            details={**d, "nmse_raw": repr(value), **grids},
        ),
        ScoreResult(metric="code_success", value=1.0 if ok else 0.0, details=d),
    ]


def _grid(xs: Sequence[float], ys: Sequence[float]) -> dict[str, list[float]]:
    """Finite points only: JSON (and PostgreSQL's json type) has no NaN or Infinity."""
    kept = [(x, y) for x, y in zip(xs, ys, strict=True) if math.isfinite(y)]
    return {"x": [x for x, _ in kept], "y": [y for _, y in kept]}


def _agent_grid(xs: Sequence[float], results: Sequence[dict]) -> dict[str, list[float]]:
    """The real parts of the agent's numeric outputs, at the grid points they answer."""
    pts = []
    for x, r in zip(xs, results, strict=False):
        v = r.get("v") if isinstance(r, dict) else None
        if isinstance(v, list | tuple) and v and isinstance(v[0], int | float):
            pts.append((x, float(v[0])))
    return _grid([x for x, _ in pts], [y for _, y in pts])


def _with_grids(results: list[ScoreResult], grids: dict) -> list[ScoreResult]:
    for r in results:
        if r.metric == "nmse":
            r.details = {**r.details, **grids}
    return results


def _fail(reason: str, d: dict) -> list[ScoreResult]:
    d = {**d, "failure": reason}
    return [
        ScoreResult(metric="nmse", value=None, details=d),
        ScoreResult(metric="code_success", value=0.0, details=d),
    ]


def _error(reason: str, category: str, d: dict) -> list[ScoreResult]:
    return [
        ScoreResult(metric=m, status="error", error_category=category, error=reason, details=d)  # type: ignore[arg-type]
        for m in ("nmse", "code_success")
    ]
