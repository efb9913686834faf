"""The numeric episode plot (matplotlib, SVG text to inline in a page).

One chart over the domain: the points the agent sampled (from its stored target calls), the
agent's code evaluated on FIND's scoring grid (as the scorer stored it), and, only when the caller
may see ground truth, the ground-truth function on the same grid and the corrupted interval. SVG
element ids name the parts (`sampled-points`, `agent-code`, `ground-truth`, `corrupted-interval`)
so a test or a script can find them.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Any

from matplotlib import rc_context
from matplotlib.figure import Figure

from interp_harness.evaluator.numeric import UnparseableValue, parse_find_value

MAX_POINTS = 4000  # sampled points drawn (evenly thinned beyond; the caption says how many)


def _real(text: str | None) -> float | None:
    """A FIND output text as a finite real number (the real part of a complex), else None."""
    try:
        v = parse_find_value(text)
    except UnparseableValue:
        return None
    if v is None or not math.isfinite(v.real):
        return None
    return v.real


def sampled_points(calls: Sequence[Any]) -> list[tuple[float, float]]:
    """(x, f(x)) of every input the agent called the target on that returned a number."""
    pts = []
    for c in calls:
        for o in c.outputs:
            if o.error is not None:
                continue
            x, y = _real(o.input), _real(o.output)
            if x is not None and y is not None:
                pts.append((x, y))
    return pts


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: the SVG is inlined


def numeric_svg(
    points: list[tuple[float, float]],
    *,
    agent: tuple[list[float], list[float]] | None = None,
    truth: tuple[list[float], list[float]] | None = None,
    corrupted: tuple[float, float] | None = None,
    title: str = "",
) -> str:
    # every stored point a vertex (matplotlib merges collinear ones): the SVG shows the data
    with rc_context({"path.simplify": False}):
        return _numeric_svg(points, agent, truth, corrupted, title)


def _numeric_svg(
    points: list[tuple[float, float]],
    agent: tuple[list[float], list[float]] | None,
    truth: tuple[list[float], list[float]] | None,
    corrupted: tuple[float, float] | None,
    title: str,
) -> str:
    fig = Figure(figsize=(7.5, 4.2))
    ax = fig.add_subplot()
    shown = points
    if len(points) > MAX_POINTS:
        step = len(points) / MAX_POINTS
        shown = [points[int(i * step)] for i in range(MAX_POINTS)]
    if corrupted is not None:
        span = ax.axvspan(*corrupted, color="#f4c7a1", alpha=0.6, label="corrupted interval")
        span.set_gid("corrupted-interval")
    if truth is not None:
        (line,) = ax.plot(*truth, color="#1b5e20", lw=2, label="ground truth")
        line.set_gid("ground-truth")
    if agent is not None:
        (line,) = ax.plot(*agent, color="#0d47a1", lw=1.5, ls="--", label="agent's code")
        line.set_gid("agent-code")
    if shown:
        sc = ax.scatter(
            [p[0] for p in shown],
            [p[1] for p in shown],
            s=10,
            color="#b71c1c",
            zorder=3,
            label=f"sampled by the agent ({len(points)})",
        )
        sc.set_gid("sampled-points")
    ys = [abs(p[1]) for p in shown] + [abs(v) for v in (truth[1] if truth else [])]
    if ys and max(ys) > 1e4:  # polynomials span many decades over [-128, 128]
        ax.set_yscale("symlog")
    ax.set_xlabel("x")
    ax.set_ylabel("f(x)")
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best")
    return _svg(fig)
