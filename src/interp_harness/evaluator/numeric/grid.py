"""The shape of a stored plot line (`agent_grid`, `truth_grid` in the nmse score's details): what
scoring writes and what the function plot reads. A stored one may come from elsewhere (an
imported log), so readers check it instead of trusting it."""

from __future__ import annotations

import math
from typing import Any

MAX_GRID_POINTS = 4096  # FIND's scoring grid has 256 points


class GridInvalid(ValueError):
    """Not {"x": [numbers], "y": [numbers]} of one length (the message says what is wrong)."""


def check_grid(value: Any) -> tuple[list[float], list[float]]:
    """`value` as (xs, ys): finite numbers, as many xs as ys, at most MAX_GRID_POINTS; GridInvalid
    otherwise."""
    if not isinstance(value, dict):
        raise GridInvalid(f"is a {type(value).__name__}, not an object with x and y")
    xs, ys = value.get("x"), value.get("y")
    if not isinstance(xs, list) or not isinstance(ys, list):
        raise GridInvalid("has no list x and list y")
    if len(xs) != len(ys):
        raise GridInvalid(f"has {len(xs)} x and {len(ys)} y values")
    if len(xs) > MAX_GRID_POINTS:
        raise GridInvalid(f"has {len(xs)} points; at most {MAX_GRID_POINTS}")
    for v in (*xs, *ys):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise GridInvalid(f"holds {str(v)[:40]!r}, not a finite number")
    return [float(x) for x in xs], [float(y) for y in ys]
