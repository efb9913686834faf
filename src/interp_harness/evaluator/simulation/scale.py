"""True activations on the simulator's scale: integers 0-10 per unit (Bills et al. 2023).

A unit's activations are divided by its largest activation over the texts scored, negatives
are clipped to 0 first, and the result times 10 is rounded half up. A unit that never fires on
those texts is 0 everywhere.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

MAX_LEVEL = 10  # the top of the scale: the activation slots read "0" .. "10"
LEVELS = tuple(str(k) for k in range(MAX_LEVEL + 1))


def unit_max(values: Iterable[float | None]) -> float:
    """The largest known activation (0 when none is positive)."""
    return max((v for v in values if v is not None), default=0.0)


def normalise(values: Sequence[float | None], top: float) -> list[int | None]:
    """`values` on the 0-10 scale of a unit whose max activation is `top`; None (an activation
    the data does not give) stays None."""
    out: list[int | None] = []
    for v in values:
        if v is None:
            out.append(None)
        elif top <= 0:
            out.append(0)
        else:
            out.append(min(MAX_LEVEL, math.floor(MAX_LEVEL * max(v, 0.0) / top + 0.5)))
    return out
