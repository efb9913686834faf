"""Server-side plots of the run page (matplotlib, SVG text to inline in a page) and a small cache
for them and for episode panels (a benchmark's episode plot is its panel: interp_harness.evaluator.panel)."""

from __future__ import annotations

import io
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from matplotlib.figure import Figure

V = TypeVar("V")


class LruCache(Generic[V]):
    """Least recently used values by key (finished episodes and runs only: they do not change,
    and drawing one costs a CPU second)."""

    def __init__(self, size: int = 256) -> None:
        self.size = size
        self._items: OrderedDict[tuple[Any, ...], V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...]) -> V | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
            return None

    def has(self, key: tuple[Any, ...]) -> bool:
        with self._lock:
            return key in self._items

    def put(self, key: tuple[Any, ...], value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


SvgCache = LruCache[str]


def _svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    text = buf.getvalue()
    return text[text.index("<svg") :]  # drop the XML prolog and DOCTYPE: the SVG is inlined


def _bin_start(label: str) -> tuple[int, str]:
    """A bin label's first number (`65-256` -> 65, `>1024` -> 1024): bins in numeric order,
    whichever agent's rows name them first."""
    m = re.search(r"\d+", label)
    return (int(m.group()) if m else sys.maxsize, label)


def _error_bars(rows: Sequence[Any]) -> tuple[list[float], list[float]]:
    """Each row's error bar lengths below and above its success rate, never negative (matplotlib
    refuses a negative one: an interval that misses its estimate draws as a zero-length side)."""
    lo = [max(0.0, r.success - (r.ci_low if r.ci_low is not None else r.success)) for r in rows]
    hi = [max(0.0, (r.ci_high if r.ci_high is not None else r.success) - r.success) for r in rows]
    return lo, hi


def queries_svg(rows: Sequence[Any]) -> str:
    """Success versus inputs used (the report's QueryRows), one line per agent."""
    fig = Figure(figsize=(6.5, 3.4))
    ax = fig.add_subplot()
    agents = sorted({r.agent for r in rows})
    bins = sorted({r.bin for r in rows}, key=_bin_start)
    for k, agent in enumerate(agents):
        mine = [r for r in rows if r.agent == agent and r.success is not None]
        xs = [bins.index(r.bin) + (k - (len(agents) - 1) / 2) * 0.08 for r in mine]
        ys = [r.success for r in mine]
        lo, hi = _error_bars(mine)
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
