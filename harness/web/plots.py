"""Server-side plots (matplotlib, SVG text to inline in a page) and a small cache for them.

The numeric episode plot puts on one chart over the domain: the points the agent sampled (from its
stored target calls), the agent's code evaluated on FIND's scoring grid (as the scorer stored it),
and, only when the caller may see ground truth, the ground-truth function on the same grid and the
corrupted interval. SVG element ids name the parts (`sampled-points`, `agent-code`,
`ground-truth`, `corrupted-interval`) so a test or a script can find them.
"""

from __future__ import annotations

import io
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from matplotlib import rc_context
from matplotlib.figure import Figure

MAX_POINTS = 4000  # sampled points drawn (evenly thinned beyond; the caption says how many)


class SvgCache:
    """Least recently used SVG texts by key (finished episodes and runs only: they do not
    change, and drawing one costs a CPU second)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> str | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def put(self, key: tuple[Any, ...], svg: str) -> None:
        with self._lock:
            self._items[key] = svg
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _real(text: str | None) -> float | None:
    """A FIND output text as a finite real number (the real part of a complex), else None."""
    from evaluator.numeric import UnparseableValue, parse_find_value

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


def queries_svg(rows: Sequence[Any]) -> str:
    """Numeric success versus inputs used (the report's QueryRows), one line per agent."""
    fig = Figure(figsize=(6.5, 3.4))
    ax = fig.add_subplot()
    agents = sorted({r.agent for r in rows})
    bins = list(dict.fromkeys(r.bin for r in rows))
    for k, agent in enumerate(agents):
        mine = [r for r in rows if r.agent == agent and r.success is not None]
        xs = [bins.index(r.bin) + (k - (len(agents) - 1) / 2) * 0.08 for r in mine]
        ys = [r.success for r in mine]
        lo = [r.success - (r.ci_low if r.ci_low is not None else r.success) for r in mine]
        hi = [(r.ci_high if r.ci_high is not None else r.success) - r.success for r in mine]
        bars = ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=agent)
        bars.lines[0].set_gid(f"queries-{agent}")
    ax.set_xticks(range(len(bins)), bins)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("inputs the agent used")
    ax.set_ylabel("share with NMSE < 0.1")
    ax.grid(alpha=0.3)
    if agents:
        ax.legend(fontsize=8)
    return _svg(fig)


def cached(cache: SvgCache, key: tuple[Any, ...] | None, make: Callable[[], str]) -> str:
    """`make()`, through the cache when `key` is not None."""
    if key is None:
        return make()
    svg = cache.get(key)
    if svg is None:
        svg = make()
        cache.put(key, svg)
    return svg
