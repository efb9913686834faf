"""An episode page's benchmark panels (interp_harness.evaluator.panel): the ones the episode's benchmark record
names, rendered in order from stored data, finished episodes' costly ones cached."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from interp_harness.evaluator.panel import Panel, PanelView, Rendered
from interp_harness.function_store.benchmark import UnknownFamily, benchmark, load_ref
from interp_harness.harness.web.plots import LruCache

cache: LruCache[Rendered | None] = LruCache()
# one costly panel drawn at a time: parallel views of a new episode wait for the first drawing and
# then read the cache, instead of each spending a CPU second in matplotlib
_draw_lock = threading.Lock()


def panels_of(family: str | None) -> list[Panel]:
    try:
        record = benchmark(family or "")
    except UnknownFamily:  # a family no longer registered: the generic page only
        return []
    return [load_ref(ref) for ref in record.panels]


def panel_named(family: str | None, name: str) -> Panel | None:
    """The family's panel called `name`, or whose asset file is `name` (`plot.svg`)."""
    return next((p for p in panels_of(family) if name in (p.name, p.asset_name)), None)


def asset_url(episode_id: str, panel: Panel) -> str:
    tail = panel.asset_name or f"panels/{panel.name}"
    return f"/ui/episodes/{episode_id}/{tail}"


def render(
    panel: Panel, detail: Any, show_truth: bool, view: Callable[[], PanelView]
) -> Rendered | None:
    """`panel`'s rendering of the episode; `view()` builds what it reads (called on a cache miss
    only). Cached once the episode has finished, when the panel asks for it."""
    if panel.render is None:
        return None
    finished = detail.status not in ("queued", "running")
    if not (panel.cached and finished):
        return panel.render(view())
    key = (panel.name, detail.id, show_truth, detail.scored)
    with _draw_lock:
        hit = cache.get(key)
        if hit is not None or cache.has(key):
            return hit
        out = panel.render(view())
        cache.put(key, out)
    return out


def output_renderer(family: str | None) -> Callable[[str], str | None]:
    """How the transcript shows one target output: the first panel's HTML for it, else None
    (plain text)."""
    renderers = [p.output for p in panels_of(family) if p.output is not None]

    def show(text: str) -> str | None:
        for r in renderers:
            html = r(text)
            if html is not None:
                return html
        return None

    return show
