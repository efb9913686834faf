"""Hand-written reference formulas (FIND's `math_functions.py`, with the release quirks of its
`write_source_code.py` where asked).

Written directly from FIND's formulas with `math`, independently of interp_harness.function_store.numeric,
so the tests compare our expression trees against the formulas, not against themselves.
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

from interp_harness.function_store.datasets import data_path

TWO_PI = 2 * math.pi


@cache
def records() -> dict[str, dict[str, Any]]:
    data = json.loads(data_path("find/numeric/data.json").read_text())
    return {r["dir"]: r for r in data}


@cache
def served_files() -> dict[str, str]:
    return json.loads(data_path("find/numeric/func_name_dict.json").read_text())


def split_name(record: dict[str, Any]) -> list[str]:
    return record["name"].split("(", 1)[0].split(";")


def atomic(name: str, p: Any, x: float, *, release: bool, collapsed: bool = False) -> float:
    """One atomic function at x. `release`: absolute without bias; `collapsed`: square wave as
    the sign step the release's reused return expression computes."""
    if name == "linear":
        return p[0] * x + p[1]
    if name == "polynomial":
        deg = len(p) - 1
        return sum(c * x ** (deg - i) for i, c in enumerate(p))
    if name == "rational":
        num = sum(c * x**i for i, c in enumerate(p[0]))
        den = sum(c * x**i for i, c in enumerate(p[1]))
        return num / den
    if name == "absolute":
        return p[0] * abs(x) + (0 if release else p[1])
    if name == "root":
        return p[0] * x ** (1 / p[2]) + p[1]
    if name == "reciprocal":
        return 1 / (p[0] * x)
    if name == "logarithm":
        return p[0] * math.log(x) / math.log(p[2]) + p[1]
    if name == "step":
        h = 1.0 if x > 0 else (p[2] if x == 0 else 0.0)
        return p[0] * h + p[1]
    if name == "rectangle":
        return 1 if abs(x) <= p[0] / 2 else 0
    if name == "relu":
        return p[0] * (x if x > 0 else p[2] * x) + p[1]
    if name in ("tanh", "sin", "cos"):
        f = getattr(math, name)
        return p[0] * f(TWO_PI / p[1] * (x - p[2])) + p[3]
    if name == "gaussian":
        mean, std = p
        return math.exp(-0.5 * ((x - mean) / std) ** 2) / (std * math.sqrt(TWO_PI))
    if name == "square_wave":
        if collapsed:
            return 1 if x > 0 else -1
        return 1 if math.sin((x - p[1]) * TWO_PI / p[0]) > 0 else -1
    if name == "constant":
        return p
    if name == "ceil":
        return math.ceil(x)
    if name == "floor":
        return math.floor(x)
    raise KeyError(name)


def function(record: dict[str, Any], x: float, *, release: bool, reused: bool = False) -> float:
    """The record's function. `reused`: noised/corrupted code (square wave collapses)."""
    parts = split_name(record)
    if len(parts) == 1:
        return atomic(parts[0], record["params"], x, release=release, collapsed=release and reused)
    (n1, n2, op), (p1, p2) = parts, record["params"]
    a = atomic(n1, p1, x, release=release, collapsed=release)
    b = atomic(n2, p2, x, release=release, collapsed=release)
    return a + b if op == "sum_two" else a * b


def fragile(record: dict[str, Any], x: float) -> bool:
    """x sits on (or within rounding of) a discontinuity of the function: skip it."""
    for name, p in _atoms(record):
        if name == "square_wave" and abs(math.sin((x - p[1]) * TWO_PI / p[0])) < 1e-6:
            return True
        if name == "rectangle" and abs(abs(x) - p[0] / 2) < 1e-6:
            return True
        if name in ("step", "square_wave", "reciprocal", "ceil", "floor") and (
            x == 0 or (name in ("ceil", "floor") and x == int(x))
        ):
            return True
        if name == "rational":
            den = sum(c * x**i for i, c in enumerate(p[1]))
            if abs(den) < 1e-3:
                return True
    return False


def _atoms(record: dict[str, Any]) -> list[tuple[str, Any]]:
    parts = split_name(record)
    if len(parts) == 1:
        return [(parts[0], record["params"])]
    return [(parts[0], record["params"][0]), (parts[1], record["params"][1])]


def family_key(record: dict[str, Any]) -> str:
    parts = split_name(record)
    return parts[0] if len(parts) == 1 else parts[2]


def probe_points(record: dict[str, Any]) -> list[float]:
    lo, hi = record["domain"]
    pts = [lo + (hi - lo) * f for f in (0.013, 0.21, 0.37, 0.5, 0.66, 0.83, 0.97)]
    pts += [2.5, -3.25, 7.75]
    return [x for x in pts if lo <= x <= hi and not fragile(record, x)]
